// The same Source map stored otherwise must read the same: each Source
// corpus map bspkit reads is saved with every lump LZMA-compressed (bspzip
// -repack's layout) when it has no compressed lump, and with every lump
// decompressed when it has some (the console map and the compressed PC maps).
// Every verb must read its lumps through the decompressed bytes: check's
// findings, the glb, a render, the decompiled .vmf, leaves, line and
// player-box traces and visible() must match the original's.
#include <bspkit/formats/source.hpp>

#include "corpus.hpp"
#include "same_answers.hpp"

#include <gtest/gtest.h>

#include <cstdio>

using namespace bspkit;
using namespace bspkit::test;
using bspkit::query::Vec3;

TEST(SourceRewriteCorpus, CompressedAndDecompressedCopiesReadTheSame) {
    size_t compressed = 0, decompressed = 0;
    for (const CorpusFile& f : corpus_files()) {
        if (expected_format(f) != "source") continue;
        SCOPED_TRACE(f.relpath);
        const Bsp original = Bsp::parse(read_corpus(f), f.relpath);
        bool any_compressed = false;
        for (size_t i = 0; i < original.lump_count(); ++i) any_compressed = any_compressed || original.compressed(i);
        for (const GameLump& g : original.game_lumps()) any_compressed = any_compressed || g.compressed();
        const Bsp copy = Bsp::parse(
            original.serialize({any_compressed ? Compression::decompress : Compression::compress}), f.relpath);
        size_t copy_compressed = 0;
        for (size_t i = 0; i < copy.lump_count(); ++i) copy_compressed += copy.compressed(i);
        if (any_compressed) {
            EXPECT_EQ(copy_compressed, 0u);
            ++decompressed;
        } else {
            EXPECT_GT(copy_compressed, 5u);
            ++compressed;
        }
        std::vector<Vec3> near;
        const source::Map map(original);  // owns the vertex records (swapped or decompressed copies)
        for (const auto& v : map.vertexes()) near.push_back({v.point.x, v.point.y, v.point.z});
        expect_same_answers(Answers(original), copy, near);
    }
    EXPECT_GE(compressed, 5u);    // the PC maps
    EXPECT_GE(decompressed, 2u);  // x360_shack, sdk2013_boxinaroom_lzma
}

// Console maps ship HDR-only: the faces and lighting lumps empty, their
// records in faces_hdr and lighting_hdr. Each Source corpus map that has LDR
// faces and lighting is saved that way, its LDR records moved into the HDR
// lumps (so the lightmaps are the same bytes), and must read the same through
// every verb. The one HDR-only corpus map (x360_shack) is how a collision
// world that read the faces lump alone was found: its displacements stopped
// nothing.
TEST(SourceRewriteCorpus, HdrOnlyCopiesReadTheSame) {
    size_t copies = 0;
    for (const CorpusFile& f : corpus_files()) {
        if (expected_format(f) != "source") continue;
        SCOPED_TRACE(f.relpath);
        const Bsp original = Bsp::parse(read_corpus(f), f.relpath);
        // VTMB's version 17 has no HDR lumps (lump 58 was not faces_hdr yet).
        if (original.version().value_or(0) < 19 || original.decoded_length(source::lump::faces) == 0 ||
            original.decoded_length(source::lump::lighting) == 0)
            continue;
        Bsp copy = Bsp::parse(read_corpus(f), f.relpath);
        const auto move = [&](size_t from, size_t to) {
            const ByteSpan bytes = original.decoded(from);
            copy.replace(to, Bytes(bytes.begin(), bytes.end()));
            copy.replace(from, Bytes());
        };
        move(source::lump::faces, source::lump::faces_hdr);
        move(source::lump::lighting, source::lump::lighting_hdr);
        const Bsp hdr_only = Bsp::parse(copy.serialize(), f.relpath);
        ASSERT_EQ(hdr_only.decoded_length(source::lump::faces), 0u);
        ++copies;
        std::vector<Vec3> near;
        const source::Map map(original);
        for (const auto& v : map.vertexes()) near.push_back({v.point.x, v.point.y, v.point.z});
        // check's findings name the lumps the records sit in: compared by the records' own checks elsewhere.
        expect_same_answers(Answers(original), hdr_only, near, false);
    }
    std::printf("%zu Source maps saved HDR-only\n", copies);
    EXPECT_GE(copies, 5u);
}
