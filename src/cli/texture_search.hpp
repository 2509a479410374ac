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

/// Resolves the map's external textures; reports the materials not found on
/// stderr (the first with the places searched, ten by name, the rest counted
/// and named on one line; each with its places under --verbose), every file
/// found but not usable with why, and archives that could not be read; returns
/// them all as JSON: [{material, searched: [...], problem?}].
nlohmann::json resolve_textures_reporting(model::Map& map, const Bsp& bsp, const TextureSearchArgs& args,
                                          textures::SearchPath path = {});

}  // namespace bspkit::cli
