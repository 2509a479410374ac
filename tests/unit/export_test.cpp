// Exporters on hand-built model::Map values (no geometry builder needed):
// PNG round trips, the glTF structure read back by an independent reader,
// the Khronos validator on .glb and .gltf, OBJ line counts and indices, the
// skip rules, axes, hostile models and the CLI's usage errors.
#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>
#include <bspkit/export.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/model.hpp>
#include <bspkit/png.hpp>

#include "export_readers.hpp"
#include "same_asset.hpp"
#include "gltf_validator.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

using namespace bspkit;
using bspkit::model::Vec3;
namespace fs = std::filesystem;

namespace {

constexpr double kPi = 3.14159265358979323846;

model::Vertex vert(Vec3 p, Vec3 n, model::Vec2 uv, model::Vec2 lm = {}) {
    model::Vertex v;
    v.position = p;
    v.normal = n;
    v.uv = uv;
    v.lightmap_uv = lm;
    return v;
}

/// A quad on a plane, its triangles wound CLOCKWISE seen from the normal's
/// side (as Quake stores faces), so the exporter has to turn them.
model::Surface quad(uint32_t material, Vec3 o, Vec3 u, Vec3 v, Vec3 n, int32_t lightmap) {
    model::Surface s;
    s.material = material;
    s.lightmap = lightmap;
    s.plane = model::Plane{n, float(model::dot(n, o))};
    s.vertices = {vert(o, n, {0, 0}, {0.1f, 0.1f}), vert(o + u, n, {1, 0}, {0.4f, 0.1f}),
                  vert(o + u + v, n, {1, 1}, {0.4f, 0.4f}), vert(o + v, n, {0, 1}, {0.1f, 0.4f})};
    // (o, o+u, o+u+v) is counter-clockwise about u x v; pick the order that is clockwise about n.
    const bool ccw = model::dot(model::cross(u, v), n) > 0;
    s.indices = ccw ? std::vector<uint32_t>{0, 2, 1, 0, 3, 2} : std::vector<uint32_t>{0, 1, 2, 0, 2, 3};
    return s;
}

enum Mat : uint32_t { kWall, kWindow, kClipMat, kSkipMat, kSkyMat, kTriggerMat, kFence, kWaterMat, kMatCount };

model::Map test_map() {
    model::Map map;
    map.format = Format::quake2;
    map.materials = {
        {"e1u1/wall", 0, 4, 2, 0, {}},
        {"e1u1/window", model::kTranslucent, 2, 2, 1, {}},
        {"common/clip", model::kClip, 0, 0, -1, {}},
        {"common/skip", model::kNodraw, 0, 0, -1, {}},
        {"sky1", model::kSky | model::kUnlit, 0, 0, -1, {}},
        {"common/trigger", model::kTrigger, 0, 0, -1, {}},
        {"{fence/../../x y", model::kAlphaTest, 2, 2, 1, {}},
        {"*water", model::kWater, 0, 0, -1, {}},
    };
    model::Texture wall{"e1u1/wall", 4, 2, {}};
    for (int i = 0; i < 8; ++i) wall.rgba.insert(wall.rgba.end(), {uint8_t(i * 30), uint8_t(255 - i * 20), uint8_t(i * 7), 255});
    model::Texture window{"e1u1/window", 2, 2, {10, 20, 30, 128, 40, 50, 60, 0, 70, 80, 90, 255, 100, 110, 120, 64}};
    map.textures = {wall, window};

    model::Model world;
    world.index = 0;
    world.surfaces.push_back(quad(kWall, {0, 0, 0}, {64, 0, 0}, {0, 64, 0}, {0, 0, 1}, 0));       // floor
    world.surfaces.push_back(quad(kWall, {64, 0, 0}, {0, 64, 0}, {0, 0, 64}, {-1, 0, 0}, 1));     // wall, same group
    world.surfaces.push_back(quad(kClipMat, {0, 0, 8}, {8, 0, 0}, {0, 8, 0}, {0, 0, 1}, -1));     // skipped
    world.surfaces.push_back(quad(kSkipMat, {0, 0, 16}, {8, 0, 0}, {0, 8, 0}, {0, 0, 1}, -1));    // skipped
    world.surfaces.push_back(quad(kSkyMat, {0, 0, 128}, {64, 0, 0}, {0, 64, 0}, {0, 0, -1}, -1)); // unlit
    world.surfaces.push_back(quad(kWall, {0, 64, 0}, {64, 0, 0}, {0, 0, 64}, {0, -1, 0}, -1));    // wall, unlit group
    model::Surface water = quad(kWaterMat, {0, 0, 4}, {32, 0, 0}, {0, 32, 0}, {0, 0, 1}, 2);
    water.vertices[2].color = {10, 20, 200, 128};
    water.vertices[0].normal = {0, 0, 0};  // a broken normal: the plane's is used
    world.surfaces.push_back(water);
    model::Surface flare;
    flare.kind = model::SurfaceKind::billboard;
    flare.material = kWall;
    flare.vertices = {vert({5, 5, 5}, {0, 0, 1}, {0, 0})};
    world.surfaces.push_back(flare);  // no triangles: skipped
    map.models.push_back(world);

    model::Model door;
    door.index = 1;
    door.entity = 1;
    door.origin = {10, 20, 30};
    door.surfaces.push_back(quad(kWindow, {0, 0, 0}, {16, 0, 0}, {0, 0, 16}, {0, -1, 0}, 3));
    map.models.push_back(door);

    model::Model trigger;
    trigger.index = 2;
    trigger.entity = 2;
    trigger.surfaces.push_back(quad(kTriggerMat, {0, 0, 0}, {16, 0, 0}, {0, 16, 0}, {0, 0, 1}, -1));
    map.models.push_back(trigger);

    model::Model fence;
    fence.index = 3;
    fence.entity = 3;
    fence.surfaces.push_back(quad(kFence, {0, 32, 0}, {32, 0, 0}, {0, 0, 32}, {0, 1, 0}, 4));
    map.models.push_back(fence);

    map.lightmaps.push_back({0, 8, 4, {}});
    for (int i = 0; i < 32; ++i) map.lightmaps[0].rgb.insert(map.lightmaps[0].rgb.end(), {uint8_t(i * 8), uint8_t(100), uint8_t(255 - i)});
    map.lightmaps.push_back({1, 8, 4, std::vector<uint8_t>(96, 7)});

    auto ent = [](std::vector<KeyValue> kv) {
        Entity e;
        e.pairs = std::move(kv);
        return e;
    };
    map.entities = {
        ent({{"classname", "worldspawn"}, {"wad", "a.wad"}, {"message", std::string("gold \xC1\xE2 text")}, {"wad", "b.wad"}}),
        ent({{"classname", "func_door"}, {"model", "*1"}, {"origin", "10 20 30"}}),
        ent({{"classname", "trigger_multiple"}, {"model", "*2"}}),
        ent({{"classname", "func_wall"}, {"model", "*3"}}),
        ent({{"classname", "info_player_start"}, {"origin", "1 2 3"}, {"angle", "90"}}),
    };
    map.props = {{"models/props/barrel.mdl", {100, 200, 300}, {0, 90, 0}, 1},
                 {"models/props/crate.mdl", {-5, 0, 7}, {30, 45, 10}, 0},
                 {"models/props/a.mdl", {0, 0, 0}, {90, 0, 0}, 0},
                 {"models/props/b.mdl", {1, 0, 0}, {0, 180, 0}, 0},
                 {"models/props/c.mdl", {2, 0, 0}, {0, -90, 90}, 0},
                 {"models/props/d.mdl", {3, 0, 0}, {180, 90, -90}, 0},
                 {"models/props/e.mdl", {4, 0, 0}, {-90, 270, 180}, 0}};
    return map;
}

/// Source AngleMatrix (mathlib): columns forward, left, up for (pitch, yaw, roll) in degrees.
std::array<Vec3, 3> angle_matrix(Vec3 angles) {
    const double p = angles.x * kPi / 180, y = angles.y * kPi / 180, r = angles.z * kPi / 180;
    const double sp = std::sin(p), cp = std::cos(p), sy = std::sin(y), cy = std::cos(y), sr = std::sin(r), cr = std::cos(r);
    return {Vec3{float(cp * cy), float(cp * sy), float(-sp)},
            Vec3{float(sr * sp * cy - cr * sy), float(sr * sp * sy + cr * cy), float(sr * cp)},
            Vec3{float(cr * sp * cy + sr * sy), float(cr * sp * sy - sr * cy), float(cr * cp)}};
}

Vec3 rotate(const nlohmann::json& q, Vec3 v) {
    const double x = q[0], y = q[1], z = q[2], w = q[3];
    // v' = v + 2w (q x v) + 2 q x (q x v)
    const double tx = 2 * (y * v.z - z * v.y), ty = 2 * (z * v.x - x * v.z), tz = 2 * (x * v.y - y * v.x);
    return {float(v.x + w * tx + (y * tz - z * ty)), float(v.y + w * ty + (z * tx - x * tz)),
            float(v.z + w * tz + (x * ty - y * tx))};
}

void expect_near(Vec3 a, Vec3 b, double eps, const std::string& what) {
    EXPECT_NEAR(a.x, b.x, eps) << what;
    EXPECT_NEAR(a.y, b.y, eps) << what;
    EXPECT_NEAR(a.z, b.z, eps) << what;
}

const nlohmann::json* node_named(const nlohmann::json& doc, const std::string& name) {
    for (const auto& n : doc["nodes"])
        if (n.value("name", "") == name) return &n;
    return nullptr;
}

test::GltfFile export_glb(const model::Map& map, const exporter::Options& options = {}) {
    const auto asset = exporter::build_gltf(map, options, true);
    return test::GltfFile::parse_glb(exporter::encode_glb(asset));
}

std::string read_text(const fs::path& p) {
    const Bytes b = read_file(p);
    return std::string(b.begin(), b.end());
}

}  // namespace

