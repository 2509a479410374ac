// Small, fully consistent maps of the Quake-family formats, built from typed
// records by the tests themselves: a 128 x 128 x 128 box room (6 faces,
// 1 node, a solid and an empty leaf, one brush, lightmaps sized by each
// format's rule, a visibility row where the leaf sees itself). Each builder
// keeps its records in vectors, so a test can break one field and rebuild.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/records.hpp>

#include "samples.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace bspkit::testmaps {

inline constexpr float kMin[3] = {-64, -64, 0}, kMax[3] = {64, 64, 128};

/// Box corner i: bit k chooses min / max on axis k.
inline std::array<float, 3> corner(int i) {
    return {(i & 1) ? kMax[0] : kMin[0], (i & 2) ? kMax[1] : kMin[1], (i & 4) ? kMax[2] : kMin[2]};
}

/// Face f of the box (axis f / 2, min side when f is even): its 4 corners and its texture axes.
struct BoxFace {
    int corners[4];
    float normal[3];
    float dist;
    float s[4], t[4];  ///< texture axes (1 texel per unit)
};

inline std::vector<BoxFace> box_faces() {
    std::vector<BoxFace> out;
    for (int f = 0; f < 6; ++f) {
        const int axis = f / 2, hi = f & 1;
        BoxFace bf{};
        int n = 0;
        for (int i = 0; i < 8; ++i)
            if (((i >> axis) & 1) == hi) bf.corners[n++] = i;
        std::swap(bf.corners[2], bf.corners[3]);  // a loop, not a zig-zag
        bf.normal[axis] = hi ? -1.0f : 1.0f;      // pointing into the room
        bf.dist = hi ? -kMax[axis] : kMin[axis];
        const int u = axis == 0 ? 1 : 0, v = axis == 2 ? 1 : 2;
        bf.s[u] = 1;
        bf.t[v] = -1;
        out.push_back(bf);
    }
    return out;
}

/// Lightmap samples of a box face by the 16-texel rule: 128 units -> 9 samples each way.
inline constexpr int kSamplesPerFace = 9 * 9;

inline Bytes text(std::string_view s) {
    Bytes out(s.size() + 1, 0);  // the text, then its NUL
    std::copy(s.begin(), s.end(), out.begin());
    return out;
}
inline const std::string_view kEntities = "{\n\"classname\" \"worldspawn\"\n}\n";

template <class T>
Bytes enc(const std::vector<T>& v) {
    return encode_records<T>(std::span<const T>(v), ByteOrder::little);
}

inline void put_lump(std::vector<Bytes>& lumps, const FormatLayout& layout, std::string_view name, Bytes bytes) {
    lumps.at(*layout.find_lump(name)) = std::move(bytes);
}

// ---------------------------------------------------------------------------
// Quake 1 / BSP2 / 2PSB / GoldSrc

template <class Types>
struct Quake1Map {
    bool goldsrc = false;
    std::vector<quake1::dplane_t> planes;
    std::vector<quake1::dvertex_t> vertexes;
    std::vector<typename Types::node> nodes;
    std::vector<quake1::texinfo_t> texinfo;
    std::vector<typename Types::face> faces;
    std::vector<typename Types::clipnode> clipnodes;
    std::vector<typename Types::leaf> leafs;
    std::vector<typename Types::marksurface> marksurfaces;
    std::vector<typename Types::edge> edges;
    std::vector<quake1::dsurfedge_t> surfedges;
    std::vector<quake1::dmodel_t> models;
    Bytes textures, visibility, lighting, entities = text(kEntities);

