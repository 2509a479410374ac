// ASCII case folding for names in maps and archives (texture names, file
// extensions, shader keys). Bytes >= 0x80 are kept as they are, and the
// C locale is never consulted (std::tolower depends on it).
#pragma once

#include <string>
#include <string_view>

namespace bspkit {

constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

/// `s` with A-Z turned into a-z.
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = ascii_lower(c);
    return out;
}

/// Equal ignoring ASCII case.
constexpr bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

}  // namespace bspkit
