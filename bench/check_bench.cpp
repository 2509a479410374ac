// Typed decode of every lump + `check`, over the largest corpus map of each
// family, as a ratio to plain reading (read_file) of the same file measured
// in the same run; and PVS decompression of every cluster in bytes/second,
// and the PAS of every cluster, as ratios to copying the same number of
// bytes (memcpy), also in the run.
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/bspx.hpp>
#include <bspkit/check.hpp>
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/visibility.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>

namespace {

using namespace bspkit;

/// Decodes every lump into its typed records (variable lumps as bytes);
/// returns the number of records so nothing is optimised away.
size_t decode_everything(const Bsp& bsp) {
    size_t n = 0;
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: {
            const quake1::Map map(bsp);
            n += map.entities().size() + map.visibility().size() + map.lighting().size();
            n += map.miptex().entries.size();
            map.visit([&](const auto& t) {
                n += t.planes.size() + t.vertexes.size() + t.nodes.size() + t.texinfo.size() + t.faces.size() +
                     t.clipnodes.size() + t.leafs.size() + t.marksurfaces.size() + t.edges.size() +
                     t.surfedges.size() + t.models.size();
            });
            break;
        }
        case Format::quake2: {
            const quake2::Map map(bsp);
            n += map.entities().size() + map.visibility().size() + map.lighting().size() + map.pop().size();
            n += map.planes().size() + map.vertices().size() + map.nodes().size() + map.texinfo().size() +
                 map.faces().size() + map.leafs().size() + map.leaffaces().size() + map.leafbrushes().size() +
                 map.edges().size() + map.surfedges().size() + map.models().size() + map.brushes().size() +
                 map.brushsides().size() + map.areas().size() + map.areaportals().size();
            break;
        }
        case Format::quake3: {
            const quake3::Map map(bsp);
            n += map.entities().size() + map.visdata().size();
            n += map.shaders().size() + map.planes().size() + map.nodes().size() + map.leafs().size() +
                 map.leafsurfaces().size() + map.leafbrushes().size() + map.models().size() + map.brushes().size() +
                 map.brushsides().size() + map.vertexes().size() + map.meshverts().size() + map.fogs().size() +
                 map.surfaces().size() + map.lightmaps().size() + map.lightgrid().size();
            break;
        }
        case Format::nightfire: {
            const nightfire::Map map(bsp);
            n += map.entities().size() + map.visibility().size() + map.lighting().size();
            n += map.planes().size() + map.textures().size() + map.materials().size() + map.vertices().size() +
                 map.zero_vertices().size() + map.draw_indices().size() + map.nodes().size() + map.surfaces().size() +
                 map.leaves().size() + map.leaf_surfaces().size() + map.leaf_brushes().size() + map.models().size() +
                 map.brushes().size() + map.brush_sides().size() + map.projections().size();
            break;
        }
        case Format::source:  // the Source typed records live in their own module; its check decodes them
            for (size_t i = 0; i < bsp.lump_count(); ++i) n += bsp.decoded(i).size();
            for (size_t k = 0; k < bsp.game_lumps().size(); ++k) n += bsp.game_lump_decoded(k).size();
            break;
    }
    return n;
}

void decode_and_check(benchmark::State& state, const std::string& relpath) {
    const auto path = bench::corpus(relpath);
    const double floor = bench::plain_read_seconds(path);
    size_t findings = 0;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const Bsp bsp = Bsp::open(path);
        benchmark::DoNotOptimize(decode_everything(bsp));
        const CheckReport report = check(bsp);
        findings = report.findings.size();
        benchmark::DoNotOptimize(findings);
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    state.counters["findings"] = double(findings);
}

/// Seconds to memcpy `bytes` bytes, best of several runs (the floor of the PVS benchmark).
double memcpy_seconds(size_t bytes) {
    std::vector<uint8_t> a(bytes, 1), b(bytes);
    double best = 1e30;
    for (int run = 0; run < 20; ++run) {
        const auto t0 = std::chrono::steady_clock::now();
        std::memcpy(b.data(), a.data(), bytes);
        benchmark::DoNotOptimize(b.data());
        benchmark::ClobberMemory();
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return std::max(best, 1e-9);
}

void pvs_all_clusters(benchmark::State& state, const std::string& relpath) {
    const auto path = bench::corpus(relpath);
    const Bsp bsp = Bsp::open(path);
    const Visibility vis = Visibility::of(bsp);
    Bytes row(vis.row_bytes());
    const size_t per_pass = vis.clusters() * vis.row_bytes();
    const double floor = memcpy_seconds(per_pass);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        for (size_t c = 0; c < vis.clusters(); ++c) {
            if (vis.pvs_into(c, row) != RowStatus::ok) state.SkipWithError("a PVS row failed");
            benchmark::DoNotOptimize(row.data());
        }
    }
    state.SetBytesProcessed(int64_t(per_pass) * int64_t(state.iterations()));
    state.counters["clusters"] = double(vis.clusters());
    state.counters["row_bytes"] = double(vis.row_bytes());
    const double per_iteration = bench::seconds_since(start) / double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.counters["ratio_to_memcpy"] = per_iteration / floor;
}

