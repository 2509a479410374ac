// 8-bit palette indices to RGBA, shared by the embedded miptex decoder
// (src/formats/quake1) and the texture search path (src/textures: WAD, WAL).
#pragma once

#include <cstdint>

namespace bspkit {

/// `pixels` indices from `src` into RGBA at `dst` through a 256 x RGB
/// palette; with `cutout` ('{' textures) index 255 is transparent black.
inline void indexed_to_rgba(const uint8_t* src, uint64_t pixels, const uint8_t* palette, bool cutout, uint8_t* dst) {
    for (uint64_t p = 0; p < pixels; ++p, dst += 4) {
        const uint8_t index = src[p];
        if (cutout && index == 255) {
            dst[0] = dst[1] = dst[2] = dst[3] = 0;
            continue;
        }
        dst[0] = palette[index * 3];
        dst[1] = palette[index * 3 + 1];
        dst[2] = palette[index * 3 + 2];
        dst[3] = 255;
    }
}

}  // namespace bspkit
