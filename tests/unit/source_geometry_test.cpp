// Source geometry on a map built here, where every expected value follows
// from how the map was made: polygons (a T-junction wall with a primitive, a
// fan with a collinear corner, a face with repeated corners), a bumpmapped
// two-style ceiling, a power-2 displacement whose start corner is not the
// first stored corner, vertex normals, tool materials, static props; the
// same map big-endian, HDR-only (L4D2 style) and console style (faces_hdr
// only); and broken or random input, which must throw bspkit::Error.
#include "model/builders.hpp"

#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>
#include <bspkit/model.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>

namespace bspkit::source {
namespace {

using model::Vec3;

constexpr uint32_t kBump = SURF_BUMPLIGHT;

Vector V(float x, float y, float z) { return {x, y, z}; }

/// The expected 8-bit value of one ColorRGBExp32 channel: linear
/// c * 2^e / 255, screen gamma 1/2.2, clamped (the documented tonemap).
uint8_t expected_channel(uint8_t c, int8_t e) {
    const double shown = std::min(1.0, std::pow(std::ldexp(double(c), e) / 255.0, 1 / 2.2));
    return uint8_t(std::lround(shown * 255));
}

struct GeoMap {
    std::vector<dplane_t> planes;
    std::vector<dvertex_t> vertexes;
    std::vector<dedge_t> edges{{{0, 0}}};  // edge 0 is never used by a surfedge
    std::vector<dsurfedge_t> surfedges;
    std::vector<dface_t> faces;
    std::vector<texinfo_t> texinfo;
    std::vector<dtexdata_t> texdata;
    std::vector<dtexdatastringtable_t> string_table;
    std::string string_data;
    std::vector<dmodel_t> models;
    std::vector<ddispinfo_t> dispinfo;
    std::vector<dDispVert> disp_verts;
    std::vector<dDispTri> disp_tris;
    std::vector<Vector> vertnormals;
    std::vector<dvertnormalindex_t> vertnormalindices;
    std::vector<dprimitive_t> primitives;
    std::vector<dprimindex_t> primindices;
    Bytes lighting;
    std::string entities =
        "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"func_brush\"\n\"model\" \"*1\"\n\"origin\" \"10 20 30\"\n}\n";
    StaticPropsLump props;

    // Face indices.
    static constexpr size_t kFloor = 0, kCeiling = 1, kPrimWall = 2, kFanWall = 3, kRepeated = 4, kDisp = 5,
                            kTrigger = 6, kNodraw = 7;

    int32_t add_name(const std::string& name) {
        string_table.push_back({int32_t(string_data.size())});
        string_data += name;
        string_data += '\0';
        return int32_t(string_table.size() - 1);
    }

    /// A face over `corners` (stored order) on plane `planenum`.
    dface_t& add_face(uint16_t planenum, int16_t texinfo_index, const std::vector<Vector>& corners) {
        dface_t f{};
        f.planenum = planenum;
        f.side = uint8_t(planenum & 1);
        f.onNode = 1;
        f.firstedge = int32_t(surfedges.size());
        f.numedges = int16_t(corners.size());
        f.texinfo = texinfo_index;
        f.dispinfo = -1;
        std::memset(f.styles, 255, sizeof f.styles);
        f.lightofs = -1;
        f.origFace = -1;
        const uint16_t first = uint16_t(vertexes.size());
        for (const Vector& c : corners) vertexes.push_back({c});
        // Alternate edge directions so both surfedge signs are exercised.
        for (size_t k = 0; k < corners.size(); ++k) {
            const uint16_t a = uint16_t(first + k), b = uint16_t(first + (k + 1) % corners.size());
            if (k % 2) {
                edges.push_back({{b, a}});
                surfedges.push_back({-int32_t(edges.size() - 1)});
            } else {
                edges.push_back({{a, b}});
                surfedges.push_back({int32_t(edges.size() - 1)});
            }
        }
        faces.push_back(f);
        return faces.back();
    }

    void add_plane(float x, float y, float z, float d) {
        planes.push_back({V(x, y, z), d, 0});
        planes.push_back({V(-x, -y, -z), -d, 0});
    }

    static void put(Bytes& b, uint8_t r, uint8_t g, uint8_t bl, int8_t e) {
        b.insert(b.end(), {r, g, bl, uint8_t(e)});
    }

