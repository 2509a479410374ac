// The container layer over every file of ../shared/corpus/MANIFEST.tsv.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/lzma.hpp>

#include "corpus.hpp"
#include "decoded_lumps.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <random>

using namespace bspkit;
using namespace bspkit::test;

namespace {

class CorpusFileTest : public ::testing::TestWithParam<std::string> {
protected:
    const CorpusFile& file() const { return corpus_file(GetParam()); }
};
// Files of formats bspkit reads, and of variants it refuses by name.
class ReadableFileTest : public CorpusFileTest {};
class RefusedFileTest : public CorpusFileTest {};

std::vector<std::string> refused_paths();

std::vector<std::string> all_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files()) out.push_back(f.relpath);
    return out;
}

std::vector<std::string> readable_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f.relpath);
    return out;
}

std::vector<std::string> refused_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (!expected_format(f)) out.push_back(f.relpath);
    return out;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) { return test_name(info.param); }


// Touches everything a reader may touch; any bspkit::Error is acceptable.
void exercise(const Bytes& bytes, const std::string& name) {
    try {
        const Bsp bsp = Bsp::parse(bytes, name);
        for (size_t i = 0; i < bsp.lump_count(); ++i) {
            try {
                (void)bsp.decoded(i);
                (void)bsp.record_count(i);
            } catch (const Error&) {
            }
        }
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) {
            try {
                (void)bsp.game_lump_decoded(k);
            } catch (const Error&) {
            }
        }
        try {
            (void)bsp.serialize();
            if (bsp.format() == Format::source) (void)bsp.serialize({Compression::decompress});
        } catch (const Error&) {
        }
    } catch (const Error& e) {
        // One line naming the file and a lump.
        const std::string what = e.what();
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        EXPECT_EQ(what.rfind(name + ": lump ", 0), 0u) << what;
    }
}

}  // namespace

TEST(CorpusManifest, EveryListedFileIsPresentWithItsSize) {
    for (const auto& f : corpus_files()) EXPECT_EQ(read_corpus(f).size(), f.size) << f.relpath;
    EXPECT_GE(corpus_files().size(), 40u);
}

TEST_P(RefusedFileTest, IsRefusedWithAMessageNamingTheVariant) {
    const CorpusFile& f = file();
    try {
        Bsp::parse(read_corpus(f), f.relpath);
        FAIL() << f.relpath << " should be refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, "header");
        EXPECT_NE(std::string(e.what()).find("is not supported"), std::string::npos) << e.what();
    }
    const auto r = run_cli({"info", f.path.string()});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("is not supported"), std::string::npos) << r.err;
}

TEST_P(ReadableFileTest, DetectsTheManifestFormat) {
    const CorpusFile& f = file();
    const Bytes bytes = read_corpus(f);
    const auto expected = expected_format(f);
    const Bsp bsp = Bsp::parse(bytes, f.relpath);
    EXPECT_EQ(format_id(bsp.format()), *expected) << bsp.detection().rule;
    if (f.version.rfind("n/a", 0) == 0)
        EXPECT_FALSE(bsp.version());
    else
        EXPECT_EQ(bsp.version(), std::stoi(f.version));
    EXPECT_EQ(bsp.byte_order() == ByteOrder::big, f.magic == "PSBV");
}

// Texture vectors that are not numbers give a face no lightmap extent, so a
// version 29 file's lighting evidence is skipped. (The empty bounds, 1e30 ..
// -1e30, were once taken for a size: a float-to-integer conversion out of
// range that UBSan reported in the fuzzer, and a bogus "grey, Quake" ratio.)
TEST(CorpusDetection, Version29WithTextureVectorsNotNumbersSkipsTheLightingEvidence) {
    const CorpusFile& f = corpus_file("q1_v29/q1_mp_lobby.bsp");
    Bytes file = read_corpus(f);
    const Bsp before = Bsp::parse(file, f.relpath);
    ASSERT_NE(before.detection().rule.find("lighting holds"), std::string::npos) << before.detection().rule;
    const LumpEntry& texinfo = before.entry(*before.find_lump("texinfo"));
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int32_t at = texinfo.offset; at + 40 <= texinfo.offset + texinfo.length; at += 40)
        for (int k = 0; k < 8; ++k) store<float>(file.data() + at + 4 * k, nan);
    const Bsp after = Bsp::parse(file, f.relpath);
    EXPECT_EQ(after.format(), Format::quake1);
    EXPECT_EQ(after.detection().rule.find("lighting holds"), std::string::npos) << after.detection().rule;
}

