// Entity lump parser and writer: edge cases, errors with offsets, hostile input.
#include <bspkit/entities.hpp>
#include <bspkit/glob.hpp>

#include "samples.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>

using namespace bspkit;

namespace {

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }
std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

std::vector<KeyValue> kv(std::initializer_list<std::pair<const char*, const char*>> list) {
    std::vector<KeyValue> out;
    for (const auto& [k, v] : list) out.push_back({k, v});
    return out;
}

/// Parses and returns the Error it throws (fails the test when none).
Error parse_error(std::string_view s, int64_t base = 1000, bool decoded = false) {
    const Bytes b = bytes(s);
    try {
        EntityLump::parse(b, {"t.bsp", "entities", base}, decoded);
    } catch (const Error& e) {
        return e;
    }
    ADD_FAILURE() << "no error for: " << s;
    return Error({}, "");
}

}  // namespace

TEST(Entities, ParsesPairsInOrderWithOffsets) {
    const std::string s = "{\n\"classname\" \"worldspawn\"\n\"wad\" \"a.wad\"\n}\n{\n\"classname\" \"light\"\n}\n";
    const auto lump = EntityLump::parse(bytes(s), {"t.bsp", "entities", 1000});
    ASSERT_EQ(lump.entities.size(), 2u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"classname", "worldspawn"}, {"wad", "a.wad"}}));
    EXPECT_EQ(lump.entities[1].pairs, kv({{"classname", "light"}}));
    EXPECT_EQ(lump.entities[0].offset, 1000);
    EXPECT_EQ(lump.entities[1].offset, 1000 + int64_t(s.find("}\n{") + 2));
    EXPECT_FALSE(lump.modified());
    EXPECT_EQ(lump.trailing_nuls(), 0u);
}

TEST(Entities, DuplicateKeysKeptInOrder) {
    const auto lump = EntityLump::parse(
        "{\n\"classname\" \"logic_relay\"\n\"OnTrigger\" \"a,Kill,,0,-1\"\n\"OnTrigger\" \"b,Kill,,0,-1\"\n"
        "\"OnTrigger\" \"c,Kill,,0,-1\"\n}\n");
    ASSERT_EQ(lump.entities.size(), 1u);
    const Entity& e = lump.entities[0];
    ASSERT_EQ(e.pairs.size(), 4u);
    EXPECT_EQ(e.get_all("OnTrigger"), (std::vector<std::string_view>{"a,Kill,,0,-1", "b,Kill,,0,-1", "c,Kill,,0,-1"}));
    EXPECT_EQ(e.get("OnTrigger"), "a,Kill,,0,-1");
    EXPECT_EQ(e.get("missing", "fallback"), "fallback");
    Entity copy = e;
    copy.set("OnTrigger", "x");  // first one only
    EXPECT_EQ(copy.get_all("OnTrigger")[0], "x");
    EXPECT_EQ(copy.get_all("OnTrigger")[1], "b,Kill,,0,-1");
    copy.set("targetname", "relay");  // appended
    EXPECT_EQ(copy.pairs.back(), (KeyValue{"targetname", "relay"}));
    EXPECT_EQ(copy.erase("OnTrigger"), 3u);
    EXPECT_EQ(copy.pairs.size(), 2u);
}

TEST(Entities, CommentsOutsideQuotesOnly) {
    const auto lump = EntityLump::parse(
        "// a comment before\n{ // after the brace\n\"classname\" \"info_target\" // after a pair\n"
        "// \"commented\" \"out\"\n\"url\" \"http://example.com//x\"\n}\n// trailing comment without newline");
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"classname", "info_target"}, {"url", "http://example.com//x"}}));
}

