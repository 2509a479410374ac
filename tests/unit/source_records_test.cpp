// Source typed records, the Map view, the cross-reference check and static
// props on maps built here: record sizes, big-endian files decoded into the
// same values as little-endian ones, injected defects reported with the
// right lump / record / field, and hostile counts rejected cheaply.
#include <bspkit/check.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>

namespace bspkit::source {
namespace {

// ---------------------------------------------------------------------------
// Record sizes
// ---------------------------------------------------------------------------

template <class T>
void expect_size(size_t bytes, const char* name) {
    EXPECT_EQ(sizeof(T), bytes) << name;
    EXPECT_EQ(layout_size(T::kLayout), bytes) << name << " kLayout";
}

TEST(SourceRecords, SizesMatchTheSpecs) {
    expect_size<dplane_t>(20, "dplane_t");
    expect_size<dtexdata_t>(32, "dtexdata_t");
    expect_size<Vector>(12, "Vector");
    expect_size<dvertex_t>(12, "dvertex_t");
    expect_size<dnode_t>(32, "dnode_t");
    expect_size<texinfo_t>(72, "texinfo_t");
    expect_size<dface_t>(56, "dface_t");
    expect_size<dface_v17_t>(104, "dface_v17_t");
    expect_size<dleaf_t>(32, "dleaf_t");
    expect_size<dleaf_version_0_t>(56, "dleaf_version_0_t");
    expect_size<CompressedLightCube>(24, "CompressedLightCube");
    expect_size<dedge_t>(4, "dedge_t");
    expect_size<dmodel_t>(48, "dmodel_t");
    expect_size<dworldlight_t>(88, "dworldlight_t");
    expect_size<dworldlight_v1_t>(100, "dworldlight_v1_t");
    expect_size<dbrush_t>(12, "dbrush_t");
    expect_size<dbrushside_t>(8, "dbrushside_t");
    expect_size<dbrushside_v21_t>(8, "dbrushside_v21_t");
    expect_size<darea_t>(8, "darea_t");
    expect_size<dareaportal_t>(12, "dareaportal_t");
    expect_size<ddispinfo_t>(176, "ddispinfo_t");
    expect_size<dDispVert>(20, "dDispVert");
    expect_size<dDispTri>(2, "dDispTri");
    expect_size<dcubemapsample_t>(16, "dcubemapsample_t");
    expect_size<doverlay_t>(352, "doverlay_t");
    expect_size<dwateroverlay_t>(1120, "dwateroverlay_t");
    expect_size<dleafwaterdata_t>(12, "dleafwaterdata_t");
    expect_size<dprimitive_t>(10, "dprimitive_t");
    expect_size<dprimvert_t>(12, "dprimvert_t");
    expect_size<dleafambientindex_t>(4, "dleafambientindex_t");
    expect_size<dleafambientlighting_t>(28, "dleafambientlighting_t");
    expect_size<ColorRGBExp32>(4, "ColorRGBExp32");
    expect_size<doccluderdata_t>(40, "doccluderdata_t");
    expect_size<doccluderdata_v0_t>(36, "doccluderdata_v0_t");
    expect_size<doccluderpolydata_t>(12, "doccluderpolydata_t");
    expect_size<doverlayfade_t>(8, "doverlayfade_t");
    expect_size<dflagslump_t>(4, "dflagslump_t");
    expect_size<DetailObjectLump_t>(52, "DetailObjectLump_t");
    expect_size<DetailSpriteDictLump_t>(32, "DetailSpriteDictLump_t");
    expect_size<DetailPropLightstylesLump_t>(5, "DetailPropLightstylesLump_t");
    // Field offsets that padding would move.
    EXPECT_EQ(offsetof(ddispinfo_t, LightmapAlphaStart), 40u);
    EXPECT_EQ(offsetof(ddispinfo_t, EdgeNeighbors), 48u);
    EXPECT_EQ(offsetof(ddispinfo_t, CornerNeighbors), 96u);
    EXPECT_EQ(offsetof(ddispinfo_t, AllowedVerts), 136u);
    EXPECT_EQ(offsetof(dleaf_version_0_t, m_AmbientLighting), 30u);
    EXPECT_EQ(offsetof(dface_v17_t, planenum), 32u);
    EXPECT_EQ(offsetof(dface_v17_t, lightofs), 72u);
    EXPECT_EQ(offsetof(DetailObjectLump_t, m_flScale), 48u);
}

// ---------------------------------------------------------------------------
// A small map built in code: a box room of six faces, one node, two leafs,
// one brush, one displacement on the last face, visibility, lighting and a
// static prop. Every reference resolves.
// ---------------------------------------------------------------------------

struct BoxMap {
    std::vector<dplane_t> planes;
    std::vector<dvertex_t> vertexes;
    std::vector<dedge_t> edges;
    std::vector<dsurfedge_t> surfedges;
    std::vector<dface_t> faces;
    std::vector<texinfo_t> texinfo;
    std::vector<dtexdata_t> texdata;
    std::vector<dtexdatastringtable_t> string_table;
    std::string string_data = std::string("TOOLS/TOOLSNODRAW") + '\0';
    std::vector<dnode_t> nodes;
    std::vector<dleaf_t> leafs;
    std::vector<dleafface_t> leaffaces;
    std::vector<dleafbrush_t> leafbrushes;
    std::vector<dbrush_t> brushes;
    std::vector<dbrushside_t> brushsides;
    std::vector<darea_t> areas;
    std::vector<dmodel_t> models;
    std::vector<ddispinfo_t> dispinfo;
    std::vector<dDispVert> disp_verts;
    std::vector<dDispTri> disp_tris;
    std::vector<Vector> vertnormals;
    std::vector<dvertnormalindex_t> vertnormalindices;
    std::vector<dworldlight_t> worldlights;
    Bytes lighting;
    Bytes visibility_le;  // built per order
    std::string entities = "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"func_brush\"\n\"model\" \"*0\"\n}\n";
    StaticPropsLump props;

