// Typed records of Quake 2 (IBSP 38, also Kingpin, Alien Arena, KMQuake2
// maps): 19 lumps, named as in id's qfiles.h (seed 001 documents the same
// layouts as bsp_face, bsp_node, ...).
//
//   const bspkit::quake2::Map map(bsp);
//   for (const bspkit::quake2::dleaf_t& leaf : map.leafs()) ...
#pragma once

#include <bspkit/records.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace bspkit::quake2 {

struct dplane_t {
    float normal[3];
    float dist;
    int32_t type;
    static constexpr std::string_view kLayout = "3ffi";
};
BSPKIT_RECORD(dplane_t, 20);

struct dvertex_t {
    float point[3];
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(dvertex_t, 12);

struct dnode_t {
    int32_t planenum;
    int32_t children[2];  ///< >= 0 node; negative: leaf -(child + 1)
    int16_t mins[3], maxs[3];
    uint16_t firstface, numfaces;
    static constexpr std::string_view kLayout = "i2i3h3hhh";
};
BSPKIT_RECORD(dnode_t, 28);

struct texinfo_t {
    float vecs[2][4];
    int32_t flags;  ///< SURF_*
    int32_t value;  ///< light emission etc.
    char texture[32];
    int32_t nexttexinfo;  ///< next animation frame, -1 = none
    static constexpr std::string_view kLayout = "8fii32bi";
};
BSPKIT_RECORD(texinfo_t, 76);

inline constexpr int32_t SURF_LIGHT = 0x1, SURF_SLICK = 0x2, SURF_SKY = 0x4, SURF_WARP = 0x8, SURF_TRANS33 = 0x10,
                         SURF_TRANS66 = 0x20, SURF_FLOWING = 0x40, SURF_NODRAW = 0x80;

struct dface_t {
    uint16_t planenum;
    int16_t side;
    int32_t firstedge;
    int16_t numedges;
    int16_t texinfo;
    uint8_t styles[4];
    int32_t lightofs;  ///< byte offset into lighting (RGB samples), -1 = none
    static constexpr std::string_view kLayout = "hhihh4bi";
};
BSPKIT_RECORD(dface_t, 20);

struct dleaf_t {
    int32_t contents;
    int16_t cluster;  ///< -1 = no visibility
    int16_t area;
    int16_t mins[3], maxs[3];
    uint16_t firstleafface, numleaffaces;
    uint16_t firstleafbrush, numleafbrushes;
    static constexpr std::string_view kLayout = "ihh3h3hhhhh";
};
BSPKIT_RECORD(dleaf_t, 28);

struct dleafface_t {
    uint16_t face;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dleafface_t, 2);

struct dleafbrush_t {
    uint16_t brush;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dleafbrush_t, 2);

struct dedge_t {
    uint16_t v[2];
    static constexpr std::string_view kLayout = "2h";
};
BSPKIT_RECORD(dedge_t, 4);

struct dsurfedge_t {
    int32_t edge;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dsurfedge_t, 4);

struct dmodel_t {
    float mins[3], maxs[3];
    float origin[3];
    int32_t headnode;
    int32_t firstface, numfaces;
    static constexpr std::string_view kLayout = "3f3f3fiii";
};
BSPKIT_RECORD(dmodel_t, 48);

struct dbrush_t {
    int32_t firstside;
    int32_t numsides;
    int32_t contents;
    static constexpr std::string_view kLayout = "iii";
};
BSPKIT_RECORD(dbrush_t, 12);

struct dbrushside_t {
    uint16_t planenum;
    int16_t texinfo;  ///< -1 = none
    static constexpr std::string_view kLayout = "hh";
};
BSPKIT_RECORD(dbrushside_t, 4);

struct darea_t {
    int32_t numareaportals;
    int32_t firstareaportal;
    static constexpr std::string_view kLayout = "ii";
};
BSPKIT_RECORD(darea_t, 8);

struct dareaportal_t {
    int32_t portalnum;
    int32_t otherarea;
    static constexpr std::string_view kLayout = "ii";
};
BSPKIT_RECORD(dareaportal_t, 8);

/// The visibility lump starts with dvis_t: numclusters, then
/// bitofs[numclusters][2] (DVIS_PVS, DVIS_PHS), byte offsets from the start
/// of the lump to each cluster's run-length-compressed rows. Source uses the
/// same header.
struct dvis_t {
    int32_t numclusters = 0;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dvis_t, 4);
inline constexpr int DVIS_PVS = 0, DVIS_PHS = 1;

/// Typed view of a Quake 2 map; lumps decode on first access.
class Map {
public:
    explicit Map(const Bsp& bsp);  ///< throws Error when `bsp` is not Quake 2

