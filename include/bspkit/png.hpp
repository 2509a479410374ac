// PNG encoding (libpng) for exporters and the image-writing verbs.
//
//   bspkit::Bytes png = bspkit::encode_png(w, h, 4, rgba);   // 8 bits per channel
//   bspkit::write_png("lightmap.png", w, h, 3, rgb);          // temp file + rename
//
// Pixels are rows top to bottom, `channels` bytes per pixel: 1 grey, 2 grey +
// alpha, 3 RGB, 4 RGBA. Throws std::invalid_argument when the size does not
// match w * h * channels or a dimension is 0 / above the PNG limit, and
// bspkit::Error when libpng or the file system fails.
#pragma once

#include <bspkit/bytes.hpp>

#include <cstdint>
#include <filesystem>

namespace bspkit {

/// zlib level of encode_png when none is given: fast, still small for
/// lightmaps and palette textures (level 9 buys a few percent for 3x the time).
inline constexpr int kPngDefaultCompression = 3;

/// Encodes 8-bit pixels as a PNG file in memory. `compression` is zlib's
/// level 0-9; level 1 deflates runs only (Z_RLE), which suits the filtered
/// rows of lightmaps and baked textures better than level 1's string search.
/// The file is as small a kind as holds the pixels exactly: grey RGB and
/// opaque grey RGBA as grey, other images of at most 256 colours with a
/// palette, the rest as given.
Bytes encode_png(uint32_t width, uint32_t height, int channels, ByteSpan pixels,
                 int compression = kPngDefaultCompression);

/// encode_png() of an RGBA image whose alpha is 255 everywhere, as RGB (the
/// same file as encode_png() of its RGB bytes), without an RGB copy of a
/// large image: its rows are taken out as they are filtered.
Bytes encode_opaque_rgba_png(uint32_t width, uint32_t height, ByteSpan rgba,
                             int compression = kPngDefaultCompression);

/// encode_png() written atomically (write_file_atomic) to `path`.
void write_png(const std::filesystem::path& path, uint32_t width, uint32_t height, int channels, ByteSpan pixels,
               int compression = kPngDefaultCompression);

/// Decodes a PNG (any bit depth / colour type) to 8-bit RGBA. For tests and
/// tools that read back what they wrote. Throws Error for a broken file.
struct DecodedPng {
    uint32_t width = 0, height = 0;
    Bytes rgba;
};
DecodedPng decode_png(ByteSpan png);

}  // namespace bspkit
