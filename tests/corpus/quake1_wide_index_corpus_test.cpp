// BSP 29 / GoldSrc maps with more than 32767 planes, texinfo, nodes or
// clipnodes: the engines that lift id's limits (QuakeSpasm, FTE, DarkPlaces)
// read the 16-bit indices to them as unsigned shorts: node and clipnode
// children (quake1::tree_child(), as ericw-tools' qbsp writes them), a face's
// planenum and texinfo (quake1::dface_t). No corpus map is that large, so each
// BSP 29 / GoldSrc corpus map is rewritten with 32768 unused records of each
// in front of its own: every such index is then stored at 32768 and above, a
// negative short. check, the geometry, the collision world and the decompiler
// must read the copy as they read the original.
#include <bspkit/check.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/export.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/mapfile.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>

#include "corpus.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace bspkit;
using namespace bspkit::test;
using bspkit::query::Vec3;
using bspkit::query::World;

namespace {

constexpr int32_t kFiller = 32768;

/// A child index moved past the filler, stored as the unsigned short the
/// engines read (leafs and contents are left as they are).
int16_t shifted(int16_t child) { return child >= 0 ? int16_t(uint16_t(child + kFiller)) : child; }

template <class T>
Bytes bytes_of(const std::vector<T>& records) {
    Bytes out(records.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), records.data(), out.size());
    return out;
}

/// `original` with kFiller unreferenced planes, texinfo, nodes and clipnodes
/// put in front of its own, every reference to them (planenums, children, the
/// faces' texinfo, the models' head nodes) moved past them.
Bsp widened(const Bsp& original, const Bytes& bytes, const std::string& name) {
    Bsp copy = Bsp::parse(bytes, name);
    const quake1::Map map(original);
    const auto t = map.bsp29();
    // Leaf and contents children must stay above the new counts as unsigned shorts.
    EXPECT_LT(t.nodes.size() + kFiller + t.leafs.size(), 65536u) << name;
    EXPECT_LT(t.clipnodes.size() + kFiller, 65536u - 15) << name;
    EXPECT_LT(t.planes.size() + kFiller, 65536u) << name;
    EXPECT_LT(t.texinfo.size() + kFiller, 65536u) << name;

    std::vector<quake1::dplane_t> planes(kFiller, quake1::dplane_t{{0, 0, 1}, 0, 2});
    planes.insert(planes.end(), t.planes.begin(), t.planes.end());
    std::vector<quake1::texinfo_t> texinfo(kFiller, t.texinfo[0]);
    texinfo.insert(texinfo.end(), t.texinfo.begin(), t.texinfo.end());
    std::vector<quake1::dface_t> faces(t.faces.begin(), t.faces.end());
    for (auto& f : faces) {
        f.planenum = uint16_t(f.planenum + kFiller);
        f.texinfo = uint16_t(f.texinfo + kFiller);
    }
    std::vector<quake1::dnode_t> nodes(kFiller, quake1::dnode_t{0, {-1, -1}, {}, {}, 0, 0});
    for (quake1::dnode_t n : t.nodes) {
        n.planenum += kFiller;
        for (auto& c : n.children) c = shifted(c);
        nodes.push_back(n);
    }
    std::vector<quake1::dclipnode_t> clipnodes(kFiller, quake1::dclipnode_t{0, {-1, -1}});
    for (quake1::dclipnode_t n : t.clipnodes) {
        n.planenum += kFiller;
        for (auto& c : n.children) c = shifted(c);
        clipnodes.push_back(n);
    }
    std::vector<quake1::dmodel_t> models(t.models.begin(), t.models.end());
    for (auto& m : models) {
        if (m.headnode[0] >= 0) m.headnode[0] += kFiller;
        if (!t.clipnodes.empty())
            for (int h = 1; h < quake1::MAX_MAP_HULLS; ++h)
                if (m.headnode[h] >= 0) m.headnode[h] += kFiller;
    }
    copy.replace(map.lump("planes"), bytes_of(planes));
    copy.replace(map.lump("texinfo"), bytes_of(texinfo));
    copy.replace(map.lump("faces"), bytes_of(faces));
    copy.replace(map.lump("nodes"), bytes_of(nodes));
    copy.replace(map.lump("clipnodes"), bytes_of(clipnodes));
    copy.replace(map.lump("models"), bytes_of(models));
    return copy;
}

