// checks::Checker: the cap on repeated findings, and absorb(), which takes in
// the findings of steps run on another thread as if they had run after the
// others on this one (src/formats/quake1/check.cpp runs two groups of steps so).
#include "formats/common/check_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace bspkit::checks {
namespace {

// Findings of two groups of steps: some kinds only one group makes, one kind both make,
// each past the cap (4 per kind here) or not.
void first_group(Checker& c) {
    for (int i = 0; i < 6; ++i) c.error("faces", i, "texinfo", "first " + std::to_string(i));
    for (int i = 0; i < 3; ++i) c.error("leafs", i, "visofs", "first " + std::to_string(i));
    c.warning("planes", 0, "type", "a warning");
}
void second_group(Checker& c) {
    for (int i = 0; i < 3; ++i) c.error("leafs", 10 + i, "visofs", "second " + std::to_string(i));
    for (int i = 0; i < 9; ++i) c.error("nodes", i, "children", "second " + std::to_string(i));
    c.info("bspx:BRUSHLIST", -1, "", "an info");
}

std::string text(const CheckReport& r) {
    std::string out;
    for (const Finding& f : r.findings)
        out += std::string(severity_word(f.severity)) + " " + f.lump + " " + std::to_string(f.record) + " " + f.field +
               " " + f.message + " " + std::to_string(f.offset) + "\n";
    return out;
}

TEST(Checker, AbsorbGivesTheOneThreadReport) {
    CheckReport one_thread;
    {
        Checker c(one_thread, 4);
        first_group(c);
        second_group(c);
    }
    CheckReport two_groups;
    {
        Checker c(two_groups, 4);
        CheckReport side;
        Checker other(side, 4);
        second_group(other);  // before the first group runs: absorb alone fixes the order
        first_group(c);
        c.absorb(other);
    }
    EXPECT_EQ(text(two_groups), text(one_thread));
    // The cap held: 4 of the 6 faces, 4 of the 6 leafs (3 first, 1 second), 4 of the 9 nodes,
    // then one "more findings" line per capped kind.
    EXPECT_NE(text(one_thread).find("leafs 10 visofs second 0"), std::string::npos);
    EXPECT_EQ(text(one_thread).find("leafs 11 visofs second 1"), std::string::npos);
    EXPECT_NE(text(one_thread).find("error nodes -1 children 5 more findings like the ones above were not listed"),
              std::string::npos)
        << text(one_thread);
    EXPECT_NE(text(one_thread).find("error leafs -1 visofs 2 more findings"), std::string::npos);
}

// Past the cap the range / index / finite tests count a finding without
// composing it; kinds that interleave, and counts absorbed from another
// checker, all land on their own "more findings" line.
TEST(Checker, CapCountsInterleavedKindsAndAbsorbedOnes) {
    CheckReport r;
    {
        Checker c(r, 2);
        const float nan = std::numeric_limits<float>::quiet_NaN();
        for (int i = 0; i < 10; ++i) {
            EXPECT_FALSE(c.index("faces", i, "texinfo", -5, 3, "texinfo"));
            EXPECT_FALSE(c.range("leafs", i, "firstmarksurface", 10, "nummarksurfaces", 5, 12, "marksurfaces"));
            EXPECT_FALSE(c.range("leafs", i, "firstmarksurface", -1, "nummarksurfaces", 5, 12, "marksurfaces"));
            EXPECT_FALSE(c.finite("planes", i, "dist", nan));
        }
        CheckReport side;
        Checker other(side, 2);
        for (int i = 0; i < 5; ++i) other.index("faces", 100 + i, "texinfo", 7, 3, "texinfo");
        c.absorb(other);
        EXPECT_FALSE(c.index("faces", 200, "texinfo", 9, 3, "texinfo"));
    }
    const std::string t = text(r);
    EXPECT_NE(t.find("error faces 0 texinfo texinfo -5 is out of range: texinfo has 3 records"), std::string::npos) << t;
    EXPECT_EQ(t.find("faces 2 texinfo"), std::string::npos) << t;
    // 10 - 2 here, 5 there (2 listed there, past the cap here), 1 after.
    EXPECT_NE(t.find("error faces -1 texinfo 14 more findings"), std::string::npos) << t;
    EXPECT_NE(t.find("error leafs 0 nummarksurfaces firstmarksurface 10 + nummarksurfaces 5 = 15 runs past the 12 records"),
              std::string::npos) << t;
    EXPECT_NE(t.find("error leafs -1 nummarksurfaces 8 more findings"), std::string::npos) << t;
    EXPECT_NE(t.find("error leafs 0 firstmarksurface firstmarksurface -1 is negative"), std::string::npos) << t;
    EXPECT_NE(t.find("error leafs -1 firstmarksurface 8 more findings"), std::string::npos) << t;
    EXPECT_NE(t.find("error planes -1 dist 8 more findings"), std::string::npos) << t;
    EXPECT_EQ(r.findings.size(), 4u * 2 + 4) << t;
}

TEST(Checker, FiniteReportsOnceARecordHoldsANonFiniteValue) {
    CheckReport r;
    {
        Checker c(r);
        const float good[3] = {1, 2, 3}, bad[3] = {1, std::numeric_limits<float>::quiet_NaN(), 3};
        EXPECT_TRUE(c.finite("vertexes", 0, "point", good));
        EXPECT_FALSE(c.finite("vertexes", 1, "point", bad));
        EXPECT_FALSE(c.finite("planes", 2, "dist", std::numeric_limits<float>::infinity()));
    }
    ASSERT_EQ(r.findings.size(), 2u);
    EXPECT_EQ(r.findings[0].record, 1);
    EXPECT_EQ(r.findings[0].message, "point holds a non-finite value");
    EXPECT_EQ(r.findings[1].lump, "planes");
}

}  // namespace
TEST(Checker, UnitNormalAcceptsUnitVectorsWithinAPercent) {
    CheckReport r;
    {
        Checker c(r);
        const float up[3] = {0, 0, 1}, slope[3] = {0.6f, 0.8f, 0}, near[3] = {0, 1.005f, 0};
        const float twice[3] = {0, 0, 2}, tiny[3] = {1e-3f, 0, 0}, nan[3] = {0, std::numeric_limits<float>::quiet_NaN(), 1};
        EXPECT_TRUE(c.unit_normal("planes", 0, "normal", up));
        EXPECT_TRUE(c.unit_normal("planes", 1, "normal", slope));
        EXPECT_TRUE(c.unit_normal("planes", 2, "normal", near));
        EXPECT_FALSE(c.unit_normal("planes", 3, "normal", twice));
        EXPECT_FALSE(c.unit_normal("planes", 4, "normal", tiny));
        EXPECT_FALSE(c.unit_normal("planes", 5, "normal", nan));
    }
    ASSERT_EQ(r.findings.size(), 3u);
    EXPECT_EQ(r.findings[0].record, 3);
    EXPECT_EQ(r.findings[0].message, "normal (0 0 2) has length 2, not 1: a plane's normal is a unit vector");
    EXPECT_EQ(r.findings[1].message, "normal (0.001 0 0) has length 0.001, not 1: a plane's normal is a unit vector");
    EXPECT_EQ(r.findings[2].message, "normal holds a non-finite value");
}

