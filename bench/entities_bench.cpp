// Entity lump parsing of the largest corpus entity lumps, and pakfile listing
// of csgo_ar_monastery (1.69 MB pakfile), each as a ratio to plain reading of
// the same bytes measured in the same run:
//   entity_parse  vs copying the lump text into a string and counting its lines
//   pak_list      vs reading the whole map file (it opens the file too)
//   pak_parse     vs copying the pakfile bytes in memory
//   entity_check  the checks of `check` on a parsed entity lump (worldspawn,
//                 brush-model range and reuse) vs parsing that lump
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/formats/source_pakfile.hpp>

#include <algorithm>
#include <chrono>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

/// Best-of-N seconds of `fn` (warm cache, as the timed loops).
template <class Fn>
double best_seconds(Fn&& fn, int runs = 51) {
    double best = 1e30;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        fn();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return best;
}

void report(benchmark::State& state, double floor_seconds, double loop_seconds, size_t bytes) {
    const double per_iteration = loop_seconds / double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.counters["floor_us"] = floor_seconds * 1e6;
    state.counters["ratio_to_read"] = per_iteration / floor_seconds;
    state.SetBytesProcessed(int64_t(bytes) * int64_t(state.iterations()));
}

/// The same bytes read plainly: copied into a string, lines counted.
double plain_text_seconds(bspkit::ByteSpan text) {
    return best_seconds([&] {
        const std::string s(text.begin(), text.end());
        benchmark::DoNotOptimize(std::count(s.begin(), s.end(), '\n'));
    });
}

void entity_parse(benchmark::State& state, const std::string& relpath) {
    const bspkit::Bsp bsp = bspkit::Bsp::open(bspkit::bench::corpus(relpath));
    const bspkit::ByteSpan decoded = bsp.decoded(bspkit::entity_lump_index(bsp));
    const bspkit::Bytes text(decoded.begin(), decoded.end());
    const double floor = plain_text_seconds(text);
    size_t entities = 0;
    const auto start = Clock::now();
    for (auto _ : state) {
        const bspkit::EntityLump lump = bspkit::EntityLump::parse(text, {bsp.file_name(), "entities", 0});
        entities = lump.entities.size();
        benchmark::DoNotOptimize(entities);
    }
    report(state, floor, std::chrono::duration<double>(Clock::now() - start).count(), text.size());
    state.counters["entities"] = double(entities);
}

void entity_check(benchmark::State& state, const std::string& relpath) {
    const bspkit::Bsp bsp = bspkit::Bsp::open(bspkit::bench::corpus(relpath));
    const bspkit::ByteSpan text = bsp.decoded(bspkit::entity_lump_index(bsp));
    const double parse = best_seconds([&] {
        const bspkit::EntityLump lump = bspkit::EntityLump::parse(text, {bsp.file_name(), "entities", 0});
        benchmark::DoNotOptimize(lump.entities.size());
    });
    const bspkit::EntityLump lump = bspkit::read_entities(bsp);
    size_t findings = 0;
    const auto start = Clock::now();
    for (auto _ : state) {
        bspkit::CheckReport report;
        bspkit::check_entities(bsp, lump, report);
        findings = report.findings.size();
        benchmark::DoNotOptimize(findings);
    }
    const double per_iteration = std::chrono::duration<double>(Clock::now() - start).count() /
                                 double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.counters["parse_us"] = parse * 1e6;
    state.counters["ratio_to_parse"] = per_iteration / parse;
    state.counters["entities"] = double(lump.entities.size());
    state.counters["findings"] = double(findings);
}

void pak_list(benchmark::State& state, const std::string& relpath) {
    const auto path = bspkit::bench::corpus(relpath);
    const double floor = bspkit::bench::plain_read_seconds(path);
    size_t entries = 0;
    const auto start = Clock::now();
    for (auto _ : state) {
        const bspkit::Bsp bsp = bspkit::Bsp::open(path);
        const auto pak = bspkit::source::Pakfile::read(bsp);
        uint64_t total = 0;
        for (const auto& e : pak.entries()) total += e.size + e.name.size();
        entries = pak.entries().size();
        benchmark::DoNotOptimize(total);
    }
    report(state, floor, std::chrono::duration<double>(Clock::now() - start).count(),
           size_t(std::filesystem::file_size(path)));
    state.counters["entries"] = double(entries);
}

void pak_parse(benchmark::State& state, const std::string& relpath) {
    const bspkit::Bsp bsp = bspkit::Bsp::open(bspkit::bench::corpus(relpath));
    const bspkit::ByteSpan lump = bsp.decoded(bspkit::source_lump::pakfile);
    const double floor = best_seconds([&] {
        const bspkit::Bytes copy(lump.begin(), lump.end());
        benchmark::DoNotOptimize(copy.data());
    });
    const auto start = Clock::now();
    for (auto _ : state) {
        const auto pak = bspkit::source::Pakfile::parse(lump);
        benchmark::DoNotOptimize(pak.entries().size());
    }
    report(state, floor, std::chrono::duration<double>(Clock::now() - start).count(), lump.size());
}

}  // namespace

// The largest entity lumps of the corpus (Source, GoldSrc, Quake 2, L4D2).
BENCHMARK_CAPTURE(entity_parse, vtmb_ch_temple_3, "src_v17/vtmb_ch_temple_3.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_parse, cs16_de_torabora, "hl1_v30/cs16_de_torabora.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_parse, q2_base1, "q2_v38/q2_base1.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_parse, l4d2_escapefromterrortown01, "src_v21/l4d2_escapefromterrortown01.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_check, vtmb_ch_temple_3, "src_v17/vtmb_ch_temple_3.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_check, cs16_de_torabora, "hl1_v30/cs16_de_torabora.bsp")->UseRealTime();
BENCHMARK_CAPTURE(entity_check, l4d2_escapefromterrortown01, "src_v21/l4d2_escapefromterrortown01.bsp")->UseRealTime();
BENCHMARK_CAPTURE(pak_list, csgo_ar_monastery, "src_v21_csgo/csgo_ar_monastery.bsp")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(pak_parse, csgo_ar_monastery, "src_v21_csgo/csgo_ar_monastery.bsp")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
