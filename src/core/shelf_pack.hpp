// Rectangles placed on shelves: the lightmap atlas (src/model) and the baked
// texture (src/export) both pack their images this way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

namespace bspkit::detail {

struct ShelfSize {
    uint32_t width = 0, height = 0;
};
struct ShelfPlace {
    uint32_t x = 0, y = 0;
};

/// Places sizes[i] for each i of `order` left to right on shelves `width`
/// wide, a new shelf (as tall as its tallest) when the next one would pass
/// `width`; out[i] is its top-left corner. Returns the height used. Callers
/// pass `order` tallest first, and no size wider than `width`.
inline uint64_t shelf_pack(std::span<const ShelfSize> sizes, std::span<const size_t> order, uint32_t width,
                           std::span<ShelfPlace> out) {
    uint64_t x = 0, y = 0, shelf = 0;
    for (const size_t i : order) {
        const ShelfSize s = sizes[i];
        if (x + s.width > width) {
            x = 0;
            y += shelf;
            shelf = 0;
        }
        out[i] = {uint32_t(x), uint32_t(y)};
        x += s.width;
        shelf = std::max<uint64_t>(shelf, s.height);
    }
    return y + shelf;
}

}  // namespace bspkit::detail
