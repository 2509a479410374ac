// Shared pieces of the command-line front end.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/zip.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bspkit::cli {

/// Exit codes: 0 ok, 1 bad input, 2 usage.
inline constexpr int kExitOk = 0, kExitBadInput = 1, kExitUsage = 2;

/// Thrown for usage mistakes found after parsing (unknown lump name, ...).
/// The message may quote what was typed (an option's value, a rays file's
/// line): its control bytes are kept as \xNN (zip::printable), so none
/// reaches the terminal and a NUL does not end what().
struct UsageError : std::runtime_error {
    explicit UsageError(const std::string& message) : std::runtime_error(zip::printable(message)) {}
};

/// Set by the global `-v/--verbose` flag (accepted before or after the verb):
/// list every repeated warning instead of one summary line per kind.
bool verbose() noexcept;

/// Opens a file and prints its reading warnings to stderr (see print_diagnostics).
Bsp open_reporting(const std::string& path);

/// For verbs that build geometry (export, lightmaps, textures): a lump that
/// runs past the end of the file is an Error naming it, unless the verb's
/// `--salvage` was given (then its warning is printed and the verb goes on
/// with the bytes present). The entity lump is exempt: its text is parsed,
/// and damage there is a syntax error.
Bsp open_for_geometry(const std::string& path);
/// The same rule for the lumps named (those the map's format has), for verbs
/// that read just those.
Bsp open_requiring(const std::string& path, std::initializer_list<std::string_view> lumps);
/// Adds `--salvage` to such a verb.
void add_salvage_flag(CLI::App* cmd);

/// Prints a diagnostic as "FILE: lump NAME at offset N: warning: MESSAGE".
void print_diagnostic(const std::string& file, const Diagnostic& d);
/// Prints diagnostics; unless verbose(), those with the same severity and
/// message on two or more lumps become one line naming the lumps.
void print_diagnostics(const std::string& file, const std::vector<Diagnostic>& diagnostics);

/// Diagnostics as --json lists them: [{lump, offset, message}] (info's file
/// warnings, export's build warnings).
nlohmann::json diagnostics_json(const std::vector<Diagnostic>& diagnostics);
/// `j` as JSON text (`indent` as nlohmann's dump(): -1 for one line). Strings
/// that are not UTF-8 (a file name in Latin-1, a texture or model name from
/// the map) would make dump() throw: every string and key then goes through
/// bytes_to_utf8 (bytes that are not UTF-8 as U+EF80..U+EFFF, as the entity
/// verbs write them), so the text is valid JSON and nothing is lost. A
/// number that is exactly a float (map data) is printed as float_text()
/// prints it ("1386.09", not 1386.0899658203125): the same float reads back.
std::string json_text(const nlohmann::json& j, int indent = 2);

/// Resolves LUMP (index or name) or throws UsageError listing the names.
size_t resolve_lump(const Bsp& bsp, const std::string& text);

/// A verb adds its subcommand to the app; when the subcommand is chosen its
/// callback stores the work to run in `action` (run after parsing, so errors
/// map to exit codes in one place).
using Action = std::function<int()>;
using AddVerb = void (*)(CLI::App& app, Action& action);

/// Verbs register themselves from their own file:
///   BSPKIT_REGISTER_VERB(add_info);
struct VerbRegistration {
    VerbRegistration(const char* name, AddVerb add);
};
const std::vector<std::pair<std::string, AddVerb>>& registered_verbs();
#define BSPKIT_REGISTER_VERB(name, fn) static const ::bspkit::cli::VerbRegistration bspkit_verb_##fn(name, &fn)

}  // namespace bspkit::cli
