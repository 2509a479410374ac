// bspkit textures FILE -o DIR [--palette FILE] [--wad P]... [--game-dir D]... [--json]:
// writes every texture of a map as DIR/<name>.png (RGBA): those embedded in
// a Quake 1 / BSP2 / GoldSrc map, then those found on the texture search path
// (bspkit/textures.hpp: WADs, game folders, a Source map's pakfile). Names
// are sanitised to [A-Za-z0-9_-] (anything else becomes '_') and made unique,
// so nothing is written outside DIR. Quake textures use the Quake palette or
// the palette.lmp given with --palette; GoldSrc textures carry their own.
// Every material without a texture is listed once on stderr (and under
// "missing" with --json) with the places searched.
#include "common.hpp"
#include "texture_search.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/model.hpp>
#include <bspkit/png.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace bspkit::cli {
namespace {

/// [A-Za-z0-9_-] kept, anything else '_', at most 64 characters, "unnamed" when empty.
std::string file_stem(std::string_view name) {
    std::string out;
    for (char c : name.substr(0, 64)) {
        const auto u = static_cast<unsigned char>(c);
        out += std::isalnum(u) || c == '_' || c == '-' ? c : '_';
    }
    return out.empty() ? "unnamed" : out;
}

int run_textures(const std::string& file, const std::string& dir, const std::string& palette_path,
                 const TextureSearchArgs& search, bool json) {
    const Bsp bsp = open_for_geometry(file);
    const bool quake1_family =
        bsp.format() == Format::quake1 || bsp.format() == Format::bsp2 || bsp.format() == Format::goldsrc;
    std::optional<quake1::Palette> palette;
    if (!palette_path.empty()) {
        palette = quake1::load_palette(palette_path);
        if (bsp.format() == Format::goldsrc)
            fmt::print(stderr, "{}: warning: GoldSrc textures carry their own palettes: --palette is not used\n", file);
    }
    model::BuildOptions options;
    options.lightmaps = false;
    model::Map map = model::build(bsp, options);
    if (quake1_family && palette && bsp.format() != Format::goldsrc) {
        // The builder decodes with Quake's palette: decode again with the one given (same order).
        quake1::DecodedTextures decoded = quake1::decode_textures(quake1::Map(bsp), *palette);
        if (decoded.textures.size() == map.textures.size()) map.textures = std::move(decoded.textures);
    }
    std::vector<Diagnostic> texture_diagnostics;
    for (const Diagnostic& d : map.diagnostics)
        if (d.lump == "textures") texture_diagnostics.push_back(d);
    print_diagnostics(file, texture_diagnostics);
    const size_t embedded = map.textures.size();
    textures::SearchPath path;
    if (palette) path.quake_palette = *palette;
    nlohmann::json missing = resolve_textures_reporting(map, bsp, search, path);

    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw Error({dir, "", -1}, "cannot create the output directory: " + ec.message());

    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    auto& list = j["textures"] = nlohmann::json::array();
    std::set<std::string> used;  // lower case: case-insensitive file systems
    for (size_t i = 0; i < map.textures.size(); ++i) {
        const model::Texture& t = map.textures[i];
        std::string stem = file_stem(t.name);
        for (int n = 2; used.count(ascii_lower(stem)); ++n) stem = file_stem(t.name) + "_" + std::to_string(n);
        used.insert(ascii_lower(stem));
        const std::filesystem::path out = std::filesystem::path(dir) / (stem + ".png");
        write_png(out, t.width, t.height, 4, t.rgba);
        list.push_back({{"name", t.name},
                        {"width", t.width},
                        {"height", t.height},
                        {"path", out.string()},
                        {"source", i < embedded ? "embedded" : "search path"}});
        if (!json) fmt::print("{}\n", out.string());
    }
    j["missing"] = std::move(missing);
    if (json) {
        fmt::print("{}\n", json_text(j));
    } else if (map.textures.empty()) {
        fmt::print(stderr, "{}: no textures found (none embedded{}): nothing written\n", file,
                   search.given() ? "" : "; give --wad or --game-dir to search for them");
    }
    return kExitOk;
}

void add_textures(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("textures",
                                   "Write a map's textures as PNG files: embedded ones, then those found on the\n"
                                   "search path (--wad, --game-dir, a Source map's pakfile)");
    auto file = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto palette = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto search = std::make_shared<TextureSearchArgs>();
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_option("-o,--output", *dir, "Directory to write <name>.png into (created if missing)")->required();
    cmd->add_option("--palette", *palette, "A palette.lmp (768 bytes) for Quake / BSP2 textures instead of Quake's");
    add_texture_search_options(cmd, *search);
    cmd->add_flag("--json", *json,
                  "Print machine-readable JSON (name, size, path and source of each texture; \"missing\": materials\n"
                  "without a texture and where they were searched)");
    add_salvage_flag(cmd);
    cmd->footer("Names keep [A-Za-z0-9_-] (others become '_') and get _2, _3 ... when they repeat.\n"
                "'{' textures: palette index 255 is transparent. A Source map's pakfile is always searched.\n"
                "Exit status: 0 ok, 1 unreadable file or palette, 2 usage.");
    cmd->callback([&action, file, dir, palette, search, json] {
        action = [file, dir, palette, search, json] { return run_textures(*file, *dir, *palette, *search, *json); };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("textures", add_textures);

}  // namespace bspkit::cli