TEST(Checker, NodeCyclesAreErrorsSharedSubtreesAreNot) {
    // Nodes 0 -> {1, 2}, 1 -> {3, leaf}, 2 -> {3, leaf}, 3 -> {4, leaf}, 4 -> {leaf, leaf}:
    // node 3 is shared (two parents, and node 2 is a head too), which the clip hulls' walks
    // take. Then 4 -> {3, leaf} closes a loop, and 0 -> {0, 2} a second one.
    const int64_t children[5][2] = {{1, 2}, {3, -1}, {3, -1}, {4, -1}, {-1, -1}};
    const auto walk = [&](const int64_t (&c)[5][2]) {
        CheckReport r;
        {
            Checker checker(r);
            const std::vector<int64_t> heads = {0, 2, -1, 7};  // -1 and 7 are not nodes: skipped
            check_node_cycles(checker, "clipnodes", 5, heads, "children", [&](size_t n, int k) { return c[n][k]; });
        }
        return r;
    };
    EXPECT_TRUE(walk(children).findings.empty());
    int64_t looped[5][2];
    std::copy(&children[0][0], &children[0][0] + 10, &looped[0][0]);
    looped[4][0] = 3;
    const CheckReport r = walk(looped);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].lump, "clipnodes");
    EXPECT_EQ(r.findings[0].record, 4);
    EXPECT_EQ(r.findings[0].field, "children");
    EXPECT_NE(r.findings[0].message.find("child 3 leads back to a node above it (a cycle)"), std::string::npos);
    looped[0][0] = 0;  // a node its own child
    EXPECT_EQ(walk(looped).findings.size(), 2u);
}

}  // namespace bspkit::checks
