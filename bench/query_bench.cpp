// query::World traces per second on the largest corpus map of each family,
// and on sdk_vehicles_v19, whose displacement terrain boxes collide with:
// random line traces and player-box traces from empty points, one thread
// (per core) and the batch API on every core; the same line rays against the
// exported world triangles with Embree 3 in the same run as the anchor (when
// the bench was built with Embree), printed as ratios. Without Embree the
// anchor is a brute-force-free floor: a plain read of the file (ratio_to_read).
// Then the command line's `bspkit trace MAP --rays FILE` (text in, JSON lines
// out, every core) on the same rays, written exactly and then with two
// decimals, a whole process beside `cat` of the rays file, and beside the
// library's batch in this process.
#include "bench_support.hpp"
#include "process_runs.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#ifdef BSPKIT_HAVE_EMBREE
#include <embree3/rtcore.h>
#endif

namespace {

using namespace bspkit;
using query::Vec3;

struct Scene {
    std::vector<float> vertices;  // x y z, per triangle corner
    std::vector<uint32_t> indices;
    Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
};

Scene world_mesh(const Bsp& bsp) {
    model::BuildOptions options;
    options.lightmaps = options.textures = false;
    options.all_models = false;
    const model::Map map = model::build(bsp, options);
    Scene s;
    for (const auto& m : map.models) {
        if (m.index != 0) continue;
        for (const auto& surf : m.surfaces) {
            const uint32_t base = uint32_t(s.vertices.size() / 3);
            for (const auto& v : surf.vertices) {
                s.vertices.insert(s.vertices.end(), {v.position.x, v.position.y, v.position.z});
                s.lo = {std::min(s.lo.x, v.position.x), std::min(s.lo.y, v.position.y), std::min(s.lo.z, v.position.z)};
                s.hi = {std::max(s.hi.x, v.position.x), std::max(s.hi.y, v.position.y), std::max(s.hi.z, v.position.z)};
            }
            for (uint32_t i : surf.indices) s.indices.push_back(base + i);
        }
    }
    return s;
}

std::vector<query::Ray> random_rays(const query::World& w, const Scene& s, size_t n, bool box) {
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> ux(s.lo.x, s.hi.x), uy(s.lo.y, s.hi.y), uz(s.lo.z, s.hi.z), d(-1, 1);
    const auto player = w.player();
    std::vector<query::Ray> rays;
    for (size_t attempt = 0; rays.size() < n && attempt < n * 500; ++attempt) {
        const Vec3 a{ux(rng), uy(rng), uz(rng)};
        if (box ? w.trace(a, a, player).startsolid : w.contents(a).solid()) continue;
        const Vec3 dir = model::normalized({d(rng), d(rng), d(rng)});
        rays.push_back({a, a + dir * 2048.0f});
    }
    return rays;
}

double per_second(size_t n, double seconds) { return seconds > 0 ? double(n) / seconds : 0; }

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// Best of `runs`: CPU time of this thread for one-thread figures ("per
/// core": other processes on a loaded machine do not count), wall time for
/// the batches that use every core.
template <class Fn>
double best_seconds(Fn&& fn, bool cpu = true, int runs = 3) {
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_seconds();
        fn();
        best = std::min(best, cpu ? thread_cpu_seconds() - c0 : bench::seconds_since(t0));
    }
    return best;
}

