// BSPX extension lumps on maps the tests build: the box room of
// quake_test_maps.hpp (BSP2 / Quake 1 / Quake 2) with a BSPX tail appended
// here, intact, cut short, pointing past the end or into the lumps; the
// lighting lumps (RGBLIGHTING, a .lit beside the map, LMSHIFT, DECOUPLED_LM,
// LMOFFSET) through the geometry builders; BRUSHLIST through `check`; and
// `info` / `lump extract bspx:NAME`.
#include <bspkit/bspx.hpp>
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>

#include "model/builders.hpp"
#include "quake_test_maps.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace bspkit {
namespace {

using namespace testmaps;

struct Extra {
    std::string name;
    Bytes data;
};

/// `file` with a BSPX directory appended where ericw-tools writes it: at the
/// end of the last lump rounded up to 4, each lump 4-byte aligned after it.
Bytes with_bspx(Bytes file, const std::vector<Extra>& lumps) {
    file.resize((file.size() + 3) & ~size_t(3), 0);
    const size_t dir = file.size();
    file.insert(file.end(), {'B', 'S', 'P', 'X'});
    append<int32_t>(file, int32_t(lumps.size()));
    file.resize(file.size() + 32 * lumps.size(), 0);
    for (size_t k = 0; k < lumps.size(); ++k) {
        const size_t at = file.size();
        uint8_t* e = file.data() + dir + 8 + 32 * k;
        std::memcpy(e, lumps[k].name.data(), std::min<size_t>(lumps[k].name.size(), 23));
        store<int32_t>(e + 24, int32_t(at));
        store<int32_t>(e + 28, int32_t(lumps[k].data.size()));
        file.insert(file.end(), lumps[k].data.begin(), lumps[k].data.end());
        file.resize((file.size() + 3) & ~size_t(3), 0);
    }
    return file;
}

using Q1 = Quake1Map<quake1::Bsp2Types>;

Bytes bsp2_bytes(const std::function<void(Q1&)>& edit = {}) {
    Q1 m(false);
    if (edit) edit(m);
    return m.build(layouts::bsp2(), std::nullopt);
}

/// Offset of the BSPX header of a file made by with_bspx.
size_t bspx_offset(const Bytes& plain) { return (plain.size() + 3) & ~size_t(3); }

model::Map unpacked(const Bsp& bsp, model::BuildOptions options = {}) {
    model::Map map;
    map.format = bsp.format();
    if (bsp.format() == Format::quake2)
        quake2::build_model(bsp, options, map);
    else
        quake1::build_model(bsp, options, map);
    return map;
}

/// Distinct RGB bytes for `samples` samples: sample i = (i, i * 7, 255 - i) mod 256.
Bytes rgb_ramp(size_t samples) {
    Bytes out;
    for (size_t i = 0; i < samples; ++i) {
        out.push_back(uint8_t(i));
        out.push_back(uint8_t(i * 7));
        out.push_back(uint8_t(255 - i));
    }
    return out;
}

bool has_diagnostic(const std::vector<Diagnostic>& ds, std::string_view lump, std::string_view text) {
    for (const Diagnostic& d : ds)
        if (d.lump == lump && d.message.find(text) != std::string::npos) return true;
    return false;
}

std::string all_messages(const std::vector<Diagnostic>& ds) {
    std::string s;
    for (const Diagnostic& d : ds) s += d.lump + " @" + std::to_string(d.offset) + ": " + d.message + "\n";
    return s;
}

// ---- the directory ----------------------------------------------------------------

TEST(Bspx, ListsLumpsWithOffsetsAndLengths) {
    const Bytes plain = bsp2_bytes();
    const Bytes file = with_bspx(plain, {{"LMSHIFT", Bytes(6, 4)}, {"FACENORMALS", Bytes(10, 1)}});
    const Bsp bsp = Bsp::parse(file, "room.bsp");
    EXPECT_TRUE(bsp.diagnostics().empty()) << all_messages(bsp.diagnostics());
    const bspx::Directory dir = bspx::read(bsp);
    ASSERT_TRUE(dir.present());
    EXPECT_EQ(dir.offset, int64_t(bspx_offset(plain)));
    ASSERT_EQ(dir.lumps.size(), 2u);
    EXPECT_EQ(dir.lumps[0].name, "LMSHIFT");
    EXPECT_EQ(dir.lumps[0].offset, int64_t(bspx_offset(plain) + 8 + 64));
    EXPECT_EQ(dir.lumps[0].length, 6);
    EXPECT_EQ(dir.lumps[1].name, "FACENORMALS");
    EXPECT_EQ(dir.lumps[1].offset % 4, 0);
    EXPECT_EQ(dir.lumps[1].data.size(), 10u);
    EXPECT_EQ(dir.find("FACENORMALS"), &dir.lumps[1]);
    EXPECT_EQ(dir.find("RGBLIGHTING"), nullptr);
    // A map without a tail has no directory, and neither has a Quake 3 map.
    EXPECT_FALSE(bspx::read(Bsp::parse(plain, "plain.bsp")).present());
    EXPECT_FALSE(bspx::applies_to(Format::quake3));
}

TEST(Bspx, TruncatedDirectoryIsReported) {
    const Bytes plain = bsp2_bytes();
    Bytes file = with_bspx(plain, {{"LMSHIFT", Bytes(6, 4)}, {"RGBLIGHTING", Bytes(12, 9)}});
    file.resize(bspx_offset(plain) + 8 + 32 + 10);  // the second entry cut
    const Bsp bsp = Bsp::parse(file, "cut.bsp");
    EXPECT_TRUE(has_diagnostic(bsp.diagnostics(), "bspx", "directory of 2 lumps needs 72 bytes"))
        << all_messages(bsp.diagnostics());
    const bspx::Directory dir = bspx::read(bsp);
    ASSERT_EQ(dir.lumps.size(), 1u);  // the whole entry
    EXPECT_EQ(dir.lumps[0].name, "LMSHIFT");
    EXPECT_TRUE(dir.lumps[0].data.empty());  // its data was after the cut
    EXPECT_TRUE(has_diagnostic(dir.diagnostics, "bspx:LMSHIFT", "past the end of the file"));
    // Cut inside the 8-byte header.
    file.resize(bspx_offset(plain) + 6);
    EXPECT_TRUE(has_diagnostic(Bsp::parse(file, "cut.bsp").diagnostics(), "bspx", "header cut short"));
}

TEST(Bspx, LumpPastEndOfFileOrOverlappingIsReported) {
    const Bytes plain = bsp2_bytes();
    Bytes file = with_bspx(plain, {{"LMSHIFT", Bytes(6, 4)}, {"BRUSHLIST", Bytes(16, 0)}});
    const size_t dir = bspx_offset(plain);
    // BRUSHLIST claims 100 bytes more than the file has.
    store<int32_t>(file.data() + dir + 8 + 32 + 28, 116);
    // LMSHIFT points into the planes lump.
    const int32_t planes = Bsp::parse(plain, "x").entry(1).offset;
    store<int32_t>(file.data() + dir + 8 + 24, planes);
    const Bsp bsp = Bsp::parse(file, "bad.bsp");
    const auto& ds = bsp.diagnostics();
    EXPECT_TRUE(has_diagnostic(ds, "bspx:BRUSHLIST", "runs 100 bytes past the end of the file")) << all_messages(ds);
    EXPECT_TRUE(has_diagnostic(ds, "bspx:LMSHIFT", "overlaps lump planes")) << all_messages(ds);
    for (const Diagnostic& d : ds)
        if (d.lump == "bspx:LMSHIFT") {
            EXPECT_EQ(d.offset, planes);
        }
    // The one-line message names the lump and its offset.
    const std::string line = format_location_message({"bad.bsp", ds.back().lump, ds.back().offset}, ds.back().message);
    EXPECT_NE(line.find("bad.bsp: lump bspx:"), std::string::npos) << line;
    // The bytes present are what the lump gives.
    EXPECT_EQ(bspx::read(bsp).find("BRUSHLIST")->data.size(), 16u);
    // A directory pointing an entry into itself.
    Bytes self = with_bspx(plain, {{"LMSHIFT", Bytes(6, 4)}});
    store<int32_t>(self.data() + dir + 8 + 24, int32_t(dir + 4));
    EXPECT_TRUE(has_diagnostic(Bsp::parse(self, "self.bsp").diagnostics(), "bspx:LMSHIFT", "overlaps the BSPX directory"));
}

TEST(Bspx, HostileDirectoryGivesBoundedReport) {
    const Bytes plain = bsp2_bytes();
    Bytes file = with_bspx(plain, {});
    const size_t dir = bspx_offset(plain);
    store<int32_t>(file.data() + dir + 4, INT32_MAX);
    // 20000 entries present, each past the end of the file.
    file.resize(dir + 8 + 32 * 20000, 0);
    for (size_t k = 0; k < 20000; ++k) {
        store<int32_t>(file.data() + dir + 8 + 32 * k + 24, int32_t(dir));
        store<int32_t>(file.data() + dir + 8 + 32 * k + 28, INT32_MAX);
    }
    const bspx::Directory d = bspx::read(Bsp::parse(file, "hostile.bsp"));
    EXPECT_EQ(d.lumps.size(), 20000u);
    EXPECT_LE(d.diagnostics.size(), 65u);
    EXPECT_TRUE(has_diagnostic(d.diagnostics, "bspx", "more BSPX directory findings not listed"));
}

TEST(Bspx, LumpsSurviveALayoutChange) {
    const Bytes plain = bsp2_bytes();
    const Bytes shift(6, 4), normals(10, 1);
    Bsp bsp = Bsp::parse(with_bspx(plain, {{"LMSHIFT", shift}, {"FACENORMALS", normals}}), "room.bsp");
    bsp.replace(0, text("{\n\"classname\" \"worldspawn\"\n\"message\" \"longer entities\"\n}\n"));
    const Bsp saved = Bsp::parse(bsp.serialize(), "saved.bsp");
    EXPECT_TRUE(saved.diagnostics().empty()) << all_messages(saved.diagnostics());
    const bspx::Directory dir = bspx::read(saved);
    ASSERT_EQ(dir.lumps.size(), 2u);
    EXPECT_EQ(Bytes(dir.lumps[0].data.begin(), dir.lumps[0].data.end()), shift);
    EXPECT_EQ(Bytes(dir.lumps[1].data.begin(), dir.lumps[1].data.end()), normals);
    EXPECT_EQ(dir.lumps[1].name, "FACENORMALS");
}

// ---- lighting --------------------------------------------------------------------

TEST(BspxLighting, RgbLightingReplacesGreySamples) {
    const Bytes rgb = rgb_ramp(6 * kSamplesPerFace);
    const Bsp bsp = Bsp::parse(with_bspx(bsp2_bytes(), {{"RGBLIGHTING", rgb}}), "rgb.bsp");
    const model::Map map = unpacked(bsp);
    EXPECT_EQ(map.lightmap_source, "bspx:RGBLIGHTING");
    EXPECT_TRUE(map.diagnostics.empty()) << all_messages(map.diagnostics);
    ASSERT_EQ(map.models[0].surfaces.size(), 6u);
    for (const model::Surface& s : map.models[0].surfaces) {
        ASSERT_GE(s.lightmap, 0);
        const auto& img = map.lightmap_images[size_t(s.lightmap)];
        ASSERT_EQ(img.width * img.height, uint32_t(kSamplesPerFace));
        const size_t at = size_t(s.face) * kSamplesPerFace * 3;  // lightofs f * 81, 3 bytes per sample
        EXPECT_EQ(img.styles[0], Bytes(rgb.begin() + long(at), rgb.begin() + long(at + kSamplesPerFace * 3)));
    }
    // Too short for the last face: that face's lightmap is skipped with a diagnostic.
    const Bytes short_rgb(rgb.begin(), rgb.end() - 3);
    const model::Map cut = unpacked(Bsp::parse(with_bspx(bsp2_bytes(), {{"RGBLIGHTING", short_rgb}}), "cut.bsp"));
    EXPECT_EQ(cut.models[0].surfaces[5].lightmap, -1);
    EXPECT_TRUE(has_diagnostic(cut.diagnostics, "faces", "RGBLIGHTING")) << all_messages(cut.diagnostics);
}

TEST(BspxLighting, LitFileBesideTheMap) {
    const std::string dir = test::temp_dir("bspx_lit");
    const Bytes plain = bsp2_bytes();
    write_file_atomic(dir + "/room.bsp", plain);
    Bytes lit = {'Q', 'L', 'I', 'T'};
    append<int32_t>(lit, 1);
    const Bytes rgb = rgb_ramp(6 * kSamplesPerFace);
    lit.insert(lit.end(), rgb.begin(), rgb.end());
    write_file_atomic(dir + "/room.lit", lit);
    const Bsp bsp = Bsp::open(dir + "/room.bsp");
    EXPECT_EQ(bspx::lit_path(bsp), std::filesystem::path(dir + "/room.lit"));
    const model::Map map = unpacked(bsp);
    EXPECT_EQ(map.lightmap_source, dir + "/room.lit");
    const auto& img0 = map.lightmap_images[size_t(map.models[0].surfaces[2].lightmap)];
    EXPECT_EQ(img0.styles[0], Bytes(rgb.begin() + 2 * kSamplesPerFace * 3, rgb.begin() + 3 * kSamplesPerFace * 3));
    // Disabled: the grey lump again.
    model::BuildOptions off;
    off.lit_file = false;
    const model::Map grey = unpacked(bsp, off);
    EXPECT_EQ(grey.lightmap_source, "");
    for (uint8_t b : grey.lightmap_images[0].styles[0]) ASSERT_EQ(b, 0x80);
    // Given explicitly under another name.
    std::filesystem::rename(dir + "/room.lit", dir + "/other.lit");
    model::BuildOptions given;
    given.lit_path = dir + "/other.lit";
    EXPECT_EQ(unpacked(bsp, given).lightmap_source, dir + "/other.lit");
    EXPECT_EQ(unpacked(bsp).lightmap_source, "");  // none beside it now
    // A .lit of the wrong size is not used, and says why.
    lit.resize(lit.size() - 3);
    write_file_atomic(dir + "/room.lit", lit);
    const model::Map bad = unpacked(bsp);
    EXPECT_EQ(bad.lightmap_source, "");
    EXPECT_TRUE(has_diagnostic(bad.diagnostics, ".lit", "the map's lighting lump needs 1458")) << all_messages(bad.diagnostics);
    // A .lit wins over RGBLIGHTING (QuakeSpasm-Spiked's order).
    lit.insert(lit.end(), {1, 2, 3});
    write_file_atomic(dir + "/room.lit", lit);
    write_file_atomic(dir + "/room.bsp", with_bspx(plain, {{"RGBLIGHTING", Bytes(rgb.size(), 1)}}));
    EXPECT_EQ(unpacked(Bsp::open(dir + "/room.bsp")).lightmap_source, dir + "/room.lit");
}

TEST(BspxLighting, LmshiftSetsTheLuxelSize) {
    // Shift 3: 8 texels per luxel, 128 / 8 + 1 = 17 samples per axis.
    constexpr int kSide = 17, kSamples = kSide * kSide;
    const Bytes plain = bsp2_bytes([](Q1& m) {
        for (int f = 0; f < 6; ++f) m.faces[size_t(f)].lightofs = f * kSamples;
        m.lighting.resize(6 * kSamples);
        for (size_t i = 0; i < m.lighting.size(); ++i) m.lighting[i] = uint8_t(i * 13);
    });
    const Bsp bsp = Bsp::parse(with_bspx(plain, {{"LMSHIFT", Bytes(6, 3)}}), "shift.bsp");
    const model::Map map = unpacked(bsp);
    EXPECT_TRUE(map.diagnostics.empty()) << all_messages(map.diagnostics);
    for (const model::Surface& s : map.models[0].surfaces) {
        ASSERT_GE(s.lightmap, 0);
        const auto& img = map.lightmap_images[size_t(s.lightmap)];
        EXPECT_EQ(img.width, uint32_t(kSide));
        EXPECT_EQ(img.height, uint32_t(kSide));
        for (const model::Vertex& v : s.vertices) {
            EXPECT_TRUE(std::abs(v.lightmap_uv.x - 0.5f / kSide) < 1e-5 || std::abs(v.lightmap_uv.x - 16.5f / kSide) < 1e-5);
            EXPECT_TRUE(std::abs(v.lightmap_uv.y - 0.5f / kSide) < 1e-5 || std::abs(v.lightmap_uv.y - 16.5f / kSide) < 1e-5);
        }
        // Grey samples expanded to RGB.
        const size_t at = size_t(s.face) * kSamples;
        for (size_t i = 0; i < size_t(kSamples); i += 37)
            ASSERT_EQ(img.styles[0][i * 3 + 1], uint8_t((at + i) * 13));
    }
    EXPECT_EQ(check(bsp).errors(), 0u);
    // Without LMSHIFT the same map is read by the 16-texel rule: 9 x 9.
    EXPECT_EQ(unpacked(Bsp::parse(plain, "plain.bsp")).lightmap_images[0].width, 9u);
    // An LMSHIFT of the wrong length is ignored, with a diagnostic.
    const model::Map wrong = unpacked(Bsp::parse(with_bspx(plain, {{"LMSHIFT", Bytes(5, 3)}}), "wrong.bsp"));
    EXPECT_TRUE(has_diagnostic(wrong.diagnostics, "bspx:LMSHIFT", "not 6 records of 1 bytes")) << all_messages(wrong.diagnostics);
    EXPECT_EQ(wrong.lightmap_images[0].width, 9u);
}

/// DECOUPLED_LM records for the box: 5 x 3 luxels per face, lightmap
/// coordinates s = u / 32 + 2, t = v / 64 + 1 of the face's texture axes.
Bytes decoupled_lump(const std::vector<BoxFace>& box, std::vector<bspx::bspx_decoupled_lm_t>& recs) {
    for (int f = 0; f < 6; ++f) {
        bspx::bspx_decoupled_lm_t d{};
        d.lmwidth = 5;
        d.lmheight = 3;
        d.offset = f == 4 ? -1 : f * 15;  // face 4: no lightmap
        for (int k = 0; k < 4; ++k) {
            d.world_to_lm[0][k] = box[size_t(f)].s[k] / 32;
            d.world_to_lm[1][k] = box[size_t(f)].t[k] / 64;
        }
        d.world_to_lm[0][3] += 2;
        d.world_to_lm[1][3] += 1;
        recs.push_back(d);
    }
    return encode_records<bspx::bspx_decoupled_lm_t>(recs, ByteOrder::little);
}

TEST(BspxLighting, DecoupledLmSizesOffsetsAndUvs) {
    const auto box = box_faces();
    std::vector<bspx::bspx_decoupled_lm_t> recs;
    const Bytes lump = decoupled_lump(box, recs);
    const Bytes rgb = rgb_ramp(6 * 15);
    // The faces' own lightofs are -1: only DECOUPLED_LM locates the samples.
    const Bytes plain = bsp2_bytes([](Q1& m) {
        for (auto& f : m.faces) f.lightofs = -1;
        m.lighting.clear();
    });
    const Bsp bsp = Bsp::parse(with_bspx(plain, {{"DECOUPLED_LM", lump}, {"RGBLIGHTING", rgb}}), "decoupled.bsp");
    const model::Map map = unpacked(bsp);
    EXPECT_TRUE(map.diagnostics.empty()) << all_messages(map.diagnostics);
    for (const model::Surface& s : map.models[0].surfaces) {
        const auto& d = recs[size_t(s.face)];
        if (d.offset < 0) {
            EXPECT_EQ(s.lightmap, -1);
            continue;
        }
        ASSERT_GE(s.lightmap, 0);
        const auto& img = map.lightmap_images[size_t(s.lightmap)];
        EXPECT_EQ(img.width, 5u);
        EXPECT_EQ(img.height, 3u);
        EXPECT_EQ(img.styles[0], Bytes(rgb.begin() + d.offset * 3, rgb.begin() + (d.offset + 15) * 3));
        for (const model::Vertex& v : s.vertices) {
            const double p[3] = {v.position.x, v.position.y, v.position.z};
            const double ls = p[0] * d.world_to_lm[0][0] + p[1] * d.world_to_lm[0][1] + p[2] * d.world_to_lm[0][2] + d.world_to_lm[0][3];
            const double lt = p[0] * d.world_to_lm[1][0] + p[1] * d.world_to_lm[1][1] + p[2] * d.world_to_lm[1][2] + d.world_to_lm[1][3];
            EXPECT_NEAR(v.lightmap_uv.x, (ls + 0.5) / 5, 1e-5);
            EXPECT_NEAR(v.lightmap_uv.y, (lt + 0.5) / 3, 1e-5);
        }
    }
    EXPECT_EQ(check(bsp).errors(), 0u) << "decoupled offsets are checked against RGBLIGHTING";
    // An offset past RGBLIGHTING is an error of bspx:DECOUPLED_LM in check, and a skipped lightmap.
    recs[1].offset = 200;
    const Bytes bad_lump = encode_records<bspx::bspx_decoupled_lm_t>(recs, ByteOrder::little);
    const Bsp bad = Bsp::parse(with_bspx(plain, {{"DECOUPLED_LM", bad_lump}, {"RGBLIGHTING", rgb}}), "bad.bsp");
    const CheckReport report = check(bad);
    ASSERT_EQ(report.errors(), 1u);
    for (const Finding& f : report.findings)
        if (f.severity == Severity::error) {
            EXPECT_EQ(f.lump, "bspx:DECOUPLED_LM");
            EXPECT_EQ(f.record, 1);
            EXPECT_EQ(f.field, "offset");
        }
    EXPECT_EQ(unpacked(bad).models[0].surfaces[1].lightmap, -1);
}

TEST(BspxLighting, LmoffsetAndLmstyleReplaceTheFaceFields) {
    // Two more face-sized blocks after the six: face 0 reads them, with styles 0 and 3.
    const Bytes plain = bsp2_bytes([](Q1& m) {
        m.lighting.resize(m.lighting.size() + kSamplesPerFace * 2, 0x11);
        std::fill(m.lighting.end() - kSamplesPerFace, m.lighting.end(), uint8_t(0x22));
    });
    Bytes offsets;
    for (int f = 0; f < 6; ++f) append<int32_t>(offsets, f == 0 ? 6 * kSamplesPerFace : f * kSamplesPerFace);
    Bytes styles(6 * 2, 255);
    for (int f = 0; f < 6; ++f) styles[size_t(f) * 2] = 0;
    styles[1] = 3;
    const model::Map map =
        unpacked(Bsp::parse(with_bspx(plain, {{"LMOFFSET", offsets}, {"LMSTYLE", styles}}), "styles.bsp"));
    EXPECT_TRUE(map.diagnostics.empty()) << all_messages(map.diagnostics);
    const model::Surface& s0 = map.models[0].surfaces[0];
    EXPECT_EQ(s0.styles, (std::array<uint8_t, 4>{0, 3, 255, 255}));
    const auto& img = map.lightmap_images[size_t(s0.lightmap)];
    ASSERT_EQ(img.styles.size(), 2u);
    EXPECT_EQ(img.styles[0][0], 0x11);
    EXPECT_EQ(img.styles[1][0], 0x22);
    EXPECT_EQ(map.lightmap_images[size_t(map.models[0].surfaces[1].lightmap)].styles[0][0], 0x80);
    // LMSTYLE16 with a style over 255: the model's 8-bit slots leave it out, saying so.
    Bytes wide;
    for (int f = 0; f < 6; ++f) {
        append<uint16_t>(wide, 0);
        append<uint16_t>(wide, f == 0 ? 300 : 0xffff);
    }
    const model::Map w = unpacked(Bsp::parse(with_bspx(plain, {{"LMOFFSET", offsets}, {"LMSTYLE16", wide}}), "w.bsp"));
    EXPECT_EQ(w.models[0].surfaces[0].styles, (std::array<uint8_t, 4>{0, 255, 255, 255}));
    EXPECT_EQ(w.lightmap_images[size_t(w.models[0].surfaces[0].lightmap)].styles.size(), 1u);
    EXPECT_TRUE(has_diagnostic(w.diagnostics, "faces", "8-bit slots")) << all_messages(w.diagnostics);
}

TEST(BspxLighting, Quake2LmshiftAndDecoupled) {
    Quake2Map m;
    const Bytes plain = m.build();
    const model::Map shifted = unpacked(Bsp::parse(with_bspx(plain, {{"LMSHIFT", Bytes(6, 5)}}), "q2.bsp"));
    // 32 texels per luxel: 128 / 32 + 1 = 5 samples per axis, RGB from the lighting lump.
    ASSERT_GE(shifted.models[0].surfaces[0].lightmap, 0);
    EXPECT_EQ(shifted.lightmap_images[0].width, 5u);
    EXPECT_EQ(shifted.lightmap_images[0].styles[0].size(), 5u * 5u * 3u);
    const auto box = box_faces();
    std::vector<bspx::bspx_decoupled_lm_t> recs;
    const Bytes lump = decoupled_lump(box, recs);
    const model::Map dec = unpacked(Bsp::parse(with_bspx(plain, {{"DECOUPLED_LM", lump}}), "q2d.bsp"));
    EXPECT_TRUE(dec.diagnostics.empty()) << all_messages(dec.diagnostics);
    const auto& img = dec.lightmap_images[size_t(dec.models[0].surfaces[1].lightmap)];
    EXPECT_EQ(img.width, 5u);
    EXPECT_EQ(img.height, 3u);
    EXPECT_EQ(dec.models[0].surfaces[4].lightmap, -1);
}

// ---- BRUSHLIST and check ------------------------------------------------------------

/// A BRUSHLIST for the box: model 0 with `brushes` brushes of one sloped plane each.
Bytes brushlist(int32_t modelnum, int brushes, int32_t claimed_planes = -1) {
    Bytes out;
    append<int32_t>(out, 1);
    append<int32_t>(out, modelnum);
    append<int32_t>(out, brushes);
    append<int32_t>(out, claimed_planes < 0 ? brushes : claimed_planes);
    for (int b = 0; b < brushes; ++b) {
        for (float v : {-64.f, -64.f, -16.f, 64.f, 64.f, 0.f}) append<float>(out, v);
        append<int16_t>(out, int16_t(quake1::CONTENTS_SOLID));
        append<uint16_t>(out, 1);
        for (float v : {0.f, 0.70710677f, 0.70710677f, 8.f}) append<float>(out, v);
    }
    return out;
}

TEST(BspxBrushList, DecodesRecords) {
    const Bsp bsp = Bsp::parse(with_bspx(bsp2_bytes(), {{"BRUSHLIST", brushlist(0, 3)}}), "brushes.bsp");
    const bspx::Directory dir = bspx::read(bsp);
    const bspx::BrushList list = bspx::decode_brushlist(bsp, *dir.find("BRUSHLIST"));
    ASSERT_EQ(list.models.size(), 1u);
    EXPECT_EQ(list.models[0].header.modelnum, 0);
    EXPECT_EQ(list.models[0].offset, dir.find("BRUSHLIST")->offset);
    ASSERT_EQ(list.brush_count(), 3u);
    const bspx::BrushListBrush& b = list.models[0].brushes[2];
    EXPECT_EQ(b.offset, dir.find("BRUSHLIST")->offset + 16 + 2 * (28 + 16));
    EXPECT_EQ(b.header.contents, quake1::CONTENTS_SOLID);
    EXPECT_FLOAT_EQ(b.header.mins[2], -16.f);
    ASSERT_EQ(b.planes.size(), 1u);
    EXPECT_FLOAT_EQ(b.planes[0].dist, 8.f);
}

TEST(BspxBrushList, CountPastTheLumpNamesItsOffset) {
    Bytes lump = brushlist(0, 2);
    store<int32_t>(lump.data() + 8, 1000);  // numbrushes
    const Bsp bsp = Bsp::parse(with_bspx(bsp2_bytes(), {{"BRUSHLIST", lump}}), "bad.bsp");
    const bspx::Directory dir = bspx::read(bsp);
    const bspx::Lump& l = *dir.find("BRUSHLIST");
    try {
        bspx::decode_brushlist(bsp, l);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, "bspx:BRUSHLIST");
        EXPECT_EQ(e.where().offset, l.offset);
        EXPECT_NE(std::string(e.what()).find("bad.bsp: lump bspx:BRUSHLIST at offset " + std::to_string(l.offset)),
                  std::string::npos)
            << e.what();
    }
    // A plane count past the end: the brush record is named.
    Bytes planes = brushlist(0, 1);
    store<uint16_t>(planes.data() + 16 + 26, 50);
    const Bsp p = Bsp::parse(with_bspx(bsp2_bytes(), {{"BRUSHLIST", planes}}), "p.bsp");
    const bspx::Directory pdir = bspx::read(p);
    const bspx::Lump& pl = *pdir.find("BRUSHLIST");
    try {
        bspx::decode_brushlist(p, pl);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, pl.offset + 16);
    }
    // `check` reports it as an error of the lump.
    const CheckReport report = check(bsp);
    ASSERT_GE(report.errors(), 1u);
    bool found = false;
    for (const Finding& f : report.findings) found |= f.lump == "bspx:BRUSHLIST" && f.severity == Severity::error;
    EXPECT_TRUE(found);
}