    GeoMap() {
        add_plane(0, 0, 1, 0);    // 0 floor up, 1 down
        add_plane(0, 0, 1, 128);  // 2 up at z=128, 3 down (ceiling)
        add_plane(1, 0, 0, 0);    // 4 +x wall, 5
        add_plane(0, 0, 1, -64);  // 6 displacement base, 7
        add_plane(0, 1, 0, 0);    // 8 +y wall, 9

        texdata.push_back({V(.5f, .5f, .5f), add_name("BRICK/WALL01"), 64, 128, 64, 128});
        texdata.push_back({V(.5f, .5f, .5f), add_name("CONCRETE/FLOOR"), 128, 128, 128, 128});
        texdata.push_back({V(.5f, .5f, .5f), add_name("TOOLS/TOOLSTRIGGER"), 64, 64, 64, 64});
        texdata.push_back({V(.5f, .5f, .5f), add_name("maps/geo/tools/toolsnodraw_1_2_3"), 64, 64, 64, 64});
        auto tex = [&](int32_t td, uint32_t flags, float lscale) {
            texinfo_t t{};
            const float s[4] = {0.25f, 0, 0, 8}, tt[4] = {0, -0.25f, 0.125f, 16};
            std::copy_n(s, 4, t.textureVecs[0]);
            std::copy_n(tt, 4, t.textureVecs[1]);
            const float ls[4] = {lscale, 0, 0, 0.25f}, lt[4] = {0, lscale, 0, 0};
            std::copy_n(ls, 4, t.lightmapVecs[0]);
            std::copy_n(lt, 4, t.lightmapVecs[1]);
            t.flags = int32_t(flags);
            t.texdata = td;
            texinfo.push_back(t);
        };
        tex(0, 0, 1.f / 16);       // 0 lit brick
        tex(1, kBump, 1.f / 32);   // 1 bumpmapped concrete
        tex(2, 0x40, 1.f / 16);    // 2 trigger (SURF_TRIGGER)
        tex(3, SURF_NODRAW, 1.f / 16);  // 3 nodraw, cubemap-patched name

        // Floor: s = x/16 + 0.25 over 0..256 -> mins 0, extent 17 (18 luxels); t = y/16 -> 16 (17 luxels).
        {
            dface_t& f = add_face(0, 0, {V(0, 0, 0), V(0, 256, 0), V(256, 256, 0), V(256, 0, 0)});
            f.area = 256 * 256;
            f.styles[0] = 0;
            f.lightofs = 4;  // after the average sample
            f.LightmapTextureSizeInLuxels[0] = 17;
            f.LightmapTextureSizeInLuxels[1] = 16;
            put(lighting, 1, 2, 3, 0);  // average sample
            for (int k = 0; k < 18 * 17; ++k) put(lighting, uint8_t(k), uint8_t(k * 7), 200, int8_t(k % 5 - 2));
        }
        // Ceiling (plane 3, side 1), bumpmapped, two styles: 9 x 9 luxels.
        {
            dface_t& f = add_face(3, 1, {V(0, 0, 128), V(256, 0, 128), V(256, 256, 128), V(0, 256, 128)});
            f.area = 256 * 256;
            f.styles[0] = 0;
            f.styles[1] = 5;
            f.LightmapTextureSizeInLuxels[0] = 8;
            f.LightmapTextureSizeInLuxels[1] = 8;
            put(lighting, 9, 9, 9, 0);  // two average samples
            put(lighting, 9, 9, 9, 0);
            f.lightofs = int32_t(lighting.size());
            for (int style = 0; style < 2; ++style)
                for (int block = 0; block < 4; ++block)
                    for (int k = 0; k < 81; ++k) {
                        if (block == 0)
                            put(lighting, style ? 10 : 100, style ? 20 : 50, style ? 30 : 25, int8_t(style));
                        else
                            put(lighting, 250, 0, 0, 3);  // the bump vectors: never shown
                    }
        }
        // +x wall with a T-junction corner, drawn by a primitive (top bit set:
        // shadows disabled). Corners: P0 P1 T P2 P3.
        {
            dface_t& f = add_face(4, 0, {V(0, 0, 0), V(0, 0, 128), V(0, 128, 128), V(0, 256, 128), V(0, 256, 0)});
            f.area = 256 * 128;
            f.numPrims = 0x8001;
            f.firstPrimID = uint16_t(primitives.size());
            primitives.push_back({0, 0, uint16_t(primindices.size()), 9, 0, 0});
            for (uint16_t i : {0, 1, 2, 0, 2, 4, 2, 3, 4}) primindices.push_back({i});
        }
        // +y wall whose fan from corner 0 starts with a collinear triangle.
        {
            dface_t& f = add_face(8, 0, {V(0, 0, 0), V(128, 0, 0), V(256, 0, 0), V(256, 0, 128), V(0, 0, 128)});
            f.area = 256 * 128;
        }
        // Repeated corners a b c d c b: the fan repeats two triangles reversed.
        {
            const Vector a = V(300, 300, 128), b = V(300, 400, 128), c = V(400, 400, 128), d = V(400, 300, 128);
            add_face(2, 0, {a, b, c, d, c, b}).area = 100 * 100;
        }
        // Displacement: stored corners E0 E1 E2 E3, startPosition at E2.
        {
            dface_t& f = add_face(6, 0, {V(300, 0, -64), V(300, 64, -64), V(364, 64, -64), V(364, 0, -64)});
            f.area = 64 * 64;
            f.dispinfo = 0;
            f.styles[0] = 0;
            f.LightmapTextureSizeInLuxels[0] = 4;
            f.LightmapTextureSizeInLuxels[1] = 6;
            put(lighting, 0, 0, 0, 0);
            f.lightofs = int32_t(lighting.size());
            for (int k = 0; k < 5 * 7; ++k) put(lighting, 255, 128, 64, -1);
            ddispinfo_t d{};
            d.startPosition = V(364, 64, -64);
            d.power = 2;
            d.MapFace = uint16_t(kDisp);
            for (auto& e : d.EdgeNeighbors)
                for (auto& s : e.m_SubNeighbors) s.m_iNeighbor = 0xffff;
            dispinfo.push_back(d);
            for (int i = 0; i < 5; ++i)
                for (int j = 0; j < 5; ++j) disp_verts.push_back({V(0, 0, 1), 2.f * i + 0.5f * j + 1, float(10 * i + 3 * j)});
            disp_tris.resize(32, dDispTri{0});
        }
        // Brush model 1: a trigger face and a nodraw face, unlit.
        add_face(8, 2, {V(0, 0, 0), V(64, 0, 0), V(64, 0, 64), V(0, 0, 64)}).area = 64 * 64;
        add_face(8, 3, {V(0, 0, 64), V(64, 0, 64), V(64, 0, 128), V(0, 0, 128)}).area = 64 * 64;
        models.push_back({V(0, 0, -64), V(400, 400, 128), V(0, 0, 0), 0, 0, 6});
        models.push_back({V(0, 0, 0), V(64, 0, 128), V(0, 0, 0), 0, 6, 2});

        // One vertex normal per corner, faces in order.
        vertnormals = {V(0, 0, 1), V(0.6f, 0, 0.8f), V(0, 0, 0)};
        for (size_t fi = 0; fi < faces.size(); ++fi)
            for (int k = 0; k < faces[fi].numedges; ++k)
                vertnormalindices.push_back({uint16_t(fi == kFloor ? (k == 1 ? 1 : 0) : 2)});

        props.format = detect_static_prop_format(10, 72, 20, true);
        props.names = {"models/a.mdl", "models/b.mdl"};
        props.leaves = {0};
        for (int i = 0; i < 3; ++i) {
            StaticProp p;
            p.origin = {float(i), 2.f * i, 3.f * i};
            p.angles = {0, 90.f * i, 0};
            p.prop_type = uint16_t(i % 2);
            p.leaf_count = 1;
            p.skin = i;
            props.props.push_back(p);
        }
    }

