// bspkit info FILE [--json]
#include "common.hpp"

#include <bspkit/bspx.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace bspkit::cli {
namespace {

nlohmann::json info_json(const Bsp& bsp) {
    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    j["variant"] = bsp.layout().variant;
    j["version"] = bsp.version() ? nlohmann::json(*bsp.version()) : nlohmann::json(nullptr);
    j["revision"] = bsp.revision();
    j["big_endian"] = bsp.byte_order() == ByteOrder::big;
    j["detected_by"] = bsp.detection().rule;
    j["size"] = bsp.file_bytes().size();
    auto& lumps = j["lumps"] = nlohmann::json::array();
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const LumpEntry& e = bsp.entry(i);
        const auto count = bsp.record_count(i);
        lumps.push_back({{"index", i},
                         {"name", bsp.lump_name(i)},
                         {"offset", e.offset},
                         {"length", e.length},
                         {"decoded_length", bsp.decoded_length(i)},
                         {"version", e.version},
                         {"compressed", bsp.compressed(i)},
                         {"count", count ? nlohmann::json(*count) : nlohmann::json(nullptr)}});
    }
    if (bsp.format() == Format::source) {
        auto& games = j["game_lumps"] = nlohmann::json::array();
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) {
            const GameLump& g = bsp.game_lumps()[k];
            games.push_back({{"id", g.name()},
                             {"version", g.version},
                             {"flags", g.flags},
                             {"offset", g.offset},
                             {"length", g.length},
                             {"compressed", g.compressed()}});
        }
        j["game_lump_offsets"] = bsp.game_lump_offsets_relative() ? "relative" : "absolute";
    }
    if (bspx::applies_to(bsp.format())) {
        auto& ext = j["bspx"] = nlohmann::json::array();
        for (const bspx::Lump& l : bspx::read(bsp).lumps)
            ext.push_back({{"name", l.name}, {"offset", l.offset}, {"length", l.length}});
    }
    j["warnings"] = diagnostics_json(bsp.diagnostics());
    return j;
}

void print_text(const Bsp& bsp) {
    const std::string version = bsp.version() ? std::to_string(*bsp.version()) : "none";
    fmt::print("file:        {} ({} bytes)\n", bsp.file_name(), bsp.file_bytes().size());
    fmt::print("format:      {}{} — {}\n", format_id(bsp.format()),
               bsp.layout().variant.empty() ? "" : " (" + std::string(bsp.layout().variant) + ")",
               bsp.layout().description);
    fmt::print("version:     {}\n", version);
    if (bsp.format() == Format::source) fmt::print("revision:    {}\n", bsp.revision());
    fmt::print("byte order:  {}\n", bsp.byte_order() == ByteOrder::big ? "big-endian" : "little-endian");
    fmt::print("detected by: {}\n", bsp.detection().rule);
    const bool source = bsp.format() == Format::source;
    fmt::print("\n{:>5}  {:<30} {:>10} {:>10} {:>10}{} {:>9}\n", "index", "lump", "offset", "length", "decoded",
               source ? "  ver  lzma" : "", "count");
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const LumpEntry& e = bsp.entry(i);
        if (source && e.length == 0 && e.offset == 0 && e.version == 0) continue;  // unused slot
        const auto count = bsp.record_count(i);
        fmt::print("{:>5}  {:<30} {:>10} {:>10} {:>10}", i, bsp.lump_name(i), e.offset, e.length,
                   bsp.decoded_length(i));
        if (source) fmt::print(" {:>4}  {:>4}", e.version, bsp.compressed(i) ? "yes" : "");
        fmt::print(" {:>9}\n", count ? std::to_string(*count) : "-");
    }
    if (const bspx::Directory dir = bspx::read(bsp); dir.present()) {
        fmt::print("\nBSPX lumps (directory at offset {}):\n", dir.offset);
        fmt::print("{:>5}  {:<30} {:>10} {:>10}\n", "index", "lump", "offset", "length");
        for (size_t k = 0; k < dir.lumps.size(); ++k)
            fmt::print("{:>5}  {:<30} {:>10} {:>10}\n", k, bspx::lump_name(dir.lumps[k].name), dir.lumps[k].offset,
                       dir.lumps[k].length);
    }
    if (source && !bsp.game_lumps().empty()) {
        fmt::print("\ngame lumps ({} offsets):\n", bsp.game_lump_offsets_relative() ? "relative" : "absolute");
        fmt::print("{:>5}  {:<6} {:>7} {:>6} {:>10} {:>10}  lzma\n", "index", "id", "version", "flags", "offset",
                   "length");
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) {
            const GameLump& g = bsp.game_lumps()[k];
            fmt::print("{:>5}  {:<6} {:>7} {:>6} {:>10} {:>10}  {}\n", k, g.name(), g.version, g.flags, g.offset,
                       g.length, g.compressed() ? "yes" : "");
        }
    }
}

}  // namespace

namespace {
void add_info(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("info", "Format, version, byte order and the lump table of a BSP file");
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_flag("--json", *json, "Print machine-readable JSON");
    cmd->callback([&action, file, json] {
        action = [file, json] {
            const Bsp bsp = open_reporting(*file);
            if (*json)
                fmt::print("{}\n", json_text(info_json(bsp)));
            else
                print_text(bsp);
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("info", add_info);

}  // namespace bspkit::cli
