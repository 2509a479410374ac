// Source engine (VBSP 17-23, big-endian PSBV, Left 4 Dead 2 lump_t order):
// one plain struct per on-disk record, named as in public/bspfile.h and the
// specs (seed 000: Rof's v19/v20/v17 notes, seed 002: Valve wiki), and a typed
// view of a map that decodes each lump on first access.
//
//   auto bsp = bspkit::Bsp::open("map.bsp");
//   bspkit::source::Map map(bsp);
//   for (const auto& face : map.faces()) ...      // dface_t, v17 faces converted
//   int16_t cluster = map.leafs()[7].cluster;
//
// Big-endian (console) files are swapped into the same structs. Lumps whose
// layout is not documented (physdisp, pakfile, portals of v17-19, ...) stay
// raw bytes: Map::layout_of(lump) says which struct decodes a lump, or why
// none does.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/records.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <optional>
#include <string_view>
#include <vector>

namespace bspkit::source {

// ---------------------------------------------------------------------------
// Lump indices (bspfile.h LUMP_*), shared by every Source version.
// ---------------------------------------------------------------------------
namespace lump {
inline constexpr size_t entities = 0, planes = 1, texdata = 2, vertexes = 3, visibility = 4, nodes = 5,
                        texinfo = 6, faces = 7, lighting = 8, occlusion = 9, leafs = 10, faceids = 11, edges = 12,
                        surfedges = 13, models = 14, worldlights = 15, leaffaces = 16, leafbrushes = 17,
                        brushes = 18, brushsides = 19, areas = 20, areaportals = 21, portals = 22, clusters = 23,
                        portalverts = 24, clusterportals = 25, dispinfo = 26, originalfaces = 27, physdisp = 28,
                        physcollide = 29, vertnormals = 30, vertnormalindices = 31, disp_lightmap_alphas = 32,
                        disp_verts = 33, disp_lightmap_sample_positions = 34, game_lump = 35, leafwaterdata = 36,
                        primitives = 37, primverts = 38, primindices = 39, pakfile = 40, clipportalverts = 41,
                        cubemaps = 42, texdata_string_data = 43, texdata_string_table = 44, overlays = 45,
                        leafmindisttowater = 46, face_macro_texture_info = 47, disp_tris = 48,
                        physcollidesurface = 49, wateroverlays = 50, leaf_ambient_index_hdr = 51,
                        leaf_ambient_index = 52, lighting_hdr = 53, worldlights_hdr = 54,
                        leaf_ambient_lighting_hdr = 55, leaf_ambient_lighting = 56, xzippakfile = 57,
                        faces_hdr = 58, map_flags = 59, overlay_fades = 60, overlay_system_levels = 61,
                        physlevel = 62, disp_multiblend = 63;
}  // namespace lump

// ---------------------------------------------------------------------------
// Constants from bspfile.h / bspflags.h used by the records and the checks.
// ---------------------------------------------------------------------------
inline constexpr uint32_t SURF_SKY2D = 0x2, SURF_SKY = 0x4, SURF_NODRAW = 0x80, SURF_NOLIGHT = 0x400,
                          SURF_BUMPLIGHT = 0x800;
inline constexpr uint8_t kNoLightStyle = 255;       ///< unused entry of dface_t::styles
inline constexpr int MAXLIGHTMAPS = 4;
inline constexpr int OVERLAY_BSP_FACE_COUNT = 64;
inline constexpr int WATEROVERLAY_BSP_FACE_COUNT = 256;
inline constexpr int MAX_DISP_CORNER_NEIGHBORS = 4;
inline constexpr int MIN_MAP_DISP_POWER = 2, MAX_MAP_DISP_POWER = 4;
inline constexpr int TEXTURE_NAME_LENGTH = 128;
inline constexpr int MAX_BRUSH_SIDES = 128;

// ---------------------------------------------------------------------------
// Basic types
// ---------------------------------------------------------------------------
struct Vector {
    float x, y, z;
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(Vector, 12);

/// One lightmap sample: RGB scaled by 2^exponent.
struct ColorRGBExp32 {
    uint8_t r, g, b;
    int8_t exponent;
    static constexpr std::string_view kLayout = "4b";
};
BSPKIT_RECORD(ColorRGBExp32, 4);

/// Ambient light from the six axis directions.
struct CompressedLightCube {
    ColorRGBExp32 m_Color[6];
    static constexpr std::string_view kLayout = "24b";
};
BSPKIT_RECORD(CompressedLightCube, 24);

// ---------------------------------------------------------------------------
// Geometry: planes, vertexes, edges, surfedges (lumps 1, 3, 12, 13)
// ---------------------------------------------------------------------------
struct dplane_t {
    Vector normal;
    float dist;
    int32_t type;  ///< 0-2 axial, 3-5 closest to an axis
    static constexpr std::string_view kLayout = "3ffi";
};
BSPKIT_RECORD(dplane_t, 20);

struct dvertex_t {
    Vector point;
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(dvertex_t, 12);

struct dedge_t {
    uint16_t v[2];  ///< vertex indices
    static constexpr std::string_view kLayout = "2h";
};
BSPKIT_RECORD(dedge_t, 4);

/// One entry of the surfedge array (an int in bspfile.h): |edge| indexes
/// dedge_t, the sign gives the direction.
struct dsurfedge_t {
    int32_t edge;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dsurfedge_t, 4);

// ---------------------------------------------------------------------------
// Textures (lumps 2, 6, 43, 44, 47)
// ---------------------------------------------------------------------------
struct dtexdata_t {
    Vector reflectivity;
    int32_t nameStringTableID;  ///< index into texdata_string_table
    int32_t width, height;
    int32_t view_width, view_height;
    static constexpr std::string_view kLayout = "3f5i";
};
BSPKIT_RECORD(dtexdata_t, 32);

struct texinfo_t {
    float textureVecs[2][4];   ///< [s/t][xyz offset]
    float lightmapVecs[2][4];  ///< [s/t][xyz offset]
    int32_t flags;             ///< SURF_*
    int32_t texdata;           ///< index into dtexdata_t, -1 for none
    static constexpr std::string_view kLayout = "16f2i";
};
BSPKIT_RECORD(texinfo_t, 72);

/// One entry of texdata_string_table: a byte offset into texdata_string_data.
struct dtexdatastringtable_t {
    int32_t offset;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dtexdatastringtable_t, 4);

/// Lump 47, one per face: 0xFFFF or an index into texdata_string_table.
struct dfacemacrotextureinfo_t {
    uint16_t m_MacroTextureNameID;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dfacemacrotextureinfo_t, 2);

// ---------------------------------------------------------------------------
// Faces (lumps 7, 27, 58), face ids (11)
// ---------------------------------------------------------------------------
struct dface_t {
    uint16_t planenum;
    uint8_t side;    ///< faces opposite to the node's plane direction
    uint8_t onNode;  ///< 1 if on node, 0 if in leaf
    int32_t firstedge;  ///< index into surfedges
    int16_t numedges;
    int16_t texinfo;
    int16_t dispinfo;  ///< -1 when not a displacement
    int16_t surfaceFogVolumeID;
    uint8_t styles[MAXLIGHTMAPS];  ///< 255 = unused
    int32_t lightofs;              ///< byte offset into the lighting lump, -1 for none
    float area;
    int32_t LightmapTextureMinsInLuxels[2];
    int32_t LightmapTextureSizeInLuxels[2];
    int32_t origFace;
    uint16_t numPrims;
    uint16_t firstPrimID;
    uint32_t smoothingGroups;
    static constexpr std::string_view kLayout = "h2bi4h4bif2i2iihhi";
};
BSPKIT_RECORD(dface_t, 56);

/// Version 17 (Vampire: The Masquerade - Bloodlines) face: 104 bytes with
/// eight average light colours in front and 24 style bytes (8 styles in three
/// banks). Field order as decoded by bsp_tool's troika branch and confirmed on
/// the corpus (every cross-reference resolves).
struct dface_v17_t {
    ColorRGBExp32 m_AvgLightColor[8];
    uint16_t planenum;
    uint8_t side;
    uint8_t onNode;
    int32_t firstedge;
    int16_t numedges;
    int16_t texinfo;
    int16_t dispinfo;
    int16_t surfaceFogVolumeID;
    uint8_t styles[8];
    uint8_t day_styles[8];
    uint8_t night_styles[8];
    int32_t lightofs;
    float area;
    int32_t LightmapTextureMinsInLuxels[2];
    int32_t LightmapTextureSizeInLuxels[2];
    int32_t origFace;
    uint32_t smoothingGroups;
    static constexpr std::string_view kLayout = "32bh2bi4h24bif4iii";
};
BSPKIT_RECORD(dface_v17_t, 104);

/// Lump 11: the Hammer face id of each face.
struct dfaceid_t {
    uint16_t hammerfaceid;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dfaceid_t, 2);

// ---------------------------------------------------------------------------
// BSP tree: nodes, leafs, leaffaces, leafbrushes, models (5, 10, 16, 17, 14)
// ---------------------------------------------------------------------------
struct dnode_t {
    int32_t planenum;
    int32_t children[2];  ///< negative numbers are -(leafs + 1)
    int16_t mins[3];
    int16_t maxs[3];
    uint16_t firstface;
    uint16_t numfaces;
    int16_t area;
    int16_t paddding;  ///< sic (bspfile.h)
    static constexpr std::string_view kLayout = "3i6h4h";
};
BSPKIT_RECORD(dnode_t, 32);

/// Leaf of lump version 1 (v20+), also the 32-byte leaf of v17.
struct dleaf_t {
    int32_t contents;
    int16_t cluster;      ///< -1 when not in a cluster
    uint16_t area_flags;  ///< bitfield: area:9 (low bits), flags:7
    int16_t mins[3];
    int16_t maxs[3];
    uint16_t firstleafface;
    uint16_t numleaffaces;
    uint16_t firstleafbrush;
    uint16_t numleafbrushes;
    int16_t leafWaterDataID;  ///< -1 for not in water
    int16_t padding;
    static constexpr std::string_view kLayout = "i2h6h4h2h";

