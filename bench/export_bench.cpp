// `bspkit export` of the largest corpus map of each family to .glb and .obj,
// as a ratio to plain reading of the same file measured in the same run:
//   export_*    the whole command: open + model::build (lightmaps for glb,
//               patch tessellation for Quake 3) + write (temp file + rename);
//   write_*     the exporter alone on a model built beforehand.
// A family whose geometry builder still throws is reported and skipped
// (SkipWithError), the others still run.
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/export.hpp>
#include <bspkit/model.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace {

using namespace bspkit;
namespace fs = std::filesystem;

const fs::path& out_dir() {
    static const fs::path dir = [] {
        const fs::path d = fs::temp_directory_path() / ("bspkit_export_bench_" + std::to_string(::getpid()));
        fs::create_directories(d);
        return d;
    }();
    static const struct Cleanup {
        ~Cleanup() { fs::remove_all(dir); }
    } cleanup;
    return dir;
}

model::BuildOptions build_options(exporter::FileFormat format) {
    model::BuildOptions o;
    o.lightmaps = format != exporter::FileFormat::obj;  // as `bspkit export` does
    return o;
}

/// The model, or nullopt after reporting why the family is skipped.
std::optional<model::Map> try_build(benchmark::State& state, const fs::path& path, exporter::FileFormat format) {
    try {
        return model::build(Bsp::open(path), build_options(format));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "export_bench: skipping %s: its geometry builder fails: %s\n", path.string().c_str(),
                     e.what());
        state.SkipWithError("geometry builder failed (see stderr)");
        return std::nullopt;
    }
}

void export_whole(benchmark::State& state, const std::string& relpath, exporter::FileFormat format) {
    const auto path = bench::corpus(relpath);
    if (!try_build(state, path, format)) return;
    const double floor = bench::plain_read_seconds(path);
    const fs::path out = out_dir() / (format == exporter::FileFormat::obj ? "whole.obj" : "whole.glb");
    exporter::Summary summary;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const Bsp bsp = Bsp::open(path);
        const model::Map map = model::build(bsp, build_options(format));
        summary = exporter::write(map, out);
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    state.counters["triangles"] = double(summary.triangles);
    state.counters["out_MB"] = double(fs::file_size(out)) / 1e6;
}

void write_only(benchmark::State& state, const std::string& relpath, exporter::FileFormat format) {
    const auto path = bench::corpus(relpath);
    const auto map = try_build(state, path, format);
    if (!map) return;
    const double floor = bench::plain_read_seconds(path);
    const fs::path out = out_dir() / (format == exporter::FileFormat::obj ? "only.obj" : "only.glb");
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(exporter::write(*map, out).triangles);
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
}

constexpr auto kGlb = exporter::FileFormat::glb;
constexpr auto kObj = exporter::FileFormat::obj;

}  // namespace

#define FAMILY(name, path)                                                                                        \
    BENCHMARK_CAPTURE(export_whole, glb_##name, path, kGlb)->UseRealTime()->Unit(benchmark::kMillisecond);        \
    BENCHMARK_CAPTURE(export_whole, obj_##name, path, kObj)->UseRealTime()->Unit(benchmark::kMillisecond);        \
    BENCHMARK_CAPTURE(write_only, glb_##name, path, kGlb)->UseRealTime()->Unit(benchmark::kMillisecond);          \
    BENCHMARK_CAPTURE(write_only, obj_##name, path, kObj)->UseRealTime()->Unit(benchmark::kMillisecond)

FAMILY(quake1, "q1_v29/pd_change_dest.bsp");
FAMILY(bsp2, "q1_bsp2/rmq_mp_lobby.bsp");
FAMILY(bsp2_bspx, "q1_bsp2/bevytb_example_q1_lit.bsp");  // lit through BSPX RGBLIGHTING + DECOUPLED_LM
FAMILY(goldsrc, "hl1_v30/cs16_de_torabora.bsp");
FAMILY(quake2, "q2_v38/librequake_lq_e0m2_quake2.bsp");
FAMILY(quake3, "q3_v46/nexuiz_ons-reborn.bsp");
FAMILY(nightfire, "nightfire_v42/nf_weapon_accuracy_nf.bsp");
FAMILY(source, "src_v21/l4d2_escapefromterrortown01.bsp");  // largest file (3.4 MB of it pakfile)
FAMILY(source_v17, "src_v17/vtmb_ch_temple_3.bsp");          // most geometry

BENCHMARK_MAIN();
