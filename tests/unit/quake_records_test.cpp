// Typed records, `check` and visibility of the non-Source formats, on maps
// the tests build themselves (quake_test_maps.hpp): sizes against the format
// tables, decoding, a clean check, and hostile edits that must be reported
// with the right lump, record and field — never a crash or a huge allocation.
#include "quake_test_maps.hpp"
#include "run.hpp"

#include <bspkit/check.hpp>
#include <bspkit/visibility.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

using namespace bspkit;
using namespace bspkit::testmaps;

namespace {

std::string dump(const CheckReport& r) {
    std::string out;
    for (const Finding& f : r.findings)
        out += (f.severity == Severity::error ? "  error " : "  warning ") + f.lump + " #" + std::to_string(f.record) +
               " ." + f.field + ": " + f.message + "\n";
    return out;
}

bool has(const CheckReport& r, Severity s, std::string_view lump, int64_t record, std::string_view field,
         std::string_view text = "") {
    for (const Finding& f : r.findings)
        if (f.severity == s && f.lump == lump && f.record == record && f.field == field &&
            f.message.find(text) != std::string::npos)
            return true;
    return false;
}

CheckReport check_bytes(const Bytes& file, const std::string& name = "test.bsp") {
    const Bsp bsp = Bsp::parse(file, name);
    return check(bsp);
}

#define EXPECT_ERROR(report, lump, record, field)                                                         \
    EXPECT_TRUE(has(report, Severity::error, lump, record, field))                                      \
        << "expected error in lump " << lump << " record " << record << " field " << field << ", got:\n" \
        << dump(report)

#define EXPECT_CLEAN(report) EXPECT_TRUE((report).findings.empty()) << dump(report)

size_t record_size(const FormatLayout& layout, std::string_view lump) {
    return layout.lumps[*layout.find_lump(lump)].record_size;
}

std::vector<uint8_t> visible(const Visibility& vis, size_t cluster) {
    const Bytes row = vis.pvs(cluster);
    std::vector<uint8_t> out;
    for (size_t i = 0; i < vis.clusters(); ++i) out.push_back((row[i >> 3] >> (i & 7)) & 1);
    return out;
}

}  // namespace

// ---- sizes ----------------------------------------------------------------

TEST(QuakeRecords, SizesMatchTheFormatTables) {
    using namespace quake1;
    const FormatLayout& q1 = layouts::quake1();
    EXPECT_EQ(sizeof(dplane_t), record_size(q1, "planes"));
    EXPECT_EQ(sizeof(dvertex_t), record_size(q1, "vertexes"));
    EXPECT_EQ(sizeof(dnode_t), record_size(q1, "nodes"));
    EXPECT_EQ(sizeof(texinfo_t), record_size(q1, "texinfo"));
    EXPECT_EQ(sizeof(dface_t), record_size(q1, "faces"));
    EXPECT_EQ(sizeof(dclipnode_t), record_size(q1, "clipnodes"));
    EXPECT_EQ(sizeof(dleaf_t), record_size(q1, "leafs"));
    EXPECT_EQ(sizeof(dmarksurface_t), record_size(q1, "marksurfaces"));
    EXPECT_EQ(sizeof(dedge_t), record_size(q1, "edges"));
    EXPECT_EQ(sizeof(dsurfedge_t), record_size(q1, "surfedges"));
    EXPECT_EQ(sizeof(dmodel_t), record_size(q1, "models"));
    const FormatLayout& b2 = layouts::bsp2();
    EXPECT_EQ(sizeof(bsp2_dnode_t), record_size(b2, "nodes"));
    EXPECT_EQ(sizeof(bsp2_dface_t), record_size(b2, "faces"));
    EXPECT_EQ(sizeof(bsp2_dclipnode_t), record_size(b2, "clipnodes"));
    EXPECT_EQ(sizeof(bsp2_dleaf_t), record_size(b2, "leafs"));
    EXPECT_EQ(sizeof(bsp2_dmarksurface_t), record_size(b2, "marksurfaces"));
    EXPECT_EQ(sizeof(bsp2_dedge_t), record_size(b2, "edges"));
    const FormatLayout& rmq = layouts::bsp2_2psb();
    EXPECT_EQ(sizeof(bsp2rmq_dnode_t), record_size(rmq, "nodes"));
    EXPECT_EQ(sizeof(bsp2rmq_dleaf_t), record_size(rmq, "leafs"));
    EXPECT_EQ(sizeof(bsp2_dface_t), record_size(rmq, "faces"));
    const FormatLayout& bs = layouts::goldsrc_bshift();
    EXPECT_EQ(sizeof(dplane_t), record_size(bs, "planes"));
    EXPECT_EQ(sizeof(dface_t), record_size(bs, "faces"));

    const FormatLayout& q2 = layouts::quake2();
    using Q2 = quake2::Map;
    EXPECT_EQ(sizeof(quake2::dplane_t), q2.lumps[Q2::LUMP_PLANES].record_size);
    EXPECT_EQ(sizeof(quake2::dvertex_t), q2.lumps[Q2::LUMP_VERTEXES].record_size);
    EXPECT_EQ(sizeof(quake2::dnode_t), q2.lumps[Q2::LUMP_NODES].record_size);
    EXPECT_EQ(sizeof(quake2::texinfo_t), q2.lumps[Q2::LUMP_TEXINFO].record_size);
    EXPECT_EQ(sizeof(quake2::dface_t), q2.lumps[Q2::LUMP_FACES].record_size);
    EXPECT_EQ(sizeof(quake2::dleaf_t), q2.lumps[Q2::LUMP_LEAFS].record_size);
    EXPECT_EQ(sizeof(quake2::dleafface_t), q2.lumps[Q2::LUMP_LEAFFACES].record_size);
    EXPECT_EQ(sizeof(quake2::dleafbrush_t), q2.lumps[Q2::LUMP_LEAFBRUSHES].record_size);
    EXPECT_EQ(sizeof(quake2::dedge_t), q2.lumps[Q2::LUMP_EDGES].record_size);
    EXPECT_EQ(sizeof(quake2::dsurfedge_t), q2.lumps[Q2::LUMP_SURFEDGES].record_size);
    EXPECT_EQ(sizeof(quake2::dmodel_t), q2.lumps[Q2::LUMP_MODELS].record_size);
    EXPECT_EQ(sizeof(quake2::dbrush_t), q2.lumps[Q2::LUMP_BRUSHES].record_size);
    EXPECT_EQ(sizeof(quake2::dbrushside_t), q2.lumps[Q2::LUMP_BRUSHSIDES].record_size);
    EXPECT_EQ(sizeof(quake2::darea_t), q2.lumps[Q2::LUMP_AREAS].record_size);
    EXPECT_EQ(sizeof(quake2::dareaportal_t), q2.lumps[Q2::LUMP_AREAPORTALS].record_size);
    EXPECT_EQ(q2.lumps[Q2::LUMP_POP].name, "pop");

    const FormatLayout& q3 = layouts::quake3();
    using Q3 = quake3::Map;
    EXPECT_EQ(sizeof(quake3::dshader_t), q3.lumps[Q3::LUMP_SHADERS].record_size);
    EXPECT_EQ(sizeof(quake3::dplane_t), q3.lumps[Q3::LUMP_PLANES].record_size);
    EXPECT_EQ(sizeof(quake3::dnode_t), q3.lumps[Q3::LUMP_NODES].record_size);
    EXPECT_EQ(sizeof(quake3::dleaf_t), q3.lumps[Q3::LUMP_LEAFS].record_size);
    EXPECT_EQ(sizeof(quake3::dleafsurface_t), q3.lumps[Q3::LUMP_LEAFSURFACES].record_size);
    EXPECT_EQ(sizeof(quake3::dleafbrush_t), q3.lumps[Q3::LUMP_LEAFBRUSHES].record_size);
    EXPECT_EQ(sizeof(quake3::dmodel_t), q3.lumps[Q3::LUMP_MODELS].record_size);
    EXPECT_EQ(sizeof(quake3::dbrush_t), q3.lumps[Q3::LUMP_BRUSHES].record_size);
    EXPECT_EQ(sizeof(quake3::dbrushside_t), q3.lumps[Q3::LUMP_BRUSHSIDES].record_size);
    EXPECT_EQ(sizeof(quake3::drawVert_t), q3.lumps[Q3::LUMP_DRAWVERTS].record_size);
    EXPECT_EQ(sizeof(quake3::dmeshvert_t), q3.lumps[Q3::LUMP_DRAWINDEXES].record_size);
    EXPECT_EQ(sizeof(quake3::dfog_t), q3.lumps[Q3::LUMP_FOGS].record_size);
    EXPECT_EQ(sizeof(quake3::dsurface_t), q3.lumps[Q3::LUMP_SURFACES].record_size);
    EXPECT_EQ(sizeof(quake3::dlightmap_t), q3.lumps[Q3::LUMP_LIGHTMAPS].record_size);
    EXPECT_EQ(sizeof(quake3::dlightgrid_t), q3.lumps[Q3::LUMP_LIGHTGRID].record_size);
    EXPECT_EQ(q3.lumps[Q3::LUMP_VISIBILITY].name, "visdata");

    const FormatLayout& nf = layouts::nightfire();
    using NF = nightfire::Map;
    EXPECT_EQ(sizeof(nightfire::Plane), nf.lumps[NF::Planes].record_size);
    EXPECT_EQ(sizeof(nightfire::Texture), nf.lumps[NF::Textures].record_size);
    EXPECT_EQ(sizeof(nightfire::Material), nf.lumps[NF::Materials].record_size);
    EXPECT_EQ(sizeof(nightfire::Vertex), nf.lumps[NF::Vertices].record_size);
    EXPECT_EQ(sizeof(nightfire::ZeroVertex), nf.lumps[NF::ZeroVertices].record_size);
    EXPECT_EQ(sizeof(nightfire::DrawIndex), nf.lumps[NF::DrawIndices].record_size);
    EXPECT_EQ(sizeof(nightfire::Node), nf.lumps[NF::Nodes].record_size);
    EXPECT_EQ(sizeof(nightfire::Surface), nf.lumps[NF::Surfaces].record_size);
    EXPECT_EQ(sizeof(nightfire::Leaf), nf.lumps[NF::Leaves].record_size);
    EXPECT_EQ(sizeof(nightfire::LeafSurface), nf.lumps[NF::LeafSurfaces].record_size);
    EXPECT_EQ(sizeof(nightfire::LeafBrush), nf.lumps[NF::LeafBrushes].record_size);
    EXPECT_EQ(sizeof(nightfire::Model), nf.lumps[NF::Models].record_size);
    EXPECT_EQ(sizeof(nightfire::Brush), nf.lumps[NF::Brushes].record_size);
    EXPECT_EQ(sizeof(nightfire::BrushSide), nf.lumps[NF::BrushSides].record_size);
    EXPECT_EQ(sizeof(nightfire::Projection), nf.lumps[NF::Projections].record_size);
    EXPECT_EQ(nf.lumps[NF::Lighting].name, "lighting");
}