    BoxMap() {
        for (int axis = 0; axis < 3; ++axis)
            for (int side = 0; side < 2; ++side) {
                dplane_t p{};
                float n[3] = {0, 0, 0};
                n[axis] = side ? -1.f : 1.f;
                p.normal = {n[0], n[1], n[2]};
                p.dist = side ? -256.f : -256.f;
                p.type = axis;
                planes.push_back(p);
            }
        for (int i = 0; i < 8; ++i)
            vertexes.push_back({{(i & 1) ? 256.f : -256.f, (i & 2) ? 256.f : -256.f, (i & 4) ? 256.f : 0.f}});
        edges.push_back({{0, 0}});  // edge 0 is never used
        for (int f = 0; f < 6; ++f)
            for (int k = 0; k < 4; ++k) {
                edges.push_back({{uint16_t((f + k) % 8), uint16_t((f + k + 1) % 8)}});
                surfedges.push_back({int32_t(edges.size() - 1) * (k % 2 ? -1 : 1)});
            }
        for (int f = 0; f < 6; ++f) {
            dface_t face{};
            face.planenum = uint16_t(f);
            face.firstedge = 4 * f;
            face.numedges = 4;
            face.texinfo = 0;
            face.dispinfo = -1;
            std::memset(face.styles, 255, sizeof face.styles);
            face.lightofs = -1;
            face.area = 512 * 512;
            face.LightmapTextureSizeInLuxels[0] = face.LightmapTextureSizeInLuxels[1] = 1;
            face.origFace = -1;
            faces.push_back(face);
        }
        faces[0].styles[0] = 0;
        faces[0].lightofs = 4;  // one average sample, then 2 x 2 luxels
        lighting.assign(4 + 2 * 2 * 4, 0x40);
        faces[5].dispinfo = 0;
        texinfo.push_back(texinfo_t{});
        texinfo[0].texdata = 0;
        texdata.push_back(dtexdata_t{{0.5f, 0.5f, 0.5f}, 0, 64, 64, 64, 64});
        string_table.push_back({0});
        nodes.push_back(dnode_t{0, {-2, -1}, {-256, -256, 0}, {256, 256, 256}, 0, 6, 1, 0});
        dleaf_t solid{};
        solid.contents = 1;
        solid.cluster = -1;
        solid.leafWaterDataID = -1;
        dleaf_t room{};
        room.cluster = 0;
        room.area_flags = 1;
        room.numleaffaces = 6;
        room.numleafbrushes = 1;
        room.leafWaterDataID = -1;
        leafs = {solid, room};
        for (uint16_t f = 0; f < 6; ++f) leaffaces.push_back({f});
        leafbrushes.push_back({0});
        brushes.push_back({0, 6, 1});
        for (uint16_t p = 0; p < 6; ++p) brushsides.push_back({p, 0, 0, 0});
        areas = {{0, 0}, {0, 0}};
        models.push_back(dmodel_t{{-256, -256, 0}, {256, 256, 256}, {0, 0, 0}, 0, 0, 6});
        ddispinfo_t d{};
        d.power = 2;
        d.MapFace = 5;
        for (auto& e : d.EdgeNeighbors)
            for (auto& s : e.m_SubNeighbors) s.m_iNeighbor = 0xffff;
        dispinfo.push_back(d);
        disp_verts.resize(25, dDispVert{{0, 0, 1}, 8.f, 0.f});
        disp_tris.resize(32, dDispTri{1});
        vertnormals.push_back({0, 0, 1});
        vertnormalindices.resize(24, dvertnormalindex_t{0});
        dworldlight_t light{};
        light.type = emit_point;
        light.cluster = 0;
        light.texinfo = -1;
        worldlights.push_back(light);

        props.format = detect_static_prop_format(10, 72, 20, true);
        props.names = {"models/bspkit/crate.mdl"};
        props.leaves = {1};
        StaticProp p;
        p.origin = {16, 32, 48};
        p.angles = {0, 90, 0};
        p.leaf_count = 1;
        p.solid = 6;
        p.flags = STATIC_PROP_FLAG_FADES;
        p.fade_min_dist = 100;
        p.fade_max_dist = 200;
        p.lightmap_res_x = p.lightmap_res_y = 32;
        props.props = {p};
    }

    template <class T>
    static Bytes enc(const std::vector<T>& v, ByteOrder order) {
        return encode_records<T>(std::span<const T>(v), order);
    }

