// PNG encoding with libpng's full API (so the zlib level can be chosen) and
// decoding with its simplified API. libpng reports errors by longjmp; the
// jump lands in the function that called setjmp, whose C++ objects were all
// constructed before it, and the error becomes a bspkit::Error there.
#include <bspkit/error.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/png.hpp>

#include <png.h>

#include <algorithm>
#include <array>
#include <optional>
#include <csetjmp>
#include <cstring>
#include <stdexcept>
#include <string>

namespace bspkit {
namespace {

constexpr uint32_t kPngMaxDimension = 0x7fffffffu;  // PNG spec: 2^31 - 1
constexpr uint64_t kDecodeMaxPixels = uint64_t(1) << 28;  // 1 GiB of RGBA: refuse beyond

struct WriteState {
    Bytes* out = nullptr;
    bool out_of_memory = false;
    char message[256] = {};
};

void on_error(png_structp png, png_const_charp message) {
    auto* state = static_cast<WriteState*>(png_get_error_ptr(png));
    if (state) std::snprintf(state->message, sizeof state->message, "%s", message ? message : "libpng error");
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void on_write(png_structp png, png_bytep data, png_size_t length) {
    auto* state = static_cast<WriteState*>(png_get_io_ptr(png));
    try {
        state->out->insert(state->out->end(), data, data + length);
    } catch (const std::bad_alloc&) {
        state->out_of_memory = true;
    }
    if (state->out_of_memory) png_error(png, "out of memory");  // after the catch block: no exception is live
}

void on_flush(png_structp) {}

/// Palette of an image with at most 256 distinct pixel values (the common case
/// for Quake-family textures, which come from a palette): palette entries as
/// RGBA and one index byte per pixel. Empty when the image has more colours.
struct Paletted {
    std::vector<std::array<uint8_t, 4>> colors;
    Bytes indices;
};

std::optional<Paletted> find_palette(uint32_t width, uint32_t height, int channels, ByteSpan pixels) {
    if (channels < 3) return std::nullopt;  // grey images gain nothing from a palette
    constexpr size_t kSlots = 1024;  // open addressing, at most 256 used
    std::array<uint32_t, kSlots> keys;
    std::array<int16_t, kSlots> values;
    values.fill(-1);
    Paletted out;
    const size_t count = size_t(width) * height;
    out.indices.resize(count);
    const uint8_t* p = pixels.data();
    uint32_t last_key = 0;
    int16_t last_value = -1;
    for (size_t i = 0; i < count; ++i, p += channels) {
        const uint32_t key = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                             uint32_t(channels == 4 ? p[3] : 255) << 24;
        if (key == last_key && last_value >= 0) {
            out.indices[i] = uint8_t(last_value);
            continue;
        }
        size_t slot = (key * 2654435761u) >> 22;  // top 10 bits
        while (values[slot] >= 0 && keys[slot] != key) slot = (slot + 1) % kSlots;
        if (values[slot] < 0) {
            if (out.colors.size() == 256) return std::nullopt;
            keys[slot] = key;
            values[slot] = int16_t(out.colors.size());
            out.colors.push_back({uint8_t(key), uint8_t(key >> 8), uint8_t(key >> 16), uint8_t(key >> 24)});
        }
        last_key = key;
        last_value = values[slot];
        out.indices[i] = uint8_t(last_value);
    }
    return out;
}

}  // namespace

Bytes encode_png(uint32_t width, uint32_t height, int channels, ByteSpan pixels, int compression) {
    if (width == 0 || height == 0 || width > kPngMaxDimension || height > kPngMaxDimension)
        throw std::invalid_argument("encode_png: image size " + std::to_string(width) + "x" + std::to_string(height) +
                                    " is not a valid PNG size");
    if (channels < 1 || channels > 4)
        throw std::invalid_argument("encode_png: " + std::to_string(channels) + " channels (1 to 4 allowed)");
    const uint64_t stride = uint64_t(width) * uint64_t(channels);
    if (pixels.size() != stride * height)
        throw std::invalid_argument("encode_png: " + std::to_string(pixels.size()) + " bytes of pixels for " +
                                    std::to_string(width) + "x" + std::to_string(height) + "x" +
                                    std::to_string(channels));
    static constexpr int kColorType[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                         PNG_COLOR_TYPE_RGB_ALPHA};

    // Images of at most 256 colours are written with a palette (colour type 3):
    // a quarter of the data to compress, and smaller files. Others are
    // filtered per row (Sub, Up or Paeth; trying every filter costs more than
    // it saves), which suits lightmaps and photographic textures.
    const std::optional<Paletted> paletted = find_palette(width, height, channels, pixels);
    const uint8_t* rows_from = paletted ? paletted->indices.data() : pixels.data();
    const uint64_t row_bytes = paletted ? width : stride;
    Bytes out;
    out.reserve(size_t(std::min<uint64_t>(pixels.size() / 4 + 1024, uint64_t(1) << 26)));
    std::vector<png_bytep> rows(height);
    for (uint32_t y = 0; y < height; ++y) rows[y] = const_cast<png_bytep>(rows_from + row_bytes * y);
    std::array<png_color, 256> plte{};
    std::array<png_byte, 256> trns{};
    int trns_count = 0;
    if (paletted) {
        for (size_t i = 0; i < paletted->colors.size(); ++i) {
            plte[i] = {paletted->colors[i][0], paletted->colors[i][1], paletted->colors[i][2]};
            trns[i] = paletted->colors[i][3];
            if (trns[i] != 255) trns_count = int(i) + 1;
        }
    }
    WriteState state;
    state.out = &out;

    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &state, on_error, on_warning);
    if (!png) throw Error({"", "png", -1}, "cannot create a libpng writer");
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, nullptr);
        throw Error({"", "png", -1}, "cannot create a libpng writer");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        if (state.out_of_memory) throw std::bad_alloc();
        throw Error({"", "png", -1}, std::string("PNG encoding failed: ") + state.message);
    }
    png_set_write_fn(png, &state, on_write, on_flush);
    png_set_compression_level(png, std::clamp(compression, 0, 9));
    png_set_filter(png, PNG_FILTER_TYPE_BASE,
                   paletted ? PNG_FILTER_NONE : PNG_FILTER_SUB | PNG_FILTER_UP | PNG_FILTER_PAETH);
    png_set_IHDR(png, info, width, height, 8, paletted ? PNG_COLOR_TYPE_PALETTE : kColorType[channels - 1],
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (paletted) {
        png_set_PLTE(png, info, plte.data(), int(paletted->colors.size()));
        if (trns_count) png_set_tRNS(png, info, trns.data(), trns_count, nullptr);
    }
    png_write_info(png, info);
    png_write_image(png, rows.data());
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return out;
}

void write_png(const std::filesystem::path& path, uint32_t width, uint32_t height, int channels, ByteSpan pixels,
               int compression) {
    write_file_atomic(path, encode_png(width, height, channels, pixels, compression));
}

DecodedPng decode_png(ByteSpan data) {
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data.data(), data.size()))
        throw Error({"", "png", -1}, std::string("not a readable PNG: ") + image.message);
    if (uint64_t(image.width) * image.height > kDecodeMaxPixels) {
        png_image_free(&image);
        throw Error({"", "png", -1}, "PNG of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                                         " pixels is too large to decode");
    }
    image.format = PNG_FORMAT_RGBA;
    DecodedPng out;
    out.width = image.width;
    out.height = image.height;
    out.rgba.resize(PNG_IMAGE_SIZE(image));
    if (!png_image_finish_read(&image, nullptr, out.rgba.data(), 0, nullptr)) {
        const std::string message = image.message;
        png_image_free(&image);
        throw Error({"", "png", -1}, "PNG decoding failed: " + message);
    }
    return out;
}

}  // namespace bspkit
