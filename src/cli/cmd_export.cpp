// bspkit export FILE -o OUT.glb|OUT.gltf|OUT.obj [--models world|all] [--skip CLASSES]
//                    [--lighting baked|separate|none] [--exposure EV] [--bake-density N] [--no-sky]
//                    [--no-lightmaps] [--no-textures] [--tools] [--scale S] [--y-up] [--json]
#include "common.hpp"
#include "texture_search.hpp"

#include <bspkit/export.hpp>
#include <bspkit/model.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace bspkit::cli {
namespace {

/// A progress bar on stderr, drawn only when stderr is a terminal and the
/// work has taken more than a second; erased when done.
class ProgressBar {
public:
    ProgressBar() : start_(std::chrono::steady_clock::now()) {
        if (::isatty(2)) thread_ = std::thread([this] { loop(); });
    }
    ~ProgressBar() { finish(); }

    /// `fraction` < 0: the stage has no measure (a spinner is drawn).
    void set(const char* stage, double fraction) {
        stage_.store(stage);
        fraction_.store(fraction);
    }

    void finish() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        wake_.notify_all();
        thread_.join();
        if (drawn_) fmt::print(stderr, "\r\033[K");
    }

private:
    void loop() {
        std::unique_lock lock(mutex_);
        int tick = 0;
        while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return done_; })) {
            if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) continue;
            const double f = fraction_.load();
            constexpr int kWidth = 30;
            std::string bar(kWidth, ' ');
            if (f >= 0) {
                const int filled = int(std::min(1.0, f) * kWidth);
                std::fill_n(bar.begin(), filled, '#');
                fmt::print(stderr, "\rbspkit export: {:<9} [{}] {:3.0f}%", stage_.load(), bar, std::min(1.0, f) * 100);
            } else {
                bar[size_t(tick++ % kWidth)] = '#';
                fmt::print(stderr, "\rbspkit export: {:<9} [{}]     ", stage_.load(), bar);
            }
            std::fflush(stderr);
            drawn_ = true;
        }
    }

    std::chrono::steady_clock::time_point start_;
    std::atomic<const char*> stage_{"reading"};
    std::atomic<double> fraction_{-1};
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool done_ = false;
    bool drawn_ = false;
};

struct Args {
    std::string file, out, models = "all";
    std::vector<std::string> skip;
    bool no_lightmaps = false, no_textures = false, tools = false, y_up = false, json = false, hdr = false;
    std::string lighting = "baked";
    double exposure = 0;
    uint32_t bake_density = 0;
    bool no_sky = false;
    float scale = 1;
    std::string patch_level = "adaptive";
    TextureSearchArgs texture_search;
};

/// --patch-level: "adaptive" (the default) or a fixed number of subdivisions 1..16.
int parse_patch_level(const std::string& text) {
    if (text == "adaptive") return -1;
    int level = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), level);
    if (ec != std::errc() || end != text.data() + text.size() || level < 1 || level > 16)
        throw UsageError("--patch-level must be 'adaptive' or a number from 1 to 16: " + text);
    return level;
}

int run_export(const Args& a) {
    const auto format = exporter::format_for_path(a.out);
    if (!format) throw UsageError("the output must end in .glb, .gltf or .obj: " + a.out);
    if (!(a.scale > 0) || !std::isfinite(a.scale)) throw UsageError("--scale must be a positive number");
    const int patch_level = parse_patch_level(a.patch_level);
    exporter::Options options;
    options.all_models = a.models == "all";
    for (const std::string& list : a.skip) {
        size_t start = 0;
        while (start <= list.size()) {
            const size_t comma = std::min(list.find(',', start), list.size());
            if (comma > start) options.skip_classes.push_back(list.substr(start, comma - start));
            start = comma + 1;
        }
    }
    options.lighting = a.no_lightmaps || a.lighting == "none" ? exporter::Lighting::none
                       : a.lighting == "separate"            ? exporter::Lighting::separate
                                                             : exporter::Lighting::baked;
    if (!std::isfinite(a.exposure) || std::fabs(a.exposure) > 16)
        throw UsageError("--exposure must be a number of EV from -16 to 16");
    options.exposure = a.exposure;
    options.bake_texels_per_luxel = a.bake_density;
    options.sky = !a.no_sky;
    options.textures = !a.no_textures;
    options.tool_surfaces = a.tools;
    options.scale = a.scale;
    options.y_up = a.y_up;

    ProgressBar progress;
    const Bsp bsp = open_for_geometry(a.file);
    progress.set("building", -1);
    model::BuildOptions build;
    build.lightmaps = options.lighting == exporter::Lighting::baked ||
                      (options.lighting == exporter::Lighting::separate && *format != exporter::FileFormat::obj);
    build.textures = options.textures;
    build.all_models = options.all_models;
    build.patch_level = patch_level;
    build.hdr_lightmaps = a.hdr;
    model::Map map = model::build(bsp, build);
    nlohmann::json missing_textures = nlohmann::json::array();
    // Without textures the search still brings the Quake 3 lightmaps kept outside the map.
    if (a.texture_search.given() && (options.textures || build.lightmaps)) {
        textures::SearchPath path;
        path.textures = options.textures;
        missing_textures = resolve_textures_reporting(map, bsp, a.texture_search, path);
    }
    options.progress = [&progress](std::string_view stage, double fraction) {
        progress.set(stage == "writing" ? "writing" : stage == "images" ? "images" : "geometry", fraction);
    };
    const exporter::Summary summary = exporter::write(map, a.out, options);
    progress.finish();
    // What the build left out or could not read (a refused lightmap atlas,
    // lightmaps kept outside the map...): without a word, the export would
    // just look dark or bare.
    print_diagnostics(a.file, map.diagnostics);

    if (a.json) {
        nlohmann::json files = nlohmann::json::array();
        for (const auto& f : summary.files) files.push_back(f.string());
        const nlohmann::json j = {{"file", a.file},
                                  {"output", a.out},
                                  {"files", files},
                                  {"models", summary.models},
                                  {"primitives", summary.primitives},
                                  {"vertices", summary.vertices},
                                  {"triangles", summary.triangles},
                                  {"materials", summary.materials},
                                  {"images", summary.images},
                                  {"skipped_surfaces", summary.skipped_surfaces},
                                  {"skipped_models", summary.skipped_models},
                                  {"missing", missing_textures},
                                  {"warnings", diagnostics_json(map.diagnostics)}};
        fmt::print("{}\n", json_text(j));
    }
    fmt::print(stderr, "{}: wrote {} ({} models, {} triangles, {} materials, {} images; skipped {} surfaces, {} models)\n",
               a.file, a.out, summary.models, summary.triangles, summary.materials, summary.images,
               summary.skipped_surfaces, summary.skipped_models);
    return kExitOk;
}

