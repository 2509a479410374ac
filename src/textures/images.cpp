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

/// An uncompressed TGA (types 1-3, as q3map2 writes lightmap pages) must hold
/// all its pixels: stb_image reads zeros past the end of a truncated one.
void require_whole_tga(ByteSpan data, int w, int h, const std::string& name) {
    if (data.size() < 18 || !(data[2] >= 1 && data[2] <= 3)) return;  // not TGA, or run-length coded
    const uint64_t colormap = data[1] == 1 ? uint64_t(data[5] | data[6] << 8) * ((data[7] + 7u) / 8) : 0;
    const uint64_t pixels_at = 18 + uint64_t(data[0]) + colormap;
    const uint64_t pixel_bytes = uint64_t(w) * uint64_t(h) * ((data[16] + 7u) / 8);
    if (data.size() < pixels_at + pixel_bytes)
        throw Error({name, "", int64_t(data.size())},
                    "truncated TGA: " + std::to_string(w) + " x " + std::to_string(h) + " pixels need " +
                        std::to_string(pixels_at + pixel_bytes) + " bytes, the file has " + std::to_string(data.size()));
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
