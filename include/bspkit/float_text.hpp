// Map data is 32-bit floats; JSON readers parse numbers as doubles. These
// print a float as the shortest text that reads back as the same float
// ("1386.09", as a user typed it), not the float's exact value as a double
// ("1386.0899658203125"), and read back through a double too.
#pragma once

#include <charconv>
#include <cmath>
#include <string_view>

namespace bspkit {

/// The shortest decimal text that reads back as `v` (std::to_chars), in
/// `buf`; "-0" for a negative zero. Finite values only (JSON has no NaN).
///
/// A JSON reader parses the text as a double, and a float is then that double
/// rounded. Of every finite float, only +-7.038531e-26 have a shortest text
/// that this double rounding turns into a neighbouring float (all 2^32 bit
/// patterns tried): they are written as their exact values.
inline std::string_view float_text(float v, char (&buf)[32]) noexcept {
    const auto r = std::fabs(v) == 7.038531e-26f ? std::to_chars(buf, buf + sizeof buf, double(v))
                                                 : std::to_chars(buf, buf + sizeof buf, v);
    return {buf, size_t(r.ptr - buf)};
}

/// The double a reader of float_text(v) gets: a JSON library printing it as
/// the shortest text that reads back as the same double prints float_text(v).
/// NaN and infinities are returned as they are.
inline double float_as_json(float v) noexcept {
    if (!std::isfinite(v)) return double(v);
    char buf[32];
    const std::string_view text = float_text(v, buf);
    double d = 0;
    std::from_chars(text.data(), text.data() + text.size(), d);
    return d;
}

}  // namespace bspkit