// --- PNG --------------------------------------------------------------------

TEST(Png, RoundTripsEveryChannelCount) {
    for (int channels = 1; channels <= 4; ++channels) {
        const uint32_t w = 7, h = 5;
        Bytes pixels(size_t(w) * h * channels);
        for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 37 + channels);
        const Bytes png = encode_png(w, h, channels, pixels);
        ASSERT_GT(png.size(), 8u);
        EXPECT_EQ(Bytes(png.begin(), png.begin() + 8), (Bytes{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}));
        const DecodedPng back = decode_png(png);
        ASSERT_EQ(back.width, w);
        ASSERT_EQ(back.height, h);
        for (size_t p = 0; p < size_t(w) * h; ++p) {
            const uint8_t* src = pixels.data() + p * channels;
            const uint8_t* dst = back.rgba.data() + p * 4;
            switch (channels) {
                case 1: EXPECT_EQ(dst[0], src[0]); EXPECT_EQ(dst[1], src[0]); EXPECT_EQ(dst[3], 255); break;
                case 2: EXPECT_EQ(dst[0], src[0]); EXPECT_EQ(dst[3], src[1]); break;
                case 3: EXPECT_EQ(Bytes(dst, dst + 3), Bytes(src, src + 3)); EXPECT_EQ(dst[3], 255); break;
                case 4: EXPECT_EQ(Bytes(dst, dst + 4), Bytes(src, src + 4)); break;
            }
        }
    }
}

TEST(Png, PaletteForFewColoursTrueColourOtherwise) {
    // <= 256 distinct pixels: colour type 3 (palette, alpha in tRNS); more: RGB / RGBA.
    const auto color_type = [](const Bytes& png) { return png.at(25); };  // IHDR colour type byte
    for (int channels : {3, 4}) {
        Bytes few(size_t(40) * 30 * channels), many(size_t(40) * 30 * channels);
        uint32_t seed = 12345;
        for (size_t p = 0; p < size_t(40) * 30; ++p)
            for (int c = 0; c < channels; ++c) {
                seed = seed * 1664525u + 1013904223u;
                few[p * channels + c] = uint8_t((p % 200) * (c + 1));  // 200 colours
                many[p * channels + c] = uint8_t(seed >> 24);
            }
        const Bytes a = encode_png(40, 30, channels, few), b = encode_png(40, 30, channels, many);
        EXPECT_EQ(color_type(a), 3) << channels;
        EXPECT_EQ(color_type(b), channels == 4 ? 6 : 2) << channels;
        for (const auto& [png, pixels] : {std::pair{&a, &few}, std::pair{&b, &many}}) {
            const DecodedPng back = decode_png(*png);
            for (size_t p = 0; p < size_t(40) * 30; ++p) {
                for (int c = 0; c < 3; ++c) ASSERT_EQ(back.rgba[p * 4 + c], (*pixels)[p * channels + c]) << p;
                ASSERT_EQ(back.rgba[p * 4 + 3], channels == 4 ? (*pixels)[p * channels + 3] : 255) << p;
            }
        }
    }
}

// Grey RGB and opaque grey RGBA images (a Quake 1 map's grey lightmaps) are
// written as grey, colour type 0, small ones through libpng and large ones in
// bands; one pixel of colour anywhere (each byte position the 16-byte compares
// look at, and the pixels after them) or one alpha below 255 keeps the colour.
TEST(Png, GreyImagesAreWrittenAsGrey) {
    const auto color_type = [](const Bytes& png) { return png.at(25); };
    const auto decodes_to = [](const Bytes& png, const Bytes& pixels, int channels) {
        const DecodedPng back = decode_png(png);
        for (size_t p = 0; p < pixels.size() / size_t(channels); ++p)
            for (int c = 0; c < 4; ++c)
                if (back.rgba[p * 4 + size_t(c)] != (c < 3 || channels == 4 ? pixels[p * size_t(channels) + size_t(c)] : 255))
                    return false;
        return true;
    };
    struct Size {
        uint32_t w, h;
    };
    for (const Size size : {Size{37, 11} /* small; 407 pixels: a tail after the 16-byte steps */,
                            Size{700, 501} /* 350 700 pixels: banded */}) {
        for (const int channels : {3, 4}) {
            const size_t count = size_t(size.w) * size.h;
            Bytes grey(count * size_t(channels));
            uint32_t seed = 7;
            for (size_t p = 0; p < count; ++p) {
                seed = seed * 1664525u + 1013904223u;
                const uint8_t v = p % 5 == 0 ? uint8_t(seed >> 24) : uint8_t(p / size.w + p % size.w);  // > 256 values
                for (int c = 0; c < 3; ++c) grey[p * size_t(channels) + size_t(c)] = v;
                if (channels == 4) grey[p * 4 + 3] = 255;
            }
            const Bytes png = encode_png(size.w, size.h, channels, grey);
            EXPECT_EQ(color_type(png), 0) << size.w << "x" << size.h << "x" << channels;
            EXPECT_TRUE(decodes_to(png, grey, channels)) << size.w << "x" << size.h << "x" << channels;
            if (channels == 4) {
                Bytes rgb(count * 3);
                for (size_t p = 0; p < count; ++p)
                    for (int c = 0; c < 3; ++c) rgb[p * 3 + size_t(c)] = grey[p * 4 + size_t(c)];
                EXPECT_EQ(encode_opaque_rgba_png(size.w, size.h, grey), encode_png(size.w, size.h, 3, rgb));
            }
            // One byte off grey: on the small image every byte of the first 49 pixels
            // (each position of the 16-byte compares), on both the bytes of the last
            // pixel (after them) and one in the middle.
            std::vector<size_t> bytes{count / 2 * size_t(channels) + 1};
            if (count < 1000)
                for (size_t b = 0; b < 49 * size_t(channels); ++b) bytes.push_back(b);
            for (int c = 0; c < channels; ++c) bytes.push_back((count - 1) * size_t(channels) + size_t(c));
            for (const size_t b : bytes) {
                Bytes off = grey;
                off[b] = uint8_t(off[b] ^ 1);
                const Bytes coloured = encode_png(size.w, size.h, channels, off);
                ASSERT_NE(color_type(coloured), 0) << size.w << "x" << size.h << "x" << channels << " byte " << b;
                ASSERT_TRUE(decodes_to(coloured, off, channels)) << size.w << "x" << size.h << "x" << channels << " byte " << b;
            }
        }
    }
}

TEST(Png, CompressionLevelsDecodeTheSame) {
    Bytes pixels(64 * 64 * 3);  // a smooth gradient of more than 256 colours
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i % 3 == 0 ? (i / 3) % 64 * 4 : (i / 192) * 4 + i % 3);
    const Bytes fast = encode_png(64, 64, 3, pixels, 0), small = encode_png(64, 64, 3, pixels, 9);
    EXPECT_LT(small.size(), fast.size());
    EXPECT_EQ(decode_png(fast).rgba, decode_png(small).rgba);
}

// Images of 1 MB and more are filtered and deflated in bands of rows on every
// core, one IDAT chunk a band: libpng (decode_png) reads back every pixel, for
// every channel count, for rows wider than a band and at every level.
TEST(Png, LargeImagesEncodedInBandsDecodeExactly) {
    // The IDAT chunks, and whether their zlib stream inflates with its Adler-32 checked.
    const auto idat_chunks = [](const Bytes& png, size_t raw_bytes, bool& inflates) {
        size_t n = 0;
        Bytes stream;
        for (size_t p = 8; p + 8 <= png.size();) {
            const uint32_t length = uint32_t(png[p]) << 24 | uint32_t(png[p + 1]) << 16 | uint32_t(png[p + 2]) << 8 | png[p + 3];
            if (std::string(png.begin() + long(p) + 4, png.begin() + long(p) + 8) == "IDAT") {
                ++n;
                stream.insert(stream.end(), png.begin() + long(p) + 8, png.begin() + long(p) + 8 + long(length));
            }
            p += 12 + size_t(length);
        }
        Bytes raw(raw_bytes + 1);
        uLongf raw_length = uLongf(raw.size());
        inflates = uncompress(raw.data(), &raw_length, stream.data(), uLong(stream.size())) == Z_OK &&
                   raw_length == raw_bytes;
        return n;
    };
    struct Case {
        uint32_t w, h;
        int channels, level;
    };
    for (const Case c : {Case{1024, 700, 3, 3}, Case{900, 640, 4, 6}, Case{1500, 1500, 1, 1}, Case{1200, 900, 2, 9},
                         Case{300000, 3, 3, 3} /* a row wider than a band */, Case{1100, 500, 4, 0},
                         Case{512, 324, 3, 1} /* 0.5 MB: four bands of 128 KiB */}) {
        Bytes pixels(size_t(c.w) * c.h * size_t(c.channels));
        uint32_t seed = 99;
        for (size_t i = 0; i < pixels.size(); ++i) {
            seed = seed * 1664525u + 1013904223u;
            // Smooth areas (where Up / Paeth pay) with noise in every eighth row.
            const size_t x = i % (size_t(c.w) * size_t(c.channels)), y = i / (size_t(c.w) * size_t(c.channels));
            pixels[i] = y % 8 == 0 ? uint8_t(seed >> 24) : uint8_t(x / 7 + y / 3);
        }
        const Bytes png = encode_png(c.w, c.h, c.channels, pixels, c.level);
        bool inflates = false;
        EXPECT_GT(idat_chunks(png, size_t(c.h) * (size_t(c.w) * size_t(c.channels) + 1), inflates), 1u) << c.w << "x" << c.h;
        EXPECT_TRUE(inflates) << "zlib refuses the IDAT stream (Adler-32?) of " << c.w << "x" << c.h;
        EXPECT_EQ(encode_png(c.w, c.h, c.channels, pixels, c.level), png) << "not deterministic";
        const DecodedPng back = decode_png(png);
        ASSERT_EQ(back.width, c.w);
        ASSERT_EQ(back.height, c.h);
        for (size_t p = 0; p < size_t(c.w) * c.h; ++p) {
            const uint8_t* src = pixels.data() + p * size_t(c.channels);
            const uint8_t* dst = back.rgba.data() + p * 4;
            const uint8_t want[4] = {src[0], c.channels >= 3 ? src[1] : src[0], c.channels >= 3 ? src[2] : src[0],
                                     c.channels == 4 ? src[3] : c.channels == 2 ? src[1] : uint8_t(255)};
            ASSERT_EQ(Bytes(dst, dst + 4), Bytes(want, want + 4)) << c.w << "x" << c.h << "x" << c.channels << " pixel " << p;
        }
    }
}