// ---- Quake 1 family ---------------------------------------------------------

namespace {

struct Q1Case {
    const char* name;
    const FormatLayout& (*layout)();
    std::optional<int32_t> version;
    bool goldsrc;
    Format format;
    std::string_view variant;
};

const Q1Case kQ1Cases[] = {
    {"quake1", &layouts::quake1, 29, false, Format::quake1, ""},
    {"goldsrc", &layouts::goldsrc, 30, true, Format::goldsrc, ""},
    {"bshift", &layouts::goldsrc_bshift, 30, true, Format::goldsrc, "bshift"},
    {"bsp2", &layouts::bsp2, std::nullopt, false, Format::bsp2, "BSP2"},
    {"2psb", &layouts::bsp2_2psb, std::nullopt, false, Format::bsp2, "2PSB"},
};

template <class Types>
Bytes build_q1(const Q1Case& c, const std::function<void(Quake1Map<Types>&)>& edit = {}) {
    Quake1Map<Types> m(c.goldsrc);
    if (edit) edit(m);
    return m.build(c.layout(), c.version);
}

/// Runs `fn.template operator()<Types>(case)` for each Quake 1 variant with its record types.
template <class Fn>
void for_each_q1(Fn&& fn) {
    for (const Q1Case& c : kQ1Cases) {
        SCOPED_TRACE(c.name);
        if (c.format != Format::bsp2)
            fn.template operator()<quake1::Bsp29Types>(c);
        else if (c.variant == "BSP2")
            fn.template operator()<quake1::Bsp2Types>(c);
        else
            fn.template operator()<quake1::Bsp2RmqTypes>(c);
    }
}

}  // namespace