    explicit Quake1Map(bool gold) : goldsrc(gold) {
        const int bps = goldsrc ? 3 : 1;
        for (int i = 0; i < 8; ++i) {
            const auto c = corner(i);
            vertexes.push_back({{c[0], c[1], c[2]}});
        }
        edges.push_back({});  // edge 0 is never used
        const auto box = box_faces();
        for (int f = 0; f < 6; ++f) {
            const BoxFace& bf = box[size_t(f)];
            planes.push_back({{bf.normal[0], bf.normal[1], bf.normal[2]}, bf.dist, f / 2});
            quake1::texinfo_t ti{};
            std::memcpy(ti.vecs[0], bf.s, sizeof bf.s);
            std::memcpy(ti.vecs[1], bf.t, sizeof bf.t);
            texinfo.push_back(ti);
            typename Types::face face{};
            face.planenum = f;
            face.firstedge = int32_t(surfedges.size());
            face.numedges = 4;
            face.texinfo = f;
            face.styles[0] = 0;
            face.styles[1] = face.styles[2] = face.styles[3] = 255;
            face.lightofs = f * kSamplesPerFace * bps;
            for (int k = 0; k < 4; ++k) {
                typename Types::edge e{};
                e.v[0] = std::remove_reference_t<decltype(e.v[0])>(bf.corners[k]);
                e.v[1] = std::remove_reference_t<decltype(e.v[1])>(bf.corners[(k + 1) % 4]);
                surfedges.push_back({int32_t(edges.size())});
                edges.push_back(e);
            }
            faces.push_back(face);
            marksurfaces.push_back({decltype(marksurfaces[0].face)(f)});
        }
        typename Types::node node{};
        node.planenum = 0;
        node.children[0] = -2;  // leaf 1
        node.children[1] = -1;  // leaf 0
        node.firstface = 0;
        node.numfaces = 6;
        nodes.push_back(node);
        typename Types::clipnode clip{};
        clip.planenum = 0;
        clip.children[0] = quake1::CONTENTS_EMPTY;
        clip.children[1] = quake1::CONTENTS_SOLID;
        clipnodes.push_back(clip);
        typename Types::leaf solid{}, room{};
        solid.contents = quake1::CONTENTS_SOLID;
        solid.visofs = -1;
        room.contents = quake1::CONTENTS_EMPTY;
        room.visofs = 0;
        room.firstmarksurface = 0;
        room.nummarksurfaces = 6;
        leafs = {solid, room};
        quake1::dmodel_t model{};
        for (int k = 0; k < 3; ++k) {
            model.mins[k] = kMin[k];
            model.maxs[k] = kMax[k];
        }
        model.visleafs = 1;
        model.numfaces = 6;
        models.push_back(model);
        visibility = {0x01};  // leaf 1 sees leaf 1
        lighting.assign(size_t(6 * kSamplesPerFace * bps), 0x80);
        // Miptex directory with one embedded 16 x 16 texture (GoldSrc: + palette).
        append<int32_t>(textures, 1);
        append<int32_t>(textures, 8);
        quake1::miptex_t mt{};
        std::memcpy(mt.name, "bspkit_grey", 11);
        mt.width = mt.height = 16;
        mt.offsets[0] = 40;
        mt.offsets[1] = 40 + 256;
        mt.offsets[2] = 40 + 256 + 64;
        mt.offsets[3] = 40 + 256 + 64 + 16;
        const Bytes header = encode_records<quake1::miptex_t>(std::span<const quake1::miptex_t>(&mt, 1), ByteOrder::little);
        textures.insert(textures.end(), header.begin(), header.end());
        textures.resize(textures.size() + 256 + 64 + 16 + 4, 7);
        if (goldsrc) {
            append<uint16_t>(textures, 256);
            textures.resize(textures.size() + 768 + 2, 0x40);
        }
    }

    Bytes build(const FormatLayout& layout, std::optional<int32_t> version) const {
        std::vector<Bytes> lumps(layout.lumps.size());
        put_lump(lumps, layout, "entities", entities);
        put_lump(lumps, layout, "planes", enc(planes));
        put_lump(lumps, layout, "textures", textures);
        put_lump(lumps, layout, "vertexes", enc(vertexes));
        put_lump(lumps, layout, "visibility", visibility);
        put_lump(lumps, layout, "nodes", enc(nodes));
        put_lump(lumps, layout, "texinfo", enc(texinfo));
        put_lump(lumps, layout, "faces", enc(faces));
        put_lump(lumps, layout, "lighting", lighting);
        put_lump(lumps, layout, "clipnodes", enc(clipnodes));
        put_lump(lumps, layout, "leafs", enc(leafs));
        put_lump(lumps, layout, "marksurfaces", enc(marksurfaces));
        put_lump(lumps, layout, "edges", enc(edges));
        put_lump(lumps, layout, "surfedges", enc(surfedges));
        put_lump(lumps, layout, "models", enc(models));
        return samples::build(layout, version, lumps);
    }
};

