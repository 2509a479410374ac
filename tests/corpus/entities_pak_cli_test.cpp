// `bspkit entities` and `bspkit pak` on corpus maps, through the built CLI.
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>

#include "corpus.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

std::string path(const std::string& relpath) { return corpus_file(relpath).path.string(); }

std::vector<std::vector<KeyValue>> pairs_from_json(const nlohmann::json& j) {
    std::vector<std::vector<KeyValue>> out;
    for (const auto& e : j) {
        out.emplace_back();
        for (const auto& p : e["pairs"]) out.back().push_back({utf8_to_bytes(p[0].get<std::string>()), utf8_to_bytes(p[1].get<std::string>())});
    }
    return out;
}

std::vector<std::vector<KeyValue>> pairs_of(const EntityLump& lump) {
    std::vector<std::vector<KeyValue>> out;
    for (const Entity& e : lump.entities) out.push_back(e.pairs);
    return out;
}

}  // namespace

TEST(EntitiesCli, HelpAndUsage) {
    const auto help = run_cli({"entities", "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--where"), std::string::npos);
    EXPECT_NE(help.out.find("--set"), std::string::npos);
    const std::string q1 = path("q1_v29/q1_mp_lobby.bsp");
    EXPECT_EQ(run_cli({"entities"}).exit_code, 2);
    EXPECT_EQ(run_cli({"entities", q1, "--where", "classname"}).exit_code, 2);  // no '='
    EXPECT_EQ(run_cli({"entities", q1, "--where", "=x"}).exit_code, 2);
    EXPECT_EQ(run_cli({"entities", q1, "--set", "x.json"}).exit_code, 2);        // --set needs -o
    EXPECT_EQ(run_cli({"entities", q1, "-o", "x.bsp"}).exit_code, 2);            // -o needs --set
    const auto missing = run_cli({"entities", "/nonexistent/map.bsp"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("/nonexistent/map.bsp"), std::string::npos);
}

TEST(EntitiesCli, JsonAndTextOfEveryReadableCorpusFile) {
    for (const auto& f : corpus_files()) {
        if (!expected_format(f)) continue;
        SCOPED_TRACE(f.relpath);
        const EntityLump lump = read_entities(Bsp::open(f.path));
        const auto json = run_cli({"entities", f.path.string(), "--json"});
        ASSERT_EQ(json.exit_code, 0) << json.err;
        const auto j = nlohmann::json::parse(json.out);
        ASSERT_EQ(j.size(), lump.entities.size());
        EXPECT_EQ(pairs_from_json(j), pairs_of(lump));
        EXPECT_EQ(j[0]["index"], 0);
        // The text output is entity text with comments: it parses back to the same list.
        const auto text = run_cli({"entities", f.path.string()});
        ASSERT_EQ(text.exit_code, 0) << text.err;
        EXPECT_EQ(pairs_of(EntityLump::parse(text.out)), pairs_of(lump));
    }
}

TEST(EntitiesCli, WhereFiltersAreAnded) {
    const std::string file = path("hl1_v30/cs16_de_torabora.bsp");
    const EntityLump lump = read_entities(Bsp::open(file));
    // Expected selections computed here with plain string tests.
    std::vector<size_t> lights, lights_with_style;
    for (size_t i = 0; i < lump.entities.size(); ++i) {
        for (const KeyValue& kv : lump.entities[i].pairs) {
            if (kv.key != "classname" || kv.value.rfind("light", 0) != 0) continue;
            lights.push_back(i);
            for (const KeyValue& s : lump.entities[i].pairs)
                if (s.key == "_light" && s.value.find(" 170 220 ") != std::string::npos) {
                    lights_with_style.push_back(i);
                    break;
                }
            break;
        }
    }
    ASSERT_FALSE(lights.empty());
    ASSERT_FALSE(lights_with_style.empty());
    ASSERT_LT(lights_with_style.size(), lights.size());
    auto indices = [](const std::string& out) {
        std::vector<size_t> v;
        for (const auto& e : nlohmann::json::parse(out)) v.push_back(e["index"]);
        return v;
    };
    const auto r1 = run_cli({"entities", file, "--json", "--where", "classname=light*"});
    ASSERT_EQ(r1.exit_code, 0) << r1.err;
    EXPECT_EQ(indices(r1.out), lights);
    const auto r2 = run_cli({"entities", file, "--json", "--where", "classname=light*", "--where", "_light=* 170 220 *"});
    ASSERT_EQ(r2.exit_code, 0) << r2.err;
    EXPECT_EQ(indices(r2.out), lights_with_style);
    const auto none = run_cli({"entities", file, "--json", "--where", "classname=no_such_thing"});
    EXPECT_EQ(none.exit_code, 0);
    EXPECT_EQ(nlohmann::json::parse(none.out).size(), 0u);
}

TEST(EntitiesCli, SetRoundTripAndEdit) {
    const std::string dir = temp_dir("ent_cli");
    for (const char* rel : {"src_v20_lzma/sdk2013_boxinaroom_lzma.bsp", "q1_v29/hl_crossfire_bsp29.bsp",
                            "q3_v46/oa_ctf2.bsp"}) {
        SCOPED_TRACE(rel);
        const std::string file = path(rel);
        const auto json = run_cli({"entities", file, "--json"});
        ASSERT_EQ(json.exit_code, 0);
        write_file_atomic(dir + "/same.json", Bytes(json.out.begin(), json.out.end()));
        // Unchanged JSON: the saved file is the original, byte for byte.
        const auto same = run_cli({"entities", file, "--set", dir + "/same.json", "-o", dir + "/same.bsp"});
        ASSERT_EQ(same.exit_code, 0) << same.err;
        EXPECT_EQ(read_file(dir + "/same.bsp"), read_file(file));

        // One value edited: saved, re-read, compression kept.
        auto j = nlohmann::json::parse(json.out);
        j[1]["pairs"][0][1] = std::string(j[1]["pairs"][0][1]) + " edited";
        const std::string edited_json = j.dump();
        write_file_atomic(dir + "/edited.json", Bytes(edited_json.begin(), edited_json.end()));
        const auto edited = run_cli({"entities", file, "--set", dir + "/edited.json", "-o", dir + "/edited.bsp"});
        ASSERT_EQ(edited.exit_code, 0) << edited.err;
        const Bsp original = Bsp::open(file), back = Bsp::open(dir + "/edited.bsp");
        const size_t index = entity_lump_index(back);
        EXPECT_EQ(back.compressed(index), original.compressed(index));
        auto expected = pairs_of(read_entities(original));
        expected[1][0].value += " edited";
        EXPECT_EQ(pairs_of(read_entities(back)), expected);
    }
    // Bad JSON: exit 1, nothing written.
    write_file_atomic(dir + "/bad.json", Bytes{'[', '{', '}'});
    const auto bad = run_cli({"entities", path("q2_v38/q2_mp_lobby.bsp"), "--set", dir + "/bad.json", "-o", dir + "/bad.bsp"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.err.find("bad.json"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir + "/bad.bsp"));
    const std::string quote = R"([{"pairs": [["message", "say \"hi\""]]}])";
    write_file_atomic(dir + "/quote.json", Bytes(quote.begin(), quote.end()));
    const auto q = run_cli({"entities", path("q2_v38/q2_mp_lobby.bsp"), "--set", dir + "/quote.json", "-o", dir + "/q.bsp"});
    EXPECT_EQ(q.exit_code, 1);
    EXPECT_NE(q.err.find("double quote"), std::string::npos) << q.err;
    EXPECT_FALSE(fs::exists(dir + "/q.bsp"));
}

