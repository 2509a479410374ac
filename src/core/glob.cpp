#include <bspkit/glob.hpp>

namespace bspkit {
namespace {
char fold(char c, bool ignore_case) noexcept {
    return (ignore_case && c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
}
}  // namespace

bool glob_match(std::string_view pattern, std::string_view text, bool ignore_case) noexcept {
    // Classic two-pointer matcher: on a mismatch, retry from the last '*'
    // with one more character swallowed by it.
    size_t p = 0, t = 0;
    size_t star = std::string_view::npos, star_text = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_text = t;
        } else if (p < pattern.size() && (pattern[p] == '?' || fold(pattern[p], ignore_case) == fold(text[t], ignore_case))) {
            ++p;
            ++t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

}  // namespace bspkit
