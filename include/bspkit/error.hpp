// Errors and diagnostics: every message names the file, the lump and the byte offset.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace bspkit {

/// Where in a file something was found: file name, lump name ("header" for the
/// file header) and absolute byte offset (-1 when no offset applies).
struct Location {
    std::string file;
    std::string lump;
    int64_t offset = -1;
};

/// "FILE: lump NAME at offset N: DETAIL" — the one-line form used everywhere.
std::string format_location_message(const Location& where, std::string_view detail);

/// Thrown by the parsing layers for bad input; the CLI turns it into exit 1.
class Error : public std::runtime_error {
public:
    Error(Location where, std::string detail);
    const Location& where() const noexcept { return where_; }
    const std::string& detail() const noexcept { return detail_; }

private:
    Location where_;
    std::string detail_;
};

enum class Severity { warning, error, info };  ///< info: a fact worth knowing, not a defect

/// A finding about a file that does not stop it from being read.
struct Diagnostic {
    Severity severity = Severity::warning;
    std::string lump;
    int64_t offset = -1;
    std::string message;
    /// The lump runs past the end of the file (a truncated copy): read with
    /// the bytes present. `check` makes this an error (entity lump excepted).
    bool cut_short = false;
};

/// Value-or-error, for API boundaries that must not throw (bindings, CLI helpers).
template <class T>
class Result {
public:
    Result(T value) : state_(std::move(value)) {}
    Result(Error error) : state_(std::move(error)) {}
    bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }
    T& value() & { return std::get<0>(state_); }
    T&& value() && { return std::get<0>(std::move(state_)); }
    const Error& error() const { return std::get<1>(state_); }

private:
    std::variant<T, Error> state_;
};

/// Runs `fn`, turning a thrown bspkit::Error into a Result.
template <class Fn>
auto capture(Fn&& fn) -> Result<decltype(fn())> {
    try {
        return fn();
    } catch (const Error& e) {
        return e;
    }
}

}  // namespace bspkit
