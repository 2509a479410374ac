// James Bond 007: Nightfire (BSP 42): 18 lumps (seed 003).
#include <bspkit/format.hpp>

namespace bspkit::layouts {
namespace {
constexpr LumpDef kNightfire[] = {
    {"entities", 0},    {"planes", 20},     {"textures", 64},    {"materials", 64},  {"vertices", 12},
    {"zero_vertices", 12}, {"draw_indices", 4}, {"visibility", 0}, {"nodes", 36},     {"surfaces", 48},
    {"lighting", 0},    {"leaves", 48},     {"leaf_surfaces", 4}, {"leaf_brushes", 4}, {"models", 56},
    {"brushes", 12},    {"brush_sides", 8}, {"projections", 32},
};
}  // namespace

const FormatLayout& nightfire() {
    static const FormatLayout l{Format::nightfire, "", "James Bond 007: Nightfire (BSP 42)", 0, true,
                                DirectoryLayout::offset_length, false, kNightfire};
    return l;
}
}  // namespace bspkit::layouts