// ---------------------------------------------------------------------------
// Quake 2

struct Quake2Map {
    std::vector<quake2::dplane_t> planes;
    std::vector<quake2::dvertex_t> vertices;
    std::vector<quake2::dnode_t> nodes;
    std::vector<quake2::texinfo_t> texinfo;
    std::vector<quake2::dface_t> faces;
    std::vector<quake2::dleaf_t> leafs;
    std::vector<quake2::dleafface_t> leaffaces;
    std::vector<quake2::dleafbrush_t> leafbrushes;
    std::vector<quake2::dedge_t> edges;
    std::vector<quake2::dsurfedge_t> surfedges;
    std::vector<quake2::dmodel_t> models;
    std::vector<quake2::dbrush_t> brushes;
    std::vector<quake2::dbrushside_t> brushsides;
    std::vector<quake2::darea_t> areas;
    std::vector<quake2::dareaportal_t> areaportals;
    Bytes visibility, lighting, entities = text(kEntities);

    Quake2Map() {
        for (int i = 0; i < 8; ++i) {
            const auto c = corner(i);
            vertices.push_back({{c[0], c[1], c[2]}});
        }
        edges.push_back({});
        const auto box = box_faces();
        for (int f = 0; f < 6; ++f) {
            const BoxFace& bf = box[size_t(f)];
            planes.push_back({{bf.normal[0], bf.normal[1], bf.normal[2]}, bf.dist, f / 2});
            quake2::texinfo_t ti{};
            std::memcpy(ti.vecs[0], bf.s, sizeof bf.s);
            std::memcpy(ti.vecs[1], bf.t, sizeof bf.t);
            std::memcpy(ti.texture, "e1u1/floor1_1", 13);
            ti.nexttexinfo = -1;
            texinfo.push_back(ti);
            quake2::dface_t face{};
            face.planenum = uint16_t(f);
            face.firstedge = int32_t(surfedges.size());
            face.numedges = 4;
            face.texinfo = int16_t(f);
            face.styles[0] = 0;
            face.styles[1] = face.styles[2] = face.styles[3] = 255;
            face.lightofs = f * kSamplesPerFace * 3;
            for (int k = 0; k < 4; ++k) {
                surfedges.push_back({int32_t(edges.size())});
                edges.push_back({{uint16_t(bf.corners[k]), uint16_t(bf.corners[(k + 1) % 4])}});
            }
            faces.push_back(face);
            leaffaces.push_back({uint16_t(f)});
            brushsides.push_back({uint16_t(f), 0});
        }
        nodes.push_back({0, {-2, -1}, {-64, -64, 0}, {64, 64, 128}, 0, 6});
        quake2::dleaf_t solid{}, room{};
        solid.contents = 1;  // CONTENTS_SOLID
        solid.cluster = -1;
        room.cluster = 0;
        room.area = 1;
        room.numleaffaces = 6;
        room.numleafbrushes = 1;
        leafs = {solid, room};
        leafbrushes.push_back({0});
        brushes.push_back({0, 6, 1});
        quake2::dmodel_t model{};
        for (int k = 0; k < 3; ++k) {
            model.mins[k] = kMin[k];
            model.maxs[k] = kMax[k];
        }
        model.numfaces = 6;
        models.push_back(model);
        areas = {{0, 0}, {0, 0}};
        append<int32_t>(visibility, 1);   // numclusters
        append<int32_t>(visibility, 12);  // PVS row
        append<int32_t>(visibility, 13);  // PHS row
        visibility.push_back(0x01);
        visibility.push_back(0x01);
        lighting.assign(size_t(6 * kSamplesPerFace * 3), 0x80);
    }