TEST(QuakeRecords, Quake1FamilyDecodesAndChecksClean) {
    for_each_q1([]<class Types>(const Q1Case& c) {
        const Bsp bsp = Bsp::parse(build_q1<Types>(c), std::string(c.name) + ".bsp");
        ASSERT_EQ(bsp.format(), c.format);
        ASSERT_EQ(bsp.layout().variant, c.variant);
        const quake1::Map map(bsp);
        EXPECT_EQ(map.goldsrc(), c.goldsrc);
        EXPECT_EQ(map.lightmap_sample_bytes(), c.goldsrc ? 3 : 1);
        map.visit([&](const auto& t) {
            using T = std::decay_t<decltype(t)>;
            EXPECT_TRUE((std::is_same_v<T, quake1::Tables<Types>>));
            ASSERT_EQ(t.faces.size(), 6u);
            EXPECT_EQ(t.faces[4].planenum, 4);
            EXPECT_EQ(t.faces[4].firstedge, 16);
            EXPECT_EQ(t.faces[5].lightofs, 5 * kSamplesPerFace * (c.goldsrc ? 3 : 1));
            ASSERT_EQ(t.edges.size(), 25u);
            EXPECT_EQ(t.edges[0].v[0], 0u);
            ASSERT_EQ(t.leafs.size(), 2u);
            EXPECT_EQ(t.leafs[1].nummarksurfaces, 6u);
            EXPECT_EQ(t.nodes[0].children[0], -2);
            EXPECT_EQ(t.clipnodes[0].children[1], quake1::CONTENTS_SOLID);
            EXPECT_EQ(t.planes[3].dist, -64.0f);
            EXPECT_EQ(t.vertexes[7].point[2], 128.0f);
            EXPECT_EQ(t.models[0].visleafs, 1);
        });
        const auto dir = map.miptex();
        ASSERT_EQ(dir.entries.size(), 1u);
        EXPECT_EQ(dir.entries[0].name, "bspkit_grey");
        EXPECT_EQ(dir.entries[0].width, 16u);
        EXPECT_TRUE(dir.entries[0].embedded);
        const auto lm = quake1::face_lightmap(map, 2);
        ASSERT_TRUE(lm);
        EXPECT_EQ(lm->width, 9);
        EXPECT_EQ(lm->height, 9);
        EXPECT_EQ(lm->bytes, size_t(kSamplesPerFace * (c.goldsrc ? 3 : 1)));
        EXPECT_CLEAN(check(bsp));
        const Visibility vis = Visibility::of(bsp);
        EXPECT_EQ(vis.encoding(), Visibility::Encoding::quake_leaf_rle);
        EXPECT_TRUE(vis.leaf_based());
        ASSERT_EQ(vis.clusters(), 1u);
        EXPECT_EQ(visible(vis, 0), std::vector<uint8_t>{1});
        EXPECT_FALSE(vis.cluster_of_leaf(0));
        EXPECT_EQ(vis.cluster_of_leaf(1), 0u);
    });
}

TEST(QuakeRecords, Quake1BrokenReferencesNameLumpRecordAndField) {
    for_each_q1([]<class Types>(const Q1Case& c) {
        using M = Quake1Map<Types>;
        auto run = [&](std::function<void(M&)> edit) { return check_bytes(build_q1<Types>(c, edit)); };
        EXPECT_ERROR(run([](M& m) { m.faces[2].texinfo = 99; }), "faces", 2, "texinfo");
        EXPECT_ERROR(run([](M& m) { m.faces[1].planenum = 6; }), "faces", 1, "planenum");
        EXPECT_ERROR(run([](M& m) { m.faces[3].numedges = 30; }), "faces", 3, "numedges");
        EXPECT_ERROR(run([](M& m) { m.faces[3].firstedge = -4; }), "faces", 3, "firstedge");
        EXPECT_ERROR(run([](M& m) { m.marksurfaces[3].face = 6; }), "marksurfaces", 3, "face");
        EXPECT_ERROR(run([](M& m) { m.edges[5].v[1] = 8; }), "edges", 5, "v");
        EXPECT_ERROR(run([](M& m) { m.surfedges[7].edge = -25; }), "surfedges", 7, "edge");
        EXPECT_ERROR(run([](M& m) { m.surfedges[7].edge = INT32_MIN; }), "surfedges", 7, "edge");
        EXPECT_ERROR(run([](M& m) { m.nodes[0].children[0] = -3; }), "nodes", 0, "children");
        EXPECT_ERROR(run([](M& m) { m.nodes[0].children[1] = 0; }), "nodes", 0, "children");  // a cycle
        EXPECT_ERROR(run([](M& m) { m.nodes[0].planenum = 6; }), "nodes", 0, "planenum");
        EXPECT_ERROR(run([](M& m) { m.nodes[0].numfaces = 7; }), "nodes", 0, "numfaces");
        EXPECT_ERROR(run([](M& m) { m.clipnodes[0].children[0] = -99; }), "clipnodes", 0, "children");
        EXPECT_ERROR(run([](M& m) { m.clipnodes[0].children[1] = 1; }), "clipnodes", 0, "children");
        EXPECT_ERROR(run([](M& m) { m.leafs[1].visofs = 1; }), "leafs", 1, "visofs");
        EXPECT_ERROR(run([](M& m) { m.leafs[1].nummarksurfaces = 7; }), "leafs", 1, "nummarksurfaces");
        EXPECT_ERROR(run([](M& m) { m.texinfo[4].miptex = 1; }), "texinfo", 4, "miptex");
        EXPECT_ERROR(run([](M& m) { m.models[0].numfaces = 7; }), "models", 0, "numfaces");
        EXPECT_ERROR(run([](M& m) { m.models[0].headnode[0] = 1; }), "models", 0, "headnode");
        EXPECT_ERROR(run([](M& m) { m.models[0].headnode[2] = 5; }), "models", 0, "headnode");
        EXPECT_ERROR(run([](M& m) { m.models[0].visleafs = 1000000000; }), "models", 0, "visleafs");
        EXPECT_ERROR(run([](M& m) { m.models.clear(); }), "models", -1, "");
        // The luxel rule decides to the byte: one byte less and the last lightmap is cut.
        EXPECT_ERROR(run([](M& m) { m.lighting.pop_back(); }), "faces", 5, "lightofs");
        EXPECT_ERROR(run([](M& m) { m.faces[0].lightofs = int32_t(m.lighting.size()); }), "faces", 0, "lightofs");
        EXPECT_ERROR(run([](M& m) { m.faces[5].styles[1] = 1; }), "faces", 5, "lightofs");  // a second style needs twice the bytes
        // Visibility row: a zero byte without its count runs off the lump.
        EXPECT_ERROR(run([](M& m) { m.visibility = {0x00}; }), "leafs", 1, "visofs");
        // Miptex directory.
        EXPECT_ERROR(run([](M& m) { store<int32_t>(m.textures.data(), INT32_MAX); }), "textures", -1, "nummiptex");
        EXPECT_ERROR(run([](M& m) { store<int32_t>(m.textures.data() + 4, 1 << 20); }), "textures", 0, "dataofs");
        EXPECT_ERROR(run([](M& m) { store<uint32_t>(m.textures.data() + 8 + 16, 17); }), "textures", 0, "width");
        EXPECT_ERROR(run([](M& m) { store<uint32_t>(m.textures.data() + 8 + 36, 1 << 20); }), "textures", 0, "offsets");
        // Missing textures and an unused leaf 0 row are warnings / nothing.
        const CheckReport missing = run([](M& m) { store<int32_t>(m.textures.data() + 4, -1); });
        EXPECT_EQ(missing.errors(), 0u) << dump(missing);
        EXPECT_TRUE(has(missing, Severity::warning, "texinfo", 0, "miptex", "missing"));
        EXPECT_CLEAN(run([](M& m) { m.leafs[0].visofs = 12345; }));
    });
}