    /// The map as a file in `order` (version 20, leaf and worldlight lumps version 1 / 0).
    Bytes build(ByteOrder order) const {
        Bsp bsp = Bsp::create(layouts::source(), 20, order);
        bsp.replace(lump::entities, Bytes(entities.begin(), entities.end()));
        bsp.replace(lump::planes, enc(planes, order));
        bsp.replace(lump::vertexes, enc(vertexes, order));
        bsp.replace(lump::edges, enc(edges, order));
        bsp.replace(lump::surfedges, enc(surfedges, order));
        bsp.replace(lump::faces, enc(faces, order));
        bsp.replace(lump::texinfo, enc(texinfo, order));
        bsp.replace(lump::texdata, enc(texdata, order));
        bsp.replace(lump::texdata_string_table, enc(string_table, order));
        bsp.replace(lump::texdata_string_data, Bytes(string_data.begin(), string_data.end()));
        bsp.replace(lump::nodes, enc(nodes, order));
        bsp.replace(lump::leafs, enc(leafs, order));
        bsp.replace(lump::leaffaces, enc(leaffaces, order));
        bsp.replace(lump::leafbrushes, enc(leafbrushes, order));
        bsp.replace(lump::brushes, enc(brushes, order));
        if (order == ByteOrder::big) {
            // Big-endian maps store bevel as a byte (see dbrushside_v21_t).
            std::vector<dbrushside_v21_t> sides;
            for (const auto& s : brushsides) sides.push_back({s.planenum, s.texinfo, s.dispinfo, uint8_t(s.bevel), 0});
            bsp.replace(lump::brushsides, enc(sides, order));
        } else {
            bsp.replace(lump::brushsides, enc(brushsides, order));
        }
        bsp.replace(lump::areas, enc(areas, order));
        bsp.replace(lump::models, enc(models, order));
        bsp.replace(lump::dispinfo, enc(dispinfo, order));
        bsp.replace(lump::disp_verts, enc(disp_verts, order));
        bsp.replace(lump::disp_tris, enc(disp_tris, order));
        bsp.replace(lump::vertnormals, enc(vertnormals, order));
        bsp.replace(lump::vertnormalindices, enc(vertnormalindices, order));
        bsp.replace(lump::worldlights, enc(worldlights, order));
        bsp.replace(lump::lighting, lighting);
        Bytes vis;
        append<int32_t>(vis, 1, order);
        append<int32_t>(vis, 12, order);
        append<int32_t>(vis, 13, order);
        vis.push_back(1);
        vis.push_back(1);
        bsp.replace(lump::visibility, vis);
        Bytes file = bsp.serialize();
        set_lump_version(file, lump::leafs, 1, order);
        // Lay the game lump out at its final offset.
        Bsp placed = Bsp::parse(file, "box");
        const int32_t base = placed.entry(lump::game_lump).offset;
        const Bytes sprp = encode_static_props(props, order);
        Bytes dir;
        append<int32_t>(dir, 1, order);
        append<uint32_t>(dir, GAMELUMP_STATIC_PROPS, order);
        append<uint16_t>(dir, 0, order);
        append<uint16_t>(dir, 10, order);
        append<int32_t>(dir, base + 20, order);
        append<int32_t>(dir, int32_t(sprp.size()), order);
        dir.insert(dir.end(), sprp.begin(), sprp.end());
        placed.replace(lump::game_lump, dir);
        return placed.serialize();
    }

    static void set_lump_version(Bytes& file, size_t lump, int32_t version, ByteOrder order) {
        store<int32_t>(file.data() + 8 + 16 * lump + 8, version, order);
    }
};

CheckReport check_bytes(const Bytes& file) { return check(Bsp::parse(file, "box.bsp")); }

std::string describe(const CheckReport& r) {
    std::string s;
    for (const Finding& f : r.findings)
        s += (f.severity == Severity::error ? "E " : "W ") + f.lump + "[" + std::to_string(f.record) + "]." + f.field + ": " +
             f.message + "\n";
    return s;
}

bool has_finding(const CheckReport& r, const std::string& lump, int64_t record, const std::string& field) {
    for (const Finding& f : r.findings)
        if (f.severity == Severity::error && f.lump == lump && f.record == record && f.field == field) return true;
    return false;
}

TEST(SourceCheck, BuiltBoxMapIsClean) {
    const BoxMap box;
    for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
        const CheckReport r = check_bytes(box.build(order));
        EXPECT_TRUE(r.findings.empty()) << (order == ByteOrder::big ? "big-endian:\n" : "little-endian:\n") << describe(r);
    }
}

TEST(SourceRecords, BigEndianDecodesToTheSameValues) {
    const BoxMap box;
    const Bsp le = Bsp::parse(box.build(ByteOrder::little), "le.bsp");
    const Bsp be = Bsp::parse(box.build(ByteOrder::big), "be.bsp");
    ASSERT_EQ(be.byte_order(), ByteOrder::big);
    const Map a(le), b(be);
    auto same = [](auto x, auto y, const char* what) {
        ASSERT_EQ(x.size(), y.size()) << what;
        ASSERT_FALSE(x.empty()) << what;
        EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size_bytes()), 0) << what;
    };
    same(a.planes(), b.planes(), "planes");
    same(a.vertexes(), b.vertexes(), "vertexes");
    same(a.edges(), b.edges(), "edges");
    same(a.surfedges(), b.surfedges(), "surfedges");
    same(a.faces(), b.faces(), "faces");
    same(a.texinfo(), b.texinfo(), "texinfo");
    same(a.texdata(), b.texdata(), "texdata");
    same(a.nodes(), b.nodes(), "nodes");
    same(a.leafs(), b.leafs(), "leafs");
    same(a.leaffaces(), b.leaffaces(), "leaffaces");
    same(a.brushes(), b.brushes(), "brushes");
    same(a.brushsides(), b.brushsides(), "brushsides");
    same(a.models(), b.models(), "models");
    same(a.dispinfo(), b.dispinfo(), "dispinfo");
    same(a.disp_verts(), b.disp_verts(), "disp_verts");
    same(a.worldlights(), b.worldlights(), "worldlights");
    EXPECT_EQ(a.vis().numclusters, b.vis().numclusters);
    EXPECT_EQ(a.vis().bitofs, b.vis().bitofs);
    EXPECT_EQ(a.texture_name(0), "TOOLS/TOOLSNODRAW");
    EXPECT_EQ(b.texture_name(0), "TOOLS/TOOLSNODRAW");
    // Spot values: the swap really happened.
    EXPECT_EQ(b.planes()[1].normal.x, -1.f);
    EXPECT_EQ(b.faces()[0].lightofs, 4);
    EXPECT_EQ(b.leafs()[1].area(), 1);
    EXPECT_EQ(b.nodes()[0].children[0], -2);
    EXPECT_EQ(b.dispinfo()[0].EdgeNeighbors[3].m_SubNeighbors[1].m_iNeighbor, 0xffff);
    const auto pa = read_static_props(le), pb = read_static_props(be);
    ASSERT_TRUE(pa && pb);
    ASSERT_EQ(pb->props.size(), 1u);
    EXPECT_EQ(pa->format.variant, pb->format.variant);
    EXPECT_EQ(pb->props[0].origin, (std::array<float, 3>{16, 32, 48}));
    EXPECT_EQ(pb->props[0].flags, STATIC_PROP_FLAG_FADES);
    EXPECT_EQ(pb->props[0].lightmap_res_x, 32);
    EXPECT_EQ(pb->names, pa->names);
    EXPECT_EQ(pb->leaves, pa->leaves);
}

