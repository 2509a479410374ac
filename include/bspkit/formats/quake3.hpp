// Typed records of Quake 3 (IBSP 46) and Return to Castle Wolfenstein
// (IBSP 47, same lumps): 17 lumps, named as in id's qfiles.h (seed 004 calls
// them texture, node, leaf, ..., face, lightvol, visdata).
//
//   const bspkit::quake3::Map map(bsp);
//   for (const bspkit::quake3::dsurface_t& s : map.surfaces()) ...
#pragma once

#include <bspkit/records.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace bspkit::quake3 {

/// Lump 1 "textures" (seed 004: texture).
struct dshader_t {
    char shader[64];
    int32_t surfaceFlags;
    int32_t contentFlags;
    static constexpr std::string_view kLayout = "64bii";
};
BSPKIT_RECORD(dshader_t, 72);

struct dplane_t {
    float normal[3];
    float dist;
    static constexpr std::string_view kLayout = "3ff";
};
BSPKIT_RECORD(dplane_t, 16);

struct dnode_t {
    int32_t planeNum;
    int32_t children[2];  ///< >= 0 node; negative: leaf -(child + 1)
    int32_t mins[3], maxs[3];
    static constexpr std::string_view kLayout = "i2i3i3i";
};
BSPKIT_RECORD(dnode_t, 36);

struct dleaf_t {
    int32_t cluster;  ///< -1: outside the map
    int32_t area;
    int32_t mins[3], maxs[3];
    int32_t firstLeafSurface, numLeafSurfaces;
    int32_t firstLeafBrush, numLeafBrushes;
    static constexpr std::string_view kLayout = "ii3i3iiiii";
};
BSPKIT_RECORD(dleaf_t, 48);

/// Lump 5 "leaffaces": index into surfaces.
struct dleafsurface_t {
    int32_t surface;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dleafsurface_t, 4);

/// Lump 6 "leafbrushes": index into brushes.
struct dleafbrush_t {
    int32_t brush;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dleafbrush_t, 4);

struct dmodel_t {
    float mins[3], maxs[3];
    int32_t firstSurface, numSurfaces;
    int32_t firstBrush, numBrushes;
    static constexpr std::string_view kLayout = "3f3fiiii";
};
BSPKIT_RECORD(dmodel_t, 40);

struct dbrush_t {
    int32_t firstSide;
    int32_t numSides;
    int32_t shaderNum;
    static constexpr std::string_view kLayout = "iii";
};
BSPKIT_RECORD(dbrush_t, 12);

struct dbrushside_t {
    int32_t planeNum;
    int32_t shaderNum;
    static constexpr std::string_view kLayout = "ii";
};
BSPKIT_RECORD(dbrushside_t, 8);

/// Lump 10 "vertexes".
struct drawVert_t {
    float xyz[3];
    float st[2];
    float lightmap[2];
    float normal[3];
    uint8_t color[4];
    static constexpr std::string_view kLayout = "3f2f2f3f4b";
};
BSPKIT_RECORD(drawVert_t, 44);

/// Lump 11 "meshverts" (qfiles.h: drawIndexes): offset from the surface's firstVert.
struct dmeshvert_t {
    int32_t offset;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dmeshvert_t, 4);

/// Lump 12 "effects" (seed 004: effect).
struct dfog_t {
    char shader[64];
    int32_t brushNum;
    int32_t visibleSide;  ///< side of the brush seen from outside, -1 = none
    static constexpr std::string_view kLayout = "64bii";
};
BSPKIT_RECORD(dfog_t, 72);

enum mapSurfaceType_t : int32_t { MST_BAD, MST_PLANAR, MST_PATCH, MST_TRIANGLE_SOUP, MST_FLARE, MST_FOLIAGE };

/// Lump 13 "faces" (seed 004: face).
struct dsurface_t {
    int32_t shaderNum;
    int32_t fogNum;       ///< into effects, -1 = none
    int32_t surfaceType;  ///< mapSurfaceType_t
    int32_t firstVert, numVerts;
    int32_t firstIndex, numIndexes;  ///< into meshverts
    int32_t lightmapNum;  ///< into lightmaps; negative: none / by vertex
    int32_t lightmapX, lightmapY, lightmapWidth, lightmapHeight;
    float lightmapOrigin[3];
    float lightmapVecs[3][3];  ///< s, t; for patches [2] is the normal
    int32_t patchWidth, patchHeight;
    static constexpr std::string_view kLayout = "12i3f9f2i";
};
BSPKIT_RECORD(dsurface_t, 104);

inline constexpr int LIGHTMAP_WIDTH = 128, LIGHTMAP_HEIGHT = 128;

/// Lump 14 "lightmaps": one 128 x 128 RGB page.
struct dlightmap_t {
    uint8_t map[LIGHTMAP_HEIGHT][LIGHTMAP_WIDTH][3];
    static constexpr std::string_view kLayout = "49152b";
};
BSPKIT_RECORD(dlightmap_t, 128 * 128 * 3);

