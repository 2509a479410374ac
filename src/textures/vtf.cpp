// Source VTF 7.0-7.5 textures: mip 0 of the first frame, face and slice.
//
// Header (vtfheader_t, 63 bytes; 7.2 adds uint16 depth at 63, 7.3 adds 3
// padding bytes and uint32 numResources at 68, then 8 padding bytes and
// numResources 8-byte entries at 80). High-resolution data: 7.3+ at the
// offset of resource tag {0x30,0,0}; before, after headerSize and the
// low-resolution thumbnail. It is ordered by mip level from the smallest to
// the largest, then frame, face, slice: mip 0 of frame 0 is the last level.
#include "records.hpp"

#include <bspkit/textures.hpp>

#include <algorithm>

namespace bspkit::textures {

namespace {

enum Format : uint32_t {
    RGBA8888 = 0, ABGR8888 = 1, RGB888 = 2, BGR888 = 3, RGB565 = 4, I8 = 5, IA88 = 6, P8 = 7, A8 = 8,
    RGB888_BLUESCREEN = 9, BGR888_BLUESCREEN = 10, ARGB8888 = 11, BGRA8888 = 12, DXT1 = 13, DXT3 = 14, DXT5 = 15,
    BGRX8888 = 16, BGR565 = 17, BGRX5551 = 18, BGRA4444 = 19, DXT1_ONEBITALPHA = 20, BGRA5551 = 21, UV88 = 22,
    UVWQ8888 = 23, RGBA16161616F = 24, RGBA16161616 = 25, UVLX8888 = 26, kFormatCount = 27
};

constexpr const char* kFormatNames[kFormatCount] = {
    "RGBA8888", "ABGR8888", "RGB888", "BGR888", "RGB565", "I8", "IA88", "P8", "A8", "RGB888_BLUESCREEN",
    "BGR888_BLUESCREEN", "ARGB8888", "BGRA8888", "DXT1", "DXT3", "DXT5", "BGRX8888", "BGR565", "BGRX5551",
    "BGRA4444", "DXT1_ONEBITALPHA", "BGRA5551", "UV88", "UVWQ8888", "RGBA16161616F", "RGBA16161616", "UVLX8888"};

std::string format_name(uint32_t f) {
    return f < kFormatCount ? kFormatNames[f] : "format " + std::to_string(int32_t(f));
}

/// Bytes per pixel of the uncompressed formats (0: block-compressed or unknown).
uint32_t pixel_bytes(uint32_t f) {
    switch (f) {
        case RGBA8888: case ABGR8888: case ARGB8888: case BGRA8888: case BGRX8888: case UVWQ8888: case UVLX8888:
            return 4;
        case RGB888: case BGR888: case RGB888_BLUESCREEN: case BGR888_BLUESCREEN: return 3;
        case RGB565: case BGR565: case BGRX5551: case BGRA4444: case BGRA5551: case IA88: case UV88: return 2;
        case I8: case P8: case A8: return 1;
        case RGBA16161616F: case RGBA16161616: return 8;
        default: return 0;
    }
}

/// Bytes of one w x h image, or 0 for an unknown format.
uint64_t image_bytes(uint32_t f, uint64_t w, uint64_t h) {
    if (f == DXT1 || f == DXT1_ONEBITALPHA) return ((w + 3) / 4) * ((h + 3) / 4) * 8;
    if (f == DXT3 || f == DXT5) return ((w + 3) / 4) * ((h + 3) / 4) * 16;
    return uint64_t(pixel_bytes(f)) * w * h;
}

uint8_t expand(uint32_t v, int bits) {
    const uint32_t max = (1u << bits) - 1;
    return uint8_t((v * 255 + max / 2) / max);
}

void colour565(uint16_t c, uint8_t* rgb) {
    rgb[0] = expand(c >> 11, 5);
    rgb[1] = expand((c >> 5) & 63, 6);
    rgb[2] = expand(c & 31, 5);
}

/// One 8-byte DXT colour block into 16 RGBA pixels; `dxt1` allows the
/// 3-colour + transparent mode.
void colour_block(const uint8_t* b, bool dxt1, uint8_t out[16][4]) {
    const uint16_t c0 = load<uint16_t>(b), c1 = load<uint16_t>(b + 2);
    uint8_t palette[4][4];
    colour565(c0, palette[0]);
    colour565(c1, palette[1]);
    palette[0][3] = palette[1][3] = palette[2][3] = palette[3][3] = 255;
    if (c0 > c1 || !dxt1) {
        for (int k = 0; k < 3; ++k) {
            palette[2][k] = uint8_t((2 * palette[0][k] + palette[1][k] + 1) / 3);
            palette[3][k] = uint8_t((palette[0][k] + 2 * palette[1][k] + 1) / 3);
        }
    } else {
        for (int k = 0; k < 3; ++k) {
            palette[2][k] = uint8_t((palette[0][k] + palette[1][k]) / 2);
            palette[3][k] = 0;
        }
        palette[3][3] = 0;
    }
    const uint32_t bits = load<uint32_t>(b + 4);
    for (int i = 0; i < 16; ++i) std::copy_n(palette[(bits >> (2 * i)) & 3], 4, out[i]);
}

void decode_dxt(uint32_t format, const uint8_t* src, uint32_t w, uint32_t h, uint8_t* rgba) {
    const uint32_t bw = (w + 3) / 4, bh = (h + 3) / 4;
    const size_t block = format == DXT3 || format == DXT5 ? 16 : 8;
    uint8_t px[16][4];
    for (uint32_t by = 0; by < bh; ++by) {
        for (uint32_t bx = 0; bx < bw; ++bx, src += block) {
            const uint8_t* colour = block == 16 ? src + 8 : src;
            colour_block(colour, block == 8, px);
            if (format == DXT3) {
                for (int i = 0; i < 16; ++i) px[i][3] = expand((src[i / 2] >> (4 * (i & 1))) & 15, 4);
            } else if (format == DXT5) {
                uint8_t a[8];
                a[0] = src[0];
                a[1] = src[1];
                if (a[0] > a[1]) {
                    for (int k = 1; k < 7; ++k) a[k + 1] = uint8_t(((7 - k) * a[0] + k * a[1] + 3) / 7);
                } else {
                    for (int k = 1; k < 5; ++k) a[k + 1] = uint8_t(((5 - k) * a[0] + k * a[1] + 2) / 5);
                    a[6] = 0;
                    a[7] = 255;
                }
                uint64_t bits = 0;
                for (int k = 0; k < 6; ++k) bits |= uint64_t(src[2 + k]) << (8 * k);
                for (int i = 0; i < 16; ++i) px[i][3] = a[(bits >> (3 * i)) & 7];
            }
            for (int i = 0; i < 16; ++i) {
                const uint32_t x = bx * 4 + uint32_t(i % 4), y = by * 4 + uint32_t(i / 4);
                if (x < w && y < h) std::copy_n(px[i], 4, rgba + (size_t(y) * w + x) * 4);
            }
        }
    }
}

void decode_plain(uint32_t f, const uint8_t* s, uint64_t pixels, uint8_t* d) {
    for (uint64_t p = 0; p < pixels; ++p, d += 4) {
        uint8_t r = 0, g = 0, b = 0, a = 255;
        switch (f) {
            case RGBA8888: r = s[0]; g = s[1]; b = s[2]; a = s[3]; s += 4; break;
            case ABGR8888: a = s[0]; b = s[1]; g = s[2]; r = s[3]; s += 4; break;
            case ARGB8888: a = s[0]; r = s[1]; g = s[2]; b = s[3]; s += 4; break;
            case BGRA8888: b = s[0]; g = s[1]; r = s[2]; a = s[3]; s += 4; break;
            case BGRX8888: b = s[0]; g = s[1]; r = s[2]; s += 4; break;
            case RGB888: r = s[0]; g = s[1]; b = s[2]; s += 3; break;
            case BGR888: b = s[0]; g = s[1]; r = s[2]; s += 3; break;
            case I8: r = g = b = s[0]; s += 1; break;
            case IA88: r = g = b = s[0]; a = s[1]; s += 2; break;
            case A8: r = g = b = 0; a = s[0]; s += 1; break;
            default: {
                // 16-bit formats, little-endian words; the name lists channels from the low bits up.
                const uint16_t v = load<uint16_t>(s);
                s += 2;
                switch (f) {
                    case RGB565: r = expand(v & 31, 5); g = expand((v >> 5) & 63, 6); b = expand(v >> 11, 5); break;
                    case BGR565: b = expand(v & 31, 5); g = expand((v >> 5) & 63, 6); r = expand(v >> 11, 5); break;
                    case BGRA4444:
                        b = expand(v & 15, 4); g = expand((v >> 4) & 15, 4); r = expand((v >> 8) & 15, 4);
                        a = expand(v >> 12, 4);
                        break;
                    case BGRA5551:
                    case BGRX5551:
                        b = expand(v & 31, 5); g = expand((v >> 5) & 31, 5); r = expand((v >> 10) & 31, 5);
                        a = f == BGRA5551 ? (v >> 15 ? 255 : 0) : 255;
                        break;
                    default: break;
                }
            }
        }
        d[0] = r;
        d[1] = g;
        d[2] = b;
        d[3] = a;
    }
}

bool decodable(uint32_t f) {
    switch (f) {
        case RGBA8888: case ABGR8888: case RGB888: case BGR888: case RGB565: case I8: case IA88: case A8:
        case ARGB8888: case BGRA8888: case DXT1: case DXT3: case DXT5: case BGRX8888: case BGR565: case BGRX5551:
        case BGRA4444: case DXT1_ONEBITALPHA: case BGRA5551:
            return true;
        default: return false;
    }
}

}  // namespace

model::Texture decode_vtf(ByteSpan data, const std::string& name) {
    auto fail = [&](int64_t at, const std::string& why) -> model::Texture { throw Error({name, "", at}, why); };
    const auto h = record_at<vtfheader_t>(data, 0, name, "VTF header");
    if (std::string_view(h.signature, 4) == "VTFX")
        return fail(0, "Xbox 360 / PS3 VTFX texture (big-endian, compressed mips): not read");
    if (std::string_view(h.signature, 4) != std::string_view("VTF\0", 4)) return fail(0, "not a VTF file (no \"VTF\\0\")");
    if (h.version[0] != 7 || h.version[1] > 5)
        return fail(4, "VTF version " + std::to_string(h.version[0]) + "." + std::to_string(h.version[1]) +
                           " (7.0-7.5 are read)");
    const uint32_t minor = h.version[1];
    if (h.width == 0 || h.height == 0 || h.width > kMaxSide || h.height > kMaxSide)
        return fail(16, "size " + std::to_string(h.width) + " x " + std::to_string(h.height) + " is not 1.." +
                            std::to_string(kMaxSide));
    const uint32_t format = h.highResImageFormat;
    if (!decodable(format)) return fail(52, "image format " + format_name(format) + " is not decoded");
    const uint32_t mips = std::max<uint32_t>(1, h.mipmapCount);
    if (mips > 16) return fail(56, std::to_string(mips) + " mip levels (at most 16 for 8192 pixels)");
    const uint32_t frames = std::max<uint32_t>(1, h.frames);
    constexpr uint32_t kEnvmap = 0x4000;
    uint32_t faces = 1;
    if (h.flags & kEnvmap) faces = (minor < 5 && h.firstFrame != 0xFFFF) ? 7 : 6;
    uint32_t depth = 1;
    if (minor >= 2) depth = std::max<uint16_t>(1, record_at<uint16_t>(data, 63, name, "VTF depth"));
    if (depth > kMaxSide) return fail(63, "depth " + std::to_string(depth));

    uint64_t high_start = 0;
    if (minor >= 3) {
        const uint32_t count = record_at<uint32_t>(data, 68, name, "VTF resource count");
        if (count > 32) return fail(68, std::to_string(count) + " resources (at most 32)");
        bool found = false;
        for (uint32_t i = 0; i < count; ++i) {
            const auto r = record_at<vtfresource_t>(data, 80 + uint64_t(i) * 8, name, "VTF resource entry");
            if (r.tag[0] == 0x30 && r.tag[1] == 0 && r.tag[2] == 0) {
                high_start = r.offset;
                found = true;
                break;
            }
        }
        if (!found) return fail(80, "no high-resolution image resource (tag 0x30)");
    } else {
        const uint64_t low = h.lowResImageFormat == 0xFFFFFFFFu
                                 ? 0
                                 : image_bytes(h.lowResImageFormat, h.lowResImageWidth, h.lowResImageHeight);
        high_start = uint64_t(h.headerSize) + low;
    }
    // Skip the smaller mip levels (stored first) of every frame, face and slice.
    uint64_t offset = high_start;
    for (uint32_t mip = mips; mip-- > 1;) {
        const uint64_t w = std::max<uint64_t>(1, h.width >> mip), hh = std::max<uint64_t>(1, h.height >> mip);
        const uint64_t d = std::max<uint64_t>(1, depth >> mip);
        // Each product stays far below 2^64 while its factor fits in the file.
        uint64_t step = image_bytes(format, w, hh);
        if (step <= data.size()) step *= frames;
        if (step <= data.size()) step *= uint64_t(faces) * d;
        if (step > data.size()) {
            offset = data.size() + 1;
            break;
        }
        offset += step;
        if (offset > data.size()) break;
    }
    const uint64_t bytes = image_bytes(format, h.width, h.height);
    if (offset > data.size() || data.size() - offset < bytes)
        return fail(int64_t(std::min<uint64_t>(offset, data.size())),
                    "mip level 0 (" + format_name(format) + ", " + std::to_string(bytes) + " bytes at offset " +
                        std::to_string(offset) + ") runs past the end of the " + std::to_string(data.size()) +
                        "-byte file");
    model::Texture tex;
    tex.name = name;
    tex.width = h.width;
    tex.height = h.height;
    tex.rgba.assign(size_t(h.width) * h.height * 4, 0);
    const uint8_t* src = data.data() + offset;
    if (format == DXT1 || format == DXT1_ONEBITALPHA || format == DXT3 || format == DXT5)
        decode_dxt(format, src, h.width, h.height, tex.rgba.data());
    else
        decode_plain(format, src, uint64_t(h.width) * h.height, tex.rgba.data());
    return tex;
}

}  // namespace bspkit::textures