TEST(SourceRecords, LayoutOfSaysWhichStructOrWhyRaw) {
    const BoxMap box;
    const Bsp bsp = Bsp::parse(box.build(ByteOrder::little), "box.bsp");
    const Map m(bsp);
    EXPECT_EQ(m.layout_of(lump::faces).record, "dface_t");
    EXPECT_EQ(m.layout_of(lump::leafs).record, "dleaf_t");  // lump version 1
    EXPECT_EQ(m.layout_of(lump::brushsides).record, "dbrushside_t");
    EXPECT_TRUE(m.layout_of(lump::physdisp).raw());
    EXPECT_FALSE(m.layout_of(lump::physdisp).note.empty());
    EXPECT_TRUE(m.layout_of(lump::pakfile).raw());
    // Fixed sizes agree with the container's table for every lump.
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const LumpLayout l = m.layout_of(i);
        if (l.raw() || l.size == 0) continue;
        EXPECT_EQ(l.size, bsp.record_size(i)) << "lump " << i << " " << l.record;
    }
    // Leaf lump version 0 selects the 56-byte leaf, version 1 worldlights the 100-byte one.
    Bytes file = box.build(ByteOrder::little);
    BoxMap::set_lump_version(file, lump::leafs, 0, ByteOrder::little);
    BoxMap::set_lump_version(file, lump::worldlights, 1, ByteOrder::little);
    const Bsp v0 = Bsp::parse(file, "v0.bsp");
    const Map m0(v0);
    EXPECT_EQ(m0.layout_of(lump::leafs).record, "dleaf_version_0_t");
    EXPECT_EQ(m0.layout_of(lump::leafs).size, v0.record_size(lump::leafs));
    EXPECT_EQ(m0.layout_of(lump::worldlights).size, 100u);
    EXPECT_EQ(v0.record_size(lump::worldlights), 100u);
}

// ---------------------------------------------------------------------------
// Injected defects
// ---------------------------------------------------------------------------

struct Injection {
    const char* name;
    std::function<void(BoxMap&)> mutate;
    std::string lump;
    int64_t record;
    std::string field;
};