TEST(PakCli, HelpUsageAndNonSource) {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"pak", "--help"}, {"pak", "list", "--help"}, {"pak", "extract", "--help"},
          {"pak", "add", "--help"}, {"pak", "remove", "--help"}}) {
        const auto r = run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << args[1];
        EXPECT_NE(r.out.find("Usage"), std::string::npos);
    }
    EXPECT_EQ(run_cli({"pak"}).exit_code, 2);
    EXPECT_EQ(run_cli({"pak", "list"}).exit_code, 2);
    const auto q2 = run_cli({"pak", "list", path("q2_v38/q2_mp_lobby.bsp")});
    EXPECT_EQ(q2.exit_code, 1);
    EXPECT_NE(q2.err.find("not a Source map"), std::string::npos) << q2.err;
    const std::string csgo = path("src_v21_csgo/csgo_ar_monastery.bsp");
    EXPECT_EQ(run_cli({"pak", "add", csgo, "no-equals-sign", "-o", "/tmp/x.bsp"}).exit_code, 2);
    EXPECT_EQ(run_cli({"pak", "add", csgo, "../evil=/etc/hostname", "-o", "/tmp/x.bsp"}).exit_code, 2);
    EXPECT_EQ(run_cli({"pak", "add", csgo, "ok.txt=/nonexistent/file", "-o", "/tmp/x.bsp"}).exit_code, 1);
}

