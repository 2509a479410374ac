// Quake 3 geometry: model::build (faces, meshverts, patch tessellation,
// lightmap pages and atlas) as a ratio to plain reading of the same file,
// measured in the same run. "open_and_build" includes Bsp::open (what an
// exporter pays end to end); "build" starts from an open Bsp.
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/model.hpp>

#include <chrono>

namespace {

using namespace bspkit;

void count(benchmark::State& state, const model::Map& map) {
    size_t vertices = 0, triangles = 0, surfaces = 0;
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) {
            ++surfaces;
            vertices += s.vertices.size();
            triangles += s.indices.size() / 3;
        }
    state.counters["surfaces"] = double(surfaces);
    state.counters["vertices"] = double(vertices);
    state.counters["triangles"] = double(triangles);
}

void build(benchmark::State& state, const std::string& relpath, int level) {
    const auto path = bench::corpus(relpath);
    const double floor = bench::plain_read_seconds(path);
    const Bsp bsp = Bsp::open(path);
    model::BuildOptions options;
    options.patch_level = level;
    model::Map map;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        map = model::build(bsp, options);
        benchmark::DoNotOptimize(map.models.data());
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    count(state, map);
}

void open_and_build(benchmark::State& state, const std::string& relpath, int level) {
    const auto path = bench::corpus(relpath);
    const double floor = bench::plain_read_seconds(path);
    model::BuildOptions options;
    options.patch_level = level;
    model::Map map;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const Bsp bsp = Bsp::open(path);
        map = model::build(bsp, options);
        benchmark::DoNotOptimize(map.models.data());
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    count(state, map);
}

}  // namespace

// The export target: nexuiz_ons-reborn (23.5 MB; 8940 meshes, 6003 polygons).
BENCHMARK_CAPTURE(build, nexuiz_adaptive, "q3_v46/nexuiz_ons-reborn.bsp", -1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(open_and_build, nexuiz_adaptive, "q3_v46/nexuiz_ons-reborn.bsp", -1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// Patches and lightmap pages: oacmpctf3 (300 patches, 40 pages).
BENCHMARK_CAPTURE(build, oacmpctf3_adaptive, "q3_v46/oa_oacmpctf3.bsp", -1)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build, oacmpctf3_level8, "q3_v46/oa_oacmpctf3.bsp", 8)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(build, ctf2_adaptive, "q3_v46/oa_ctf2.bsp", -1)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