TEST(SourceCheck, InjectedOutOfRangeIndicesAreNamed) {
    const std::vector<Injection> cases = {
        {"face plane", [](BoxMap& b) { b.faces[2].planenum = 6; }, "faces", 2, "planenum"},
        {"face edges", [](BoxMap& b) { b.faces[3].firstedge = 22; }, "faces", 3, "numedges"},
        {"face texinfo", [](BoxMap& b) { b.faces[1].texinfo = 1; }, "faces", 1, "texinfo"},
        {"face lightmap", [](BoxMap& b) { b.faces[0].LightmapTextureSizeInLuxels[0] = 2; }, "faces", 0, "lightofs"},
        {"face average samples", [](BoxMap& b) { b.faces[0].lightofs = 0; }, "faces", 0, "lightofs"},
        {"bumpmapped lightmap", [](BoxMap& b) { b.texinfo[0].flags = SURF_BUMPLIGHT; }, "faces", 0, "lightofs"},
        {"surfedge", [](BoxMap& b) { b.surfedges[5].edge = -25; }, "surfedges", 5, "edge"},
        {"edge vertex", [](BoxMap& b) { b.edges[7].v[1] = 8; }, "edges", 7, "v[1]"},
        {"texdata", [](BoxMap& b) { b.texinfo[0].texdata = 3; }, "texinfo", 0, "texdata"},
        {"string table", [](BoxMap& b) { b.texdata[0].nameStringTableID = 1; }, "texdata", 0, "nameStringTableID"},
        {"string offset", [](BoxMap& b) { b.string_table[0].offset = 400; }, "texdata_string_table", 0, "offset"},
        {"node plane", [](BoxMap& b) { b.nodes[0].planenum = -3; }, "nodes", 0, "planenum"},
        {"node leaf child", [](BoxMap& b) { b.nodes[0].children[0] = -3; }, "nodes", 0, "children[0]"},
        {"node cycle", [](BoxMap& b) { b.nodes[0].children[1] = 0; }, "nodes", 0, "children[1]"},
        {"leaf faces", [](BoxMap& b) { b.leafs[1].numleaffaces = 7; }, "leafs", 1, "numleaffaces"},
        {"leaf cluster", [](BoxMap& b) { b.leafs[1].cluster = 1; }, "leafs", 1, "cluster"},
        {"leaf area", [](BoxMap& b) { b.leafs[1].area_flags = 2; }, "leafs", 1, "area"},
        {"leafface", [](BoxMap& b) { b.leaffaces[4].face = 6; }, "leaffaces", 4, "face"},
        {"leafbrush", [](BoxMap& b) { b.leafbrushes[0].brush = 1; }, "leafbrushes", 0, "brush"},
        {"model headnode", [](BoxMap& b) { b.models[0].headnode = 1; }, "models", 0, "headnode"},
        {"model faces", [](BoxMap& b) { b.models[0].numfaces = 9; }, "models", 0, "numfaces"},
        {"brush sides", [](BoxMap& b) { b.brushes[0].firstside = 1; }, "brushes", 0, "numsides"},
        {"brush first side", [](BoxMap& b) { b.brushes[0].firstside = 7; }, "brushes", 0, "firstside"},
        {"face first edge", [](BoxMap& b) { b.faces[2].firstedge = -1; }, "faces", 2, "firstedge"},
        {"brushside plane", [](BoxMap& b) { b.brushsides[3].planenum = 60; }, "brushsides", 3, "planenum"},
        {"disp power", [](BoxMap& b) { b.dispinfo[0].power = 5; }, "dispinfo", 0, "power"},
        {"disp verts", [](BoxMap& b) { b.dispinfo[0].DispVertStart = 1; }, "dispinfo", 0, "DispVertStart"},
        {"disp tris", [](BoxMap& b) { b.disp_tris.resize(31); }, "dispinfo", 0, "DispTriStart"},
        {"disp face", [](BoxMap& b) { b.dispinfo[0].MapFace = 4; }, "dispinfo", 0, "MapFace"},
        {"disp back reference", [](BoxMap& b) { b.faces[4].dispinfo = 0; }, "faces", 4, "dispinfo"},
        {"disp neighbour", [](BoxMap& b) { b.dispinfo[0].EdgeNeighbors[2].m_SubNeighbors[0].m_iNeighbor = 1; },
         "dispinfo", 0, "EdgeNeighbors[2].m_SubNeighbors[0].m_iNeighbor"},
        {"vertnormal", [](BoxMap& b) { b.vertnormalindices[9].index = 1; }, "vertnormalindices", 9, "index"},
        {"worldlight cluster", [](BoxMap& b) { b.worldlights[0].cluster = 4; }, "worldlights", 0, "cluster"},
        {"entity model", [](BoxMap& b) { b.entities += "{\n\"classname\" \"func_door\"\n\"model\" \"*3\"\n}\n"; },
         "entities", 2, "model"},
        {"prop model", [](BoxMap& b) { b.props.props[0].prop_type = 1; }, "game_lump sprp", 0, "PropType"},
        {"prop leaf", [](BoxMap& b) { b.props.leaves[0] = 2; }, "game_lump sprp", 0, "leaf"},
        {"prop leaf range", [](BoxMap& b) { b.props.props[0].leaf_count = 2; }, "game_lump sprp", 0, "LeafCount"},
    };
    for (const Injection& c : cases) {
        BoxMap box;
        c.mutate(box);
        for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
            const CheckReport r = check_bytes(box.build(order));
            EXPECT_TRUE(has_finding(r, c.lump, c.record, c.field))
                << c.name << (order == ByteOrder::big ? " (big-endian)" : "") << ": expected " << c.lump << "["
                << c.record << "]." << c.field << ", got:\n"
                << describe(r);
        }
    }
}

TEST(SourceCheck, VisibilityOffsetsAndCountsAreChecked) {
    const BoxMap box;
    Bsp bsp = Bsp::parse(box.build(ByteOrder::little), "box.bsp");
    Bytes vis(bsp.decoded(lump::visibility).begin(), bsp.decoded(lump::visibility).end());
    store<int32_t>(vis.data() + 8, 99, ByteOrder::little);  // PAS offset past the end
    bsp.replace(lump::visibility, vis);
    EXPECT_TRUE(has_finding(check(bsp), "visibility", 0, "bitofs[DVIS_PAS]"));
    store<int32_t>(vis.data(), 0x10000000, ByteOrder::little);  // count far too large
    bsp.replace(lump::visibility, vis);
    const CheckReport r = check(bsp);
    EXPECT_TRUE(has_finding(r, "visibility", -1, "numclusters")) << describe(r);
}

TEST(SourceCheck, HugeCountsInVariableLumpsAreFindingsNotAllocations) {
    const BoxMap box;
    Bsp bsp = Bsp::parse(box.build(ByteOrder::little), "box.bsp");
    // Occlusion: an occluder count of two billion in a 12-byte lump.
    Bytes occ;
    append<int32_t>(occ, 0x7fffffff);
    append<int32_t>(occ, 0);
    append<int32_t>(occ, 0);
    bsp.replace(lump::occlusion, occ);
    // Physcollide: a model claiming more data than the lump holds.
    Bytes phys;
    append<int32_t>(phys, 0);
    append<int32_t>(phys, 0x7ffffff0);
    append<int32_t>(phys, 0);
    append<int32_t>(phys, 1);
    bsp.replace(lump::physcollide, phys);
    // Static props: a dictionary count of two billion.
    Bytes sprp;
    append<int32_t>(sprp, 0x7fffffff);
    bsp.replace_game_lump(0, sprp);
    const CheckReport r = check(bsp);
    EXPECT_TRUE(has_finding(r, "occlusion", -1, "")) << describe(r);
    EXPECT_TRUE(has_finding(r, "physcollide", -1, "")) << describe(r);
    EXPECT_TRUE(has_finding(r, "game_lump sprp", -1, "")) << describe(r);
}