    template <class T>
    static Bytes enc(const std::vector<T>& v, ByteOrder order) {
        return encode_records<T>(std::span<const T>(v), order);
    }

    enum class Lighting { ldr, hdr_paired, console };

    Bytes build(ByteOrder order = ByteOrder::little, Lighting mode = Lighting::ldr) const {
        Bsp bsp = Bsp::create(layouts::source(), 20, order);
        bsp.replace(lump::entities, Bytes(entities.begin(), entities.end()));
        bsp.replace(lump::planes, enc(planes, order));
        bsp.replace(lump::vertexes, enc(vertexes, order));
        bsp.replace(lump::edges, enc(edges, order));
        bsp.replace(lump::surfedges, enc(surfedges, order));
        bsp.replace(lump::texinfo, enc(texinfo, order));
        bsp.replace(lump::texdata, enc(texdata, order));
        bsp.replace(lump::texdata_string_table, enc(string_table, order));
        bsp.replace(lump::texdata_string_data, Bytes(string_data.begin(), string_data.end()));
        bsp.replace(lump::models, enc(models, order));
        bsp.replace(lump::dispinfo, enc(dispinfo, order));
        bsp.replace(lump::disp_verts, enc(disp_verts, order));
        bsp.replace(lump::disp_tris, enc(disp_tris, order));
        bsp.replace(lump::vertnormals, enc(vertnormals, order));
        bsp.replace(lump::vertnormalindices, enc(vertnormalindices, order));
        bsp.replace(lump::primitives, enc(primitives, order));
        bsp.replace(lump::primindices, enc(primindices, order));
        switch (mode) {
            case Lighting::ldr:
                bsp.replace(lump::faces, enc(faces, order));
                bsp.replace(lump::lighting, lighting);
                break;
            case Lighting::hdr_paired: {
                // Left 4 Dead 2 style: faces carry lightofs 0, faces_hdr the real ones.
                std::vector<dface_t> ldr = faces;
                for (dface_t& f : ldr) f.lightofs = 0;
                bsp.replace(lump::faces, enc(ldr, order));
                bsp.replace(lump::faces_hdr, enc(faces, order));
                bsp.replace(lump::lighting_hdr, lighting);
                break;
            }
            case Lighting::console:
                bsp.replace(lump::faces_hdr, enc(faces, order));
                bsp.replace(lump::lighting_hdr, lighting);
                break;
        }
        Bytes file = bsp.serialize();
        Bsp placed = Bsp::parse(file, "geo");
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
};

/// The builder's output before lightmap packing (images and in-image UVs).
model::Map build_raw(const Bytes& file, const model::BuildOptions& options = {}) {
    const Bsp bsp = Bsp::parse(file, "geo.bsp");
    model::Map map;
    map.format = bsp.format();
    build_model(bsp, options, map);
    return map;
}

const model::Surface& surface_of(const model::Map& map, int64_t face) {
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces)
            if (s.face == face) return s;
    throw std::runtime_error("no surface for face " + std::to_string(face));
}

double model_area(const model::Model& m) {
    double a = 0;
    for (const auto& s : m.surfaces) a += model::surface_area(s);
    return a;
}

Vec3 vec(const Vector& v) { return {v.x, v.y, v.z}; }

// ---------------------------------------------------------------------------

TEST(SourceGeometry, ModelsSurfacesPlanesAndWinding) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    ASSERT_EQ(map.models.size(), 2u);
    EXPECT_EQ(map.models[0].surfaces.size(), 6u);
    EXPECT_EQ(map.models[1].surfaces.size(), 2u);
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) {
            SCOPED_TRACE("face " + std::to_string(s.face));
            ASSERT_TRUE(s.plane);
            // The stored plane, unflipped: it is the face's own plane.
            const dplane_t& p = g.planes[g.faces[size_t(s.face)].planenum];
            EXPECT_EQ(s.plane->normal, vec(p.normal));
            EXPECT_EQ(s.plane->dist, p.dist);
            ASSERT_EQ(s.indices.size() % 3, 0u);
            for (size_t k = 0; k < s.indices.size(); k += 3) {
                const Vec3 a = s.vertices[s.indices[k]].position, b = s.vertices[s.indices[k + 1]].position,
                           c = s.vertices[s.indices[k + 2]].position;
                const Vec3 n = model::cross(b - a, c - a);
                EXPECT_GT(model::dot(n, s.plane->normal), 0) << "triangle " << k / 3 << " must wind CCW seen from the front";
                if (s.kind != model::SurfaceKind::displacement) {
                    for (const Vec3& v : {a, b, c}) EXPECT_NEAR(model::dot(v, s.plane->normal), s.plane->dist, 1e-3);
                }
            }
        }
    // Areas: every planar face covers exactly its polygon.
    EXPECT_NEAR(model::surface_area(surface_of(map, GeoMap::kFloor)), 65536, 1e-2);
    EXPECT_NEAR(model::surface_area(surface_of(map, GeoMap::kCeiling)), 65536, 1e-2);
    EXPECT_NEAR(model::surface_area(surface_of(map, GeoMap::kPrimWall)), 32768, 1e-2);
    EXPECT_NEAR(model::surface_area(surface_of(map, GeoMap::kFanWall)), 32768, 1e-2);
    EXPECT_NEAR(model::surface_area(surface_of(map, GeoMap::kRepeated)), 10000, 1e-2);
    EXPECT_NEAR(model_area(map.models[1]), 2 * 4096, 1e-2);
}

