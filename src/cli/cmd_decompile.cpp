// bspkit decompile FILE -o OUT.vmf|OUT.map [--format F] [--brushes lumps|faces] [--no-merge] [--json]
#include "common.hpp"

#include <bspkit/decompile.hpp>
#include <bspkit/file_io.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace bspkit::cli {
namespace {

void add_decompile(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "decompile", "Write an editor map (Hammer VMF for Source, .map for Quake 2 / Quake 3 / Nightfire) from a BSP");
    struct Args {
        std::string file, out, format, brushes = "lumps";
        bool json = false, no_merge = false;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("FILE", a->file, "BSP file")->required();
    cmd->add_option("-o,--output", a->out, "Output .vmf / .map file ('-': stdout)")->required();
    cmd->add_option("--format", a->format,
                    "quake | valve220 | quake2 | quake2-standard | quake3 | quake3-bp | vmf (default: the family's own; "
                    "an .vmf output name means vmf)");
    cmd->add_option("--brushes", a->brushes, "lumps (the brush lumps, default) | faces (Source: a brush per face)")
        ->check(CLI::IsMember({"lumps", "faces"}));
    cmd->add_flag("--no-merge", a->no_merge, "Quake 1 / BSP2 / GoldSrc: one brush per leaf (no merging of convex unions)");
    cmd->add_flag("--json", a->json, "Print counts as JSON");
    add_salvage_flag(cmd);
    cmd->callback([&action, a] {
        action = [a] {
            decompile::Options options;
            if (!a->format.empty()) {
                options.dialect = mapfile::dialect_from_name(a->format);
                if (!options.dialect) throw UsageError("unknown --format '" + a->format + "'");
            } else if (a->out.size() > 4 && a->out.ends_with(".vmf")) {
                options.dialect = mapfile::Dialect::vmf;
            }
            options.merge = !a->no_merge;
            options.brushes = a->brushes == "faces" ? decompile::BrushSource::faces : decompile::BrushSource::lumps;
            const Bsp bsp = open_for_geometry(a->file);
            const decompile::Result r = decompile::decompile(bsp, options);
            const std::string text = mapfile::write(r.map);
            if (a->out == "-") std::fwrite(text.data(), 1, text.size(), stdout);
            else write_file_atomic(a->out, ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
            const auto& s = r.stats;
            if (a->json) {
                nlohmann::json j = {{"file", bsp.file_name()},
                                    {"output", a->out},
                                    {"format", mapfile::dialect_name(r.map.dialect)},
                                    {"entities", s.entities},
                                    {"brushes", s.brushes},
                                    {"sides", s.sides},
                                    {"displacements", s.displacements},
                                    {"patches", s.patches},
                                    {"props", s.props},
                                    {"overlays", s.overlays},
                                    {"cubemaps", s.cubemaps},
                                    {"skipped_brushes", s.skipped_brushes},
                                    {"dropped_sides", s.dropped_sides},
                                    {"notes", r.notes}};
                std::FILE* out = a->out == "-" ? stderr : stdout;
                fmt::print(out, "{}\n", json_text(j));
            } else {
                fmt::print(stderr,
                           "{}: wrote {} ({}): {} entities, {} brushes, {} sides, {} displacements, {} patches, {} props\n",
                           a->file, a->out, mapfile::dialect_name(r.map.dialect), s.entities, s.brushes, s.sides,
                           s.displacements, s.patches, s.props);
                for (const auto& n : r.notes) fmt::print(stderr, "{}: note: {}\n", a->file, n);
            }
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("decompile", add_decompile);

}  // namespace bspkit::cli