// A pakfile cut off by the end of the file (a truncated download) is not an
// empty archive: the pak verbs stop with the lump and its offset, unless --salvage.
TEST(PakCli, TruncatedPakfileIsAnErrorUnlessSalvage) {
    for (const char* rel : {"src_console/x360_shack.bsp", "src_v21/l4d2_escapefromterrortown01.bsp"}) {
        const Bsp whole = Bsp::open(corpus_file(rel).path);
        const auto index = whole.find_lump("pakfile");
        ASSERT_TRUE(index && whole.entry(*index).length > 0) << rel;
        const Bytes bytes = read_file(corpus_file(rel).path);
        const fs::path dir = temp_dir("pak_truncated"), cut = dir / "cut.bsp";
        // Up to the middle of the pakfile, and before its start (nothing of it present).
        for (const int64_t keep : {whole.entry(*index).offset + whole.entry(*index).length / 2, whole.entry(*index).offset}) {
            write_file_atomic(cut, ByteSpan(bytes).first(size_t(keep)));
            const std::string where = "lump pakfile at offset " + std::to_string(whole.entry(*index).offset);
            for (const std::vector<std::string>& verb :
                 {std::vector<std::string>{"pak", "list"}, {"pak", "extract", "-o", (dir / "out").string()},
                  {"pak", "remove", "-o", (dir / "x.bsp").string(), "*.vmt"}}) {
                std::vector<std::string> args = verb;
                args.insert(args.begin() + 2, cut.string());
                const auto r = run_cli(args);
                EXPECT_EQ(r.exit_code, 1) << rel << " " << verb[1] << " " << keep;
                EXPECT_NE(r.err.find(where + ": truncated"), std::string::npos) << r.err;
            }
            // --salvage goes on with the bytes present: none is an empty list, half a zip has no end record.
            const auto salvaged = run_cli({"pak", "list", cut.string(), "--salvage"});
            EXPECT_NE(salvaged.err.find(where), std::string::npos) << salvaged.err;  // the reading warning
            if (keep == whole.entry(*index).offset) {
                EXPECT_EQ(salvaged.exit_code, 0) << rel;
                EXPECT_NE(salvaged.err.find("0 entries"), std::string::npos) << salvaged.err;
            } else {
                EXPECT_EQ(salvaged.exit_code, 1) << rel;
                EXPECT_NE(salvaged.err.find("end-of-central-directory"), std::string::npos) << salvaged.err;
            }
        }
    }
}