    int area() const noexcept { return area_flags & 0x1ff; }
    int flags() const noexcept { return area_flags >> 9; }
};
BSPKIT_RECORD(dleaf_t, 32);

/// Leaf of lump version 0 (v18-v19 and some v20): carries its ambient cube.
struct dleaf_version_0_t {
    int32_t contents;
    int16_t cluster;
    uint16_t area_flags;
    int16_t mins[3];
    int16_t maxs[3];
    uint16_t firstleafface;
    uint16_t numleaffaces;
    uint16_t firstleafbrush;
    uint16_t numleafbrushes;
    int16_t leafWaterDataID;
    CompressedLightCube m_AmbientLighting;
    int16_t padding;
    static constexpr std::string_view kLayout = "i2h6h4hh24bh";

    int area() const noexcept { return area_flags & 0x1ff; }
    int flags() const noexcept { return area_flags >> 9; }
};
BSPKIT_RECORD(dleaf_version_0_t, 56);

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

struct dmodel_t {
    Vector mins, maxs;
    Vector origin;
    int32_t headnode;
    int32_t firstface, numfaces;
    static constexpr std::string_view kLayout = "9f3i";
};
BSPKIT_RECORD(dmodel_t, 48);

// ---------------------------------------------------------------------------
// Brushes (18, 19)
// ---------------------------------------------------------------------------
struct dbrush_t {
    int32_t firstside;
    int32_t numsides;
    int32_t contents;
    static constexpr std::string_view kLayout = "3i";
};
BSPKIT_RECORD(dbrush_t, 12);

/// Brush side up to v20 and in Left 4 Dead 2 ("old dbrushside_t").
struct dbrushside_t {
    uint16_t planenum;
    int16_t texinfo;
    int16_t dispinfo;
    int16_t bevel;
    static constexpr std::string_view kLayout = "4h";
};
BSPKIT_RECORD(dbrushside_t, 8);

/// Brush side of v21+ outside the L4D2 lump order (CS:GO branch): same size,
/// the short bevel split into bevel and thin bytes. Big-endian console maps
/// (x360 Orange Box, v20) also store bevel as a byte: reading it as a short
/// would give 256 for a bevel side.
struct dbrushside_v21_t {
    uint16_t planenum;
    int16_t texinfo;
    int16_t dispinfo;
    uint8_t bevel;
    uint8_t thin;  ///< any edge shorter than a step
    static constexpr std::string_view kLayout = "3h2b";
};
BSPKIT_RECORD(dbrushside_v21_t, 8);

// ---------------------------------------------------------------------------
// Areas (20, 21), clip portal verts (41)
// ---------------------------------------------------------------------------
struct darea_t {
    int32_t numareaportals;
    int32_t firstareaportal;
    static constexpr std::string_view kLayout = "2i";
};
BSPKIT_RECORD(darea_t, 8);

struct dareaportal_t {
    uint16_t m_PortalKey;
    uint16_t otherarea;
    uint16_t m_FirstClipPortalVert;  ///< index into clipportalverts
    uint16_t m_nClipPortalVerts;
    int32_t planenum;
    static constexpr std::string_view kLayout = "4hi";
};
BSPKIT_RECORD(dareaportal_t, 12);

// ---------------------------------------------------------------------------
// Displacements (26, 33, 48)
// ---------------------------------------------------------------------------
struct CDispSubNeighbor {
    uint16_t m_iNeighbor;  ///< 0xFFFF if none
    uint8_t m_NeighborOrientation;
    uint8_t m_Span;
    uint8_t m_NeighborSpan;
    uint8_t m_Padding;
};
static_assert(sizeof(CDispSubNeighbor) == 6);

struct CDispNeighbor {
    CDispSubNeighbor m_SubNeighbors[2];
};
static_assert(sizeof(CDispNeighbor) == 12);

struct CDispCornerNeighbors {
    uint16_t m_Neighbors[MAX_DISP_CORNER_NEIGHBORS];
    uint8_t m_nNeighbors;
    uint8_t m_Padding;
};
static_assert(sizeof(CDispCornerNeighbors) == 10);

struct ddispinfo_t {
    Vector startPosition;
    int32_t DispVertStart;  ///< index into disp_verts
    int32_t DispTriStart;   ///< index into disp_tris
    int32_t power;          ///< 2..4: (2^power + 1)^2 verts, 2 * (2^power)^2 tris
    int32_t minTess;
    float smoothingAngle;
    int32_t contents;
    uint16_t MapFace;  ///< the face this displacement comes from
    uint8_t m_Padding[2];
    int32_t LightmapAlphaStart;           ///< byte index into disp_lightmap_alphas
    int32_t LightmapSamplePositionStart;  ///< byte index into disp_lightmap_sample_positions
    CDispNeighbor EdgeNeighbors[4];
    CDispCornerNeighbors CornerNeighbors[4];
    uint32_t AllowedVerts[10];
    static constexpr std::string_view kLayout =
        "3f4ifih2b2i"
        "h4bh4bh4bh4bh4bh4bh4bh4b"
        "4h2b4h2b4h2b4h2b"
        "10i";