// An opaque RGBA image written as RGB straight from its RGBA rows (large
// ones filtered in bands without an RGB copy) is the same file as the RGB
// copy written by encode_png(): banded, small and palette images alike, at
// several levels.
TEST(Png, OpaqueRgbaIsTheFileOfItsRgbCopy) {
    struct Case {
        uint32_t w, h;
        int level;
        bool few_colours;
    };
    for (const Case c : {Case{1024, 700, 1, false}, Case{333, 301, 3, false} /* 0.3 MB of RGB: banded */,
                         Case{300, 200, 3, false} /* small: libpng */, Case{1024, 512, 1, true} /* palette */,
                         Case{100000, 3, 6, false} /* rows wider than a band */}) {
        Bytes rgba(size_t(c.w) * c.h * 4), rgb(size_t(c.w) * c.h * 3);
        uint32_t seed = 5;
        for (size_t p = 0; p < size_t(c.w) * c.h; ++p) {
            const size_t x = p % c.w, y = p / c.w;
            for (int k = 0; k < 3; ++k) {
                seed = seed * 1664525u + 1013904223u;
                const uint8_t v = c.few_colours ? uint8_t((x / 64 + y / 64 + size_t(k)) % 7 * 30)
                                  : y % 5 == 0  ? uint8_t(seed >> 24)
                                                : uint8_t(x / 3 + y * size_t(k + 1));
                rgba[p * 4 + size_t(k)] = v;
                rgb[p * 3 + size_t(k)] = v;
            }
            rgba[p * 4 + 3] = 255;
        }
        EXPECT_EQ(encode_opaque_rgba_png(c.w, c.h, rgba, c.level), encode_png(c.w, c.h, 3, rgb, c.level))
            << c.w << "x" << c.h << " level " << c.level;
    }
    EXPECT_THROW(encode_opaque_rgba_png(2, 2, Bytes(15, 0)), std::invalid_argument);  // 15 bytes for 2 x 2 x 4
}

TEST(Png, RefusesBadArguments) {
    const Bytes four(4);
    EXPECT_THROW(encode_png(0, 1, 4, {}), std::invalid_argument);
    EXPECT_THROW(encode_png(1, 1, 5, four), std::invalid_argument);
    EXPECT_THROW(encode_png(1, 1, 0, four), std::invalid_argument);
    EXPECT_THROW(encode_png(2, 1, 4, four), std::invalid_argument);  // 4 bytes for 8
    EXPECT_THROW(encode_png(1, 1, 3, four), std::invalid_argument);  // 4 bytes for 3
}

TEST(Png, DecodeRefusesBrokenFiles) {
    Bytes png = encode_png(4, 4, 3, Bytes(48, 9));
    EXPECT_THROW(decode_png(ByteSpan(png.data(), 20)), Error);
    Bytes garbage(100, 0x42);
    EXPECT_THROW(decode_png(garbage), Error);
    png[png.size() / 2] ^= 0xff;  // CRC / zlib damage
    EXPECT_THROW(decode_png(png), Error);
}

TEST(Png, WritePngIsAtomicAndLeavesNoTemporary) {
    const fs::path dir = test::temp_dir("png");
    const Bytes pixels(3 * 2 * 4, 200);
    write_png(dir / "a.png", 3, 2, 4, pixels);
    write_png(dir / "a.png", 3, 2, 4, pixels);  // replaces
    size_t files = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        ++files;
        EXPECT_EQ(e.path().filename(), "a.png");
    }
    EXPECT_EQ(files, 1u);
    EXPECT_EQ(decode_png(read_file(dir / "a.png")).rgba, pixels);
    EXPECT_THROW(write_png(dir / "missing" / "b.png", 3, 2, 4, pixels), Error);
}

// --- glTF structure -----------------------------------------------------------

TEST(Gltf, NodesForModelsEntitiesAndProps) {
    const model::Map map = test_map();
    const test::GltfFile f = export_glb(map);
    const auto& doc = f.doc;
    EXPECT_EQ(doc["asset"]["version"], "2.0");
    ASSERT_EQ(doc["scenes"][0]["nodes"].size(), 1u);
    const auto& root = doc["nodes"][doc["scenes"][0]["nodes"][0].get<size_t>()];
    // Z-up data, stood up by the root: its rotation takes +Z to +Y.
    ASSERT_TRUE(root.contains("rotation"));
    expect_near(rotate(root["rotation"], {0, 0, 1}), {0, 1, 0}, 1e-6, "root rotation");
    expect_near(rotate(root["rotation"], {1, 0, 0}), {1, 0, 0}, 1e-6, "root rotation");

    // A node per model (the trigger's model has no drawable surface left: a node without mesh).
    for (const char* name : {"world", "*1 func_door", "*2 trigger_multiple", "*3 func_wall"})
        EXPECT_NE(node_named(doc, name), nullptr) << name;
    const auto* door = node_named(doc, "*1 func_door");
    ASSERT_NE(door, nullptr);
    EXPECT_EQ((*door)["translation"], nlohmann::json::array({10.0, 20.0, 30.0}));
    EXPECT_EQ((*door)["extras"]["entity"], 1);
    EXPECT_FALSE(node_named(doc, "*2 trigger_multiple")->contains("mesh"));
    EXPECT_TRUE(node_named(doc, "world")->contains("mesh"));

    // Entities keep every pair in order, duplicates included, bytes through bytes_to_utf8.
    const auto* worldspawn = node_named(doc, "worldspawn");
    ASSERT_NE(worldspawn, nullptr);
    const auto& kv = (*worldspawn)["extras"]["keyvalues"];
    ASSERT_EQ(kv.size(), map.entities[0].pairs.size());
    for (size_t i = 0; i < kv.size(); ++i) {
        EXPECT_EQ(utf8_to_bytes(kv[i][0].get<std::string>()), map.entities[0].pairs[i].key);
        EXPECT_EQ(utf8_to_bytes(kv[i][1].get<std::string>()), map.entities[0].pairs[i].value);
    }
    EXPECT_EQ(kv[1][1], "a.wad");
    EXPECT_EQ(kv[3][1], "b.wad");
    const auto* start = node_named(doc, "info_player_start");
    ASSERT_NE(start, nullptr);
    EXPECT_EQ((*start)["translation"], nlohmann::json::array({1.0, 2.0, 3.0}));
    const auto* entities = node_named(doc, "entities");
    ASSERT_NE(entities, nullptr);
    EXPECT_EQ((*entities)["children"].size(), map.entities.size());

    // Props: model path, translation, and a rotation that matches Source's AngleMatrix.
    for (const auto& prop : map.props) {
        const auto* node = node_named(doc, prop.model);
        ASSERT_NE(node, nullptr) << prop.model;
        EXPECT_EQ((*node)["extras"]["model"], prop.model);
        EXPECT_EQ((*node)["extras"]["skin"], prop.skin);
        Vec3 t{};
        if (node->contains("translation")) t = {(*node)["translation"][0], (*node)["translation"][1], (*node)["translation"][2]};
        expect_near(t, prop.origin, 1e-4, prop.model);
        ASSERT_TRUE(node->contains("rotation"));
        const auto m = angle_matrix(prop.angles);
        expect_near(rotate((*node)["rotation"], {1, 0, 0}), m[0], 1e-5, prop.model + " forward");
        expect_near(rotate((*node)["rotation"], {0, 1, 0}), m[1], 1e-5, prop.model + " left");
        expect_near(rotate((*node)["rotation"], {0, 0, 1}), m[2], 1e-5, prop.model + " up");
    }
}

TEST(Gltf, AnglesToQuaternionFollowsSourceConventions) {
    const auto fwd = [](Vec3 angles) {
        const auto q = exporter::angles_to_quaternion(angles);
        return rotate(nlohmann::json::array({q[0], q[1], q[2], q[3]}), {1, 0, 0});
    };
    expect_near(fwd({0, 90, 0}), {0, 1, 0}, 1e-6, "yaw 90 faces +Y");
    expect_near(fwd({90, 0, 0}), {0, 0, -1}, 1e-6, "pitch 90 looks down");
    const auto q = exporter::angles_to_quaternion({0, 0, 90});
    expect_near(rotate(nlohmann::json::array({q[0], q[1], q[2], q[3]}), {0, 1, 0}), {0, 0, 1}, 1e-6, "roll 90: left -> up");
}

/// Options for the relighting layout (lightmap atlas as occlusionTexture).
static exporter::Options separate() {
    exporter::Options o;
    o.lighting = exporter::Lighting::separate;
    return o;
}

