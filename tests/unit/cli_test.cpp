#include <bspkit/bsp.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>

#include "run.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace bspkit;
using test::run_cli;

namespace {
std::string write_samples() {
    static const std::string dir = [] {
        const std::string d = test::temp_dir("cli_samples");
        for (const auto& s : samples::all()) write_file_atomic(d + "/" + s.name, s.bytes);
        return d;
    }();
    return dir;
}
}  // namespace

TEST(Cli, InfoJsonHasTheDocumentedKeys) {
    const std::string dir = write_samples();
    for (const auto& s : samples::all()) {
        const auto r = run_cli({"info", "--json", dir + "/" + s.name});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_TRUE(r.err.empty()) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["format"], s.format);
        for (const char* key : {"format", "version", "revision", "big_endian", "lumps"}) EXPECT_TRUE(j.contains(key)) << key;
        const Bsp bsp = Bsp::parse(s.bytes, s.name);
        ASSERT_EQ(j["lumps"].size(), bsp.lump_count());
        for (const auto& lump : j["lumps"])
            for (const char* key : {"index", "name", "offset", "length", "decoded_length", "version", "compressed", "count"})
                EXPECT_TRUE(lump.contains(key)) << key;
        EXPECT_EQ(j["big_endian"], s.name.find("x360") != std::string::npos);
    }
}

// --json with a file name that is not UTF-8 (Latin-1): nlohmann's dump()
// throws on it (the process aborted); it comes out in bytes_to_utf8's
// mapping, in valid JSON. (A texture name from the map: TexturesCli.)
TEST(Cli, JsonTakesNamesThatAreNotUtf8) {
    const std::string dir = test::temp_dir("cli_latin1");
    for (const auto& s : samples::all()) {
        SCOPED_TRACE(s.name);
        const std::string path = dir + "/caf\xe9_" + s.name;
        write_file_atomic(path, s.bytes);
        for (const std::vector<std::string>& args :
             {std::vector<std::string>{"info", "--json", path}, {"check", "--json", path}, {"vis", "--json", path},
              {"entities", "--json", path}}) {
            const auto r = run_cli(args);
            EXPECT_TRUE(r.exit_code == 0 || (args[0] == "check" && r.exit_code == 1)) << args[0] << ": " << r.err;
            nlohmann::json j;
            ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << args[0] << ": " << r.out << r.err;
            if (j.is_object() && j.contains("file")) {
                EXPECT_EQ(j["file"], bytes_to_utf8(path)) << args[0];
            }
        }
    }
}

TEST(Cli, InfoTextListsLumps) {
    const auto r = run_cli({"info", write_samples() + "/sample_quake2.bsp"});
    ASSERT_EQ(r.exit_code, 0);
    EXPECT_NE(r.out.find("quake2"), std::string::npos);
    EXPECT_NE(r.out.find("areaportals"), std::string::npos);
}