    int vert_count() const noexcept { return (power >= 0 && power < 16) ? ((1 << power) + 1) * ((1 << power) + 1) : -1; }
    int tri_count() const noexcept { return (power >= 0 && power < 16) ? 2 * (1 << power) * (1 << power) : -1; }
};
BSPKIT_RECORD(ddispinfo_t, 176);

/// Displacement flags ride in ddispinfo_t::minTess when its high bit is set
/// (DISP_INFO_FLAG_MAGIC; the SDK 2013 vbsp writes them there, older maps keep
/// a tessellation count): Hammer's per-displacement attributes, the bits of a
/// VMF dispinfo's "flags". CS:GO-branch maps add HAS_MULTIBLEND beside them.
inline constexpr uint32_t DISP_INFO_FLAG_HAS_MULTIBLEND = 0x40000000;
inline constexpr uint32_t DISP_INFO_FLAG_MAGIC = 0x80000000;
inline constexpr uint32_t DISP_FLAG_BUMPED = 0x1;
inline constexpr uint32_t DISP_FLAG_NO_PHYSICS_COLL = 0x2;  ///< physics objects pass through
inline constexpr uint32_t DISP_FLAG_NO_HULL_COLL = 0x4;     ///< players and NPCs (box traces) pass through
inline constexpr uint32_t DISP_FLAG_NO_RAY_COLL = 0x8;      ///< rays (line traces: bullets) pass through
/// The DISP_FLAG_* bits of a displacement (0 when minTess holds none).
inline uint32_t disp_flags(const ddispinfo_t& d) noexcept {
    const uint32_t m = uint32_t(d.minTess);
    return (m & DISP_INFO_FLAG_MAGIC) ? m & (DISP_FLAG_BUMPED | DISP_FLAG_NO_PHYSICS_COLL | DISP_FLAG_NO_HULL_COLL |
                                             DISP_FLAG_NO_RAY_COLL)
                                      : 0;
}

struct dDispVert {
    Vector m_vVector;
    float m_flDist;
    float m_flAlpha;
    static constexpr std::string_view kLayout = "5f";
};
BSPKIT_RECORD(dDispVert, 20);

struct dDispTri {
    uint16_t m_uiTags;  ///< DISPTRI_TAG_*
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dDispTri, 2);

// ---------------------------------------------------------------------------
// Lighting: worldlights (15, 54), ambient lighting (51, 52, 55, 56)
// ---------------------------------------------------------------------------
enum emittype_t : int32_t {
    emit_surface, emit_point, emit_spotlight, emit_skylight, emit_quakelight, emit_skyambient,
};

/// Lump version 0 world light (HL2, SDK 2013).
struct dworldlight_t {
    Vector origin;
    Vector intensity;
    Vector normal;
    int32_t cluster;
    int32_t type;  ///< emittype_t
    int32_t style;
    float stopdot, stopdot2;
    float exponent;
    float radius;
    float constant_attn, linear_attn, quadratic_attn;
    int32_t flags;    ///< DWL_FLAGS_*
    int32_t texinfo;
    int32_t owner;
    static constexpr std::string_view kLayout = "9f3i7f3i";
};
BSPKIT_RECORD(dworldlight_t, 88);

/// Lump version 1 world light (Left 4 Dead onwards, consoles, CS:GO): adds
/// shadow_cast_offset after normal.
struct dworldlight_v1_t {
    Vector origin;
    Vector intensity;
    Vector normal;
    Vector shadow_cast_offset;
    int32_t cluster;
    int32_t type;
    int32_t style;
    float stopdot, stopdot2;
    float exponent;
    float radius;
    float constant_attn, linear_attn, quadratic_attn;
    int32_t flags;
    int32_t texinfo;
    int32_t owner;
    static constexpr std::string_view kLayout = "12f3i7f3i";
};
BSPKIT_RECORD(dworldlight_v1_t, 100);

struct dleafambientindex_t {
    uint16_t ambientSampleCount;
    uint16_t firstAmbientSample;
    static constexpr std::string_view kLayout = "2h";
};
BSPKIT_RECORD(dleafambientindex_t, 4);

struct dleafambientlighting_t {
    CompressedLightCube cube;
    uint8_t x, y, z;  ///< fixed-point fractions of the leaf bounds
    uint8_t pad;
    static constexpr std::string_view kLayout = "28b";
};
BSPKIT_RECORD(dleafambientlighting_t, 28);

// ---------------------------------------------------------------------------
// Water, primitives, cubemaps, overlays (36-39, 42, 45, 46, 50, 60, 61)
// ---------------------------------------------------------------------------
struct dleafwaterdata_t {
    float surfaceZ;
    float minZ;
    int16_t surfaceTexInfoID;
    int16_t padding;
    static constexpr std::string_view kLayout = "ffhh";
};
BSPKIT_RECORD(dleafwaterdata_t, 12);

struct dleafmindisttowater_t {
    uint16_t dist;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dleafmindisttowater_t, 2);

struct dprimitive_t {
    uint8_t type;  ///< PRIM_TRILIST, PRIM_TRISTRIP
    uint8_t padding;
    uint16_t firstIndex;
    uint16_t indexCount;
    uint16_t firstVert;
    uint16_t vertCount;
    static constexpr std::string_view kLayout = "2b4h";
};
BSPKIT_RECORD(dprimitive_t, 10);

struct dprimvert_t {
    Vector pos;
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(dprimvert_t, 12);

struct dprimindex_t {
    uint16_t index;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dprimindex_t, 2);

struct dcubemapsample_t {
    int32_t origin[3];
    int32_t size;  ///< 0 = default
    static constexpr std::string_view kLayout = "4i";
};
BSPKIT_RECORD(dcubemapsample_t, 16);

struct doverlay_t {
    int32_t nId;
    int16_t nTexInfo;
    uint16_t m_nFaceCountAndRenderOrder;  ///< low 14 bits face count, top 2 render order
    int32_t aFaces[OVERLAY_BSP_FACE_COUNT];
    float flU[2];
    float flV[2];
    Vector vecUVPoints[4];
    Vector vecOrigin;
    Vector vecBasisNormal;
    static constexpr std::string_view kLayout = "i2h64i22f";

