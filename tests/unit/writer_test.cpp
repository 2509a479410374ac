#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>

#include "decoded_lumps.hpp"
#include "run.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

using namespace bspkit;
using namespace bspkit::test;

namespace {

void expect_sane_layout(const Bsp& bsp) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const LumpEntry& e = bsp.entry(i);
        if (e.length == 0) continue;
        EXPECT_EQ(e.offset % 4, 0) << bsp.lump_name(i);
        EXPECT_GE(e.offset, int64_t(bsp.layout().header_size())) << bsp.lump_name(i);
        EXPECT_LE(int64_t(e.offset) + e.length, int64_t(bsp.file_bytes().size())) << bsp.lump_name(i);
        ranges.emplace_back(e.offset, int64_t(e.offset) + e.length);
    }
    std::sort(ranges.begin(), ranges.end());
    for (size_t k = 1; k < ranges.size(); ++k) EXPECT_LE(ranges[k - 1].second, ranges[k].first);
    EXPECT_TRUE(bsp.diagnostics().empty()) << bsp.diagnostics().front().message;
}


}  // namespace

TEST(Writer, UnchangedSaveIsByteIdentical) {
    for (const auto& s : samples::all()) {
        const Bsp bsp = Bsp::parse(s.bytes, s.name);
        EXPECT_EQ(bsp.serialize(), s.bytes) << s.name;
    }
}

TEST(Writer, ReplacingALumpLaysOutAgain) {
    for (const auto& s : samples::all()) {
        Bsp bsp = Bsp::parse(s.bytes, s.name);
        const size_t entities = *bsp.find_lump("entities");
        const std::vector<Bytes> before = decoded_lumps(bsp);
        const bool was_compressed = bsp.compressed(entities);
        Bytes text(bsp.decoded(entities).begin(), bsp.decoded(entities).end());
        text.insert(text.begin(), {'{', '"', 'a', '"', ' ', '"', 'b', '"', '}', '\n'});  // odd length
        bsp.replace(entities, text);
        const Bytes saved = bsp.serialize();
        const Bsp again = Bsp::parse(saved, s.name);
        expect_sane_layout(again);
        EXPECT_EQ(again.revision(), bsp.revision());
        EXPECT_EQ(again.compressed(entities), was_compressed) << s.name << ": compression kept";
        std::vector<Bytes> after = decoded_lumps(again);
        EXPECT_EQ(after[entities], text) << s.name;
        after[entities] = before[entities];
        EXPECT_EQ(after, before) << s.name;
        EXPECT_EQ(again.game_lumps().size(), bsp.game_lumps().size());
    }
}

TEST(Writer, CompressThenDecompressGivesEqualLumps) {
    for (const auto& s : samples::all()) {
        if (s.format != "source") continue;
        const Bsp bsp = Bsp::parse(s.bytes, s.name);
        const Bsp packed = Bsp::parse(bsp.serialize({Compression::compress}), s.name);
        expect_sane_layout(packed);
        EXPECT_TRUE(packed.compressed(1)) << s.name;  // planes
        EXPECT_FALSE(packed.compressed(source_lump::pakfile));
        ASSERT_EQ(packed.game_lumps().size(), 1u);
        EXPECT_TRUE(packed.game_lumps()[0].compressed());
        const Bsp unpacked = Bsp::parse(packed.serialize({Compression::decompress}), s.name);
        expect_sane_layout(unpacked);
        for (size_t i = 0; i < unpacked.lump_count(); ++i) EXPECT_FALSE(unpacked.compressed(i));
        EXPECT_EQ(decoded_lumps(packed), decoded_lumps(bsp));
        EXPECT_EQ(decoded_lumps(unpacked), decoded_lumps(bsp));
        EXPECT_FALSE(unpacked.game_lumps()[0].compressed());
    }
}

TEST(Writer, GameLumpReplaceOfItsOwnDecodedBytesIsIdentity) {
    for (const auto& s : samples::all()) {
        if (s.format != "source") continue;
        Bsp bsp = Bsp::parse(s.bytes, s.name);
        const ByteSpan d = bsp.decoded(source_lump::game_lump);
        const std::vector<Bytes> before = decoded_lumps(bsp);
        bsp.replace(source_lump::game_lump, Bytes(d.begin(), d.end()));
        const Bsp again = Bsp::parse(bsp.serialize(), s.name);
        EXPECT_EQ(decoded_lumps(again), before) << s.name;
    }
}

TEST(Writer, CompressionIsOnlyForSource) {
    const Bsp q2 = Bsp::parse(samples::all()[3].bytes, "q2.bsp");
    ASSERT_EQ(q2.format(), Format::quake2);
    EXPECT_THROW(q2.serialize({Compression::compress}), Error);
    EXPECT_EQ(q2.serialize({Compression::decompress}), Bytes(q2.file_bytes().begin(), q2.file_bytes().end()));
}

TEST(Writer, SaveIsAtomicAndLeavesNoTemporaryFiles) {
    const std::string dir = test::temp_dir("save");
    const auto target = std::filesystem::path(dir) / "map.bsp";
    write_file_atomic(target, Bytes{'o', 'l', 'd'});
    const auto all = samples::all();
    const auto& s = all.front();
    Bsp bsp = Bsp::parse(s.bytes, s.name);
    bsp.save(target);
    EXPECT_EQ(read_file(target), s.bytes);
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.is_regular_file();
    EXPECT_EQ(files, 1u);
    // A target in a missing directory fails cleanly and creates nothing.
    EXPECT_THROW(bsp.save(std::filesystem::path(dir) / "missing" / "x.bsp"), Error);
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir) / "missing"));
}