TEST(QuakeRecords, Quake1HostileCountsStayBounded) {
    // A leaf claiming 65535 marksurfaces, and 200000 broken marksurfaces: the
    // report names the first ones and counts the rest.
    const Q1Case& c = kQ1Cases[0];
    const CheckReport r = check_bytes(build_q1<quake1::Bsp29Types>(c, [](Quake1Map<quake1::Bsp29Types>& m) {
        m.leafs[1].nummarksurfaces = 65535;
        m.marksurfaces.assign(200000, {65535});
    }));
    EXPECT_TRUE(has(r, Severity::error, "leafs", 1, "nummarksurfaces") == false) << "200000 marksurfaces exist";
    size_t listed = 0;
    bool summary = false;
    for (const Finding& f : r.findings) {
        if (f.lump != "marksurfaces") continue;
        if (f.record >= 0) ++listed;
        else summary = f.message.find(std::to_string(200000 - listed)) == 0 || summary;
    }
    EXPECT_LE(listed, 32u);
    EXPECT_TRUE(summary) << dump(r);
    EXPECT_LT(r.findings.size(), 100u);
    // visleafs far beyond the leaves: clamped, no allocation of a billion rows.
    const Bsp bsp = Bsp::parse(build_q1<quake1::Bsp29Types>(c, [](Quake1Map<quake1::Bsp29Types>& m) {
                                   m.models[0].visleafs = INT32_MAX;
                               }),
                               "x.bsp");
    EXPECT_EQ(Visibility::of(bsp).clusters(), 1u);
}

// ---- Quake 2 ----------------------------------------------------------------

TEST(QuakeRecords, Quake2DecodesAndChecksClean) {
    const Bsp bsp = Bsp::parse(Quake2Map().build(), "q2.bsp");
    const quake2::Map map(bsp);
    ASSERT_EQ(map.faces().size(), 6u);
    EXPECT_EQ(map.faces()[3].lightofs, 3 * kSamplesPerFace * 3);
    EXPECT_EQ(map.leafs()[1].cluster, 0);
    EXPECT_EQ(map.leafs()[1].area, 1);
    EXPECT_EQ(std::string(map.texinfo()[0].texture), "e1u1/floor1_1");
    EXPECT_EQ(map.brushes()[0].numsides, 6);
    EXPECT_EQ(map.brushsides()[5].planenum, 5u);
    EXPECT_EQ(map.areas().size(), 2u);
    EXPECT_TRUE(map.pop().empty());
    const auto lm = quake2::face_lightmap(map, 1);
    ASSERT_TRUE(lm);
    EXPECT_EQ(lm->bytes, size_t(kSamplesPerFace * 3));
    EXPECT_CLEAN(check(bsp));
    const Visibility vis = Visibility::of(bsp);
    EXPECT_EQ(vis.encoding(), Visibility::Encoding::cluster_rle);
    EXPECT_TRUE(vis.pas_stored());
    EXPECT_EQ(vis.clusters(), 1u);
    EXPECT_EQ(visible(vis, 0), std::vector<uint8_t>{1});
    EXPECT_EQ(vis.pas(0), Bytes{1});
    EXPECT_FALSE(vis.cluster_of_leaf(0));
    EXPECT_EQ(vis.cluster_of_leaf(1), 0u);
}

TEST(QuakeRecords, ComputedPasIsTheUnionOfTheVisibleRowsWhenRowsAreShared) {
    // Eight clusters; clusters 1 and 2 share a row, as 3 and 5 do (ericw-tools' vis
    // writes identical rows once), and cluster 7 sees everything (visofs -1).
    const std::array<uint8_t, 5> rows = {0x03, 0x06, 0x0c, 0x18, 0x30};  // {0,1} {1,2} {2,3} {3,4} {4,5}
    const std::array<int32_t, 8> row_of = {0, 1, 1, 2, 3, 2, 4, -1};
    const Bytes file = build_q1<quake1::Bsp29Types>(kQ1Cases[0], [&](Quake1Map<quake1::Bsp29Types>& m) {
        const auto room = m.leafs[1];
        m.leafs.resize(9, room);
        for (size_t c = 0; c < 8; ++c) m.leafs[c + 1].visofs = row_of[c];
        m.models[0].visleafs = 8;
        m.visibility.assign(rows.begin(), rows.end());
    });
    const Bsp bsp = Bsp::parse(file, "shared.bsp");
    const Visibility vis = Visibility::of(bsp);
    ASSERT_EQ(vis.clusters(), 8u);
    for (size_t c = 0; c < 8; ++c) {
        Bytes expected = vis.pvs(c);
        for (size_t v = 0; v < 8; ++v)
            if (v != c && (vis.pvs(c)[0] >> v & 1)) expected[0] |= vis.pvs(v)[0];
        EXPECT_EQ(vis.pas(c), expected) << "cluster " << c;
    }
    EXPECT_EQ(vis.pas(0), Bytes{0x07});  // {0,1} + cluster 1's {1,2}
    EXPECT_EQ(vis.pas(6), Bytes{0x3c});  // {4,5} + cluster 4's {3,4} + cluster 5's {2,3}
    EXPECT_EQ(vis.pas(7), Bytes{0xff});  // sees everything
}

TEST(QuakeVisCli, ComputedPasOfManyOverlappingRowsIsRefused) {
    // 400000 leaves whose PVS rows start one byte apart in one run of 0xff: each a
    // different 50000-byte row, so the PAS of any cluster (computed: Quake 1 stores
    // none) would read 20 GB. It is refused, naming the lump; the PVS still answers.
    const size_t n = 400000;
    const Bytes file = build_q1<quake1::Bsp29Types>(kQ1Cases[0], [](Quake1Map<quake1::Bsp29Types>& m) {
        const auto room = m.leafs[1];
        m.leafs.resize(n + 1, room);
        for (size_t i = 1; i <= n; ++i) m.leafs[i].visofs = int32_t(i - 1);
        m.models[0].visleafs = int32_t(n);
        m.visibility.assign(n + (n + 7) / 8, 0xff);
    });
    const Bsp bsp = Bsp::parse(file, "overlap.bsp");
    const Visibility vis = Visibility::of(bsp);
    ASSERT_EQ(vis.clusters(), n);
    EXPECT_EQ(vis.pvs(3).front(), 0xff);
    try {
        (void)vis.pas(3);
        ADD_FAILURE() << "pas() read 399999 rows";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, "visibility");
        EXPECT_NE(std::string(e.what()).find("would read 399999 different rows of 50000 bytes"), std::string::npos)
            << e.what();
    }
    const std::string path = test::temp_dir("qvis_overlap") + "/overlap.bsp";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
    const auto r = test::run_cli({"vis", path, "--cluster", "3"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("lump visibility"), std::string::npos) << r.err;
    const auto summary = test::run_cli({"vis", path});
    EXPECT_EQ(summary.exit_code, 1);
    EXPECT_NE(summary.err.find("400000 clusters of 50000-byte rows"), std::string::npos) << summary.err;
}