TEST(Gltf, OnePrimitivePerMaterialAndLightingWithExactData) {
    const model::Map map = test_map();
    const test::GltfFile f = export_glb(map, separate());
    const auto& doc = f.doc;
    const auto& world_mesh = doc["meshes"][node_named(doc, "world")->at("mesh").get<size_t>()];
    // world: wall lit (floor + wall), sky, wall unlit, water lit. clip/skip/billboard: none.
    ASSERT_EQ(world_mesh["primitives"].size(), 4u);
    std::set<std::string> names;
    for (const auto& m : doc["materials"]) names.insert(m["name"]);
    EXPECT_FALSE(names.count("common/clip"));
    EXPECT_FALSE(names.count("common/skip"));
    EXPECT_FALSE(names.count("common/trigger"));

    const auto& lit_wall = world_mesh["primitives"][0];
    const auto& pos_acc = doc["accessors"][lit_wall["attributes"]["POSITION"].get<size_t>()];
    EXPECT_EQ(pos_acc["count"], 8);
    const std::vector<double> pos = f.accessor(lit_wall["attributes"]["POSITION"]);
    const auto& floor = map.models[0].surfaces[0];
    const auto& wall = map.models[0].surfaces[1];
    for (size_t i = 0; i < 8; ++i) {
        const Vec3 want = (i < 4 ? floor : wall).vertices[i % 4].position;
        expect_near({float(pos[i * 3]), float(pos[i * 3 + 1]), float(pos[i * 3 + 2])}, want, 0, "position");
    }
    EXPECT_EQ(pos_acc["min"], nlohmann::json::array({0.0, 0.0, 0.0}));
    EXPECT_EQ(pos_acc["max"], nlohmann::json::array({64.0, 64.0, 64.0}));
    const std::vector<double> lm = f.accessor(lit_wall["attributes"]["TEXCOORD_1"]);
    for (size_t i = 0; i < 8; ++i) {
        EXPECT_FLOAT_EQ(float(lm[i * 2]), floor.vertices[i % 4].lightmap_uv.x);
        EXPECT_FLOAT_EQ(float(lm[i * 2 + 1]), floor.vertices[i % 4].lightmap_uv.y);
    }
    const std::vector<double> uv = f.accessor(lit_wall["attributes"]["TEXCOORD_0"]);
    for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(float(uv[i * 2 + 1]), (i < 4 ? floor : wall).vertices[i % 4].uv.y);
    EXPECT_FALSE(lit_wall["attributes"].contains("COLOR_0"));

    size_t colored = 0, lit = 0;
    for (const auto& mesh : doc["meshes"])
        for (const auto& prim : mesh["primitives"]) {
            const auto& attr = prim["attributes"];
            EXPECT_EQ(prim["mode"], 4);
            EXPECT_EQ(doc["accessors"][prim["indices"].get<size_t>()]["componentType"], 5125);
            const auto p = f.accessor(attr["POSITION"]), n = f.accessor(attr["NORMAL"]), idx = f.accessor(prim["indices"]);
            ASSERT_EQ(p.size(), n.size());
            for (size_t i = 0; i < n.size(); i += 3)
                EXPECT_NEAR(std::sqrt(n[i] * n[i] + n[i + 1] * n[i + 1] + n[i + 2] * n[i + 2]), 1.0, 1e-6);
            // Every triangle counter-clockwise about its normals (they were stored clockwise).
            for (size_t t = 0; t + 2 < idx.size(); t += 3) {
                const auto at = [&](size_t k) { return Vec3{float(p[k * 3]), float(p[k * 3 + 1]), float(p[k * 3 + 2])}; };
                const size_t a = size_t(idx[t]), b = size_t(idx[t + 1]), c = size_t(idx[t + 2]);
                ASSERT_LT(std::max({a, b, c}), p.size() / 3);
                const Vec3 nsum{float(n[a * 3] + n[b * 3] + n[c * 3]), float(n[a * 3 + 1] + n[b * 3 + 1] + n[c * 3 + 1]),
                                float(n[a * 3 + 2] + n[b * 3 + 2] + n[c * 3 + 2])};
                EXPECT_GT(model::dot(model::cross(at(b) - at(a), at(c) - at(a)), nsum), 0);
            }
            if (attr.contains("COLOR_0")) {
                ++colored;
                const auto& acc = doc["accessors"][attr["COLOR_0"].get<size_t>()];
                EXPECT_EQ(acc["componentType"], 5121);
                EXPECT_EQ(acc["normalized"], true);
                const auto c = f.accessor(attr["COLOR_0"]);
                EXPECT_EQ(std::vector<double>(c.begin() + 8, c.begin() + 12), (std::vector<double>{10, 20, 200, 128}));
            }
            const auto& mat = doc["materials"][prim["material"].get<size_t>()];
            EXPECT_EQ(attr.contains("TEXCOORD_1"), mat.contains("occlusionTexture")) << mat.dump();
            if (attr.contains("TEXCOORD_1")) ++lit;
        }
    EXPECT_EQ(colored, 1u);
    EXPECT_EQ(lit, 4u);  // wall, water, window, fence
}

TEST(Gltf, GeometryBytesDoNotDependOnTheThreadCount) {
    const model::Map map = test_map();
    for (const exporter::Lighting lighting : {exporter::Lighting::separate, exporter::Lighting::baked}) {
        exporter::Options one = separate(), four = separate();
        one.lighting = four.lighting = lighting;
        one.threads = 1;
        four.threads = 4;  // more threads than groups in some models: each group is still filled once
        test::expect_same_asset(exporter::build_gltf(map, one, true), exporter::build_gltf(map, four, true),
                                lighting == exporter::Lighting::baked ? "baked" : "separate");
    }
}

TEST(Gltf, WrittenGlbIsEncodeGlbOfTheAsset) {
    const model::Map map = test_map();
    const fs::path dir = test::temp_dir("gltf_written");
    exporter::write_gltf(map, dir / "map.glb", separate());
    EXPECT_TRUE(read_file(dir / "map.glb") == exporter::encode_glb(exporter::build_gltf(map, separate(), true, "map")));
}

TEST(Gltf, MaterialsTexturesAndLightmap) {
    const model::Map map = test_map();
    const test::GltfFile f = export_glb(map, separate());
    const auto& doc = f.doc;
    const auto material = [&](const std::string& name, bool lit) -> const nlohmann::json& {
        for (const auto& m : doc["materials"])
            if (m["name"] == name && m.contains("occlusionTexture") == lit) return m;
        ADD_FAILURE() << "no material " << name << " lit=" << lit;
        static const nlohmann::json none = nlohmann::json::object();
        return none;
    };
    const auto texture_pixels = [&](size_t texture) { return decode_png(f.image_bytes(doc["textures"][texture]["source"])); };

    const auto& wall = material("e1u1/wall", true);
    const auto wall_png = texture_pixels(wall["pbrMetallicRoughness"]["baseColorTexture"]["index"]);
    EXPECT_EQ(wall_png.width, 4u);
    EXPECT_EQ(wall_png.rgba, map.textures[0].rgba);
    EXPECT_EQ(wall["occlusionTexture"]["texCoord"], 1);
    EXPECT_EQ(wall["extras"]["lightmap"]["texCoord"], 1);
    EXPECT_EQ(wall["extras"]["lightmap"]["texture"], wall["occlusionTexture"]["index"]);
    const auto lightmap = texture_pixels(wall["occlusionTexture"]["index"]);
    ASSERT_EQ(lightmap.width, 8u);
    ASSERT_EQ(lightmap.height, 4u);
    // Every style's page added up: what the map looks like with all lights on.
    const model::LightmapAtlas all = model::combined_lightmap(map);
    ASSERT_EQ(all.rgb.size(), 32u * 3);
    for (size_t p = 0; p < 32; ++p)
        for (int c = 0; c < 3; ++c) EXPECT_EQ(lightmap.rgba[p * 4 + c], all.rgb[p * 3 + c]);
    EXPECT_EQ(wall["extras"]["lightmap"]["styles"], "all");
    EXPECT_FALSE(material("e1u1/wall", false).contains("occlusionTexture"));

    const auto& window = material("e1u1/window", true);
    EXPECT_EQ(window["alphaMode"], "BLEND");
    EXPECT_EQ(texture_pixels(window["pbrMetallicRoughness"]["baseColorTexture"]["index"]).rgba, map.textures[1].rgba);
    EXPECT_EQ(material("{fence/../../x y", true)["alphaMode"], "MASK");
    const auto& sky = material("sky1", false);
    EXPECT_TRUE(sky["extensions"].contains("KHR_materials_unlit"));
    EXPECT_NE(std::find(doc["extensionsUsed"].begin(), doc["extensionsUsed"].end(), "KHR_materials_unlit"),
              doc["extensionsUsed"].end());
    EXPECT_EQ(material("*water", true)["extras"]["flags"], nlohmann::json::array({"water"}));
    // Each texture once, plus the lightmap.
    EXPECT_EQ(doc["images"].size(), 3u);

    exporter::Options no_lm;
    no_lm.lighting = exporter::Lighting::none;
    const auto g = export_glb(map, no_lm);
    EXPECT_EQ(g.doc["images"].size(), 2u);
    for (const auto& m : g.doc["materials"]) EXPECT_FALSE(m.contains("occlusionTexture"));
    for (const auto& mesh : g.doc["meshes"])
        for (const auto& prim : mesh["primitives"]) EXPECT_FALSE(prim["attributes"].contains("TEXCOORD_1"));

    exporter::Options no_tex;
    no_tex.textures = false;
    no_tex.lighting = exporter::Lighting::none;
    EXPECT_FALSE(export_glb(map, no_tex).doc.contains("images"));
}