TEST(SourceGeometry, PrimitivesFansAndRepeatedCorners) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    // The primitive's triangles, as sets of corners.
    auto tri_sets = [](const model::Surface& s) {
        std::set<std::set<uint32_t>> out;
        for (size_t k = 0; k < s.indices.size(); k += 3) out.insert({s.indices[k], s.indices[k + 1], s.indices[k + 2]});
        return out;
    };
    const model::Surface& prim = surface_of(map, GeoMap::kPrimWall);
    EXPECT_EQ(prim.vertices.size(), 5u);
    EXPECT_EQ(tri_sets(prim), (std::set<std::set<uint32_t>>{{0, 1, 2}, {0, 2, 4}, {2, 3, 4}}));
    // The fan loses its collinear first triangle and keeps the rest.
    const model::Surface& fan = surface_of(map, GeoMap::kFanWall);
    EXPECT_EQ(tri_sets(fan), (std::set<std::set<uint32_t>>{{0, 2, 3}, {0, 3, 4}}));
    // Repeated corners: two triangles, not four.
    const model::Surface& rep = surface_of(map, GeoMap::kRepeated);
    EXPECT_EQ(rep.indices.size(), 6u);
}

TEST(SourceGeometry, TextureAndLightmapCoordinatesFollowTexinfo) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) {
            if (s.kind == model::SurfaceKind::displacement) continue;
            const dface_t& f = g.faces[size_t(s.face)];
            const texinfo_t& ti = g.texinfo[size_t(f.texinfo)];
            const dtexdata_t& td = g.texdata[size_t(ti.texdata)];
            for (const auto& v : s.vertices) {
                const Vec3 p = v.position;
                auto axis = [&](const float (&a)[4]) { return a[0] * p.x + a[1] * p.y + a[2] * p.z + a[3]; };
                EXPECT_NEAR(v.uv.x, axis(ti.textureVecs[0]) / td.width, 1e-5);
                EXPECT_NEAR(v.uv.y, axis(ti.textureVecs[1]) / td.height, 1e-5);
                if (s.lightmap < 0) continue;
                EXPECT_NEAR(v.lightmap_uv.x,
                            (axis(ti.lightmapVecs[0]) - f.LightmapTextureMinsInLuxels[0] + 0.5) /
                                (f.LightmapTextureSizeInLuxels[0] + 1),
                            1e-5);
                EXPECT_NEAR(v.lightmap_uv.y,
                            (axis(ti.lightmapVecs[1]) - f.LightmapTextureMinsInLuxels[1] + 0.5) /
                                (f.LightmapTextureSizeInLuxels[1] + 1),
                            1e-5);
                EXPECT_GT(v.lightmap_uv.x, 0);
                EXPECT_LT(v.lightmap_uv.x, 1);
            }
        }
    // The floor's corner (256, 256): s = 16.25 -> (16.25 + 0.5) / 18.
    const model::Surface& floor = surface_of(map, GeoMap::kFloor);
    EXPECT_NEAR(floor.vertices[2].lightmap_uv.x, 16.75 / 18, 1e-6);
    EXPECT_NEAR(floor.vertices[2].lightmap_uv.y, 16.5 / 17, 1e-6);
}

