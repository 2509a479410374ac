// bspkit check FILE [--json]: validates every cross-reference of a map.
// Exit 0 when no errors were found (warnings allowed), 1 otherwise.
#include "common.hpp"

#include <bspkit/check.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace bspkit::cli {
namespace {

const char* severity_name(Severity s) {
    return s == Severity::error ? "error" : s == Severity::info ? "info" : "warning";
}

nlohmann::json check_json(const Bsp& bsp, const CheckReport& report) {
    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    j["errors"] = report.errors();
    j["warnings"] = report.warnings();
    j["infos"] = report.infos();
    auto& findings = j["findings"] = nlohmann::json::array();
    for (const Finding& f : report.findings)
        findings.push_back({{"severity", severity_name(f.severity)},
                            {"lump", f.lump},
                            {"record", f.record < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.record)},
                            {"field", f.field},
                            {"message", f.message},
                            {"offset", f.offset < 0 ? nlohmann::json(nullptr) : nlohmann::json(f.offset)}});
    return j;
}

std::string location(const std::string& file, const Finding& f) {
    std::string where = file + ":";
    if (!f.lump.empty()) where += " lump " + f.lump;
    if (f.record >= 0) where += " record " + std::to_string(f.record);
    if (!f.field.empty()) where += " field " + f.field;
    if (f.offset >= 0) where += " at offset " + std::to_string(f.offset);
    return where;
}

void print_text(const std::string& file, const Bsp& bsp, const CheckReport& report) {
    // Lump-wide findings with the same words on several lumps (14 lumps "not
    // 4-byte aligned") fold into one line unless --verbose.
    const auto& findings = report.findings;
    const auto groups = fold_repeats(findings.size(), [&](size_t i) {
        const Finding& f = findings[i];
        if (f.lump.empty() || f.record >= 0 || !f.field.empty()) return std::string();
        return std::to_string(int(f.severity)) + f.message;
    });
    for (const auto& group : groups) {
        const Finding& f = findings[group.front()];
        if (group.size() == 1) {
            fmt::print("{}: {}: {}\n", location(file, f), severity_name(f.severity), f.message);
            continue;
        }
        std::string lumps;
        for (size_t i : group) lumps += (lumps.empty() ? "" : ", ") + findings[i].lump;
        fmt::print("{}: {}: {} lumps: {}: {} (--verbose lists each)\n", file, severity_name(f.severity), group.size(),
                   f.message, lumps);
    }
    fmt::print("{}: {} ({}): {} error{}, {} warning{}\n", file, format_id(bsp.format()),
               bsp.version() ? "version " + std::to_string(*bsp.version()) : std::string(bsp.layout().variant),
               report.errors(), report.errors() == 1 ? "" : "s", report.warnings(),
               report.warnings() == 1 ? "" : "s");
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
                fmt::print("{}\n", check_json(bsp, report).dump(2));
            else
                print_text(*file, bsp, report);
            return report.ok() ? kExitOk : kExitBadInput;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("check", add_check);

}  // namespace bspkit::cli
