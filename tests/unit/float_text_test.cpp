// is_float_text() (include/bspkit/float_text.hpp): a text it accepts must be
// the very text float_text() prints for the float it reads as, since callers
// copy such a text instead of formatting the value (trace --rays echoes the
// rays as typed).
#include <bspkit/float_text.hpp>

#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace {

using bspkit::float_text;
using bspkit::is_float_text;

/// float_text() of the float std::from_chars reads from `text`; "" when it reads none.
std::string printed(std::string_view text) {
    float v = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return {};
    char buf[32];
    return std::string(float_text(v, buf));
}

/// `digits` with a point before the last `decimals` of them (padded with
/// leading zeros), and a minus sign when `negative`.
std::string decimal(uint32_t digits, int decimals, bool negative) {
    std::string d = std::to_string(digits);
    if (decimals > 0) {
        if (int(d.size()) <= decimals) d.insert(0, size_t(decimals - int(d.size()) + 1), '0');
        d.insert(d.size() - size_t(decimals), 1, '.');
    }
    return negative ? "-" + d : d;
}

TEST(FloatText, AcceptedTextsAreWhatFloatTextPrints) {
    // Every 1-4 digit number, every point position, both signs; then random
    // numbers of up to 9 digits.
    size_t accepted = 0, checked = 0;
    auto check = [&](const std::string& text) {
        ++checked;
        if (!is_float_text(text)) return;
        ++accepted;
        ASSERT_EQ(printed(text), text) << "is_float_text accepted '" << text << "'";
    };
    for (uint32_t n = 0; n < 10000; ++n)
        for (int decimals = 0; decimals <= 9; ++decimals)
            for (const bool negative : {false, true}) check(decimal(n, decimals, negative));
    std::mt19937 rng(7);
    for (int i = 0; i < 400000; ++i) {
        const uint32_t digits = rng() % 9 + 1;
        uint32_t limit = 1;
        for (uint32_t k = 0; k < digits; ++k) limit *= 10;
        check(decimal(rng() % limit, int(rng() % 10), rng() & 1));
    }
    // Most of them are float_text()s; the test above must not pass by accepting nothing.
    EXPECT_GT(accepted, checked / 4) << accepted << " of " << checked;
}

TEST(FloatText, AcceptsTheUsualAndRefusesWhatToCharsWritesOtherwise) {
    for (const char* text : {"0", "-0", "1", "-1", "1386.09", "-741.71", "0.5", "1200", "64", "0.001", "99999", "12345.6",
                             "0.00123", "-0.1", "1.5"}) {
        EXPECT_TRUE(is_float_text(text)) << text;
        EXPECT_EQ(printed(text), text);
    }
    // Each reads as a float whose float_text() is another text.
    for (const char* text : {"100000",    // 1e+05: the scientific form is shorter
                             "0.0001",    // 1e-04
                             "1.50",      // trailing zero
                             "007",       // leading zeros
                             "+1",        // a sign to_chars does not write
                             "1e3",       // an exponent
                             ".5", "5.",  // no digit on one side of the point
                             "-0.0", "0.0"}) {
        EXPECT_FALSE(is_float_text(text)) << text;
        EXPECT_NE(printed(text), text) << text;
    }
    // Over 6 significant digits: the rule does not vouch for these, and some
    // are not float_text()s (16777217 reads as 16777216).
    for (const char* text : {"16777217", "0.3000001", "1234567", "0.1234567"}) EXPECT_FALSE(is_float_text(text)) << text;
    EXPECT_EQ(printed("16777217"), "16777216");
    for (const char* text : {"", "-", "abc", "1.2.3", "1,5", "nan", "inf", "- 1"}) EXPECT_FALSE(is_float_text(text)) << text;
}

TEST(FloatText, WholeNumbersAreWhatToCharsWrites) {
    // float_text() writes whole numbers under 10^5 by the integer conversion:
    // each of them, and each float beside one, as to_chars writes it.
    for (int32_t i = -100001; i <= 100001; ++i)
        for (const float v : {float(i), std::nextafter(float(i), 1e9f), std::nextafter(float(i), -1e9f)}) {
            char a[32], b[32];
            const auto r = std::to_chars(b, b + sizeof b, v);
            ASSERT_EQ(float_text(v, a), std::string_view(b, size_t(r.ptr - b))) << v;
        }
    char buf[32];
    EXPECT_EQ(float_text(-0.0f, buf), "-0");
    EXPECT_EQ(float_text(0.0f, buf), "0");
    EXPECT_EQ(float_text(1e5f, buf), "1e+05");
    EXPECT_EQ(float_text(-99999.0f, buf), "-99999");
}

}  // namespace