TEST(BspxBrushList, MapWithoutClipnodesChecksCleanWithInfo) {
    // No clipnodes: the models' headnode[1..3] (0) point at nothing.
    const Bytes plain = bsp2_bytes([](Q1& m) { m.clipnodes.clear(); });
    const CheckReport without = check(Bsp::parse(plain, "noclip.bsp"));
    EXPECT_EQ(without.errors(), 3u);  // headnode 1..3 of model 0
    const CheckReport with = check(Bsp::parse(with_bspx(plain, {{"BRUSHLIST", brushlist(0, 2)}}), "brushes.bsp"));
    EXPECT_EQ(with.errors(), 0u);
    ASSERT_EQ(with.infos(), 1u);
    const Finding& info = *std::find_if(with.findings.begin(), with.findings.end(),
                                        [](const Finding& f) { return f.severity == Severity::info; });
    EXPECT_EQ(info.lump, "bspx:BRUSHLIST");
    EXPECT_NE(info.message.find("hulls 1 and 2"), std::string::npos) << info.message;
    EXPECT_NE(info.message.find("no clipnodes"), std::string::npos) << info.message;
    // Record checks: a model number out of range, planes not adding up.
    const CheckReport bad = check(Bsp::parse(with_bspx(plain, {{"BRUSHLIST", brushlist(7, 2, 5)}}), "bad.bsp"));
    std::set<std::string> fields;
    for (const Finding& f : bad.findings)
        if (f.severity == Severity::error) fields.insert(f.lump + "." + f.field);
    EXPECT_EQ(fields, (std::set<std::string>{"bspx:BRUSHLIST.modelnum", "bspx:BRUSHLIST.numplanes"}));
}

