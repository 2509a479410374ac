// bspkit lump extract FILE LUMP -o OUT [--stored]
// bspkit lump replace FILE LUMP DATA -o NEW
#include "common.hpp"

#include <bspkit/file_io.hpp>

#include <fmt/core.h>

namespace bspkit::cli {

namespace {
void add_lump(CLI::App& app, Action& action) {
    auto* lump = app.add_subcommand("lump", "Extract or replace one lump");
    lump->require_subcommand(1);

    struct Args {
        std::string file, lump, data, out;
        bool stored = false;
    };
    auto a = std::make_shared<Args>();

    auto* extract = lump->add_subcommand("extract", "Write a lump's decoded (or stored) bytes to a file");
    extract->add_option("FILE", a->file, "BSP file")->required();
    extract->add_option("LUMP", a->lump, "Lump index or name")->required();
    extract->add_option("-o,--output", a->out, "Output file")->required();
    extract->add_flag("--stored", a->stored, "Write the bytes as stored (still LZMA-compressed if they are)");
    extract->callback([&action, a] {
        action = [a] {
            const Bsp bsp = open_reporting(a->file);
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
    replace->callback([&action, a] {
        action = [a] {
            Bsp bsp = open_reporting(a->file);
            const size_t index = resolve_lump(bsp, a->lump);
            bsp.replace(index, read_file(a->data));
            bsp.save(a->out);
            fmt::print(stderr, "{}: replaced lump {} ({}), saved {}\n", a->file, index, bsp.lump_name(index), a->out);
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("lump", add_lump);

}  // namespace bspkit::cli
