#include <bspkit/bsp.hpp>

#include "samples.hpp"

#include <gtest/gtest.h>

using namespace bspkit;

namespace {

std::string refusal(const Bytes& file) {
    try {
        Bsp::parse(file, "x.bsp");
    } catch (const Error& e) {
        return e.what();
    }
    return "(accepted)";
}

Bytes header(const char magic[5], int32_t version, size_t size = 2048) {
    Bytes b(size, 0);
    std::copy_n(magic, 4, b.begin());
    store<int32_t>(b.data() + 4, version);
    return b;
}

}  // namespace

TEST(Detect, EverySampleIsRecognised) {
    for (const auto& s : samples::all()) {
        const Bsp bsp = Bsp::parse(s.bytes, s.name);
        EXPECT_EQ(format_id(bsp.format()), s.format) << s.name;
        EXPECT_EQ(bsp.version(), s.version) << s.name;
        EXPECT_FALSE(bsp.detection().rule.empty());
        EXPECT_TRUE(bsp.diagnostics().empty()) << s.name << ": " << bsp.diagnostics().front().message;
    }
}

TEST(Detect, RefusesVariantsOutsideTheSpecsByName) {
    EXPECT_EQ(refusal(header("IBSP", 78)),
              "x.bsp: lump header at offset 0: IBSP version 78 (UFO: Alien Invasion) is not supported");
    EXPECT_NE(refusal(header("rBSP", 37)).find("rBSP version 37 (Titanfall 2) is not supported"), std::string::npos);
    EXPECT_NE(refusal(header("rBSP", 51 | (1 << 16))).find("rBSP version 51 (Apex Legends)"), std::string::npos);
    EXPECT_NE(refusal(header("VBSP", 25)).find("VBSP version 25 (Strata Source"), std::string::npos);
    EXPECT_NE(refusal(header("QBSP", 38)).find("QBSP version 38"), std::string::npos);
    EXPECT_NE(refusal(header("RBSP", 1)).find("RBSP version 1"), std::string::npos);
    EXPECT_NE(refusal(header("FBSP", 1)).find("FBSP version 1"), std::string::npos);
    Bytes v43(2048, 0);
    store<int32_t>(v43.data(), 43);
    EXPECT_NE(refusal(v43).find("BSP version 43"), std::string::npos);
}

TEST(Detect, GarbageAndShortFilesAreErrorsNamingTheHeader) {
    EXPECT_NE(refusal(Bytes{'P', 'K', 3, 4, 0, 0}).find("lump header at offset 0: not a BSP file"), std::string::npos);
    EXPECT_NE(refusal(Bytes{'V', 'B'}).find("too short"), std::string::npos);
    EXPECT_NE(refusal(header("VBSP", 20, 100)).find("the VBSP header needs 1036"), std::string::npos);
    Bytes q1(50, 0);
    store<int32_t>(q1.data(), 29);
    EXPECT_NE(refusal(q1).find("header needs 124"), std::string::npos);
}

TEST(Detect, BlueShiftSwapsTheFirstTwoLumps) {
    Bytes file;
    for (const auto& s : samples::all())
        if (s.format == "goldsrc") file = s.bytes;
    ASSERT_FALSE(file.empty());
    // Swap directory entries 0 and 1 (entities <-> planes).
    std::swap_ranges(file.begin() + 4, file.begin() + 12, file.begin() + 12);
    const Bsp bsp = Bsp::parse(file, "bshift.bsp");
    EXPECT_EQ(bsp.format(), Format::goldsrc);
    EXPECT_EQ(bsp.layout().variant, "bshift");
    EXPECT_EQ(bsp.lump_name(1), "entities");
    EXPECT_EQ(bsp.decoded(1)[0], '{');
    EXPECT_EQ(bsp.record_count(0), 6u);  // planes
}

TEST(Detect, Left4Dead2LumpOrderIsRecognisedFromTheDirectory) {
    std::vector<Bytes> lumps(64);
    lumps[0] = Bytes{'{', '}', 0};
    lumps[1] = Bytes(40, 1);
    lumps[3] = Bytes(24, 2);
    const Bytes file = samples::build(layouts::source_l4d2(), 21, lumps);
    const Bsp bsp = Bsp::parse(file, "l4d2.bsp");
    EXPECT_EQ(bsp.layout().directory, DirectoryLayout::source_l4d2);
    EXPECT_EQ(bsp.decoded(1).size(), 40u);
    EXPECT_NE(bsp.detection().rule.find("Left 4 Dead 2"), std::string::npos);
    // The same lumps in the standard order stay standard at v21.
    const Bsp standard = Bsp::parse(samples::build(layouts::source(), 21, lumps), "csgo.bsp");
    EXPECT_EQ(standard.layout().directory, DirectoryLayout::source);
}

TEST(Detect, Version29WithoutEvidenceIsQuake) {
    for (const auto& s : samples::all())
        if (s.format == "quake1") {
            const Bsp bsp = Bsp::parse(s.bytes, s.name);
            EXPECT_NE(bsp.detection().rule.find("Quake"), std::string::npos) << bsp.detection().rule;
        }
}

TEST(Detect, LumpNamesAndIndicesResolve) {
    const Bsp bsp = Bsp::parse(samples::all().front().bytes, "q1.bsp");
    EXPECT_EQ(bsp.find_lump("faces"), 7u);
    EXPECT_EQ(bsp.find_lump("FACES"), 7u);
    EXPECT_EQ(bsp.find_lump("LUMP_FACES"), 7u);
    EXPECT_EQ(bsp.find_lump("14"), 14u);
    EXPECT_FALSE(bsp.find_lump("15"));
    EXPECT_FALSE(bsp.find_lump("pakfile"));
}
