// Source pakfile: zips built here by hand (independent of the code under
// test), hostile entry names, LZMA entries, editing, hostile archives, and
// game lump offsets after the pakfile grows.
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>

#include "run.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>
#include <lzma.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <random>

using namespace bspkit;
using namespace bspkit::source;
namespace fs = std::filesystem;

namespace {

Bytes bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

struct ZipItem {
    std::string name;
    Bytes data;
    bool lzma = false;
    bool declare_missing_extra = false;  ///< Xbox 360 style: central record declares extra bytes it lacks
};

uint32_t crc(const Bytes& b) { return lzma_crc32(b.data(), b.size(), 0); }

/// A zip LZMA (method 14) payload: version, properties size, properties, LZMA1 stream with end marker.
Bytes lzma_payload(const Bytes& data) {
    lzma_options_lzma options{};
    lzma_lzma_preset(&options, 6);
    options.dict_size = 1u << 16;
    const lzma_filter filters[] = {{LZMA_FILTER_LZMA1, &options}, {LZMA_VLI_UNKNOWN, nullptr}};
    lzma_stream s = LZMA_STREAM_INIT;
    EXPECT_EQ(lzma_raw_encoder(&s, filters), LZMA_OK);
    Bytes out(data.size() + data.size() / 2 + 1024);
    s.next_in = data.data();
    s.avail_in = data.size();
    s.next_out = out.data();
    s.avail_out = out.size();
    EXPECT_EQ(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
    out.resize(out.size() - s.avail_out);
    lzma_end(&s);
    Bytes payload = {9, 20, 5, 0};
    payload.push_back(uint8_t((options.pb * 5 + options.lp) * 9 + options.lc));
    append<uint32_t>(payload, options.dict_size);
    payload.insert(payload.end(), out.begin(), out.end());
    return payload;
}

/// A zip archive written field by field (APPNOTE), `prefix` bytes in front.
Bytes make_zip(const std::vector<ZipItem>& items, std::string_view comment = "", size_t prefix = 0) {
    Bytes out(prefix, 0xAB);
    std::vector<uint32_t> offsets;
    std::vector<Bytes> payloads;
    for (const ZipItem& it : items) {
        payloads.push_back(it.lzma ? lzma_payload(it.data) : it.data);
        offsets.push_back(uint32_t(out.size() - prefix));
        append<uint32_t>(out, 0x04034b50);
        append<uint16_t>(out, it.lzma ? 63 : 10);
        append<uint16_t>(out, it.lzma ? 2 : 0);
        append<uint16_t>(out, it.lzma ? 14 : 0);
        append<uint16_t>(out, 0);
        append<uint16_t>(out, 0x21);
        append<uint32_t>(out, crc(it.data));
        append<uint32_t>(out, uint32_t(payloads.back().size()));
        append<uint32_t>(out, uint32_t(it.data.size()));
        append<uint16_t>(out, uint16_t(it.name.size()));
        append<uint16_t>(out, it.declare_missing_extra ? 7 : 0);
        out.insert(out.end(), it.name.begin(), it.name.end());
        if (it.declare_missing_extra) out.insert(out.end(), 7, 0);
        out.insert(out.end(), payloads.back().begin(), payloads.back().end());
    }
    const size_t cd = out.size();
    for (size_t i = 0; i < items.size(); ++i) {
        const ZipItem& it = items[i];
        append<uint32_t>(out, 0x02014b50);
        append<uint16_t>(out, 20);
        append<uint16_t>(out, it.lzma ? 63 : 10);
        append<uint16_t>(out, it.lzma ? 2 : 0);
        append<uint16_t>(out, it.lzma ? 14 : 0);
        append<uint16_t>(out, 0);
        append<uint16_t>(out, 0x21);
        append<uint32_t>(out, crc(it.data));
        append<uint32_t>(out, uint32_t(payloads[i].size()));
        append<uint32_t>(out, uint32_t(it.data.size()));
        append<uint16_t>(out, uint16_t(it.name.size()));
        append<uint16_t>(out, it.declare_missing_extra ? 7 : 0);
        append<uint16_t>(out, 0);
        append<uint16_t>(out, 0);
        append<uint16_t>(out, 0);
        append<uint32_t>(out, 0);
        append<uint32_t>(out, offsets[i]);
        out.insert(out.end(), it.name.begin(), it.name.end());
    }
    const size_t cd_size = out.size() - cd;
    append<uint32_t>(out, 0x06054b50);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, uint16_t(items.size()));
    append<uint16_t>(out, uint16_t(items.size()));
    append<uint32_t>(out, uint32_t(cd_size));
    append<uint32_t>(out, uint32_t(cd - prefix));
    append<uint16_t>(out, uint16_t(comment.size()));
    out.insert(out.end(), comment.begin(), comment.end());
    return out;
}

/// What libzip (an independent reader) sees in an archive: name -> contents.
std::vector<std::pair<std::string, Bytes>> libzip_read(const Bytes& zip) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_buffer_create(zip.data(), zip.size(), 0, &error);
    zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!z) {
        zip_source_free(src);
        ADD_FAILURE() << "libzip refuses the archive: " << zip_error_strerror(&error);
        zip_error_fini(&error);
        return {};
    }
    std::vector<std::pair<std::string, Bytes>> out;
    for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
        zip_stat_t st;
        zip_stat_index(z, zip_uint64_t(i), 0, &st);
        Bytes data(st.size);
        zip_file_t* f = zip_fopen_index(z, zip_uint64_t(i), 0);
        EXPECT_NE(f, nullptr) << st.name;
        if (f) {
            EXPECT_EQ(zip_fread(f, data.data(), data.size()), zip_int64_t(data.size()));
            zip_fclose(f);
        }
        out.emplace_back(st.name, std::move(data));
    }
    zip_discard(z);
    zip_error_fini(&error);
    return out;
}

