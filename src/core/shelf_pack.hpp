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

struct ShelfPacking {
    uint64_t width = 0, height = 0;
};

/// shelf_pack() at the narrowest power-of-two width, from `min_width` up,
/// that holds the widest size and the sizes' area as a square, doubled while
/// the shelves come out taller than wide and the width is at most
/// `max_width` / 2. The width and the height used.
inline ShelfPacking shelf_pack_square(std::span<const ShelfSize> sizes, std::span<const size_t> order,
                                      uint64_t min_width, uint64_t max_width, std::span<ShelfPlace> out) {
    uint64_t area = 0, widest = 0;
    for (const ShelfSize s : sizes) {
        area += uint64_t(s.width) * s.height;
        widest = std::max<uint64_t>(widest, s.width);
    }
    ShelfPacking p{std::max<uint64_t>(min_width, 1), 0};
    while (p.width < widest || p.width * p.width < area) p.width *= 2;
    p.height = shelf_pack(sizes, order, uint32_t(p.width), out);
    while (p.height > p.width && p.width * 2 <= max_width) {
        p.width *= 2;
        p.height = shelf_pack(sizes, order, uint32_t(p.width), out);
    }
    return p;
}

}  // namespace bspkit::detail