TEST(QuakeRecords, Quake2BrokenReferencesNameLumpRecordAndField) {
    using M = Quake2Map;
    auto run = [](std::function<void(M&)> edit) {
        M m;
        edit(m);
        return check_bytes(m.build());
    };
    EXPECT_ERROR(run([](M& m) { m.faces[2].texinfo = 6; }), "faces", 2, "texinfo");
    EXPECT_ERROR(run([](M& m) { m.faces[2].planenum = 60; }), "faces", 2, "planenum");
    EXPECT_ERROR(run([](M& m) { m.lighting.pop_back(); }), "faces", 5, "lightofs");
    EXPECT_ERROR(run([](M& m) { m.leafs[1].cluster = 5; }), "leafs", 1, "cluster");
    EXPECT_ERROR(run([](M& m) { m.leafs[1].area = 9; }), "leafs", 1, "area");
    EXPECT_ERROR(run([](M& m) { m.leafs[1].numleafbrushes = 2; }), "leafs", 1, "numleafbrushes");
    EXPECT_ERROR(run([](M& m) { m.leafbrushes[0].brush = 1; }), "leafbrushes", 0, "brush");
    EXPECT_ERROR(run([](M& m) { m.leaffaces[4].face = 6; }), "leaffaces", 4, "face");
    EXPECT_ERROR(run([](M& m) { m.brushes[0].numsides = 7; }), "brushes", 0, "numsides");
    EXPECT_ERROR(run([](M& m) { m.brushsides[2].planenum = 99; }), "brushsides", 2, "planenum");
    EXPECT_ERROR(run([](M& m) { m.brushsides[2].texinfo = 6; }), "brushsides", 2, "texinfo");
    EXPECT_ERROR(run([](M& m) { m.areas[1] = {1, 0}; }), "areas", 1, "numareaportals");
    EXPECT_ERROR(run([](M& m) { m.areaportals = {{1, 2}}; }), "areaportals", 0, "otherarea");
    EXPECT_ERROR(run([](M& m) { m.areaportals = {{5000, 1}}; }), "areaportals", 0, "portalnum");
    EXPECT_ERROR(run([](M& m) { m.models[0].headnode = 3; }), "models", 0, "headnode");
    EXPECT_ERROR(run([](M& m) { m.nodes[0].children[1] = -9; }), "nodes", 0, "children");
    EXPECT_ERROR(run([](M& m) { m.texinfo[0].nexttexinfo = 6; }), "texinfo", 0, "nexttexinfo");
    // An animation chain 0 -> 1 -> 2 -> 1: 0 never comes back (the engine loops forever).
    const CheckReport chain = run([](M& m) {
        m.texinfo[0].nexttexinfo = 1;
        m.texinfo[1].nexttexinfo = 2;
        m.texinfo[2].nexttexinfo = 1;
    });
    EXPECT_ERROR(chain, "texinfo", 0, "nexttexinfo");
    EXPECT_EQ(chain.errors(), 1u) << dump(chain);
    EXPECT_EQ(run([](M& m) {
                  m.texinfo[0].nexttexinfo = 1;
                  m.texinfo[1].nexttexinfo = 0;
              }).errors(),
              0u);
    // Visibility.
    EXPECT_ERROR(run([](M& m) { store<int32_t>(m.visibility.data() + 4, 99); }), "visibility", 0, "bitofs");
    EXPECT_ERROR(run([](M& m) { store<int32_t>(m.visibility.data() + 8, -7); }), "visibility", 0, "bitofs");
    EXPECT_ERROR(run([](M& m) { m.visibility[12] = 0; m.visibility.pop_back(); }), "visibility", 0, "bitofs");
    const CheckReport huge = run([](M& m) { store<int32_t>(m.visibility.data(), INT32_MAX); });
    EXPECT_ERROR(huge, "visibility", -1, "numclusters");
    M m;
    store<int32_t>(m.visibility.data(), INT32_MAX);
    const Bsp bsp = Bsp::parse(m.build(), "huge.bsp");
    try {
        (void)Visibility::of(bsp);
        ADD_FAILURE() << "a dvis_t of INT32_MAX clusters was accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, "visibility");
        EXPECT_NE(std::string(e.what()).find("numclusters"), std::string::npos);
    }
}

// ---- Quake 3 ----------------------------------------------------------------

TEST(QuakeRecords, Quake3DecodesAndChecksClean) {
    for (const int32_t version : {46, 47}) {
        Quake3Map q;
        q.version = version;
        const Bsp bsp = Bsp::parse(q.build(), "q3.bsp");
        ASSERT_EQ(bsp.version(), version);
        const quake3::Map map(bsp);
        ASSERT_EQ(map.surfaces().size(), 7u);
        EXPECT_EQ(map.surfaces()[6].surfaceType, quake3::MST_PATCH);
        EXPECT_EQ(map.surfaces()[6].patchWidth, 3);
        EXPECT_EQ(map.meshverts().size(), 36u);
        EXPECT_EQ(map.vertexes().size(), 33u);
        EXPECT_EQ(map.vertexes()[24].xyz[2], 8.0f);
        EXPECT_EQ(map.fogs()[0].visibleSide, 5);
        EXPECT_EQ(map.lightmaps().size(), 1u);
        EXPECT_EQ(map.lightmaps()[0].map[127][127][2], 0x80);
        EXPECT_EQ(map.lightgrid().size(), 18u);
        EXPECT_EQ(map.lightgrid()[3].directed[1], 200);
        ASSERT_TRUE(map.visdata_header());
        EXPECT_EQ(map.visdata_header()->sizeVecs, 8);
        EXPECT_CLEAN(check(bsp));
        const Visibility vis = Visibility::of(bsp);
        EXPECT_EQ(vis.encoding(), Visibility::Encoding::cluster_raw);
        EXPECT_EQ(vis.stored_row_bytes(), 8u);
        EXPECT_EQ(visible(vis, 0), std::vector<uint8_t>{1});
        EXPECT_FALSE(vis.pas_stored());
        EXPECT_EQ(vis.pas(0), Bytes{1});
    }
}