    const Bsp& bsp() const noexcept { return *bsp_; }

    ByteSpan entities() const;
    ByteSpan visibility() const;  ///< dvis_t header + compressed rows; see visibility.hpp
    ByteSpan lighting() const;
    /// Lump 16 "pop": no known layout (qfiles.h only reserves it); raw bytes.
    ByteSpan pop() const;

    std::span<const dplane_t> planes() const;
    std::span<const dvertex_t> vertices() const;
    std::span<const dnode_t> nodes() const;
    std::span<const texinfo_t> texinfo() const;
    std::span<const dface_t> faces() const;
    std::span<const dleaf_t> leafs() const;
    std::span<const dleafface_t> leaffaces() const;
    std::span<const dleafbrush_t> leafbrushes() const;
    std::span<const dedge_t> edges() const;
    std::span<const dsurfedge_t> surfedges() const;
    std::span<const dmodel_t> models() const;
    std::span<const dbrush_t> brushes() const;
    std::span<const dbrushside_t> brushsides() const;
    std::span<const darea_t> areas() const;
    std::span<const dareaportal_t> areaportals() const;

    enum Lump : size_t {
        LUMP_ENTITIES, LUMP_PLANES, LUMP_VERTEXES, LUMP_VISIBILITY, LUMP_NODES, LUMP_TEXINFO, LUMP_FACES,
        LUMP_LIGHTING, LUMP_LEAFS, LUMP_LEAFFACES, LUMP_LEAFBRUSHES, LUMP_EDGES, LUMP_SURFEDGES, LUMP_MODELS,
        LUMP_BRUSHES, LUMP_BRUSHSIDES, LUMP_POP, LUMP_AREAS, LUMP_AREAPORTALS,
    };

private:
    const Bsp* bsp_;
    LazyRecords<dplane_t> planes_;
    LazyRecords<dvertex_t> vertices_;
    LazyRecords<dnode_t> nodes_;
    LazyRecords<texinfo_t> texinfo_;
    LazyRecords<dface_t> faces_;
    LazyRecords<dleaf_t> leafs_;
    LazyRecords<dleafface_t> leaffaces_;
    LazyRecords<dleafbrush_t> leafbrushes_;
    LazyRecords<dedge_t> edges_;
    LazyRecords<dsurfedge_t> surfedges_;
    LazyRecords<dmodel_t> models_;
    LazyRecords<dbrush_t> brushes_;
    LazyRecords<dbrushside_t> brushsides_;
    LazyRecords<darea_t> areas_;
    LazyRecords<dareaportal_t> areaportals_;
};

/// A face's lightmap by the 16-texel luxel rule (3 bytes per sample).
struct FaceLightmap {
    int width = 0, height = 0;  ///< samples
    int styles = 0;
    int64_t lightofs = -1;
    size_t bytes = 0;           ///< width x height x styles x 3
};
/// nullopt when the face has no lightmap (lightofs -1, no styles, SURF_SKY /
/// SURF_WARP) or its references are broken. Ignores BSPX LMSHIFT / DECOUPLED_LM.
std::optional<FaceLightmap> face_lightmap(const Map& map, size_t face);

/// qfiles.h limits (warnings in `check`).
inline constexpr size_t MAX_MAP_MODELS = 1024, MAX_MAP_BRUSHES = 8192, MAX_MAP_ENTSTRING = 0x40000,
                        MAX_MAP_TEXINFO = 8192, MAX_MAP_AREAS = 256, MAX_MAP_AREAPORTALS = 1024,
                        MAX_MAP_PLANES = 65536, MAX_MAP_NODES = 65536, MAX_MAP_BRUSHSIDES = 65536,
                        MAX_MAP_LEAFS = 65536, MAX_MAP_VERTS = 65536, MAX_MAP_FACES = 65536,
                        MAX_MAP_LEAFFACES = 65536, MAX_MAP_LEAFBRUSHES = 65536, MAX_MAP_EDGES = 128000,
                        MAX_MAP_SURFEDGES = 256000, MAX_MAP_LIGHTING = 0x200000, MAX_MAP_VISIBILITY = 0x100000;
inline constexpr int MAXLIGHTMAPS = 4;

}  // namespace bspkit::quake2
