// The texture search path on real maps: every VTF and VMT in the pakfile of
// every Source corpus map (the pakfile is searched first, as the engine
// does), and every GoldSrc corpus map with a WAD3 the test writes holding
// half of its external texture names (found under the name of the map's own
// "wad" key). The CLI verbs `textures` and `export` take --wad too.
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/textures.hpp>

#include "corpus.hpp"
#include "export_readers.hpp"
#include "run.hpp"
#include "texture_files.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> paths_of(const std::string& format) {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f) == format) out.push_back(f.relpath);
    return out;
}

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    std::replace(s.begin(), s.end(), '\\', '/');
    return s;
}

bool power_of_two(uint32_t v) { return v && !(v & (v - 1)); }

class SourceTextures : public ::testing::TestWithParam<std::string> {};
class GoldSrcTextures : public ::testing::TestWithParam<std::string> {};

}  // namespace

// Every LDR VTF of the pakfile (cubemaps) resolves from the pakfile as the
// texture of a material of its name, with its header's size; the HDR ones
// (RGBA16161616F) are named as undecodable. Every map material whose VMT is
// in the pakfile is followed past it (include / $basetexture), pakfile first.
TEST_P(SourceTextures, PakfileMaterialsResolveFromThePakfile) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::open(file.path);
    const auto pak = source::Pakfile::read(bsp);
    model::Map probe;
    probe.format = Format::source;
    std::vector<std::pair<std::string, Bytes>> vtfs;
    for (size_t i = 0; i < pak.entries().size(); ++i) {
        const std::string name = lower(pak.entries()[i].name);
        if (!ends_with(name, ".vtf") || name.rfind("materials/", 0) != 0) continue;
        vtfs.emplace_back(name, pak.extract(i));
        probe.materials.push_back({name.substr(10, name.size() - 14), 0, 0, 0, -1, {}});
    }
    const auto r = textures::resolve(probe, bsp, {});
    size_t ldr = 0;
    for (size_t i = 0; i < vtfs.size(); ++i) {
        SCOPED_TRACE(vtfs[i].first);
        const uint32_t format = load<uint32_t>(vtfs[i].second.data() + 52);
        const uint16_t w = load<uint16_t>(vtfs[i].second.data() + 16), h = load<uint16_t>(vtfs[i].second.data() + 18);
        // RGBA16161616F (HDR cubemaps) and the Xbox 360's big-endian VTFX are not
        // decoded, and the missing entry says why.
        const bool vtfx = std::string_view(reinterpret_cast<const char*>(vtfs[i].second.data()), 4) == "VTFX";
        if (format == 24 || vtfx) {
            EXPECT_EQ(probe.materials[i].texture, -1);
            const auto m = std::find_if(r.missing.begin(), r.missing.end(),
                                        [&](const auto& x) { return x.material == probe.materials[i].name; });
            ASSERT_NE(m, r.missing.end());
            EXPECT_NE(m->problem.find(vtfx ? "VTFX" : "RGBA16161616F"), std::string::npos) << m->problem;
            EXPECT_EQ(m->searched.back(), "pakfile:" + vtfs[i].first);
            continue;
        }
        ++ldr;
        ASSERT_GE(probe.materials[i].texture, 0);
        const model::Texture& t = probe.textures[size_t(probe.materials[i].texture)];
        EXPECT_EQ(t.width, w);
        EXPECT_EQ(t.height, h);
        EXPECT_TRUE(power_of_two(t.width) && power_of_two(t.height) && t.width <= 4096) << t.width << " x " << t.height;
        EXPECT_EQ(t.rgba.size(), size_t(w) * h * 4);
    }
    // The map's own materials: those with a VMT in the pakfile are followed past it.
    model::BuildOptions options;
    options.lightmaps = false;
    model::Map map = model::build(bsp, options);
    const auto result = textures::resolve(map, bsp, {});
    size_t followed = 0;
    for (const auto& m : result.missing) {
        if (!pak.find("materials/" + lower(m.material) + ".vmt")) continue;
        ASSERT_FALSE(m.searched.empty());
        EXPECT_EQ(m.searched[0], "pakfile:materials/" + lower(m.material) + ".vmt");
        // The next step names another file (the included VMT or the VTF of $basetexture).
        ASSERT_GE(m.searched.size(), 2u) << m.material;
        EXPECT_NE(m.searched[1], m.searched[0]);
        ++followed;
    }
    // Every map material with a VMT in the pakfile was either found or followed.
    std::set<std::string> referenced;
    for (const auto& m : map.materials)
        if (pak.find("materials/" + lower(m.name) + ".vmt")) referenced.insert(lower(m.name));
    size_t found = 0;
    for (const auto& m : map.materials) found += referenced.count(lower(m.name)) && m.texture >= 0;
    EXPECT_EQ(followed + found, referenced.size());
    RecordProperty("ldr_vtfs", int(ldr));
    RecordProperty("followed_vmts", int(followed));
}

