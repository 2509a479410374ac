// The BSP2 and 2PSB readers against the BSP 29 ones, on real maps: each
// Quake BSP 29 corpus map is rewritten as BSP2 (32-bit indices, float
// bounds) and as 2PSB (32-bit indices, short bounds), records widened field by
// field, every other lump as it is. The copies hold the same map, so check,
// the geometry (glb), the collision world, the renderer and the decompiler
// must answer for them as for the original. The corpus's own BSP2 maps are
// small; this runs those readers over the BSP 29 maps' larger trees and
// lightmaps.
#include <bspkit/check.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/export.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/mapfile.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>

#include "corpus.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <set>
#include <tuple>

using namespace bspkit;
using namespace bspkit::test;
using bspkit::query::Vec3;
using bspkit::query::World;

namespace {

template <class T>
void append_records(Bytes& out, const std::vector<T>& records) {
    const size_t at = out.size();
    out.resize(at + records.size() * sizeof(T));
    if (!records.empty()) std::memcpy(out.data() + at, records.data(), records.size() * sizeof(T));
}

/// The lumps of `bsp29` (a BSP 29 map) rewritten with the records of `Types`
/// (Bsp2Types or Bsp2RmqTypes) under `magic` ("BSP2" / "2PSB").
template <class Types>
Bytes rewritten(const Bsp& bsp29, const char (&magic)[5]) {
    const quake1::Map map(bsp29);
    const auto t = map.bsp29();
    using Node = typename Types::node;
    using Leaf = typename Types::leaf;
    const auto bound = [](int16_t v) {
        if constexpr (std::is_same_v<decltype(Node{}.mins[0]), float>) return float(v);
        else return v;
    };

    std::vector<Node> nodes;
    for (const auto& n : t.nodes) {
        Node o{};
        o.planenum = n.planenum;
        for (int k = 0; k < 2; ++k) o.children[k] = quake1::tree_child(n.children[k], t.nodes.size());
        for (int k = 0; k < 3; ++k) {
            o.mins[k] = bound(n.mins[k]);
            o.maxs[k] = bound(n.maxs[k]);
        }
        o.firstface = n.firstface;
        o.numfaces = n.numfaces;
        nodes.push_back(o);
    }
    std::vector<quake1::bsp2_dclipnode_t> clipnodes;
    for (const auto& n : t.clipnodes)
        clipnodes.push_back({n.planenum, {quake1::tree_child(n.children[0], t.clipnodes.size()),
                                          quake1::tree_child(n.children[1], t.clipnodes.size())}});
    std::vector<quake1::bsp2_dface_t> faces;
    for (const auto& f : t.faces) {
        quake1::bsp2_dface_t o{f.planenum, f.side, f.firstedge, f.numedges, f.texinfo, {}, f.lightofs};
        std::memcpy(o.styles, f.styles, 4);
        faces.push_back(o);
    }
    std::vector<Leaf> leafs;
    for (const auto& l : t.leafs) {
        Leaf o{};
        o.contents = l.contents;
        o.visofs = l.visofs;
        for (int k = 0; k < 3; ++k) {
            o.mins[k] = bound(l.mins[k]);
            o.maxs[k] = bound(l.maxs[k]);
        }
        o.firstmarksurface = l.firstmarksurface;
        o.nummarksurfaces = l.nummarksurfaces;
        std::memcpy(o.ambient_level, l.ambient_level, 4);
        leafs.push_back(o);
    }
    std::vector<quake1::bsp2_dmarksurface_t> marksurfaces;
    for (const auto& m : t.marksurfaces) marksurfaces.push_back({m.face});
    std::vector<quake1::bsp2_dedge_t> edges;
    for (const auto& e : t.edges) edges.push_back({{e.v[0], e.v[1]}});

    // id's lump order; every lump 4-byte aligned.
    constexpr size_t kLumps = 15;
    Bytes out(4 + kLumps * 8, 0);
    std::memcpy(out.data(), magic, 4);
    for (size_t i = 0; i < kLumps; ++i) {
        while (out.size() % 4) out.push_back(0);
        const size_t at = out.size();
        const std::string_view name = bsp29.lump_name(i);
        if (name == "nodes") append_records(out, nodes);
        else if (name == "clipnodes") append_records(out, clipnodes);
        else if (name == "faces") append_records(out, faces);
        else if (name == "leafs") append_records(out, leafs);
        else if (name == "marksurfaces") append_records(out, marksurfaces);
        else if (name == "edges") append_records(out, edges);
        else {
            const ByteSpan bytes = bsp29.decoded(i);
            out.insert(out.end(), bytes.begin(), bytes.end());
        }
        const int32_t entry[2] = {int32_t(at), int32_t(out.size() - at)};
        std::memcpy(out.data() + 4 + i * 8, entry, 8);
    }
    return out;
}

/// A finding as compared between the copies: where and what, without the
/// file offset (the lumps moved).
using FindingKey = std::tuple<Severity, std::string, int64_t, std::string, std::string>;

/// Per-record findings, and lump findings that are not about the lumps'
/// placement or about counts against id's limits (which BSP2 lifts).
std::multiset<FindingKey> comparable(const CheckReport& report) {
    std::multiset<FindingKey> out;
    for (const Finding& f : report.findings) {
        if (f.record < 0 && (f.message.find("4-byte aligned") != std::string::npos ||
                             f.message.find("exceeds MAX_MAP_") != std::string::npos))
            continue;
        out.insert({f.severity, f.lump, f.record, f.field, f.message});
    }
    return out;
}

void expect_same_trace(const query::TraceResult& a, const query::TraceResult& b, const std::string& what) {
    EXPECT_EQ(a.fraction, b.fraction) << what;
    EXPECT_EQ(a.startsolid, b.startsolid) << what;
    EXPECT_EQ(a.allsolid, b.allsolid) << what;
    EXPECT_EQ(a.end, b.end) << what;
    EXPECT_EQ(a.normal, b.normal) << what;
    EXPECT_EQ(a.dist, b.dist) << what;
    EXPECT_EQ(a.inopen, b.inopen) << what;
    EXPECT_EQ(a.inwater, b.inwater) << what;
}

Bytes glb_of(const model::Map& map) { return exporter::encode_glb(exporter::build_gltf(map, {}, true)); }

render::Frame thumbnail(const Bsp& bsp, const model::Map& map) {
    render::Options options;
    options.width = 96;
    options.height = 64;
    options.threads = 1;
    const render::Scene scene = render::Scene::prepare(map, bsp, options);
    return render::render(scene, render::thumbnail_camera(scene), options);
}

}  // namespace

