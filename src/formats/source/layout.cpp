// Source VBSP 17-23 (and big-endian PSBV): 64 lumps (seeds 000 and 002).
// Per-version record sizes live here, not in code paths.
#include <bspkit/format.hpp>

namespace bspkit::layouts {
namespace {

constexpr uint32_t kVar = kVariableUnderRule;

// dface_t is 104 bytes in v17 (Bloodlines), 56 later. dleaf_t carries
// ambient lighting (56 bytes) in lump version 0 of v18+, not in v17 or version 1.
constexpr SizeRule kV17(uint32_t bytes) { return {0, 17, -1, bytes}; }

constexpr LumpDef kSource[] = {
    /* 0 */ {"entities", 0},
    /* 1 */ {"planes", 20},
    /* 2 */ {"texdata", 32},
    /* 3 */ {"vertexes", 12},
    /* 4 */ {"visibility", 0},
    /* 5 */ {"nodes", 32},
    /* 6 */ {"texinfo", 72},
    /* 7 */ {"faces", 56, {kV17(104)}},
    /* 8 */ {"lighting", 4},
    /* 9 */ {"occlusion", 0},
    /* 10 */ {"leafs", 32, {kV17(32), SizeRule{18, INT32_MAX, 0, 56}}},
    /* 11 */ {"faceids", 2},
    /* 12 */ {"edges", 4},
    /* 13 */ {"surfedges", 4},
    /* 14 */ {"models", 48},
    /* 15 */ {"worldlights", 88, {SizeRule{0, INT32_MAX, 1, 100}}},  // dworldlight_t grew in lump version 1
    /* 16 */ {"leaffaces", 2},
    /* 17 */ {"leafbrushes", 2},
    /* 18 */ {"brushes", 12},
    /* 19 */ {"brushsides", 8},
    /* 20 */ {"areas", 8},
    /* 21 */ {"areaportals", 12},
    /* 22 */ {"portals", 0},         // v17-19 portals; unused0 / propcollision later
    /* 23 */ {"clusters", 0},        // unused1 / prophulls later
    /* 24 */ {"portalverts", 0},     // unused2 / fakeentities / prophullverts later
    /* 25 */ {"clusterportals", 0},  // unused3 / proptris later
    /* 26 */ {"dispinfo", 176},
    /* 27 */ {"originalfaces", 56, {kV17(104)}},
    /* 28 */ {"physdisp", 0},
    /* 29 */ {"physcollide", 0},
    /* 30 */ {"vertnormals", 12},
    /* 31 */ {"vertnormalindices", 2},
    /* 32 */ {"disp_lightmap_alphas", 0},
    /* 33 */ {"disp_verts", 20},
    /* 34 */ {"disp_lightmap_sample_positions", 0},
    /* 35 */ {"game_lump", 0},
    /* 36 */ {"leafwaterdata", 12},
    /* 37 */ {"primitives", 10},
    /* 38 */ {"primverts", 12},
    /* 39 */ {"primindices", 2},
    /* 40 */ {"pakfile", 0},
    /* 41 */ {"clipportalverts", 12},
    /* 42 */ {"cubemaps", 16},
    /* 43 */ {"texdata_string_data", 0},
    /* 44 */ {"texdata_string_table", 4},
    /* 45 */ {"overlays", 352},
    /* 46 */ {"leafmindisttowater", 2},
    /* 47 */ {"face_macro_texture_info", 2},
    /* 48 */ {"disp_tris", 2},
    /* 49 */ {"physcollidesurface", 0},  // prop_blob in later branches
    /* 50 */ {"wateroverlays", 1120},
    /* 51 */ {"leaf_ambient_index_hdr", 4, {SizeRule{0, 19, -1, kVar}}},  // lightmappages before v20
    /* 52 */ {"leaf_ambient_index", 4, {SizeRule{0, 19, -1, kVar}}},      // lightmappageinfos before v20
    /* 53 */ {"lighting_hdr", 4},
    /* 54 */ {"worldlights_hdr", 88, {SizeRule{0, INT32_MAX, 1, 100}}},
    /* 55 */ {"leaf_ambient_lighting_hdr", 28},
    /* 56 */ {"leaf_ambient_lighting", 28},
    /* 57 */ {"xzippakfile", 0},
    /* 58 */ {"faces_hdr", 56},
    /* 59 */ {"map_flags", 4},
    /* 60 */ {"overlay_fades", 8},
    /* 61 */ {"overlay_system_levels", 4},
    /* 62 */ {"physlevel", 0},
    /* 63 */ {"disp_multiblend", 0},
};
static_assert(sizeof(kSource) / sizeof(kSource[0]) == 64);

}  // namespace

const FormatLayout& source() {
    static const FormatLayout l{Format::source, "", "Source (VBSP)", fourcc("VBSP"), true,
                                DirectoryLayout::source, true, kSource};
    return l;
}
const FormatLayout& source_l4d2() {
    static const FormatLayout l{Format::source, "l4d2", "Source (VBSP, Left 4 Dead 2 lump_t order)",
                                fourcc("VBSP"), true, DirectoryLayout::source_l4d2, true, kSource};
    return l;
}

}  // namespace bspkit::layouts
