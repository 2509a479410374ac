// PNG encoding with libpng's full API (so the zlib level can be chosen) and
// decoding with its simplified API. libpng reports errors by longjmp; the
// jump lands in the function that called setjmp, whose C++ objects were all
// constructed before it, and the error becomes a bspkit::Error there.
#include <bspkit/error.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/png.hpp>

#include <png.h>
#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../core/parallel.hpp"
#include "../core/pixels.hpp"

#include <algorithm>
#include <cstdlib>
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
    // Reserved, filled as the scan goes: most large images stop at the 257th
    // colour, and a zero-filled index image touched every page of it first.
    out.indices.reserve(count);
    const uint8_t* p = pixels.data();
    uint32_t last_key = 0;
    int16_t last_value = -1;
    for (size_t i = 0; i < count; ++i, p += channels) {
        const uint32_t key = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
                             uint32_t(channels == 4 ? p[3] : 255) << 24;
        if (key == last_key && last_value >= 0) {
            out.indices.push_back(uint8_t(last_value));
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
        out.indices.push_back(uint8_t(last_value));
    }
    return out;
}

/// Whether every pixel of `pixels` (`stride` bytes each: 3 or 4) is grey:
/// R = G = B, and with `opaque` also alpha 255 (stride 4). Such an image is
/// written as grey (colour type 0), one byte a pixel and Paeth-filtered,
/// instead of through find_palette(): a Quake 1 map's grey lightmap atlas of
/// 2048 x 1155 (pd_change_dest) went through the palette scan and one deflate
/// stream unfiltered. A coloured image is usually turned down in its first
/// bytes.
bool all_grey(ByteSpan pixels, int stride, bool opaque) {
    const uint8_t* const p = pixels.data();
    const size_t n = pixels.size();
    size_t i = 0;
#if defined(__SSE2__)
    // Sixteen bytes against the same sixteen one byte on: R = G and G = B are
    // byte j equal to byte j + 1 where j is a pixel's first or second byte; the
    // positions repeat every 48 bytes (3 loads) of RGB and every load of RGBA.
    const auto load = [&](size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)); };
    const auto equal_mask = [](__m128i a, __m128i b) { return unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(a, b))); };
    if (stride == 3) {
        static constexpr unsigned kPairs[3] = {0xb6db, 0xdb6d, 0x6db6};  // bit j: (16k + j) % 3 != 2
        for (; i + 49 <= n; i += 48)
            for (unsigned k = 0; k < 3; ++k)
                if (~equal_mask(load(i + 16 * k), load(i + 16 * k + 1)) & kPairs[k]) return false;
    } else {
        const __m128i opaque_alpha = _mm_set1_epi8(char(0xff));
        for (; i + 17 <= n; i += 16) {
            const __m128i x = load(i);
            unsigned bad = ~equal_mask(x, load(i + 1)) & 0x3333u;
            if (opaque) bad |= ~equal_mask(x, opaque_alpha) & 0x8888u;
            if (bad) return false;
        }
    }
#endif
    for (; i + size_t(stride) <= n; i += size_t(stride))
        if (p[i] != p[i + 1] || p[i] != p[i + 2] || (opaque && stride == 4 && p[i + 3] != 255)) return false;
    return true;
}

/// The first byte of each of `pixels` pixels of `stride` bytes: the grey of a
/// grey RGB or RGBA image.
void first_channel(const uint8_t* from, size_t pixels, int stride, uint8_t* grey) {
    for (size_t p = 0; p < pixels; ++p) grey[p] = from[p * size_t(stride)];
}

// --- Large images: filtered and deflated in bands on every core -------------

/// zlib's strategy for a level: level 1 deflates runs only (Z_RLE: matches at
/// distance one, no string search). On the Paeth-filtered rows of baked
/// textures and lightmaps it is both faster and smaller than level 1's string
/// matching (the images of cs16_de_torabora's glb 3.94 -> 3.33 MB, pd_change_dest's
/// baked texture 330 -> 200 KB); palette textures come out within a few percent,
/// in half the time. Other levels keep the default strategy.
int zlib_strategy(int level) { return level == 1 ? Z_RLE : Z_DEFAULT_STRATEGY; }