TEST(Gltf, SkipRules) {
    const model::Map map = test_map();
    const auto all = exporter::build_gltf(map, {}, true);
    EXPECT_EQ(all.summary.skipped_surfaces, 3u);  // clip, nodraw, trigger
    EXPECT_EQ(all.summary.skipped_models, 0u);
    EXPECT_EQ(all.summary.models, 4u);

    exporter::Options tools;
    tools.tool_surfaces = true;
    const auto with_tools = exporter::build_gltf(map, tools, true);
    EXPECT_EQ(with_tools.summary.skipped_surfaces, 1u);  // nodraw only
    const auto doc = nlohmann::json::parse(with_tools.json);
    std::set<std::string> names;
    for (const auto& m : doc["materials"]) names.insert(m["name"]);
    EXPECT_TRUE(names.count("common/clip"));
    EXPECT_TRUE(names.count("common/trigger"));
    EXPECT_FALSE(names.count("common/skip"));

    exporter::Options skip;
    skip.skip_classes = {"trigger_*", "FUNC_W?LL"};
    const auto skipped = exporter::build_gltf(map, skip, true);
    EXPECT_EQ(skipped.summary.skipped_models, 2u);
    const auto sdoc = nlohmann::json::parse(skipped.json);
    EXPECT_EQ(node_named(sdoc, "*2 trigger_multiple"), nullptr);
    EXPECT_EQ(node_named(sdoc, "*3 func_wall"), nullptr);
    EXPECT_NE(node_named(sdoc, "*1 func_door"), nullptr);
    EXPECT_NE(node_named(sdoc, "trigger_multiple"), nullptr);  // the entity itself stays

    exporter::Options world;
    world.all_models = false;
    const auto w = exporter::build_gltf(map, world, true);
    EXPECT_EQ(w.summary.models, 1u);
    EXPECT_EQ(w.summary.skipped_models, 3u);
}

TEST(Gltf, YUpAndScaleTransformTheData) {
    const model::Map map = test_map();
    exporter::Options options;
    options.y_up = true;
    options.scale = 0.5f;
    const test::GltfFile f = export_glb(map, options);
    const auto& doc = f.doc;
    EXPECT_FALSE(doc["nodes"][0].contains("rotation"));
    const auto* door = node_named(doc, "*1 func_door");
    EXPECT_EQ((*door)["translation"], nlohmann::json::array({5.0, 15.0, -10.0}));  // (x, z, -y) * 0.5
    const auto& prim = doc["meshes"][node_named(doc, "world")->at("mesh").get<size_t>()]["primitives"][0];
    const auto p = f.accessor(prim["attributes"]["POSITION"]), n = f.accessor(prim["attributes"]["NORMAL"]);
    const auto& floor = map.models[0].surfaces[0];
    for (size_t i = 0; i < 4; ++i) {
        const Vec3 q = floor.vertices[i].position;
        expect_near({float(p[i * 3]), float(p[i * 3 + 1]), float(p[i * 3 + 2])}, {q.x * 0.5f, q.z * 0.5f, -q.y * 0.5f}, 1e-6, "y-up");
        expect_near({float(n[i * 3]), float(n[i * 3 + 1]), float(n[i * 3 + 2])}, {0, 1, 0}, 1e-6, "y-up normal");
    }
    // Prop rotation expressed in the new axes: forward of yaw 90 is map +Y -> output -Z.
    const auto* barrel = node_named(doc, "models/props/barrel.mdl");
    expect_near(rotate((*barrel)["rotation"], {1, 0, 0}), {0, 0, -1}, 1e-6, "y-up prop");
    expect_near({(*barrel)["translation"][0], (*barrel)["translation"][1], (*barrel)["translation"][2]}, {50, 150, -100}, 1e-4,
                "y-up prop translation");
}

TEST(Gltf, ValidatorAcceptsGlbAndGltf) {
    const fs::path dir = test::temp_dir("gltf_validate");
    const model::Map map = test_map();
    struct Case {
        std::string file;
        exporter::Options options;
    };
    std::vector<Case> cases(5);
    cases[0].file = "map.glb";
    cases[1].file = "map.gltf";
    cases[2].file = "yup.glb";
    cases[2].options.y_up = true;
    cases[2].options.scale = 0.0254f;
    cases[3].file = "plain.gltf";
    cases[3].options.lighting = exporter::Lighting::none;
    cases[3].options.textures = false;
    cases[4].file = "tools.glb";
    cases[4].options.tool_surfaces = true;
    for (const Case& c : cases) {
        const exporter::Summary s = exporter::write_gltf(map, dir / c.file, c.options);
        ASSERT_FALSE(s.files.empty());
        EXPECT_EQ(s.files.back(), dir / c.file);
        const auto v = test::validate_gltf(dir / c.file);
        ASSERT_TRUE(v.ran) << v.errors;
        EXPECT_EQ(v.exit_code, 0) << c.file << "\n" << v.error_messages();
        EXPECT_EQ(v.num_errors(), 0) << c.file << "\n" << v.error_messages();
        EXPECT_EQ(v.report["issues"]["numWarnings"], 0) << c.file << "\n" << v.report["issues"].dump(1);
    }
    // The .gltf names its .bin and PNG files, all beside it.
    const auto g = test::GltfFile::read(dir / "map.gltf");
    EXPECT_EQ(g.doc["buffers"][0]["uri"], "map.bin");
    for (const auto& img : g.doc["images"]) {
        const std::string uri = img["uri"];
        EXPECT_EQ(uri.find('/'), std::string::npos) << uri;
        EXPECT_TRUE(fs::exists(dir / uri)) << uri;
        EXPECT_TRUE(uri.starts_with("map_")) << uri;
    }
    EXPECT_EQ(decode_png(g.image_bytes(0)).rgba, map.textures[0].rgba);
    // Nothing else: no temporaries left.
    for (const auto& e : fs::directory_iterator(dir)) EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
}

TEST(Gltf, ValidatorCatchesABrokenFile) {
    // The validator run itself can fail a test: a glb with a wrong index count must report errors.
    const fs::path dir = test::temp_dir("gltf_broken");
    auto asset = exporter::build_gltf(test_map(), {}, true);
    auto doc = nlohmann::json::parse(asset.json);
    doc["accessors"][0]["count"] = 1u << 30;
    asset.json = doc.dump();
    write_file_atomic(dir / "broken.glb", exporter::encode_glb(asset));
    const auto v = test::validate_gltf(dir / "broken.glb");
    ASSERT_TRUE(v.ran) << v.errors;
    EXPECT_GT(v.num_errors(), 0);
    EXPECT_EQ(v.exit_code, 1);
}

TEST(Gltf, EmptyAndDegenerateMapsStayValid) {
    const fs::path dir = test::temp_dir("gltf_empty");
    model::Map empty;
    exporter::write_gltf(empty, dir / "empty.glb");
    auto v = test::validate_gltf(dir / "empty.glb");
    ASSERT_TRUE(v.ran) << v.errors;
    EXPECT_EQ(v.num_errors(), 0) << v.error_messages();

    // Non-finite coordinates and zero normals come out finite and unit length.
    model::Map map = test_map();
    map.models[0].surfaces[0].vertices[1].position.x = std::numeric_limits<float>::quiet_NaN();
    map.models[0].surfaces[0].vertices[2].normal = {std::numeric_limits<float>::infinity(), 0, 0};
    map.models[0].surfaces[0].vertices[3].uv.x = -std::numeric_limits<float>::infinity();
    exporter::write_gltf(map, dir / "nan.glb");
    v = test::validate_gltf(dir / "nan.glb");
    ASSERT_TRUE(v.ran) << v.errors;
    EXPECT_EQ(v.num_errors(), 0) << v.error_messages();
}

TEST(Gltf, HostileModelsAreRefused) {
    const auto refuses = [](const model::Map& map, const std::string& what) {
        EXPECT_THROW(exporter::build_gltf(map, {}, true), Error) << what;
        const fs::path dir = test::temp_dir("hostile");
        EXPECT_THROW(exporter::write_obj(map, dir / "x.obj"), Error) << what;
    };
    model::Map m = test_map();
    m.models[0].surfaces[0].indices[2] = 4;
    refuses(m, "index out of range");
    m = test_map();
    m.models[1].surfaces[0].material = kMatCount;
    refuses(m, "material out of range");
    m = test_map();
    m.models[0].surfaces[0].indices.pop_back();
    refuses(m, "indices not a multiple of 3");
    m = test_map();
    m.materials[0].texture = 9;
    refuses(m, "texture out of range");
    m = test_map();
    m.textures[0].rgba.pop_back();
    refuses(m, "texture size mismatch");
    m = test_map();
    m.lightmaps[0].height = 1u << 30;
    refuses(m, "atlas size mismatch");
    m = test_map();
    m.textures[0].width = 0;
    m.textures[0].rgba.clear();
    refuses(m, "empty texture");
    exporter::Options negative;
    negative.scale = -1;
    EXPECT_THROW(exporter::build_gltf(test_map(), negative, true), std::invalid_argument);
    EXPECT_THROW(exporter::write(test_map(), "x.fbx"), std::invalid_argument);
}

TEST(Gltf, SafeNamesStayInTheDirectory) {
    EXPECT_EQ(exporter::safe_name("../../etc/passwd"), "______etc_passwd");
    EXPECT_EQ(exporter::safe_name(""), "unnamed");
    EXPECT_EQ(exporter::safe_name(std::string(200, 'a')).size(), 64u);
    EXPECT_EQ(exporter::safe_name("{fence x\xff"), "_fence_x_");
    const fs::path dir = test::temp_dir("names");
    model::Map map = test_map();
    map.textures[0].name = "../../../../tmp/evil";
    map.textures[1].name = "../../../../tmp/evil";  // same sanitised name: made unique
    // Lighting kept apart: a baked export leaves out the textures only lit surfaces show.
    exporter::write_gltf(map, dir / "out.gltf", separate());
    exporter::write_obj(map, dir / "out.obj");
    std::set<std::string> files;
    for (const auto& e : fs::directory_iterator(dir)) files.insert(e.path().filename().string());
    EXPECT_TRUE(files.count("out.gltf"));
    EXPECT_TRUE(files.count("out.bin"));
    EXPECT_TRUE(files.count("out.obj"));
    EXPECT_TRUE(files.count("out.mtl"));
    EXPECT_TRUE(files.count("out_baked.png"));     // the OBJ's
    EXPECT_TRUE(files.count("out_lightmap.png"));  // the glTF's
    const std::string evil = "out_" + exporter::safe_name(map.textures[0].name);
    EXPECT_TRUE(files.count(evil + ".png"));
    EXPECT_TRUE(files.count(evil + "_2.png"));
    EXPECT_EQ(files.size(), 8u) << ::testing::PrintToString(files);
    EXPECT_FALSE(fs::exists(fs::path(dir).parent_path() / "evil.png"));
}