    int face_count() const noexcept { return m_nFaceCountAndRenderOrder & 0x3fff; }
    int render_order() const noexcept { return m_nFaceCountAndRenderOrder >> 14; }
};
BSPKIT_RECORD(doverlay_t, 352);

struct dwateroverlay_t {
    int32_t nId;
    int16_t nTexInfo;
    uint16_t m_nFaceCountAndRenderOrder;
    int32_t aFaces[WATEROVERLAY_BSP_FACE_COUNT];
    float flU[2];
    float flV[2];
    Vector vecUVPoints[4];
    Vector vecOrigin;
    Vector vecBasisNormal;
    static constexpr std::string_view kLayout = "i2h256i22f";

    int face_count() const noexcept { return m_nFaceCountAndRenderOrder & 0x3fff; }
};
BSPKIT_RECORD(dwateroverlay_t, 1120);

struct doverlayfade_t {
    float flFadeDistMinSq;
    float flFadeDistMaxSq;
    static constexpr std::string_view kLayout = "2f";
};
BSPKIT_RECORD(doverlayfade_t, 8);

struct doverlaysystemlevel_t {
    uint8_t nMinCPULevel, nMaxCPULevel, nMinGPULevel, nMaxGPULevel;
    static constexpr std::string_view kLayout = "4b";
};
BSPKIT_RECORD(doverlaysystemlevel_t, 4);

// ---------------------------------------------------------------------------
// Vertex normals (30, 31), map flags (59)
// ---------------------------------------------------------------------------
struct dvertnormalindex_t {
    uint16_t index;  ///< into vertnormals
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dvertnormalindex_t, 2);

struct dflagslump_t {
    uint32_t m_LevelFlags;  ///< LVLFLAGS_*
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dflagslump_t, 4);

// ---------------------------------------------------------------------------
// Variable-layout lumps: occlusion (9), visibility (4), physcollide (29)
// ---------------------------------------------------------------------------
/// Occluder of occlusion lump version 0 (no area).
struct doccluderdata_v0_t {
    int32_t flags;
    int32_t firstpoly;
    int32_t polycount;
    Vector mins, maxs;
    static constexpr std::string_view kLayout = "3i6f";
};
BSPKIT_RECORD(doccluderdata_v0_t, 36);

/// Occluder of occlusion lump version 1 and later.
struct doccluderdata_t {
    int32_t flags;
    int32_t firstpoly;  ///< index into doccluderpolydata_t
    int32_t polycount;
    Vector mins, maxs;
    int32_t area;
    static constexpr std::string_view kLayout = "3i6fi";
};
BSPKIT_RECORD(doccluderdata_t, 40);

struct doccluderpolydata_t {
    int32_t firstvertexindex;  ///< index into the occluder vertex indices
    int32_t vertexcount;
    int32_t planenum;
    static constexpr std::string_view kLayout = "3i";
};
BSPKIT_RECORD(doccluderpolydata_t, 12);

/// The decoded occlusion lump (doccluder_t): three counted arrays.
/// Version 0 occluders are widened to doccluderdata_t with area = 0.
struct Occlusion {
    int lump_version = 0;
    std::vector<doccluderdata_t> occluders;
    std::vector<doccluderpolydata_t> polys;
    std::vector<int32_t> vertex_indices;  ///< into vertexes
};
/// Parses an occlusion lump; throws Error (naming the byte offset inside the
/// lump) when a count runs past its end.
Occlusion parse_occlusion(ByteSpan lump, ByteOrder order, int lump_version, const Location& where);

/// The visibility lump header (dvis_t): cluster count and, per cluster, the
/// byte offsets of its compressed PVS and PAS from the start of the lump.
struct VisHeader {
    int32_t numclusters = 0;
    std::vector<std::array<int32_t, 2>> bitofs;  ///< [cluster][DVIS_PVS = 0, DVIS_PAS = 1]
};
/// Parses the header; throws Error when the count is negative or the offset
/// table does not fit in the lump. An empty lump gives numclusters = 0.
VisHeader parse_vis_header(ByteSpan lump, ByteOrder order, const Location& where);

struct dphysmodel_t {
    int32_t modelIndex;   ///< -1 ends the list
    int32_t dataSize;     ///< bytes of collision data (solidCount size-prefixed blobs)
    int32_t keydataSize;  ///< bytes of the text section after them
    int32_t solidCount;
    static constexpr std::string_view kLayout = "4i";
};
BSPKIT_RECORD(dphysmodel_t, 16);

/// One model of the physcollide lump and where its data lies in the lump.
struct PhysModel {
    dphysmodel_t header;
    size_t offset = 0;  ///< of the header inside the lump
};
/// Walks the physcollide lump's model list; throws Error when a header or
/// its data runs past the end. Stops at the modelIndex -1 terminator.
std::vector<PhysModel> parse_physcollide(ByteSpan lump, ByteOrder order, const Location& where);

// ---------------------------------------------------------------------------
// The typed view
// ---------------------------------------------------------------------------

/// How one lump is decoded by Map.
struct LumpLayout {
    std::string_view record;  ///< struct name ("dface_t"), empty when kept raw
    uint32_t size = 0;        ///< bytes per record, 0 when variable or raw
    std::string note;         ///< why this struct, or why the lump stays raw
    bool raw() const noexcept { return record.empty(); }
};

/// Typed, lazily decoded view of a Source map. Holds a reference to `bsp`,
/// which must outlive it. Every accessor decodes its lump on first use (thread
/// safe) and returns an empty span when the lump is absent.
class Map {
public:
    /// Throws Error when `bsp` is not a Source map.
    explicit Map(const Bsp& bsp);
    Map(Map&&) noexcept;
    Map& operator=(Map&&) noexcept;
    ~Map();