void add_export(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "export",
        "Export the geometry to glTF 2.0 (.glb / .gltf) or Wavefront OBJ (.obj), chosen by the output's extension.\n"
        "glTF: a node per model, entities (key/values in extras) and static props as nodes, embedded textures,\n"
        "lit as in the game with no scene lights (--lighting baked: unlit materials, texture x lightmap baked on\n"
        "TEXCOORD_1); Y-up for viewers (a root rotation, or --y-up to convert the data).\n"
        "OBJ: map coordinates (Z-up unless --y-up), .mtl and PNG textures (the baked one for lit surfaces) beside it.\n"
        "Skipped: nodraw surfaces, trigger and clip surfaces (unless --tools), billboards.");
    auto a = std::make_shared<Args>();
    cmd->add_option("FILE", a->file, "BSP file")->required();
    cmd->add_option("-o,--output", a->out, "Output file: .glb, .gltf or .obj")->required();
    cmd->add_option("--models", a->models, "world: the world only; all: every brush model too (default)")
        ->check(CLI::IsMember({"world", "all"}));
    cmd->add_option("--skip", a->skip,
                    "Comma-separated entity classnames (globs, e.g. trigger_*) whose brush models are skipped");
    cmd->add_option("--lighting", a->lighting,
                    "baked (default): unlit materials, texture x light as the engine shows it, baked into one\n"
                    "texture on the lightmap UVs; separate: PBR materials + the lightmap atlas on TEXCOORD_1\n"
                    "(occlusionTexture) for relighting; none: no lightmap")
        ->check(CLI::IsMember({"baked", "separate", "none"}));
    cmd->add_option("--exposure", a->exposure,
                    "Light values times 2^EV (e.g. 2 for a dark HDR map; applied after the engine's overbright)");
    cmd->add_option("--bake-density", a->bake_density,
                    "Baked texels per luxel (default: up to 4 while the texture stays within 4096 texels)")
        ->check(CLI::Range(1, 64));
    cmd->add_flag("--no-sky", a->no_sky, "Drop sky surfaces (so the map can be seen from above)");
    cmd->add_flag("--no-lightmaps", a->no_lightmaps, "Same as --lighting none");
    cmd->add_flag("--hdr", a->hdr, "Source: lightmaps from the HDR lighting lump when the map has one");
    cmd->add_flag("--no-textures", a->no_textures, "Do not write the map's embedded textures");
    cmd->add_flag("--tools", a->tools, "Keep trigger and clip surfaces");
    add_texture_search_options(cmd, a->texture_search);
    cmd->add_option("--scale", a->scale, "Multiply every coordinate (e.g. 0.0254: Quake units to metres)");
    cmd->add_option("--patch-level", a->patch_level,
                    "Quake 3 bezier patches: 'adaptive' (default: subdivisions by curvature, no cracks) or a\n"
                    "fixed number of subdivisions per patch segment, 1-16");
    cmd->add_flag("--y-up", a->y_up, "Rotate the data from Z-up to Y-up ((x, y, z) -> (x, z, -y))");
    cmd->add_flag("--json", a->json, "Print a JSON summary of what was written on stdout");
    add_salvage_flag(cmd);
    cmd->callback([&action, a] { action = [a] { return run_export(*a); }; });
}

}  // namespace

BSPKIT_REGISTER_VERB("export", add_export);

}  // namespace bspkit::cli