// --- OBJ ----------------------------------------------------------------------

TEST(Obj, CountsMatchTheModelAndIndicesAreInRange) {
    const fs::path dir = test::temp_dir("obj");
    const model::Map map = test_map();
    const exporter::Summary s = exporter::write_obj(map, dir / "map.obj", separate());  // no baked texture
    EXPECT_EQ(s.files.back(), dir / "map.obj");
    const std::string text = read_text(dir / "map.obj");
    const auto c = test::ObjCounts::parse(text);
    // Expected from the map: drawable surfaces (not clip / nodraw / trigger, with triangles).
    size_t vertices = 0, triangles = 0;
    for (const auto& m : map.models)
        for (const auto& surf : m.surfaces) {
            const uint32_t flags = map.materials[surf.material].flags;
            if (flags & (model::kNodraw | model::kClip | model::kTrigger) || surf.indices.empty()) continue;
            vertices += surf.vertices.size();
            triangles += surf.indices.size() / 3;
        }
    EXPECT_EQ(c.v, vertices);
    EXPECT_EQ(c.vt, vertices);
    EXPECT_EQ(c.vn, vertices);
    EXPECT_EQ(c.f, triangles);
    EXPECT_EQ(c.bad_faces, 0u);
    EXPECT_EQ(c.o, 3u);  // world, door, fence: the trigger's model has no surface left
    // The same triangles as the model's drawable surfaces, at their models' origins.
    std::vector<test::TriangleKey> want;
    for (const auto& m : map.models)
        for (const auto& surf : m.surfaces) {
            if (map.materials[surf.material].flags & (model::kNodraw | model::kClip | model::kTrigger)) continue;
            const auto at = [&](uint32_t i) {
                const Vec3 p = surf.vertices[i].position + m.origin;
                return std::array<double, 3>{p.x, p.y, p.z};
            };
            for (size_t i = 0; i + 2 < surf.indices.size(); i += 3)
                want.push_back(test::triangle_key(at(surf.indices[i]), at(surf.indices[i + 1]), at(surf.indices[i + 2])));
        }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(test::obj_triangles(c), want);
    EXPECT_EQ(s.vertices, vertices);
    EXPECT_EQ(s.triangles, triangles);
    // usemtl per (model, material): world wall (lit and unlit merged: no baking), sky, water; door window; fence.
    EXPECT_EQ(c.usemtl, 5u);
    EXPECT_EQ(text.find("usemtl common"), std::string::npos);

    // Positions: the door's origin is added (OBJ has no nodes); vt flipped to bottom-left.
    bool found_door = false;
    for (size_t i = 0; i + 2 < c.positions.size(); i += 3)
        if (c.positions[i] == 10 && c.positions[i + 1] == 20 && c.positions[i + 2] == 30) found_door = true;
    EXPECT_TRUE(found_door);
    EXPECT_EQ(c.uvs[1], 1.0);  // floor vertex 0 has v = 0
    EXPECT_EQ(c.uvs[5], 0.0);  // floor vertex 2 has v = 1

    // The material library: one newmtl per usemtl name, textures beside it.
    const std::string mtl = read_text(dir / "map.mtl");
    EXPECT_NE(text.find("mtllib map.mtl"), std::string::npos);
    for (const auto& name : c.materials) EXPECT_NE(mtl.find("newmtl " + name + "\n"), std::string::npos) << name;
    size_t at = 0, maps = 0;
    while ((at = mtl.find("map_Kd ", at)) != std::string::npos) {
        const size_t end = mtl.find('\n', at);
        const std::string file = mtl.substr(at + 7, end - at - 7);
        EXPECT_TRUE(fs::exists(dir / file)) << file;
        const auto png = decode_png(read_file(dir / file));
        EXPECT_TRUE(png.rgba == map.textures[0].rgba || png.rgba == map.textures[1].rgba) << file;
        ++maps;
        at = end;
    }
    EXPECT_EQ(maps, 3u);  // wall, window, fence (fence shares the window's texture file)
    EXPECT_NE(mtl.find("map_d "), std::string::npos);
    EXPECT_EQ(std::count(s.files.begin(), s.files.end(), dir / "map.mtl"), 1);
}

TEST(Obj, TrianglesAreCounterClockwiseAndYUpWorks) {
    const fs::path dir = test::temp_dir("obj_axes");
    model::Map map;
    map.materials = {{"floor", 0, 0, 0, -1, {}}};
    model::Model world;
    world.surfaces.push_back(quad(0, {0, 0, 0}, {64, 0, 0}, {0, 32, 0}, {0, 0, 1}, -1));
    map.models.push_back(world);
    exporter::Options options;
    options.y_up = true;
    options.scale = 2;
    exporter::write_obj(map, dir / "a.obj", options);
    const auto c = test::ObjCounts::parse(read_text(dir / "a.obj"));
    ASSERT_EQ(c.v, 4u);
    for (size_t i = 0; i < 4; ++i) {
        const Vec3 p = map.models[0].surfaces[0].vertices[i].position;
        EXPECT_EQ(c.positions[i * 3], p.x * 2);
        EXPECT_EQ(c.positions[i * 3 + 1], p.z * 2);
        EXPECT_EQ(c.positions[i * 3 + 2], -p.y * 2);
    }
    const std::string text = read_text(dir / "a.obj");
    EXPECT_NE(text.find("vn 0 1 0"), std::string::npos);
    // Floor seen from above (+Y now): faces counter-clockwise, i.e. cross(b-a, c-a) along +Y.
    size_t at = 0;
    while ((at = text.find("\nf ", at)) != std::string::npos) {
        unsigned a, b, cc;
        ASSERT_EQ(std::sscanf(text.c_str() + at + 1, "f %u/%*u/%*u %u/%*u/%*u %u/%*u/%*u", &a, &b, &cc), 3);
        const auto P = [&](unsigned k) { return Vec3{float(c.positions[(k - 1) * 3]), float(c.positions[(k - 1) * 3 + 1]), float(c.positions[(k - 1) * 3 + 2])}; };
        EXPECT_GT(model::cross(P(b) - P(a), P(cc) - P(a)).y, 0);
        ++at;
    }
}

// --- CLI -----------------------------------------------------------------------