TEST(SourceGeometry, VertexNormalsComeFromTheNormalLumps) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    const model::Surface& floor = surface_of(map, GeoMap::kFloor);
    EXPECT_EQ(floor.vertices[0].normal, (Vec3{0, 0, 1}));
    EXPECT_NEAR(floor.vertices[1].normal.x, 0.6, 1e-6);
    EXPECT_NEAR(floor.vertices[1].normal.z, 0.8, 1e-6);
    // A zero normal falls back to the plane.
    const model::Surface& wall = surface_of(map, GeoMap::kPrimWall);
    for (const auto& v : wall.vertices) EXPECT_EQ(v.normal, (Vec3{1, 0, 0}));
    const model::Surface& ceiling = surface_of(map, GeoMap::kCeiling);
    for (const auto& v : ceiling.vertices) EXPECT_EQ(v.normal, (Vec3{0, 0, -1}));
}

TEST(SourceGeometry, MaterialsNamesSizesAndFlags) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    auto mat = [&](size_t face) { return map.materials[surface_of(map, int64_t(face)).material]; };
    EXPECT_EQ(mat(GeoMap::kFloor).name, "BRICK/WALL01");
    EXPECT_EQ(mat(GeoMap::kFloor).width, 64u);
    EXPECT_EQ(mat(GeoMap::kFloor).height, 128u);
    EXPECT_EQ(mat(GeoMap::kFloor).flags, 0u);
    EXPECT_EQ(surface_of(map, GeoMap::kFloor).material, surface_of(map, GeoMap::kFanWall).material);
    EXPECT_EQ(mat(GeoMap::kCeiling).name, "CONCRETE/FLOOR");
    EXPECT_EQ(mat(GeoMap::kTrigger).flags, uint32_t(model::kTrigger | model::kNodraw));
    EXPECT_EQ(mat(GeoMap::kNodraw).name, "maps/geo/tools/toolsnodraw_1_2_3");
    EXPECT_EQ(mat(GeoMap::kNodraw).flags, uint32_t(model::kNodraw));
    EXPECT_EQ(map.materials.size(), 4u);
}