TEST(Quake1Bsp2RewriteCorpus, Bsp29MapsRewrittenAsBsp2And2psbReadTheSame) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        const Bytes bytes = read_corpus(*f);
        const Bsp original = Bsp::parse(bytes, f->relpath);
        const quake1::Map original_map(original);
        if (original_map.variant() != quake1::Variant::bsp29 || original_map.goldsrc()) continue;
        SCOPED_TRACE(f->relpath);
        const CheckReport original_check = check(original);
        const model::Map original_model = model::build(original);
        const Bytes original_glb = glb_of(original_model);
        const render::Frame original_frame = thumbnail(original, original_model);
        const std::string original_vmf = mapfile::write(decompile::decompile(original).map);
        const World a = World::prepare(original);

        const std::array<std::pair<const char*, Bytes>, 2> copies{
            std::pair<const char*, Bytes>{"BSP2", rewritten<quake1::Bsp2Types>(original, "BSP2")},
            std::pair<const char*, Bytes>{"2PSB", rewritten<quake1::Bsp2RmqTypes>(original, "2PSB")}};
        for (const auto& [magic, copy_bytes] : copies) {
            SCOPED_TRACE(magic);
            const Bsp copy = Bsp::parse(copy_bytes, f->relpath + "." + magic);
            ASSERT_EQ(quake1::Map(copy).variant(),
                      std::string_view(magic) == "BSP2" ? quake1::Variant::bsp2 : quake1::Variant::bsp2rmq);

            EXPECT_EQ(comparable(check(copy)), comparable(original_check));

            model::Map copy_model = model::build(copy);
            EXPECT_EQ(copy_model.format, Format::bsp2);  // 2PSB too
            copy_model.format = original_model.format;  // the glb names it (extras.format); all else must match
            EXPECT_TRUE(glb_of(copy_model) == original_glb) << "the glb differs";
            const render::Frame frame = thumbnail(copy, copy_model);
            EXPECT_TRUE(frame.rgba == original_frame.rgba) << "the rendered thumbnail differs";

            EXPECT_EQ(mapfile::write(decompile::decompile(copy).map), original_vmf);

            // The collision world: leaves and traces in every hull, near the map's vertexes.
            const World b = World::prepare(copy);
            const auto vertexes = original_map.vertexes();
            ASSERT_FALSE(vertexes.empty());
            std::mt19937 rng(11);
            std::uniform_int_distribution<size_t> pick(0, vertexes.size() - 1);
            std::uniform_real_distribution<float> jitter(-32, 32);
            const auto point = [&] {
                const auto& v = vertexes[pick(rng)].point;
                return Vec3{v[0] + jitter(rng), v[1] + jitter(rng), v[2] + jitter(rng)};
            };
            for (int i = 0; i < 300; ++i) {
                const Vec3 p = point();
                const auto la = a.leaf_at(p), lb = b.leaf_at(p);
                EXPECT_EQ(la.leaf, lb.leaf) << i;
                EXPECT_EQ(la.cluster, lb.cluster) << i;
                EXPECT_EQ(la.contents.raw, lb.contents.raw) << i;
            }
            size_t hits = 0;
            for (const query::HullInfo& hull : a.hulls()) {
                if (!hull.available) continue;
                query::TraceOptions o;
                o.hull = hull.index;
                o.models = true;
                for (int i = 0; i < 200; ++i) {
                    const Vec3 s = point(), e = point();
                    const auto ta = a.trace(s, e, o);
                    expect_same_trace(ta, b.trace(s, e, o), "hull " + std::to_string(hull.index) + " ray " + std::to_string(i));
                    hits += ta.hit();
                }
            }
            EXPECT_GT(hits, 0u) << "no trace hit anything: the trace test tells nothing";
            for (int i = 0; i < 100; ++i) {
                const Vec3 s = point(), e = point();
                EXPECT_EQ(a.visible(s, e).visible(), b.visible(s, e).visible()) << i;
            }
        }
        ++maps;
    }
    EXPECT_GE(maps, 4u);  // the corpus's Quake BSP 29 maps
}