/// The PAS of every cluster: stored rows (Quake 2, Source) or the union of
/// the visible clusters' PVS rows, computed (the other families); as a ratio
/// to copying clusters x row bytes (memcpy) once, measured in the same run.
void pas_all_clusters(benchmark::State& state, const std::string& relpath) {
    const auto path = bench::corpus(relpath);
    const Bsp bsp = Bsp::open(path);
    const Visibility vis = Visibility::of(bsp);
    const size_t per_pass = vis.clusters() * vis.row_bytes();
    const double floor = memcpy_seconds(per_pass);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state)
        for (size_t c = 0; c < vis.clusters(); ++c) benchmark::DoNotOptimize(vis.pas(c));
    state.counters["clusters"] = double(vis.clusters());
    state.counters["computed"] = vis.pas_stored() ? 0.0 : 1.0;
    const double per_iteration = bench::seconds_since(start) / double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.counters["ratio_to_memcpy"] = per_iteration / floor;
}

/// BSPX alone: open + the directory + BRUSHLIST records + the per-face
/// lighting lumps (DECOUPLED_LM, RGBLIGHTING), the work `check` and the
/// builders add for a BSPX map.
void bspx_decode(benchmark::State& state, const std::string& relpath) {
    const auto path = bench::corpus(relpath);
    const double floor = bench::plain_read_seconds(path);
    size_t records = 0;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const Bsp bsp = Bsp::open(path);
        const bspx::Directory dir = bspx::read(bsp);
        if (const bspx::Lump* l = dir.find("BRUSHLIST")) records = bspx::decode_brushlist(bsp, *l).brush_count();
        const size_t faces = quake1::Map(bsp).visit([](const auto& t) { return t.faces.size(); });
        const bspx::Lighting light = bspx::read_lighting(bsp, faces, 0, false, {false, std::nullopt});
        records += light.decoupled.size() + light.rgb.size();
        benchmark::DoNotOptimize(records);
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    state.counters["records"] = double(records);
}

}  // namespace

// ericw-tools BSP2 map lit only through BSPX (RGBLIGHTING + DECOUPLED_LM, BRUSHLIST, no clipnodes).
BENCHMARK_CAPTURE(decode_and_check, bsp2_bspx, "q1_bsp2/bevytb_example_q1_lit.bsp")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(bspx_decode, bsp2_bspx, "q1_bsp2/bevytb_example_q1_lit.bsp")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

#define FAMILY(name, path)                                                                          \
    BENCHMARK_CAPTURE(decode_and_check, name, path)->UseRealTime()->Unit(benchmark::kMillisecond); \
    BENCHMARK_CAPTURE(pvs_all_clusters, name, path)->UseRealTime()->Unit(benchmark::kMicrosecond); \
    BENCHMARK_CAPTURE(pas_all_clusters, name, path)->UseRealTime()->Unit(benchmark::kMicrosecond)

FAMILY(quake1, "q1_v29/pd_change_dest.bsp");
FAMILY(bsp2, "q1_bsp2/rmq_mp_lobby.bsp");
FAMILY(goldsrc, "hl1_v30/cs16_de_torabora.bsp");
FAMILY(quake2, "q2_v38/librequake_lq_e0m2_quake2.bsp");
FAMILY(quake3, "q3_v46/nexuiz_ons-reborn.bsp");
FAMILY(nightfire, "nightfire_v42/nf_weapon_accuracy_nf.bsp");
FAMILY(source, "src_v21/l4d2_escapefromterrortown01.bsp");  // largest file (3.4 MB of it pakfile)
FAMILY(source_v17, "src_v17/vtmb_ch_temple_3.bsp");          // most geometry

BENCHMARK_MAIN();