    Bytes build() const {
        const FormatLayout& layout = layouts::quake2();
        std::vector<Bytes> lumps(layout.lumps.size());
        using M = quake2::Map;
        lumps[M::LUMP_ENTITIES] = entities;
        lumps[M::LUMP_PLANES] = enc(planes);
        lumps[M::LUMP_VERTEXES] = enc(vertices);
        lumps[M::LUMP_VISIBILITY] = visibility;
        lumps[M::LUMP_NODES] = enc(nodes);
        lumps[M::LUMP_TEXINFO] = enc(texinfo);
        lumps[M::LUMP_FACES] = enc(faces);
        lumps[M::LUMP_LIGHTING] = lighting;
        lumps[M::LUMP_LEAFS] = enc(leafs);
        lumps[M::LUMP_LEAFFACES] = enc(leaffaces);
        lumps[M::LUMP_LEAFBRUSHES] = enc(leafbrushes);
        lumps[M::LUMP_EDGES] = enc(edges);
        lumps[M::LUMP_SURFEDGES] = enc(surfedges);
        lumps[M::LUMP_MODELS] = enc(models);
        lumps[M::LUMP_BRUSHES] = enc(brushes);
        lumps[M::LUMP_BRUSHSIDES] = enc(brushsides);
        lumps[M::LUMP_AREAS] = enc(areas);
        lumps[M::LUMP_AREAPORTALS] = enc(areaportals);
        return samples::build(layout, 38, lumps);
    }
};

// ---------------------------------------------------------------------------
// Quake 3

struct Quake3Map {
    int32_t version = 46;
    std::vector<quake3::dshader_t> shaders;
    std::vector<quake3::dplane_t> planes;
    std::vector<quake3::dnode_t> nodes;
    std::vector<quake3::dleaf_t> leafs;
    std::vector<quake3::dleafsurface_t> leafsurfaces;
    std::vector<quake3::dleafbrush_t> leafbrushes;
    std::vector<quake3::dmodel_t> models;
    std::vector<quake3::dbrush_t> brushes;
    std::vector<quake3::dbrushside_t> brushsides;
    std::vector<quake3::drawVert_t> verts;
    std::vector<quake3::dmeshvert_t> meshverts;
    std::vector<quake3::dfog_t> fogs;
    std::vector<quake3::dsurface_t> surfaces;
    std::vector<quake3::dlightgrid_t> lightgrid;
    Bytes lightmaps, visdata, entities = text(kEntities);

    Quake3Map() {
        quake3::dshader_t sh{};
        std::memcpy(sh.shader, "textures/base/floor", 19);
        shaders.push_back(sh);
        quake3::dshader_t fogsh{};
        std::memcpy(fogsh.shader, "textures/fog", 12);
        shaders.push_back(fogsh);
        const auto box = box_faces();
        for (int f = 0; f < 6; ++f) {
            const BoxFace& bf = box[size_t(f)];
            planes.push_back({{bf.normal[0], bf.normal[1], bf.normal[2]}, bf.dist});
            brushsides.push_back({f, 0});
            quake3::dsurface_t s{};
            s.shaderNum = 0;
            s.fogNum = f == 0 ? 0 : -1;
            s.surfaceType = quake3::MST_PLANAR;
            s.firstVert = int32_t(verts.size());
            s.numVerts = 4;
            s.firstIndex = int32_t(meshverts.size());
            s.numIndexes = 6;
            s.lightmapNum = 0;
            s.lightmapX = f * 16;
            s.lightmapY = 0;
            s.lightmapWidth = s.lightmapHeight = 9;
            for (int k = 0; k < 4; ++k) {
                const auto c = corner(bf.corners[k]);
                quake3::drawVert_t v{};
                std::memcpy(v.xyz, c.data(), sizeof v.xyz);
                std::memcpy(v.normal, bf.normal, sizeof v.normal);
                v.color[3] = 255;
                verts.push_back(v);
            }
            for (int k : {0, 1, 2, 0, 2, 3}) meshverts.push_back({k});
            surfaces.push_back(s);
            leafsurfaces.push_back({f});
        }
        // A 3 x 3 patch (one biquadratic Bezier) on the floor.
        surfaces.push_back(flat_patch(8.0f));
        leafsurfaces.push_back({6});
        nodes.push_back({0, {-2, -1}, {-64, -64, 0}, {64, 64, 128}});
        quake3::dleaf_t solid{}, room{};
        solid.cluster = -1;
        room.cluster = 0;
        room.numLeafSurfaces = 7;
        room.numLeafBrushes = 1;
        leafs = {solid, room};
        leafbrushes.push_back({0});
        brushes.push_back({0, 6, 0});
        quake3::dfog_t fog{};
        std::memcpy(fog.shader, "textures/fog", 12);
        fog.brushNum = 0;
        fog.visibleSide = 5;
        fogs.push_back(fog);
        quake3::dmodel_t model{};
        for (int k = 0; k < 3; ++k) {
            model.mins[k] = kMin[k];
            model.maxs[k] = kMax[k];
        }
        model.numSurfaces = 7;
        model.numBrushes = 1;
        models.push_back(model);
        lightmaps.assign(sizeof(quake3::dlightmap_t), 0x80);
        // Grid 64 x 64 x 128 over the bounds: 3 x 3 x 2 points.
        lightgrid.assign(18, quake3::dlightgrid_t{{10, 10, 10}, {200, 200, 200}, {0, 0}});
        append<int32_t>(visdata, 1);  // numVecs
        append<int32_t>(visdata, 8);  // sizeVecs (q3map2 pads rows to 64 bits)
        visdata.push_back(0x01);
        visdata.resize(visdata.size() + 7, 0);
    }