TEST(SourceCheck, RepeatedFindingsAreCapped) {
    BoxMap box;
    box.edges.resize(5000, dedge_t{{9, 9}});
    const CheckReport r = check_bytes(box.build(ByteOrder::little));
    size_t edge_findings = 0;
    bool summary = false;
    for (const Finding& f : r.findings)
        if (f.lump == "edges") {
            ++edge_findings;
            summary = summary || f.record == -1;
        }
    EXPECT_GT(edge_findings, 1u);
    EXPECT_LT(edge_findings, 100u);
    EXPECT_TRUE(summary);
}

TEST(SourceCheck, RandomCorruptionNeverCrashes) {
    const BoxMap box;
    const Bytes clean = box.build(ByteOrder::little);
    std::mt19937 rng(12345);
    size_t parsed = 0, with_findings = 0;
    for (int round = 0; round < 400; ++round) {
        Bytes file = clean;
        const int flips = 1 + int(rng() % 16);
        for (int k = 0; k < flips; ++k) file[1036 + rng() % (file.size() - 1036)] = uint8_t(rng());
        if (round % 7 == 0) file.resize(1036 + rng() % (file.size() - 1036));  // truncation
        try {
            const Bsp bsp = Bsp::parse(file, "fuzz.bsp");
            ++parsed;
            const CheckReport r = check(bsp);
            if (!r.findings.empty()) ++with_findings;
            (void)read_static_props(bsp);
        } catch (const Error&) {
            // bad input may be refused: never a crash
        }
    }
    EXPECT_GT(parsed, 100u);
    EXPECT_GT(with_findings, 50u);
}

// ---------------------------------------------------------------------------
// Static props: every variant round-trips; detection by version and size
// ---------------------------------------------------------------------------

StaticPropsLump sample_props(StaticPropVariant v, uint16_t version) {
    StaticPropsLump l;
    l.format.version = version;
    l.format.variant = v;
    l.format.entry_size = static_prop_size(v);
    l.format.name = std::string(static_prop_variant_name(v));
    l.names = {"models/a.mdl", "models/b.mdl"};
    l.leaves = {3, 4, 5};
    for (int i = 0; i < 2; ++i) {
        StaticProp p;
        p.origin = {float(i), 2.5f, -7};
        p.angles = {1, 2, 3};
        p.prop_type = uint16_t(i);
        p.first_leaf = uint16_t(i);
        p.leaf_count = 2;
        p.solid = 6;
        p.flags = 0x41;
        p.skin = 2;
        p.fade_min_dist = 10;
        p.fade_max_dist = 20;
        p.lighting_origin = {4, 5, 6};
        p.forced_fade_scale = 0.5f;
        p.min_dx_level = 80, p.max_dx_level = 95;
        p.lightmap_res_x = 16, p.lightmap_res_y = 8;
        p.min_cpu_level = 1, p.max_cpu_level = 2, p.min_gpu_level = 3, p.max_gpu_level = 4;
        p.diffuse_modulation = {10, 20, 30, 40};
        p.disable_x360 = true;
        p.flags_ex = 7;
        p.scale = v == StaticPropVariant::v13 ? std::array<float, 3>{1, 2, 3} : std::array<float, 3>{2, 2, 2};
        l.props.push_back(p);
    }
    return l;
}

TEST(StaticProps, EveryVariantRoundTripsInBothByteOrders) {
    using V = StaticPropVariant;
    const struct {
        V variant;
        uint16_t version;
        int map_version;
        uint32_t size;
    } cases[] = {
        {V::v4, 4, 17, 56},        {V::v5, 5, 19, 60},        {V::v6, 6, 20, 64},       {V::v7_l4d, 7, 20, 68},
        {V::v7_2013, 7, 20, 72},   {V::v8, 8, 20, 68},        {V::v9, 9, 21, 72},       {V::v10_2013, 10, 20, 72},
        {V::v10_csgo, 10, 21, 76}, {V::v11_lite, 11, 20, 76}, {V::v11_bm, 11, 20, 80},  {V::v11_csgo, 11, 21, 80},
        {V::v12, 12, 21, 80},      {V::v13, 13, 21, 88},
    };
    for (const auto& c : cases) {
        EXPECT_EQ(static_prop_size(c.variant), c.size) << static_prop_variant_name(c.variant);
        const StaticPropsLump in = sample_props(c.variant, c.version);
        for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
            const Bytes bytes = encode_static_props(in, order);
            const StaticPropsLump out = decode_static_props(bytes, c.version, order, c.map_version, {"t", "sprp", 0});
            SCOPED_TRACE(std::string(static_prop_variant_name(c.variant)) + (order == ByteOrder::big ? " BE" : " LE"));
            EXPECT_EQ(out.format.variant, c.variant) << out.format.reason;
            EXPECT_EQ(out.format.entry_size, c.size);
            EXPECT_EQ(out.format.wide_leaves, c.version >= 12);
            EXPECT_EQ(out.names, in.names);
            EXPECT_EQ(out.leaves, in.leaves);
            ASSERT_EQ(out.props.size(), 2u);
            const StaticProp& p = out.props[1];
            EXPECT_EQ(p.origin, in.props[1].origin);
            EXPECT_EQ(p.prop_type, 1);
            EXPECT_EQ(p.leaf_count, 2);
            EXPECT_EQ(p.skin, 2);
            EXPECT_EQ(p.flags, 0x41u);
            EXPECT_EQ(p.lighting_origin, in.props[1].lighting_origin);
            const bool fade_scale = c.variant != V::v4;
            EXPECT_EQ(p.forced_fade_scale, fade_scale ? 0.5f : 1.f);
            const bool dx = c.variant == V::v6 || c.variant == V::v7_l4d || c.variant == V::v7_2013 ||
                            c.variant == V::v10_2013 || c.variant == V::v11_lite || c.variant == V::v11_bm;
            EXPECT_EQ(p.max_dx_level, dx ? 95 : 0);
            const bool cpu = c.variant == V::v8 || c.variant == V::v9 || c.variant == V::v10_csgo ||
                             c.variant == V::v11_csgo || c.variant == V::v12 || c.variant == V::v13;
            EXPECT_EQ(p.max_gpu_level, cpu ? 4 : 0);
            const bool x360 = cpu && c.variant != V::v8;
            EXPECT_EQ(p.disable_x360, x360);
            const bool scale = c.variant == V::v11_csgo || c.variant == V::v12 || c.variant == V::v13;
            EXPECT_EQ(p.scale, scale ? in.props[1].scale : (std::array<float, 3>{1, 1, 1}));
            // Encoding what was decoded gives the same bytes.
            EXPECT_EQ(encode_static_props(out, order), bytes);
        }
    }
}

