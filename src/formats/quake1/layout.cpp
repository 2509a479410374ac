// Quake 1 (v29), BSP2 / 2PSB and GoldSrc (v30, Blue Shift) lump tables.
#include <bspkit/format.hpp>

namespace bspkit::layouts {
namespace {

// id's bspfile.h order; GoldSrc keeps it. Record sizes of the 16-bit formats.
constexpr LumpDef kQuake1[] = {
    {"entities", 0},     {"planes", 20},   {"textures", 0},  {"vertexes", 12}, {"visibility", 0},
    {"nodes", 24},       {"texinfo", 40},  {"faces", 20},    {"lighting", 0},  {"clipnodes", 8},
    {"leafs", 28},       {"marksurfaces", 2}, {"edges", 4},  {"surfedges", 4}, {"models", 64},
};

// BSP2: 32-bit indices and float bounds.
constexpr LumpDef kBsp2[] = {
    {"entities", 0},     {"planes", 20},   {"textures", 0},  {"vertexes", 12}, {"visibility", 0},
    {"nodes", 44},       {"texinfo", 40},  {"faces", 28},    {"lighting", 0},  {"clipnodes", 12},
    {"leafs", 44},       {"marksurfaces", 4}, {"edges", 8},  {"surfedges", 4}, {"models", 64},
};

// 2PSB (early RMQ): 32-bit indices, 16-bit bounds.
constexpr LumpDef k2psb[] = {
    {"entities", 0},     {"planes", 20},   {"textures", 0},  {"vertexes", 12}, {"visibility", 0},
    {"nodes", 32},       {"texinfo", 40},  {"faces", 28},    {"lighting", 0},  {"clipnodes", 12},
    {"leafs", 32},       {"marksurfaces", 4}, {"edges", 8},  {"surfedges", 4}, {"models", 64},
};

// Blue Shift stores planes first and entities second.
constexpr LumpDef kBlueShift[] = {
    {"planes", 20},      {"entities", 0},  {"textures", 0},  {"vertexes", 12}, {"visibility", 0},
    {"nodes", 24},       {"texinfo", 40},  {"faces", 20},    {"lighting", 0},  {"clipnodes", 8},
    {"leafs", 28},       {"marksurfaces", 2}, {"edges", 4},  {"surfedges", 4}, {"models", 64},
};

}  // namespace

const FormatLayout& quake1() {
    static const FormatLayout l{Format::quake1, "", "Quake (BSP 29)", 0, true,
                                DirectoryLayout::offset_length, false, kQuake1};
    return l;
}
const FormatLayout& bsp2() {
    static const FormatLayout l{Format::bsp2, "BSP2", "Quake BSP2", fourcc("BSP2"), false,
                                DirectoryLayout::offset_length, false, kBsp2};
    return l;
}
const FormatLayout& bsp2_2psb() {
    static const FormatLayout l{Format::bsp2, "2PSB", "Quake 2PSB (early BSP2)", fourcc("2PSB"), false,
                                DirectoryLayout::offset_length, false, k2psb};
    return l;
}
const FormatLayout& goldsrc() {
    static const FormatLayout l{Format::goldsrc, "", "GoldSrc (Half-Life, BSP 30)", 0, true,
                                DirectoryLayout::offset_length, false, kQuake1};
    return l;
}
const FormatLayout& goldsrc_bshift() {
    static const FormatLayout l{Format::goldsrc, "bshift", "GoldSrc, Blue Shift lump order", 0, true,
                                DirectoryLayout::offset_length, false, kBlueShift};
    return l;
}

}  // namespace bspkit::layouts