TEST(SourceGeometry, DisplacementGridStartCornerTrianglesAndAttributes) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    const model::Surface& s = surface_of(map, GeoMap::kDisp);
    EXPECT_EQ(s.kind, model::SurfaceKind::displacement);
    ASSERT_EQ(s.vertices.size(), 25u);
    ASSERT_EQ(s.indices.size(), 32u * 3);
    // The grid starts at startPosition (E2 = (364, 64)); i runs towards E3,
    // j towards E1. Every vertex is the flat point raised by its dispvert.
    const Vec3 p0{364, 64, -64}, p1{364, 0, -64}, p3{300, 64, -64};
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
            const model::Vertex& v = s.vertices[size_t(i * 5 + j)];
            const Vec3 flat = p0 + (p1 - p0) * (i / 4.f) + (p3 - p0) * (j / 4.f);
            const float dist = 2.f * i + 0.5f * j + 1;
            EXPECT_NEAR(v.position.x, flat.x, 1e-4);
            EXPECT_NEAR(v.position.y, flat.y, 1e-4);
            EXPECT_NEAR(v.position.z, flat.z + dist, 1e-4);
            EXPECT_EQ(v.color[3], uint8_t(10 * i + 3 * j));
            // Texture coordinates of the flat point.
            EXPECT_NEAR(v.uv.x, (0.25 * flat.x + 8) / 64, 1e-5);
            EXPECT_NEAR(v.uv.y, (-0.25 * flat.y + 0.125 * flat.z + 16) / 128, 1e-5);
            // Lightmap: j across the 5 luxels of the width, i down the 7 of the height.
            EXPECT_NEAR(v.lightmap_uv.x, (j / 4.0 * 4 + 0.5) / 5, 1e-6);
            EXPECT_NEAR(v.lightmap_uv.y, (i / 4.0 * 6 + 0.5) / 7, 1e-6);
            EXPECT_NEAR(model::length(v.normal), 1, 1e-5);
            EXPECT_GT(v.normal.z, 0.5);
        }
    // The engine's alternating diagonals: quad 0 (even) splits 0-6, quad 1 (odd) 2-6.
    auto has_edge = [&](uint32_t a, uint32_t b) {
        for (size_t k = 0; k < s.indices.size(); k += 3)
            for (int e = 0; e < 3; ++e) {
                const uint32_t x = s.indices[k + size_t(e)], y = s.indices[k + size_t(e + 1) % 3];
                if ((x == a && y == b) || (x == b && y == a)) return true;
            }
        return false;
    };
    EXPECT_TRUE(has_edge(0, 6));
    EXPECT_FALSE(has_edge(1, 5));
    EXPECT_TRUE(has_edge(2, 6));
    EXPECT_FALSE(has_edge(1, 7));
    EXPECT_TRUE(has_edge(6, 12));   // quad 6 (row 1, column 1): even
    EXPECT_TRUE(has_edge(6, 10));   // quad 5 (row 1, column 0): odd
    // No triangle is listed twice.
    std::set<std::set<uint32_t>> seen;
    for (size_t k = 0; k < s.indices.size(); k += 3)
        EXPECT_TRUE(seen.insert({s.indices[k], s.indices[k + 1], s.indices[k + 2]}).second);
}

TEST(SourceGeometry, LightmapImagesStylesBumpAndTonemap) {
    const GeoMap g;
    const model::Map map = build_raw(g.build());
    EXPECT_EQ(map.lightmap_source, "lighting");
    ASSERT_EQ(map.lightmap_images.size(), 3u);  // floor, ceiling, displacement
    const model::Surface& floor = surface_of(map, GeoMap::kFloor);
    ASSERT_GE(floor.lightmap, 0);
    const model::LightmapImage& fi = map.lightmap_images[size_t(floor.lightmap)];
    EXPECT_EQ(fi.width, 18u);
    EXPECT_EQ(fi.height, 17u);
    ASSERT_EQ(fi.styles.size(), 1u);
    for (int k = 0; k < 18 * 17; ++k) {
        const int8_t e = int8_t(k % 5 - 2);
        ASSERT_EQ(fi.styles[0][size_t(3 * k)], expected_channel(uint8_t(k), e)) << k;
        ASSERT_EQ(fi.styles[0][size_t(3 * k + 1)], expected_channel(uint8_t(k * 7), e)) << k;
        ASSERT_EQ(fi.styles[0][size_t(3 * k + 2)], expected_channel(200, e)) << k;
    }
    EXPECT_EQ(floor.styles, (std::array<uint8_t, 4>{0, 255, 255, 255}));
    // Bumpmapped, two styles: the flat block of each style, never the bump vectors.
    const model::Surface& ceiling = surface_of(map, GeoMap::kCeiling);
    EXPECT_EQ(ceiling.styles, (std::array<uint8_t, 4>{0, 5, 255, 255}));
    const model::LightmapImage& ci = map.lightmap_images[size_t(ceiling.lightmap)];
    EXPECT_EQ(ci.width, 9u);
    EXPECT_EQ(ci.height, 9u);
    ASSERT_EQ(ci.styles.size(), 2u);
    for (size_t k = 0; k < 81; ++k) {
        EXPECT_EQ(ci.styles[0][3 * k], expected_channel(100, 0));
        EXPECT_EQ(ci.styles[0][3 * k + 1], expected_channel(50, 0));
        EXPECT_EQ(ci.styles[1][3 * k], expected_channel(10, 1));
        EXPECT_EQ(ci.styles[1][3 * k + 2], expected_channel(30, 1));
    }
    // Bright samples saturate: 255 * 2^-1 / 255 = 0.5 -> 186; 255 * 2^3 clamps.
    const model::LightmapImage& di = map.lightmap_images[size_t(surface_of(map, GeoMap::kDisp).lightmap)];
    EXPECT_EQ(di.width, 5u);
    EXPECT_EQ(di.height, 7u);
    EXPECT_EQ(di.styles[0][0], expected_channel(255, -1));
    EXPECT_EQ(expected_channel(250, 3), 255);
    // Unlit faces have no image.
    EXPECT_EQ(surface_of(map, GeoMap::kFanWall).lightmap, -1);
    // Without lightmaps nothing is decoded.
    model::BuildOptions no_light;
    no_light.lightmaps = false;
    const model::Map bare = build_raw(g.build(), no_light);
    EXPECT_TRUE(bare.lightmap_images.empty());
    EXPECT_TRUE(bare.lightmap_source.empty());
    for (const auto& m : bare.models)
        for (const auto& s : m.surfaces) EXPECT_EQ(s.lightmap, -1);
}

