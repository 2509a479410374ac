// The same Quake 1 family map stored otherwise must read the same: each
// corpus map is rewritten in ways the engines read alike, and check, the
// geometry (glb), the renderer, the decompiler and the collision world must
// answer for the copy as for the original.
// - BSP2 and 2PSB: each Quake BSP 29 map with its records widened field by
//   field (the corpus's own BSP2 maps are small; this runs those readers over
//   the BSP 29 maps' trees, faces and lightmaps).
// - Wide indices: BSP 29 / GoldSrc maps with more than 32767 planes, texinfo,
//   nodes or clipnodes. The engines that lift id's limits (QuakeSpasm, FTE,
//   DarkPlaces) read the 16-bit indices to them as unsigned shorts: node and
//   clipnode children (quake1::tree_child(), as ericw-tools' qbsp writes them),
//   a face's planenum and texinfo (quake1::dface_t). No corpus map is that
//   large, so each gets 32768 unused records of each in front of its own:
//   every such index is then stored at 32768 and above, a negative short.
// - Blue Shift: each version 30 map with its first two directory entries
//   swapped (planes first, entities second), as Half-Life: Blue Shift stores them.
#include <bspkit/check.hpp>
#include <bspkit/formats/quake1.hpp>

#include "corpus.hpp"
#include "same_answers.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>

using namespace bspkit;
using namespace bspkit::test;
using bspkit::query::Vec3;

namespace {

// ---- the rewrites ----------------------------------------------------------

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
    // Bounds: floats in BSP2, shorts as in BSP 29 in 2PSB (nodes and leafs alike).
    using Bound = std::remove_cvref_t<decltype(Node{}.mins[0])>;
    static_assert(std::is_same_v<Bound, std::remove_cvref_t<decltype(Leaf{}.mins[0])>>);
    const auto bound = [](int16_t v) { return Bound(v); };

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

/// `bytes` (a GoldSrc map) with its first two directory entries swapped.
Bytes blue_shift_order(const Bytes& bytes) {
    Bytes out = bytes;
    std::swap_ranges(out.begin() + 4, out.begin() + 12, out.begin() + 12);
    return out;
}

/// The map's vertexes: where the copies' answers are compared.
std::vector<Vec3> vertex_points(const Bsp& bsp) {
    const quake1::Map map(bsp);
    std::vector<Vec3> out;
    for (const auto& v : map.vertexes()) out.push_back({v.point[0], v.point[1], v.point[2]});
    return out;
}

}  // namespace

TEST(Quake1RewriteCorpus, Bsp29MapsRewrittenAsBsp2And2psbReadTheSame) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        const Bsp original = Bsp::parse(read_corpus(*f), f->relpath);
        if (quake1::Map(original).variant() != quake1::Variant::bsp29 || quake1::Map(original).goldsrc()) continue;
        SCOPED_TRACE(f->relpath);
        const Answers answers(original);
        const std::vector<Vec3> near = vertex_points(original);
        for (const bool rmq : {false, true}) {
            SCOPED_TRACE(rmq ? "2PSB" : "BSP2");
            const Bsp copy = Bsp::parse(rmq ? rewritten<quake1::Bsp2RmqTypes>(original, "2PSB")
                                            : rewritten<quake1::Bsp2Types>(original, "BSP2"),
                                        f->relpath);
            ASSERT_EQ(quake1::Map(copy).variant(), rmq ? quake1::Variant::bsp2rmq : quake1::Variant::bsp2);
            EXPECT_EQ(copy.format(), Format::bsp2);
            expect_same_answers(answers, copy, near);
        }
        ++maps;
    }
    EXPECT_GE(maps, 4u);  // the corpus's Quake BSP 29 maps
}

TEST(Quake1RewriteCorpus, IndicesStoredAsUnsignedShortsReadTheSame) {
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
        // Counts, as the records of four lumps moved.
        const CheckReport before = check(original), after = check(copy);
        EXPECT_EQ(after.errors(), before.errors());
        size_t over_limits = 0;
        for (const Finding& x : after.findings)
            over_limits += x.severity == Severity::warning && x.record < 0 &&
                           (x.lump == "planes" || x.lump == "texinfo" || x.lump == "nodes" || x.lump == "clipnodes") &&
                           x.message.find("exceeds MAX_MAP_") != std::string::npos;
        EXPECT_EQ(over_limits, copy_map.bsp29().clipnodes.empty() ? 3u : 4u);
        EXPECT_EQ(after.warnings(), before.warnings() + over_limits);

        expect_same_answers(Answers(original), copy, vertex_points(original), false);
        ++maps;
    }
    EXPECT_GE(maps, 5u);  // the corpus's BSP 29 and GoldSrc maps
}

TEST(Quake1RewriteCorpus, GoldSrcMapsInBlueShiftOrderReadTheSame) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        const Bytes bytes = read_corpus(*f);
        const Bsp original = Bsp::parse(bytes, f->relpath);
        // Version 30 (Blue Shift is told apart from version 30 maps only; a
        // version 29 file with RGB lighting is GoldSrc too, in id's order).
        if (original.version() != 30 || original.layout().variant == "bshift") continue;
        SCOPED_TRACE(f->relpath);
        const Bsp copy = Bsp::parse(blue_shift_order(bytes), f->relpath);
        ASSERT_EQ(copy.layout().variant, "bshift");
        expect_same_answers(Answers(original), copy, vertex_points(original));
        ++maps;
    }
    EXPECT_GE(maps, 5u);  // the corpus's version 30 maps
}