TEST(Cli, ExitCodes) {
    EXPECT_EQ(run_cli({}).exit_code, 2);
    EXPECT_EQ(run_cli({"frobnicate"}).exit_code, 2);
    EXPECT_EQ(run_cli({"info"}).exit_code, 2);
    for (const char* verb : {"info", "lump", "repack"}) {
        const auto r = run_cli({verb, "--help"});
        EXPECT_EQ(r.exit_code, 0) << verb;
        EXPECT_NE(r.out.find("Usage"), std::string::npos) << verb;
    }
    EXPECT_EQ(run_cli({"lump", "extract", "--help"}).exit_code, 0);
    EXPECT_EQ(run_cli({"--help"}).exit_code, 0);

    const std::string dir = test::temp_dir("cli_bad");
    write_file_atomic(dir + "/garbage.bsp", Bytes{'P', 'K', 3, 4, 1, 2, 3, 4});
    const auto bad = run_cli({"info", dir + "/garbage.bsp"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_EQ(bad.err, dir + "/garbage.bsp: lump header at offset 0: not a BSP file this tool knows: header bytes 50 4b 03 04\n");
    EXPECT_TRUE(bad.out.empty());
    EXPECT_EQ(run_cli({"info", dir + "/does-not-exist.bsp"}).exit_code, 1);
    const auto unknown = run_cli({"lump", "extract", write_samples() + "/sample_quake1.bsp", "pakfile", "-o", dir + "/x"});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("unknown lump 'pakfile'"), std::string::npos);
}

// The sample's LZMA lumps (planes, vertexes) with their compressed streams
// damaged: the verbs that decode them say so in one line naming the lump and
// exit 1. The CLI unwinds with a static libgcc: an exception out of a lump
// decoded on first use went through std::call_once's pthread_once frame and
// aborted the process (exit 134). Every verb on damaged corpus maps:
// CorpusLzma.DamagedStreamsGiveOneLineInEveryVerb.
TEST(Cli, CorruptLzmaLumpIsOneLineNotAnAbort) {
    const std::string dir = test::temp_dir("cli_lzma_corrupt");
    const std::string src = write_samples() + "/sample_source_lzma.bsp";
    Bytes bytes = read_file(src);
    const Bsp bsp = Bsp::open(src);
    int damaged = 0;
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        if (!bsp.compressed(i)) continue;
        const LumpEntry& e = bsp.entry(i);
        for (int32_t at = 17; at < e.length; at += 3) bytes[size_t(e.offset + at)] ^= 0x5a;  // past the 17-byte header
        ++damaged;
    }
    ASSERT_EQ(damaged, 2);
    const std::string bad = dir + "/bad_lzma.bsp";
    write_file_atomic(bad, bytes);
    const auto checked = run_cli({"check", bad});
    EXPECT_EQ(checked.exit_code, 1) << checked.err;
    EXPECT_NE(checked.out.find("lump planes: error: corrupt LZMA data"), std::string::npos) << checked.out;
    const auto traced = run_cli({"trace", bad, "--from", "0,0,0", "--to", "64,64,64"});
    EXPECT_EQ(traced.exit_code, 1) << traced.err;
    EXPECT_NE(traced.err.find("lump planes at offset"), std::string::npos) << traced.err;
    EXPECT_NE(traced.err.find("corrupt LZMA data"), std::string::npos) << traced.err;
}

TEST(Cli, ExtractReplaceRepack) {
    const std::string dir = test::temp_dir("cli_lump");
    const std::string src = write_samples() + "/sample_source_lzma.bsp";
    ASSERT_EQ(run_cli({"lump", "extract", src, "planes", "-o", dir + "/planes.bin"}).exit_code, 0);
    ASSERT_EQ(run_cli({"lump", "extract", src, "1", "--stored", "-o", dir + "/planes.lzma"}).exit_code, 0);
    const Bytes planes = read_file(dir + "/planes.bin");
    EXPECT_EQ(planes.size(), 6u * 20u);
    const Bytes stored = read_file(dir + "/planes.lzma");
    EXPECT_EQ(std::string(stored.begin(), stored.begin() + 4), "LZMA");

    Bytes changed = planes;
    changed[0] ^= 0x40;
    write_file_atomic(dir + "/new_planes.bin", changed);
    ASSERT_EQ(run_cli({"lump", "replace", src, "planes", dir + "/new_planes.bin", "-o", dir + "/edited.bsp"}).exit_code, 0);
    const Bsp edited = Bsp::open(dir + "/edited.bsp");
    EXPECT_TRUE(edited.compressed(1));
    EXPECT_EQ(Bytes(edited.decoded(1).begin(), edited.decoded(1).end()), changed);

    ASSERT_EQ(run_cli({"repack", src, "--decompress", "-o", dir + "/plain.bsp"}).exit_code, 0);
    ASSERT_EQ(run_cli({"repack", dir + "/plain.bsp", "--compress", "-o", dir + "/packed.bsp"}).exit_code, 0);
    ASSERT_EQ(run_cli({"repack", dir + "/packed.bsp", "-o", dir + "/same.bsp"}).exit_code, 0);
    EXPECT_EQ(read_file(dir + "/packed.bsp"), read_file(dir + "/same.bsp"));
    EXPECT_FALSE(Bsp::open(dir + "/plain.bsp").compressed(1));
    EXPECT_TRUE(Bsp::open(dir + "/packed.bsp").compressed(1));
    EXPECT_EQ(run_cli({"repack", src, "--compress", "--decompress", "-o", dir + "/x.bsp"}).exit_code, 2);
}
