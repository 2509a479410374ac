// Map data is 32-bit floats; JSON readers parse numbers as doubles. These
// print a float as the shortest text that reads back as the same float
// ("1386.09", as a user typed it), not the float's exact value as a double
// ("1386.0899658203125"), and read back through a double too.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace bspkit {

/// The shortest decimal text that reads back as `v` (std::to_chars), in
/// `buf`; "-0" for a negative zero. Finite values only (JSON has no NaN).
///
/// A JSON reader parses the text as a double, and a float is then that double
/// rounded. Of every finite float, only +-7.038531e-26 have a shortest text
/// that this double rounding turns into a neighbouring float (all 2^32 bit
/// patterns tried): they are written as their exact values.
///
/// A whole number under 10^5 in magnitude (a plane's normal, often its
/// distance) is written by the integer conversion: to_chars writes it as its
/// digits too (the fixed form is no longer than "1e+04"), in a quarter of the
/// time (11 against 45 ns a number, a probe of a million).
inline std::string_view float_text(float v, char (&buf)[32]) noexcept {
    if (std::fabs(v) < 1e5f && v == float(int32_t(v))) {
        if (v == 0 && std::signbit(v)) return "-0";
        return {buf, size_t(std::to_chars(buf, buf + sizeof buf, int32_t(v)).ptr - buf)};
    }
    const auto r = std::fabs(v) == 7.038531e-26f ? std::to_chars(buf, buf + sizeof buf, double(v))
                                                 : std::to_chars(buf, buf + sizeof buf, v);
    return {buf, size_t(r.ptr - buf)};
}

/// True only when `text` is exactly what float_text() prints for the float
/// that std::from_chars reads from it: a test of the text alone, no
/// conversion. It accepts plain decimals as to_chars writes them ("-0",
/// "1386.09", "0.5", "1200"; no sign '+', no leading or trailing zeros, no
/// exponent) of at most 6 significant digits, below 10^7 and not under
/// 10^-8, where the fixed form is no longer than the scientific one (to_chars
/// picks the shorter, fixed on a tie: "100000" prints as "1e+05"). Such a
/// decimal is a normal float's shortest text: any two decimals of 6 or fewer
/// digits read as different floats (FLT_DIG). False for other texts, some of
/// which are float_text()s too: callers then format the value.
inline bool is_float_text(std::string_view text) noexcept {
    const auto digit = [](char c) { return c >= '0' && c <= '9'; };
    const size_t sign = !text.empty() && text[0] == '-';
    size_t i = sign;
    while (i < text.size() && digit(text[i])) ++i;
    const size_t int_digits = i - sign;
    if (int_digits == 0 || int_digits > 7 || (text[sign] == '0' && int_digits > 1)) return false;
    size_t frac_digits = 0;
    if (i < text.size()) {
        if (text[i] != '.') return false;
        for (++i; i < text.size() && digit(text[i]); ++i) ++frac_digits;
        if (i != text.size() || frac_digits == 0 || frac_digits > 8 || text.back() == '0') return false;
    }
    // The significant digits: from the first non-zero digit to the last one.
    size_t first = SIZE_MAX, last = 0, position = 0;  // position: among the digits, the point left out
    for (size_t k = sign; k < text.size(); ++k) {
        if (text[k] == '.') continue;
        if (text[k] != '0') {
            if (first == SIZE_MAX) first = position;
            last = position;
        }
        ++position;
    }
    if (first == SIZE_MAX) return text.size() == sign + 1;  // "0" or "-0"
    const size_t significant = last - first + 1;
    if (significant > 6) return false;
    // Scientific form: the digits ("d" or "d.ddd"), then "e+XX" (two exponent
    // digits: the value lies between 10^-8 and 10^7).
    const size_t scientific = sign + (significant == 1 ? 1 : significant + 1) + 4;
    return text.size() <= scientific;
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
