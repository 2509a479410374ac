// bspkit — one tool for the BSP files of the Quake / Half-Life / Source family.
#include "common.hpp"

#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/float_text.hpp>
#include <bspkit/fold.hpp>
#include <bspkit/version.hpp>
#include <bspkit/zip.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace bspkit::cli {

namespace {
bool g_verbose = false;
bool g_salvage = false;
}  // namespace

bool verbose() noexcept { return g_verbose; }

Bsp open_reporting(const std::string& path) {
    Bsp bsp = Bsp::open(path);
    print_diagnostics(path, bsp.diagnostics());
    return bsp;
}

Bsp open_for_geometry(const std::string& path) {
    Bsp bsp = Bsp::open(path);
    if (!g_salvage) require_complete_lumps(bsp);
    print_diagnostics(path, bsp.diagnostics());
    return bsp;
}

Bsp open_requiring(const std::string& path, std::initializer_list<std::string_view> lumps) {
    Bsp bsp = Bsp::open(path);
    for (const std::string_view lump : lumps)
        if (const auto index = bsp.find_lump(lump); index && !g_salvage) require_complete_lump(bsp, *index);
    print_diagnostics(path, bsp.diagnostics());
    return bsp;
}

void add_salvage_flag(CLI::App* cmd) {
    cmd->add_flag("--salvage", g_salvage,
                  "Go on when a lump runs past the end of the file (truncated download), with the bytes present");
}

// Messages may quote the map's own bytes (names, entity text): control bytes
// go out as \xNN (zip::printable), never to the terminal as they are.
void print_diagnostic(const std::string& file, const Diagnostic& d) {
    fmt::print(stderr, "{}\n",
               zip::printable(format_location_message({file, d.lump, d.offset},
                                                      std::string(severity_word(d.severity)) + ": " + d.message)));
}

void print_diagnostics(const std::string& file, const std::vector<Diagnostic>& diagnostics) {
    const auto groups = fold_repeats(diagnostics.size(), [&](size_t i) {
        const Diagnostic& d = diagnostics[i];
        return d.lump.empty() || g_verbose ? std::string() : std::to_string(int(d.severity)) + d.message;
    });
    // A damaged map can give a warning per face: past kLinesPerLump lines of
    // one severity on one lump, the rest are counted on one line at the end.
    constexpr size_t kLinesPerLump = 10;
    std::map<std::pair<Severity, std::string>, size_t> lines, held;
    for (const auto& group : groups) {
        const Diagnostic& d = diagnostics[group.front()];
        if (!g_verbose && !d.lump.empty() && lines[{d.severity, d.lump}]++ >= kLinesPerLump) {
            held[{d.severity, d.lump}] += group.size();
            continue;
        }
        if (group.size() == 1) {
            print_diagnostic(file, d);
            continue;
        }
        std::string lumps;
        for (size_t i : group) lumps += (lumps.empty() ? "" : ", ") + diagnostics[i].lump;
        fmt::print(stderr, "{}: {}: {} lumps: {}: {} (--verbose lists each)\n", file, severity_word(d.severity),
                   group.size(), zip::printable(d.message), lumps);
    }
    for (const auto& [key, count] : held) {
        const auto& [severity, lump] = key;
        fmt::print(stderr, "{}\n",
                   format_location_message({file, lump, -1}, fmt::format("{}: {} more like the ones above (--verbose "
                                                                         "lists each)", severity_word(severity), count)));
    }
}

namespace {

nlohmann::json utf8_everywhere(const nlohmann::json& j) {
    if (j.is_string()) return bytes_to_utf8(j.get_ref<const std::string&>());
    if (j.is_array()) {
        nlohmann::json out = nlohmann::json::array();
        for (const nlohmann::json& v : j) out.push_back(utf8_everywhere(v));
        return out;
    }
    if (j.is_object()) {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [key, value] : j.items()) out[bytes_to_utf8(key)] = utf8_everywhere(value);
        return out;
    }
    return j;
}

/// For a JSON number that is exactly a float (map data is floats; the json
/// value holds it as a double) whose float_text() is shorter than the
/// double's own shortest text: the double that prints as float_text().
std::optional<double> shortened_float(const nlohmann::json& j) {
    if (!j.is_number_float()) return std::nullopt;
    const double d = j.get<double>();
    if (!(std::fabs(d) <= double(std::numeric_limits<float>::max()))) return std::nullopt;
    const float f = float(d);
    if (double(f) != d) return std::nullopt;
    const double shorter = float_as_json(f);
    if (shorter == d) return std::nullopt;
    return shorter;
}

