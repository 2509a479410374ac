// Pixel layout conversions shared by the PNG writer (src/export) and the
// texture search path (src/textures: external lightmap pages).
#pragma once

#include <cstddef>
#include <cstdint>

namespace bspkit {

/// The RGB of `pixels` RGBA pixels (byte by byte: a 3-byte copy_n is a
/// memmove call per pixel).
inline void drop_alpha(const uint8_t* rgba, size_t pixels, uint8_t* rgb) {
    for (size_t p = 0; p < pixels; ++p) {
        rgb[p * 3] = rgba[p * 4];
        rgb[p * 3 + 1] = rgba[p * 4 + 1];
        rgb[p * 3 + 2] = rgba[p * 4 + 2];
    }
}

}  // namespace bspkit