TEST(SourceGeometry, BuildPacksAtlasesPlacesModelsAndReadsProps) {
    const GeoMap g;
    const Bsp bsp = Bsp::parse(g.build(), "geo.bsp");
    const model::Map map = model::build(bsp);
    ASSERT_EQ(map.lightmaps.size(), 2u);  // the ceiling has a second style, 5
    EXPECT_EQ(map.lightmaps[0].style, 0u);
    EXPECT_EQ(map.lightmaps[1].style, 5u);
    EXPECT_TRUE(map.lightmap_images.empty());
    // A floor luxel seen through the atlas: the vertex at (0, 0) samples luxel (0, 0).
    const model::Surface& floor = surface_of(map, GeoMap::kFloor);
    const model::Vertex& v = floor.vertices[0];
    const auto& atlas = map.lightmaps[0];
    const size_t x = size_t(v.lightmap_uv.x * float(atlas.width)), y = size_t(v.lightmap_uv.y * float(atlas.height));
    EXPECT_EQ(atlas.rgb[(y * atlas.width + x) * 3 + 2], expected_channel(200, -2));
    // Brush model 1 is placed by its entity.
    EXPECT_EQ(map.models[1].origin, (Vec3{10, 20, 30}));
    EXPECT_EQ(map.models[1].entity, 1);
    // Static props.
    ASSERT_EQ(map.props.size(), 3u);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(map.props[size_t(i)].model, i % 2 ? "models/b.mdl" : "models/a.mdl");
        EXPECT_EQ(map.props[size_t(i)].origin, (Vec3{float(i), 2.f * i, 3.f * i}));
        EXPECT_EQ(map.props[size_t(i)].angles.y, 90.f * i);
        EXPECT_EQ(map.props[size_t(i)].skin, i);
    }
    // World only.
    model::BuildOptions world;
    world.all_models = false;
    EXPECT_EQ(model::build(bsp, world).models.size(), 1u);
}

void expect_same_geometry(const model::Map& a, const model::Map& b) {
    ASSERT_EQ(a.models.size(), b.models.size());
    for (size_t m = 0; m < a.models.size(); ++m) {
        ASSERT_EQ(a.models[m].surfaces.size(), b.models[m].surfaces.size());
        for (size_t s = 0; s < a.models[m].surfaces.size(); ++s) {
            const auto& x = a.models[m].surfaces[s];
            const auto& y = b.models[m].surfaces[s];
            EXPECT_EQ(x.indices, y.indices);
            ASSERT_EQ(x.vertices.size(), y.vertices.size());
            for (size_t k = 0; k < x.vertices.size(); ++k) {
                EXPECT_EQ(x.vertices[k].position, y.vertices[k].position);
                EXPECT_EQ(x.vertices[k].uv, y.vertices[k].uv);
                EXPECT_EQ(x.vertices[k].lightmap_uv, y.vertices[k].lightmap_uv);
                EXPECT_EQ(x.vertices[k].normal, y.vertices[k].normal);
                EXPECT_EQ(x.vertices[k].color, y.vertices[k].color);
            }
            EXPECT_EQ(x.lightmap, y.lightmap);
            EXPECT_EQ(x.styles, y.styles);
        }
    }
    ASSERT_EQ(a.lightmap_images.size(), b.lightmap_images.size());
    for (size_t i = 0; i < a.lightmap_images.size(); ++i) EXPECT_EQ(a.lightmap_images[i].styles, b.lightmap_images[i].styles);
    ASSERT_EQ(a.props.size(), b.props.size());
}

TEST(SourceGeometry, BigEndianHdrPairedAndConsoleFilesGiveTheSameModel) {
    const GeoMap g;
    const model::Map ldr = build_raw(g.build());
    const model::Map big = build_raw(g.build(ByteOrder::big));
    expect_same_geometry(ldr, big);
    const model::Map paired = build_raw(g.build(ByteOrder::little, GeoMap::Lighting::hdr_paired));
    EXPECT_EQ(paired.lightmap_source, "lighting_hdr");
    expect_same_geometry(ldr, paired);
    const model::Map console = build_raw(g.build(ByteOrder::big, GeoMap::Lighting::console));
    EXPECT_EQ(console.lightmap_source, "lighting_hdr");
    expect_same_geometry(ldr, console);
}

// ---------------------------------------------------------------------------
// Broken input
// ---------------------------------------------------------------------------

