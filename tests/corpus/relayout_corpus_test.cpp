// Every lump read through its directory entry: each corpus map of the
// families whose lumps hold no file offsets (Quake 1 / BSP2 / GoldSrc,
// Quake 2, Quake 3, Nightfire) is rewritten with its lumps laid out in the
// reverse order, four bytes of 0xAA between them, and its BSPX directory (the
// one place with file offsets) moved behind them with the offsets it then
// has. The directory's order is kept. check's findings, the glb, a render,
// the decompiled .map, leaves, traces and visible() must match the
// original's: no reader may depend on where a lump lies or read past its end.
#include <bspkit/bspx.hpp>

#include "corpus.hpp"
#include "same_answers.hpp"

#include <gtest/gtest.h>

#include <cstring>

using namespace bspkit;
using namespace bspkit::test;

namespace {

void put32(Bytes& out, size_t at, int32_t v) { std::memcpy(out.data() + at, &v, 4); }

/// Four bytes of 0xAA (what a reader past a lump's end would meet), then up to the next multiple of four.
void pad(Bytes& out) {
    for (int i = 0; i < 4; ++i) out.push_back(0xAA);
    while (out.size() % 4) out.push_back(0xAA);
}

/// `bsp` with its lumps stored last to first (see the top of the file).
Bytes relaid(const Bsp& bsp, const Bytes& bytes) {
    const FormatLayout& layout = bsp.layout();
    const size_t entries = layout.directory_offset();
    Bytes out(bytes.begin(), bytes.begin() + std::ptrdiff_t(entries + bsp.lump_count() * 8));
    for (size_t i = bsp.lump_count(); i-- > 0;) {
        pad(out);
        const ByteSpan data = bsp.stored(i);
        put32(out, entries + i * 8, int32_t(out.size()));
        put32(out, entries + i * 8 + 4, int32_t(data.size()));
        out.insert(out.end(), data.begin(), data.end());
    }
    // The BSPX directory where the engines look for it: the end of the last
    // lump, rounded up to four bytes (QuakeSpasm's and FTE's rule).
    while (out.size() % 4) out.push_back(0);
    const bspx::Directory dir = bspx::read(bsp);
    if (dir.present()) {
        const size_t header = out.size();
        out.resize(header + 8 + dir.lumps.size() * 32, 0);
        std::memcpy(out.data() + header, "BSPX", 4);
        put32(out, header + 4, int32_t(dir.lumps.size()));
        for (size_t k = 0; k < dir.lumps.size(); ++k) {
            const size_t entry = header + 8 + k * 32;
            std::memcpy(out.data() + entry, dir.lumps[k].name.data(), std::min<size_t>(dir.lumps[k].name.size(), 24));
            while (out.size() % 4) out.push_back(0);
            put32(out, entry + 24, int32_t(out.size()));
            put32(out, entry + 28, int32_t(dir.lumps[k].data.size()));
            out.insert(out.end(), dir.lumps[k].data.begin(), dir.lumps[k].data.end());
        }
    }
    return out;
}

}  // namespace

TEST(RelayoutCorpus, LumpsStoredInReverseOrderReadTheSame) {
    size_t maps = 0, with_bspx = 0;
    for (const CorpusFile& f : corpus_files()) {
        const std::optional<std::string> format = expected_format(f);
        if (!format || *format == "source") continue;
        SCOPED_TRACE(f.relpath);
        const Bytes bytes = read_corpus(f);
        const Bsp original = Bsp::parse(bytes, f.relpath);
        ASSERT_EQ(original.layout().entry_size(), 8u);
        // A lump cut short by the file's end (q2_base1's entities) would be whole in the copy.
        bool cut_short = false;
        for (size_t i = 0; i < original.lump_count(); ++i)
            cut_short = cut_short || original.stored(i).size() < size_t(std::max(original.entry(i).length, 0));
        if (cut_short) continue;
        const Bsp copy = Bsp::parse(relaid(original, bytes), f.relpath);
        ASSERT_EQ(&copy.layout(), &original.layout());
        for (size_t i = 0; i < original.lump_count(); ++i) {
            const ByteSpan a = original.stored(i), b = copy.stored(i);
            ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << original.lump_name(i);
        }
        with_bspx += bspx::read(original).present();
        EXPECT_EQ(bspx::read(copy).lumps.size(), bspx::read(original).lumps.size());
        const Answers answers(original);
        expect_same_answers(answers, copy, surface_points(answers.model));
        ++maps;
    }
    EXPECT_GE(maps, 20u);
    EXPECT_GE(with_bspx, 2u);
}
