// The pakfile of every Source corpus map, compared with libzip (an
// independent zip reader), extracted safely, and edited (add + remove).
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>

#include "corpus.hpp"
#include "decoded_lumps.hpp"
#include "run.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <zip.h>

#include <filesystem>
#include <set>

using namespace bspkit;
using namespace bspkit::source;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

class PakCorpus : public ::testing::TestWithParam<std::string> {
protected:
    const CorpusFile& file() const { return corpus_file(GetParam()); }
};

std::vector<std::string> source_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f) == "source") out.push_back(f.relpath);
    return out;
}

struct ZipView {
    bool opened = false;
    std::string error;
    std::vector<zip_stat_t> stats;  ///< name pointers cleared: see names
    std::vector<std::string> names;
    std::vector<Bytes> contents;  ///< empty for entries libzip cannot decode (LZMA)
};

ZipView libzip_view(ByteSpan zip) {
    ZipView v;
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_buffer_create(zip.data(), zip.size(), 0, &error);
    zip_t* z = zip_open_from_source(src, ZIP_RDONLY, &error);
    if (!z) {
        v.error = zip_error_strerror(&error);
        zip_source_free(src);
        zip_error_fini(&error);
        return v;
    }
    v.opened = true;
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
        zip_stat_t st;
        zip_stat_index(z, zip_uint64_t(i), ZIP_FL_ENC_RAW, &st);
        v.names.emplace_back(st.name);
        st.name = nullptr;
        v.stats.push_back(st);
        Bytes data;
        if (zip_file_t* f = zip_fopen_index(z, zip_uint64_t(i), 0)) {
            data.resize(st.size);
            EXPECT_EQ(zip_fread(f, data.data(), data.size()), zip_int64_t(data.size()));
            zip_fclose(f);
        }
        v.contents.push_back(std::move(data));
    }
    zip_discard(z);
    zip_error_fini(&error);
    return v;
}

/// Names found by walking the central directory by hand (for archives libzip refuses).
std::vector<std::string> central_names(ByteSpan zip) {
    std::vector<std::string> names;
    size_t end = zip.size() - 22;
    while (end > 0 && load<uint32_t>(zip.data() + end) != 0x06054b50u) --end;
    const uint32_t cd = load<uint32_t>(zip.data() + end + 16);
    for (size_t p = cd; p + 46 <= end; ++p)
        if (load<uint32_t>(zip.data() + p) == 0x02014b50u) {
            const uint16_t n = load<uint16_t>(zip.data() + p + 28);
            names.emplace_back(reinterpret_cast<const char*>(zip.data() + p + 46), n);
            p += 45 + n;
        }
    return names;
}


}  // namespace

TEST_P(PakCorpus, ListMatchesAnIndependentReader) {
    const Bsp bsp = Bsp::parse(read_corpus(file()), file().relpath);
    const Pakfile pak = Pakfile::read(bsp);
    const ByteSpan lump = bsp.decoded(source_lump::pakfile);
    const ZipView view = libzip_view(lump);
    if (view.opened) {
        ASSERT_EQ(pak.entries().size(), view.stats.size());
        for (size_t i = 0; i < view.stats.size(); ++i) {
            const PakEntry& e = pak.entries()[i];
            EXPECT_EQ(e.name, view.names[i]);
            EXPECT_EQ(e.size, view.stats[i].size);
            EXPECT_EQ(e.compressed_size, view.stats[i].comp_size);
            EXPECT_EQ(e.method, view.stats[i].comp_method);
            EXPECT_EQ(e.crc32, view.stats[i].crc);
            EXPECT_EQ(pak.extract(i), view.contents[i]) << e.name;
        }
        EXPECT_TRUE(pak.diagnostics().empty());
    } else {
        // Only the Xbox 360 map's central directory is refused by libzip (see source_pakfile.hpp).
        EXPECT_EQ(file().folder, "src_console") << view.error;
        EXPECT_FALSE(pak.diagnostics().empty());
        const auto names = central_names(lump);
        ASSERT_EQ(pak.entries().size(), names.size());
        for (size_t i = 0; i < names.size(); ++i) {
            EXPECT_EQ(pak.entries()[i].name, names[i]);
            EXPECT_EQ(pak.extract(i).size(), pak.entries()[i].size);  // CRC-checked inside
        }
    }
}

// Pakfile::read views the mapped file instead of copying the lump: the
// pakfile keeps the mapping alive after the Bsp is gone (reading an unmapped
// page would crash), and reads the same entries as one parsed from a copy.
TEST_P(PakCorpus, ReadFromTheMappingOutlivesTheBsp) {
    std::optional<Pakfile> viewed;
    Bytes lump;
    {
        const Bsp bsp = Bsp::open(file().path);
        viewed = Pakfile::read(bsp);
        const ByteSpan stored = bsp.stored(source_lump::pakfile);
        lump.assign(stored.begin(), stored.end());
    }  // the Bsp and its own hold on the mapping are gone here
    EXPECT_EQ(viewed->serialize(), lump);
    const Pakfile copied = Pakfile::parse(lump, {file().relpath, "pakfile", -1});
    ASSERT_EQ(viewed->entries().size(), copied.entries().size());
    for (size_t i = 0; i < copied.entries().size(); ++i) {
        EXPECT_EQ(viewed->entries()[i].name, copied.entries()[i].name);
        EXPECT_EQ(viewed->extract(i), copied.extract(i)) << copied.entries()[i].name;
    }
}

