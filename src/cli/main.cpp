// bspkit — one tool for the BSP files of the Quake / Half-Life / Source family.
#include "common.hpp"

#include <bspkit/version.hpp>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <fmt/core.h>

namespace bspkit::cli {

Bsp open_reporting(const std::string& path) {
    Bsp bsp = Bsp::open(path);
    for (const Diagnostic& d : bsp.diagnostics()) print_diagnostic(path, d);
    return bsp;
}

void print_diagnostic(const std::string& file, const Diagnostic& d) {
    const char* severity = d.severity == Severity::error ? "error: " : "warning: ";
    fmt::print(stderr, "{}\n", format_location_message({file, d.lump, d.offset}, severity + d.message));
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
    } catch (const UsageError& e) {
        fmt::print(stderr, "bspkit: {}\n", e.what());
        return kExitUsage;
    } catch (const bspkit::Error& e) {
        fmt::print(stderr, "{}\n", e.what());
        return kExitBadInput;
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "bspkit: out of memory\n");
        return kExitBadInput;
    }
}
