// BSPX on the corpus maps that carry it (ericw-tools compiles): the listing
// against an independent reading of the raw bytes, BRUSHLIST records, `check`
// clean with the BRUSHLIST info, and the lit build / export of a map lit only
// through RGBLIGHTING + DECOUPLED_LM (its lighting lump is empty).
#include <bspkit/bspx.hpp>
#include <bspkit/check.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/model.hpp>

#include "corpus.hpp"
#include "model/builders.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>

using namespace bspkit;
using namespace bspkit::test;

namespace {

constexpr const char* kLit = "q1_bsp2/bevytb_example_q1_lit.bsp";
constexpr const char* kPostretro = "q1_bsp2/postretro_test.bsp";

struct RawLump {
    std::string name;
    int32_t offset, length;
};

/// The BSPX directory read straight from the bytes of a 15-lump Quake 1 /
/// BSP2 file (4-byte magic, 15 x {offset, length}).
std::vector<RawLump> raw_bspx(const Bytes& file) {
    uint32_t end = 0;
    for (int i = 0; i < 15; ++i) {
        int32_t o, l;
        std::memcpy(&o, file.data() + 4 + 8 * i, 4);
        std::memcpy(&l, file.data() + 8 + 8 * i, 4);
        end = std::max(end, uint32_t(o + l));
    }
    end = (end + 3) & ~3u;
    std::vector<RawLump> out;
    if (end + 8 > file.size() || std::memcmp(file.data() + end, "BSPX", 4) != 0) return out;
    int32_t n;
    std::memcpy(&n, file.data() + end + 4, 4);
    for (int32_t k = 0; k < n; ++k) {
        const uint8_t* e = file.data() + end + 8 + 32 * k;
        RawLump r;
        r.name = std::string(reinterpret_cast<const char*>(e), strnlen(reinterpret_cast<const char*>(e), 24));
        std::memcpy(&r.offset, e + 24, 4);
        std::memcpy(&r.length, e + 28, 4);
        out.push_back(r);
    }
    return out;
}

void expect_listing_matches_raw(const std::string& path, const std::vector<std::string>& names) {
    const Bytes bytes = read_corpus(corpus_file(path));
    const Bsp bsp = Bsp::parse(bytes, path);
    const bspx::Directory dir = bspx::read(bsp);
    const auto raw = raw_bspx(bytes);
    ASSERT_EQ(dir.lumps.size(), raw.size());
    std::vector<std::string> got;
    for (size_t k = 0; k < raw.size(); ++k) {
        EXPECT_EQ(dir.lumps[k].name, raw[k].name);
        EXPECT_EQ(dir.lumps[k].offset, raw[k].offset);
        EXPECT_EQ(dir.lumps[k].length, raw[k].length);
        EXPECT_FALSE(dir.lumps[k].truncated());
        got.push_back(dir.lumps[k].name);
    }
    EXPECT_EQ(got, names);
    EXPECT_TRUE(dir.diagnostics.empty());
    // The CLI lists the same, and extracts each lump's bytes.
    const auto r = run_cli({"info", corpus_file(path).path.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["bspx"].size(), raw.size());
    for (size_t k = 0; k < raw.size(); ++k) {
        EXPECT_EQ(j["bspx"][k]["name"], raw[k].name);
        EXPECT_EQ(j["bspx"][k]["offset"], raw[k].offset);
        EXPECT_EQ(j["bspx"][k]["length"], raw[k].length);
    }
    const std::string out = temp_dir("bspx_corpus") + "/lump.bin";
    const auto ex = run_cli({"lump", "extract", corpus_file(path).path.string(), "bspx:" + raw.back().name, "-o", out});
    ASSERT_EQ(ex.exit_code, 0) << ex.err;
    EXPECT_EQ(std::filesystem::file_size(out), size_t(raw.back().length));
}

}  // namespace

TEST(BspxCorpus, ListsTheLumpsOfEachMap) {
    expect_listing_matches_raw(kLit, {"LIGHTGRID_OCTREE", "DECOUPLED_LM", "RGBLIGHTING", "BRUSHLIST"});
    expect_listing_matches_raw(kPostretro, {"BRUSHLIST"});
}

TEST(BspxCorpus, BrushListRecordsNameTheMapsModels) {
    for (const char* path : {kLit, kPostretro}) {
        SCOPED_TRACE(path);
        const Bsp bsp = Bsp::parse(read_corpus(corpus_file(path)), path);
        const bspx::Directory dir = bspx::read(bsp);
        const bspx::Lump* l = dir.find("BRUSHLIST");
        ASSERT_NE(l, nullptr);
        const bspx::BrushList list = bspx::decode_brushlist(bsp, *l);
        const quake1::Map q(bsp);
        ASSERT_FALSE(list.models.empty());
        EXPECT_EQ(list.models[0].header.modelnum, 0);  // the world first
        size_t bytes = 0;
        for (const auto& m : list.models) {
            EXPECT_EQ(m.header.ver, 1);
            EXPECT_LT(size_t(m.header.modelnum), q.models().size());
            EXPECT_EQ(size_t(m.header.numbrushes), m.brushes.size());
            size_t planes = 0;
            bytes += sizeof(bspx::bspx_brushlist_model_t);
            for (const auto& b : m.brushes) {
                for (int a = 0; a < 3; ++a) EXPECT_LE(b.header.mins[a], b.header.maxs[a]);
                // Brushes lie inside their model's bounds (plus the 1-unit pad of the compiler).
                const quake1::dmodel_t& mod = q.models()[size_t(m.header.modelnum)];
                for (int a = 0; a < 3; ++a) {
                    EXPECT_GE(b.header.mins[a], mod.mins[a] - 1.5f);
                    EXPECT_LE(b.header.maxs[a], mod.maxs[a] + 1.5f);
                }
                // Only non-axial planes are written.
                for (const auto& p : b.planes) {
                    int axial = 0;
                    for (float c : p.normal) axial += std::fabs(c) == 1.0f;
                    EXPECT_EQ(axial, 0);
                }
                planes += b.planes.size();
                bytes += sizeof(bspx::bspx_brushlist_brush_t) + b.planes.size() * sizeof(bspx::bspx_brushlist_plane_t);
            }
            EXPECT_EQ(size_t(m.header.numplanes), planes);
        }
        EXPECT_EQ(bytes, l->data.size());  // the records account for the whole lump
    }
}

TEST(BspxCorpus, MapsWithBrushListCheckCleanAndSayWhichHulls) {
    for (const char* path : {kLit, kPostretro}) {
        SCOPED_TRACE(path);
        const Bsp bsp = Bsp::parse(read_corpus(corpus_file(path)), path);
        const CheckReport report = check(bsp);
        EXPECT_EQ(report.errors(), 0u);
        ASSERT_EQ(report.infos(), 1u);
        for (const Finding& f : report.findings) {
            EXPECT_EQ(f.message.find("headnode"), std::string::npos) << f.message;
            if (f.severity != Severity::info) continue;
            EXPECT_EQ(f.lump, "bspx:BRUSHLIST");
            EXPECT_NE(f.message.find("hulls 1 and 2"), std::string::npos) << f.message;
            const bool no_clipnodes = quake1::Map(bsp).bsp2().clipnodes.empty();
            EXPECT_EQ(f.message.find("no clipnodes") != std::string::npos, no_clipnodes) << f.message;
        }
    }
}

// The lit map: every face's lightmap comes from DECOUPLED_LM (lightofs is -1
// on every face) and RGBLIGHTING; the build's images and the packed atlas hold
// exactly the RGBLIGHTING bytes of the faces, read here from the raw file.
TEST(BspxCorpus, RgbLightingAndDecoupledLmLightTheMap) {
    const Bytes bytes = read_corpus(corpus_file(kLit));
    const Bsp bsp = Bsp::parse(bytes, kLit);
    const quake1::Map q(bsp);
    EXPECT_TRUE(q.lighting().empty());
    RawLump rgb{}, dec{};
    for (const RawLump& r : raw_bspx(bytes)) {
        if (r.name == "RGBLIGHTING") rgb = r;
        if (r.name == "DECOUPLED_LM") dec = r;
    }
    const auto faces = q.bsp2().faces;
    ASSERT_EQ(size_t(dec.length), faces.size() * 40);
    struct Raw {
        uint16_t w, h;
        int32_t offset;
        float m[2][4];
    };
    auto raw_dec = [&](size_t f) {
        Raw r;
        const uint8_t* p = bytes.data() + dec.offset + 40 * f;
        std::memcpy(&r.w, p, 2);
        std::memcpy(&r.h, p + 2, 2);
        std::memcpy(&r.offset, p + 4, 4);
        std::memcpy(r.m, p + 8, 32);
        return r;
    };

    model::BuildOptions options;
    options.textures = false;
    model::Map unpacked;
    quake1::build_model(bsp, options, unpacked);
    EXPECT_EQ(unpacked.lightmap_source, "bspx:RGBLIGHTING");
    size_t lit = 0;
    for (const auto& m : unpacked.models)
        for (const auto& s : m.surfaces) {
            if (s.lightmap < 0) continue;
            ++lit;
            const Raw r = raw_dec(size_t(s.face));
            const auto& img = unpacked.lightmap_images[size_t(s.lightmap)];
            ASSERT_EQ(img.width, r.w);
            ASSERT_EQ(img.height, r.h);
            const size_t n = size_t(r.w) * r.h * 3;
            for (size_t k = 0; k < img.styles.size(); ++k) {
                const uint8_t* src = bytes.data() + rgb.offset + size_t(r.offset) * 3 + k * n;
                ASSERT_EQ(img.styles[k], Bytes(src, src + n)) << "face " << s.face << " slot " << k;
            }
        }
    EXPECT_GT(lit, faces.size() / 2);

    // Packed: the style-0 page holds each face's samples where its UVs point.
    const model::Map map = model::build(bsp, options);
    ASSERT_FALSE(map.lightmaps.empty());
    const model::LightmapAtlas& page = map.lightmaps[0];
    ASSERT_EQ(page.style, 0u);
    size_t compared = 0;
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) {
            if (s.lightmap < 0 || s.styles[0] != 0) continue;
            const Raw r = raw_dec(size_t(s.face));
            for (const model::Vertex& v : s.vertices) {
                const double p[3] = {v.position.x, v.position.y, v.position.z};
                const double ls = p[0] * r.m[0][0] + p[1] * r.m[0][1] + p[2] * r.m[0][2] + r.m[0][3];
                const double lt = p[0] * r.m[1][0] + p[1] * r.m[1][1] + p[2] * r.m[1][2] + r.m[1][3];
                // A corner exactly between two luxels could round either way in float: skip it.
                const double fs = ls + 0.5 - std::floor(ls + 0.5), ft = lt + 0.5 - std::floor(lt + 0.5);
                if (fs < 1e-3 || fs > 1 - 1e-3 || ft < 1e-3 || ft > 1 - 1e-3) continue;
                const int64_t i = int64_t(std::floor(ls + 0.5)), j = int64_t(std::floor(lt + 0.5));
                if (i < 0 || j < 0 || i >= r.w || j >= r.h) continue;
                const size_t x = size_t(v.lightmap_uv.x * float(page.width));
                const size_t y = size_t(v.lightmap_uv.y * float(page.height));
                const uint8_t* want = bytes.data() + rgb.offset + (size_t(r.offset) + size_t(j) * r.w + size_t(i)) * 3;
                const uint8_t* got = page.rgb.data() + (y * page.width + x) * 3;
                ASSERT_EQ(Bytes(got, got + 3), Bytes(want, want + 3)) << "face " << s.face;
                ++compared;
            }
        }
    EXPECT_GT(compared, 100u);
}

TEST(BspxCorpus, LightmapsVerbWritesTheLitPages) {
    const CorpusFile& f = corpus_file(kLit);
    (void)read_corpus(f);
    const std::string dir = temp_dir("bspx_lightmaps");
    const auto r = run_cli({"lightmaps", f.path.string(), "-o", dir, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j["pages"].empty()) << r.out;
    EXPECT_TRUE(std::filesystem::exists(dir + "/lightmap_style0.png"));
}
