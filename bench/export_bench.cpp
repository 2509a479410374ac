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

/// What `bspkit export` builds for an output format and lighting mode.
model::BuildOptions build_options(exporter::FileFormat format, exporter::Lighting lighting) {
    model::BuildOptions o;
    o.lightmaps = lighting == exporter::Lighting::baked ||
                  (lighting == exporter::Lighting::separate && format != exporter::FileFormat::obj);
    return o;
}

exporter::Options export_options(exporter::Lighting lighting) {
    exporter::Options o;
    o.lighting = lighting;
    return o;
}

/// The model, or nullopt after reporting why the family is skipped.
std::optional<model::Map> try_build(benchmark::State& state, const fs::path& path, exporter::FileFormat format,
                                    exporter::Lighting lighting) {
    try {
        return model::build(Bsp::open(path), build_options(format, lighting));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "export_bench: skipping %s: its geometry builder fails: %s\n", path.string().c_str(),
                     e.what());
        state.SkipWithError("geometry builder failed (see stderr)");
        return std::nullopt;
    }
}

void export_whole(benchmark::State& state, const std::string& relpath, exporter::FileFormat format,
                  exporter::Lighting lighting) {
    const auto path = bench::corpus(relpath);
    if (!try_build(state, path, format, lighting)) return;
    const double floor = bench::plain_read_seconds(path);
    const fs::path out = out_dir() / (format == exporter::FileFormat::obj ? "whole.obj" : "whole.glb");
    exporter::Summary summary;
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        const Bsp bsp = Bsp::open(path);
        const model::Map map = model::build(bsp, build_options(format, lighting));
        summary = exporter::write(map, out, export_options(lighting));
    }
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
    state.counters["triangles"] = double(summary.triangles);
    state.counters["out_MB"] = double(fs::file_size(out)) / 1e6;
}

void write_only(benchmark::State& state, const std::string& relpath, exporter::FileFormat format,
                exporter::Lighting lighting) {
    const auto path = bench::corpus(relpath);
    const auto map = try_build(state, path, format, lighting);
    if (!map) return;
    const double floor = bench::plain_read_seconds(path);
    const fs::path out = out_dir() / (format == exporter::FileFormat::obj ? "only.obj" : "only.glb");
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) benchmark::DoNotOptimize(exporter::write(*map, out, export_options(lighting)).triangles);
    bench::report_ratio(state, path, floor, bench::seconds_since(start));
}

constexpr auto kGlb = exporter::FileFormat::glb;
constexpr auto kObj = exporter::FileFormat::obj;
constexpr auto kBaked = exporter::Lighting::baked;        // the default: texture x light rasterised
constexpr auto kSeparate = exporter::Lighting::separate;  // the atlas as is (no baking)

}  // namespace

#define RUN(kind, name, path, format, lighting) \
    BENCHMARK_CAPTURE(kind, name, path, format, lighting)->UseRealTime()->Unit(benchmark::kMillisecond)
#define FAMILY(name, path)                                \
    RUN(export_whole, glb_baked_##name, path, kGlb, kBaked);       \
    RUN(export_whole, glb_separate_##name, path, kGlb, kSeparate); \
    RUN(export_whole, obj_baked_##name, path, kObj, kBaked);       \
    RUN(write_only, glb_baked_##name, path, kGlb, kBaked);         \
    RUN(write_only, glb_separate_##name, path, kGlb, kSeparate);   \
    RUN(write_only, obj_baked_##name, path, kObj, kBaked)

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