bool has_float_to_shorten(const nlohmann::json& j) {
    if (j.is_structured()) return std::any_of(j.begin(), j.end(), has_float_to_shorten);
    return shortened_float(j).has_value();
}

void shorten_floats(nlohmann::json& j) {
    if (j.is_structured()) {
        for (auto& child : j) shorten_floats(child);
    } else if (const auto shorter = shortened_float(j)) {
        j = *shorter;
    }
}

std::string dump_text(const nlohmann::json& j, int indent) {
    try {
        return j.dump(indent);
    } catch (const nlohmann::json::type_error&) {  // 316: a string that is not UTF-8
        return utf8_everywhere(j).dump(indent);
    }
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
    if (!has_float_to_shorten(j)) return dump_text(j, indent);
    nlohmann::json shortened = j;
    shorten_floats(shortened);
    return dump_text(shortened, indent);
}

nlohmann::json diagnostics_json(const std::vector<Diagnostic>& diagnostics) {
    nlohmann::json out = nlohmann::json::array();
    for (const Diagnostic& d : diagnostics) out.push_back({{"lump", d.lump}, {"offset", d.offset}, {"message", d.message}});
    return out;
}

size_t resolve_lump(const Bsp& bsp, const std::string& text) {
    if (auto index = bsp.find_lump(text)) return *index;
    std::string names;
    for (size_t i = 0; i < bsp.lump_count(); ++i) names += (i ? ", " : "") + std::string(bsp.lump_name(i));
    throw UsageError(fmt::format("unknown lump '{}' for {}: use 0-{} or one of: {}", text,
                                 format_id(bsp.format()), bsp.lump_count() - 1, names));
}

namespace {
std::vector<std::pair<std::string, AddVerb>>& verbs() {
    static std::vector<std::pair<std::string, AddVerb>> list;
    return list;
}
}  // namespace

VerbRegistration::VerbRegistration(const char* name, AddVerb add) { verbs().emplace_back(name, add); }

const std::vector<std::pair<std::string, AddVerb>>& registered_verbs() {
    auto& list = verbs();
    std::sort(list.begin(), list.end());
    return list;
}

}  // namespace bspkit::cli

int main(int argc, char** argv) {
    using namespace bspkit::cli;
    // Start-up: `--version` needs no parser at all, and a verb needs only its
    // own subcommand built (the others are added for top-level help and for
    // words that name no verb, so that CLI11 words the error).
    if (argc == 2 && std::string_view(argv[1]) == "--version") {
        std::fwrite(bspkit::kVersion.data(), 1, bspkit::kVersion.size(), stdout);
        std::fputc('\n', stdout);
        return kExitOk;
    }
    const auto& verbs = registered_verbs();
    const auto chosen = argc >= 2 ? std::find_if(verbs.begin(), verbs.end(), [&](const auto& v) { return v.first == argv[1]; })
                                  : verbs.end();
    CLI::App app{"bspkit: read, check, edit and write BSP maps of the Quake / Half-Life / Source family"};
    app.set_version_flag("--version", std::string(bspkit::kVersion));
    app.require_subcommand(1);
    app.add_flag("-v,--verbose", g_verbose,
                 "List every repeated warning (default: one summary line per kind); also accepted after the verb");
    app.fallthrough();  // subcommands (created below) pass unknown options such as --verbose up to here
    Action action;
    if (chosen != verbs.end()) {
        chosen->second(app, action);
    } else {
        for (const auto& [name, add] : verbs) add(app, action);
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return kExitUsage;
    }
    try {
        return action ? action() : kExitUsage;
    } catch (const UsageError& e) {  // printable already (UsageError's constructor)
        fmt::print(stderr, "bspkit: {}\n", e.what());
        return kExitUsage;
    } catch (const bspkit::Error& e) {
        fmt::print(stderr, "{}\n", bspkit::zip::printable(e.what()));
        return kExitBadInput;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "bspkit: out of memory\n");
        return kExitBadInput;
    } catch (const std::exception& e) {  // none is expected here: a line and exit 1, not an abort
        fmt::print(stderr, "bspkit: {}\n", bspkit::zip::printable(e.what()));
        return kExitBadInput;
    }
}
