// Bsp::open maps the file: lumps are views of the mapping, typed records of
// host-order lumps are read in place, saves (also over the open file) write
// what serialize() gives, and files that cannot be mapped are still read.
#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/formats/source.hpp>

#include "decoded_lumps.hpp"
#include "run.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

bool inside(ByteSpan part, ByteSpan whole) {
    return !part.empty() && part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

const samples::Sample& sample(const std::vector<samples::Sample>& all, const std::string& name) {
    for (const auto& s : all)
        if (s.name == name) return s;
    throw std::runtime_error("no sample " + name);
}

}  // namespace

TEST(MappedOpen, OpenGivesTheParsedMapAndLumpsAreViewsOfTheFile) {
    const fs::path dir = temp_dir("mapped_open");
    for (const auto& s : samples::all()) {
        const fs::path path = dir / s.name;
        write_file_atomic(path, s.bytes);
        const Bsp opened = Bsp::open(path);
        const Bsp parsed = Bsp::parse(s.bytes, s.name);
        EXPECT_EQ(opened.serialize(), s.bytes) << s.name;
        EXPECT_EQ(decoded_lumps(opened), decoded_lumps(parsed)) << s.name;
        for (size_t i = 0; i < opened.lump_count(); ++i) {
            if (opened.stored(i).empty()) continue;
            EXPECT_TRUE(inside(opened.stored(i), opened.file_bytes())) << s.name << " lump " << i;
            if (!opened.compressed(i) && !(opened.format() == Format::source && i == source_lump::game_lump)) {
                EXPECT_EQ(opened.decoded(i).data(), opened.stored(i).data()) << s.name << " lump " << i << " copied";
            }
        }
    }
}

TEST(MappedOpen, SaveWritesExactlyWhatSerializeGives) {
    const fs::path dir = temp_dir("mapped_save");
    for (const auto& s : samples::all()) {
        const fs::path path = dir / s.name;
        write_file_atomic(path, s.bytes);
        Bsp bsp = Bsp::open(path);
        const bool source = bsp.format() == Format::source;
        for (const Compression c : {Compression::keep, Compression::decompress, Compression::compress}) {
            if (c == Compression::compress && !source) continue;
            bsp.save(dir / "out.bsp", {c});
            EXPECT_EQ(read_file(dir / "out.bsp"), bsp.serialize({c})) << s.name << " compression " << int(c);
        }
        Bytes text(bsp.decoded(0).begin(), bsp.decoded(0).end());
        text.insert(text.begin(), {'{', '}', '\n'});  // odd length: everything after moves and is padded
        bsp.replace(0, text);
        bsp.save(dir / "edited.bsp");
        const Bytes edited = read_file(dir / "edited.bsp");
        EXPECT_EQ(edited, bsp.serialize()) << s.name;
        const Bsp again = Bsp::parse(edited, s.name);
        EXPECT_EQ(Bytes(again.decoded(0).begin(), again.decoded(0).end()), text) << s.name;
    }
}

TEST(MappedOpen, SavingOverTheOpenFileLeavesTheOpenMapIntact) {
    const fs::path dir = temp_dir("mapped_overwrite");
    const auto all = samples::all();
    for (const char* name : {"sample_quake2.bsp", "sample_source.bsp", "sample_source_lzma.bsp"}) {
        const auto& s = sample(all, name);
        const fs::path path = dir / s.name;
        write_file_atomic(path, s.bytes);
        Bsp bsp = Bsp::open(path);
        const std::vector<Bytes> before = decoded_lumps(bsp);
        Bytes text(bsp.decoded(0).begin(), bsp.decoded(0).end());
        text.push_back('\n');
        bsp.replace(0, text);
        bsp.save(path);  // temp file + rename: the mapping keeps the old inode
        std::vector<Bytes> now = decoded_lumps(bsp);
        EXPECT_EQ(now[0], text) << name;
        now[0] = before[0];
        EXPECT_EQ(now, before) << name << ": the open map still reads the old bytes";
        EXPECT_EQ(read_file(path), bsp.serialize()) << name;
        const Bsp reopened = Bsp::open(path);
        EXPECT_EQ(Bytes(reopened.decoded(0).begin(), reopened.decoded(0).end()), text) << name;
    }
}