size_t files_below(const fs::path& dir) {
    if (!fs::exists(dir)) return 0;
    size_t n = 0;
    for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) ++n;
    return n;
}

const std::vector<ZipItem> kItems = {
    {"materials/maps/test/c0_0_0.vtf", bytes(std::string(3000, 'v'))},
    {"maps\\test.nav", bytes("nav data")},
    {"resource/overview.txt", bytes("\"overview\" { }\n")},
};

}  // namespace

TEST(Pakfile, ListsAndFindsEntries) {
    const Bytes zip = make_zip(kItems, "XZP1 0");
    const Pakfile pak = Pakfile::parse(zip, {"t.bsp", "pakfile", 5000});
    ASSERT_EQ(pak.entries().size(), 3u);
    EXPECT_EQ(pak.comment(), "XZP1 0");
    EXPECT_TRUE(pak.diagnostics().empty());
    for (size_t i = 0; i < kItems.size(); ++i) {
        EXPECT_EQ(pak.entries()[i].name, kItems[i].name);
        EXPECT_EQ(pak.entries()[i].size, kItems[i].data.size());
        EXPECT_EQ(pak.entries()[i].method_name(), "stored");
        EXPECT_EQ(pak.extract(i), kItems[i].data);
    }
    EXPECT_EQ(pak.entries()[0].header_offset, 0);
    EXPECT_EQ(pak.find("MAPS/TEST.NAV"), 1u);  // the engine's rule: no case, '\' = '/'
    EXPECT_FALSE(pak.find("maps/other.nav"));
    EXPECT_EQ(pak.match("*.vtf"), std::vector<size_t>{0});
    EXPECT_EQ(pak.match("maps/*"), std::vector<size_t>{1});
    EXPECT_EQ(pak.match("*"), (std::vector<size_t>{0, 1, 2}));
    EXPECT_FALSE(pak.modified());
    EXPECT_EQ(pak.serialize(), zip);
    EXPECT_TRUE(Pakfile::parse(Bytes{}).entries().empty());
}

TEST(Pakfile, ReadsLzmaEntries) {
    // Debian 12's libzip cannot read method 14; the pakfile reader decodes it with liblzma.
    std::string text;
    for (int i = 0; i < 500; ++i) text += "\"$basetexture\" \"concrete/floor_" + std::to_string(i % 7) + "\"\n";
    const std::vector<ZipItem> items = {{"materials/a.vmt", bytes(text), true}, {"b.txt", bytes("plain"), false}};
    const Bytes zip = make_zip(items);
    const Pakfile pak = Pakfile::parse(zip);
    ASSERT_EQ(pak.entries().size(), 2u);
    EXPECT_EQ(pak.entries()[0].method_name(), "lzma");
    EXPECT_LT(pak.entries()[0].compressed_size, pak.entries()[0].size);
    EXPECT_EQ(pak.extract(0), items[0].data);
    EXPECT_EQ(pak.extract(1), items[1].data);
    // Corrupt the stream: an Error, never garbage.
    Bytes bad = zip;
    bad[size_t(pak.entries()[0].data_offset) + 20] ^= 0xFF;
    EXPECT_THROW(Pakfile::parse(bad).extract(0), Error);
}