INSTANTIATE_TEST_SUITE_P(Corpus, SourceTextures, ::testing::ValuesIn(paths_of("source")),
                         [](const auto& info) { return test_name(info.param); });

// Half of the external texture names (every other one) go into a WAD3 named
// like the first file of the map's "wad" key; resolve finds exactly those.
TEST_P(GoldSrcTextures, GeneratedWad3FoundThroughTheWadKey) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::open(file.path);
    model::BuildOptions options;
    options.lightmaps = false;
    model::Map map = model::build(bsp, options);
    std::string wad_name = "generated.wad";
    if (!map.entities.empty())
        for (const auto& [k, v] : map.entities[0].pairs)
            if (lower(k) == "wad" && !v.empty()) {
                std::string first = lower(v.substr(0, v.find(';')));
                wad_name = first.substr(first.rfind('/') + 1);
            }
    std::vector<std::string> external;
    for (const auto& m : map.materials)
        if (m.texture < 0 && std::find(external.begin(), external.end(), lower(m.name)) == external.end())
            external.push_back(lower(m.name));
    const auto palette = ramp_palette();
    std::vector<WadLump> lumps;
    std::set<std::string> in_wad;
    for (size_t i = 0; i < external.size(); i += 2) {
        const auto m = std::find_if(map.materials.begin(), map.materials.end(),
                                    [&](const auto& x) { return lower(x.name) == external[i]; });
        const uint32_t w = m->width ? m->width : 16, h = m->height ? m->height : 16;
        // Upper case in the WAD: lookups ignore case, as the engine's.
        std::string upper = external[i];
        for (char& c : upper) c = char(std::toupper(static_cast<unsigned char>(c)));
        lumps.push_back({upper, make_miptex(upper, w, h, &palette), 0x43});
        in_wad.insert(external[i]);
    }
    const fs::path dir = temp_dir("goldsrc_wad_" + test_name(GetParam()));
    write_bytes(dir / wad_name, make_wad(true, lumps));
    const size_t embedded = map.textures.size();
    textures::SearchPath path;
    path.wads = {dir};
    const auto r = textures::resolve(map, bsp, path);
    EXPECT_EQ(r.found, in_wad.size());
    EXPECT_EQ(map.textures.size(), embedded + in_wad.size());
    EXPECT_EQ(r.missing.size(), external.size() - in_wad.size());
    for (const auto& m : r.missing) {
        EXPECT_EQ(in_wad.count(lower(m.material)), 0u) << m.material;
        ASSERT_FALSE(m.searched.empty());
        EXPECT_NE(m.searched[0].find(wad_name), std::string::npos) << m.searched[0];
    }
    for (const auto& m : map.materials) {
        if (!in_wad.count(lower(m.name))) continue;
        ASSERT_GE(m.texture, 0) << m.name;
        const model::Texture& t = map.textures[size_t(m.texture)];
        const uint32_t x = std::min(3u, t.width - 1), y = std::min(5u, t.height - 1);
        const uint8_t* p = t.rgba.data() + (size_t(y) * t.width + x) * 4;
        const uint8_t i = test_index(x, y);
        if (m.name[0] == '{' && i == 255) continue;
        EXPECT_EQ(p[0], palette[size_t(i) * 3]) << m.name;
        EXPECT_EQ(p[1], palette[size_t(i) * 3 + 1]) << m.name;
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, GoldSrcTextures, ::testing::ValuesIn(paths_of("goldsrc")),
                         [](const auto& info) { return test_name(info.param); });

