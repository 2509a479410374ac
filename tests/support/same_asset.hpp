// Two glTF assets that must be the same (one thread against several, and so
// on): the JSON, the binary buffer and every primitive's surface ranges.
#pragma once

#include <bspkit/export.hpp>

#include <gtest/gtest.h>

#include <string>

namespace bspkit::test {

inline void expect_same_asset(const exporter::GltfAsset& a, const exporter::GltfAsset& b, const std::string& what) {
    EXPECT_EQ(a.json, b.json) << what;
    EXPECT_TRUE(a.bin == b.bin) << what;
    ASSERT_EQ(a.ranges.size(), b.ranges.size()) << what;
    for (size_t i = 0; i < a.ranges.size(); ++i) {
        EXPECT_EQ(a.ranges[i].mesh, b.ranges[i].mesh) << what << ", primitive " << i;
        EXPECT_EQ(a.ranges[i].primitive, b.ranges[i].primitive) << what << ", primitive " << i;
        EXPECT_EQ(a.ranges[i].face, b.ranges[i].face) << what << ", primitive " << i;
        EXPECT_EQ(a.ranges[i].first, b.ranges[i].first) << what << ", primitive " << i;
        EXPECT_EQ(a.ranges[i].count, b.ranges[i].count) << what << ", primitive " << i;
    }
}

}  // namespace bspkit::test