/// Raw image bytes from which encode_png() takes the banded path: a lightmap
/// atlas of 512 x 324 (vtmb_ch_temple_3, 0.5 MB) took 5-11.5 ms in one stream,
/// the longest step of that map's export.
constexpr uint64_t kBandedMinBytes = uint64_t(1) << 18;
/// Filtered bytes per band (whole rows; at least one row): a quarter of the
/// image, between 128 KiB and 512 KiB. Each band starts a new dictionary, so
/// they are not made smaller than they need to be to share the work.
uint64_t band_bytes(uint64_t image_bytes) {
    return std::clamp<uint64_t>(image_bytes / 4, uint64_t(1) << 17, uint64_t(1) << 19);
}

/// Adler-32 of x followed by y, from their Adler-32s and y's length: for the
/// sums A = 1 + the bytes and B = the A after each byte (both mod 65521),
/// A(xy) = A(x) + A(y) - 1 and B(xy) = B(x) + B(y) + |y| (A(x) - 1). (zlib's
/// adler32_combine takes a z_off_t, whose size the WebAssembly zlib build does
/// not agree on.)
uint32_t adler32_concat(uint32_t x, uint32_t y, uint64_t y_length) {
    constexpr uint64_t kMod = 65521;
    const uint64_t ax = x & 0xffff, bx = x >> 16, ay = y & 0xffff, by = y >> 16;
    const uint64_t a = (ax + ay + kMod - 1) % kMod;
    const uint64_t b = (bx + by + (y_length % kMod) * ((ax + kMod - 1) % kMod)) % kMod;
    return uint32_t(a | b << 16);
}

void put_be32(Bytes& out, uint32_t v) {
    const uint8_t b[4] = {uint8_t(v >> 24), uint8_t(v >> 16), uint8_t(v >> 8), uint8_t(v)};
    out.insert(out.end(), b, b + 4);
}

void put_chunk(Bytes& out, const char type[4], ByteSpan head, ByteSpan data, ByteSpan tail) {
    put_be32(out, uint32_t(head.size() + data.size() + tail.size()));
    const size_t crc_from = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), head.begin(), head.end());
    out.insert(out.end(), data.begin(), data.end());
    out.insert(out.end(), tail.begin(), tail.end());
    put_be32(out, uint32_t(crc32(0, out.data() + crc_from, uInt(out.size() - crc_from))));
}

/// One row with PNG filter 4 (Paeth), the one filter the small images get
/// from libpng too: out = filter byte + row_bytes bytes. Choosing per row
/// among Sub, Up and Paeth by libpng's heuristic made files only 0.1-0.6%
/// smaller (glb of 7 corpus maps) for 5-16% of the export's time on maps
/// with a baked texture (pd_change_dest, cs16_de_torabora).
void filter_row(const uint8_t* row, const uint8_t* prior, size_t row_bytes, int bpp, uint8_t* out) {
    out[0] = 4;
    uint8_t* const filtered = out + 1;
    const size_t left = std::min(row_bytes, size_t(bpp));
    const auto paeth = [](int a, int b, int c) {
        const int pp = a + b - c, pa = std::abs(pp - a), pb = std::abs(pp - b), pc = std::abs(pp - c);
        return (pa <= pb && pa <= pc) ? a : pb <= pc ? b : c;
    };
    // The first texel has no left neighbour (a = c = 0).
    for (size_t i = 0; i < left; ++i) filtered[i] = uint8_t(row[i] - paeth(0, prior ? prior[i] : 0, 0));
    size_t i = left;
#if defined(__SSE2__)
    // Sixteen bytes at a time, the same predictor in 16-bit lanes: pa = |b - c|,
    // pb = |a - c|, pc = |a + b - 2c| (p = a + b - c), a taken on ties with b and c,
    // then b on a tie with c, as above. Filtering reads only unfiltered bytes, so
    // the lanes are independent.
    const __m128i zero = _mm_setzero_si128();
    const auto abs16 = [](__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); };
    const auto predict8 = [&](__m128i a, __m128i b, __m128i c) {
        const __m128i pa = abs16(_mm_sub_epi16(b, c)), pb = abs16(_mm_sub_epi16(a, c));
        const __m128i pc = abs16(_mm_sub_epi16(_mm_add_epi16(a, b), _mm_add_epi16(c, c)));
        const __m128i take_a = _mm_andnot_si128(_mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc)),
                                                _mm_set1_epi16(-1));
        const __m128i take_b = _mm_andnot_si128(_mm_or_si128(take_a, _mm_cmpgt_epi16(pb, pc)), _mm_set1_epi16(-1));
        const __m128i take_c = _mm_andnot_si128(_mm_or_si128(take_a, take_b), _mm_set1_epi16(-1));
        return _mm_or_si128(_mm_or_si128(_mm_and_si128(take_a, a), _mm_and_si128(take_b, b)), _mm_and_si128(take_c, c));
    };
    const auto load = [](const uint8_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    for (; i + 16 <= row_bytes; i += 16) {
        const __m128i x = load(row + i), a = load(row + i - size_t(bpp));
        __m128i predicted = a;  // the first row: b = c = 0 predicts a (the Sub filter)
        if (prior) {
            const __m128i b = load(prior + i), c = load(prior + i - size_t(bpp));
            predicted = _mm_packus_epi16(
                predict8(_mm_unpacklo_epi8(a, zero), _mm_unpacklo_epi8(b, zero), _mm_unpacklo_epi8(c, zero)),
                predict8(_mm_unpackhi_epi8(a, zero), _mm_unpackhi_epi8(b, zero), _mm_unpackhi_epi8(c, zero)));
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(filtered + i), _mm_sub_epi8(x, predicted));
    }
#endif
    for (; i < row_bytes; ++i)
        filtered[i] = uint8_t(row[i] - paeth(row[i - size_t(bpp)], prior ? prior[i] : 0,
                                             prior ? prior[i - size_t(bpp)] : 0));
}

