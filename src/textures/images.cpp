// Quake 2 WAL + PCX palette, and TGA / JPEG / PNG through stb_image
// (Debian libstb-dev: header only, compiled here, three formats only).
#include "records.hpp"

#include <bspkit/textures.hpp>

#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_TGA
#define STBI_NO_STDIO
#define STBI_MAX_DIMENSIONS 8192
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-function"
#elif defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#endif
#include <stb_image.h>
#if defined(__clang__)
#pragma clang diagnostic pop
#elif defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <climits>
#include <memory>

namespace bspkit::textures {

std::array<uint8_t, 768> pcx_palette(ByteSpan data, const std::string& name) {
    // 128-byte header (manufacturer 0x0A), RLE pixels, then 0x0C and 256 RGB triplets.
    if (data.size() < 128 + 769 || data[0] != 0x0A)
        throw Error({name, "", 0}, "not a PCX file with a 256-colour palette (" + std::to_string(data.size()) + " bytes)");
    const size_t at = data.size() - 769;
    if (data[at] != 0x0C)
        throw Error({name, "", int64_t(at)}, "no 256-colour palette marker (0x0C) 769 bytes before the end");
    std::array<uint8_t, 768> palette{};
    std::copy(data.begin() + ptrdiff_t(at + 1), data.end(), palette.begin());
    return palette;
}

model::Texture decode_pcx(ByteSpan data, const std::string& name) {
    const std::array<uint8_t, 768> palette = pcx_palette(data, name);  // checks the header's first byte and the size
    const auto u16 = [&](size_t at) { return uint32_t(data[at]) | uint32_t(data[at + 1]) << 8; };
    // Quake 2's LoadPCX checks neither the planes byte nor the row length:
    // 0 planes is taken for 1, and rows shorter than the window for none.
    if (data[2] != 1 || data[3] != 8 || data[65] > 1)
        throw Error({name, "", 2}, "not an 8-bit run-length PCX with one plane (encoding " + std::to_string(data[2]) +
                                       ", " + std::to_string(data[3]) + " bits, " + std::to_string(data[65]) +
                                       " planes)");
    const uint32_t x0 = u16(4), y0 = u16(6), x1 = u16(8), y1 = u16(10);
    if (x1 < x0 || y1 < y0 || x1 - x0 + 1 > kMaxSide || y1 - y0 + 1 > kMaxSide)
        throw Error({name, "", 4}, "PCX window " + std::to_string(x0) + "," + std::to_string(y0) + " - " +
                                       std::to_string(x1) + "," + std::to_string(y1) + " is not 1.." +
                                       std::to_string(kMaxSide) + " on a side");
    const uint32_t w = x1 - x0 + 1, h = y1 - y0 + 1;
    const uint32_t line = std::max(u16(66), w);  // bytes a row takes, padding included
    // The run-length stream, row after row of `line` bytes (a run may go on
    // into the next row), between the header and the palette.
    const size_t end = data.size() - 769;
    std::vector<uint8_t> indices(size_t(line) * h);
    size_t at = 128, out = 0;
    while (out < indices.size()) {
        if (at >= end)
            throw Error({name, "", int64_t(at)}, "PCX pixels end after " + std::to_string(out) + " of " +
                                                     std::to_string(indices.size()) + " bytes");
        uint8_t value = data[at++];
        size_t run = 1;
        if ((value & 0xC0) == 0xC0) {
            run = value & 0x3F;
            if (at >= end) throw Error({name, "", int64_t(at)}, "PCX run without its value");
            value = data[at++];
        }
        run = std::min(run, indices.size() - out);
        std::fill_n(indices.begin() + ptrdiff_t(out), run, value);
        out += run;
    }
    model::Texture tex;
    tex.name = name;
    tex.width = w;
    tex.height = h;
    tex.rgba.resize(size_t(w) * h * 4);
    for (uint32_t y = 0; y < h; ++y)
        indexed_to_rgba(&indices[size_t(y) * line], w, palette.data(), false, &tex.rgba[size_t(y) * w * 4]);
    return tex;
}

model::Texture decode_wal(ByteSpan data, const std::array<uint8_t, 768>& palette, const std::string& name) {
    const auto h = record_at<miptex_wal_t>(data, 0, name, "WAL header");
    if (h.width == 0 || h.height == 0 || h.width > kMaxSide || h.height > kMaxSide)
        throw Error({name, "", 32}, "WAL size " + std::to_string(h.width) + " x " + std::to_string(h.height) +
                                        " is not 1.." + std::to_string(kMaxSide));
    const uint64_t pixels = uint64_t(h.width) * h.height;
    if (uint64_t(h.offsets[0]) + pixels > data.size())
        throw Error({name, "", 40}, "mip level 0 (" + std::to_string(pixels) + " bytes at offset " +
                                        std::to_string(h.offsets[0]) + ") runs past the end of the " +
                                        std::to_string(data.size()) + "-byte file");
    model::Texture tex;
    tex.name = field_name(h.name);
    tex.width = h.width;
    tex.height = h.height;
    tex.rgba.resize(pixels * 4);
    indexed_to_rgba(data.data() + h.offsets[0], pixels, palette.data(), false, tex.rgba.data());
    return tex;
}

namespace {

/// A TGA must hold all its pixels: stb_image reads zeros past the end of a
/// truncated one. Uncompressed (types 1-3, as q3map2 writes lightmap pages):
/// the pixel bytes; run-length coded (types 9-11): packets for every pixel.
void require_whole_tga(ByteSpan data, int w, int h, const std::string& name) {
    if (data.size() < 18) return;
    const uint8_t type = data[2];
    const bool rle = type >= 9 && type <= 11;
    if (!(type >= 1 && type <= 3) && !rle) return;  // not a TGA (PNG and JPEG have other bytes there)
    const uint64_t colormap = data[1] == 1 ? uint64_t(data[5] | data[6] << 8) * ((data[7] + 7u) / 8) : 0;
    const uint64_t pixels_at = 18 + uint64_t(data[0]) + colormap;
    const uint64_t bytes_per_pixel = (data[16] + 7u) / 8, pixels = uint64_t(w) * uint64_t(h);
    if (!rle) {
        if (data.size() < pixels_at + pixels * bytes_per_pixel)
            throw Error({name, "", int64_t(data.size())},
                        "truncated TGA: " + std::to_string(w) + " x " + std::to_string(h) + " pixels need " +
                            std::to_string(pixels_at + pixels * bytes_per_pixel) + " bytes, the file has " +
                            std::to_string(data.size()));
        return;
    }
    // Each packet takes at least one byte: at most the file's size in steps.
    uint64_t at = pixels_at, had = 0;
    while (had < pixels) {
        const uint64_t count = at < data.size() ? (data[at] & 0x7fu) + 1 : 0;
        const uint64_t bytes = at < data.size() ? 1 + (data[at] & 0x80 ? 1 : count) * bytes_per_pixel : 1;
        if (at + bytes > data.size())
            throw Error({name, "", int64_t(data.size())},
                        "truncated TGA: its run-length packets end after " + std::to_string(had) + " of " +
                            std::to_string(w) + " x " + std::to_string(h) + " pixels (the file has " +
                            std::to_string(data.size()) + " bytes)");
        at += bytes;
        had += count;
    }
}

/// A JPEG must reach its end-of-image marker (FF D9) after its first scan.
/// stb_image refuses a truncated one too, but as "expected marker" at no
/// particular place; this names the cause and the file's end. Markers are
/// walked up to the first scan (an EXIF thumbnail before it has an end of its
/// own); after it, FF D9 is that marker only (the coded data stuffs FF with 00).
void require_whole_jpeg(ByteSpan data, const std::string& name) {
    if (data.size() < 4 || data[0] != 0xFF || data[1] != 0xD8) return;
    size_t at = 2;
    while (at + 4 <= data.size() && data[at] == 0xFF) {
        const uint8_t marker = data[at + 1];
        if (marker == 0xFF) {  // fill byte
            ++at;
            continue;
        }
        if (marker == 0xDA) break;  // the first scan
        at += 2 + size_t(data[at + 2] << 8 | data[at + 3]);
    }
    for (size_t i = at; i + 1 < data.size(); ++i)
        if (data[i] == 0xFF && data[i + 1] == 0xD9) return;
    throw Error({name, "", int64_t(data.size())},
                "truncated JPEG: no end-of-image marker after its image data (the file has " +
                    std::to_string(data.size()) + " bytes)");
}

}  // namespace

model::Texture decode_image(ByteSpan data, const std::string& name) {
    if (data.size() > size_t(INT_MAX)) throw Error({name, "", 0}, "image of 2 GiB or more");
    int w = 0, h = 0, channels = 0;
    if (!stbi_info_from_memory(data.data(), int(data.size()), &w, &h, &channels))
        throw Error({name, "", 0}, std::string("not a readable TGA, JPEG or PNG image: ") + stbi_failure_reason());
    if (w <= 0 || h <= 0 || uint32_t(w) > kMaxSide || uint32_t(h) > kMaxSide)
        throw Error({name, "", 0}, "image size " + std::to_string(w) + " x " + std::to_string(h) + " is not 1.." +
                                       std::to_string(kMaxSide));
    require_whole_tga(data, w, h, name);
    require_whole_jpeg(data, name);
    std::unique_ptr<stbi_uc, void (*)(void*)> pixels(stbi_load_from_memory(data.data(), int(data.size()), &w, &h,
                                                                           &channels, 4),
                                                     stbi_image_free);
    if (!pixels) throw Error({name, "", 0}, std::string("image does not decode: ") + stbi_failure_reason());
    model::Texture tex;
    tex.name = name;
    tex.width = uint32_t(w);
    tex.height = uint32_t(h);
    tex.rgba.assign(pixels.get(), pixels.get() + size_t(w) * size_t(h) * 4);
    return tex;
}

}  // namespace bspkit::textures