TEST(Pakfile, CrcMismatchIsAnError) {
    Bytes zip = make_zip(kItems);
    const Pakfile pak = Pakfile::parse(zip);
    zip[size_t(pak.entries()[1].data_offset)] ^= 1;
    try {
        Pakfile::parse(zip, {"t.bsp", "pakfile", 100}).extract(1);
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(e.detail().find("CRC"), std::string::npos) << e.what();
        EXPECT_NE(e.detail().find("maps\\test.nav"), std::string::npos) << e.what();
        EXPECT_EQ(e.where().offset, 100 + pak.entries()[1].data_offset);
    }
}

TEST(Pakfile, EntryPathRules) {
    EXPECT_EQ(entry_path("maps\\test.nav"), fs::path("maps/test.nav"));
    EXPECT_EQ(entry_path("./a//b/./c.txt"), fs::path("a/b/c.txt"));
    std::string why;
    for (const char* bad : {"../evil", "/abs", "C:\\x", "a\\..\\b", "a/../../b", "\\abs", "d:rel", "a/b:c", "", ".", "./"}) {
        EXPECT_FALSE(entry_path(bad, &why)) << bad;
        EXPECT_FALSE(why.empty()) << bad;
    }
    EXPECT_FALSE(entry_path(std::string_view("a\0b", 3)));
}

TEST(Pakfile, ExtractionRefusesHostileNamesBeforeWritingAnything) {
    for (const char* hostile : {"../evil", "/abs", "C:\\x", "a\\..\\b"}) {
        SCOPED_TRACE(hostile);
        // Harmless entries first: a naive extractor would have written them already.
        std::vector<ZipItem> items = kItems;
        items.push_back({hostile, bytes("pwned")});
        items.push_back({"after.txt", bytes("after")});
        const Pakfile pak = Pakfile::parse(make_zip(items), {"t.bsp", "pakfile", 0});
        const fs::path root = test::temp_dir("pak_hostile");
        const fs::path dir = root / "out";
        try {
            extract_to(pak, dir);
            FAIL() << "extraction did not refuse";
        } catch (const Error& e) {
            EXPECT_NE(e.detail().find(std::string("\"") + hostile + "\""), std::string::npos) << e.what();
            EXPECT_NE(e.detail().find("nothing was extracted"), std::string::npos) << e.what();
            EXPECT_EQ(e.where().offset, pak.entries()[3].header_offset);
        }
        EXPECT_EQ(files_below(root), 0u) << "something was written";
        EXPECT_FALSE(fs::exists(root / "evil"));
        EXPECT_FALSE(fs::exists("/abs"));
        // Selecting only the harmless entries works.
        const std::vector<std::string> patterns = {"*.vtf", "after.txt"};
        const auto summary = extract_to(pak, dir, patterns);
        EXPECT_EQ(summary.files, 2u);
        EXPECT_EQ(read_file(dir / "after.txt"), bytes("after"));
        EXPECT_EQ(read_file(dir / "materials/maps/test/c0_0_0.vtf"), kItems[0].data);
    }
}

TEST(Pakfile, ExtractionWritesEverythingSafeAndRefusesSymlinks) {
    const Pakfile pak = Pakfile::parse(make_zip(kItems));
    const fs::path dir = test::temp_dir("pak_extract");
    const auto summary = extract_to(pak, dir / "x");
    EXPECT_EQ(summary.files, 3u);
    EXPECT_EQ(summary.bytes, 3000u + 8u + 15u);
    EXPECT_EQ(read_file(dir / "x/maps/test.nav"), bytes("nav data"));  // '\' is a separator, as in the engine
    EXPECT_EQ(read_file(dir / "x/resource/overview.txt"), kItems[2].data);
    // A pattern that matches nothing writes nothing.
    const std::vector<std::string> none = {"*.mdl"};
    EXPECT_THROW(extract_to(pak, dir / "y", none), Error);
    EXPECT_FALSE(fs::exists(dir / "y"));
    // A symbolic link inside the target directory must not lead outside it.
    const fs::path outside = dir / "outside";
    fs::create_directories(outside);
    fs::create_directories(dir / "z");
    fs::create_symlink(outside, dir / "z" / "maps");
    EXPECT_THROW(extract_to(pak, dir / "z"), Error);
    EXPECT_EQ(files_below(outside), 0u);
    EXPECT_FALSE(fs::exists(dir / "z" / "materials"));
}