/// An 8-bit non-palette PNG whose rows are filtered and deflated in bands on
/// every core: each band is a raw deflate stream of its own, ended by a sync
/// flush (the last by the end of the stream), and their concatenation after
/// the zlib header, with the Adler-32 of all the filtered bytes combined from
/// the bands', is the image's zlib stream, one IDAT chunk per band. A band
/// does not see the bytes before it (a little size for the speed). Bands are
/// cut by row count alone, so the bytes do not depend on the thread count
/// (the single-threaded WebAssembly build writes the same file).
///
/// `source_channels` (channels unless given): the bytes per pixel of `pixels`,
/// either `channels`, or 4 with channels 3 (an RGBA image's colour alone, its
/// alpha dropped), or 3 or 4 with channels 1 (a grey image's first channel):
/// each row taken out of the source as the band is filtered, with no copy of
/// the image made.
Bytes encode_png_banded(uint32_t width, uint32_t height, int channels, ByteSpan pixels, int level,
                        int source_channels = 0) {
    if (source_channels == 0) source_channels = channels;
    if (source_channels != channels && !(source_channels == 4 && channels == 3) &&
        !(source_channels >= 3 && channels == 1))
        throw std::invalid_argument("encode_png_banded: " + std::to_string(source_channels) + " source channels for " +
                                    std::to_string(channels));
    static constexpr uint8_t kColorType[] = {0, 4, 2, 6};  // grey, grey + alpha, RGB, RGBA
    const size_t row_bytes = size_t(width) * size_t(channels);
    const size_t rows_per_band =
        size_t(std::max<uint64_t>(1, band_bytes(uint64_t(height) * (row_bytes + 1)) / (row_bytes + 1)));
    const size_t bands = (size_t(height) + rows_per_band - 1) / rows_per_band;
    struct Band {
        Bytes deflated;
        uLong adler = 1;
        uint64_t length = 0;
        bool failed = false;
    };
    std::vector<Band> out_bands(bands);
    detail::parallel_for(bands, 0, [&](size_t b) {
        Band& band = out_bands[b];
        const size_t y0 = b * rows_per_band, y1 = std::min<size_t>(height, y0 + rows_per_band);
        // The filtered rows and the deflate output in buffers each thread keeps from
        // band to band: fresh ones for every band were most of a baked texture's
        // page faults (two bands' worth of new memory per band).
        thread_local Bytes filtered, deflated, row, prior_row;
        filtered.resize((y1 - y0) * (row_bytes + 1));
        const size_t source_row_bytes = size_t(width) * size_t(source_channels);
        // Row y of the image in `channels` bytes per pixel: in place, or taken out
        // of the source's pixels into `into`.
        const auto image_row = [&](size_t y, Bytes& into) -> const uint8_t* {
            const uint8_t* from = pixels.data() + y * source_row_bytes;
            if (source_channels == channels) return from;
            into.resize(row_bytes);
            if (channels == 1)
                first_channel(from, width, source_channels, into.data());
            else
                drop_alpha(from, width, into.data());
            return into.data();
        };
        const uint8_t* prior = y0 > 0 ? image_row(y0 - 1, prior_row) : nullptr;
        for (size_t y = y0; y < y1; ++y) {
            const uint8_t* current = image_row(y, row);
            filter_row(current, prior, row_bytes, channels, filtered.data() + (y - y0) * (row_bytes + 1));
            if (source_channels != channels) {
                row.swap(prior_row);  // this row is the next one's prior
                prior = prior_row.data();
            } else {
                prior = current;
            }
        }
        band.length = filtered.size();
        band.adler = adler32(1, filtered.data(), uInt(filtered.size()));
        z_stream z{};
        if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, zlib_strategy(level)) != Z_OK) {
            band.failed = true;
            return;
        }
        deflated.resize(deflateBound(&z, uLong(filtered.size())) + 64);
        z.next_in = filtered.data();
        z.avail_in = uInt(filtered.size());
        z.next_out = deflated.data();
        z.avail_out = uInt(deflated.size());
        const int flush = b + 1 == bands ? Z_FINISH : Z_SYNC_FLUSH;
        const int ret = deflate(&z, flush);
        band.failed = z.avail_in != 0 || (flush == Z_FINISH ? ret != Z_STREAM_END : ret != Z_OK);
        band.deflated.assign(deflated.begin(), deflated.end() - std::ptrdiff_t(z.avail_out));
        deflateEnd(&z);
    });
    uint32_t adler = 1;
    size_t total = 0;
    for (const Band& band : out_bands) {
        if (band.failed) throw Error({"", "png", -1}, "PNG encoding failed: zlib could not deflate a band of rows");
        adler = adler32_concat(adler, uint32_t(band.adler), band.length);
        total += band.deflated.size();
    }
    static constexpr uint8_t kSignature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    Bytes out(std::begin(kSignature), std::end(kSignature));
    out.reserve(total + 64 + 12 * bands);
    Bytes ihdr;
    put_be32(ihdr, width);
    put_be32(ihdr, height);
    for (const uint8_t v : {uint8_t(8), kColorType[channels - 1], uint8_t(0), uint8_t(0), uint8_t(0)}) ihdr.push_back(v);
    put_chunk(out, "IHDR", {}, ihdr, {});
    // zlib header: deflate with a 32 KiB window, the level's class, a check making it a multiple of 31.
    const int level_class = level <= 1 ? 0 : level <= 5 ? 1 : level == 6 ? 2 : 3;
    uint8_t zheader[2] = {0x78, uint8_t(level_class << 6)};
    zheader[1] = uint8_t(zheader[1] + 31 - (zheader[0] * 256 + zheader[1]) % 31);
    uint8_t ztail[4];
    for (int i = 0; i < 4; ++i) ztail[i] = uint8_t(adler >> (24 - 8 * i));
    for (size_t b = 0; b < bands; ++b)
        put_chunk(out, "IDAT", b == 0 ? ByteSpan(zheader) : ByteSpan(), out_bands[b].deflated,
                  b + 1 == bands ? ByteSpan(ztail) : ByteSpan());
    put_chunk(out, "IEND", {}, {}, {});
    return out;
}