/// Lump 15 "lightvols": one point of the light grid.
struct dlightgrid_t {
    uint8_t ambient[3];
    uint8_t directed[3];
    uint8_t latLong[2];  ///< direction to the light: [0] phi, [1] theta
    static constexpr std::string_view kLayout = "3b3b2b";
};
BSPKIT_RECORD(dlightgrid_t, 8);

/// Lump 16 "visdata" header; numVecs rows of sizeVecs bytes follow, uncompressed.
struct dvisdata_t {
    int32_t numVecs;   ///< clusters
    int32_t sizeVecs;  ///< bytes per row
    static constexpr std::string_view kLayout = "ii";
};
BSPKIT_RECORD(dvisdata_t, 8);

/// Typed view of a Quake 3 / RTCW map; lumps decode on first access.
class Map {
public:
    explicit Map(const Bsp& bsp);  ///< throws Error when `bsp` is not Quake 3

    const Bsp& bsp() const noexcept { return *bsp_; }

    ByteSpan entities() const;
    ByteSpan visdata() const;  ///< header + rows; see visdata_header() and visibility.hpp
    /// The visdata header, when the lump holds one.
    std::optional<dvisdata_t> visdata_header() const;

    std::span<const dshader_t> shaders() const;
    std::span<const dplane_t> planes() const;
    std::span<const dnode_t> nodes() const;
    std::span<const dleaf_t> leafs() const;
    std::span<const dleafsurface_t> leafsurfaces() const;
    std::span<const dleafbrush_t> leafbrushes() const;
    std::span<const dmodel_t> models() const;
    std::span<const dbrush_t> brushes() const;
    std::span<const dbrushside_t> brushsides() const;
    std::span<const drawVert_t> vertexes() const;
    std::span<const dmeshvert_t> meshverts() const;
    std::span<const dfog_t> fogs() const;
    std::span<const dsurface_t> surfaces() const;
    /// Lightmap pages (128 x 128 RGB each).
    std::span<const dlightmap_t> lightmaps() const;
    std::span<const dlightgrid_t> lightgrid() const;

    enum Lump : size_t {
        LUMP_ENTITIES, LUMP_SHADERS, LUMP_PLANES, LUMP_NODES, LUMP_LEAFS, LUMP_LEAFSURFACES, LUMP_LEAFBRUSHES,
        LUMP_MODELS, LUMP_BRUSHES, LUMP_BRUSHSIDES, LUMP_DRAWVERTS, LUMP_DRAWINDEXES, LUMP_FOGS, LUMP_SURFACES,
        LUMP_LIGHTMAPS, LUMP_LIGHTGRID, LUMP_VISIBILITY,
    };

private:
    const Bsp* bsp_;
    LazyRecords<dshader_t> shaders_;
    LazyRecords<dplane_t> planes_;
    LazyRecords<dnode_t> nodes_;
    LazyRecords<dleaf_t> leafs_;
    LazyRecords<dleafsurface_t> leafsurfaces_;
    LazyRecords<dleafbrush_t> leafbrushes_;
    LazyRecords<dmodel_t> models_;
    LazyRecords<dbrush_t> brushes_;
    LazyRecords<dbrushside_t> brushsides_;
    LazyRecords<drawVert_t> vertexes_;
    LazyRecords<dmeshvert_t> meshverts_;
    LazyRecords<dfog_t> fogs_;
    LazyRecords<dsurface_t> surfaces_;
    LazyRecords<dlightmap_t> lightmaps_;
    LazyRecords<dlightgrid_t> lightgrid_;
};

/// qfiles.h limits (warnings in `check`).
inline constexpr size_t MAX_MAP_MODELS = 0x400, MAX_MAP_BRUSHES = 0x8000, MAX_MAP_ENTSTRING = 0x40000,
                        MAX_MAP_SHADERS = 0x400, MAX_MAP_AREAS = 0x100, MAX_MAP_FOGS = 0x100,
                        MAX_MAP_PLANES = 0x20000, MAX_MAP_NODES = 0x20000, MAX_MAP_BRUSHSIDES = 0x20000,
                        MAX_MAP_LEAFS = 0x20000, MAX_MAP_LEAFFACES = 0x20000, MAX_MAP_LEAFBRUSHES = 0x40000,
                        MAX_MAP_LIGHTING = 0x800000, MAX_MAP_LIGHTGRID = 0x800000, MAX_MAP_VISIBILITY = 0x200000,
                        MAX_MAP_DRAW_SURFS = 0x20000, MAX_MAP_DRAW_VERTS = 0x80000, MAX_MAP_DRAW_INDEXES = 0x80000;

}  // namespace bspkit::quake3
