// The texture search path (bspkit/textures.hpp) on files the tests write
// themselves (tests/support/texture_files.hpp): WAD2 / WAD3, WAL + PCX,
// pk3 with stored and deflated entries, shader scripts, VMT + VTF (DXT1 /
// DXT3 / DXT5 and uncompressed formats), VPK v1 / v2; hostile variants of
// each end in an Error or a "problem" entry, never a crash.
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/zip.hpp>

#include "entry_points.hpp"
#include "quake_test_maps.hpp"
#include "run.hpp"
#include "texture_files.hpp"

#include <gtest/gtest.h>

#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <filesystem>
#include <random>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

std::array<uint8_t, 4> pixel(const model::Texture& t, uint32_t x, uint32_t y) {
    const uint8_t* p = t.rgba.data() + (size_t(y) * t.width + x) * 4;
    return {p[0], p[1], p[2], p[3]};
}

std::array<uint8_t, 4> ramp(uint8_t i, uint8_t a = 255) {
    const auto p = ramp_palette();
    return {p[size_t(i) * 3], p[size_t(i) * 3 + 1], p[size_t(i) * 3 + 2], a};
}

Bytes text_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

/// A hand-made model of one material (the rule is chosen by `format`), with
/// one triangle whose UVs are (32, 16) in texels, over `bsp`.
model::Map one_material(Format format, const std::string& name, uint32_t width = 0) {
    model::Map map;
    map.format = format;
    map.materials.push_back({name, 0, width, width, -1, {}});
    model::Model m;
    model::Surface s;
    s.vertices.resize(3);
    for (auto& v : s.vertices) v.uv = {32, 16};
    s.indices = {0, 1, 2};
    m.surfaces.push_back(s);
    map.models.push_back(m);
    return map;
}

}  // namespace

TEST(Textures, Wad2AndWad3MiptexDecodeWithTheirPalettes) {
    const auto palette = ramp_palette();
    std::array<uint8_t, 768> other{};  // WAD3 carries its own: this one must not be used
    const Bytes wad2 = make_wad(false, {{"FLOOR1", make_miptex("FLOOR1", 16, 8, nullptr), 0x44}});
    const Bytes wad3 = make_wad(true, {{"readme", text_bytes("not a texture"), 0x40},
                                       {"{GRATE", make_miptex("{GRATE", 16, 16, &palette), 0x43}});
    const textures::Wad w2 = textures::Wad::parse(wad2, "q.wad");
    ASSERT_EQ(w2.entries().size(), 1u);
    EXPECT_FALSE(w2.wad3());
    const auto t2 = w2.decode(*w2.find("floor1"), palette);
    EXPECT_EQ(t2.width, 16u);
    EXPECT_EQ(t2.height, 8u);
    EXPECT_EQ(pixel(t2, 3, 5), ramp(test_index(3, 5)));

    const textures::Wad w3 = textures::Wad::parse(wad3, "hl.wad");
    EXPECT_TRUE(w3.wad3());
    EXPECT_FALSE(w3.find("readme"));  // not a miptex
    const auto t3 = w3.decode(*w3.find("{grate"), other);
    EXPECT_EQ(pixel(t3, 2, 7), ramp(test_index(2, 7)));
    EXPECT_EQ(pixel(t3, 15, 15), (std::array<uint8_t, 4>{0, 0, 0, 0}));  // index 255 of a '{' texture
}

TEST(Textures, GoldSrcMapFindsExternalMiptexThroughItsWadKey) {
    // The box room's one texture made external (offsets 0), a "wad" key naming
    // a WAD3 by a Windows path: found by file name in the --wad folder.
    testmaps::Quake1Map<quake1::Bsp29Types> m(true);
    for (int k = 0; k < 4; ++k) store<uint32_t>(m.textures.data() + 8 + 24 + 4 * k, 0);
    m.entities = testmaps::text("{\n\"classname\" \"worldspawn\"\n\"wad\" \"\\\\sierra\\\\half-life\\\\valve\\\\Missing.wad;"
                                "c:\\\\hl\\\\valve\\\\MyTextures.WAD\"\n}\n");
    const std::string dir = temp_dir("wad-key");
    const auto palette = ramp_palette();
    write_bytes(fs::path(dir) / "mytextures.wad", make_wad(true, {{"BSPKIT_GREY", make_miptex("BSPKIT_GREY", 16, 16, &palette), 0x43}}));
    const Bsp bsp = Bsp::parse(m.build(layouts::goldsrc(), 30), "goldsrc.bsp");
    model::Map map = model::build(bsp);
    ASSERT_EQ(map.materials.size(), 1u);
    EXPECT_EQ(map.materials[0].texture, -1);  // not embedded
    const auto uv_before = map.models[0].surfaces[0].vertices[0].uv;
    textures::SearchPath path;
    path.wads = {dir};
    const auto r = textures::resolve(map, bsp, path);
    EXPECT_EQ(r.found, 1u);
    EXPECT_TRUE(r.missing.empty());
    ASSERT_EQ(map.materials[0].texture, 0);
    EXPECT_EQ(pixel(map.textures[0], 5, 9), ramp(test_index(5, 9)));
    EXPECT_EQ(map.models[0].surfaces[0].vertices[0].uv, uv_before);  // size was known: UVs unchanged

    // Without the folder: missing, naming the wad key's files.
    model::Map again = model::build(bsp);
    const auto none = textures::resolve(again, bsp, {});
    ASSERT_EQ(none.missing.size(), 1u);
    EXPECT_EQ(none.missing[0].material, "bspkit_grey");
    std::string searched;
    for (const auto& s : none.missing[0].searched) searched += s + "\n";
    EXPECT_NE(searched.find("Missing.wad"), std::string::npos) << searched;
    EXPECT_NE(searched.find("MyTextures.WAD"), std::string::npos) << searched;
}

TEST(Textures, Quake2WalWithColormapPaletteRenormalisesUvs) {
    const std::string dir = temp_dir("q2game");
    const auto palette = ramp_palette();
    write_bytes(fs::path(dir) / "pics/colormap.pcx", make_pcx(palette));
    write_bytes(fs::path(dir) / "textures/E1U1/Floor1_1.wal", make_wal("e1u1/floor1_1", 64, 32));
    const Bsp bsp = Bsp::parse(testmaps::Quake2Map().build(), "q2.bsp");
    model::Map map = model::build(bsp);
    ASSERT_EQ(map.materials.size(), 1u);
    ASSERT_EQ(map.materials[0].width, 0u);
    std::vector<model::Vec2> texels;
    for (const auto& v : map.models[0].surfaces[0].vertices) texels.push_back(v.uv);
    textures::SearchPath path;
    path.game_dirs = {dir};
    const auto r = textures::resolve(map, bsp, path);
    ASSERT_EQ(r.found, 1u) << (r.missing.empty() ? "" : r.missing[0].problem);
    EXPECT_EQ(map.materials[0].width, 64u);
    EXPECT_EQ(map.materials[0].height, 32u);
    const auto& t = map.textures[size_t(map.materials[0].texture)];
    EXPECT_EQ(pixel(t, 7, 3), ramp(test_index(7, 3)));
    const auto& verts = map.models[0].surfaces[0].vertices;
    for (size_t i = 0; i < verts.size(); ++i) {
        EXPECT_FLOAT_EQ(verts[i].uv.x, texels[i].x / 64);
        EXPECT_FLOAT_EQ(verts[i].uv.y, texels[i].y / 32);
    }
}

