// Visibility of every corpus file of every format bspkit reads (Source
// included): every PVS (and stored PAS) row decompresses inside its lump,
// every cluster sees itself, stored PAS contains the PVS, leaves name
// clusters that exist, Quake 3 rows have q3map2's 64-bit padded size.
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/visibility.hpp>

#include "corpus.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> readable_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f.relpath);
    return out;
}

bool bit(const Bytes& row, size_t i) { return (row[i >> 3] >> (i & 7)) & 1; }

std::vector<std::string> quake3_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f) == "quake3") out.push_back(f.relpath);
    return out;
}

class VisCorpus : public ::testing::TestWithParam<std::string> {};
class Quake3VisCorpus : public ::testing::TestWithParam<std::string> {};

}  // namespace

// pvs_sees(from, to), which reads a row only as far as `to`'s byte, gives
// every bit of the whole row pvs() decodes (up to 300 rows a map, all their
// bits); on a copy whose vis lump is cut in half (where Visibility::of still
// takes it), the bits of rows read before the cut still agree; in rows the cut
// ends, a bit before it is the whole lump's and the others are nothing.
TEST_P(VisCorpus, PvsSeesIsTheBitOfTheWholeRow) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bytes bytes = read_corpus(file);
    const Bsp bsp = Bsp::parse(bytes, file.relpath);
    const Visibility vis = Visibility::of(bsp);
    const size_t n = vis.clusters();
    const size_t step = std::max<size_t>(1, n / 300);
    size_t checked = 0;
    for (size_t from = 0; from < n; from += step) {
        const Bytes row = vis.pvs(from);
        for (size_t to = 0; to < n; ++to) {
            const auto seen = vis.pvs_sees(from, to);
            ASSERT_TRUE(seen.has_value()) << "cluster " << from << " -> " << to;
            ASSERT_EQ(*seen, bit(row, to)) << "cluster " << from << " -> " << to;
            ++checked;
        }
    }
    if (n) {
        EXPECT_THROW((void)vis.pvs_sees(0, n), std::out_of_range);
    }
    if (vis.encoding() == Visibility::Encoding::none || vis.lump().size() < 16) return;
    // The vis lump cut in half: the lumps after it move nothing (a copy with
    // the lump's length halved in the directory is enough for the reader).
    const auto lump = bsp.find_lump(vis.lump_name());
    ASSERT_TRUE(lump);
    Bsp cut = Bsp::parse(bytes, file.relpath);
    const ByteSpan whole = cut.decoded(*lump);
    cut.replace(*lump, Bytes(whole.begin(), whole.begin() + ptrdiff_t(whole.size() / 2)));
    std::optional<Visibility> cut_vis;
    try {
        cut_vis = Visibility::of(cut);
    } catch (const Error&) {
        return;  // refused at once: Quake 3's rows and small headers are checked whole
    }
    const Visibility& half = *cut_vis;
    ASSERT_EQ(half.clusters(), n);
    size_t nothing = 0;
    for (size_t from = 0; from < n; from += step) {
        const RowStatus status = half.row_status(from);
        const Bytes row = status == RowStatus::ok || status == RowStatus::overrun ? half.pvs(from) : Bytes();
        for (size_t to = 0; to < n; to += 7) {
            const auto seen = half.pvs_sees(from, to);
            if (!row.empty()) {
                ASSERT_EQ(seen, std::optional<bool>(bit(row, to))) << "cluster " << from << " -> " << to;
            } else if (!seen) {
                ++nothing;
            } else {  // a row cut after `to`'s byte: that bit is the whole lump's
                ASSERT_EQ(*seen, *vis.pvs_sees(from, to)) << "cluster " << from << " -> " << to;
            }
        }
    }
    std::printf("%s: %zu bits as the rows have them; cut in half: %zu bits unreadable\n", file.relpath.c_str(),
                checked, nothing);
}