    /// A 3 x 3 flat patch (one biquadratic Bezier) over x, y in [-32, 32] at
    /// height z: its control points appended to verts, the surface returned.
    quake3::dsurface_t flat_patch(float z, int32_t shader = 0) {
        quake3::dsurface_t patch{};
        patch.surfaceType = quake3::MST_PATCH;
        patch.shaderNum = shader;
        patch.fogNum = -1;
        patch.firstVert = int32_t(verts.size());
        patch.numVerts = 9;
        patch.lightmapNum = -1;
        patch.patchWidth = patch.patchHeight = 3;
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i) {
                quake3::drawVert_t v{};
                v.xyz[0] = -32.0f + 32.0f * float(i);
                v.xyz[1] = -32.0f + 32.0f * float(j);
                v.xyz[2] = z;
                verts.push_back(v);
            }
        return patch;
    }

    Bytes build() const {
        const FormatLayout& layout = layouts::quake3();
        std::vector<Bytes> lumps(layout.lumps.size());
        using M = quake3::Map;
        lumps[M::LUMP_ENTITIES] = entities;
        lumps[M::LUMP_SHADERS] = enc(shaders);
        lumps[M::LUMP_PLANES] = enc(planes);
        lumps[M::LUMP_NODES] = enc(nodes);
        lumps[M::LUMP_LEAFS] = enc(leafs);
        lumps[M::LUMP_LEAFSURFACES] = enc(leafsurfaces);
        lumps[M::LUMP_LEAFBRUSHES] = enc(leafbrushes);
        lumps[M::LUMP_MODELS] = enc(models);
        lumps[M::LUMP_BRUSHES] = enc(brushes);
        lumps[M::LUMP_BRUSHSIDES] = enc(brushsides);
        lumps[M::LUMP_DRAWVERTS] = enc(verts);
        lumps[M::LUMP_DRAWINDEXES] = enc(meshverts);
        lumps[M::LUMP_FOGS] = enc(fogs);
        lumps[M::LUMP_SURFACES] = enc(surfaces);
        lumps[M::LUMP_LIGHTMAPS] = lightmaps;
        lumps[M::LUMP_LIGHTGRID] = enc(lightgrid);
        lumps[M::LUMP_VISIBILITY] = visdata;
        return samples::build(layout, version, lumps);
    }
};

// ---------------------------------------------------------------------------
// Nightfire

struct NightfireMap {
    std::vector<nightfire::Plane> planes;
    std::vector<nightfire::Texture> textures;
    std::vector<nightfire::Material> materials;
    std::vector<nightfire::Vertex> vertices;
    std::vector<nightfire::ZeroVertex> zero_vertices;
    std::vector<nightfire::DrawIndex> draw_indices;
    std::vector<nightfire::Node> nodes;
    std::vector<nightfire::Surface> surfaces;
    std::vector<nightfire::Leaf> leaves;
    std::vector<nightfire::LeafSurface> leaf_surfaces;
    std::vector<nightfire::LeafBrush> leaf_brushes;
    std::vector<nightfire::Model> models;
    std::vector<nightfire::Brush> brushes;
    std::vector<nightfire::BrushSide> brush_sides;
    std::vector<nightfire::Projection> projections;
    Bytes visibility, lighting, entities = text(kEntities);