TEST_P(ReadableFileTest, InfoSucceeds) {
    const CorpusFile& f = file();
    const auto r = run_cli({"info", "--json", f.path.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["format"], *expected_format(f));
    EXPECT_GT(j["lumps"].size(), 14u);
}

TEST_P(ReadableFileTest, UnchangedSaveIsByteIdentical) {
    const CorpusFile& f = file();
    const Bytes bytes = read_corpus(f);
    const Bsp bsp = Bsp::parse(bytes, f.relpath);
    EXPECT_TRUE(bsp.serialize() == bytes);
    const std::string dir = temp_dir("corpus_save");
    const auto r = run_cli({"repack", f.path.string(), "-o", dir + "/out.bsp"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(read_file(dir + "/out.bsp") == bytes);
}

TEST_P(ReadableFileTest, ReplacedLumpIsLaidOutAgainAndReopensCleanly) {
    const CorpusFile& f = file();
    Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const size_t entities = *bsp.find_lump("entities");
    const std::vector<Bytes> before = decoded_lumps(bsp);
    Bytes text = before[entities];
    text.push_back('\n');  // a lump that changes size moves everything after it
    bsp.replace(entities, text);
    const Bsp again = Bsp::parse(bsp.serialize(), f.relpath);
    EXPECT_EQ(again.revision(), bsp.revision());
    for (size_t i = 0; i < again.lump_count(); ++i) {
        const LumpEntry& e = again.entry(i);
        if (e.length > 0) {
            EXPECT_EQ(e.offset % 4, 0) << again.lump_name(i);
        }
    }
    for (const Diagnostic& d : again.diagnostics())
        ADD_FAILURE() << "after relayout: " << d.lump << ": " << d.message;
    std::vector<Bytes> after = decoded_lumps(again);
    EXPECT_TRUE(after[entities] == text);
    after[entities] = before[entities];
    EXPECT_TRUE(after == before);
    ASSERT_EQ(again.game_lumps().size(), bsp.game_lumps().size());
    for (size_t k = 0; k < again.game_lumps().size(); ++k) {
        EXPECT_EQ(again.game_lumps()[k].id, bsp.game_lumps()[k].id);
        EXPECT_EQ(again.game_lumps()[k].version, bsp.game_lumps()[k].version);
    }
}

TEST_P(ReadableFileTest, CompressThenDecompressGivesEqualLumps) {
    const CorpusFile& f = file();
    if (expected_format(f) != "source") {
        // LZMA lumps are a Source feature: other formats refuse --compress.
        const Bsp other = Bsp::parse(read_corpus(f), f.relpath);
        EXPECT_THROW(other.serialize({Compression::compress}), Error);
        return;
    }
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const Bsp packed = Bsp::parse(bsp.serialize({Compression::compress}), f.relpath);
    EXPECT_FALSE(packed.compressed(source_lump::pakfile));
    size_t compressed = 0;
    for (size_t i = 0; i < packed.lump_count(); ++i) compressed += packed.compressed(i);
    EXPECT_GT(compressed, 5u);
    for (const GameLump& g : packed.game_lumps()) EXPECT_TRUE(g.compressed() || g.length < 64) << g.name();
    const Bsp unpacked = Bsp::parse(packed.serialize({Compression::decompress}), f.relpath);
    for (size_t i = 0; i < unpacked.lump_count(); ++i) EXPECT_FALSE(unpacked.compressed(i)) << unpacked.lump_name(i);
    const auto original = decoded_lumps(bsp);
    EXPECT_TRUE(decoded_lumps(packed) == original);
    EXPECT_TRUE(decoded_lumps(unpacked) == original);
    for (const Diagnostic& d : unpacked.diagnostics()) ADD_FAILURE() << d.lump << ": " << d.message;
}

TEST_P(CorpusFileTest, TruncatedAndBitFlippedCopiesNeverCrash) {
    const CorpusFile& f = file();
    const Bytes bytes = read_corpus(f);
    std::mt19937 rng(uint32_t(std::hash<std::string>{}(f.relpath)));
    // Truncations: inside the header, at the directory, half way, one byte short.
    for (size_t cut : {size_t(3), size_t(7), size_t(60), size_t(200), size_t(1035), bytes.size() / 2, bytes.size() - 1}) {
        if (cut >= bytes.size()) continue;
        exercise(Bytes(bytes.begin(), bytes.begin() + cut), f.relpath);
    }
    // Bit flips: half of them in the header and directory where they hurt most.
    const size_t header = std::min<size_t>(bytes.size(), 1040);
    for (int i = 0; i < 60; ++i) {
        Bytes copy = bytes;
        const size_t pos = (i % 2) ? rng() % header : rng() % copy.size();
        copy[pos] ^= uint8_t(1u << (rng() % 8));
        exercise(copy, f.relpath);
    }
}

INSTANTIATE_TEST_SUITE_P(Manifest, CorpusFileTest, ::testing::ValuesIn(all_paths()), param_name);
INSTANTIATE_TEST_SUITE_P(Manifest, ReadableFileTest, ::testing::ValuesIn(readable_paths()), param_name);
INSTANTIATE_TEST_SUITE_P(Manifest, RefusedFileTest, ::testing::ValuesIn(refused_paths()), param_name);

TEST(CorpusLzma, RepackDecodesToExactlyTheOriginalLumps) {
    const Bsp plain = Bsp::parse(read_corpus(corpus_file("src_v20/sdk2013_boxinaroom.bsp")), "plain");
    const Bsp lzma = Bsp::parse(read_corpus(corpus_file("src_v20_lzma/sdk2013_boxinaroom_lzma.bsp")), "lzma");
    size_t compressed = 0;
    for (size_t i = 0; i < plain.lump_count(); ++i) {
        compressed += lzma.compressed(i);
        EXPECT_EQ(lzma.entry(i).version, plain.entry(i).version) << plain.lump_name(i);
        if (i == source_lump::game_lump) continue;
        const ByteSpan a = plain.decoded(i), b = lzma.decoded(i);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << plain.lump_name(i);
    }
    EXPECT_GE(compressed, 30u);
    EXPECT_FALSE(lzma.compressed(source_lump::pakfile));
    ASSERT_EQ(lzma.game_lumps().size(), plain.game_lumps().size());
    for (size_t k = 0; k < plain.game_lumps().size(); ++k) {
        EXPECT_TRUE(lzma.game_lumps()[k].compressed());
        EXPECT_EQ(lzma.game_lumps()[k].id, plain.game_lumps()[k].id);
        EXPECT_EQ(lzma.game_lumps()[k].version, plain.game_lumps()[k].version);
        const ByteSpan a = plain.game_lump_decoded(k), b = lzma.game_lump_decoded(k);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << plain.game_lumps()[k].name();
    }
    EXPECT_TRUE(lzma.diagnostics().empty()) << lzma.diagnostics().front().message;
    // Decompressing the repack gives the original's lumps; the game lump is
    // rebuilt at its new place, so compare it through its game lumps.
    const Bsp unpacked = Bsp::parse(lzma.serialize({Compression::decompress}), "unpacked");
    for (size_t i = 0; i < plain.lump_count(); ++i) {
        if (i == source_lump::game_lump) continue;
        const ByteSpan a = plain.decoded(i), b = unpacked.stored(i);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << plain.lump_name(i);
    }
}

TEST(CorpusQuirks, Quake2Base1EntitiesRunPastTheEnd) {
    const CorpusFile& f = corpus_file("q2_v38/q2_base1.bsp");
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    ASSERT_EQ(bsp.diagnostics().size(), 1u);
    EXPECT_EQ(bsp.diagnostics()[0].lump, "entities");
    EXPECT_NE(bsp.diagnostics()[0].message.find("runs 6 bytes past the end"), std::string::npos);
    EXPECT_EQ(bsp.decoded(0).size(), size_t(bsp.entry(0).length) - 6);
    const auto r = run_cli({"info", f.path.string()});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.err.find("q2_base1.bsp: lump entities at offset "), std::string::npos) << r.err;
}

TEST(CorpusQuirks, HalfLifeMapWithVersion29HeaderIsGoldSrcByContent) {
    const Bsp bsp = Bsp::parse(read_corpus(corpus_file("q1_v29/hl_crossfire_bsp29.bsp")), "crossfire");
    EXPECT_EQ(bsp.format(), Format::goldsrc);
    EXPECT_EQ(bsp.version(), 29);
    EXPECT_NE(bsp.detection().rule.find("lighting"), std::string::npos) << bsp.detection().rule;
    for (const char* quake : {"q1_v29/pd_change_dest.bsp", "q1_v29/q1_mp_lobby.bsp", "q1_v29/ericw_q1_decompiler_test.bsp"}) {
        const Bsp q = Bsp::parse(read_corpus(corpus_file(quake)), quake);
        EXPECT_EQ(q.format(), Format::quake1) << quake << ": " << q.detection().rule;
    }
}

TEST(CorpusQuirks, ConsoleFileIsBigEndianWithRelativeGameLumpOffsets) {
    const Bsp bsp = Bsp::parse(read_corpus(corpus_file("src_console/x360_shack.bsp")), "x360");
    EXPECT_EQ(bsp.byte_order(), ByteOrder::big);
    EXPECT_EQ(bsp.revision(), 27);
    EXPECT_TRUE(bsp.game_lump_offsets_relative());
    ASSERT_EQ(bsp.game_lumps().size(), 2u);
    EXPECT_EQ(bsp.game_lumps()[0].name(), "sprp");
    EXPECT_TRUE(bsp.game_lumps()[0].compressed());
    EXPECT_EQ(bsp.game_lump_decoded(0).size(), 404u);
    EXPECT_TRUE(bsp.compressed(1));
    EXPECT_EQ(bsp.decoded(1).size(), bsp.entry(1).fourcc);  // fourCC holds the uncompressed size
}

TEST(CorpusQuirks, Left4Dead2LumpOrder) {
    const Bsp bsp = Bsp::parse(read_corpus(corpus_file("src_v21/l4d2_escapefromterrortown01.bsp")), "l4d2");
    EXPECT_EQ(bsp.layout().directory, DirectoryLayout::source_l4d2);
    EXPECT_TRUE(bsp.diagnostics().empty()) << bsp.diagnostics().front().message;
    for (const char* csgo : {"src_v21_csgo/csgo_ar_monastery.bsp", "src_v21_csgo/cstanks_env_gunfire_test.bsp"}) {
        const Bsp b = Bsp::parse(read_corpus(corpus_file(csgo)), csgo);
        EXPECT_EQ(b.layout().directory, DirectoryLayout::source) << csgo;
    }
}

// Every LZMA lump of the two LZMA corpus maps with its compressed stream
// damaged: each verb that decodes one ends with one line naming the lump and
// its offset, exit 1 (check: its report on stdout). The CLI unwinds with a
// static libgcc; before lumps were decoded under bspkit::OnceFlag, the error
// went through std::call_once's pthread_once and aborted the process (134).
TEST(CorpusLzma, DamagedStreamsGiveOneLineInEveryVerb) {
    const std::string dir = test::temp_dir("corpus_lzma_damaged");
    for (const char* rel : {"src_console/x360_shack.bsp", "src_v20_lzma/sdk2013_boxinaroom_lzma.bsp"}) {
        Bytes bytes = read_corpus(corpus_file(rel));
        const Bsp bsp = Bsp::parse(bytes, rel);
        size_t damaged = 0;
        for (size_t i = 0; i < bsp.lump_count(); ++i) {
            if (!bsp.compressed(i)) continue;
            const LumpEntry& e = bsp.entry(i);
            for (int32_t at = int32_t(lzma::header_size); at < e.length; at += 3)
                bytes[size_t(e.offset + at)] ^= 0x5a;
            ++damaged;
        }
        ASSERT_GE(damaged, 20u) << rel;
        const std::string bad = dir + "/damaged.bsp";
        write_file_atomic(bad, bytes);
        const std::vector<std::vector<std::string>> verbs = {
            {"check", bad},
            {"entities", bad},
            {"export", bad, "-o", dir + "/x.glb"},
            {"render", bad, "-o", dir + "/x.png"},
            {"decompile", bad, "-o", dir + "/x.vmf"},
            {"vis", bad},
            {"trace", bad, "--from", "0,0,0", "--to", "64,64,64"},
            {"textures", bad, "-o", dir + "/textures"},
        };
        for (const auto& args : verbs) {
            const auto r = test::run_cli(args);
            EXPECT_EQ(r.exit_code, 1) << rel << " " << args[0] << ": " << r.err;
            const std::string said = args[0] == "check" ? r.out : r.err;
            EXPECT_NE(said.find("corrupt LZMA data"), std::string::npos) << rel << " " << args[0] << ": " << said;
            EXPECT_NE(said.find(": lump "), std::string::npos) << rel << " " << args[0] << ": " << said;
            if (args[0] != "check") {
                EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << rel << " " << args[0] << ": " << r.err;
            }
        }
    }
}

// decode_ahead() (check calls it) decodes compressed lumps on several threads:
// the bytes are those decoded() gives alone, and a lump it cannot decode still
// raises its error, naming the lump and the offset, when decoded() asks for it.
TEST(CorpusLzma, DecodeAheadGivesTheSameBytesAndKeepsErrors) {
    for (const char* rel : {"src_console/x360_shack.bsp", "src_v20_lzma/sdk2013_boxinaroom_lzma.bsp"}) {
        const Bytes bytes = read_corpus(corpus_file(rel));
        const Bsp ahead = Bsp::parse(bytes, rel), alone = Bsp::parse(bytes, rel);
        std::vector<size_t> all(ahead.lump_count());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        ahead.decode_ahead(all, true, 2);
        size_t compressed = 0;
        for (size_t i = 0; i < all.size(); ++i) {
            compressed += alone.compressed(i);
            const ByteSpan a = ahead.decoded(i), b = alone.decoded(i);
            EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << rel << " " << alone.lump_name(i);
        }
        EXPECT_GE(compressed, 20u) << rel;
        for (size_t k = 0; k < alone.game_lumps().size(); ++k) {
            const ByteSpan a = ahead.game_lump_decoded(k), b = alone.game_lump_decoded(k);
            EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << rel << " game lump " << k;
        }

        // The range coder's first byte must be 0: 0xff makes the planes lump undecodable.
        Bytes broken = bytes;
        const size_t planes = 1;
        ASSERT_TRUE(alone.compressed(planes)) << rel;
        broken[size_t(alone.entry(planes).offset) + lzma::header_size] = 0xff;
        const Bsp bad_ahead = Bsp::parse(broken, rel), bad_alone = Bsp::parse(broken, rel);
        EXPECT_NO_THROW(bad_ahead.decode_ahead(all, true, 2));
        std::string with, without;
        try {
            bad_ahead.decoded(planes);
        } catch (const Error& e) {
            with = e.what();
            EXPECT_EQ(e.where().lump, "planes");
            EXPECT_GE(e.where().offset, alone.entry(planes).offset);
        }
        try {
            bad_alone.decoded(planes);
        } catch (const Error& e) {
            without = e.what();
        }
        EXPECT_FALSE(with.empty()) << rel;
        EXPECT_EQ(with, without) << rel;
        // Every other lump still decodes after the failed one.
        const ByteSpan v = bad_ahead.decoded(3), w = alone.decoded(3);
        EXPECT_TRUE(std::equal(v.begin(), v.end(), w.begin(), w.end())) << rel;
        // check says so once (every step that reads planes meets it), with the offset.
        const CheckReport report = check(Bsp::parse(broken, rel));
        std::vector<std::string> said;
        for (const Finding& f : report.findings)
            if (f.severity == Severity::error && f.lump == "planes") said.push_back(f.message);
        ASSERT_EQ(said.size(), 1u) << rel;
        EXPECT_NE(said[0].find("(at offset " + std::to_string(alone.entry(planes).offset + int64_t(lzma::header_size)) + ")"),
                  std::string::npos)
            << said[0];
    }
}
