// bspkit lightmaps FILE -o DIR [--hdr] [--game-dir DIR]... [--json]: builds
// the map's model (with Quake 3 pages kept outside the map found in the game
// folders), packs every surface's lightmap into one atlas page per light style
// and writes each page as DIR/lightmap_style<N>.png (RGB). stdout lists the
// files written.
#include "common.hpp"
#include "texture_search.hpp"

#include <bspkit/model.hpp>
#include <bspkit/png.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>

namespace bspkit::cli {
namespace {

int run_lightmaps(const std::string& file, const std::string& dir, bool json, bool hdr,
                  const std::vector<std::string>& game_dirs) {
    const Bsp bsp = open_for_geometry(file);
    model::BuildOptions options;
    options.textures = false;
    options.hdr_lightmaps = hdr;
    model::Map map = model::build(bsp, options);
    if (!game_dirs.empty() && !map.external_lightmaps.empty()) {  // Quake 3, q3map2 -external
        TextureSearchArgs search;
        search.game_dirs = game_dirs;
        textures::SearchPath lightmaps_only;
        lightmaps_only.textures = false;
        resolve_textures_reporting(map, bsp, search, lightmaps_only);
    }
    print_diagnostics(file, map.diagnostics);

    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw Error({dir, "", -1}, "cannot create the output directory: " + ec.message());

    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    size_t lit = 0;
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) lit += s.lightmap >= 0;
    j["lit_surfaces"] = lit;
    if (!map.lightmap_source.empty()) j["lighting_lump"] = map.lightmap_source;
    auto& pages = j["pages"] = nlohmann::json::array();
    for (const model::LightmapAtlas& atlas : map.lightmaps) {
        const std::filesystem::path path = std::filesystem::path(dir) / fmt::format("lightmap_style{}.png", atlas.style);
        write_png(path, atlas.width, atlas.height, 3, atlas.rgb);
        pages.push_back({{"style", atlas.style}, {"width", atlas.width}, {"height", atlas.height}, {"path", path.string()}});
        if (!json) fmt::print("{}\n", path.string());
    }
    if (json)
        fmt::print("{}\n", json_text(j));
    else if (map.lightmaps.empty())
        fmt::print(stderr, "{}: no lightmaps ({}): nothing written\n", file,
                   map.diagnostics.empty() ? "no lit surfaces" : "no surface kept one: see the warnings above");
    return kExitOk;
}

void add_lightmaps(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("lightmaps", "Write a map's lightmaps as atlas pages (one PNG per light style)");
    auto file = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto hdr = std::make_shared<bool>(false);
    auto game_dirs = std::make_shared<std::vector<std::string>>();
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_option("-o,--output", *dir, "Directory to write lightmap_style<N>.png into (created if missing)")->required();
    cmd->add_flag("--hdr", *hdr, "Source: the HDR lighting lump when the map has one (default: LDR when present)");
    cmd->add_flag("--json", *json, "Print machine-readable JSON (pages with style, size and path)");
    cmd->add_option("--game-dir", *game_dirs,
                    "Quake 3: a game folder holding the lightmaps kept outside the map (q3map2 -external:\n"
                    "maps/<map>/lm_NNNN.tga / .jpg / .png, loose or in *.pk3); repeatable")
        ->check(CLI::ExistingDirectory);
    add_salvage_flag(cmd);
    cmd->footer("Style 0 is the normal lighting; other styles are animated or switchable lights (Quake: 1-11\n"
                "animated, 32-62 switched by entities). All pages share one layout; a surface is black on the\n"
                "pages of styles it does not use.\n"
                "Exit status: 0 ok, 1 unreadable file or geometry, 2 usage.");
    cmd->callback([&action, file, dir, json, hdr, game_dirs] {
        action = [file, dir, json, hdr, game_dirs] { return run_lightmaps(*file, *dir, *json, *hdr, *game_dirs); };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("lightmaps", add_lightmaps);

}  // namespace bspkit::cli
