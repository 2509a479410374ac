// Quake 3 (IBSP 46; Return to Castle Wolfenstein's IBSP 47 has the same lumps): 17 lumps (seed 004).
#include <bspkit/format.hpp>

namespace bspkit::layouts {
namespace {
constexpr LumpDef kQuake3[] = {
    {"entities", 0},  {"textures", 72},  {"planes", 16},   {"nodes", 36},     {"leafs", 48},
    {"leaffaces", 4}, {"leafbrushes", 4}, {"models", 40},  {"brushes", 12},   {"brushsides", 8},
    {"vertexes", 44}, {"meshverts", 4},  {"effects", 72},  {"faces", 104},    {"lightmaps", 128 * 128 * 3},
    {"lightvols", 8}, {"visdata", 0},
};
}  // namespace

const FormatLayout& quake3() {
    static const FormatLayout l{Format::quake3, "", "Quake 3 (IBSP 46) / RTCW (IBSP 47)", fourcc("IBSP"), true,
                                DirectoryLayout::offset_length, false, kQuake3};
    return l;
}
}  // namespace bspkit::layouts