TEST_P(VisCorpus, EveryRowDecompressesAndEveryClusterSeesItself) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    const Visibility vis = Visibility::of(bsp);
    const size_t n = vis.clusters();
    Bytes row(vis.row_bytes()), pas(vis.row_bytes());
    size_t self_missing = 0;
    for (size_t c = 0; c < n; ++c) {
        ASSERT_EQ(vis.pvs_into(c, row), RowStatus::ok) << "cluster " << c;
        EXPECT_EQ(row, vis.pvs(c));
        if (!bit(row, c)) ++self_missing;
        if (vis.pas_stored()) {
            ASSERT_EQ(vis.row_status(c, true), RowStatus::ok) << "PAS of cluster " << c;
            pas = vis.pas(c);
            for (size_t k = 0; k < vis.row_bytes(); ++k)
                ASSERT_EQ(row[k] & ~pas[k], 0) << "cluster " << c << ": PVS not inside the stored PAS";
        }
        // Bits past the cluster count are never set.
        if (n % 8) {
            EXPECT_EQ(row.back() >> (n % 8), 0) << "cluster " << c;
        }
    }
    EXPECT_EQ(self_missing, 0u) << "clusters that do not see themselves";
    // Computed PAS (the union of the visible clusters' PVS) on a sample: the
    // PVS inside it, and where the file stores none, exactly that union taken
    // here byte by byte (pas() reads each distinct row once).
    for (size_t c = 0; c < n; c += std::max<size_t>(1, n / 16)) {
        row = vis.pvs(c);
        pas = vis.pas(c);
        for (size_t k = 0; k < vis.row_bytes(); ++k) ASSERT_EQ(row[k] & ~pas[k], 0) << "cluster " << c;
        if (vis.pas_stored()) continue;
        Bytes expected = row;
        for (size_t v = 0; v < n; ++v) {
            if (v == c || !bit(row, v)) continue;
            const Bytes other = vis.pvs(v);
            for (size_t k = 0; k < expected.size(); ++k) expected[k] |= other[k];
        }
        EXPECT_EQ(pas, expected) << "cluster " << c;
    }
}

TEST_P(VisCorpus, LeavesNameClustersThatExist) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    const Visibility vis = Visibility::of(bsp);
    ASSERT_GT(vis.leaf_count(), 0u);
    std::vector<bool> used(vis.clusters(), false);
    for (size_t leaf = 0; leaf < vis.leaf_count(); ++leaf)
        if (const auto c = vis.cluster_of_leaf(leaf)) {
            ASSERT_LT(*c, vis.clusters());
            used[*c] = true;
        }
    EXPECT_EQ(size_t(std::count(used.begin(), used.end(), true)), vis.clusters()) << "clusters without a leaf";
    if (vis.leaf_based() && vis.encoding() != Visibility::Encoding::nightfire_leaf) {
        const quake1::Map map(bsp);
        EXPECT_EQ(int64_t(vis.clusters()), map.models()[0].visleafs);
        EXPECT_FALSE(vis.cluster_of_leaf(0));
    }
    if (vis.leaf_based()) {
        for (size_t c = 0; c < vis.clusters(); ++c) EXPECT_EQ(vis.cluster_of_leaf(c + 1), c);
    }
}

TEST_P(Quake3VisCorpus, RowsArePaddedTo64Bits) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    ASSERT_EQ(bsp.format(), Format::quake3);
    const quake3::Map map(bsp);
    const auto header = map.visdata_header();
    if (!header) {
        EXPECT_TRUE(map.visdata().empty());
        EXPECT_EQ(Visibility::of(bsp).encoding(), Visibility::Encoding::none);
        return;
    }
    EXPECT_EQ(header->sizeVecs, ((header->numVecs + 63) & ~63) / 8);
    EXPECT_EQ(size_t(8) + size_t(header->numVecs) * size_t(header->sizeVecs), map.visdata().size());
    EXPECT_EQ(Visibility::of(bsp).stored_row_bytes(), size_t(header->sizeVecs));
}

TEST_P(VisCorpus, CliSummaryMatchesTheLibrary) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    const Visibility vis = Visibility::of(bsp);
    const auto r = run_cli({"vis", file.path.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["clusters"], vis.clusters());
    EXPECT_EQ(j["leaves"], vis.leaf_count());
    EXPECT_EQ(j["clusters_not_seeing_themselves"], 0);
    EXPECT_GT(j["average_visible_fraction"].get<double>(), 0.0);
    EXPECT_LE(j["largest_visible_fraction"].get<double>(), 1.0);
    if (vis.clusters()) {
        const auto one = run_cli({"vis", file.path.string(), "--cluster", std::to_string(vis.clusters() - 1), "--json"});
        ASSERT_EQ(one.exit_code, 0) << one.err;
        const auto o = nlohmann::json::parse(one.out);
        const Bytes row = vis.pvs(vis.clusters() - 1);
        size_t count = 0;
        for (size_t i = 0; i < vis.clusters(); ++i) count += bit(row, i);
        EXPECT_EQ(o["visible"].size(), count);
    }
}