void run(const std::string& relpath) {
    const auto path = bench::corpus(relpath);
    const double read_s = bench::plain_read_seconds(path);
    const Bsp bsp = Bsp::open(path);
    const auto t_prep = std::chrono::steady_clock::now();
    const query::World world = query::World::prepare(bsp);
    const double prepare_s = bench::seconds_since(t_prep);
    const Scene scene = world_mesh(bsp);
    const auto rays = random_rays(world, scene, 200000, false);
    std::vector<query::TraceResult> results(rays.size());
    size_t hits = 0;
    const double line_s = best_seconds([&] {
        hits = 0;
        for (size_t i = 0; i < rays.size(); ++i) {
            results[i] = world.trace(rays[i].start, rays[i].end);
            hits += results[i].fraction < 1;
        }
    });
    const double leaf_s = best_seconds([&] {
        for (const auto& ray : rays) benchmark::DoNotOptimize(world.leaf_at(ray.start));
    });
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const double batch_s = best_seconds([&] { world.trace(rays, results, {}, cores); }, false);
    double box_rate = 0;
    bool box_ok = world.hulls().empty() || world.hulls()[1].available;
    if (box_ok) {
        const auto box_rays = random_rays(world, scene, 50000, true);
        std::vector<query::TraceResult> box_results(box_rays.size());
        const auto player = world.player();
        const double box_s = best_seconds([&] {
            for (size_t i = 0; i < box_rays.size(); ++i)
                box_results[i] = world.trace(box_rays[i].start, box_rays[i].end, player);
        });
        box_rate = per_second(box_rays.size(), box_s);
    }
    const double line_rate = per_second(rays.size(), line_s);
    std::printf("%-42s %8zu tris  prepare %6.1f ms (%5.1fx read)  leaf_at %5.2f M/s/core  line %6.2f M/s/core (%.0f%% hit)  batch %5.2f M/s on %u  box %s",
                relpath.c_str(), scene.indices.size() / 3, prepare_s * 1e3, prepare_s / read_s,
                per_second(rays.size(), leaf_s) / 1e6, line_rate / 1e6,
                rays.empty() ? 0.0 : 100.0 * double(hits) / double(rays.size()), per_second(rays.size(), batch_s) / 1e6,
                cores, box_ok ? "" : "n/a (no clipnodes)");
    if (box_ok) std::printf("%5.2f M/s/core", box_rate / 1e6);
    // The same line rays with brush models (doors, platforms...) at their entities' origins.
    {
        query::TraceOptions with_models;
        with_models.models = true;
        size_t on_models = 0;
        const double models_s = best_seconds([&] {
            on_models = 0;
            for (size_t i = 0; i < rays.size(); ++i) {
                results[i] = world.trace(rays[i].start, rays[i].end, with_models);
                on_models += results[i].model > 0;
            }
        });
        std::printf("  line+models %5.2f M/s/core (%.2fx the world's; %.1f%% on a model)", per_second(rays.size(), models_s) / 1e6,
                    models_s / line_s, rays.empty() ? 0.0 : 100.0 * double(on_models) / double(rays.size()));
    }
    // visible(a, b) on the same pairs: the two leaves, a PVS row and the line
    // trace (with the opaque mask); its floor is the line trace alone.
    size_t seen = 0;
    const double visible_s = best_seconds([&] {
        seen = 0;
        for (const auto& ray : rays) seen += world.visible(ray.start, ray.end).visible();
    });
    std::printf("  visible %5.2f M/s/core (%.2fx a line trace; %.0f%% visible)", per_second(rays.size(), visible_s) / 1e6,
                visible_s / line_s, rays.empty() ? 0.0 : 100.0 * double(seen) / double(rays.size()));
#ifdef BSPKIT_HAVE_EMBREE
    RTCDevice device = rtcNewDevice("threads=1");
    RTCScene rs = rtcNewScene(device);
    RTCGeometry geom = rtcNewGeometry(device, RTC_GEOMETRY_TYPE_TRIANGLE);
    float* vb = static_cast<float*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                                            3 * sizeof(float), scene.vertices.size() / 3));
    std::copy(scene.vertices.begin(), scene.vertices.end(), vb);
    uint32_t* ib = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(geom, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                                                  3 * sizeof(uint32_t), scene.indices.size() / 3));
    std::copy(scene.indices.begin(), scene.indices.end(), ib);
    rtcCommitGeometry(geom);
    rtcAttachGeometry(rs, geom);
    rtcReleaseGeometry(geom);
    rtcCommitScene(rs);
    size_t embree_hits = 0;
    const double embree_s = best_seconds([&] {
        embree_hits = 0;
        RTCIntersectContext ctx;
        rtcInitIntersectContext(&ctx);
        for (const auto& r : rays) {
            RTCRayHit rh{};
            rh.ray.org_x = r.start.x;
            rh.ray.org_y = r.start.y;
            rh.ray.org_z = r.start.z;
            rh.ray.dir_x = r.end.x - r.start.x;
            rh.ray.dir_y = r.end.y - r.start.y;
            rh.ray.dir_z = r.end.z - r.start.z;
            rh.ray.tnear = 0;
            rh.ray.tfar = 1;
            rh.ray.mask = ~0u;
            rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
            rtcIntersect1(rs, &ctx, &rh);
            embree_hits += rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
        }
    });
    rtcReleaseScene(rs);
    rtcReleaseDevice(device);
    const double embree_rate = per_second(rays.size(), embree_s);
    std::printf("  embree %6.2f M/s/core  bsp/embree %.2f\n", embree_rate / 1e6, line_rate / embree_rate);
