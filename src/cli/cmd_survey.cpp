// bspkit survey DIR... [-o OUT.jsonl] [--threads N]: one JSON line per map
// (bspkit::survey::Record), for studies of whole map archives. Thin front end
// over bspkit/survey.hpp; Python's bspkit.survey runs the same records on Dask.
#include "common.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/survey.hpp>

#include <fmt/core.h>

#include <algorithm>
#include <unistd.h>

namespace bspkit::cli {
namespace {

void add_survey(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "survey", "One JSON line per map under DIRs (format, version, lump counts, check findings, entity classes,\n"
                  "texture names, world bounds); files that cannot be read are lines with an \"error\"");
    struct Args {
        std::vector<std::string> roots;
        std::string out;
        int threads = 0;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("DIR", a->roots, "Directories searched for *.bsp (recursively), or map files")->required();
    cmd->add_option("-o,--output", a->out, "Output .jsonl file (default: stdout)");
    cmd->add_option("--threads", a->threads, "Maps surveyed at once (0 = every core)")->check(CLI::NonNegativeNumber);
    cmd->footer("Exit status: 0 when the table was written (bad maps are rows with \"error\"), 1 when a DIR cannot "
                "be read, 2 usage.");
    cmd->callback([&action, a] {
        action = [a] {
            std::vector<std::filesystem::path> roots(a->roots.begin(), a->roots.end());
            const auto maps = survey::find_maps(roots);
            const bool tty = ::isatty(2);
            const auto records = survey::survey_files(maps, unsigned(a->threads), [&](size_t k) {
                if (!tty) return;
                fmt::print(stderr, "\rbspkit survey: {}/{} maps", k, maps.size());
                std::fflush(stderr);
            });
            if (tty && !maps.empty()) fmt::print(stderr, "\r\033[K");
            std::string text;
            size_t errors = 0;
            for (const auto& r : records) {
                text += survey::to_json_line(r);
                text += '\n';
                errors += !r.error.empty();
            }
            if (a->out.empty() || a->out == "-") {
                fmt::print("{}", text);
            } else {
                write_file_atomic(a->out, ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
            }
            fmt::print(stderr, "bspkit survey: {} maps, {} unreadable{}\n", maps.size(), errors,
                       a->out.empty() || a->out == "-" ? "" : ", wrote " + a->out);
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("survey", add_survey);

}  // namespace bspkit::cli
