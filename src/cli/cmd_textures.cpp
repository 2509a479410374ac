// bspkit textures FILE -o DIR [--palette FILE] [--json]: writes every texture
// embedded in a Quake 1 / BSP2 / GoldSrc map as DIR/<name>.png (RGBA). Names
// are sanitised to [A-Za-z0-9_-] (anything else becomes '_') and made unique,
// so nothing is written outside DIR. Quake textures use the Quake palette or
// the palette.lmp given with --palette; GoldSrc textures carry their own.
// Quake 2, Quake 3 and Nightfire maps keep their textures outside the map
// and Source maps in the pakfile (`bspkit pak`): nothing is written for them.
#include "common.hpp"

#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake1_textures.hpp>
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

std::string lower(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

int run_textures(const std::string& file, const std::string& dir, const std::string& palette_path, bool json) {
    const Bsp bsp = open_for_geometry(file);
    const bool quake1_family =
        bsp.format() == Format::quake1 || bsp.format() == Format::bsp2 || bsp.format() == Format::goldsrc;
    std::optional<quake1::Palette> palette;
    if (!palette_path.empty()) {
        palette = quake1::load_palette(palette_path);
        if (bsp.format() == Format::goldsrc)
            fmt::print(stderr, "{}: warning: GoldSrc textures carry their own palettes: --palette is not used\n", file);
    }
    quake1::DecodedTextures decoded;
    if (quake1_family) {
        const quake1::Map map(bsp);
        decoded = quake1::decode_textures(map, palette ? *palette : quake1::quake_palette());
        for (const Diagnostic& d : decoded.diagnostics) print_diagnostic(file, d);
    }

    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec || !std::filesystem::is_directory(dir))
        throw Error({dir, "", -1}, "cannot create the output directory: " + ec.message());

    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    auto& list = j["textures"] = nlohmann::json::array();
    std::set<std::string> used;  // lower case: case-insensitive file systems
    for (const model::Texture& t : decoded.textures) {
        std::string stem = file_stem(t.name);
        for (int n = 2; used.count(lower(stem)); ++n) stem = file_stem(t.name) + "_" + std::to_string(n);
        used.insert(lower(stem));
        const std::filesystem::path path = std::filesystem::path(dir) / (stem + ".png");
        write_png(path, t.width, t.height, 4, t.rgba);
        list.push_back({{"name", t.name}, {"width", t.width}, {"height", t.height}, {"path", path.string()}});
        if (!json) fmt::print("{}\n", path.string());
    }
    if (json) {
        fmt::print("{}\n", j.dump(2));
    } else if (decoded.textures.empty()) {
        if (quake1_family)
            fmt::print(stderr, "{}: no embedded textures (they are in external WADs): nothing written\n", file);
        else if (bsp.format() == Format::source)
            fmt::print(stderr, "{}: Source maps keep embedded textures as VTF files in the pakfile "
                               "(see `bspkit pak`): nothing written\n", file);
        else
            fmt::print(stderr, "{}: {} maps keep their textures outside the map: nothing written\n", file,
                       format_id(bsp.format()));
    }
    return kExitOk;
}

void add_textures(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("textures", "Write the textures embedded in a map as PNG files");
    auto file = std::make_shared<std::string>();
    auto dir = std::make_shared<std::string>();
    auto palette = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_option("-o,--output", *dir, "Directory to write <name>.png into (created if missing)")->required();
    cmd->add_option("--palette", *palette, "A palette.lmp (768 bytes) for Quake / BSP2 textures instead of Quake's");
    cmd->add_flag("--json", *json, "Print machine-readable JSON (name, size and path of each texture)");
    add_salvage_flag(cmd);
    cmd->footer("Names keep [A-Za-z0-9_-] (others become '_') and get _2, _3 ... when they repeat.\n"
                "'{' textures: palette index 255 is transparent. Textures kept in WADs are not in the map.\n"
                "Exit status: 0 ok, 1 unreadable file or palette, 2 usage.");
    cmd->callback([&action, file, dir, palette, json] {
        action = [file, dir, palette, json] { return run_textures(*file, *dir, *palette, *json); };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("textures", add_textures);

}  // namespace bspkit::cli