TEST_P(PakCorpus, AddAndRemoveRoundTrip) {
    Bsp bsp = Bsp::open(file().path);
    const Pakfile original = Pakfile::read(bsp);
    const ByteSpan original_lump = bsp.decoded(source_lump::pakfile);
    const Bytes original_bytes(original_lump.begin(), original_lump.end());
    const auto before = decoded_lumps(bsp, {source_lump::pakfile});
    const std::vector<GameLump> games_before = bsp.game_lumps();

    Pakfile pak = original;
    const Bytes note(1000, 'n');
    pak.add("bspkit/test note.txt", note);
    ASSERT_TRUE(pak.write_to(bsp));
    const std::string dir = temp_dir("pak_corpus");
    bsp.save(dir + "/added.bsp");

    Bsp added = Bsp::open(dir + "/added.bsp");
    EXPECT_EQ(decoded_lumps(added, {source_lump::pakfile}), before);
    const Pakfile reread = Pakfile::read(added);
    ASSERT_EQ(reread.entries().size(), original.entries().size() + 1);
    for (size_t i = 0; i < original.entries().size(); ++i) EXPECT_EQ(reread.entries()[i].name, original.entries()[i].name);
    EXPECT_EQ(reread.extract(reread.entries().size() - 1), note);
    const ZipView view = libzip_view(added.decoded(source_lump::pakfile));
    if (file().folder != "src_console") {
        ASSERT_TRUE(view.opened) << view.error;
        ASSERT_EQ(view.stats.size(), reread.entries().size());
        EXPECT_EQ(view.names.back(), "bspkit/test note.txt");
        EXPECT_EQ(view.contents.back(), note);
    }
    // Game lumps keep their ids and point at their (unchanged) data.
    ASSERT_EQ(added.game_lumps().size(), games_before.size());
    for (size_t k = 0; k < games_before.size(); ++k) EXPECT_EQ(added.game_lumps()[k].id, games_before[k].id);

    Pakfile removing = Pakfile::read(added);
    EXPECT_EQ(removing.remove_matching("BSPKIT/*"), 1u);
    ASSERT_TRUE(removing.write_to(added));
    added.save(dir + "/removed.bsp");
    const Bsp removed = Bsp::open(dir + "/removed.bsp");
    const ByteSpan lump = removed.decoded(source_lump::pakfile);
    EXPECT_EQ(Bytes(lump.begin(), lump.end()), original_bytes);
    EXPECT_EQ(decoded_lumps(removed, {source_lump::pakfile}), before);
}

INSTANTIATE_TEST_SUITE_P(Corpus, PakCorpus, ::testing::ValuesIn(source_paths()),
                         [](const auto& info) { return test_name(info.param); });

TEST(PakCorpusFiles, EverySourceFolderIsCovered) {
    std::set<std::string> folders;
    for (const auto& path : source_paths()) folders.insert(corpus_file(path).folder);
    for (const char* f : {"src_console", "src_v17", "src_v19", "src_v20", "src_v20_lzma", "src_v21", "src_v21_csgo"})
        EXPECT_TRUE(folders.count(f)) << f;
}

TEST(PakCorpusFiles, MonasteryCarriesA169MegabytePakfile) {
    const Bsp bsp = Bsp::open(corpus_file("src_v21_csgo/csgo_ar_monastery.bsp").path);
    const Pakfile pak = Pakfile::read(bsp);
    EXPECT_EQ(bsp.entry(source_lump::pakfile).length, 1690453);  // "1.69 MB embedded pakfile" (MANIFEST.tsv)
    const ZipView view = libzip_view(bsp.decoded(source_lump::pakfile));
    ASSERT_TRUE(view.opened);
    ASSERT_EQ(pak.entries().size(), view.stats.size());
    uint64_t total = 0;
    for (const auto& e : pak.entries()) total += e.size;
    uint64_t expected = 0;
    for (const auto& st : view.stats) expected += st.size;
    EXPECT_EQ(total, expected);
    EXPECT_GT(total, 1600000u);

    // One entry carries a Windows absolute path: a full extraction refuses before writing.
    const fs::path dir = fs::path(temp_dir("monastery")) / "out";
    try {
        extract_to(pak, dir);
        FAIL() << "extraction did not refuse d:\\dev\\...";
    } catch (const Error& e) {
        EXPECT_NE(e.detail().find("d:\\dev\\csgo\\game\\csgo\\maps\\workshop_empty_room.nav"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(dir));
    // The safe entries extract, with the engine's '\' separator.
    const std::vector<std::string> patterns = {"resource/*", "maps\\*"};
    const auto summary = extract_to(pak, dir, patterns);
    EXPECT_EQ(summary.files, 5u);
    EXPECT_EQ(fs::file_size(dir / "resource/overviews/ar_monastery_radar.dds"), 1048704u);
    EXPECT_EQ(fs::file_size(dir / "maps/workshop_empty_room.nav"), 200u);
    EXPECT_EQ(fs::file_size(dir / "maps/wotemp/ar_monastery.nav"), 200u);
}