TEST(Pakfile, AddRemoveGiveValidZips) {
    const Bytes zip = make_zip(kItems, "XZP1 0");
    Pakfile pak = Pakfile::parse(zip);
    pak.add("maps\\new/readme.txt", bytes("hello"));
    EXPECT_TRUE(pak.modified());
    const Bytes added = pak.serialize();
    auto seen = libzip_read(added);
    ASSERT_EQ(seen.size(), 4u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(seen[i].first, kItems[i].name);
        EXPECT_EQ(seen[i].second, kItems[i].data);
    }
    EXPECT_EQ(seen[3].first, "maps/new/readme.txt");  // written with '/'
    EXPECT_EQ(seen[3].second, bytes("hello"));
    const Pakfile reread = Pakfile::parse(added);
    EXPECT_EQ(reread.comment(), "XZP1 0");
    ASSERT_EQ(reread.entries().size(), 4u);
    EXPECT_EQ(reread.entries()[3].method, kZipStored);
    EXPECT_EQ(reread.extract(3), bytes("hello"));

    // Replacing by the engine's name rule keeps the position.
    Pakfile again = Pakfile::parse(added);
    again.add("MAPS/TEST.NAV", bytes("new nav"));
    seen = libzip_read(again.serialize());
    ASSERT_EQ(seen.size(), 4u);
    EXPECT_EQ(seen[1].first, "MAPS/TEST.NAV");
    EXPECT_EQ(seen[1].second, bytes("new nav"));

    // Removing what was added gives the original archive back, byte for byte.
    Pakfile removed = Pakfile::parse(added);
    EXPECT_EQ(removed.remove_matching("maps/new/*"), 1u);
    EXPECT_EQ(removed.serialize(), zip);
    EXPECT_EQ(removed.remove_matching("*.vtf"), 1u);
    seen = libzip_read(removed.serialize());
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].first, "maps\\test.nav");
    EXPECT_EQ(removed.remove_matching("nothing*"), 0u);

    // Adding to an empty pakfile makes a new archive.
    Pakfile empty = Pakfile::parse(Bytes{});
    empty.add("a.txt", bytes("a"));
    seen = libzip_read(empty.serialize());
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].second, bytes("a"));

    // Names that would be unsafe to extract are refused.
    for (const char* bad : {"../evil", "/abs", "C:\\x", "a\\..\\b", "dir/"}) EXPECT_THROW(pak.add(bad, bytes("x")), Error) << bad;
}