TEST(PakCli, ListJson) {
    for (const auto& f : corpus_files()) {
        if (expected_format(f) != "source") continue;
        SCOPED_TRACE(f.relpath);
        const auto pak = source::Pakfile::read(Bsp::open(f.path));
        const auto r = run_cli({"pak", "list", f.path.string(), "--json"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const auto j = nlohmann::json::parse(r.out);
        ASSERT_EQ(j["entries"].size(), pak.entries().size());
        for (size_t i = 0; i < pak.entries().size(); ++i) {
            EXPECT_EQ(utf8_to_bytes(j["entries"][i]["name"].get<std::string>()), pak.entries()[i].name);
            EXPECT_EQ(j["entries"][i]["size"], pak.entries()[i].size);
        }
    }
}

TEST(PakCli, ExtractRefusesUnsafeEntries) {
    const std::string csgo = path("src_v21_csgo/csgo_ar_monastery.bsp");
    const std::string dir = temp_dir("pak_cli_x");
    const auto all = run_cli({"pak", "extract", csgo, "-o", dir + "/all"});
    EXPECT_EQ(all.exit_code, 1);
    EXPECT_NE(all.err.find("d:\\dev\\csgo"), std::string::npos) << all.err;
    EXPECT_FALSE(fs::exists(dir + "/all"));
    const auto some = run_cli({"pak", "extract", csgo, "-o", dir + "/some", "*.txt", "*radar*"});
    ASSERT_EQ(some.exit_code, 0) << some.err;
    EXPECT_EQ(fs::file_size(dir + "/some/resource/overviews/ar_monastery.txt"), 257u);
    EXPECT_EQ(fs::file_size(dir + "/some/resource/overviews/ar_monastery_radar.dds"), 1048704u);
    const auto nomatch = run_cli({"pak", "extract", csgo, "-o", dir + "/none", "*.mdl"});
    EXPECT_EQ(nomatch.exit_code, 1);
    EXPECT_FALSE(fs::exists(dir + "/none"));
}

TEST(PakCli, AddThenRemove) {
    const std::string dir = temp_dir("pak_cli_edit");
    const std::string src = path("src_v20/tf2_mp_lobby.bsp");  // an empty pakfile
    write_file_atomic(dir + "/readme.txt", Bytes{'h', 'i', '\n'});
    write_file_atomic(dir + "/other.txt", Bytes{'x'});
    const auto add = run_cli({"pak", "add", src, "docs/readme.txt=" + dir + "/readme.txt",
                              "docs/other.txt=" + dir + "/other.txt", "-o", dir + "/added.bsp"});
    ASSERT_EQ(add.exit_code, 0) << add.err;
    const auto list = nlohmann::json::parse(run_cli({"pak", "list", dir + "/added.bsp", "--json"}).out);
    ASSERT_EQ(list["entries"].size(), 2u);
    EXPECT_EQ(list["entries"][0]["name"], "docs/readme.txt");
    EXPECT_EQ(list["entries"][0]["size"], 3);
    const auto rm = run_cli({"pak", "remove", dir + "/added.bsp", "docs/r*", "-o", dir + "/removed.bsp"});
    ASSERT_EQ(rm.exit_code, 0) << rm.err;
    const auto left = nlohmann::json::parse(run_cli({"pak", "list", dir + "/removed.bsp", "--json"}).out);
    ASSERT_EQ(left["entries"].size(), 1u);
    EXPECT_EQ(left["entries"][0]["name"], "docs/other.txt");
    const auto rm_all = run_cli({"pak", "remove", dir + "/removed.bsp", "*", "-o", dir + "/empty.bsp"});
    ASSERT_EQ(rm_all.exit_code, 0) << rm_all.err;
    // All lumps but the pakfile are those of the original.
    const Bsp a = Bsp::open(src), b = Bsp::open(dir + "/empty.bsp");
    for (size_t i = 0; i < a.lump_count(); ++i) {
        if (i == source_lump::pakfile || i == source_lump::game_lump) continue;
        EXPECT_EQ(Bytes(a.decoded(i).begin(), a.decoded(i).end()), Bytes(b.decoded(i).begin(), b.decoded(i).end())) << i;
    }
    const auto bad = run_cli({"pak", "remove", dir + "/removed.bsp", "nothing*", "-o", dir + "/bad.bsp"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_FALSE(fs::exists(dir + "/bad.bsp"));
}

TEST(EntitiesCli, BrokenLumpIsReportedAndCanBeReplaced) {
    const std::string dir = temp_dir("ent_cli_broken");
    const std::string text = "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"light\"\n";  // no closing brace
    Bytes lump0(text.begin(), text.end());
    lump0.push_back(0);
    Bytes header(4 + 4 + 19 * 8, 0);
    store<uint32_t>(header.data(), fourcc("IBSP"));
    store<int32_t>(header.data() + 4, 38);
    Bsp bsp = Bsp::parse(header, "broken.bsp");
    bsp.replace(0, lump0);
    bsp.save(dir + "/broken.bsp");
    const int64_t brace = Bsp::open(dir + "/broken.bsp").entry(0).offset + int64_t(text.rfind('{'));

    const auto r = run_cli({"entities", dir + "/broken.bsp"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("lump entities at offset " + std::to_string(brace)), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
    const std::string fixed = R"([{"pairs": [["classname", "worldspawn"], ["message", "fixed"]]}])";
    write_file_atomic(dir + "/fixed.json", Bytes(fixed.begin(), fixed.end()));
    const auto set = run_cli({"entities", dir + "/broken.bsp", "--set", dir + "/fixed.json", "-o", dir + "/fixed.bsp"});
    ASSERT_EQ(set.exit_code, 0) << set.err;
    const EntityLump lump = read_entities(Bsp::open(dir + "/fixed.bsp"));
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.entities[0].get("message"), "fixed");
}

// Source's newer branches separate the fields of an entity output with ESC
// (cstanks_env_gunfire_test: "tank_gunfire_example<ESC>Enable<ESC><ESC>0<ESC>-1").
// Into a pipe the text keeps those bytes (it parses back to the same
// entities); to a terminal, where ESC starts a command, they are shown as
// \x1b. The terminal is a real one: `script` (util-linux, in Debian's
// essential bsdutils) runs bspkit on a pseudo-terminal.
TEST(EntitiesCli, ControlBytesAreShownNotSentToATerminal) {
    const CorpusFile& f = corpus_file("src_v21_csgo/cstanks_env_gunfire_test.bsp");
    const auto piped = run_cli({"entities", f.path.string()});
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_NE(piped.out.find("tank_gunfire_example\x1b" "Enable"), std::string::npos);
    const auto terminal =
        run_program("/usr/bin/script", {"-qec", std::string(BSPKIT_CLI_PATH) + " entities '" + f.path.string() + "'", "/dev/null"});
    ASSERT_EQ(terminal.exit_code, 0) << "script (bsdutils) is needed: " << terminal.err;
    EXPECT_NE(terminal.out.find("tank_gunfire_example\\x1bEnable\\x1b\\x1b0\\x1b-1"), std::string::npos) << terminal.out;
    EXPECT_EQ(terminal.out.find('\x1b'), std::string::npos);
    EXPECT_NE(terminal.out.find("\"classname\" \"worldspawn\""), std::string::npos);
}