// A save copies the unchanged lumps from the file kernel-side (copy_file_range)
// only while the file at the opened path is still the one mapped: after another
// program replaced it, the save writes the mapped (opened) bytes, never the new file's.
TEST(MappedOpen, SaveCopiesFromTheFileOnlyWhileItIsTheOneMapped) {
    const fs::path dir = temp_dir("mapped_origin");
    const auto all = samples::all();
    for (const char* name : {"sample_quake2.bsp", "sample_source.bsp", "sample_source_lzma.bsp"}) {
        const auto& s = sample(all, name);
        const fs::path path = dir / s.name, copy = dir / (std::string("copy_") + s.name);
        write_file_atomic(path, s.bytes);
        {
            const Bsp bsp = Bsp::open(path);
            bsp.save(copy);  // unchanged: the lumps come from the file
            EXPECT_EQ(read_file(copy), s.bytes) << name;
        }
        Bsp bsp = Bsp::open(path);
        // Another program replaces the file (a new inode; same size, other bytes).
        Bytes other = s.bytes;
        for (size_t i = 64; i < other.size(); ++i) other[i] ^= 0x5a;
        write_file_atomic(path, other);
        bsp.save(copy);
        EXPECT_EQ(read_file(copy), s.bytes) << name << ": the save read the replaced file";
        // And with a lump replaced: the untouched lumps still come from the mapping.
        Bytes text(bsp.decoded(0).begin(), bsp.decoded(0).end());
        text.push_back('\n');
        bsp.replace(0, text);
        bsp.save(copy);
        EXPECT_EQ(read_file(copy), bsp.serialize()) << name;
        const Bsp reread = Bsp::open(copy);
        EXPECT_EQ(Bytes(reread.decoded(0).begin(), reread.decoded(0).end()), text) << name;
    }
}

TEST(MappedOpen, HostOrderRecordsAreReadInPlaceBigEndianOnesAreSwapped) {
    const fs::path dir = temp_dir("mapped_records");
    const auto all = samples::all();
    const auto& q2 = sample(all, "sample_quake2.bsp");
    write_file_atomic(dir / q2.name, q2.bytes);
    const Bsp bsp = Bsp::open(dir / q2.name);
    const quake2::Map map(bsp);
    ASSERT_FALSE(map.planes().empty());
    const ByteSpan planes_bytes(reinterpret_cast<const uint8_t*>(map.planes().data()), map.planes().size_bytes());
    EXPECT_TRUE(inside(planes_bytes, bsp.file_bytes())) << "little-endian planes should be read in place";

    const auto& le = sample(all, "sample_source.bsp");
    const auto& be = sample(all, "sample_source_x360.bsp");
    write_file_atomic(dir / le.name, le.bytes);
    write_file_atomic(dir / be.name, be.bytes);
    const Bsp little = Bsp::open(dir / le.name), big = Bsp::open(dir / be.name);
    const source::Map lm(little), bm(big);
    ASSERT_EQ(lm.planes().size(), bm.planes().size());
    ASSERT_FALSE(bm.planes().empty());
    const ByteSpan big_bytes(reinterpret_cast<const uint8_t*>(bm.planes().data()), bm.planes().size_bytes());
    EXPECT_FALSE(inside(big_bytes, big.file_bytes())) << "big-endian planes must be swapped copies";
    for (size_t i = 0; i < lm.planes().size(); ++i) {
        EXPECT_EQ(lm.planes()[i].dist, bm.planes()[i].dist);
        EXPECT_EQ(lm.planes()[i].type, bm.planes()[i].type);
    }
    // Records taken before a replace stay valid after it (they view the mapping, not the replacement).
    Bsp edited = Bsp::open(dir / q2.name);
    const quake2::Map em(edited);
    const auto planes = em.planes();
    const std::vector<quake2::dplane_t> copy(planes.begin(), planes.end());
    edited.replace(quake2::Map::LUMP_PLANES, Bytes(20, 0));
    EXPECT_EQ(0, std::memcmp(planes.data(), copy.data(), copy.size() * sizeof(quake2::dplane_t)));
}

TEST(MappedOpen, FilesThatCannotBeMappedAreReadOrRefused) {
    const fs::path dir = temp_dir("mapped_special");
    const auto all = samples::all();
    const auto& s = sample(all, "sample_quake2.bsp");
    // A FIFO has no size to map: it is read to its end.
    const fs::path fifo = dir / "pipe.bsp";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
        FILE* f = std::fopen(fifo.c_str(), "wb");
        std::fwrite(s.bytes.data(), 1, s.bytes.size(), f);
        std::fclose(f);
    });
    const Bsp piped = Bsp::open(fifo);
    writer.join();
    EXPECT_EQ(piped.serialize(), s.bytes);
    // Empty, missing and directory inputs fail with an Error naming the file.
    write_file_atomic(dir / "empty.bsp", {});
    for (const fs::path& bad : {dir / "empty.bsp", dir / "missing.bsp", dir}) {
        try {
            (void)Bsp::open(bad);
            ADD_FAILURE() << bad << " opened";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find(bad.string()), std::string::npos) << e.what();
        }
    }
}
