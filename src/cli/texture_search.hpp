// --wad / --game-dir, shared by the `textures` and `export` verbs: the
// texture search path of bspkit/textures.hpp, and how its misses are reported.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/model.hpp>
#include <bspkit/textures.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bspkit::cli {

struct TextureSearchArgs {
    std::vector<std::string> wads, game_dirs;
    bool given() const { return !wads.empty() || !game_dirs.empty(); }
};

/// Adds --wad and --game-dir (both repeatable) to `cmd`.
void add_texture_search_options(CLI::App* cmd, TextureSearchArgs& args);

/// Resolves the map's external textures; prints each material not found once
/// on stderr with the places searched (and archives that could not be read)
/// and returns them as JSON: [{material, searched: [...], problem?}].
nlohmann::json resolve_textures_reporting(model::Map& map, const Bsp& bsp, const TextureSearchArgs& args,
                                          textures::SearchPath path = {});

}  // namespace bspkit::cli
