// The text of `bspkit check` (check_text, bspkit/check.hpp) and the folding
// of repeated messages (fold_repeats, bspkit/fold.hpp): shared by the command
// line and the WebAssembly viewer, so both print the same lines.
#include <bspkit/check.hpp>
#include <bspkit/fold.hpp>
#include <bspkit/format.hpp>

#include <map>

namespace bspkit {
namespace {

std::string location(const std::string& file, const Finding& f) {
    std::string where = file + ":";
    if (!f.lump.empty()) where += " lump " + f.lump;
    if (f.record >= 0) where += " record " + std::to_string(f.record);
    if (!f.field.empty()) where += " field " + f.field;
    if (f.offset >= 0) where += " at offset " + std::to_string(f.offset);
    return where;
}

}  // namespace

std::vector<std::vector<size_t>> fold_repeats(size_t count, const std::function<std::string(size_t)>& key) {
    std::vector<std::vector<size_t>> groups;
    std::map<std::string, size_t> group_of;
    for (size_t i = 0; i < count; ++i) {
        const std::string k = key(i);
        if (k.empty()) {
            groups.push_back({i});
            continue;
        }
        const auto [it, fresh] = group_of.try_emplace(k, groups.size());
        if (fresh) groups.emplace_back();
        groups[it->second].push_back(i);
    }
    return groups;
}

const char* severity_word(Severity s) noexcept {
    return s == Severity::error ? "error" : s == Severity::info ? "info" : "warning";
}

CheckText check_text(const std::string& file, const Bsp& bsp, const CheckReport& report, bool verbose) {
    // Lump-wide findings with the same words on several lumps (14 lumps "not
    // 4-byte aligned") fold into one line unless verbose.
    const auto& findings = report.findings;
    const auto groups = fold_repeats(findings.size(), [&](size_t i) {
        const Finding& f = findings[i];
        const bool foldable = !verbose && !f.lump.empty() && f.record < 0 && f.field.empty();
        return foldable ? std::to_string(int(f.severity)) + f.message : std::string();
    });
    CheckText text;
    text.line_of_finding.resize(findings.size());
    for (const auto& group : groups) {
        const Finding& f = findings[group.front()];
        for (size_t i : group) text.line_of_finding[i] = text.lines.size();
        if (group.size() == 1) {
            text.lines.push_back(location(file, f) + ": " + severity_word(f.severity) + ": " + f.message);
            continue;
        }
        std::string lumps;
        for (size_t i : group) lumps += (lumps.empty() ? "" : ", ") + findings[i].lump;
        text.lines.push_back(file + ": " + severity_word(f.severity) + ": " + std::to_string(group.size()) +
                             " lumps: " + f.message + ": " + lumps + " (--verbose lists each)");
    }
    const size_t errors = report.errors(), warnings = report.warnings();
    text.lines.push_back(file + ": " + std::string(format_id(bsp.format())) + " (" +
                         (bsp.version() ? "version " + std::to_string(*bsp.version()) : std::string(bsp.layout().variant)) +
                         "): " + std::to_string(errors) + " error" + (errors == 1 ? "" : "s") + ", " +
                         std::to_string(warnings) + " warning" + (warnings == 1 ? "" : "s"));
    return text;
}

}  // namespace bspkit