TEST(QuakeRecords, Quake3BrokenReferencesNameLumpRecordAndField) {
    using M = Quake3Map;
    auto run = [](std::function<void(M&)> edit) {
        M m;
        edit(m);
        return check_bytes(m.build());
    };
    EXPECT_ERROR(run([](M& m) { m.surfaces[6].patchWidth = 4; m.surfaces[6].numVerts = 12; }), "faces", 6,
                 "patchWidth");
    EXPECT_ERROR(run([](M& m) { m.surfaces[6].patchHeight = 1; m.surfaces[6].numVerts = 3; }), "faces", 6,
                 "patchWidth");
    EXPECT_ERROR(run([](M& m) { m.surfaces[6].numVerts = 8; }), "faces", 6, "numVerts");
    EXPECT_ERROR(run([](M& m) { m.meshverts[13].offset = 4; }), "meshverts", 13, "offset");
    EXPECT_ERROR(run([](M& m) { m.meshverts[13].offset = -1; }), "meshverts", 13, "offset");
    EXPECT_ERROR(run([](M& m) { m.surfaces[1].numIndexes = 5; }), "faces", 1, "numIndexes");
    EXPECT_ERROR(run([](M& m) { m.surfaces[5].numIndexes = 9; }), "faces", 5, "numIndexes");  // runs past
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].numVerts = 40; }), "faces", 2, "numVerts");
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].surfaceType = 9; }), "faces", 2, "surfaceType");
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].surfaceType = quake3::MST_FOLIAGE; }), "faces", 2, "surfaceType");
    EXPECT_EQ(run([](M& m) {
                  m.version = 47;  // RTCW / ET foliage
                  m.surfaces[2].surfaceType = quake3::MST_FOLIAGE;
              }).errors(),
              0u);
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].shaderNum = 2; }), "faces", 2, "shaderNum");
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].fogNum = 1; }), "faces", 2, "fogNum");
    EXPECT_ERROR(run([](M& m) { m.surfaces[0].lightmapNum = 1; }), "faces", 0, "lightmapNum");
    EXPECT_ERROR(run([](M& m) { m.surfaces[5].lightmapX = 120; }), "faces", 5, "lightmapX");
    EXPECT_ERROR(run([](M& m) { m.fogs[0].brushNum = 3; }), "effects", 0, "brushNum");
    EXPECT_ERROR(run([](M& m) { m.fogs[0].visibleSide = 6; }), "effects", 0, "visibleSide");
    EXPECT_ERROR(run([](M& m) { m.leafs[1].cluster = 1; }), "leafs", 1, "cluster");
    EXPECT_ERROR(run([](M& m) { m.leafs[1].numLeafSurfaces = 8; }), "leafs", 1, "numLeafSurfaces");
    EXPECT_ERROR(run([](M& m) { m.leafsurfaces[2].surface = 7; }), "leaffaces", 2, "surface");
    EXPECT_ERROR(run([](M& m) { m.leafbrushes[0].brush = -1; }), "leafbrushes", 0, "brush");
    EXPECT_ERROR(run([](M& m) { m.brushsides[3].planeNum = 6; }), "brushsides", 3, "planeNum");
    EXPECT_ERROR(run([](M& m) { m.brushes[0].firstSide = 1; }), "brushes", 0, "numSides");
    EXPECT_ERROR(run([](M& m) { m.models[0].numBrushes = 2; }), "models", 0, "numBrushes");
    EXPECT_ERROR(run([](M& m) { m.nodes[0].planeNum = -1; }), "nodes", 0, "planeNum");
    EXPECT_TRUE(has(run([](M& m) { m.lightgrid.pop_back(); }), Severity::warning, "lightvols", -1, ""));
    EXPECT_CLEAN(run([](M& m) {
        m.entities = text("{\n\"classname\" \"worldspawn\"\n\"gridsize\" \"32 32 64\"\n}\n");
        m.lightgrid.assign(5 * 5 * 3, {});
    }));
    const CheckReport huge = run([](M& m) { store<int32_t>(m.visdata.data(), INT32_MAX); });
    EXPECT_ERROR(huge, "visdata", -1, "numVecs");
    EXPECT_ERROR(run([](M& m) { store<int32_t>(m.visdata.data() + 4, 0); }), "visdata", -1, "numVecs");
    M m;
    store<int32_t>(m.visdata.data(), 1 << 30);
    store<int32_t>(m.visdata.data() + 4, 1 << 30);
    const Bsp bsp = Bsp::parse(m.build(), "huge.bsp");
    EXPECT_THROW((void)Visibility::of(bsp), Error);
}

// ---- Nightfire --------------------------------------------------------------

TEST(QuakeRecords, NightfireDecodesAndChecksClean) {
    const Bsp bsp = Bsp::parse(NightfireMap().build(), "nf.bsp");
    const nightfire::Map map(bsp);
    ASSERT_EQ(map.surfaces().size(), 6u);
    EXPECT_EQ(map.surfaces()[5].DrawIndicesIndex, 30u);
    EXPECT_EQ(map.surfaces()[5].LightmapProjectionIndex, 11u);
    EXPECT_EQ(map.projections()[1].S[1], 1.0f / 16);
    EXPECT_EQ(std::string(map.materials()[0].Path), "wld_lightmap");
    EXPECT_EQ(map.leaves()[1].LeafSurfacesCount, 6u);
    EXPECT_EQ(map.zero_vertices().size(), map.vertices().size());
    const auto lm = nightfire::surface_lightmap(map, 4);
    ASSERT_TRUE(lm);
    EXPECT_EQ(lm->width, 9);
    EXPECT_EQ(lm->bytes, size_t(kSamplesPerFace * 3));
    EXPECT_CLEAN(check(bsp));
    const Visibility vis = Visibility::of(bsp);
    EXPECT_EQ(vis.encoding(), Visibility::Encoding::nightfire_leaf);
    EXPECT_EQ(vis.clusters(), 1u);
    EXPECT_EQ(visible(vis, 0), std::vector<uint8_t>{1});
    EXPECT_EQ(vis.cluster_of_leaf(1), 0u);
}