TEST(ExportCli, UsageErrors) {
    const fs::path dir = test::temp_dir("export_cli");
    const std::string bsp = (dir / "x.bsp").string();
    write_file_atomic(bsp, Bytes(64, 0));
    EXPECT_EQ(test::run_cli({"export", bsp}).exit_code, 2);                                   // no -o
    EXPECT_EQ(test::run_cli({"export", bsp, "-o", (dir / "x.fbx").string()}).exit_code, 2);   // extension
    EXPECT_EQ(test::run_cli({"export", bsp, "-o", (dir / "x.glb").string(), "--models", "some"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"export", bsp, "-o", (dir / "x.glb").string(), "--scale", "-1"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"export", bsp, "-o", (dir / "x.glb").string(), "--scale", "abc"}).exit_code, 2);
    for (const char* level : {"0", "17", "-1", "2x", "fine"})
        EXPECT_EQ(test::run_cli({"export", bsp, "-o", (dir / "x.glb").string(), "--patch-level", level}).exit_code, 2)
            << level;
    const auto bad = test::run_cli({"export", bsp, "-o", (dir / "x.glb").string()});
    EXPECT_EQ(bad.exit_code, 1) << bad.err;  // not a BSP file
    EXPECT_FALSE(fs::exists(dir / "x.glb"));
    const auto missing = test::run_cli({"export", (dir / "none.bsp").string(), "-o", (dir / "x.obj").string()});
    EXPECT_EQ(missing.exit_code, 1);
    const auto help = test::run_cli({"export", "--help"});
    EXPECT_EQ(help.exit_code, 0);
    for (const char* option : {"--models", "--skip", "--no-lightmaps", "--scale", "--y-up", "--tools", "--patch-level", "--hdr"})
        EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

TEST(Obj, OneBigGroupIsCutBetweenTheTwoHalves) {
    // One material, many surfaces: the group is formatted by two threads and
    // must still read as one `o`, one `usemtl` and the model's triangles.
    const fs::path dir = test::temp_dir("obj_split");
    model::Map map;
    map.materials = {{"only", 0, 0, 0, -1, {}}};
    model::Model world;
    for (int i = 0; i < 101; ++i)
        world.surfaces.push_back(quad(0, {float(i * 16), 0, 0}, {16, 0, 0}, {0, 16, 0}, {0, 0, 1}, -1));
    map.models.push_back(world);
    exporter::write_obj(map, dir / "a.obj");
    const auto c = test::ObjCounts::parse(read_text(dir / "a.obj"));
    EXPECT_EQ(c.o, 1u);
    EXPECT_EQ(c.usemtl, 1u);
    EXPECT_EQ(c.v, 404u);
    EXPECT_EQ(c.f, 202u);
    EXPECT_EQ(c.bad_faces, 0u);
    std::vector<test::TriangleKey> want;
    for (const auto& surf : map.models[0].surfaces)
        for (size_t i = 0; i + 2 < surf.indices.size(); i += 3) {
            const auto at = [&](uint32_t k) {
                const Vec3 p = surf.vertices[k].position;
                return std::array<double, 3>{p.x, p.y, p.z};
            };
            want.push_back(test::triangle_key(at(surf.indices[i]), at(surf.indices[i + 1]), at(surf.indices[i + 2])));
        }
    std::sort(want.begin(), want.end());
    EXPECT_EQ(test::obj_triangles(c), want);
}

// --- Lighting: baked (the default), separate, none; exposure; sky ---------------

namespace {

/// One lit 64x64 floor quad whose lightmap UVs cover a 4x4 atlas of one
/// grey luxel value, textured (a 2x2 texture of one colour) or not.
model::Map lit_quad(Format format, uint8_t luxel, bool textured) {
    model::Map map;
    map.format = format;
    map.materials = {{"floor", 0, 2, 2, textured ? 0 : -1, {}}, {"sky", model::kSky, 0, 0, -1, {}}};
    if (textured) map.textures = {{"floor", 2, 2, {200, 100, 50, 255, 200, 100, 50, 255, 200, 100, 50, 255, 200, 100, 50, 255}}};
    model::Model world;
    model::Surface s = quad(0, {0, 0, 0}, {64, 0, 0}, {0, 64, 0}, {0, 0, 1}, 0);
    const model::Vec2 corners[4] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    for (int i = 0; i < 4; ++i) s.vertices[size_t(i)].lightmap_uv = corners[i];
    world.surfaces.push_back(s);
    world.surfaces.push_back(quad(1, {0, 0, 128}, {64, 0, 0}, {0, 64, 0}, {0, 0, -1}, -1));
    map.models.push_back(world);
    map.lightmaps.push_back({0, 4, 4, std::vector<uint8_t>(48, luxel)});
    return map;
}

/// The baked image of an export and its lit material.
struct BakedExport {
    test::GltfFile file;
    nlohmann::json material;  ///< the lit floor's
    DecodedPng baked;
};

BakedExport export_baked(const model::Map& map, exporter::Options options = {}) {
    options.bake_texels_per_luxel = options.bake_texels_per_luxel ? options.bake_texels_per_luxel : 2;
    BakedExport out{export_glb(map, options), {}, {}};
    for (const auto& m : out.file.doc["materials"])
        if (m["name"] == "floor") out.material = m;
    const auto& t = out.material["pbrMetallicRoughness"]["baseColorTexture"];
    out.baked = decode_png(out.file.image_bytes(out.file.doc["textures"][t["index"].get<size_t>()]["source"]));
    return out;
}

/// The centre texel of a decoded image.
std::array<int, 3> centre(const DecodedPng& png) {
    const size_t p = (size_t(png.height / 2) * png.width + png.width / 2) * 4;
    return {png.rgba[p], png.rgba[p + 1], png.rgba[p + 2]};
}

}  // namespace

TEST(Lighting, BakedIsTheTextureTimesTheEngineLightOnUnlitMaterials) {
    const BakedExport q2 = export_baked(lit_quad(Format::quake2, 64, true));
    const auto& m = q2.material;
    EXPECT_TRUE(m["extensions"].contains("KHR_materials_unlit"));
    EXPECT_FALSE(m.contains("occlusionTexture"));
    EXPECT_EQ(m["pbrMetallicRoughness"]["baseColorTexture"]["texCoord"], 1);
    EXPECT_EQ(m["extras"]["lightmap"]["baked"], true);
    EXPECT_EQ(m["extras"]["lightmap"]["texels_per_luxel"], 2);
    EXPECT_EQ(m["extras"]["lightmap"]["scale"], 2.0);
    EXPECT_EQ(q2.baked.width, 8u);  // 4 luxels x 2
    EXPECT_EQ(q2.baked.height, 8u);
    // Quake 2: light x2 (64 -> 128), times the texture (200, 100, 50) / 255.
    const auto c = centre(q2.baked);
    EXPECT_NEAR(c[0], 200 * 128 / 255.0, 1);
    EXPECT_NEAR(c[1], 100 * 128 / 255.0, 1);
    EXPECT_NEAR(c[2], 50 * 128 / 255.0, 1);
    for (const auto& mat : q2.file.doc["materials"]) EXPECT_TRUE(mat["extensions"].contains("KHR_materials_unlit"));
    // Lit primitives have TEXCOORD_1 and no COLOR_0.
    for (const auto& mesh : q2.file.doc["meshes"])
        for (const auto& prim : mesh["primitives"])
            if (q2.file.doc["materials"][prim["material"].get<size_t>()]["name"] == "floor") {
                EXPECT_TRUE(prim["attributes"].contains("TEXCOORD_1"));
                EXPECT_FALSE(prim["attributes"].contains("COLOR_0"));
            }

    // Quake 3: x4 (64 -> 256, kept at 255 with its hue): the texture itself.
    EXPECT_EQ(centre(export_baked(lit_quad(Format::quake3, 64, true)).baked), (std::array<int, 3>{200, 100, 50}));
    // Source: the model's values as they are.
    const auto src = centre(export_baked(lit_quad(Format::source, 64, true)).baked);
    EXPECT_NEAR(src[0], 200 * 64 / 255.0, 1);
    // GoldSrc: its light gamma curve brightens a dark luxel.
    const auto gs = centre(export_baked(lit_quad(Format::goldsrc, 64, true)).baked);
    EXPECT_GT(gs[0], 200 * 64 / 255.0 + 10);
    EXPECT_LT(gs[0], 200);
}

TEST(Lighting, ExposureDoublesPerStep) {
    exporter::Options o;
    o.exposure = 1;  // Quake 2: 32 x2 x2 = 128
    const auto c = centre(export_baked(lit_quad(Format::quake2, 32, true), o).baked);
    EXPECT_NEAR(c[0], 200 * 128 / 255.0, 1);
    o.exposure = -1;  // 128 x2 / 2 = 128
    EXPECT_NEAR(centre(export_baked(lit_quad(Format::quake2, 128, true), o).baked)[0], 200 * 128 / 255.0, 1);
}

TEST(Lighting, UntexturedLitMaterialsShowTheLightTimesAFlatGrey) {
    exporter::Options o;
    o.bake_texels_per_luxel = 0;  // automatic: no texture to multiply, the shaded atlas itself
    const test::GltfFile f = export_glb(lit_quad(Format::quake1, 100, false), o);
    const nlohmann::json* floor = nullptr;
    for (const auto& m : f.doc["materials"])
        if (m["name"] == "floor") floor = &m;
    ASSERT_NE(floor, nullptr);
    const auto& pbr = (*floor)["pbrMetallicRoughness"];
    ASSERT_TRUE(pbr.contains("baseColorFactor"));
    EXPECT_NEAR(pbr["baseColorFactor"][0].get<double>(), 0.2140, 1e-3);  // sRGB 0.5 in linear light
    const auto png = decode_png(f.image_bytes(f.doc["textures"][pbr["baseColorTexture"]["index"].get<size_t>()]["source"]));
    EXPECT_EQ(png.width, 4u);
    EXPECT_EQ(centre(png), (std::array<int, 3>{200, 200, 200}));  // Quake 1: x2
}

TEST(Lighting, SeparateKeepsTheAtlasAndNoneDropsIt) {
    const model::Map map = lit_quad(Format::quake2, 64, true);
    const test::GltfFile sep = export_glb(map, separate());
    for (const auto& m : sep.doc["materials"])
        if (m["name"] == "floor") {
            EXPECT_FALSE(m.contains("extensions"));
            ASSERT_TRUE(m.contains("occlusionTexture"));
            const auto png = decode_png(sep.image_bytes(sep.doc["textures"][m["occlusionTexture"]["index"].get<size_t>()]["source"]));
            EXPECT_EQ(centre(png), (std::array<int, 3>{64, 64, 64}));  // as stored: relighters apply extras.lightmap.scale
            EXPECT_EQ(m["extras"]["lightmap"]["scale"], 2.0);
        }
    exporter::Options none;
    none.lighting = exporter::Lighting::none;
    const test::GltfFile n = export_glb(map, none);
    for (const auto& m : n.doc["materials"]) EXPECT_FALSE(m["extras"].contains("lightmap"));
    for (const auto& mesh : n.doc["meshes"])
        for (const auto& prim : mesh["primitives"]) EXPECT_FALSE(prim["attributes"].contains("TEXCOORD_1"));
}

TEST(Lighting, NoSkyDropsSkySurfaces) {
    const model::Map map = lit_quad(Format::quake1, 64, true);
    const auto with = exporter::build_gltf(map, {}, true);
    exporter::Options o;
    o.sky = false;
    const auto without = exporter::build_gltf(map, o, true);
    EXPECT_EQ(without.summary.skipped_surfaces, with.summary.skipped_surfaces + 1);
    EXPECT_EQ(without.summary.triangles + 2, with.summary.triangles);
    EXPECT_EQ(without.json.find("\"sky\""), std::string::npos);
}

namespace {

// Sixteen 32-unit floor quads, each lit by a 2 x 2 luxel patch of its own
// colour in the middle of a 16 x 16 luxel cell of a 64 x 64 atlas (the
// atlas is mostly empty, as on maps of small faces), under a white texture.
model::Map lit_cells() {
    model::Map map;
    map.format = Format::source;  // light x1: the baked texel is the luxel
    map.materials = {{"floor", 0, 2, 2, 0, {}}};
    map.textures = {{"floor", 2, 2, std::vector<uint8_t>(16, 255)}};
    model::LightmapAtlas page{0, 64, 64, std::vector<uint8_t>(64 * 64 * 3, 0)};
    model::Model world;
    for (int i = 0; i < 16; ++i) {
        const int cx = i % 4, cy = i / 4;
        for (int y = cy * 16; y < cy * 16 + 16; ++y)
            for (int x = cx * 16; x < cx * 16 + 16; ++x) {
                uint8_t* luxel = &page.rgb[size_t(y * 64 + x) * 3];
                luxel[0] = uint8_t(30 + 10 * i), luxel[1] = uint8_t(200 - 10 * i), luxel[2] = uint8_t(20 + 7 * i);
            }
        model::Surface s = quad(0, {float(64 * i), 0, 0}, {32, 0, 0}, {0, 32, 0}, {0, 0, 1}, 0);
        const float u0 = float(cx * 16 + 7) / 64, u1 = float(cx * 16 + 9) / 64;
        const float v0 = float(cy * 16 + 7) / 64, v1 = float(cy * 16 + 9) / 64;
        const model::Vec2 corners[4] = {{u0, v0}, {u1, v0}, {u1, v1}, {u0, v1}};
        for (int c = 0; c < 4; ++c) s.vertices[size_t(c)].lightmap_uv = corners[c];
        world.surfaces.push_back(s);
    }
    map.models.push_back(world);
    map.lightmaps.push_back(std::move(page));
    return map;
}

/// The colour lit_cells() gives quad i.
std::array<int, 3> cell_colour(int i) { return {30 + 10 * i, 200 - 10 * i, 20 + 7 * i}; }

/// The texel of `png` under texture coordinate (u, v).
std::array<int, 3> texel_at(const DecodedPng& png, double u, double v) {
    const size_t x = size_t(std::clamp(u * png.width, 0.0, png.width - 1.0));
    const size_t y = size_t(std::clamp(v * png.height, 0.0, png.height - 1.0));
    const uint8_t* p = png.rgba.data() + (y * png.width + x) * 4;
    return {p[0], p[1], p[2]};
}

}  // namespace

// The baked texture packs each lit surface's texels instead of keeping the
// atlas layout (mostly empty here), and the lit vertices' TEXCOORD_1 (glTF)
// and vt (OBJ) follow: every triangle's centre lands on its own quad's colour.
TEST(Lighting, BakedTexturePacksSurfacesAndTheirUvsFollow) {
    const model::Map map = lit_cells();
    const BakedExport glb = export_baked(map);  // 2 texels per luxel: the atlas layout would be 128 x 128
    EXPECT_EQ(glb.material["extras"]["lightmap"]["texels_per_luxel"], 2);
    EXPECT_LT(size_t(glb.baked.width) * glb.baked.height, size_t(128 * 128) / 4)
        << glb.baked.width << " x " << glb.baked.height;
    size_t triangles = 0;
    for (const auto& prim : glb.file.doc["meshes"][0]["primitives"]) {
        const auto pos = glb.file.accessor(prim["attributes"]["POSITION"]);
        const auto uv1 = glb.file.accessor(prim["attributes"]["TEXCOORD_1"]);
        const auto idx = glb.file.accessor(prim["indices"]);
        for (size_t t = 0; t + 2 < idx.size(); t += 3, ++triangles) {
            double x = 0, u = 0, v = 0;
            for (size_t c = 0; c < 3; ++c) {
                const size_t k = size_t(idx[t + c]);
                x += pos[k * 3] / 3, u += uv1[k * 2] / 3, v += uv1[k * 2 + 1] / 3;
            }
            EXPECT_EQ(texel_at(glb.baked, u, v), cell_colour(int(x / 64))) << "triangle " << t / 3;
        }
    }
    EXPECT_EQ(triangles, 32u);

    const fs::path dir = test::temp_dir("baked_cells");
    exporter::Options options;
    options.bake_texels_per_luxel = 2;
    exporter::write_obj(map, dir / "out.obj", options);
    const DecodedPng baked = decode_png(read_file(dir / "out_baked.png"));
    EXPECT_EQ(baked.rgba, glb.baked.rgba);
    const auto obj = test::ObjCounts::parse(read_text(dir / "out.obj"));
    ASSERT_EQ(obj.faces.size(), 32u);
    for (const auto& f : obj.faces) {  // v, vt and vn share indices
        double x = 0, u = 0, v = 0;
        for (const size_t k : f) x += obj.positions[(k - 1) * 3] / 3, u += obj.uvs[(k - 1) * 2] / 3, v += obj.uvs[(k - 1) * 2 + 1] / 3;
        EXPECT_EQ(texel_at(baked, u, 1 - v), cell_colour(int(x / 64)));  // vt is flipped
    }
}

// Surfaces of a black texture bake to black whatever their light: they are
// not baked, and every TEXCOORD_1 of theirs points at one black texel, so the
// baked texture is no larger for them; a texture one texel short of black is
// baked as any other.
TEST(Lighting, BlackTexturedSurfacesShareOneBlackTexel) {
    const auto with_void = [](uint8_t red) {
        model::Map map = lit_cells();
        map.materials.push_back({"void", 0, 2, 2, 1, {}});  // texture 1
        std::vector<uint8_t> rgba(16, 0);
        for (size_t p = 3; p < rgba.size(); p += 4) rgba[p] = 255;
        rgba[0] = red;
        map.textures.push_back({"void", 2, 2, rgba});
        // Two large lit quads over the atlas's left half, lit by the cells' luxels (the cells use
        // only the middle ones of theirs).
        for (int i = 0; i < 2; ++i) {
            model::Surface s = quad(1, {float(64 * i), 500, 0}, {32, 0, 0}, {0, 32, 0}, {0, 0, 1}, 0);
            const float v0 = i ? 0.5f : 0.0f, v1 = i ? 1.0f : 0.5f;
            const model::Vec2 corners[4] = {{0.0f, v0}, {0.5f, v0}, {0.5f, v1}, {0.0f, v1}};
            for (int c = 0; c < 4; ++c) s.vertices[size_t(c)].lightmap_uv = corners[c];
            map.models[0].surfaces.push_back(s);
        }
        return map;
    };
    const auto void_uvs = [](const BakedExport& glb) {
        std::set<std::pair<float, float>> uvs;
        for (const auto& prim : glb.file.doc["meshes"][0]["primitives"]) {
            if (glb.file.doc["materials"][prim["material"].get<size_t>()]["name"] != "void") continue;
            const auto uv1 = glb.file.accessor(prim["attributes"]["TEXCOORD_1"]);
            for (size_t k = 0; k + 1 < uv1.size(); k += 2) uvs.insert({float(uv1[k]), float(uv1[k + 1])});
        }
        return uvs;
    };
    const BakedExport black = export_baked(with_void(0));
    const BakedExport grey = export_baked(with_void(1));  // one texel (1, 0, 0)
    const BakedExport without = export_baked(lit_cells());
    const auto black_uvs = void_uvs(black);
    ASSERT_EQ(black_uvs.size(), 1u);
    const auto [u, v] = *black_uvs.begin();
    EXPECT_EQ(texel_at(black.baked, u, v), (std::array<int, 3>{0, 0, 0}));
    // Without them, the same cells and a 5 x 5 box: no larger than the cells alone plus that box's shelf.
    EXPECT_LE(size_t(black.baked.width) * black.baked.height, size_t(without.baked.width) * (without.baked.height + 5));
    EXPECT_GT(void_uvs(grey).size(), 1u);  // baked: as large as the atlas layout (half of it is theirs)
    EXPECT_GT(size_t(grey.baked.width) * grey.baked.height, 4 * size_t(black.baked.width) * black.baked.height);
    for (const auto& prim : black.file.doc["meshes"][0]["primitives"]) {  // the cells keep their colours
        if (black.file.doc["materials"][prim["material"].get<size_t>()]["name"] != "floor") continue;
        const auto pos = black.file.accessor(prim["attributes"]["POSITION"]);
        const auto uv1 = black.file.accessor(prim["attributes"]["TEXCOORD_1"]);
        const auto idx = black.file.accessor(prim["indices"]);
        for (size_t t = 0; t + 2 < idx.size(); t += 3) {
            double x = 0, tu = 0, tv = 0;
            for (size_t c = 0; c < 3; ++c) {
                const size_t k = size_t(idx[t + c]);
                x += pos[k * 3] / 3, tu += uv1[k * 2] / 3, tv += uv1[k * 2 + 1] / 3;
            }
            EXPECT_EQ(texel_at(black.baked, tu, tv), cell_colour(int(x / 64))) << "triangle " << t / 3;
        }
    }
}

TEST(Lighting, BakedExportsPassTheValidatorAndObjUsesTheBakedTexture) {
    const fs::path dir = test::temp_dir("baked");
    model::Map map = lit_quad(Format::quake1, 64, true);
    map.textures[0].name = "*water0";  // '*' -> '#' in file names, %23 in URIs
    map.materials.push_back({"+0slip", 0, 2, 2, 0, {}});
    map.models[0].surfaces.push_back(quad(2, {0, 0, 64}, {64, 0, 0}, {0, 64, 0}, {0, 0, 1}, -1));
    for (const char* name : {"a/b/out.glb", "c/out.gltf"}) {  // missing folders are created
        exporter::write_gltf(map, dir / name);
        const auto v = test::validate_gltf(dir / name);
        ASSERT_TRUE(v.ran) << v.errors;
        EXPECT_EQ(v.num_errors(), 0) << name << "\n" << v.error_messages();
    }
    EXPECT_TRUE(fs::exists(dir / "c" / "out_#water0.png"));
    EXPECT_NE(read_text(dir / "c" / "out.gltf").find("\"out_%23water0.png\""), std::string::npos);
    exporter::write_obj(map, dir / "d" / "out.obj");
    const std::string mtl = read_text(dir / "d" / "out.mtl");
    EXPECT_NE(mtl.find("newmtl floor\n"), std::string::npos);
    EXPECT_NE(mtl.find("map_Kd out_baked.png"), std::string::npos) << mtl;
    EXPECT_NE(mtl.find("newmtl +0slip\n"), std::string::npos) << mtl;
    EXPECT_NE(mtl.find("map_Kd out_#water0.png"), std::string::npos) << mtl;  // the unlit group's own texture
    EXPECT_TRUE(fs::exists(dir / "d" / "out_baked.png"));
    // The lit floor's vt are its lightmap UVs (flipped): (0, 1), (1, 1), (1, 0), (0, 0).
    const std::string obj = read_text(dir / "d" / "out.obj");
    EXPECT_NE(obj.find("vt 1 0\n"), std::string::npos);
    EXPECT_EQ(exporter::safe_name("+0slip"), "+0slip");
    EXPECT_EQ(exporter::safe_name("*water0"), "#water0");
}
