#include "texture_search.hpp"

#include "common.hpp"

#include <bspkit/zip.hpp>

#include <fmt/core.h>

namespace bspkit::cli {

void add_texture_search_options(CLI::App* cmd, TextureSearchArgs& args) {
    cmd->add_option("--wad", args.wads,
                    "A WAD2 / WAD3 file, or a folder holding the WADs named by the map's \"wad\" key (and others);\n"
                    "repeatable")
        ->check(CLI::ExistingPath);
    cmd->add_option("--game-dir", args.game_dirs,
                    "A game folder to find textures in, as the game does (repeatable): Quake 2 textures/*.wal +\n"
                    "pics/colormap.pcx, Quake 3 images, shaders and *.pk3, Source materials/*.vmt -> *.vtf and\n"
                    "*_dir.vpk (after the map's pakfile)")
        ->check(CLI::ExistingDirectory);
}

namespace {

/// The places a search looked at, printable, as one comma-separated list.
std::string places_list(const std::vector<std::string>& searched) {
    std::string places;
    for (const std::string& s : searched) places += (places.empty() ? "" : ", ") + zip::printable(s);
    return places;
}

}  // namespace

nlohmann::json resolve_textures_reporting(model::Map& map, const Bsp& bsp, const TextureSearchArgs& args,
                                          textures::SearchPath path) {
    for (const std::string& w : args.wads) path.wads.emplace_back(w);
    for (const std::string& d : args.game_dirs) path.game_dirs.emplace_back(d);
    const textures::Resolved r = textures::resolve(map, bsp, path);
    print_diagnostics(bsp.file_name(), r.diagnostics);
    if (r.sky_box_missing) {
        const textures::Missing& m = *r.sky_box_missing;
        std::string why;
        if (!m.problem.empty()) {
            why = "not used: " + zip::printable(m.problem);
        } else if (verbose()) {
            why = "not found; searched " + places_list(m.searched);
        } else {
            why = "not found (" + std::to_string(m.searched.size()) + " places searched; --verbose lists them)";
        }
        fmt::print(stderr, "{}: {} {}; {}\n", bsp.file_name(), zip::printable(m.material), why,
                   map.sky_clouds ? "its cloud layers are drawn over black" : "the sky is drawn in one colour");
    }
    if (r.lightmap_pages > 0)
        fmt::print(stderr, "{}: {} lightmap pages loaded from outside the map (maps/.../lm_NNNN)\n", bsp.file_name(),
                   r.lightmap_pages);
    // A map whose textures are all elsewhere (the game's base archive not
    // given) misses dozens, each searched in a dozen places: unless
    // --verbose, the first is shown with its places, the next few by name,
    // and the rest are counted on one line, named. Files that were found
    // and could not be used are always shown with why.
    constexpr size_t kLines = 10;
    size_t lines = 0;
    std::vector<std::string> held;
    nlohmann::json missing = nlohmann::json::array();
    // Material names come from the map: control bytes are shown as \xNN, not sent to the terminal.
    for (const textures::Missing& m : r.missing) {
        nlohmann::json j = {{"material", m.material}, {"searched", m.searched}};
        if (!m.problem.empty()) j["problem"] = m.problem;
        missing.push_back(std::move(j));
        const bool plain = m.problem.empty();
        const std::string name = zip::printable(m.material);
        if (plain && !verbose() && lines >= kLines) {
            held.push_back(name);
            continue;
        }
        std::string places = places_list(m.searched);
        if (places.empty()) places = "nowhere: give --wad or --game-dir";
        if (!plain)
            fmt::print(stderr, "{}: texture \"{}\" not used: {}; searched {}\n", bsp.file_name(), name,
                       zip::printable(m.problem), places);
        else if (lines == 0 || verbose())
            fmt::print(stderr, "{}: texture \"{}\" not found; searched {}\n", bsp.file_name(), name, places);
        else
            fmt::print(stderr, "{}: texture \"{}\" not found\n", bsp.file_name(), name);
        if (plain) ++lines;
    }
    if (!held.empty()) {
        std::string names;
        for (const std::string& n : held) names += (names.empty() ? "\"" : ", \"") + n + "\"";
        fmt::print(stderr, "{}: {} more textures not found: {} (--verbose lists each with the places searched)\n",
                   bsp.file_name(), held.size(), names);
    }
    return missing;
}

}  // namespace bspkit::cli