TEST(Entities, CrlfIsWhitespaceAndIsKeptWhenWriting) {
    const std::string s = "{\r\n\"classname\" \"worldspawn\"\r\n}\r\n{\r\n\"classname\" \"light\"\r\n}\r\n";
    auto lump = EntityLump::parse(s);
    ASSERT_EQ(lump.entities.size(), 2u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"classname", "worldspawn"}}));
    EXPECT_TRUE(lump.crlf());
    EXPECT_EQ(text(lump.canonical()), s);  // compiler form with CRLF line ends
    lump.entities[1].set("light", "300");
    EXPECT_EQ(text(lump.serialize()),
              "{\r\n\"classname\" \"worldspawn\"\r\n}\r\n{\r\n\"classname\" \"light\"\r\n\"light\" \"300\"\r\n}\r\n");
}

TEST(Entities, TrailingNulsToleratedAndKept) {
    const std::string s = std::string("{\n\"classname\" \"worldspawn\"\n}\n") + std::string(3, '\0');
    auto lump = EntityLump::parse(bytes(s));
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.trailing_nuls(), 3u);
    EXPECT_EQ(text(lump.serialize()), s);
    lump.entities[0].set("message", "hi");
    EXPECT_EQ(text(lump.serialize()),
              std::string("{\n\"classname\" \"worldspawn\"\n\"message\" \"hi\"\n}\n") + std::string(3, '\0'));
    // Whatever follows the first NUL is not entity text (the engines stop there).
    const auto after = EntityLump::parse(bytes(std::string("{\n\"a\" \"b\"\n}\n") + '\0' + "garbage {"));
    EXPECT_EQ(after.entities.size(), 1u);
}

TEST(Entities, OddWhitespaceAndLayout) {
    const auto lump = EntityLump::parse("  {\t\"a\"\t\t\"1\"   \"b\"\n\n\"2\"}{\"c\" \"3\"}\n\n\n");
    ASSERT_EQ(lump.entities.size(), 2u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"a", "1"}, {"b", "2"}}));
    EXPECT_EQ(lump.entities[1].pairs, kv({{"c", "3"}}));
    // An unchanged odd layout is written back as it was.
    EXPECT_EQ(text(lump.serialize()), "  {\t\"a\"\t\t\"1\"   \"b\"\n\n\"2\"}{\"c\" \"3\"}\n\n\n");
}

TEST(Entities, QuotesHaveNoEscapesAsInTheEngines) {
    // Windows paths end in a backslash: it must not escape the closing quote.
    auto lump = EntityLump::parse("{\n\"wad\" \"\\quake\\id1\\\"\n\"message\" \"line\\nbreak\"\n}\n");
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.entities[0].get("wad"), "\\quake\\id1\\");
    EXPECT_EQ(lump.entities[0].get("message"), "line\\nbreak");
    // A \" inside a value closes the string, as COM_Parse does; the rest pairs up as it falls.
    lump = EntityLump::parse("{\"message\" \"say \\\"hi\\\"\"}");
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"message", "say \\"}, {"hi\\", ""}}));
}

TEST(Entities, MultiLineValuesAndBareWords) {
    auto lump = EntityLump::parse("{\n\"message\" \"two\nlines\"\nclassname worldspawn\n}");
    ASSERT_EQ(lump.entities.size(), 1u);
    EXPECT_EQ(lump.entities[0].pairs, kv({{"message", "two\nlines"}, {"classname", "worldspawn"}}));
    // Canonical form quotes everything and parses back to the same list.
    const auto again = EntityLump::parse(lump.canonical());
    EXPECT_EQ(again.entities, lump.entities);
}

TEST(Entities, EmptyAndNewLumps) {
    auto empty = EntityLump::parse(Bytes{});
    EXPECT_TRUE(empty.entities.empty());
    EXPECT_TRUE(empty.serialize().empty());
    empty.entities.push_back({kv({{"classname", "worldspawn"}})});
    EXPECT_EQ(text(empty.serialize()), std::string("{\n\"classname\" \"worldspawn\"\n}\n") + '\0' );

    EntityLump fresh;
    EXPECT_FALSE(fresh.modified());
    fresh.entities.push_back({kv({{"classname", "worldspawn"}})});
    EXPECT_TRUE(fresh.modified());
    EXPECT_EQ(text(fresh.serialize()), std::string("{\n\"classname\" \"worldspawn\"\n}\n") + '\0' );

    const auto only_nul = EntityLump::parse(Bytes{0});
    EXPECT_TRUE(only_nul.entities.empty());
    EXPECT_EQ(only_nul.serialize(), Bytes{0});
}