TEST(StaticProps, VariantsSharingAVersionAreToldApartBySize) {
    EXPECT_EQ(detect_static_prop_format(7, 68, 20, true).variant, StaticPropVariant::v7_l4d);
    EXPECT_EQ(detect_static_prop_format(7, 72, 20, true).variant, StaticPropVariant::v7_2013);
    EXPECT_EQ(detect_static_prop_format(10, 72, 21, true).variant, StaticPropVariant::v10_2013);
    EXPECT_EQ(detect_static_prop_format(10, 76, 20, true).variant, StaticPropVariant::v10_csgo);
    EXPECT_EQ(detect_static_prop_format(11, 76, 21, true).variant, StaticPropVariant::v11_lite);
    EXPECT_EQ(detect_static_prop_format(11, 80, 21, true).variant, StaticPropVariant::v11_csgo);
    EXPECT_EQ(detect_static_prop_format(11, 80, 20, true).variant, StaticPropVariant::v11_bm);
    const StaticPropFormat none = detect_static_prop_format(10, 0, 21, false);
    EXPECT_EQ(none.variant, StaticPropVariant::v10_csgo);
    EXPECT_NE(none.reason.find("no props"), std::string::npos);
    const StaticPropFormat odd = detect_static_prop_format(10, 100, 20, true);
    EXPECT_EQ(odd.variant, StaticPropVariant::unknown);
    EXPECT_NE(odd.reason.find("100-byte"), std::string::npos);
}

TEST(StaticProps, UnknownLayoutsKeepTheirTailBytes) {
    StaticPropsLump in = sample_props(StaticPropVariant::v5, 5);
    Bytes bytes = encode_static_props(in, ByteOrder::little);
    // Grow each 60-byte entry to 100 bytes with a recognisable tail: version 5 knows no such size.
    Bytes grown(bytes.begin(), bytes.end() - 2 * 60);
    for (int i = 0; i < 2; ++i) {
        const auto* e = bytes.data() + bytes.size() - 2 * 60 + i * 60;
        grown.insert(grown.end(), e, e + 60);
        for (int k = 0; k < 40; ++k) grown.push_back(uint8_t(0xA0 + k));
    }
    StaticPropsLump out = decode_static_props(grown, 5, ByteOrder::little, 19, {"t", "sprp", 0});
    EXPECT_EQ(out.format.variant, StaticPropVariant::unknown);
    EXPECT_EQ(out.format.entry_size, 100u);
    EXPECT_EQ(out.props[1].origin, in.props[1].origin);
    EXPECT_EQ(encode_static_props(out, ByteOrder::little), grown);
    out.props[0].origin[2] = 99;
    const StaticPropsLump again = decode_static_props(encode_static_props(out, ByteOrder::little), 5, ByteOrder::little, 19,
                                                      {"t", "sprp", 0});
    EXPECT_EQ(again.props[0].origin[2], 99.f);
    EXPECT_EQ(again.props[0].stored.back(), 0xA0 + 39);
}

