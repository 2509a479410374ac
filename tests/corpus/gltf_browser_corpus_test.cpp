// The default export as a user sees it: `bspkit export` of a Quake 1, a
// GoldSrc, a Quake 2, a Quake 3 and a Source corpus map, loaded by three.js's
// GLTFLoader in headless Chromium with no lights (tools/render-check/
// render.mjs), camera fitted to the world. The world's pixels must be lit,
// neither near-black nor washed out; `--lighting none` (PBR, no lightmap) on
// the same view is near-black, so the measure can fail; `--no-sky` seen from
// above shows no sky and more of the world. The renderings stay in
// <build>/render-artefacts/ for people to look at.
#include "corpus.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

struct Rendering {
    bool ok = false;
    std::string error;
    nlohmann::json stats;  ///< world, sky, luma {mean, p10, p50, p90}, dark, bright (see render.mjs)
};

fs::path artefacts() {
    const fs::path dir = fs::path(BSPKIT_BINARY_DIR) / "render-artefacts";
    fs::create_directories(dir);
    return dir;
}

/// Exports `relpath` with `options` to <artefacts>/<name>.glb and renders it
/// (`view`: oblique or top) to <name>_<view>.png.
Rendering export_and_render(const std::string& relpath, const std::string& name,
                            const std::vector<std::string>& options, const std::string& view) {
    Rendering r;
    const CorpusFile& file = corpus_file(relpath);
    const fs::path glb = artefacts() / (name + ".glb"), png = artefacts() / (name + "_" + view + ".png");
    std::vector<std::string> args{"export", file.path.string(), "-o", glb.string()};
    args.insert(args.end(), options.begin(), options.end());
    const RunResult e = run_cli(args);
    if (e.exit_code != 0) {
        r.error = "bspkit export failed: " + e.err;
        return r;
    }
    const fs::path script = fs::path(BSPKIT_SOURCE_DIR) / "tools" / "render-check" / "render.mjs";
    const RunResult run = run_program("node", {script.string(), glb.string(), png.string(), "--view", view});
    if (run.exit_code != 0) {
        r.error = "render.mjs exit " + std::to_string(run.exit_code) + ": " + run.err;
        return r;
    }
    try {
        r.stats = nlohmann::json::parse(run.out);
        r.ok = true;
    } catch (const std::exception& ex) {
        r.error = std::string("unreadable render.mjs output: ") + ex.what() + "\n" + run.out;
    }
    return r;
}

struct Case {
    const char* relpath;
    const char* name;
    std::vector<std::string> options;  ///< for the default export (the exposure a dark map needs)
};

// One map per family the issue names (maps whose fitted view shows lit
// rooms: pd_change_dest sits in a huge solid_black box, oa_ctf2 keeps its
// lightmaps outside the file). The L4D2 map's lighting is very dark (in game
// its HDR tone mapping brightens it): it gets --exposure 3.
const Case kCases[] = {
    {"q1_v29/ericw_q1_decompiler_test.bsp", "quake1", {}},
    {"hl1_v30/hl_undertow.bsp", "goldsrc", {}},
    {"q2_v38/q2_base1.bsp", "quake2", {}},
    {"q3_v46/oa_oacmpctf3.bsp", "quake3", {}},
    {"src_v21/l4d2_escapefromterrortown01.bsp", "source", {"--exposure", "3"}},
};

class GltfBrowserCorpus : public ::testing::TestWithParam<Case> {};

}  // namespace

TEST_P(GltfBrowserCorpus, DefaultExportIsLitWithoutLights) {
    const Case c = GetParam();
    const Rendering r = export_and_render(c.relpath, c.name, c.options, "oblique");
    ASSERT_TRUE(r.ok) << c.relpath << ": " << r.error;
    const auto& s = r.stats;
    SCOPED_TRACE(s.dump());
    EXPECT_GT(s["world"].get<double>(), 0.05) << "the world covers too little of the view";
    // Lit: the median world pixel is neither near-black nor washed out, and
    // most pixels are neither.
    EXPECT_GT(s["luma"]["p50"].get<double>(), 28);
    EXPECT_LT(s["luma"]["p50"].get<double>(), 215);
    EXPECT_GT(s["luma"]["mean"].get<double>(), 28);
    EXPECT_LT(s["dark"].get<double>(), 0.35);
    EXPECT_LT(s["bright"].get<double>(), 0.25);
}

TEST_P(GltfBrowserCorpus, WithoutLightingTheSameViewIsDark) {
    // The control: PBR materials without a lightmap and without scene lights
    // render black, so the measure above does see darkness.
    const Case c = GetParam();
    const Rendering r = export_and_render(c.relpath, std::string(c.name) + "_none", {"--lighting", "none"}, "oblique");
    ASSERT_TRUE(r.ok) << c.relpath << ": " << r.error;
    SCOPED_TRACE(r.stats.dump());
    EXPECT_GT(r.stats["world"].get<double>(), 0.05);
    EXPECT_LT(r.stats["luma"]["p50"].get<double>(), 16);
}

INSTANTIATE_TEST_SUITE_P(Maps, GltfBrowserCorpus, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(GltfBrowserCorpusSky, NoSkyUncoversTheWorldFromAbove) {
    // A Quake 3 map closed by sky brushes: from above the sky hides much of it.
    const char* relpath = "q3_v46/oa_oacmpctf3.bsp";
    const Rendering with = export_and_render(relpath, "quake3_sky", {}, "top");
    const Rendering without = export_and_render(relpath, "quake3_nosky", {"--no-sky"}, "top");
    ASSERT_TRUE(with.ok) << with.error;
    ASSERT_TRUE(without.ok) << without.error;
    SCOPED_TRACE(with.stats.dump() + "\n" + without.stats.dump());
    EXPECT_GT(with.stats["sky"].get<double>(), 0.1) << "the sky does not cover the map from above";
    EXPECT_EQ(without.stats["sky"].get<double>(), 0);
    EXPECT_GT(without.stats["world"].get<double>(), with.stats["world"].get<double>() * 1.2);
    EXPECT_GT(without.stats["luma"]["p50"].get<double>(), 28);
}
