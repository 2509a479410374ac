#include <bspkit/check.hpp>

#include <algorithm>

namespace bspkit {

size_t CheckReport::errors() const noexcept {
    return size_t(std::count_if(findings.begin(), findings.end(),
                                [](const Finding& f) { return f.severity == Severity::error; }));
}
size_t CheckReport::warnings() const noexcept {
    return size_t(std::count_if(findings.begin(), findings.end(),
                                [](const Finding& f) { return f.severity == Severity::warning; }));
}
size_t CheckReport::infos() const noexcept { return findings.size() - errors() - warnings(); }

void CheckReport::error(std::string lump, int64_t record, std::string field, std::string message) {
    findings.push_back({Severity::error, std::move(lump), record, std::move(field), std::move(message)});
}
void CheckReport::info(std::string lump, int64_t record, std::string field, std::string message) {
    findings.push_back({Severity::info, std::move(lump), record, std::move(field), std::move(message)});
}
void CheckReport::warning(std::string lump, int64_t record, std::string field, std::string message) {
    findings.push_back({Severity::warning, std::move(lump), record, std::move(field), std::move(message)});
}

CheckReport check(const Bsp& bsp) {
    CheckReport report;
    for (const Diagnostic& d : bsp.diagnostics())
        report.findings.push_back({d.severity, d.lump, -1, "", d.message, d.offset});
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: quake1::check(bsp, report); break;
        case Format::quake2: quake2::check(bsp, report); break;
        case Format::quake3: quake3::check(bsp, report); break;
        case Format::nightfire: nightfire::check(bsp, report); break;
        case Format::source: source::check(bsp, report); break;
    }
    check_entities(bsp, report);
    return report;
}

}  // namespace bspkit