    NightfireMap() {
        textures.push_back({});
        std::memcpy(textures[0].Path, "generic/concrete", 16);
        materials.push_back({});
        std::memcpy(materials[0].Path, "wld_lightmap", 12);
        const auto box = box_faces();
        int32_t light = 0;
        for (int f = 0; f < 6; ++f) {
            const BoxFace& bf = box[size_t(f)];
            planes.push_back({{bf.normal[0], bf.normal[1], bf.normal[2]}, bf.dist, uint32_t(f / 2)});
            nightfire::Projection tex{}, lm{};
            std::memcpy(tex.S, bf.s, sizeof bf.s);
            std::memcpy(tex.T, bf.t, sizeof bf.t);
            for (int k = 0; k < 4; ++k) {
                lm.S[k] = bf.s[k] / 16;
                lm.T[k] = bf.t[k] / 16;
            }
            projections.push_back(tex);
            projections.push_back(lm);
            nightfire::Surface s{};
            s.PlaneIndex = uint32_t(f);
            s.VerticesIndex = uint32_t(vertices.size());
            s.VerticesCount = 4;
            s.DrawIndicesIndex = uint32_t(draw_indices.size());
            s.DrawIndicesCount = 6;
            s.TextureProjectionIndex = uint32_t(2 * f);
            s.LightmapProjectionIndex = uint32_t(2 * f + 1);
            s.LightStyles[0] = 0;
            s.LightStyles[1] = s.LightStyles[2] = s.LightStyles[3] = 255;
            s.LightingOffset = light;
            light += kSamplesPerFace * 3;  // 9 x 9 luxels (projection in luxels)
            for (int k = 0; k < 4; ++k) {
                const auto c = corner(bf.corners[k]);
                vertices.push_back({{c[0], c[1], c[2]}});
                zero_vertices.push_back({});
            }
            for (uint32_t k : {0u, 1u, 2u, 0u, 2u, 3u}) draw_indices.push_back({k});
            surfaces.push_back(s);
            leaf_surfaces.push_back({uint32_t(f)});
            brush_sides.push_back({uint32_t(f), uint32_t(f)});
        }
        lighting.assign(size_t(light), 0x80);
        nodes.push_back({0, {-2, -1}, {-64, -64, 0}, {64, 64, 128}});
        nightfire::Leaf solid{}, room{};
        solid.Type = 2;
        room.Type = 1;
        room.VisibilityOffset = 0;
        room.LeafSurfacesCount = 6;
        room.LeafBrushesCount = 1;
        leaves = {solid, room};
        leaf_brushes.push_back({0});
        brushes.push_back({0, 0, 6});
        nightfire::Model model{};
        for (int k = 0; k < 3; ++k) {
            model.Mins[k] = kMin[k];
            model.Maxs[k] = kMax[k];
        }
        model.LeavesIndex = 1;
        model.LeavesCount = 1;
        model.SurfacesCount = 6;
        models.push_back(model);
        visibility = {0x01, 0, 0, 0};  // leaf 1 sees leaf 1; rows padded to 4 bytes
    }

    Bytes build() const {
        const FormatLayout& layout = layouts::nightfire();
        std::vector<Bytes> lumps(layout.lumps.size());
        using M = nightfire::Map;
        lumps[M::Entities] = entities;
        lumps[M::Planes] = enc(planes);
        lumps[M::Textures] = enc(textures);
        lumps[M::Materials] = enc(materials);
        lumps[M::Vertices] = enc(vertices);
        lumps[M::ZeroVertices] = enc(zero_vertices);
        lumps[M::DrawIndices] = enc(draw_indices);
        lumps[M::Visibility] = visibility;
        lumps[M::Nodes] = enc(nodes);
        lumps[M::Surfaces] = enc(surfaces);
        lumps[M::Lighting] = lighting;
        lumps[M::Leaves] = enc(leaves);
        lumps[M::LeafSurfaces] = enc(leaf_surfaces);
        lumps[M::LeafBrushes] = enc(leaf_brushes);
        lumps[M::Models] = enc(models);
        lumps[M::Brushes] = enc(brushes);
        lumps[M::BrushSides] = enc(brush_sides);
        lumps[M::Projections] = enc(projections);
        return samples::build(layout, 42, lumps);
    }
};

}  // namespace bspkit::testmaps
