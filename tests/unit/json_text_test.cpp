// The glTF writer's streamed JSON (src/export/json_text.hpp) gives the bytes
// nlohmann's dump() gives for the same document, so the node list it writes
// fits into the rest of the document and the file is what it was.
#include "export/json_text.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace {

using bspkit::exporter::detail::JsonText;
using json = nlohmann::ordered_json;

TEST(JsonText, WritesTheBytesNlohmannDumps) {
    const std::vector<std::string> strings = {
        "", "plain", "with \"quotes\"", "back\\slash", "models\\props\\crate.mdl", "tab\there", "new\nline",
        std::string("nul\0byte", 8), "\x01\x1f control", "del \x7f", "caf\xc3\xa9", "\xe2\x82\xac euro", "/slash/"};
    const std::vector<double> doubles = {0.0,
                                         -0.0,
                                         1.0,
                                         -1.5,
                                         0.1,
                                         1e-7,
                                         123456789012345680.0,
                                         1e300,
                                         -2.5e-300,
                                         0.7071067811865476,
                                         double(3.4028235e38f),
                                         std::numeric_limits<double>::denorm_min(),
                                         std::numeric_limits<double>::quiet_NaN(),
                                         std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity()};
    json expected = json::array();
    std::string text;
    JsonText out(text);
    out.open_array();
    for (const std::string& s : strings) {
        expected.push_back({{"s", s}, {"pair", json::array({s, s})}});
        out.open_object().key("s").value(s).key("pair").open_array().value(s).value(s).close_array().close_object();
    }
    expected.push_back(doubles);
    out.open_array();
    for (const double d : doubles) out.value(d);
    out.close_array();
    const int32_t i32 = std::numeric_limits<int32_t>::min();
    const uint64_t u64 = std::numeric_limits<uint64_t>::max();
    const int64_t i64 = std::numeric_limits<int64_t>::min();
    const size_t zero = 0;
    expected.push_back({{"i32", i32}, {"u64", u64}, {"i64", i64}, {"zero", zero}, {"empty", json::array()},
                        {"object", json::object()}, {"small", json::array({1, 2})}});
    out.open_object().key("i32").value(i32).key("u64").value(u64).key("i64").value(i64).key("zero").value(zero);
    out.key("empty").open_array().close_array().key("object").open_object().close_object();
    out.key("small").value(json::array({1, 2})).close_object();
    out.close_array();
    EXPECT_EQ(text, expected.dump());
}

TEST(JsonText, InvalidUtf8ThrowsAsDumpDoes) {
    std::string text;
    JsonText out(text);
    out.open_array();
    EXPECT_THROW(out.value(std::string("bad \xff byte")), nlohmann::json::type_error);
    EXPECT_THROW(json(std::string("bad \xff byte")).dump(), nlohmann::json::type_error);
}

}  // namespace