TEST(QuakeRecords, NightfireBrokenReferencesNameLumpRecordAndField) {
    using M = NightfireMap;
    auto run = [](std::function<void(M&)> edit) {
        M m;
        edit(m);
        return check_bytes(m.build());
    };
    EXPECT_ERROR(run([](M& m) { m.draw_indices[13].TriangleCorner = 4; }), "draw_indices", 13, "TriangleCorner");
    EXPECT_ERROR(run([](M& m) { m.surfaces[2].DrawIndicesCount = 5; }), "surfaces", 2, "DrawIndicesCount");
    EXPECT_ERROR(run([](M& m) { m.surfaces[5].VerticesCount = 5; }), "surfaces", 5, "VerticesCount");
    EXPECT_ERROR(run([](M& m) { m.surfaces[0].LightmapProjectionIndex = 12; }), "surfaces", 0,
                 "LightmapProjectionIndex");
    EXPECT_ERROR(run([](M& m) { m.surfaces[0].TextureProjectionIndex = 99; }), "surfaces", 0,
                 "TextureProjectionIndex");
    EXPECT_ERROR(run([](M& m) { m.surfaces[0].MaterialIndex = 1; }), "surfaces", 0, "MaterialIndex");
    EXPECT_ERROR(run([](M& m) { m.surfaces[0].TextureIndex = 1; }), "surfaces", 0, "TextureIndex");
    EXPECT_ERROR(run([](M& m) { m.lighting.pop_back(); }), "surfaces", 5, "LightingOffset");
    EXPECT_ERROR(run([](M& m) { m.leaves[1].VisibilityOffset = 100; }), "leaves", 1, "VisibilityOffset");
    EXPECT_ERROR(run([](M& m) { m.leaf_surfaces[1].SurfaceIndex = 6; }), "leaf_surfaces", 1, "SurfaceIndex");
    EXPECT_ERROR(run([](M& m) { m.models[0].SurfacesCount = 7; }), "models", 0, "SurfacesCount");
    EXPECT_ERROR(run([](M& m) { m.models[0].LeavesIndex = 2; }), "models", 0, "LeavesCount");
    EXPECT_ERROR(run([](M& m) { m.brush_sides[0].SurfaceIndex = 6; }), "brush_sides", 0, "SurfaceIndex");
    EXPECT_ERROR(run([](M& m) { m.brushes[0].BrushSidesCount = 7; }), "brushes", 0, "BrushSidesCount");
    EXPECT_ERROR(run([](M& m) { m.nodes[0].Children[0] = 0; }), "nodes", 0, "Children");
    EXPECT_TRUE(has(run([](M& m) { m.zero_vertices.pop_back(); }), Severity::warning, "zero_vertices", -1, ""));
}

// ---- run-length rows ----------------------------------------------------------

// A Quake 3 map without visdata whose leaf names a huge cluster (a fuzz
// finding: 2^31 clusters of 256 MB rows): clusters never outnumber leafs.
TEST(QuakeVisibility, Quake3WithoutVisdataHasNoMoreClustersThanLeafs) {
    Quake3Map q;
    q.visdata.clear();
    ASSERT_FALSE(q.leafs.empty());
    q.leafs.back().cluster = INT32_MAX;
    const Bsp bsp = Bsp::parse(q.build(), "q3.bsp");
    const Visibility vis = Visibility::of(bsp);
    EXPECT_EQ(vis.encoding(), Visibility::Encoding::none);
    EXPECT_LE(vis.clusters(), q.leafs.size());
    EXPECT_FALSE(vis.cluster_of_leaf(q.leafs.size() - 1).has_value());
    EXPECT_LE(vis.row_bytes(), (q.leafs.size() + 7) / 8);
    for (size_t c = 0; c < vis.clusters(); ++c) EXPECT_EQ(vis.pvs(c).size(), vis.row_bytes());
}

TEST(QuakeVisibility, RunLengthRowsRoundTripAndStayInBounds) {
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
        const size_t n = 1 + rng() % 700;
        Bytes row(n);
        const unsigned density = rng() % 5;
        for (auto& b : row) b = (rng() % 8) < density ? uint8_t(rng()) : 0;
        const Bytes packed = compress_rle_row(row);
        Bytes guard(n + 16, 0xAB);
        const RleResult r = decompress_rle_row(packed, 0, std::span<uint8_t>(guard).first(n));
        EXPECT_EQ(r.status, RowStatus::ok);
        EXPECT_EQ(r.consumed, packed.size());
        EXPECT_TRUE(std::equal(row.begin(), row.end(), guard.begin()));
        for (size_t k = n; k < guard.size(); ++k) ASSERT_EQ(guard[k], 0xAB) << "wrote past the row";
    }
    Bytes out(4, 0xEE);
    EXPECT_EQ(decompress_rle_row(Bytes{0x01, 0x00}, 0, out).status, RowStatus::truncated);
    EXPECT_EQ(decompress_rle_row(Bytes{0x01, 0x02}, 0, out).status, RowStatus::truncated);
    EXPECT_EQ(decompress_rle_row(Bytes{0x01}, 2, out).status, RowStatus::outside);
    EXPECT_EQ(decompress_rle_row(Bytes{0x01, 0x00, 0x09}, 0, out).status, RowStatus::overrun);
    EXPECT_EQ(out, (Bytes{1, 0, 0, 0}));
    EXPECT_EQ(decompress_rle_row(Bytes{0x00, 0x07}, 0, out, 4).status, RowStatus::ok);  // padding tolerated
}

// ---- hostile bytes --------------------------------------------------------------

namespace {

/// Everything a reader of the typed records may do with a file; only
/// bspkit::Error may escape.
void exercise(const Bytes& file) {
    std::optional<Bsp> bsp;
    try {
        bsp.emplace(Bsp::parse(file, "fuzz.bsp"));
    } catch (const Error&) {
        return;
    }
    const CheckReport r = check(*bsp);
    (void)r;
    try {
        const Visibility vis = Visibility::of(*bsp);
        for (size_t c = 0; c < vis.clusters() && c < 64; ++c) {
            try {
                (void)vis.pvs(c);
                (void)vis.pas(c);
            } catch (const Error&) {
            }
        }
        for (size_t l = 0; l < vis.leaf_count() && l < 64; ++l) (void)vis.cluster_of_leaf(l);
    } catch (const Error&) {
    }
    switch (bsp->format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: {
            const quake1::Map map(*bsp);
            (void)map.miptex();
            map.visit([&](const auto& t) {
                for (size_t f = 0; f < t.faces.size() && f < 64; ++f) (void)quake1::face_lightmap(map, f);
            });
            break;
        }
        case Format::quake2: {
            const quake2::Map map(*bsp);
            for (size_t f = 0; f < map.faces().size() && f < 64; ++f) (void)quake2::face_lightmap(map, f);
            break;
        }
        case Format::nightfire: {
            const nightfire::Map map(*bsp);
            for (size_t s = 0; s < map.surfaces().size() && s < 64; ++s) (void)nightfire::surface_lightmap(map, s);
            break;
        }
        default: break;
    }
}

}  // namespace

