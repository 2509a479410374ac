// render::render frame times on the largest corpus map of each family:
// 1920x1080 from the spawn with and without the PVS, the 1920x1080 overview,
// and the 256x256 thumbnail; and a view that is all sky drawn with the sky's
// images (Quake 1 layers, a sky box, Quake 3 cloud layers) beside the same frame in the flat sky
// colour. Each is printed beside a floor measured in the
// same run, as a ratio: writing every pixel of the frame's colour and depth
// buffers once (what any renderer of that size must do) plus one copy of the
// scene's triangle data (what any renderer of that map must read).
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/model.hpp>
#include <bspkit/render.hpp>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace {

using namespace bspkit;

struct Loaded {
    Bsp bsp;
    model::Map map;
    render::Scene scene;
};

const char* const kMaps[] = {
    "q1_v29/pd_change_dest.bsp",           "q1_bsp2/bevytb_example_q1_lit.bsp", "hl1_v30/cs16_de_torabora.bsp",
    "q2_v38/librequake_lq_e0m2_quake2.bsp", "q3_v46/nexuiz_ons-reborn.bsp",      "nightfire_v42/nf_weapon_accuracy_nf.bsp",
    "src_v17/vtmb_ch_temple_3.bsp",        "src_v21/l4d2_escapefromterrortown01.bsp",
};

Loaded& loaded(const std::string& rel) {
    static std::map<std::string, std::unique_ptr<Loaded>> cache;
    auto& slot = cache[rel];
    if (!slot) {
        Bsp bsp = Bsp::open(bench::corpus(rel));
        model::Map map = model::build(bsp);
        render::Scene scene = render::Scene::prepare(map, bsp);
        slot.reset(new Loaded{std::move(bsp), std::move(map), std::move(scene)});
    }
    return *slot;
}

/// Seconds to write a w x h RGBA + float depth frame once and copy the scene's
/// triangle positions (36 bytes each) once: the floor of a frame.
double floor_seconds(uint32_t w, uint32_t h, size_t triangles) {
    std::vector<uint8_t> rgba(size_t(w) * h * 4);
    std::vector<float> depth(size_t(w) * h);
    std::vector<float> src(triangles * 9, 1.0f), dst(triangles * 9);
    double best = 1e30;
    for (int k = 0; k < 5; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        std::fill(rgba.begin(), rgba.end(), uint8_t(k));
        std::fill(depth.begin(), depth.end(), float(k));
        std::memcpy(dst.data(), src.data(), src.size() * sizeof(float));
        benchmark::DoNotOptimize(rgba.data());
        benchmark::DoNotOptimize(depth.data());
        benchmark::DoNotOptimize(dst.data());
        best = std::min(best, bench::seconds_since(t0));
    }
    return best;
}

enum class View { spawn_pvs, spawn_all, overview, thumbnail };

void frame(benchmark::State& state, const std::string& rel, View view) {
    Loaded& l = loaded(rel);
    render::Options o;
    render::Camera cam;
    if (view == View::thumbnail) {
        o.width = o.height = 256;
        cam = render::thumbnail_camera(l.scene);
    } else if (view == View::overview) {
        cam = render::overview_camera(l.scene, o);
    } else {
        cam = render::spawn_camera(l.scene).value_or(render::orbit_camera(l.scene));
        o.pvs = view == View::spawn_pvs;
    }
    const double floor = floor_seconds(o.width, o.height, l.scene.triangle_count());
    render::Stats stats;
    // The first frame into fresh memory (what one `bspkit render` pays), then
    // frames of a sequence, rendered into the same Frame (render_into).
    const auto t_first = std::chrono::steady_clock::now();
    render::Frame f = render::render(l.scene, cam, o);
    state.counters["first_frame_ms"] = bench::seconds_since(t_first) * 1e3;
    const auto t0 = std::chrono::steady_clock::now();
    for (auto _ : state) {
        render::render_into(l.scene, cam, o, f);
        stats = f.stats;
        benchmark::DoNotOptimize(f.rgba.data());
    }
    const double per = bench::seconds_since(t0) / double(state.iterations());
    state.counters["ms_per_frame"] = per * 1e3;
    state.counters["floor_ms"] = floor * 1e3;
    state.counters["ratio_to_floor"] = per / floor;
    state.counters["scene_tris"] = double(l.scene.triangle_count());
    state.counters["tris_set_up"] = double(stats.triangles);
    state.counters["faces_culled"] = double(stats.faces_culled);
}