#else
    std::printf("  (built without Embree: no anchor)\n");
#endif
    // The same rays through the command line: written exactly (9 significant
    // digits, so the command traces the library's rays), then as users and
    // scripts write them (two decimals: `trace --rays` copies such texts into
    // its JSON lines instead of printing the floats again).
    namespace fs = std::filesystem;
    const auto accept = [](int code, const std::vector<std::string>&) { return code == 0; };
    const auto run_cli = [&](const char* what, auto&& write) {
        const fs::path rays_file =
            fs::temp_directory_path() / ("bspkit_query_bench_" + std::to_string(::getpid()) + ".txt");
        {
            std::ofstream out(rays_file);
            for (const auto& r : rays) write(out, r);
        }
        const bench::ProcessPair cli = bench::compare_processes(
            {"/bin/cat", rays_file.string()}, {BSPKIT_CLI_PATH, "trace", path.string(), "--rays", rays_file.string()}, 5,
            "query_bench", accept);
        fs::remove(rays_file);
        std::printf("%-42s trace --rays, %s (CLI, whole process): %.1f ms, %.2f M rays/s; ratio to cat of the rays file "
                    "%.1f, to the library's batch %.1f\n",
                    "", what, cli.subject_ms, per_second(rays.size(), cli.subject_ms * 1e-3) / 1e6,
                    cli.subject_ms / cli.floor_ms, cli.subject_ms / (batch_s * 1e3));
    };
    run_cli("9 digits", [](std::ofstream& out, const query::Ray& r) {
        out.precision(9);
        out << r.start.x << ',' << r.start.y << ',' << r.start.z << ' ' << r.end.x << ',' << r.end.y << ',' << r.end.z
            << '\n';
    });
    run_cli("two decimals", [](std::ofstream& out, const query::Ray& r) {
        char line[160];
        const int n = std::snprintf(line, sizeof line, "%.2f,%.2f,%.2f %.2f,%.2f,%.2f\n", r.start.x, r.start.y, r.start.z,
                                    r.end.x, r.end.y, r.end.z);
        out.write(line, n);
    });
}

}  // namespace

int main(int argc, char** argv) {
    // Corpus-relative paths on the command line pick the maps (default: the largest of each family);
    // Google Benchmark flags (make bench passes --benchmark_min_time) are accepted and ignored.
    std::vector<std::string> chosen;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::printf("usage: query_bench [CORPUS_RELATIVE_MAP...]\n"
                        "Line and box traces (and visible(a, b)) per second per core, beside Embree on the same rays; "
                        "without maps, "
                        "the largest corpus map of each family and sdk_vehicles_v19.\n");
            return 0;
        }
        if (a.substr(0, 11) == "--benchmark") continue;
        if (a.substr(0, 1) == "-") {
            std::fprintf(stderr, "query_bench: unknown option %s; see --help\n", argv[i]);
            return 2;
        }
        chosen.emplace_back(a);
    }
    std::printf("random rays from empty points, 2048 units long; per core = one thread's CPU time (batches: wall time)\n");
    for (const auto& f : chosen) run(f);
    if (!chosen.empty()) return 0;
    for (const char* f : {"q1_v29/pd_change_dest.bsp", "q1_bsp2/bevytb_example_q1_lit.bsp",
                          "hl1_v30/cs16_de_torabora.bsp", "q2_v38/librequake_lq_e0m2_quake2.bsp",
                          "q3_v46/nexuiz_ons-reborn.bsp", "nightfire_v42/nf_weapon_accuracy_nf.bsp",
                          "src_v21/l4d2_escapefromterrortown01.bsp", "src_v17/vtmb_ch_temple_3.bsp",
                          "src_v19/sdk_vehicles_v19.bsp"})
        run(f);
    return 0;
}
