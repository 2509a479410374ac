// Compiling the demo's room map (src/samples/room_map.cpp: tree, faces, hulls,
// ray-cast lightmaps, PVS, textures), as a ratio to writing the same number of
// bytes to a file (write_file_atomic: temp file + rename), measured in the same run.
#include "bench_support.hpp"

#include <bspkit/file_io.hpp>

#include "room_map.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

namespace {

using namespace bspkit;

/// Seconds per write_file_atomic of `bytes` (best of a few runs).
double write_seconds(const Bytes& bytes) {
    const auto path = std::filesystem::temp_directory_path() / "bspkit_room_map_bench.bsp";
    double best = 1e9;
    for (int i = 0; i < 20; ++i) {
        const auto start = std::chrono::steady_clock::now();
        write_file_atomic(path, bytes);
        best = std::min(best, bench::seconds_since(start));
    }
    std::filesystem::remove(path);
    return best;
}

void BM_CompileRoomMap(benchmark::State& state) {
    const samples::RoomDesign design = samples::room_design();
    const Bytes reference = samples::compile_room_map(design);
    const double floor = write_seconds(reference);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(samples::compile_room_map(design));
    const double per_iteration = bench::seconds_since(start) / double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.SetBytesProcessed(int64_t(reference.size()) * int64_t(state.iterations()));
    state.counters["write_ms"] = floor * 1e3;
    state.counters["ratio_to_write"] = per_iteration / floor;
}
BENCHMARK(BM_CompileRoomMap)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
