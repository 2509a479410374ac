// The entity lump of every corpus file bspkit reads: parsed, checked against a
// line-by-line reading of the text, written back unchanged byte for byte,
// and edited and saved.
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>

#include "corpus.hpp"
#include "decoded_lumps.hpp"
#include "run.hpp"

#include <gtest/gtest.h>

using namespace bspkit;
using namespace bspkit::test;

namespace {

class EntitiesCorpus : public ::testing::TestWithParam<std::string> {
protected:
    const CorpusFile& file() const { return corpus_file(GetParam()); }
};

std::vector<std::string> readable_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f.relpath);
    return out;
}

/// An independent reading of compiler-written entity text: one '{', '}' or
/// "key" "value" per line (CR stripped), stopping at the first NUL.
std::vector<std::vector<KeyValue>> read_lines(ByteSpan text) {
    std::string s(text.begin(), text.end());
    s = s.substr(0, s.find('\0'));
    std::vector<std::vector<KeyValue>> out;
    size_t start = 0;
    while (start < s.size()) {
        size_t end = s.find('\n', start);
        if (end == std::string::npos) end = s.size();
        std::string line = s.substr(start, end - start);
        start = end + 1;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line == "{") {
            out.emplace_back();
        } else if (line == "}" || line.empty()) {
            continue;
        } else {
            // "key" "value": the key ends at the second quote, the value is
            // between the third and the last quote.
            const size_t q1 = line.find('"'), q2 = line.find('"', q1 + 1), q3 = line.find('"', q2 + 1);
            const size_t q4 = line.rfind('"');
            EXPECT_TRUE(q1 == 0 && q3 != std::string::npos && q4 == line.size() - 1 && q4 > q3) << line;
            if (out.empty() || q3 == std::string::npos) continue;
            out.back().push_back({line.substr(q1 + 1, q2 - q1 - 1), line.substr(q3 + 1, q4 - q3 - 1)});
        }
    }
    return out;
}

/// The text with empty lines (before the first NUL) removed.
Bytes without_blank_lines(ByteSpan text) {
    const std::string s(text.begin(), text.end());
    const size_t nul = std::min(s.find('\0'), s.size());
    std::string out;
    size_t start = 0;
    while (start < nul) {
        size_t end = s.find('\n', start);
        if (end == std::string::npos || end > nul) end = nul;
        const std::string line = s.substr(start, end - start);
        if (!line.empty() && line != "\r") out += line + (end < nul ? "\n" : "");
        start = end + 1;
    }
    out += s.substr(nul);
    return Bytes(out.begin(), out.end());
}

}  // namespace

TEST_P(EntitiesCorpus, ParsesAsTheLinesSay) {
    const Bsp bsp = Bsp::parse(read_corpus(file()), file().relpath);
    const size_t index = entity_lump_index(bsp);
    const EntityLump lump = read_entities(bsp);
    const auto expected = read_lines(bsp.decoded(index));
    ASSERT_EQ(lump.entities.size(), expected.size());
    ASSERT_FALSE(lump.entities.empty());
    for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(lump.entities[i].pairs, expected[i]) << "entity " << i;
    // "The first entity is always worldspawn" (Source BSP format doc; true of every engine here).
    EXPECT_EQ(lump.entities[0].get("classname"), "worldspawn");
    // Entity offsets point at a '{' of the file (uncompressed lumps).
    if (!bsp.compressed(index)) {
        for (const Entity& e : lump.entities) ASSERT_EQ(bsp.file_bytes()[size_t(e.offset)], '{');
    }
}

TEST_P(EntitiesCorpus, UnchangedRoundTripIsByteIdentical) {
    const Bytes original = read_corpus(file());
    Bsp bsp = Bsp::parse(original, file().relpath);
    const size_t index = entity_lump_index(bsp);
    const EntityLump lump = read_entities(bsp);
    const ByteSpan text = bsp.decoded(index);
    EXPECT_EQ(lump.serialize(), Bytes(text.begin(), text.end()));
    // The compilers wrote the canonical form (line ends and trailing NULs as
    // found); some files also carry blank lines (q2_base1), which it drops.
    EXPECT_EQ(lump.canonical(), without_blank_lines(text));
    // Parsing the canonical form again gives the same list.
    EXPECT_EQ(EntityLump::parse(lump.canonical()).entities, lump.entities);
    EXPECT_FALSE(write_entities(bsp, lump));
    EXPECT_EQ(bsp.serialize(), original);
}

TEST_P(EntitiesCorpus, EditedValueIsSavedAndNothingElseChanges) {
    Bsp bsp = Bsp::open(file().path);
    const size_t index = entity_lump_index(bsp);
    const bool compressed = bsp.compressed(index);
    const auto before = decoded_lumps(bsp, {index});
    EntityLump lump = read_entities(bsp);
    KeyValue& target = lump.entities.back().pairs.back();
    target.value += " (edited by bspkit)";
    ASSERT_TRUE(lump.modified());
    ASSERT_TRUE(write_entities(bsp, lump));
    const std::string out = temp_dir("ent_corpus") + "/edited.bsp";
    bsp.save(out);

    const Bsp back = Bsp::open(out);
    EXPECT_EQ(back.format(), bsp.format());
    EXPECT_EQ(back.compressed(index), compressed);
    const EntityLump reread = read_entities(back);
    EXPECT_EQ(reread.entities, lump.entities);
    EXPECT_EQ(reread.entities.back().pairs.back().value, target.value);
    const auto after = decoded_lumps(back, {index});
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(after[i], before[i]) << "lump/game lump " << i;
}

INSTANTIATE_TEST_SUITE_P(Corpus, EntitiesCorpus, ::testing::ValuesIn(readable_paths()),
                         [](const auto& info) { return test_name(info.param); });
