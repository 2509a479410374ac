// bspkit check FILE [--json]: validates every cross-reference of a map.
// Exit 0 when no errors were found (warnings allowed), 1 otherwise.
#include "common.hpp"

#include <bspkit/check.hpp>
#include <bspkit/zip.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace bspkit::cli {
namespace {

nlohmann::json check_json(const Bsp& bsp, const CheckReport& report) {
    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    j["errors"] = report.errors();
    j["warnings"] = report.warnings();
    j["infos"] = report.infos();
    auto& findings = j["findings"] = nlohmann::json::array();
    for (const Finding& f : report.findings)
        findings.push_back({{"severity", severity_word(f.severity)},
                            {"lump", f.lump},
                            {"record", f.record < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.record)},
                            {"field", f.field},
                            {"message", f.message},
                            {"offset", f.offset < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.offset)}});
    return j;
}

void print_text(const std::string& file, const Bsp& bsp, const CheckReport& report) {
    // Findings quote the map's own text (entity values, names): its control bytes as \xNN, not to the terminal.
    for (const std::string& line : check_text(file, bsp, report, verbose()).lines)
        fmt::print("{}\n", zip::printable(line));
}

void add_check(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "check", "Validate every cross-reference of a map (errors: broken references; warnings: engine limits)");
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_flag("--json", *json, "Print machine-readable JSON");
    cmd->footer("Exit status: 0 no errors (warnings allowed), 1 errors found or unreadable file, 2 usage.");
    cmd->callback([&action, file, json] {
        action = [file, json] {
            // Reading warnings become findings; they are not printed twice.
            const Bsp bsp = Bsp::open(*file);
            const CheckReport report = check(bsp);
            if (*json)
                fmt::print("{}\n", json_text(check_json(bsp, report)));
            else
                print_text(*file, bsp, report);
            return report.ok() ? kExitOk : kExitBadInput;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("check", add_check);

}  // namespace bspkit::cli