void expect_same_trace(const query::TraceResult& a, const query::TraceResult& b, const std::string& what) {
    EXPECT_EQ(a.fraction, b.fraction) << what;
    EXPECT_EQ(a.startsolid, b.startsolid) << what;
    EXPECT_EQ(a.allsolid, b.allsolid) << what;
    EXPECT_EQ(a.end, b.end) << what;
    EXPECT_EQ(a.normal, b.normal) << what;
    EXPECT_EQ(a.dist, b.dist) << what;
}

}  // namespace

TEST(Quake1WideIndexCorpus, IndicesStoredAsUnsignedShortsReadAsTheOriginal) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        const Bytes bytes = read_corpus(*f);
        const Bsp original = Bsp::parse(bytes, f->relpath);
        if (quake1::Map(original).variant() != quake1::Variant::bsp29) continue;
        SCOPED_TRACE(f->relpath);
        const Bsp copy = widened(original, bytes, f->relpath);
        const quake1::Map copy_map(copy);
        ASSERT_GT(copy_map.bsp29().nodes.size(), 32767u);

        // check: the same findings, and the copy's counts over the limits of
        // id's and Valve's tools (warnings: engines with raised limits take them).
        const CheckReport before = check(original), after = check(copy);
        EXPECT_EQ(after.errors(), before.errors());
        size_t over_limits = 0;
        for (const Finding& x : after.findings)
            over_limits += x.severity == Severity::warning && x.record < 0 &&
                           (x.lump == "planes" || x.lump == "texinfo" || x.lump == "nodes" || x.lump == "clipnodes") &&
                           x.message.find("exceeds MAX_MAP_") != std::string::npos;
        EXPECT_EQ(over_limits, copy_map.bsp29().clipnodes.empty() ? 3u : 4u);
        EXPECT_EQ(after.warnings(), before.warnings() + over_limits);

        // The geometry: the same glTF.
        const auto glb = [](const Bsp& bsp) {
            return exporter::encode_glb(exporter::build_gltf(model::build(bsp), {}, true));
        };
        EXPECT_TRUE(glb(copy) == glb(original));

        // The collision world: the same leaves and the same traces in every hull.
        const World a = World::prepare(original);
        const World b = World::prepare(copy);
        // Points near the map's vertexes (its bounds can be mostly empty: a leaked map).
        const quake1::Map original_map(original);  // owns the records the span views (an unaligned lump is copied)
        const auto vertexes = original_map.vertexes();
        ASSERT_FALSE(vertexes.empty());
        std::mt19937 rng(7);
        std::uniform_int_distribution<size_t> pick(0, vertexes.size() - 1);
        std::uniform_real_distribution<float> jitter(-16, 16);
        const auto point = [&] {
            const auto& v = vertexes[pick(rng)].point;
            return Vec3{v[0] + jitter(rng), v[1] + jitter(rng), v[2] + jitter(rng)};
        };
        size_t solid = 0;
        for (int i = 0; i < 300; ++i) {
            const Vec3 p = point();
            const auto la = a.leaf_at(p), lb = b.leaf_at(p);
            EXPECT_EQ(la.leaf, lb.leaf) << i;
            EXPECT_EQ(la.contents.raw, lb.contents.raw) << i;
            solid += la.contents.raw == quake1::CONTENTS_SOLID;
        }
        EXPECT_GT(solid, 0u) << "no point was in solid: the leaf test tells nothing";
        size_t hits = 0;
        for (const query::HullInfo& hull : a.hulls()) {
            if (!hull.available) continue;
            query::TraceOptions o;
            o.hull = hull.index;
            o.models = true;
            for (int i = 0; i < 200; ++i) {
                const Vec3 s = point(), e = point();
                const auto ta = a.trace(s, e, o), tb = b.trace(s, e, o);
                expect_same_trace(ta, tb, "hull " + std::to_string(hull.index) + " ray " + std::to_string(i));
                hits += ta.hit();
            }
        }
        EXPECT_GT(hits, 0u) << "no trace hit anything: the trace test tells nothing";

        // The decompiler (cut from the node tree): the same .map.
        EXPECT_EQ(mapfile::write(decompile::decompile(copy).map), mapfile::write(decompile::decompile(original).map));
        ++maps;
    }
    EXPECT_GE(maps, 5u);  // the corpus's BSP 29 and GoldSrc maps
}