/// Sky images (Options::sky_images) against the same frame with the flat sky
/// colour in the same run: q1_mp_lobby with its one texture renamed "sky1",
/// so that the spawn view is all sky, drawn with its Quake 1 layers, and
/// again with a generated 512 x 512 sky box, and two generated cloud layers, in their place.
enum class Sky { layers, box, clouds };

void sky_frame(benchmark::State& state, Sky kind) {
    Bytes bytes = read_file(bench::corpus("q1_v29/q1_mp_lobby.bsp"));
    const uint32_t textures = load<uint32_t>(&bytes[4 + 2 * 8]);
    uint8_t* mt = &bytes[textures + load<uint32_t>(&bytes[textures + 8])];  // miptex 1 (0 is absent)
    std::memcpy(mt, "sky1\0", 5);
    const Bsp bsp = Bsp::parse(bytes, "q1_mp_lobby_sky.bsp");
    model::Map map = model::build(bsp);
    if (!map.sky_layers) {
        state.SkipWithError("the renamed texture gave no sky layers");
        return;
    }
    const auto pattern = [](model::Texture& t, uint32_t side, uint8_t blue) {
        t.width = t.height = side;
        t.rgba.resize(size_t(side) * side * 4);
        for (size_t i = 0; i < t.rgba.size(); i += 4)
            t.rgba[i] = uint8_t(i >> 11), t.rgba[i + 1] = uint8_t(i >> 3), t.rgba[i + 2] = blue, t.rgba[i + 3] = 255;
    };
    if (kind == Sky::box) {
        map.sky_layers.reset();
        map.sky_box.emplace();
        for (size_t f = 0; f < 6; ++f) pattern(map.sky_box->faces[f], 512, uint8_t(40 * f));
    } else if (kind == Sky::clouds) {  // Quake 3's usual two: an opaque layer, then one added
        map.sky_layers.reset();
        map.sky_clouds.emplace();
        map.sky_clouds->layers.resize(2);
        pattern(map.sky_clouds->layers[0].image, 256, 90);
        pattern(map.sky_clouds->layers[1].image, 256, 20);
        map.sky_clouds->layers[0].scale_s = 2, map.sky_clouds->layers[0].scale_t = 3;
        map.sky_clouds->layers[1].dst = model::BlendFactor::one;
    }
    const render::Scene scene = render::Scene::prepare(map, bsp);
    const render::Camera cam = render::spawn_camera(scene).value_or(render::orbit_camera(scene));
    render::Options o;
    render::Frame f = render::render(scene, cam, o);
    const auto per_frame = [&](bool images, int frames) {
        o.sky_images = images;
        const auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < frames; ++k) render::render_into(scene, cam, o, f);
        benchmark::DoNotOptimize(f.rgba.data());
        return bench::seconds_since(t0) / frames;
    };
    const double flat = per_frame(false, 5);
    double images = 0;
    for (auto _ : state) images = per_frame(true, 1);
    images = per_frame(true, 5);
    state.counters["ms_per_frame"] = images * 1e3;
    state.counters["flat_sky_ms"] = flat * 1e3;
    state.counters["ratio_to_flat_sky"] = images / flat;
    state.counters["sky_pixels"] = double(f.stats.pixels_covered);
}

void register_all() {
    benchmark::RegisterBenchmark("sky_layers_1080p/q1_v29/q1_mp_lobby.bsp", [](benchmark::State& s) { sky_frame(s, Sky::layers); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("sky_box_1080p/q1_v29/q1_mp_lobby.bsp", [](benchmark::State& s) { sky_frame(s, Sky::box); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark("sky_clouds_1080p/q1_v29/q1_mp_lobby.bsp", [](benchmark::State& s) { sky_frame(s, Sky::clouds); })
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    for (const char* rel : kMaps) {
        const std::string r = rel;
        benchmark::RegisterBenchmark(("spawn_1080p_pvs/" + r).c_str(), [r](benchmark::State& s) { frame(s, r, View::spawn_pvs); })
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("spawn_1080p_no_pvs/" + r).c_str(), [r](benchmark::State& s) { frame(s, r, View::spawn_all); })
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("overview_1080p/" + r).c_str(), [r](benchmark::State& s) { frame(s, r, View::overview); })
            ->Unit(benchmark::kMillisecond)->UseRealTime();
        benchmark::RegisterBenchmark(("thumbnail_256/" + r).c_str(), [r](benchmark::State& s) { frame(s, r, View::thumbnail); })
            ->Unit(benchmark::kMillisecond)->UseRealTime();
    }
}

}  // namespace

int main(int argc, char** argv) {
    register_all();
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
