// Quake 2 (IBSP 38, also Kingpin): 19 lumps, sizes from qfiles.h / seed 001.
#include <bspkit/format.hpp>

namespace bspkit::layouts {
namespace {
constexpr LumpDef kQuake2[] = {
    {"entities", 0},   {"planes", 20},    {"vertices", 12},   {"visibility", 0}, {"nodes", 28},
    {"texinfo", 76},   {"faces", 20},     {"lighting", 0},    {"leafs", 28},     {"leaffaces", 2},
    {"leafbrushes", 2}, {"edges", 4},     {"surfedges", 4},   {"models", 48},    {"brushes", 12},
    {"brushsides", 4}, {"pop", 0},        {"areas", 8},       {"areaportals", 8},
};
}  // namespace

const FormatLayout& quake2() {
    static const FormatLayout l{Format::quake2, "", "Quake 2 (IBSP 38)", fourcc("IBSP"), true,
                                DirectoryLayout::offset_length, false, kQuake2};
    return l;
}
}  // namespace bspkit::layouts
