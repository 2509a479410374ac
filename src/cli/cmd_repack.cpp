// bspkit repack FILE -o NEW [--compress|--decompress]
#include "common.hpp"

#include <filesystem>

#include <fmt/core.h>

namespace bspkit::cli {

namespace {
void add_repack(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("repack", "Save a BSP file again, optionally (de)compressing its lumps");
    struct Args {
        std::string file, out;
        bool compress = false, decompress = false;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("FILE", a->file, "BSP file")->required();
    cmd->add_option("-o,--output", a->out, "Output BSP file")->required();
    auto* c = cmd->add_flag("--compress", a->compress,
                            "LZMA-compress every lump but the pakfile, game lumps one by one (Source, as bspzip -repack)");
    auto* d = cmd->add_flag("--decompress", a->decompress, "Remove all LZMA compression");
    c->excludes(d);
    cmd->callback([&action, a] {
        action = [a] {
            const Bsp bsp = open_reporting(a->file);
            SaveOptions options;
            if (a->compress) options.compression = Compression::compress;
            if (a->decompress) options.compression = Compression::decompress;
            bsp.save(a->out, options);  // unchanged lumps go from the mapping to the file, uncopied
            fmt::print(stderr, "{}: wrote {} ({} bytes, input {} bytes)\n", a->file, a->out,
                       std::filesystem::file_size(a->out), bsp.file_bytes().size());
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("repack", add_repack);

}  // namespace bspkit::cli
