// Shell-style wildcard matching for command-line filters: '*' matches any run
// of characters (slashes included), '?' any single character; everything
// else matches itself. No character classes, no escapes.
#pragma once

#include <string_view>

namespace bspkit {

/// True when `text` matches `pattern`. Runs in O(|pattern| * |text|) at worst
/// (no exponential backtracking). ASCII case folding when `ignore_case`.
bool glob_match(std::string_view pattern, std::string_view text, bool ignore_case = false) noexcept;

}  // namespace bspkit