    const Bsp& bsp() const noexcept { return *bsp_; }
    int version() const noexcept { return version_; }
    /// True for the Left 4 Dead 2 lump_t order.
    bool l4d2() const noexcept;
    /// Per-lump version from the directory.
    int lump_version(size_t index) const;
    /// Which struct decodes lump `index` in this map, or why it stays raw.
    LumpLayout layout_of(size_t index) const;
    /// A lump's decoded bytes (for raw lumps).
    ByteSpan raw(size_t index) const { return bsp_->decoded(index); }
    /// Number of records of a fixed-size lump (0 when raw or absent).
    size_t count(size_t index) const;

    std::string_view entities() const;
    std::span<const dplane_t> planes() const;
    std::span<const dtexdata_t> texdata() const;
    std::span<const dvertex_t> vertexes() const;
    std::span<const dnode_t> nodes() const;
    std::span<const texinfo_t> texinfo() const;
    /// Faces as dface_t; v17 faces are converted (first four styles kept,
    /// numPrims/firstPrimID 0). faces_v17() has the records as stored.
    std::span<const dface_t> faces() const;
    std::span<const dface_v17_t> faces_v17() const;
    std::span<const dface_t> originalfaces() const;
    std::span<const dface_v17_t> originalfaces_v17() const;
    std::span<const dface_t> faces_hdr() const;
    /// The face lump nodes, leaffaces, models and overlays index: faces, or
    /// faces_hdr in HDR-only (console) maps whose faces lump is empty.
    size_t world_face_lump() const;
    /// The records of world_face_lump().
    std::span<const dface_t> world_faces() const;
    std::span<const ColorRGBExp32> lighting() const;
    std::span<const ColorRGBExp32> lighting_hdr() const;
    /// Leafs as dleaf_t (version 0 leafs without their ambient cube);
    /// leafs_version_0() has the 56-byte records when the lump is version 0.
    std::span<const dleaf_t> leafs() const;
    std::span<const dleaf_version_0_t> leafs_version_0() const;
    std::span<const dfaceid_t> faceids() const;
    std::span<const dedge_t> edges() const;
    std::span<const dsurfedge_t> surfedges() const;
    std::span<const dmodel_t> models() const;
    /// World lights widened to the version 1 struct (shadow_cast_offset 0 for
    /// lump version 0); `hdr` selects lump 54.
    std::span<const dworldlight_v1_t> worldlights(bool hdr = false) const;
    std::span<const dleafface_t> leaffaces() const;
    std::span<const dleafbrush_t> leafbrushes() const;
    std::span<const dbrush_t> brushes() const;
    /// Brush sides as dbrushside_t (bevel | thin << 8 for the byte variant);
    /// brushsides_v21() has the split fields when brushside_variant_v21():
    /// v21+ maps outside the L4D2 lump order, and big-endian maps.
    std::span<const dbrushside_t> brushsides() const;
    std::span<const dbrushside_v21_t> brushsides_v21() const;
    bool brushside_variant_v21() const noexcept;
    std::span<const darea_t> areas() const;
    std::span<const dareaportal_t> areaportals() const;
    std::span<const ddispinfo_t> dispinfo() const;
    std::span<const Vector> vertnormals() const;
    std::span<const dvertnormalindex_t> vertnormalindices() const;
    std::span<const dDispVert> disp_verts() const;
    std::span<const dleafwaterdata_t> leafwaterdata() const;
    std::span<const dprimitive_t> primitives() const;
    std::span<const dprimvert_t> primverts() const;
    std::span<const dprimindex_t> primindices() const;
    std::span<const Vector> clipportalverts() const;
    std::span<const dcubemapsample_t> cubemaps() const;
    std::string_view texdata_string_data() const;
    std::span<const dtexdatastringtable_t> texdata_string_table() const;
    std::span<const doverlay_t> overlays() const;
    std::span<const dleafmindisttowater_t> leafmindisttowater() const;
    std::span<const dfacemacrotextureinfo_t> face_macro_texture_info() const;
    std::span<const dDispTri> disp_tris() const;
    std::span<const dwateroverlay_t> wateroverlays() const;
    /// Empty before v20, where lumps 51/52 hold Xbox lightmap pages.
    std::span<const dleafambientindex_t> leaf_ambient_index(bool hdr = false) const;
    std::span<const dleafambientlighting_t> leaf_ambient_lighting(bool hdr = false) const;
    std::span<const dflagslump_t> map_flags() const;
    std::span<const doverlayfade_t> overlay_fades() const;
    std::span<const doverlaysystemlevel_t> overlay_system_levels() const;

    /// Parsed variable lumps (throw Error when malformed).
    const Occlusion& occlusion() const;
    const VisHeader& vis() const;
    std::vector<PhysModel> physcollide() const;

    /// Texture name of texdata `index` via the string table; nullopt when any
    /// reference on the way is out of range or the string is not terminated
    /// (an empty name is a name: the engine shows its error material for it).
    std::optional<std::string_view> texture_name(size_t texdata_index) const;

private:
    struct Cache;
    const Bsp* bsp_;
    int version_ = 0;
    std::unique_ptr<Cache> cache_;
};

}  // namespace bspkit::source