// The verbs: `textures --wad DIR --json` writes embedded + found textures and
// lists the rest under "missing"; `export --wad` embeds them; a damaged WAD
// is a warning, not a failure.
TEST(TexturesCli, WadOptionWritesAndEmbedsFoundTextures) {
    const CorpusFile& file = corpus_file("hl1_v30/cs16_fy_mini.bsp");
    const Bsp bsp = Bsp::open(file.path);
    const model::Map map = model::build(bsp);
    std::vector<std::string> external;
    for (const auto& m : map.materials)
        if (m.texture < 0 && std::find(external.begin(), external.end(), m.name) == external.end())
            external.push_back(m.name);
    ASSERT_GE(external.size(), 2u);
    const auto palette = ramp_palette();
    const fs::path dir = temp_dir("textures_cli");
    write_bytes(dir / "wads" / "mine.wad", make_wad(true, {{external[0], make_miptex(external[0], 16, 16, &palette), 0x43}}));
    write_bytes(dir / "wads" / "broken.wad", Bytes{'W', 'A', 'D', '3', 9, 9, 9, 9, 9, 9, 9, 9});
    const RunResult r = run_cli({"textures", file.path.string(), "-o", (dir / "png").string(), "--wad",
                                 (dir / "wads").string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["textures"].size(), map.textures.size() + 1);
    EXPECT_EQ(j["textures"].back()["source"], "search path");
    EXPECT_TRUE(fs::exists(j["textures"].back()["path"].get<std::string>()));
    EXPECT_EQ(j["missing"].size(), external.size() - 1);
    for (const auto& m : j["missing"]) {
        const std::string name = m["material"];
        EXPECT_NE(r.err.find("texture \"" + name + "\" not found"), std::string::npos) << name;
    }
    EXPECT_NE(r.err.find("broken.wad"), std::string::npos) << r.err;  // reported, not fatal

    // Lighting kept apart, the found texture is one more image; baked (the
    // default), it is in the baked image, which a baked export shows instead.
    auto export_glb = [&](const std::string& name, const std::string& lighting, bool wad) {
        std::vector<std::string> args = {"export", file.path.string(), "-o", (dir / name).string(), "--json",
                                         "--lighting", lighting};
        if (wad) args.insert(args.end(), {"--wad", (dir / "wads" / "mine.wad").string()});
        const RunResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
    };
    const auto a = export_glb("a.glb", "separate", false), b = export_glb("b.glb", "separate", true);
    ASSERT_TRUE(a.contains("images") && b.contains("images"));
    EXPECT_EQ(b["images"].get<int>(), a["images"].get<int>() + 1);
    EXPECT_EQ(b["missing"].size(), external.size() - 1);
    const auto baked_a = export_glb("baked_a.glb", "baked", false), baked_b = export_glb("baked_b.glb", "baked", true);
    ASSERT_TRUE(baked_a.contains("images") && baked_b.contains("images"));
    EXPECT_EQ(baked_b["images"], baked_a["images"]);
    auto baked_image = [&](const std::string& name) {
        const GltfFile glb = GltfFile::read(dir / name);
        for (size_t i = 0; i < glb.doc["images"].size(); ++i)
            if (glb.doc["images"][i]["name"] == "baked") return glb.image_bytes(i);
        ADD_FAILURE() << name << ": no baked image";
        return Bytes();
    };
    EXPECT_NE(baked_image("baked_b.glb"), baked_image("baked_a.glb")) << "the found texture is not in the baked image";
}

// A map whose textures are all elsewhere, searched without them: every miss
// is in the JSON, but stderr does not get a line of places per texture. The
// first miss names its places, the next nine are named, the rest are counted
// and named on one line; --verbose gives each its places.
TEST(TexturesCli, ManyMissesAreSummarisedUnlessVerbose) {
    const CorpusFile& file = corpus_file("hl1_v30/hl_undertow.bsp");
    const fs::path dir = temp_dir("textures_misses");
    fs::create_directories(dir / "no_wads");
    auto run = [&](bool verbose) {
        std::vector<std::string> args = {"textures", file.path.string(), "-o", (dir / "png").string(), "--wad",
                                         (dir / "no_wads").string(), "--json"};
        if (verbose) args.push_back("--verbose");
        return run_cli(args);
    };
    auto lines_of = [](const std::string& text) {
        std::vector<std::string> out;
        for (size_t start = 0; start < text.size();) {
            const size_t end = std::min(text.find('\n', start), text.size());
            out.push_back(text.substr(start, end - start));
            start = end + 1;
        }
        return out;
    };
    const RunResult quiet = run(false);
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    const auto missing = nlohmann::json::parse(quiet.out)["missing"];
    ASSERT_GT(missing.size(), 11u);
    const auto lines = lines_of(quiet.err);
    ASSERT_EQ(lines.size(), 11u) << quiet.err;
    for (size_t i = 0; i < 10; ++i) {
        const std::string name = missing[i]["material"];
        EXPECT_NE(lines[i].find("texture \"" + name + "\" not found"), std::string::npos) << lines[i];
        EXPECT_EQ(lines[i].find("searched") != std::string::npos, i == 0) << lines[i];
        EXPECT_FALSE(missing[i]["searched"].empty());
    }
    EXPECT_NE(lines[10].find(std::to_string(missing.size() - 10) + " more textures not found: "), std::string::npos)
        << lines[10];
    for (size_t i = 10; i < missing.size(); ++i)
        EXPECT_NE(lines[10].find("\"" + missing[i]["material"].get<std::string>() + "\""), std::string::npos);

    const RunResult verbose = run(true);
    ASSERT_EQ(verbose.exit_code, 0) << verbose.err;
    EXPECT_EQ(nlohmann::json::parse(verbose.out)["missing"], missing);
    const auto all = lines_of(verbose.err);
    ASSERT_EQ(all.size(), missing.size()) << verbose.err;
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_NE(all[i].find("texture \"" + missing[i]["material"].get<std::string>() + "\" not found; searched "),
                  std::string::npos)
            << all[i];
}

// A texture name from the map that is not UTF-8, with a control byte: the JSON
// has it in bytes_to_utf8's mapping (nlohmann's dump() threw on it and the
// process aborted), stderr has the control byte as \x1b, not the byte itself.
TEST(TexturesCli, NamesThatAreNotUtf8) {
    const CorpusFile& file = corpus_file("q3_v46/oa_ctf2.bsp");
    const std::string dir = temp_dir("textures_names");
    Bytes bytes = read_corpus(file);
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    const auto textures = bsp.find_lump("textures");
    ASSERT_TRUE(textures && bsp.entry(*textures).length >= 72);
    const size_t at = size_t(bsp.entry(*textures).offset);
    const std::string before(reinterpret_cast<const char*>(bytes.data() + at));
    ASSERT_GE(before.size(), 4u);
    bytes[at + 1] = 0xfa;
    bytes[at + 2] = 0x1b;
    std::string name = before;
    name[1] = char(0xfa);
    name[2] = char(0x1b);
    const std::string path = dir + "/named.bsp";
    write_file_atomic(path, bytes);
    std::filesystem::create_directories(dir + "/game");
    const auto r = run_cli({"textures", path, "-o", dir + "/png", "--game-dir", dir + "/game", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
    bool listed = false;
    for (const auto& m : j["missing"]) listed |= m["material"] == bytes_to_utf8(name);
    EXPECT_TRUE(listed) << r.out;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a control byte reached the terminal";
    EXPECT_NE(r.err.find("\\x1b"), std::string::npos) << r.err;
}