TEST(QuakeRecords, BitFlippedMapsGiveFindingsOrErrorsNeverCrashes) {
    std::vector<Bytes> maps;
    for_each_q1([&]<class Types>(const Q1Case& c) { maps.push_back(build_q1<Types>(c)); });
    maps.push_back(Quake2Map().build());
    maps.push_back(Quake3Map().build());
    maps.push_back(NightfireMap().build());
    std::mt19937 rng(1234);
    // BSPKIT_FUZZ_ROUNDS raises the count for long runs (e.g. under ASan).
    const char* env = std::getenv("BSPKIT_FUZZ_ROUNDS");
    const int rounds = env ? std::max(1, std::atoi(env)) : 400;
    for (const Bytes& original : maps) {
        for (int round = 0; round < rounds; ++round) {
            Bytes file = original;
            const int flips = 1 + int(rng() % 6);
            for (int k = 0; k < flips; ++k) {
                const size_t at = rng() % file.size();
                switch (rng() % 3) {
                    case 0: file[at] ^= uint8_t(1u << (rng() % 8)); break;
                    case 1: file[at] = 0xFF; break;
                    default:  // a huge little-endian int where one may be
                        if (at + 4 <= file.size()) store<int32_t>(file.data() + at, int32_t(rng()));
                }
            }
            ASSERT_NO_THROW(exercise(file)) << "round " << round;
        }
    }
}

// ---- command line -----------------------------------------------------------

TEST(QuakeCheckCli, ExitCodesTextAndJson) {
    const std::string dir = test::temp_dir("qcheck");
    const std::string clean = dir + "/clean.bsp", broken = dir + "/broken.bsp";
    {
        const Bytes good = Quake2Map().build();
        std::ofstream(clean, std::ios::binary).write(reinterpret_cast<const char*>(good.data()), std::streamsize(good.size()));
        Quake2Map m;
        m.faces[2].texinfo = 40;
        const Bytes bad = m.build();
        std::ofstream(broken, std::ios::binary).write(reinterpret_cast<const char*>(bad.data()), std::streamsize(bad.size()));
    }
    auto ok = test::run_cli({"check", clean});
    EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
    EXPECT_NE(ok.out.find("0 errors, 0 warnings"), std::string::npos) << ok.out;

    auto bad = test::run_cli({"check", broken});
    EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
    EXPECT_NE(bad.out.find(broken + ": lump faces record 2 field texinfo: error: texinfo 40 is out of range"),
              std::string::npos)
        << bad.out;

    auto json = test::run_cli({"check", broken, "--json"});
    EXPECT_EQ(json.exit_code, 1);
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["file"], broken);
    EXPECT_EQ(j["format"], "quake2");
    EXPECT_EQ(j["errors"], 1);
    EXPECT_EQ(j["warnings"], 0);
    ASSERT_EQ(j["findings"].size(), 1u);
    EXPECT_EQ(j["findings"][0]["severity"], "error");
    EXPECT_EQ(j["findings"][0]["lump"], "faces");
    EXPECT_EQ(j["findings"][0]["record"], 2);
    EXPECT_EQ(j["findings"][0]["field"], "texinfo");

    EXPECT_EQ(test::run_cli({"check", dir + "/missing.bsp"}).exit_code, 1);
    EXPECT_EQ(test::run_cli({"check"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"check", "--help"}).exit_code, 0);
}

TEST(QuakeVisCli, ClusterLeafSummaryAndUsage) {
    const std::string dir = test::temp_dir("qvis");
    const std::string file = dir + "/box.bsp";
    {
        const Bytes good = Quake2Map().build();
        std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(good.data()), std::streamsize(good.size()));
    }
    auto one = test::run_cli({"vis", file, "--cluster", "0", "--json"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const auto j = nlohmann::json::parse(one.out);
    EXPECT_EQ(j["visible"], nlohmann::json::array({0}));
    EXPECT_EQ(j["audible"], nlohmann::json::array({0}));
    EXPECT_EQ(j["pas"], "stored");
    auto leaf0 = test::run_cli({"vis", file, "--leaf", "0", "--json"});
    ASSERT_EQ(leaf0.exit_code, 0);
    EXPECT_TRUE(nlohmann::json::parse(leaf0.out)["cluster"].is_null());
    auto leaf1 = test::run_cli({"vis", file, "--leaf", "1"});
    EXPECT_EQ(leaf1.exit_code, 0);
    EXPECT_NE(leaf1.out.find("visible: 1 of 1 clusters"), std::string::npos) << leaf1.out;
    auto summary = test::run_cli({"vis", file, "--json"});
    ASSERT_EQ(summary.exit_code, 0);
    const auto s = nlohmann::json::parse(summary.out);
    EXPECT_EQ(s["clusters"], 1);
    EXPECT_EQ(s["average_visible_fraction"], 1.0);
    EXPECT_EQ(test::run_cli({"vis", file, "--cluster", "1"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"vis", file, "--leaf", "2"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"vis", file, "--leaf", "1", "--cluster", "0"}).exit_code, 2);
    // A PVS row outside the lump is bad input: exit 1, the lump named.
    Quake2Map m;
    store<int32_t>(m.visibility.data() + 4, 400);
    const Bytes bad = m.build();
    const std::string broken = dir + "/broken.bsp";
    std::ofstream(broken, std::ios::binary).write(reinterpret_cast<const char*>(bad.data()), std::streamsize(bad.size()));
    auto r = test::run_cli({"vis", broken, "--cluster", "0"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("lump visibility"), std::string::npos) << r.err;
    // 400000 clusters whose rows are all one row of 0xff: the summary would read
    // 400000 x 50000 bytes; it refuses at once, naming the lump. One cluster still answers.
    Quake2Map h;
    const size_t clusters = 400000, row = (clusters + 7) / 8, header = 4 + 8 * clusters;
    h.visibility.assign(header + row, 0xff);
    store<int32_t>(h.visibility.data(), int32_t(clusters));
    for (size_t c = 0; c < clusters; ++c) {
        store<int32_t>(h.visibility.data() + 4 + 8 * c, int32_t(header));
        store<int32_t>(h.visibility.data() + 8 + 8 * c, int32_t(header));
    }
    const Bytes hostile = h.build();
    const std::string huge = dir + "/huge.bsp";
    std::ofstream(huge, std::ios::binary).write(reinterpret_cast<const char*>(hostile.data()), std::streamsize(hostile.size()));
    auto refused = test::run_cli({"vis", huge});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("lump visibility: 400000 clusters of 50000-byte rows"), std::string::npos) << refused.err;
    auto seven = test::run_cli({"vis", huge, "--cluster", "7"});
    EXPECT_EQ(seven.exit_code, 0) << seven.err;
    EXPECT_NE(seven.out.find("visible: 400000 of 400000 clusters"), std::string::npos) << seven.out;
}