// Quake 2 keeps its textures and palette in baseq2/pak0.pak: found there as the
// engine finds them (FS_FOPenFile: loose files first, then pak9.pak ... pak0.pak,
// a later pack over an earlier one; names case-insensitive; of two entries of one
// name in a pack, the later).
TEST(Textures, Quake2WalAndPaletteInPackFiles) {
    const std::string dir = temp_dir("q2pak");
    const auto palette = ramp_palette();
    write_bytes(fs::path(dir) / "pak0.pak",
                make_pack({{"pics/colormap.pcx", make_pcx(palette)},
                           {"textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 16, 16)},
                           {"TEXTURES/E1U1/FLOOR1_1.WAL", make_wal("e1u1/floor1_1", 32, 16)}}));
    const Bsp bsp = Bsp::parse(testmaps::Quake2Map().build(), "q2.bsp");
    const auto resolve_with = [&](const std::string& game_dir) {
        model::Map map = model::build(bsp);
        textures::SearchPath path;
        path.game_dirs = {game_dir};
        const auto r = textures::resolve(map, bsp, path);
        EXPECT_EQ(r.found, 1u) << (r.missing.empty() ? "" : r.missing[0].problem);
        EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
        if (map.materials[0].texture < 0) return std::array<uint32_t, 2>{0, 0};
        const auto& t = map.textures[size_t(map.materials[0].texture)];
        EXPECT_EQ(pixel(t, 7, 3), ramp(test_index(7, 3)));  // the palette from the pack
        return std::array<uint32_t, 2>{t.width, t.height};
    };
    EXPECT_EQ(resolve_with(dir), (std::array<uint32_t, 2>{32, 16}));  // the later entry of the two
    write_bytes(fs::path(dir) / "pak1.pak", make_pack({{"textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 64, 32)}}));
    EXPECT_EQ(resolve_with(dir), (std::array<uint32_t, 2>{64, 32}));  // pak1 over pak0
    write_bytes(fs::path(dir) / "textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 8, 8));
    EXPECT_EQ(resolve_with(dir), (std::array<uint32_t, 2>{8, 8}));  // a loose file over both
}

// A damaged PACK file is an Error naming the file and offset (Pak::open), and in a
// game folder a warning: the folder's other packs are still searched.
TEST(Textures, HostilePackFilesAreErrorsNotCrashes) {
    const std::string dir = temp_dir("q2badpak");
    const Bytes good = make_pack({{"textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 16, 16)}});
    const auto with_int = [&](size_t at, int32_t v) {
        Bytes b = good;
        std::memcpy(b.data() + at, &v, 4);
        return b;
    };
    const size_t dir_at = size_t(good.size() - 64);  // the one directory entry
    struct Case {
        const char* what;
        Bytes bytes;
        const char* says;
    };
    const std::vector<Case> cases = {
        {"short", Bytes(good.begin(), good.begin() + 8), "runs past the end"},
        {"ident", with_int(0, 0x4b434150 ^ 0x20), "not a PACK archive"},
        {"dirofs past the end", with_int(4, int32_t(good.size())), "does not fit"},
        {"negative dirofs", with_int(4, -64), "does not fit"},
        {"dirlen not of whole entries", with_int(8, 63), "does not fit"},
        {"huge dirlen", with_int(8, 0x7fffffc0), "does not fit"},
        {"entry past the end", with_int(dir_at + 60, int32_t(good.size())), "run past the end"},
        {"negative filepos", with_int(dir_at + 56, -1), "run past the end"},
        {"entry ending past the end", with_int(dir_at + 56, int32_t(good.size() - 4)), "run past the end"},
    };
    for (const Case& c : cases) {
        const fs::path file = fs::path(dir) / "bad.pak";
        write_bytes(file, c.bytes);
        try {
            (void)textures::Pak::open(file);
            ADD_FAILURE() << c.what << ": opened";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(c.says), std::string::npos) << c.what << ": " << e.what();
            EXPECT_NE(std::string(e.what()).find("bad.pak"), std::string::npos) << c.what << ": " << e.what();
        }
    }
    // A name filling all 56 bytes (no NUL) is read as its 56 characters.
    const std::string long_name = "textures/" + std::string(47, 'x');
    const fs::path file = fs::path(dir) / "long.pak";
    write_bytes(file, make_pack({{long_name, Bytes{1, 2, 3}}}));
    EXPECT_EQ(textures::Pak::open(file).read(long_name), (Bytes{1, 2, 3}));

    // In a game folder: pak1.pak is damaged, pak0.pak still gives the texture, and a warning says why.
    const std::string game = temp_dir("q2badpakgame");
    write_bytes(fs::path(game) / "pak0.pak",
                make_pack({{"pics/colormap.pcx", make_pcx(ramp_palette())},
                           {"textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 16, 16)}}));
    write_bytes(fs::path(game) / "pak1.pak", with_int(8, 63));
    const Bsp bsp = Bsp::parse(testmaps::Quake2Map().build(), "q2.bsp");
    model::Map map = model::build(bsp);
    textures::SearchPath path;
    path.game_dirs = {game};
    const auto r = textures::resolve(map, bsp, path);
    EXPECT_EQ(r.found, 1u);
    ASSERT_EQ(r.diagnostics.size(), 1u);
    EXPECT_NE(r.diagnostics[0].message.find("pak1.pak"), std::string::npos) << r.diagnostics[0].message;
    EXPECT_NE(r.diagnostics[0].message.find("archive not searched"), std::string::npos) << r.diagnostics[0].message;
}

TEST(Textures, Quake2WalWithoutPaletteIsAProblemNotACrash) {
    const std::string dir = temp_dir("q2nopal");
    write_bytes(fs::path(dir) / "textures/e1u1/floor1_1.wal", make_wal("e1u1/floor1_1", 16, 16));
    const Bsp bsp = Bsp::parse(testmaps::Quake2Map().build(), "q2.bsp");
    model::Map map = model::build(bsp);
    textures::SearchPath path;
    path.game_dirs = {dir};
    const auto r = textures::resolve(map, bsp, path);
    ASSERT_EQ(r.missing.size(), 1u);
    EXPECT_NE(r.missing[0].problem.find("colormap.pcx"), std::string::npos) << r.missing[0].problem;
    EXPECT_EQ(map.materials[0].width, 0u);  // texel UVs untouched
}

TEST(Textures, Quake3ShadersAndPk3WithStoredAndDeflatedEntries) {
    const std::string dir = temp_dir("q3game");
    // A 4 x 2 TGA (uncompressed, 32-bit, bottom-up by default: origin bit set for top-down).
    Bytes tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 2, 0, 32, 0x28};
    for (int p = 0; p < 8; ++p) tga.insert(tga.end(), {uint8_t(10 * p), 20, 30, 255});  // B, G, R, A
    const std::string shader =
        "// comment\n"
        "textures/base/wall_shader\n{\n  qer_editorimage textures/base/editor.tga\n"
        "  {\n    map $lightmap\n  }\n  {\n    clampMap textures/base/real.tga\n    blendFunc filter\n  }\n}\n"
        "textures/base/sky\n{\n  skyparms - 512 -\n}\n"
        "textures/base/space\n{\n  qer_editorimage textures/base/editor.tga\n  surfaceparm sky\n"
        "  skyParms env/space 512 -\n}\n"
        "textures/base/fog\n{\n  surfaceparm fog\n  fogparms ( .5 .5 .5 ) 256\n}\n"
        "textures/base/lost\n{\n  qer_editorimage textures/base/gone.tga\n}\n"
        "textures/common/caulk\n{\n  surfaceparm nodraw\n  surfaceparm nolightmap\n}\n"
        "textures/common/trigger\n{\n  qer_editorimage textures/common/trigger.tga\n  surfaceparm nodraw\n}\n"
        "textures/common/seen\n{\n  qer_editorimage textures/base/real.tga\n  surfaceparm nodraw\n}\n";
    write_bytes(fs::path(dir) / "pak0.pk3",
                make_zip({{"scripts/base.shader", text_bytes(shader), true},
                          {"textures/base/real.tga", tga, false},
                          {"env/space_up.tga", tga, false},
                          {"textures/base/plain.jpg", text_bytes("not a jpeg"), false}}));
    // pak1 overrides pak0 (later archives win): real.tga deflated, different colour.
    Bytes tga2 = tga;
    tga2[18] = 99;
    write_bytes(fs::path(dir) / "pak1.pk3", make_zip({{"textures/base/real.tga", tga2, true}}));
    const auto all = samples::all();
    const auto q3 = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_quake3.bsp"; });
    ASSERT_NE(q3, all.end());
    const Bsp bsp = Bsp::parse(q3->bytes, "q3.bsp");  // the rule comes from the model's format
    ASSERT_EQ(bsp.format(), Format::quake3);
    model::Map map = one_material(Format::quake3, "textures/base/wall_shader");
    map.materials.push_back({"textures/base/plain", 0, 0, 0, -1, {}});
    map.materials.push_back({"textures/base/sky", 0, 0, 0, -1, {}});
    // nodraw shaders: without an image found they are not missing (the engine
    // draws nothing); with one (the editor image) it is their texture.
    map.materials.push_back({"textures/common/caulk", 0, 0, 0, -1, {}});
    map.materials.push_back({"textures/common/trigger", 0, 0, 0, -1, {}});
    map.materials.push_back({"textures/common/seen", 0, 0, 0, -1, {}});
    // Shown by the sky's far box; the fog volume names no image; the editor
    // image of an ordinary shader is looked for and not found.
    map.materials.push_back({"textures/base/space", 0, 0, 0, -1, {}});
    map.materials.push_back({"textures/base/fog", 0, 0, 0, -1, {}});
    map.materials.push_back({"textures/base/lost", 0, 0, 0, -1, {}});
    for (uint32_t k = 1; k < map.materials.size(); ++k) {  // each drawn by a surface
        model::Surface s = map.models[0].surfaces[0];
        s.material = k;
        map.models[0].surfaces.push_back(s);
    }
    // A shader no surface shows (only on brush sides): not looked for.
    map.materials.push_back({"textures/common/brush_side_only", 0, 0, 0, -1, {}});
    textures::SearchPath path;
    path.game_dirs = {dir};
    const auto r = textures::resolve(map, bsp, path);
    ASSERT_EQ(map.materials[0].texture, 0) << (r.missing.empty() ? "" : r.missing[0].problem);
    const auto& t = map.textures[0];
    EXPECT_EQ(t.width, 4u);
    EXPECT_EQ(t.height, 2u);
    EXPECT_EQ(pixel(t, 0, 0), (std::array<uint8_t, 4>{30, 20, 99, 255}));  // from pak1
    EXPECT_EQ(pixel(t, 3, 1), (std::array<uint8_t, 4>{30, 20, 70, 255}));
    EXPECT_EQ(map.models[0].surfaces[0].vertices[0].uv, (model::Vec2{32, 16}));  // Quake 3 UVs stay
    ASSERT_EQ(r.missing.size(), 2u);
    EXPECT_EQ(r.missing[0].material, "textures/base/plain");
    EXPECT_FALSE(r.missing[0].problem.empty());  // plain.jpg found but not a JPEG
    EXPECT_EQ(r.missing[1].material, "textures/base/lost");
    EXPECT_TRUE(r.missing[1].problem.empty());
    ASSERT_GE(r.missing[1].searched.size(), 3u);
    EXPECT_NE(r.missing[1].searched[0].find("textures/base/gone.tga"), std::string::npos) << r.missing[1].searched[0];
    EXPECT_EQ(r.without_image, 4u);  // caulk, trigger, the sky without a far box, the fog
    EXPECT_EQ(map.materials[2].texture, -1);
    EXPECT_EQ(map.materials[3].texture, -1);
    EXPECT_EQ(map.materials[4].texture, -1);
    EXPECT_EQ(map.materials[5].texture, 1);
    ASSERT_EQ(map.materials[6].texture, 2);  // env/space_up.tga
    EXPECT_EQ(map.textures[2].width, 4u);
    EXPECT_EQ(map.materials[7].texture, -1);
    EXPECT_EQ(r.found, 3u);
    EXPECT_EQ(map.materials[9].texture, -1);  // brush_side_only: neither found nor missing
}

TEST(Textures, ShaderScriptsTakeTheFirstStageImage) {
    const auto s = textures::parse_shaders(
        "a/one { { map $whiteimage } { animMap 5 a/f1.tga a/f2.tga } }\n"
        "A/Two { /* block\n comment */ { clampmap \"a/two.jpg\" } { map a/later.tga } }\n"
        "a/three { qer_editorimage a/ed.tga surfaceparm nodraw }\n"
        "a/four { surfaceparm nolightmap SurfaceParm NoDraw }\n"
        "a/fog { fogparms ( 0 0 0 ) 64 surfaceparm fog }\n"
        "a/five { surfaceparm }\n"
        "a/sky { qer_editorimage a/ed.tga skyParms env/space 512 - }\n"
        "a/clouds { skyparms env/space 512 - { map a/clouds.tga } }\n"
        "a/nobox { skyparms - 512 - }\n"
        "a/clouds2 { skyparms full 0 - { map $lightmap } { map a/c1.jpg tcMod scale 2 3 tcmod scroll 1 1 }\n"
        "  { clampmap a/c2.tga blendFunc add } { map a/c3.tga blendfunc GL_DST_COLOR GL_ONE_MINUS_SRC_ALPHA } }\n"
        "a/broken { { map");
    ASSERT_EQ(s.size(), 10u);
    EXPECT_EQ(s[0].shader, "a/one");
    EXPECT_EQ(s[0].image, "a/f1.tga");
    EXPECT_EQ(s[1].shader, "a/two");
    EXPECT_EQ(s[1].image, "a/two.jpg");
    EXPECT_EQ(s[2].image, "a/ed.tga");
    EXPECT_FALSE(s[0].nodraw);
    EXPECT_FALSE(s[1].nodraw);
    EXPECT_TRUE(s[2].nodraw);
    EXPECT_EQ(s[3].shader, "a/four");  // no image, but nodraw
    EXPECT_EQ(s[3].image, "");
    EXPECT_TRUE(s[3].nodraw);
    // Shaders naming no image are kept, with none: the engine draws no image
    // for them (a fog volume; a shader without stages).
    EXPECT_EQ(s[4].shader, "a/fog");
    EXPECT_EQ(s[4].image, "");
    EXPECT_FALSE(s[4].nodraw);
    EXPECT_EQ(s[5].shader, "a/five");
    EXPECT_EQ(s[5].image, "");
    // A sky shows its far box (the face overhead) before the editor image,
    // a cloud stage before the box; "-" is no box.
    EXPECT_EQ(s[6].image, "env/space_up.tga");
    EXPECT_EQ(s[7].image, "a/clouds.tga");
    EXPECT_EQ(s[8].shader, "a/nobox");
    EXPECT_EQ(s[8].image, "");
    EXPECT_FLOAT_EQ(s[8].cloud_height, 512.0f);
    EXPECT_FLOAT_EQ(s[4].cloud_height, 0.0f);  // no skyParms
    // A sky's cloud layers: the stages with an image, their tcMod scale and blendFunc; a height of 0 is 512.
    const auto& c = s[9];
    EXPECT_EQ(c.far_box, "full");
    EXPECT_FLOAT_EQ(c.cloud_height, 512.0f);
    ASSERT_EQ(c.stages.size(), 3u);
    EXPECT_EQ(c.stages[0].image, "a/c1.jpg");
    EXPECT_FLOAT_EQ(c.stages[0].scale_s, 2.0f);
    EXPECT_FLOAT_EQ(c.stages[0].scale_t, 3.0f);
    EXPECT_EQ(c.stages[0].src, model::BlendFactor::one);
    EXPECT_EQ(c.stages[0].dst, model::BlendFactor::zero);
    EXPECT_EQ(c.stages[1].image, "a/c2.tga");
    EXPECT_EQ(c.stages[1].src, model::BlendFactor::one);
    EXPECT_EQ(c.stages[1].dst, model::BlendFactor::one);
    EXPECT_EQ(c.stages[2].src, model::BlendFactor::dst_color);
    EXPECT_EQ(c.stages[2].dst, model::BlendFactor::one_minus_src_alpha);
    EXPECT_EQ(s[7].stages.size(), 1u);
}

TEST(Textures, VtfDxtBlocksDecodeToTheirColours) {
    const uint16_t red = rgb565(255, 0, 0), blue = rgb565(0, 0, 255);
    for (uint32_t minor : {0u, 2u, 3u, 5u}) {
        SCOPED_TRACE(minor);
        // Two mip levels: 4 x 4 first on disk, then the 8 x 8 level 0.
        Bytes levels = dxt1_blocks(4, 4, blue, red);
        const Bytes level0 = dxt1_blocks(8, 8, red, blue);
        levels.insert(levels.end(), level0.begin(), level0.end());
        const auto t = textures::decode_vtf(make_vtf(minor, 13, 8, 8, 2, levels), "x.vtf");
        ASSERT_EQ(t.width, 8u);
        EXPECT_EQ(pixel(t, 1, 0), (std::array<uint8_t, 4>{255, 0, 0, 255}));
        EXPECT_EQ(pixel(t, 5, 3), (std::array<uint8_t, 4>{0, 0, 255, 255}));
        EXPECT_EQ(pixel(t, 6, 5), (std::array<uint8_t, 4>{255, 0, 0, 255}));
    }
    const auto t5 = textures::decode_vtf(make_vtf(4, 15, 8, 4, 1, dxt5_blocks(8, 4, red, blue)), "x.vtf");
    EXPECT_EQ(pixel(t5, 0, 0), (std::array<uint8_t, 4>{255, 0, 0, 255}));
    EXPECT_EQ(pixel(t5, 3, 0), (std::array<uint8_t, 4>{255, 0, 0, 0}));
    EXPECT_EQ(pixel(t5, 7, 3), (std::array<uint8_t, 4>{0, 0, 255, 0}));
    // DXT3: explicit 4-bit alpha, 0xF for every pixel of row 0, 0x8 elsewhere.
    Bytes dxt3;
    for (int i = 0; i < 8; ++i) dxt3.push_back(i < 2 ? 0xFF : 0x88);
    const Bytes colour = dxt1_blocks(4, 4, red, blue);
    dxt3.insert(dxt3.end(), colour.begin(), colour.end());
    const auto t3 = textures::decode_vtf(make_vtf(1, 14, 4, 4, 1, dxt3), "x.vtf");
    EXPECT_EQ(pixel(t3, 2, 0), (std::array<uint8_t, 4>{255, 0, 0, 255}));
    EXPECT_EQ(pixel(t3, 2, 3), (std::array<uint8_t, 4>{0, 0, 255, 136}));
}

TEST(Textures, VtfUncompressedFormats) {
    struct Case {
        uint32_t format;
        Bytes pixel;
        std::array<uint8_t, 4> rgba;
    };
    const std::vector<Case> cases = {
        {0, {1, 2, 3, 4}, {1, 2, 3, 4}},           // RGBA8888
        {1, {4, 3, 2, 1}, {1, 2, 3, 4}},           // ABGR8888
        {2, {1, 2, 3}, {1, 2, 3, 255}},            // RGB888
        {3, {3, 2, 1}, {1, 2, 3, 255}},            // BGR888
        {11, {4, 1, 2, 3}, {1, 2, 3, 4}},          // ARGB8888
        {12, {3, 2, 1, 4}, {1, 2, 3, 4}},          // BGRA8888
        {16, {3, 2, 1, 9}, {1, 2, 3, 255}},        // BGRX8888
        {5, {77}, {77, 77, 77, 255}},              // I8
        {6, {77, 20}, {77, 77, 77, 20}},           // IA88
        {8, {20}, {0, 0, 0, 20}},                  // A8
        {4, {0x1F, 0x00}, {255, 0, 0, 255}},       // RGB565: red in the low bits
        {17, {0x1F, 0x00}, {0, 0, 255, 255}},      // BGR565: blue in the low bits
        {19, {0x0F, 0xF0}, {0, 0, 255, 255}},      // BGRA4444: blue low nibble, alpha high
        {21, {0x00, 0xFC}, {255, 0, 0, 255}},      // BGRA5551: red bits 10-14, alpha bit 15
        {18, {0xE0, 0x03}, {0, 255, 0, 255}},      // BGRX5551: green bits 5-9
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.format);
        Bytes data;
        for (int i = 0; i < 4; ++i) data.insert(data.end(), c.pixel.begin(), c.pixel.end());
        const auto t = textures::decode_vtf(make_vtf(2, c.format, 2, 2, 1, data), "x.vtf");
        EXPECT_EQ(pixel(t, 1, 1), c.rgba);
    }
    EXPECT_THROW(textures::decode_vtf(make_vtf(2, 24, 2, 2, 1, Bytes(32)), "x.vtf"), Error);  // RGBA16161616F
}

TEST(Textures, SourceVmtPatchAndVpkV1V2) {
    const std::string dir = temp_dir("srcgame");
    const uint16_t green = rgb565(0, 255, 0);
    const Bytes vtf_a = make_vtf(5, 13, 4, 4, 1, dxt1_blocks(4, 4, green, green));
    const Bytes vtf_b = make_vtf(4, 12, 2, 2, 1, Bytes{1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4});
    // The original material in a v2 VPK (VMT in the _dir file, VTF in _000 with a preload).
    make_vpk(dir, "pak01", 2,
             {{"vmt", "materials/brick", "wall", text_bytes("\"LightmappedGeneric\"\n{\n\t\"$basetexture\" \"Brick/Wall_Color\"\n}\n")},
              {"vtf", "materials/brick", "wall_color", vtf_a, 16, true}});
    // A loose VMT whose VTF is in a v1 VPK.
    write_bytes(fs::path(dir) / "materials/Metal/Plate.vmt", text_bytes("VertexLitGeneric { $basetexture metal/plate_c }"));
    make_vpk(dir, "pak02", 1, {{"vtf", "materials/metal", "plate_c", vtf_b}});
    // The map: a patch material in the pakfile including the VPK's material.
    const auto all = samples::all();
    const auto sample = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_source.bsp"; });
    ASSERT_NE(sample, all.end());
    Bsp bsp = Bsp::parse(sample->bytes, "src.bsp");
    auto pak = source::Pakfile::read(bsp);
    pak.add("materials/maps/src/brick/wall_1_2_3.vmt",
            text_bytes("\"patch\" { \"include\" \"materials/brick/wall.vmt\" \"insert\" { \"$envmap\" \"x\" } }"));
    pak.write_to(bsp);
    const Bsp saved = Bsp::parse(bsp.serialize(), "src.bsp");
    model::Map map = one_material(Format::source, "maps/src/brick/wall_1_2_3", 128);
    map.materials.push_back({"METAL/PLATE", 0, 2, 2, -1, {}});
    map.materials.push_back({"nothing/here", 0, 2, 2, -1, {}});
    textures::SearchPath path;
    path.game_dirs = {dir};
    const auto r = textures::resolve(map, saved, path);
    EXPECT_EQ(r.found, 2u);
    ASSERT_GE(map.materials[0].texture, 0);
    const auto& a = map.textures[size_t(map.materials[0].texture)];
    EXPECT_EQ(pixel(a, 3, 3), (std::array<uint8_t, 4>{0, 255, 0, 255}));
    EXPECT_EQ(map.materials[0].width, 128u);  // the texdata size stays: UVs are normalised by it
    ASSERT_GE(map.materials[1].texture, 0);
    EXPECT_EQ(pixel(map.textures[size_t(map.materials[1].texture)], 1, 0), (std::array<uint8_t, 4>{3, 2, 1, 4}));
    ASSERT_EQ(r.missing.size(), 1u);
    EXPECT_EQ(r.missing[0].material, "nothing/here");
    const auto& s = r.missing[0].searched;
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s[0], "pakfile:materials/nothing/here.vmt");
    EXPECT_NE(std::find_if(s.begin(), s.end(), [](const std::string& x) { return x.find("pak01_dir.vpk:") != std::string::npos; }),
              s.end());
}

TEST(Textures, ZipReaderDeflateAndHostileArchives) {
    Bytes big(5000);
    for (size_t i = 0; i < big.size(); ++i) big[i] = uint8_t(i % 7);
    const Bytes zip = make_zip({{"a/B.txt", text_bytes("stored"), false}, {"c.bin", big, true}});
    const auto z = zip::Archive::parse(zip, {"t.pk3", "", 0});
    ASSERT_EQ(z.entries().size(), 2u);
    EXPECT_EQ(z.extract(*z.find("A\\b.TXT")), text_bytes("stored"));
    EXPECT_EQ(z.extract(*z.find("c.bin")), big);
    // Corrupt deflate data, a size claim beyond deflate's ratio, a CRC mismatch.
    const auto& c = z.entries()[1];
    Bytes bad = zip;
    for (size_t i = 0; i < 8; ++i) bad[size_t(c.data_offset) + i] = 0xFF;
    EXPECT_THROW(zip::Archive::parse(bad).extract(1), Error);
    Bytes huge = zip;
    const size_t central = zip.size() - 22 - (46 + 7) - (46 + 5);
    store<uint32_t>(huge.data() + central + 46 + 7 + 24, 0xFFFFFFF0u);  // c.bin's uncompressed size
    EXPECT_THROW(zip::Archive::parse(huge).extract(1), Error);
    // Every truncation of the archive either parses or throws Error.
    for (size_t n = 0; n < zip.size(); n += 3) {
        try {
            const auto t = zip::Archive::parse(Bytes(zip.begin(), zip.begin() + ptrdiff_t(n)));
            for (size_t i = 0; i < t.entries().size(); ++i) (void)t.extract(i);
        } catch (const Error&) {
        }
    }
}

TEST(Textures, HostileFilesGiveErrorsNotCrashes) {
    const auto palette = ramp_palette();
    // WAD: directory past the end, an entry past the end.
    Bytes wad = make_wad(true, {{"A", make_miptex("A", 16, 16, &palette), 0x43}});
    Bytes dir_past = wad;
    store<int32_t>(dir_past.data() + 4, 1000000);
    EXPECT_THROW(textures::Wad::parse(dir_past, "w"), Error);
    Bytes entry_past = wad;
    store<int32_t>(entry_past.data() + entry_past.size() - 32 + 4, 0x7FFFFFFF);
    EXPECT_THROW(textures::Wad::parse(entry_past, "w"), Error);
    // Miptex claiming 8192 x 8192 in 100 bytes, and beyond the limit.
    Bytes m = make_miptex("A", 16, 16, &palette);
    store<uint32_t>(m.data() + 16, 8192);
    store<uint32_t>(m.data() + 20, 8192);
    EXPECT_THROW(textures::decode_miptex(m, true, palette, "m"), Error);
    store<uint32_t>(m.data() + 16, 0x7FFFFFFF);
    EXPECT_THROW(textures::decode_miptex(m, true, palette, "m"), Error);
    // VTF: huge size, too many mips / frames, resource offsets past the end.
    Bytes vtf = make_vtf(5, 13, 8, 8, 1, dxt1_blocks(8, 8, 0, 0));
    Bytes v = vtf;
    store<uint16_t>(v.data() + 16, 8192);
    store<uint16_t>(v.data() + 18, 8192);
    EXPECT_THROW(textures::decode_vtf(v, "v"), Error);
    v = vtf;
    store<uint16_t>(v.data() + 24, 0xFFFF);  // frames
    v[56] = 15;                              // mips
    EXPECT_THROW(textures::decode_vtf(v, "v"), Error);
    v = vtf;
    store<uint32_t>(v.data() + 92, 0xFFFFFFF0u);  // high-res resource offset
    EXPECT_THROW(textures::decode_vtf(v, "v"), Error);
    v = vtf;
    store<uint32_t>(v.data() + 68, 0xFFFFFFFFu);  // resource count
    EXPECT_THROW(textures::decode_vtf(v, "v"), Error);
    // WAL past the end, PCX without a palette, an image that is not one.
    Bytes wal = make_wal("x", 16, 16);
    store<uint32_t>(wal.data() + 40, 0xFFFFFF00u);
    EXPECT_THROW(textures::decode_wal(wal, palette, "w"), Error);
    EXPECT_THROW(textures::pcx_palette(Bytes(300, 0x0A), "p"), Error);
    EXPECT_THROW(textures::decode_image(text_bytes("GIF89a......"), "i"), Error);
    // An uncompressed TGA cut short (a half-copied lightmap page): an error at
    // its end, not zeros where the pixels were.
    Bytes tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 24, 0};
    tga.resize(18 + 8 * 8 * 3, 0x40);
    EXPECT_EQ(textures::decode_image(tga, "t.tga").rgba[0], 0x40);
    tga.resize(100);
    try {
        (void)textures::decode_image(tga, "t.tga");
        ADD_FAILURE() << "a truncated TGA decoded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("truncated TGA: 8 x 8 pixels need 210 bytes, the file has 100"),
                  std::string::npos)
            << e.what();
        EXPECT_EQ(e.where().offset, 100);
    }
    // Run-length coded too (type 10): packets for every pixel, or an error at the end.
    Bytes rle = {0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 24, 0};
    for (int row = 0; row < 8; ++row) {
        rle.insert(rle.end(), {0x83, 0x10, 0x20, 0x30});  // 4 pixels of one colour (B, G, R)
        rle.push_back(0x03);                              // then 4 raw ones
        for (int k = 0; k < 4; ++k) rle.insert(rle.end(), {uint8_t(k), 0x50, 0x60});
    }
    const model::Texture whole = textures::decode_image(rle, "r.tga");
    EXPECT_EQ(whole.rgba[0], 0x30);  // red of the first run (the rows are bottom-up: any row starts so)
    EXPECT_EQ(whole.rgba[4 * 4 + 2], 0);  // the first raw pixel's blue
    for (const size_t cut : {size_t(18), size_t(20), rle.size() - 1}) {
        const Bytes part(rle.begin(), rle.begin() + std::ptrdiff_t(cut));
        try {
            (void)textures::decode_image(part, "r.tga");
            ADD_FAILURE() << "a run-length TGA cut at " << cut << " decoded";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("truncated TGA: its run-length packets end after"), std::string::npos)
                << e.what();
            EXPECT_EQ(e.where().offset, int64_t(cut));
        }
    }
    // A JPEG cut short: an error naming the missing end marker at the file's end (stb_image's
    // own is "expected marker"). An FF D9 before the first scan (in an APP segment, as an
    // EXIF thumbnail's) does not count.
    Bytes jpeg;
    {
        std::vector<uint8_t> pixels(32 * 32 * 3);
        for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = uint8_t(i * 7);
        stbi_write_jpg_to_func(
            [](void* out, void* data, int size) {
                auto* bytes = static_cast<Bytes*>(out);
                bytes->insert(bytes->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + size);
            },
            &jpeg, 32, 32, 3, pixels.data(), 90);
    }
    ASSERT_GT(jpeg.size(), 200u);
    const Bytes app = {0xFF, 0xE1, 0x00, 0x06, 0xFF, 0xD9, 0xFF, 0xD9};  // APP1 holding two end markers
    jpeg.insert(jpeg.begin() + 2, app.begin(), app.end());
    EXPECT_EQ(textures::decode_image(jpeg, "j.jpg").width, 32u);
    Bytes trailing = jpeg;
    trailing.insert(trailing.end(), {0, 0, 0x12});  // bytes after the end marker are left alone
    EXPECT_EQ(textures::decode_image(trailing, "j.jpg").width, 32u);
    const Bytes cut_jpeg(jpeg.begin(), jpeg.begin() + std::ptrdiff_t(jpeg.size() * 3 / 4));
    try {
        (void)textures::decode_image(cut_jpeg, "j.jpg");
        ADD_FAILURE() << "a truncated JPEG decoded";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("truncated JPEG: no end-of-image marker"), std::string::npos) << e.what();
        EXPECT_EQ(e.where().offset, int64_t(cut_jpeg.size()));
    }
    // VPK: tree past the end, unterminated names, data past the end.
    const std::string dir = temp_dir("badvpk");
    make_vpk(dir, "v", 1, {{"vtf", "m", "a", vtf, 0, true}});
    Bytes vpk = read_file(fs::path(dir) / "v_dir.vpk");
    Bytes t = vpk;
    store<uint32_t>(t.data() + 8, 0xFFFFFF00u);
    EXPECT_THROW(textures::Vpk::parse(t, "v_dir.vpk"), Error);
    t = vpk;
    std::fill(t.begin() + 12, t.end(), 'x');
    EXPECT_THROW(textures::Vpk::parse(t, "v_dir.vpk"), Error);
    t = vpk;
    store<uint32_t>(t.data() + 12 + 4 + 2 + 2 + 2 + 2 + 4 + 4, 0x7FFFFFFF);  // entryLength: 12-byte header, "vtf\0m\0a\0", crc, preload, archive, offset
    const auto parsed = textures::Vpk::parse(t, fs::path(dir) / "v_dir.vpk");
    EXPECT_THROW((void)parsed.read("m/a.vtf"), Error);
    // Random bytes through every decoder (the fuzz target's entry point).
    std::mt19937 rng(8);
    for (int i = 0; i < 300; ++i) {
        Bytes noise(size_t(rng() % 400));
        for (auto& b : noise) b = uint8_t(rng());
        if (i % 3 == 0 && noise.size() >= 4) std::copy_n("VTF", 4, noise.begin());
        if (i % 3 == 1 && noise.size() >= 4) std::copy_n("WAD3", 4, noise.begin());
        fuzz::texture_files(noise.data(), noise.size());
    }
}

// The "wad" key as the texture search and `bspkit serve` read it: entries split
// at ';', '\' read as '/', each with its file name; entries naming no file dropped.
TEST(Textures, WadKeyEntriesAreTheKeysFileNames) {
    const auto entries = textures::wad_key_entries("\\sierra\\valve\\halflife.wad;;decals.wad;c:/x/;/q/Xeno.WAD");
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].written, "/sierra/valve/halflife.wad");
    EXPECT_EQ(entries[0].file, "halflife.wad");
    EXPECT_EQ(entries[1].written, "decals.wad");
    EXPECT_EQ(entries[1].file, "decals.wad");
    EXPECT_EQ(entries[2].file, "Xeno.WAD");
    EXPECT_TRUE(textures::wad_key_entries("").empty());
    EXPECT_TRUE(textures::is_wad_key("wad") && textures::is_wad_key("_WAD"));
    EXPECT_FALSE(textures::is_wad_key("wads") || textures::is_wad_key("message"));
}

namespace {

/// A w x h uncompressed 32-bit TGA (top-down) of one colour.
Bytes solid_tga(uint8_t r, uint8_t g, uint8_t b, uint16_t w = 2, uint16_t h = 2) {
    Bytes t = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, uint8_t(w), uint8_t(w >> 8), uint8_t(h), uint8_t(h >> 8), 32, 0x28};
    for (int p = 0; p < w * h; ++p) t.insert(t.end(), {b, g, r, 255});
    return t;
}

constexpr const char* kSkySuffixes[6] = {"rt", "bk", "lf", "ft", "up", "dn"};

std::array<uint8_t, 4> sky_colour(size_t face) { return {uint8_t(40 * face + 10), uint8_t(200 - 30 * face), 77, 255}; }

void set_worldspawn(model::Map& map, std::vector<KeyValue> pairs) {
    pairs.insert(pairs.begin(), {"classname", "worldspawn"});
    map.entities.assign(1, Entity{std::move(pairs), -1});
}

}  // namespace

// PCX as Quake 2's env/ images: RLE runs (also across rows), rows padded to
// bytes_per_line, the palette at the end; hostile headers and truncation are errors.
TEST(Textures, PcxDecodesRunsRowsAndItsPalette) {
    std::array<uint8_t, 768> palette{};
    for (size_t i = 0; i < 256; ++i) palette[i * 3] = uint8_t(i), palette[i * 3 + 1] = uint8_t(255 - i), palette[i * 3 + 2] = 9;
    Bytes pcx(128, 0);
    pcx[0] = 0x0A, pcx[1] = 5, pcx[2] = 1, pcx[3] = 8;
    pcx[8] = 2;              // xmax: 3 wide
    pcx[10] = 1;             // ymax: 2 high
    pcx[65] = 1, pcx[66] = 4;  // one plane, 4 bytes a row
    // Row 0: 5, 6, 6, (pad 6); row 1: 6 (the run goes on), 7, 0xC1 as a literal through a run of 1, pad.
    pcx.insert(pcx.end(), {5, 0xC4, 6, 7, 0xC1, 0xC1, 0xC1, 0});
    pcx.push_back(0x0C);
    pcx.insert(pcx.end(), palette.begin(), palette.end());
    const model::Texture t = textures::decode_pcx(pcx, "x.pcx");
    ASSERT_EQ(t.width, 3u);
    ASSERT_EQ(t.height, 2u);
    const auto c = [&](uint8_t i) { return std::array<uint8_t, 4>{i, uint8_t(255 - i), 9, 255}; };
    EXPECT_EQ(pixel(t, 0, 0), c(5));
    EXPECT_EQ(pixel(t, 2, 0), c(6));
    EXPECT_EQ(pixel(t, 0, 1), c(6));
    EXPECT_EQ(pixel(t, 1, 1), c(7));
    EXPECT_EQ(pixel(t, 2, 1), c(0xC1));
    Bytes cut = pcx;
    cut.erase(cut.begin() + 130, cut.begin() + 136);  // pixels end early
    EXPECT_THROW(textures::decode_pcx(cut, "cut.pcx"), Error);
    Bytes wide = pcx;
    wide[9] = 0x40;  // xmax 16386
    EXPECT_THROW(textures::decode_pcx(wide, "wide.pcx"), Error);
    Bytes planes = pcx;
    planes[65] = 3;
    EXPECT_THROW(textures::decode_pcx(planes, "rgb.pcx"), Error);
    Bytes bits = pcx;
    bits[3] = 4;
    EXPECT_THROW(textures::decode_pcx(bits, "4bit.pcx"), Error);
}

// Each family's sky box (SearchPath::sky_box): its name from the map (or the
// game's default), the six images in the order rt bk lf ft up dn, from where
// the engine loads them; a face not found leaves no box and says where it was searched.
TEST(Textures, SkyBoxesAreFoundWhereEachEngineLoadsThem) {
    textures::SearchPath path;
    path.sky_box = true;
    const auto faces_are = [](const model::Map& map, const std::string& name) {
        ASSERT_TRUE(map.sky_box.has_value());
        EXPECT_EQ(map.sky_box->name, name);
        for (size_t i = 0; i < 6; ++i) EXPECT_EQ(pixel(map.sky_box->faces[i], 1, 1), sky_colour(i)) << kSkySuffixes[i];
    };
    {  // Quake 2: env/<sky><suffix>.tga, else .pcx (dn here)
        const std::string dir = temp_dir("sky-q2");
        std::array<uint8_t, 768> palette{};
        const auto dn = sky_colour(5);
        for (size_t i = 0; i < 256; ++i) std::copy_n(dn.begin(), 3, &palette[i * 3]);
        Bytes pcx = make_pcx(palette);  // 1 x 1
        for (size_t i = 0; i < 5; ++i) {
            const auto c = sky_colour(i);
            write_bytes(fs::path(dir) / "env" / (std::string("unit9_") + kSkySuffixes[i] + ".tga"), solid_tga(c[0], c[1], c[2]));
        }
        write_bytes(fs::path(dir) / "env/unit9_dn.pcx", pcx);
        const Bsp bsp = Bsp::parse(testmaps::Quake2Map().build(), "q2.bsp");
        model::Map map = model::build(bsp);
        set_worldspawn(map, {{"Sky", "unit9_"}});  // engines read keys case-insensitively
        path.game_dirs = {dir};
        const auto r = textures::resolve(map, bsp, path);
        EXPECT_FALSE(r.sky_box_missing.has_value()) << r.sky_box_missing->material << ": " << r.sky_box_missing->problem;
        ASSERT_TRUE(map.sky_box.has_value());
        EXPECT_EQ(map.sky_box->faces[5].width, 1u);  // the PCX
        map.sky_box->faces[5] = {"dn", 2, 2, {}};
        for (int p = 0; p < 4; ++p) map.sky_box->faces[5].rgba.insert(map.sky_box->faces[5].rgba.end(), dn.begin(), dn.end());
        faces_are(map, "unit9_");
        // Without the key: the game's default, unit1_, which this folder lacks.
        model::Map plain = model::build(bsp);
        set_worldspawn(plain, {});
        const auto none = textures::resolve(plain, bsp, path);
        EXPECT_FALSE(plain.sky_box.has_value());
        ASSERT_TRUE(none.sky_box_missing.has_value());
        EXPECT_EQ(none.sky_box_missing->material, "sky box unit1_ (rt)");
        ASSERT_EQ(none.sky_box_missing->searched.size(), 2u);
        EXPECT_EQ(none.sky_box_missing->searched[0], dir + "/env/unit1_rt.tga");
        EXPECT_EQ(none.sky_box_missing->searched[1], dir + "/env/unit1_rt.pcx");
        // No game folder: nowhere to look, nothing said.
        textures::SearchPath wads_only = path;
        wads_only.game_dirs.clear();
        model::Map no_dirs = model::build(bsp);
        set_worldspawn(no_dirs, {{"sky", "unit9_"}});
        EXPECT_FALSE(textures::resolve(no_dirs, bsp, wads_only).sky_box_missing.has_value());
        // Not asked for: not looked for.
        textures::SearchPath no_sky = path;
        no_sky.sky_box = false;
        model::Map unasked = model::build(bsp);
        set_worldspawn(unasked, {{"sky", "unit9_"}});
        EXPECT_FALSE(textures::resolve(unasked, bsp, no_sky).sky_box_missing.has_value());
        EXPECT_FALSE(unasked.sky_box.has_value());
    }
    {  // GoldSrc: gfx/env/<skyname, default desert><suffix>.tga
        const std::string dir = temp_dir("sky-hl");
        for (size_t i = 0; i < 6; ++i) {
            const auto c = sky_colour(i);
            write_bytes(fs::path(dir) / "gfx/env" / (std::string("desert") + kSkySuffixes[i] + ".tga"), solid_tga(c[0], c[1], c[2]));
        }
        const auto all = samples::all();
        const auto hl = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_goldsrc.bsp"; });
        ASSERT_NE(hl, all.end());
        const Bsp bsp = Bsp::parse(hl->bytes, "hl.bsp");
        model::Map map = model::build(bsp);
        set_worldspawn(map, {});
        path.game_dirs = {dir};
        textures::resolve(map, bsp, path);
        faces_are(map, "desert");
    }
    {  // Quake 3: the far box of the sky shader a surface shows, <box>_<suffix>.tga / .jpg / .png, in a pk3
        const std::string dir = temp_dir("sky-q3");
        std::vector<ZipFile> files{{"scripts/sky.shader",
                                    text_bytes("textures/skies/other { surfaceparm sky skyparms env/unused 512 - }\n"
                                               "textures/skies/night { qer_editorimage x.tga surfaceparm sky "
                                               "skyParms env/night/box 512 - }\n"),
                                    true}};
        for (size_t i = 0; i < 6; ++i) {
            const auto c = sky_colour(i);
            files.push_back({std::string("env/night/box_") + kSkySuffixes[i] + ".tga", solid_tga(c[0], c[1], c[2]), i % 2 == 0});
        }
        write_bytes(fs::path(dir) / "pak0.pk3", make_zip(files));
        const auto all = samples::all();
        const auto q3 = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_quake3.bsp"; });
        ASSERT_NE(q3, all.end());
        const Bsp bsp = Bsp::parse(q3->bytes, "q3.bsp");
        model::Map map = one_material(Format::quake3, "textures/skies/other");  // a sky no surface shows
        map.materials[0].flags = model::kSky;
        map.models[0].surfaces.clear();
        map.materials.push_back({"textures/skies/night", 0, 0, 0, -1, {}});
        map.materials[1].flags = model::kSky;
        model::Surface s;
        s.material = 1;
        map.models[0].surfaces.push_back(s);
        path.game_dirs = {dir};
        textures::resolve(map, bsp, path);
        faces_are(map, "env/night/box");
    }
    {  // Quake 3 cloud layers: with an opaque first layer the box ("full", in no pk3) goes unsaid;
       // with an added one it is said, and the clouds are still there.
        const std::string dir = temp_dir("sky-q3-clouds");
        write_bytes(fs::path(dir) / "pak0.pk3",
                    make_zip({{"scripts/sky.shader",
                               text_bytes("textures/skies/a { surfaceparm sky skyparms full 700 - "
                                          "{ map textures/skies/c1.tga tcmod scale 2 3 } { map textures/skies/c2 blendfunc add } }\n"
                                          "textures/skies/b { surfaceparm sky skyparms full 0 - { map textures/skies/c2.jpg blendfunc add } }\n"),
                               true},
                              {"textures/skies/c1.tga", solid_tga(10, 20, 30), false},
                              {"textures/skies/c2.tga", solid_tga(1, 2, 3), false}}));
        const auto all = samples::all();
        const auto q3 = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_quake3.bsp"; });
        ASSERT_NE(q3, all.end());
        const Bsp bsp = Bsp::parse(q3->bytes, "q3.bsp");
        path.game_dirs = {dir};
        for (const char* name : {"textures/skies/a", "textures/skies/b"}) {
            SCOPED_TRACE(name);
            model::Map map = one_material(Format::quake3, name);
            map.materials[0].flags = model::kSky;
            const auto r = textures::resolve(map, bsp, path);
            EXPECT_FALSE(map.sky_box.has_value());
            ASSERT_TRUE(map.sky_clouds.has_value());
            const bool a = std::string(name) == "textures/skies/a";
            EXPECT_FLOAT_EQ(map.sky_clouds->height, a ? 700.0f : 512.0f);
            ASSERT_EQ(map.sky_clouds->layers.size(), a ? 2u : 1u);
            const auto& first_layer = map.sky_clouds->layers[0];
            EXPECT_EQ(pixel(first_layer.image, 0, 0), (a ? std::array<uint8_t, 4>{10, 20, 30, 255} : std::array<uint8_t, 4>{1, 2, 3, 255}));
            EXPECT_FLOAT_EQ(first_layer.scale_t, a ? 3.0f : 1.0f);
            EXPECT_EQ(first_layer.dst, a ? model::BlendFactor::zero : model::BlendFactor::one);
            EXPECT_EQ(r.sky_box_missing.has_value(), !a);  // the box shows only under an added layer
            if (!a) {
                EXPECT_EQ(r.sky_box_missing->material, "sky box full (rt)");
            }
        }
        // A box the pk3 holds, under an opaque layer: hidden, so not loaded.
        std::vector<ZipFile> files{{"scripts/sky.shader",
                                    text_bytes("textures/skies/c { surfaceparm sky skyparms env/c 512 - { map textures/skies/c1 } }\n"
                                               "textures/skies/d { surfaceparm sky skyparms env/c 512 - { map textures/skies/c1 blendFunc blend } }\n"),
                                    true},
                                   {"textures/skies/c1.tga", solid_tga(10, 20, 30), false}};
        for (const char* suffix : kSkySuffixes) files.push_back({std::string("env/c_") + suffix + ".tga", solid_tga(5, 5, 5), false});
        const std::string dir2 = temp_dir("sky-q3-hidden-box");
        write_bytes(fs::path(dir2) / "pak0.pk3", make_zip(files));
        path.game_dirs = {dir2};
        for (const char* name : {"textures/skies/c", "textures/skies/d"}) {
            SCOPED_TRACE(name);
            model::Map map = one_material(Format::quake3, name);
            map.materials[0].flags = model::kSky;
            textures::resolve(map, bsp, path);
            EXPECT_TRUE(map.sky_clouds.has_value());
            EXPECT_EQ(map.sky_box.has_value(), std::string(name) == "textures/skies/d");  // under a blended layer it shows
        }
    }
    {  // Source: materials skybox/<skyname><suffix> (VMT -> $basetexture -> VTF)
        const std::string dir = temp_dir("sky-src");
        std::vector<Bytes> vtfs;
        for (size_t i = 0; i < 6; ++i) {
            const std::string name = std::string("sky_test") + kSkySuffixes[i];
            write_bytes(fs::path(dir) / "materials/skybox" / (name + ".vmt"),
                        text_bytes("\"UnlitGeneric\" { \"$basetexture\" \"skybox/" + name + "\" }"));
            vtfs.push_back(make_vtf(4, 12, 2, 2, 1, Bytes{uint8_t(i), 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4}));
            write_bytes(fs::path(dir) / "materials/skybox" / (name + ".vtf"), vtfs.back());
        }
        const auto all = samples::all();
        const auto src = std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "sample_source.bsp"; });
        ASSERT_NE(src, all.end());
        const Bsp bsp = Bsp::parse(src->bytes, "src.bsp");
        model::Map map = model::build(bsp);
        set_worldspawn(map, {{"skyname", "sky_test"}});
        path.game_dirs = {dir};
        textures::resolve(map, bsp, path);
        ASSERT_TRUE(map.sky_box.has_value());
        for (size_t i = 0; i < 6; ++i)
            EXPECT_EQ(map.sky_box->faces[i].rgba, textures::decode_vtf(vtfs[i], "x.vtf").rgba) << kSkySuffixes[i];
    }
}