TEST(Entities, UnterminatedQuoteGivesItsOffset) {
    const std::string s = "{\n\"classname\" \"worldspa";
    const Error e = parse_error(s);
    EXPECT_EQ(e.where().file, "t.bsp");
    EXPECT_EQ(e.where().lump, "entities");
    EXPECT_EQ(e.where().offset, 1000 + int64_t(s.rfind('"')));
    EXPECT_NE(e.detail().find("unterminated quoted string"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("t.bsp: lump entities at offset 1014"), std::string::npos) << e.what();
    // A NUL inside a quoted string ends the text first.
    const std::string n("{\"a\" \"b\0c\"}", 11);
    const Error en = parse_error(n);
    EXPECT_EQ(en.where().offset, 1000 + 5);
    EXPECT_NE(en.detail().find("NUL"), std::string::npos) << en.what();
}

TEST(Entities, UnterminatedBraceGivesItsOffset) {
    const std::string s = "{\n\"a\" \"b\"\n}\n{\n\"classname\" \"light\"\n";
    const Error e = parse_error(s);
    EXPECT_EQ(e.where().offset, 1000 + int64_t(s.rfind('{')));
    EXPECT_NE(e.detail().find("no closing '}'"), std::string::npos) << e.what();
    // Also when trailing NULs follow.
    const Error z = parse_error(s + std::string(2, '\0'), 0);
    EXPECT_EQ(z.where().offset, int64_t(s.rfind('{')));
}

TEST(Entities, StructureErrors) {
    Error e = parse_error("{\"a\"}");
    EXPECT_EQ(e.where().offset, 1004);
    EXPECT_NE(e.detail().find("has no value"), std::string::npos) << e.what();
    e = parse_error("\"a\" \"b\"");
    EXPECT_EQ(e.where().offset, 1000);
    EXPECT_NE(e.detail().find("expected '{'"), std::string::npos) << e.what();
    e = parse_error("{\n\"a\" \"b\"\n{\n");
    EXPECT_EQ(e.where().offset, 1010);
    EXPECT_NE(e.detail().find("unexpected '{'"), std::string::npos) << e.what();
    e = parse_error("}");
    EXPECT_EQ(e.where().offset, 1000);
    e = parse_error("{\"a\"", 1000);
    EXPECT_EQ(e.where().offset, 1001);
    // Decoded (LZMA) lumps also give the position within the decoded bytes.
    e = parse_error("{\"a\"}", 500, true);
    EXPECT_EQ(e.where().offset, 504);
    EXPECT_NE(e.detail().find("byte 4 of the LZMA-decoded lump"), std::string::npos) << e.what();
}

TEST(Entities, CanonicalRefusesWhatTheLumpCannotHold) {
    EntityLump lump;
    lump.entities.push_back({kv({{"message", "say \"hi\""}})});
    EXPECT_THROW(lump.serialize(), Error);
    lump.entities[0].pairs[0] = {"message", std::string("a\0b", 3)};
    EXPECT_THROW(lump.serialize(), Error);
    lump.entities[0].pairs[0] = {"ke\"y", "v"};
    EXPECT_THROW(lump.serialize(), Error);
}

TEST(Entities, RandomListsRoundTripThroughCanonicalForm) {
    std::mt19937 rng(1234);
    const std::string alphabet = std::string("abcXYZ019 _-/\\*{}()'\t\r\n,:;") + "\x01\x1b\x7f\x80\xc3\xa9\xff";
    auto random_string = [&](size_t max) {
        std::string s(rng() % (max + 1), ' ');
        for (char& c : s) c = alphabet[rng() % alphabet.size()];
        return s;
    };
    for (int round = 0; round < 300; ++round) {
        EntityLump lump;
        const size_t n = rng() % 6;
        for (size_t i = 0; i < n; ++i) {
            Entity e;
            const size_t pairs = rng() % 5;
            for (size_t k = 0; k < pairs; ++k) e.pairs.push_back({random_string(8), random_string(20)});
            lump.entities.push_back(std::move(e));
        }
        const Bytes written = lump.serialize();
        const auto back = EntityLump::parse(written);
        ASSERT_EQ(back.entities, lump.entities) << "round " << round;
        ASSERT_EQ(back.serialize(), written);
    }
}

TEST(Entities, HostileInputNeverCrashes) {
    const std::string good =
        "{\n\"classname\" \"worldspawn\"\n\"wad\" \"\\a\\b\"\n}\n{\n\"origin\" \"0 0 0\"\n// c\n\"classname\" \"light\"\n}\n";
    size_t errors = 0, parsed = 0;
    // Every truncation.
    for (size_t n = 0; n <= good.size(); ++n) {
        try {
            EntityLump::parse(std::string_view(good).substr(0, n));
            ++parsed;
        } catch (const Error&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 0u);
    EXPECT_GT(parsed, 0u);
    // Bit flips and random bytes.
    std::mt19937 rng(99);
    for (int round = 0; round < 2000; ++round) {
        Bytes b = bytes(good);
        if (round % 2) {
            for (int k = 0; k < 3; ++k) b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
        } else {
            b.resize(rng() % 200);
            for (auto& c : b) c = uint8_t(rng());
        }
        try {
            const auto lump = EntityLump::parse(b, {"f", "entities", 0});
            for (const Entity& e : lump.entities) ASSERT_GE(e.offset, 0);
        } catch (const Error& e) {
            ASSERT_GE(e.where().offset, 0);
            ASSERT_LE(e.where().offset, int64_t(b.size()));
        }
    }
    // Deep runs of braces and quotes.
    EXPECT_THROW(EntityLump::parse(std::string(100000, '{')), Error);
    EXPECT_THROW(EntityLump::parse(std::string(100000, '"')), Error);  // strings outside an entity
    const auto empties = EntityLump::parse("{" + std::string(100000, '"') + "}");  // 25000 pairs of empty strings
    ASSERT_EQ(empties.entities.size(), 1u);
    EXPECT_EQ(empties.entities[0].pairs.size(), 25000u);
}

TEST(Entities, Utf8MappingIsLossless) {
    for (int b = 0; b < 256; ++b) {
        const std::string raw(1, char(b));
        const std::string u = bytes_to_utf8(raw);
        EXPECT_NO_THROW((void)nlohmann::json(u).dump()) << b;
        EXPECT_EQ(utf8_to_bytes(u), raw) << b;
    }
    EXPECT_EQ(bytes_to_utf8("h\xc3\xa9llo \xe6\x97\xa5"), "h\xc3\xa9llo \xe6\x97\xa5");  // valid UTF-8 unchanged
    const std::string real_escape = "\xee\xbe\x80";  // U+EF80 itself
    EXPECT_NE(bytes_to_utf8(real_escape), real_escape);
    EXPECT_EQ(utf8_to_bytes(bytes_to_utf8(real_escape)), real_escape);
    std::mt19937 rng(5);
    for (int round = 0; round < 500; ++round) {
        std::string raw(rng() % 40, ' ');
        for (char& c : raw) c = char(rng());
        const std::string u = bytes_to_utf8(raw);
        ASSERT_NO_THROW((void)nlohmann::json(u).dump());
        ASSERT_EQ(utf8_to_bytes(u), raw);
    }
}

TEST(Entities, ReadAndWriteThroughTheContainer) {
    for (const auto& sample : samples::all()) {
        SCOPED_TRACE(sample.name);
        Bsp bsp = Bsp::parse(sample.bytes, sample.name);
        const size_t index = entity_lump_index(bsp);
        const EntityLump lump = read_entities(bsp);
        // The samples carry a worldspawn and an info_player_start (src/samples/samples.cpp).
        ASSERT_EQ(lump.entities.size(), 2u);
        EXPECT_EQ(lump.entities[0].get("classname"), "worldspawn");
        EXPECT_EQ(lump.entities[1].get("origin"), "0 0 64");
        EXPECT_EQ(lump.entities[0].offset, bsp.entry(index).offset);  // the text starts with '{' 
        EXPECT_FALSE(write_entities(bsp, lump));  // unchanged: nothing replaced
        EXPECT_EQ(bsp.serialize(), sample.bytes);

        EntityLump edited = lump;
        edited.entities[1].set("origin", "16 32 64");
        const bool was_compressed = bsp.compressed(index);
        EXPECT_TRUE(write_entities(bsp, edited));
        const Bsp back = Bsp::parse(bsp.serialize(), sample.name);
        EXPECT_EQ(read_entities(back).entities, edited.entities);
        EXPECT_EQ(back.compressed(index), was_compressed);
    }
}

TEST(Entities, BlueShiftKeepsThemInLumpOne) {
    const FormatLayout& layout = layouts::goldsrc_bshift();
    std::vector<Bytes> lumps(layout.lumps.size());
    lumps[0] = Bytes(6 * 20, 0);  // planes first
    lumps[1] = bytes("{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"monster_barney\"\n}\n");
    lumps[1].push_back(0);
    Bsp bsp = Bsp::parse(samples::build(layout, 30, lumps), "bshift.bsp");
    ASSERT_EQ(bsp.layout().variant, "bshift");
    EXPECT_EQ(entity_lump_index(bsp), 1u);
    EntityLump lump = read_entities(bsp);
    ASSERT_EQ(lump.entities.size(), 2u);
    EXPECT_EQ(lump.entities[1].get("classname"), "monster_barney");
    EXPECT_EQ(lump.entities[0].offset, bsp.entry(1).offset);
    lump.entities[1].set("targetname", "calhoun");
    ASSERT_TRUE(write_entities(bsp, lump));
    const Bsp back = Bsp::parse(bsp.serialize(), "bshift2.bsp");
    EXPECT_EQ(back.layout().variant, "bshift");
    EXPECT_EQ(read_entities(back).entities, lump.entities);
    EXPECT_EQ(Bytes(back.decoded(0).begin(), back.decoded(0).end()), lumps[0]);
}

TEST(Entities, ErrorsNameTheFileLumpAndAbsoluteOffset) {
    const FormatLayout& layout = layouts::quake2();
    std::vector<Bytes> lumps(layout.lumps.size());
    lumps[0] = bytes("{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"light\n");
    lumps[0].push_back(0);
    const Bsp bsp = Bsp::parse(samples::build(layout, 38, lumps), "broken.bsp");
    try {
        read_entities(bsp);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "broken.bsp");
        EXPECT_EQ(e.where().lump, "entities");
        const std::string_view s(reinterpret_cast<const char*>(lumps[0].data()), lumps[0].size());
        EXPECT_EQ(e.where().offset, bsp.entry(0).offset + int64_t(s.rfind('"')));
    }
}

TEST(Glob, StarQuestionAndCase) {
    EXPECT_TRUE(glob_match("light*", "light_spot"));
    EXPECT_TRUE(glob_match("*", ""));
    EXPECT_TRUE(glob_match("a?c", "abc"));
    EXPECT_FALSE(glob_match("a?c", "ac"));
    EXPECT_TRUE(glob_match("*.vtf", "materials/maps/x/c0_0_0.vtf"));
    EXPECT_TRUE(glob_match("materials/*/c?_*", "materials/maps/x/c0_0_0.vtf"));
    EXPECT_FALSE(glob_match("*.vmt", "materials/maps/x/c0_0_0.vtf"));
    EXPECT_FALSE(glob_match("Light*", "light"));
    EXPECT_TRUE(glob_match("Light*", "light", true));
    EXPECT_TRUE(glob_match("", ""));
    EXPECT_FALSE(glob_match("", "a"));
    // No exponential blow-up on adversarial patterns.
    EXPECT_FALSE(glob_match(std::string(50, '*') + "b", std::string(5000, 'a')));
}