// ---- the command line ---------------------------------------------------------------

TEST(BspxCli, InfoListsAndLumpExtractWrites) {
    const std::string dir = test::temp_dir("bspx_cli");
    const Bytes lump = brushlist(0, 2);
    write_file_atomic(dir + "/m.bsp", with_bspx(bsp2_bytes(), {{"LMSHIFT", Bytes(6, 4)}, {"BRUSHLIST", lump}}));
    const auto info = test::run_cli({"info", dir + "/m.bsp", "--json"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto j = nlohmann::json::parse(info.out);
    ASSERT_EQ(j["bspx"].size(), 2u);
    EXPECT_EQ(j["bspx"][1]["name"], "BRUSHLIST");
    EXPECT_EQ(j["bspx"][1]["length"], lump.size());
    const auto text = test::run_cli({"info", dir + "/m.bsp"});
    EXPECT_NE(text.out.find("bspx:BRUSHLIST"), std::string::npos) << text.out;
    const auto ex = test::run_cli({"lump", "extract", dir + "/m.bsp", "bspx:BRUSHLIST", "-o", dir + "/b.bin"});
    ASSERT_EQ(ex.exit_code, 0) << ex.err;
    EXPECT_EQ(read_file(dir + "/b.bin"), lump);
    const auto missing = test::run_cli({"lump", "extract", dir + "/m.bsp", "bspx:NOPE", "-o", dir + "/n.bin"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("bspx:LMSHIFT"), std::string::npos) << missing.err;
    // A damaged tail: every verb warns with the one-line form.
    Bytes cut = read_file(dir + "/m.bsp");
    cut.resize(cut.size() - 20);
    write_file_atomic(dir + "/cut.bsp", cut);
    const auto warn = test::run_cli({"info", dir + "/cut.bsp"});
    EXPECT_NE(warn.err.find("cut.bsp: lump bspx:BRUSHLIST at offset"), std::string::npos) << warn.err;
}

// A map without clipnodes traces hulls 1 and 2 through BRUSHLIST: the hull's
// box at a point overlaps the brush (its bounds and its sloped plane, each
// pushed out by the box) or not; a broken BRUSHLIST leaves the hulls
// unavailable, and a hull trace says why, naming the lump.
TEST(BspxBrushList, HullsTraceTheBrushesOrSayWhyNot) {
    const Bytes plain = bsp2_bytes([](Q1& m) { m.clipnodes.clear(); });
    const Bsp bsp = Bsp::parse(with_bspx(plain, {{"BRUSHLIST", brushlist(0, 1)}}), "brushes.bsp");
    const query::World w = query::World::prepare(bsp);
    ASSERT_GE(w.hulls().size(), 3u);
    EXPECT_TRUE(w.hulls()[1].available && w.hulls()[1].brushlist);
    // Hull 1's box is (-16 -16 -24)-(16 16 32): over the slab z in [-16, 0] up to
    // z = 0 + 24; under the slope 0.707 y + 0.707 z = 8 pushed out by 0.707 (16 + 24).
    EXPECT_TRUE(w.contents({0, 0, 10}, 1).solid());
    EXPECT_TRUE(w.contents({0, 0, 23.5f}, 1).solid());
    EXPECT_FALSE(w.contents({0, 0, 24.5f}, 1).solid());
    EXPECT_TRUE(w.contents({0, 79.5f, -40}, 1).solid());   // y up to 64 + 16 (below the slope there)
    EXPECT_FALSE(w.contents({0, 80.5f, -40}, 1).solid());
    EXPECT_FALSE(w.contents({0, 50, 2}, 1).solid());      // 0.707 (50 + 2) = 36.8 > 8 + 28.3
    EXPECT_TRUE(w.contents({0, 48, 2}, 1).solid());       // 35.4 <= 36.3
    const auto down = w.trace({0, 0, 100}, {0, 0, -100}, w.player());
    EXPECT_NEAR(down.end.z, 24, 0.1);
    EXPECT_EQ(down.normal, (query::Vec3{0, 0, 1}));

    Bytes broken = brushlist(0, 2);
    store<int32_t>(broken.data() + 8, 1000);  // numbrushes past the lump
    const Bsp bad = Bsp::parse(with_bspx(plain, {{"BRUSHLIST", broken}}), "broken.bsp");
    const query::World b = query::World::prepare(bad);
    EXPECT_FALSE(b.hulls()[1].available);
    EXPECT_TRUE(b.trace({0, 0, 100}, {0, 0, -100}).fraction <= 1);  // hull 0 needs no brushes
    try {
        (void)b.trace({0, 0, 100}, {0, 0, -100}, b.player());
        FAIL() << "hull 1 traced through a broken BRUSHLIST";
    } catch (const Error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("hull 1 is not available: the map has no clipnodes and its BSPX BRUSHLIST is broken"),
                  std::string::npos)
            << what;
        EXPECT_NE(what.find("bspx:BRUSHLIST"), std::string::npos) << what;
    }
    try {
        (void)b.contents({0, 0, 10}, 1);
        FAIL() << "contents in hull 1 through a broken BRUSHLIST";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("BRUSHLIST is broken"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace bspkit