/// libpng writing `rows` into `out`: its errors (a longjmp back here, where
/// every C++ object was made before the setjmp) become a bspkit::Error.
/// `plte` null: no palette.
void run_libpng(Bytes& out, uint32_t width, uint32_t height, int color_type, png_bytepp rows, const png_color* plte,
                int plte_count, const png_byte* trns, int trns_count, int compression) {
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
    png_set_compression_strategy(png, zlib_strategy(std::clamp(compression, 0, 9)));
    png_set_filter(png, PNG_FILTER_TYPE_BASE, plte ? PNG_FILTER_NONE : PNG_FILTER_PAETH);
    png_set_IHDR(png, info, width, height, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (plte) {
        png_set_PLTE(png, info, plte, plte_count);
        if (trns_count) png_set_tRNS(png, info, trns, trns_count, nullptr);
    }
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
}

/// The PNG of a checked image through libpng: with `paletted`'s palette and
/// indices when given (then `pixels` is not read), else the `channels`-byte
/// pixels Paeth-filtered on every row.
Bytes libpng_encode(uint32_t width, uint32_t height, int channels, ByteSpan pixels, int compression,
                    const Paletted* paletted) {
    static constexpr int kColorType[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                         PNG_COLOR_TYPE_RGB_ALPHA};
    const uint64_t stride = uint64_t(width) * uint64_t(channels);
    const uint8_t* rows_from = paletted ? paletted->indices.data() : pixels.data();
    const uint64_t row_bytes = paletted ? width : stride;
    Bytes out;
    out.reserve(size_t(std::min<uint64_t>(stride * height / 4 + 1024, uint64_t(1) << 26)));
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
    run_libpng(out, width, height, paletted ? PNG_COLOR_TYPE_PALETTE : kColorType[channels - 1], rows.data(),
               paletted ? plte.data() : nullptr, paletted ? int(paletted->colors.size()) : 0, trns.data(), trns_count,
               compression);
    return out;
}

/// The PNG of a grey image given as `stride`-byte pixels (3 or 4; see
/// all_grey()): colour type 0, banded when large, else through libpng from a
/// grey copy.
Bytes encode_grey_png(uint32_t width, uint32_t height, ByteSpan pixels, int stride, int compression) {
    const size_t count = size_t(width) * height;
    if (count >= kBandedMinBytes) return encode_png_banded(width, height, 1, pixels, std::clamp(compression, 0, 9), stride);
    Bytes grey(count);
    first_channel(pixels.data(), count, stride, grey.data());
    return libpng_encode(width, height, 1, grey, compression, nullptr);
}

}  // namespace

