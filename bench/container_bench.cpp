// Open + read the directory + decode every lump (and every Source game lump)
// of the largest corpus map of each family, as a ratio to plain reading of the
// same file in the same run. Target: within 2x of plain reading.
//   open_and_decode   spans of every lump (mapped lumps are views: pages untouched)
//   open_and_touch    the same, then every byte of every lump read (a sum), so
//                     the mapping's pages are all faulted in: the honest
//                     "read every lump" against fopen + fread of the file
//   unchanged_save    serialize() to memory (one copy of the file)
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>

#include <cstring>
#include <vector>

namespace {

void open_and_decode(benchmark::State& state, const std::string& relpath) {
    const auto path = bspkit::bench::corpus(relpath);
    const double floor = bspkit::bench::plain_read_seconds(path);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const bspkit::Bsp bsp = bspkit::Bsp::open(path);
        size_t total = 0;
        for (size_t i = 0; i < bsp.lump_count(); ++i) total += bsp.decoded(i).size();
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) total += bsp.game_lump_decoded(k).size();
        benchmark::DoNotOptimize(total);
    }
    bspkit::bench::report_ratio(state, path, floor, bspkit::bench::seconds_since(start));
}

uint64_t sum_bytes(bspkit::ByteSpan bytes) {
    uint64_t sum = 0;
    size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
        uint64_t word;
        std::memcpy(&word, bytes.data() + i, 8);
        sum += word;
    }
    for (; i < bytes.size(); ++i) sum += bytes[i];
    return sum;
}

void open_and_touch(benchmark::State& state, const std::string& relpath) {
    const auto path = bspkit::bench::corpus(relpath);
    const double floor = bspkit::bench::plain_read_seconds(path);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const bspkit::Bsp bsp = bspkit::Bsp::open(path);
        uint64_t sum = 0;
        for (size_t i = 0; i < bsp.lump_count(); ++i) sum += sum_bytes(bsp.decoded(i));
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) sum += sum_bytes(bsp.game_lump_decoded(k));
        benchmark::DoNotOptimize(sum);
    }
    bspkit::bench::report_ratio(state, path, floor, bspkit::bench::seconds_since(start));
}

void unchanged_save(benchmark::State& state, const std::string& relpath) {
    const auto path = bspkit::bench::corpus(relpath);
    const double floor = bspkit::bench::plain_read_seconds(path);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const bspkit::Bsp bsp = bspkit::Bsp::open(path);
        const bspkit::Bytes out = bsp.serialize();
        benchmark::DoNotOptimize(out.data());
    }
    bspkit::bench::report_ratio(state, path, floor, bspkit::bench::seconds_since(start));
}

/// open_and_decode with the compressed lumps decoded ahead on every core
/// (Bsp::decode_ahead, as check does): beside open_and_decode of the same map,
/// what the second core buys on LZMA maps.
void open_and_decode_ahead(benchmark::State& state, const std::string& relpath) {
    const auto path = bspkit::bench::corpus(relpath);
    const double floor = bspkit::bench::plain_read_seconds(path);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const bspkit::Bsp bsp = bspkit::Bsp::open(path);
        std::vector<size_t> all(bsp.lump_count());
        for (size_t i = 0; i < all.size(); ++i) all[i] = i;
        bsp.decode_ahead(all);
        size_t total = 0;
        for (size_t i = 0; i < bsp.lump_count(); ++i) total += bsp.decoded(i).size();
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) total += bsp.game_lump_decoded(k).size();
        benchmark::DoNotOptimize(total);
    }
    bspkit::bench::report_ratio(state, path, floor, bspkit::bench::seconds_since(start));
}

}  // namespace

#define FAMILY(name, path)                                                                      \
    BENCHMARK_CAPTURE(open_and_decode, name, path)->UseRealTime()->Unit(benchmark::kMillisecond); \
    BENCHMARK_CAPTURE(open_and_touch, name, path)->UseRealTime()->Unit(benchmark::kMillisecond);  \
    BENCHMARK_CAPTURE(unchanged_save, name, path)->UseRealTime()->Unit(benchmark::kMillisecond)

FAMILY(quake1, "q1_v29/pd_change_dest.bsp");
FAMILY(bsp2, "q1_bsp2/rmq_mp_lobby.bsp");
FAMILY(goldsrc, "hl1_v30/cs16_de_torabora.bsp");
FAMILY(quake2, "q2_v38/librequake_lq_e0m2_quake2.bsp");
FAMILY(quake3, "q3_v46/nexuiz_ons-reborn.bsp");
FAMILY(nightfire, "nightfire_v42/nf_weapon_accuracy_nf.bsp");
FAMILY(source, "src_v21/l4d2_escapefromterrortown01.bsp");
FAMILY(source_v17, "src_v17/vtmb_ch_temple_3.bsp");
FAMILY(source_lzma, "src_v20_lzma/sdk2013_boxinaroom_lzma.bsp");
FAMILY(source_x360, "src_console/x360_shack.bsp");
BENCHMARK_CAPTURE(open_and_decode_ahead, source_lzma, "src_v20_lzma/sdk2013_boxinaroom_lzma.bsp")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(open_and_decode_ahead, source_x360, "src_console/x360_shack.bsp")->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