/// Builds a broken variant of the map and expects an Error naming `lump`.
void expect_error(const std::function<void(GeoMap&)>& breakit, const std::string& lump, const std::string& words) {
    GeoMap g;
    breakit(g);
    try {
        build_raw(g.build());
        ADD_FAILURE() << "no error (expected one in " << lump << ")";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, lump) << e.what();
        EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
}

TEST(SourceGeometry, BrokenReferencesAreErrorsNamingTheLump) {
    expect_error([](GeoMap& g) { g.models[1].numfaces = 100; }, "models", "run past");
    expect_error([](GeoMap& g) { g.faces[2].planenum = 999; }, "faces", "planenum 999");
    expect_error([](GeoMap& g) { g.faces[3].numedges = 2; }, "faces", "numedges 2");
    expect_error([](GeoMap& g) { g.faces[3].firstedge = 1 << 30; }, "faces", "surfedges");
    expect_error([](GeoMap& g) { g.surfedges[5].edge = -5000; }, "surfedges", "edge -5000");
    expect_error([](GeoMap& g) { g.edges[2].v[1] = 60000; }, "edges", "vertex 60000");
    expect_error([](GeoMap& g) { g.faces[0].texinfo = 77; }, "faces", "texinfo 77");
    expect_error([](GeoMap& g) { g.texinfo[1].texdata = 9; }, "texinfo", "texdata 9");
    expect_error([](GeoMap& g) { g.string_table[0].offset = 1 << 20; }, "texdata", "nameStringTableID");
    expect_error([](GeoMap& g) { g.faces[GeoMap::kDisp].dispinfo = 4; }, "faces", "dispinfo 4");
    expect_error([](GeoMap& g) { g.dispinfo[0].power = 9; }, "dispinfo", "power 9");
    expect_error([](GeoMap& g) { g.dispinfo[0].DispVertStart = 2; }, "dispinfo", "DispVertStart");
    expect_error([](GeoMap& g) { g.faces[GeoMap::kPrimWall].firstPrimID = 40; }, "faces", "firstPrimID 40");
    expect_error([](GeoMap& g) { g.primitives[0].indexCount = 900; }, "primitives", "primindices");
    expect_error([](GeoMap& g) { g.primindices[4].index = 7; }, "primindices", "index 7");
    expect_error([](GeoMap& g) { g.faces[0].lightofs = int32_t(g.lighting.size()) - 8; }, "faces", "runs past the end");
    expect_error([](GeoMap& g) { g.faces[0].lightofs = -7; }, "faces", "negative");
    expect_error([](GeoMap& g) { g.faces[0].LightmapTextureSizeInLuxels[1] = -3; }, "faces", "negative lightmap size");
    // A huge lightmap is refused by size, before anything is allocated.
    expect_error(
        [](GeoMap& g) {
            g.faces[1].LightmapTextureSizeInLuxels[0] = 2000000000;
            g.faces[1].LightmapTextureSizeInLuxels[1] = 2000000000;
        },
        "faces", "runs past the end");
    expect_error(
        [](GeoMap& g) {
            g.faces[GeoMap::kDisp].numedges = 3;
            g.faces[GeoMap::kDisp].firstedge = g.faces[GeoMap::kFanWall].firstedge;
        },
        "faces", "not 4");
    expect_error([](GeoMap& g) { g.props.props[2].prop_type = 5; }, "game_lump sprp", "PropType 5");
}

TEST(SourceGeometry, BadVertexNormalCountsFallBackToPlanes) {
    GeoMap g;
    g.vertnormalindices.pop_back();  // `bspkit check` reports the count
    const model::Map map = build_raw(g.build());
    for (const auto& v : surface_of(map, GeoMap::kFloor).vertices) EXPECT_EQ(v.normal, (Vec3{0, 0, 1}));
}

TEST(SourceGeometry, RandomCorruptionIsAnErrorOrAModelNeverACrash) {
    const GeoMap g;
    const Bytes good = g.build();
    std::mt19937 rng(1234);
    size_t built = 0, refused = 0;
    for (int round = 0; round < 400; ++round) {
        Bytes file = good;
        const int flips = 1 + int(rng() % 8);
        for (int k = 0; k < flips; ++k) file[rng() % file.size()] ^= uint8_t(1u << (rng() % 8));
        if (round % 10 == 0) file.resize(rng() % file.size());
        try {
            const Bsp bsp = Bsp::parse(file, "corrupt.bsp");
            const model::Map map = model::build(bsp);
            for (const auto& m : map.models)
                for (const auto& s : m.surfaces)
                    for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size());
            ++built;
        } catch (const Error&) {
            ++refused;
        }
    }
    EXPECT_EQ(built + refused, 400u);
    EXPECT_GT(built, 0u);
    EXPECT_GT(refused, 0u);
}

}  // namespace
}  // namespace bspkit::source