TEST(StaticProps, HostileLumpsThrowErrors) {
    const Location where{"t.bsp", "game_lump sprp", 100};
    auto expect_error = [&](const Bytes& b, const char* what) {
        EXPECT_THROW(decode_static_props(b, 6, ByteOrder::little, 20, where), Error) << what;
    };
    Bytes b;
    append<int32_t>(b, 0x7fffffff);
    expect_error(b, "huge dictionary");
    b.clear();
    append<int32_t>(b, -1);
    expect_error(b, "negative dictionary");
    b.clear();
    append<int32_t>(b, 0);
    append<int32_t>(b, 0x40000000);
    expect_error(b, "huge leaf list");
    b.clear();
    append<int32_t>(b, 0);
    append<int32_t>(b, 0);
    append<int32_t>(b, 3);
    b.resize(b.size() + 100, 0);
    expect_error(b, "100 bytes for 3 props");
    b.clear();
    append<int32_t>(b, 0);
    append<int32_t>(b, 0);
    append<int32_t>(b, 2);
    b.resize(b.size() + 80, 0);
    expect_error(b, "40-byte entries");
    b.clear();
    append<int32_t>(b, 0);
    expect_error(b, "no leaf count");
    // The error names the byte where it went wrong.
    try {
        Bytes t;
        append<int32_t>(t, 0);
        append<int32_t>(t, 0);
        append<int32_t>(t, -5);
        decode_static_props(t, 6, ByteOrder::little, 20, where);
        FAIL() << "negative prop count accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, 108);
        EXPECT_EQ(e.where().lump, "game_lump sprp");
    }
    // Encoding refuses values the variant cannot hold.
    StaticPropsLump l = sample_props(StaticPropVariant::v6, 6);
    l.leaves.push_back(70000);
    EXPECT_THROW(encode_static_props(l, ByteOrder::little), Error);
    l = sample_props(StaticPropVariant::v6, 6);
    l.props[0].flags = 0x100;
    EXPECT_THROW(encode_static_props(l, ByteOrder::little), Error);
    l = sample_props(StaticPropVariant::v11_csgo, 11);
    l.props[0].scale = {1, 2, 3};
    EXPECT_THROW(encode_static_props(l, ByteOrder::little), Error);
    l = sample_props(StaticPropVariant::v6, 6);
    l.names[0] = std::string(128, 'x');
    EXPECT_THROW(encode_static_props(l, ByteOrder::little), Error);
}

TEST(DetailProps, RoundTripAndOldVersions) {
    DetailPropsLump d;
    d.version = 4;
    d.models = {"models/grass.mdl"};
    d.sprites = {DetailSpriteDictLump_t{{0, 1}, {2, 3}, {0, 0}, {1, 1}}};
    DetailObjectLump_t o{};
    o.m_Origin = {1, 2, 3};
    o.m_DetailModel = 0;
    o.m_Leaf = 7;
    o.m_LightStyles = 0xffffffff;
    o.m_Type = DETAIL_PROP_TYPE_SPRITE;
    o.m_flScale = 1.5f;
    d.objects = {o, o};
    for (ByteOrder order : {ByteOrder::little, ByteOrder::big}) {
        const Bytes bytes = encode_detail_props(d, order);
        EXPECT_EQ(bytes.size(), 12u + 128 + 32 + 2 * 52);
        const DetailPropsLump back = decode_detail_props(bytes, 4, order, {"t", "dprp", 0});
        EXPECT_EQ(back.models, d.models);
        ASSERT_EQ(back.objects.size(), 2u);
        EXPECT_EQ(back.objects[1].m_Leaf, 7);
        EXPECT_EQ(back.objects[1].m_flScale, 1.5f);
        EXPECT_EQ(back.sprites[0].m_LR[1], 3.f);
        EXPECT_EQ(encode_detail_props(back, order), bytes);
    }
    // Version 2 (Bloodlines) is the old format the engine ignores: not decoded.
    Bytes old;
    append<int32_t>(old, 0);
    append<int32_t>(old, 0);
    EXPECT_THROW(decode_detail_props(old, 2, ByteOrder::little, {"t", "dprp", 0}), Error);
    Bytes lighting;
    append<int32_t>(lighting, 2);
    lighting.resize(4 + 10, 1);
    EXPECT_EQ(decode_detail_prop_lighting(lighting, ByteOrder::little, {"t", "dplt", 0}).size(), 2u);
    lighting.push_back(0);
    EXPECT_THROW(decode_detail_prop_lighting(lighting, ByteOrder::little, {"t", "dplt", 0}), Error);
}

TEST(SourceRecords, VariableLumpParsersRejectShortData) {
    const Location where{"t.bsp", "occlusion", 0};
    Bytes occ;
    append<int32_t>(occ, 1);
    occ.resize(4 + 40, 0);
    append<int32_t>(occ, 1);
    occ.resize(occ.size() + 12, 0);
    append<int32_t>(occ, 2);
    append<int32_t>(occ, 7);
    append<int32_t>(occ, 8);
    const Occlusion o = parse_occlusion(occ, ByteOrder::little, 1, where);
    EXPECT_EQ(o.occluders.size(), 1u);
    EXPECT_EQ(o.polys.size(), 1u);
    EXPECT_EQ(o.vertex_indices, (std::vector<int32_t>{7, 8}));
    // Version 0 occluders are 36 bytes: the same bytes do not parse as version 0.
    EXPECT_THROW(parse_occlusion(occ, ByteOrder::little, 0, where), Error);
    occ.resize(occ.size() - 1);
    EXPECT_THROW(parse_occlusion(occ, ByteOrder::little, 1, where), Error);
    Bytes vis;
    append<int32_t>(vis, 3);
    EXPECT_THROW(parse_vis_header(vis, ByteOrder::little, where), Error);
    Bytes phys;
    append<int32_t>(phys, 0);
    append<int32_t>(phys, 4);
    append<int32_t>(phys, 2);
    append<int32_t>(phys, 1);
    phys.resize(phys.size() + 6, 0);
    append<int32_t>(phys, -1);
    phys.resize(phys.size() + 12, 0);
    const auto models = parse_physcollide(phys, ByteOrder::little, where);
    ASSERT_EQ(models.size(), 1u);
    EXPECT_EQ(models[0].header.keydataSize, 2);
    phys.resize(18);
    EXPECT_THROW(parse_physcollide(phys, ByteOrder::little, where), Error);
}

}  // namespace
}  // namespace bspkit::source