// A map cut off in its leaf lump (a truncated download) is not a map of
// fewer clusters: `vis` stops with the lump and its offset, as the verbs that
// build geometry do, unless --salvage.
TEST_P(VisCorpus, CliRefusesATruncatedLeafLumpUnlessSalvage) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bytes bytes = read_corpus(file);
    const Bsp bsp = Bsp::parse(bytes, file.relpath);
    std::optional<size_t> leafs = bsp.find_lump("leafs");
    if (!leafs) leafs = bsp.find_lump("leaves");
    ASSERT_TRUE(leafs) << "no leaf lump";
    const LumpEntry e = bsp.entry(*leafs);
    ASSERT_GT(e.length, 1);
    if (uint64_t(e.offset) + uint64_t(e.length) > bytes.size()) GTEST_SKIP() << "the leaf lump is already cut short";
    const fs::path cut = fs::path(temp_dir("vis_truncated")) / "cut.bsp";
    const uint64_t kept = uint64_t(e.offset + e.length / 2);
    write_file_atomic(cut, ByteSpan(bytes).first(kept));
    // The refusal names the first lump vis reads that the cut reaches (the
    // leaf lump, or one the file holds after it), in the order vis asks for them.
    std::string where;
    for (const char* name : {"visibility", "visdata", "leafs", "leaves", "models"}) {
        const auto index = bsp.find_lump(name);
        if (!index || bsp.entry(*index).length == 0) continue;
        if (uint64_t(bsp.entry(*index).offset) + uint64_t(bsp.entry(*index).length) <= kept) continue;
        where = "lump " + std::string(name) + " at offset " + std::to_string(bsp.entry(*index).offset) + ": truncated";
        break;
    }
    ASSERT_FALSE(where.empty());
    for (const char* extra : {"", "--cluster"}) {
        std::vector<std::string> args = {"vis", cut.string()};
        if (*extra) args.insert(args.end(), {extra, "0"});
        const auto r = run_cli(args);
        EXPECT_EQ(r.exit_code, 1) << r.out;
        EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
    }
    const auto salvaged = run_cli({"vis", cut.string(), "--salvage"});
    EXPECT_TRUE(salvaged.exit_code == 0 || salvaged.exit_code == 1) << salvaged.exit_code << salvaged.err;
    EXPECT_EQ(salvaged.err.find(where), std::string::npos) << salvaged.err;  // a warning, not the refusal
    EXPECT_NE(salvaged.err.find("lump " + std::string(bsp.lump_name(*leafs)) + " at offset " + std::to_string(e.offset)),
              std::string::npos)
        << salvaged.err;  // its warning
}

INSTANTIATE_TEST_SUITE_P(Corpus, VisCorpus, ::testing::ValuesIn(readable_paths()),
                         [](const auto& info) { return test_name(info.param); });
INSTANTIATE_TEST_SUITE_P(Corpus, Quake3VisCorpus, ::testing::ValuesIn(quake3_paths()),
                         [](const auto& info) { return test_name(info.param); });

// A leaf's face-list entry naming a face past the map's faces names nothing:
// ClusterFaces leaves it out, so the tables the renderer and the viewer size
// by face_bound() stay within the map's faces. A damaged copy's entry naming
// face 268435921 made render::Scene::prepare fill 256 MB for it, and again
// for each frame's table (found by DamageConsistencyCorpus with the query and
// render verbs, seed 22: the test's process grew to 2.8 GB).
TEST(VisCorpusDamaged, FaceListEntriesPastTheFacesAreLeftOut) {
    size_t maps = 0;
    for (const auto& f : corpus_files()) {
        if (!expected_format(f)) continue;
        SCOPED_TRACE(f.relpath);
        Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
        std::optional<size_t> list;
        for (const char* name : {"marksurfaces", "leaffaces", "leaf_surfaces"})
            if (!list) list = bsp.find_lump(name);
        ASSERT_TRUE(list);
        const Visibility vis = Visibility::of(bsp);
        const ClusterFaces before = ClusterFaces::of(bsp, vis);
        const uint32_t size = bsp.record_size(*list);
        const ByteSpan decoded = bsp.decoded(*list);
        if (vis.clusters() == 0 || decoded.size() < size || before.face_bound() == 0) continue;
        // Every entry of the list names a face far past the end: 0xffff in 16-bit
        // lists, 0x0ffffff0 in 32-bit ones.
        Bytes bytes(decoded.begin(), decoded.end());
        for (size_t at = 0; at + size <= bytes.size(); at += size) {
            const uint32_t v = size == 2 ? 0xffffu : 0x0ffffff0u;
            for (uint32_t k = 0; k < size; ++k)
                bytes[at + k] = uint8_t(v >> (8 * (bsp.byte_order() == ByteOrder::big ? size - 1 - k : k)));
        }
        bsp.replace(*list, std::move(bytes));
        const ClusterFaces after = ClusterFaces::of(bsp, vis);
        EXPECT_EQ(after.face_bound(), 0u);
        EXPECT_EQ(after.listed().size(), 0u);
        ++maps;
    }
    EXPECT_GE(maps, 25u);
}