Bytes encode_opaque_rgba_png(uint32_t width, uint32_t height, ByteSpan rgba, int compression) {
    if (width == 0 || height == 0 || width > kPngMaxDimension || height > kPngMaxDimension ||
        rgba.size() != uint64_t(width) * height * 4)
        return encode_png(width, height, 4, rgba, compression);  // its own error for the same arguments
    // With alpha 255 everywhere, the RGBA pixels' grey or palette (if any) is the
    // one encode_png() finds in the RGB copy: found once, and used as it is.
    if (all_grey(rgba, 4, false)) return encode_grey_png(width, height, rgba, 4, compression);
    const std::optional<Paletted> paletted = find_palette(width, height, 4, rgba);
    if (paletted) return libpng_encode(width, height, 3, {}, compression, &*paletted);
    if (uint64_t(width) * height * 3 >= kBandedMinBytes)
        return encode_png_banded(width, height, 3, rgba, std::clamp(compression, 0, 9), 4);
    Bytes rgb(size_t(width) * height * 3);
    drop_alpha(rgba.data(), size_t(width) * height, rgb.data());
    return libpng_encode(width, height, 3, rgb, compression, nullptr);
}

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
    // Grey RGB and opaque grey RGBA images are written as grey (colour type 0),
    // a third or a quarter of the data to compress. Other images of at most
    // 256 colours are written with a palette (colour type 3): a quarter of the
    // data, and smaller files. Others are filtered with Paeth on every row (see
    // filter_row()), which suits lightmaps and photographic textures.
    if (channels >= 3 && all_grey(pixels, channels, true))
        return encode_grey_png(width, height, pixels, channels, compression);
    const std::optional<Paletted> paletted = find_palette(width, height, channels, pixels);
    if (!paletted && pixels.size() >= kBandedMinBytes)
        return encode_png_banded(width, height, channels, pixels, std::clamp(compression, 0, 9));
    return libpng_encode(width, height, channels, pixels, compression, paletted ? &*paletted : nullptr);
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