TEST(Pakfile, ToleratesXboxCentralDirectoryAndShiftedOffsets) {
    std::vector<ZipItem> items = kItems;
    for (auto& it : items) it.declare_missing_extra = true;
    const Bytes xbox = make_zip(items, "XZP2 2048");
    // libzip refuses this layout; the engine (and bspkit) read it.
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_buffer_create(xbox.data(), xbox.size(), 0, &error);
    zip_t* z = zip_open_from_source(src, ZIP_RDONLY, &error);
    EXPECT_EQ(z, nullptr);
    if (z) zip_discard(z); else zip_source_free(src);
    zip_error_fini(&error);
    const Pakfile pak = Pakfile::parse(xbox);
    ASSERT_EQ(pak.entries().size(), 3u);
    EXPECT_EQ(pak.diagnostics().size(), 1u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(pak.extract(i), kItems[i].data);
    Pakfile edited = Pakfile::parse(xbox);
    edited.add("x.txt", bytes("x"));
    const Pakfile back = Pakfile::parse(edited.serialize());
    ASSERT_EQ(back.entries().size(), 4u);
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(back.extract(i), kItems[i].data);

    const Bytes shifted = make_zip(kItems, "", 64);
    const Pakfile s = Pakfile::parse(shifted);
    ASSERT_EQ(s.entries().size(), 3u);
    EXPECT_FALSE(s.diagnostics().empty());
    EXPECT_EQ(s.extract(2), kItems[2].data);
}

TEST(Pakfile, DeflateEntriesWrittenByLibzipDecode) {
    // An archive libzip (an independent writer) makes with its default method
    // (deflate), which the engine cannot read but bspkit extracts through zlib.
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_buffer_create(nullptr, 0, 0, &error);
    zip_source_keep(src);
    zip_t* z = zip_open_from_source(src, ZIP_TRUNCATE, &error);
    ASSERT_NE(z, nullptr);
    const std::string text(5000, 'q');
    zip_source_t* file = zip_source_buffer(z, text.data(), text.size(), 0);
    ASSERT_GE(zip_file_add(z, "deflated.txt", file, 0), 0);
    ASSERT_EQ(zip_close(z), 0);
    ASSERT_EQ(zip_source_open(src), 0);
    zip_source_seek(src, 0, SEEK_END);
    Bytes zip(size_t(zip_source_tell(src)));
    zip_source_seek(src, 0, SEEK_SET);
    ASSERT_EQ(zip_source_read(src, zip.data(), zip.size()), zip_int64_t(zip.size()));
    zip_source_close(src);
    zip_source_free(src);
    zip_error_fini(&error);

    const Pakfile pak = Pakfile::parse(zip);
    ASSERT_EQ(pak.entries().size(), 1u);
    EXPECT_EQ(pak.entries()[0].method_name(), "deflate");
    EXPECT_EQ(pak.extract(0), bytes(text));
}

TEST(Pakfile, HostileArchivesGiveErrors) {
    const Bytes zip = make_zip(kItems, "XZP1 0");
    // Every truncation: an Error (or, when only the comment is cut, a warning), never a crash.
    for (size_t n = 0; n < zip.size(); ++n) {
        const Bytes cut(zip.begin(), zip.begin() + ptrdiff_t(n));
        try {
            const Pakfile pak = Pakfile::parse(cut);
            for (size_t i = 0; i < pak.entries().size(); ++i) (void)pak.extract(i);
        } catch (const Error&) {
        }
    }
    // Bit flips anywhere.
    std::mt19937 rng(7);
    for (int round = 0; round < 3000; ++round) {
        Bytes b = zip;
        for (int k = 0; k < 2; ++k) b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
        try {
            const Pakfile pak = Pakfile::parse(b);
            for (size_t i = 0; i < pak.entries().size(); ++i) (void)pak.extract(i);
        } catch (const Error& e) {
            ASSERT_LE(e.where().offset, int64_t(b.size()));
        }
    }
    const size_t end = zip.size() - 22 - 6;
    auto with = [&](size_t at, auto value) {
        Bytes b = zip;
        store(b.data() + at, value);
        return b;
    };
    EXPECT_THROW(Pakfile::parse(with(end + 10, uint16_t(60000))), Error);      // huge entry count
    EXPECT_THROW(Pakfile::parse(with(end + 16, uint32_t(0xFFFFFFFF))), Error);  // zip64 marker
    EXPECT_THROW(Pakfile::parse(with(end + 12, uint32_t(0x7FFFFFF0))), Error);  // directory size
    const Pakfile pak = Pakfile::parse(zip);
    const size_t cd = size_t(pak.entries().back().data_offset) + kItems.back().data.size();
    EXPECT_THROW(Pakfile::parse(with(cd + 42, uint32_t(0x7FFFFFF0))), Error);  // local header offset
    EXPECT_THROW(Pakfile::parse(with(cd + 20, uint32_t(0x7FFFFFF0))), Error);  // compressed size
    EXPECT_THROW(Pakfile::parse(with(cd + 28, uint16_t(0xFFFF))), Error);      // name length
    EXPECT_THROW(Pakfile::parse(bytes("PK\x05\x06 not a zip at all")), Error);
    EXPECT_THROW(Pakfile::parse(Bytes(100, 0)), Error);
    // An LZMA entry claiming a huge size is refused before allocating it.
    std::vector<ZipItem> items = {{"a.txt", bytes("small"), true}};
    Bytes lz = make_zip(items);
    const Pakfile lp = Pakfile::parse(lz);
    const size_t lcd = size_t(lp.entries()[0].data_offset + lp.entries()[0].compressed_size);
    store<uint32_t>(lz.data() + lcd + 24, 0xF0000000u);
    EXPECT_THROW(Pakfile::parse(lz).extract(0), Error);
}

TEST(Pakfile, NonSourceMapsAreRefused) {
    Bytes q2(4 + 4 + 19 * 8, 0);
    store<uint32_t>(q2.data(), fourcc("IBSP"));
    store<int32_t>(q2.data() + 4, 38);
    const Bsp bsp = Bsp::parse(q2, "q2.bsp");
    try {
        Pakfile::read(bsp);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(e.detail().find("not a Source map"), std::string::npos) << e.what();
    }
}

TEST(Pakfile, GameLumpOffsetsFollowAGrowingPakfile) {
    // A Source v20 file laid out by hand with the pakfile BEFORE the game lump,
    // so that growing the pakfile moves the game lump (absolute offsets).
    const size_t header = 8 + 64 * 16 + 4;
    const Bytes zip = make_zip(kItems, "XZP1 0");
    Bytes file(header, 0);
    store<uint32_t>(file.data(), fourcc("VBSP"));
    store<int32_t>(file.data() + 4, 20);
    auto set_lump = [&](size_t index, size_t offset, size_t length) {
        store<int32_t>(file.data() + 8 + index * 16, int32_t(offset));
        store<int32_t>(file.data() + 8 + index * 16 + 4, int32_t(length));
    };
    auto align = [&] { file.resize((file.size() + 3) & ~size_t(3), 0); };
    set_lump(40, file.size(), zip.size());
    file.insert(file.end(), zip.begin(), zip.end());
    align();
    const size_t game_at = file.size();
    const Bytes sprp = bytes("static props payload....");
    const Bytes dprp = bytes("detail props");
    Bytes game;
    append<int32_t>(game, 2);
    const size_t payload_at = game_at + 4 + 2 * 16;
    append<uint32_t>(game, 0x73707270u);  // 'sprp'
    append<uint16_t>(game, 0);
    append<uint16_t>(game, 10);
    append<int32_t>(game, int32_t(payload_at));
    append<int32_t>(game, int32_t(sprp.size()));
    append<uint32_t>(game, 0x64707270u);  // 'dprp'
    append<uint16_t>(game, 0);
    append<uint16_t>(game, 4);
    append<int32_t>(game, int32_t(payload_at + sprp.size()));
    append<int32_t>(game, int32_t(dprp.size()));
    game.insert(game.end(), sprp.begin(), sprp.end());
    game.insert(game.end(), dprp.begin(), dprp.end());
    set_lump(35, game_at, game.size());
    file.insert(file.end(), game.begin(), game.end());
    align();
    const Bytes ents = bytes("{\n\"classname\" \"worldspawn\"\n}\n");
    set_lump(0, file.size(), ents.size() + 1);
    file.insert(file.end(), ents.begin(), ents.end());
    file.push_back(0);

    Bsp bsp = Bsp::parse(file, "hand.bsp");
    ASSERT_EQ(bsp.game_lumps().size(), 2u);
    ASSERT_EQ(bsp.game_lumps()[0].offset, int32_t(payload_at));
    ASSERT_EQ(bsp.game_lump_decoded(0).size(), sprp.size());
    Pakfile pak = Pakfile::read(bsp);
    ASSERT_EQ(pak.entries().size(), 3u);
    pak.add("materials/big.vtf", Bytes(12345, 7));
    ASSERT_TRUE(pak.write_to(bsp));
    const Bytes saved = bsp.serialize();

    const Bsp back = Bsp::parse(saved, "hand2.bsp");
    const int64_t growth = int64_t(back.entry(40).length) - int64_t(zip.size());
    EXPECT_GT(growth, 12345);
    ASSERT_EQ(back.game_lumps().size(), 2u);
    EXPECT_GT(back.entry(35).offset, back.entry(40).offset);
    // The game lump now starts after the grown pakfile and its entries point at their payloads.
    EXPECT_GE(int64_t(back.entry(35).offset), int64_t(back.entry(40).offset) + back.entry(40).length);
    EXPECT_GT(back.game_lumps()[0].offset, bsp.game_lumps()[0].offset + 12345);
    const ByteSpan s0 = back.game_lump_decoded(0), s1 = back.game_lump_decoded(1);
    EXPECT_EQ(Bytes(s0.begin(), s0.end()), sprp);
    EXPECT_EQ(Bytes(s1.begin(), s1.end()), dprp);
    // Read the game lump payloads straight from the saved bytes at their recorded offsets.
    for (size_t k = 0; k < 2; ++k) {
        const GameLump& g = back.game_lumps()[k];
        ASSERT_LE(size_t(g.offset) + size_t(g.length), saved.size());
        EXPECT_EQ(Bytes(saved.begin() + g.offset, saved.begin() + g.offset + g.length), k == 0 ? sprp : dprp);
    }
    const ByteSpan e = back.decoded(0);
    EXPECT_EQ(Bytes(e.begin(), e.end() - 1), ents);
    const Pakfile pak2 = Pakfile::read(back);
    ASSERT_EQ(pak2.entries().size(), 4u);
    EXPECT_EQ(pak2.extract(3), Bytes(12345, 7));
    EXPECT_EQ(libzip_read(Bytes(back.decoded(40).begin(), back.decoded(40).end())).size(), 4u);
}

TEST(Pakfile, CheckNamesEveryUnsafeEntryAsAnError) {
    const std::vector<std::string> hostile = {"../evil.txt", "/etc/passwd", "C:\\x.txt", "a\\..\\..\\b.txt",
                                              "\\\\server\\share\\x.txt", "d:rel.txt"};
    std::vector<ZipItem> items = kItems;
    for (const std::string& h : hostile) items.push_back({h, bytes("pwned")});
    for (const auto& s : samples::all()) {
        if (s.format != "source") continue;
        SCOPED_TRACE(s.name);
        Bsp bsp = Bsp::parse(s.bytes, s.name);
        const size_t pak = *bsp.find_lump("pakfile");
        bsp.replace(pak, make_zip(kItems));
        const CheckReport safe = check(Bsp::parse(bsp.serialize(), s.name));
        for (const Finding& f : safe.findings) EXPECT_NE(f.lump, "pakfile") << f.message;
        bsp.replace(pak, make_zip(items));
        const CheckReport r = check(Bsp::parse(bsp.serialize(), s.name));
        size_t named = 0;
        for (const Finding& f : r.findings) {
            if (f.lump != "pakfile") continue;
            ASSERT_EQ(f.severity, Severity::error);
            ASSERT_EQ(f.field, "name");
            ASSERT_GE(f.record, int64_t(kItems.size()));
            const std::string& name = hostile.at(size_t(f.record) - kItems.size());
            EXPECT_NE(f.message.find("entry \"" + name + "\" is unsafe: "), std::string::npos) << f.message;
            ++named;
        }
        EXPECT_EQ(named, hostile.size());
        EXPECT_FALSE(r.ok());
    }
}

// Messages and terminal output quote names and values through zip::printable:
// ASCII and well-formed UTF-8 as they are; control bytes, DEL, C1 controls
// (U+009B is CSI to some terminals) and bytes of no well-formed UTF-8 sequence
// (Latin-1, Quake's high-bit characters, truncated, overlong, surrogate, above
// U+10FFFF) as \xNN, so nothing but text reaches a terminal.
TEST(Printable, KeepsTextAndUtf8AndQuotesEveryOtherByte) {
    struct Case {
        std::string in, out;
    };
    for (const Case& c : std::vector<Case>{
             {"maps/de_dust2.bsp", "maps/de_dust2.bsp"},
             {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"},  // é € 😀
             {std::string("a\0b", 3) + "\x1b[2J\x7f", "a\\x00b\\x1b[2J\\x7f"},
             {"\xc2\x9b" "1m", "\\xc2\\x9b1m"},                   // C1 CSI
             {"\xc2\xa0", "\xc2\xa0"},                            // U+00A0, the first after C1
             {"caf\xe9", "caf\\xe9"},                             // Latin-1 é
             {"\xc3", "\\xc3"},                                   // truncated at the end
             {"\xe2\x82" "x", "\\xe2\\x82x"},                    // truncated before ASCII
             {"\xc0\xaf", "\\xc0\\xaf"},                          // overlong '/'
             {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},                 // overlong, 3 bytes
             {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                 // surrogate U+D800
             {"\xed\x9f\xbf", "\xed\x9f\xbf"},                    // U+D7FF
             {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},        // above U+10FFFF
             {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},            // U+10FFFF
             {"\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf"},        // overlong, 4 bytes
             {"\x80\xbf", "\\x80\\xbf"},                          // lone continuation bytes
             {"\xff\xfe", "\\xff\\xfe"},
         })
        EXPECT_EQ(zip::printable(c.in), c.out) << c.out;
}
