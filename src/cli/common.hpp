// Shared pieces of the command-line front end.
#pragma once

#include <bspkit/bsp.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace bspkit::cli {

/// Exit codes: 0 ok, 1 bad input, 2 usage.
inline constexpr int kExitOk = 0, kExitBadInput = 1, kExitUsage = 2;

/// Thrown for usage mistakes found after parsing (unknown lump name, ...).
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// Opens a file and prints its reading warnings to stderr.
Bsp open_reporting(const std::string& path);

/// Prints a diagnostic as "FILE: lump NAME at offset N: warning: MESSAGE".
void print_diagnostic(const std::string& file, const Diagnostic& d);

/// Resolves LUMP (index or name) or throws UsageError listing the names.
size_t resolve_lump(const Bsp& bsp, const std::string& text);

/// Each verb registers its subcommand and returns the action to run.
using Action = std::function<int()>;
void add_info(CLI::App& app, Action& action);
void add_lump(CLI::App& app, Action& action);
void add_repack(CLI::App& app, Action& action);

}  // namespace bspkit::cli
