// bspkit lump extract FILE LUMP -o OUT [--stored]
// bspkit lump replace FILE LUMP DATA -o NEW
#include "common.hpp"

#include <bspkit/bspx.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_props.hpp>

#include <fmt/core.h>

namespace bspkit::cli {

namespace {

/// A Source game lump named by its fourCC ("sprp", "dprp", ...) when LUMP is
/// not a lump of the format's table.
std::optional<size_t> game_lump_by_fourcc(const Bsp& bsp, const std::string& text) {
    if (text.size() != 4 || bsp.find_lump(text)) return std::nullopt;
    const uint32_t id = uint32_t(uint8_t(text[0])) << 24 | uint32_t(uint8_t(text[1])) << 16 |
                        uint32_t(uint8_t(text[2])) << 8 | uint32_t(uint8_t(text[3]));
    if (const auto k = source::find_game_lump(bsp, id)) return k;
    if (bsp.game_lumps().empty()) return std::nullopt;
    std::string ids;
    for (const GameLump& g : bsp.game_lumps()) ids += (ids.empty() ? "" : ", ") + g.name();
    throw UsageError(fmt::format("no lump or game lump '{}' in {}: its game lumps are {}", text, bsp.file_name(), ids));
}

/// `bspx:NAME`: a BSPX lump's bytes (those present in the file).
int extract_bspx(const Bsp& bsp, const std::string& name, const std::string& out) {
    const bspx::Directory dir = bspx::read(bsp);
    const bspx::Lump* l = dir.find(name);
    if (!l) {
        std::string names;
        for (const bspx::Lump& x : dir.lumps) names += (names.empty() ? "" : ", ") + bspx::lump_name(x.name);
        throw UsageError("no BSPX lump '" + name + "' in " + bsp.file_name() +
                         (names.empty() ? " (it has no BSPX lumps)" : " (BSPX lumps: " + names + ")"));
    }
    write_file_atomic(out, l->data);
    fmt::print(stderr, "{}: lump {}: wrote {} bytes to {}\n", bsp.file_name(), bspx::lump_name(l->name), l->data.size(),
               out);
    return kExitOk;
}

void add_lump(CLI::App& app, Action& action) {
    auto* lump = app.add_subcommand("lump", "Extract or replace one lump");
    lump->require_subcommand(1);

    struct Args {
        std::string file, lump, data, out;
        bool stored = false, force = false;
    };
    auto a = std::make_shared<Args>();

    auto* extract = lump->add_subcommand("extract", "Write a lump's decoded (or stored) bytes to a file");
    extract->add_option("FILE", a->file, "BSP file")->required();
    extract->add_option("LUMP", a->lump,
                        "Lump index or name; for Source also a game lump's fourCC (sprp, dprp, ...); bspx:NAME for a\n"
                        "BSPX lump")
        ->required();
    extract->add_option("-o,--output", a->out, "Output file")->required();
    extract->add_flag("--stored", a->stored, "Write the bytes as stored (still LZMA-compressed if they are)");
    extract->callback([&action, a] {
        action = [a] {
            const Bsp bsp = open_reporting(a->file);
            if (a->lump.rfind("bspx:", 0) == 0) return extract_bspx(bsp, a->lump.substr(5), a->out);
            if (const auto game = game_lump_by_fourcc(bsp, a->lump)) {
                const ByteSpan bytes = a->stored ? bsp.game_lump_stored(*game) : bsp.game_lump_decoded(*game);
                write_file_atomic(a->out, bytes);
                fmt::print(stderr, "{}: game lump {}: wrote {} bytes to {}\n", a->file, a->lump, bytes.size(), a->out);
                return kExitOk;
            }
            const size_t index = resolve_lump(bsp, a->lump);
            const ByteSpan bytes = a->stored ? bsp.stored(index) : bsp.decoded(index);
            write_file_atomic(a->out, bytes);
            fmt::print(stderr, "{}: lump {} ({}): wrote {} bytes to {}\n", a->file, index, bsp.lump_name(index),
                       bytes.size(), a->out);
            return kExitOk;
        };
    });

    auto* replace = lump->add_subcommand("replace", "Replace a lump's decoded bytes and save to a new file");
    replace->add_option("FILE", a->file, "BSP file")->required();
    replace->add_option("LUMP", a->lump, "Lump index or name")->required();
    replace->add_option("DATA", a->data, "File with the new decoded lump bytes")->required();
    replace->add_option("-o,--output", a->out, "Output BSP file")->required();
    replace->add_flag("--force", a->force, "Accept DATA that is not a whole number of the lump's records");
    replace->callback([&action, a] {
        action = [a] {
            Bsp bsp = open_reporting(a->file);
            const size_t index = resolve_lump(bsp, a->lump);
            Bytes data = read_file(a->data);
            const uint32_t record = bsp.record_size(index);
            if (record != 0 && data.size() % record != 0 && !a->force)
                throw Error({a->file, std::string(bsp.lump_name(index)), bsp.entry(index).offset},
                            fmt::format("refusing {} ({} bytes): not a whole number of {}-byte records ({} records "
                                        "and {} bytes over); --force writes it anyway",
                                        a->data, data.size(), record, data.size() / record, data.size() % record));
            bsp.replace(index, std::move(data));
            bsp.save(a->out);
            fmt::print(stderr, "{}: replaced lump {} ({}), saved {}\n", a->file, index, bsp.lump_name(index), a->out);
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("lump", add_lump);

}  // namespace bspkit::cli
