// bspkit render FILE -o OUT.png: a picture of the map from the CPU renderer
// (bspkit/render.hpp): from a camera, an entity (default: the first player
// start), an overview from above, or a thumbnail view chosen automatically.
#include "common.hpp"
#include "texture_search.hpp"

#include <bspkit/png.hpp>
#include <bspkit/render.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::cli {
namespace {

struct RenderArgs {
    std::string file, out, size, camera, angles, from;
    float fov = 90;
    bool overview = false, thumbnail = false, no_pvs = false, json = false, lightmap_only = false;
    bool no_textures = false, no_lightmaps = false, no_props = false, flat_sky = false;
    unsigned threads = 0;
    TextureSearchArgs texture_search;
};

/// N comma-separated finite numbers (N in [min_n, max_n]), else UsageError naming `what`.
std::vector<float> numbers(const std::string& text, size_t min_n, size_t max_n, const std::string& what) {
    std::vector<float> out;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p <= end) {
        float v = 0;
        const auto r = std::from_chars(p, end, v);
        if (r.ec != std::errc() || !std::isfinite(v)) break;
        out.push_back(v);
        p = r.ptr;
        if (p == end) {
            if (out.size() >= min_n && out.size() <= max_n) return out;
            break;
        }
        if (*p != ',') break;
        ++p;
    }
    throw UsageError(what + " must be " + (min_n == max_n ? std::to_string(min_n) : std::to_string(min_n) + " or " + std::to_string(max_n)) +
                     " comma-separated numbers: '" + text + "'");
}

std::pair<uint32_t, uint32_t> parse_size(const std::string& text) {
    const size_t x = text.find('x');
    uint32_t w = 0, h = 0;
    const auto ok = [&](std::string_view s, uint32_t& v) {
        const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
        return r.ec == std::errc() && r.ptr == s.data() + s.size() && v >= 1 && v <= 16384;
    };
    if (x == std::string::npos || !ok(std::string_view(text).substr(0, x), w) || !ok(std::string_view(text).substr(x + 1), h))
        throw UsageError("--size must be WIDTHxHEIGHT, each 1-16384: '" + text + "'");
    return {w, h};
}

int run_render(const RenderArgs& a) {
    // Usage first, before any reading.
    const int modes = int(!a.camera.empty()) + int(!a.from.empty()) + int(a.overview) + int(a.thumbnail);
    if (modes > 1) throw UsageError("choose one of --camera, --from, --overview, --thumbnail");
    if (!a.angles.empty() && a.camera.empty()) throw UsageError("--angles goes with --camera");
    if (!(a.fov >= 1 && a.fov <= 179)) throw UsageError("--fov must be 1-179 degrees");
    render::Options options;
    std::tie(options.width, options.height) = a.size.empty() ? std::make_pair(a.thumbnail ? 256u : 1920u, a.thumbnail ? 256u : 1080u)
                                                             : parse_size(a.size);
    std::optional<render::Camera> camera;
    if (!a.camera.empty()) {
        const auto p = numbers(a.camera, 3, 3, "--camera");
        camera.emplace();
        camera->position = {p[0], p[1], p[2]};
        if (!a.angles.empty()) {
            const auto ang = numbers(a.angles, 2, 3, "--angles");
            camera->pitch = ang[0];
            camera->yaw = ang[1];
            camera->roll = ang.size() > 2 ? ang[2] : 0;
        }
    }
    options.pvs = !a.no_pvs;
    options.threads = a.threads;
    options.lightmap_only = a.lightmap_only;
    options.textures = !a.no_textures;
    options.lightmaps = !a.no_lightmaps;
    options.sky_images = !a.flat_sky;
    options.props = !a.no_props;

    const Bsp bsp = open_for_geometry(a.file);
    model::BuildOptions build;
    build.textures = options.textures;
    model::Map map = model::build(bsp, build);
    // Without textures the search still brings the Quake 3 lightmaps kept outside the map.
    if (a.texture_search.given() && (options.textures || options.lightmaps)) {
        textures::SearchPath path;
        path.textures = options.textures;
        path.sky_box = options.textures && options.sky_images && !a.overview;  // the overview hides the sky
        resolve_textures_reporting(map, bsp, a.texture_search, path);
    }
    print_diagnostics(a.file, map.diagnostics);  // after the search: it may find what the build left out
    const render::Scene scene = render::Scene::prepare(map, bsp, options);
    for (const std::string& w : scene.warnings()) fmt::print(stderr, "warning: {}\n", w);

    std::string view = "camera";
    if (a.overview) {
        camera = render::overview_camera(scene, options);
        view = "overview";
    } else if (a.thumbnail) {
        camera = render::thumbnail_camera(scene);
        view = "thumbnail";
    } else if (!a.from.empty()) {
        camera = render::entity_camera(scene, a.from);
        if (!camera) throw UsageError("--from '" + a.from + "': no entity with that index, targetname or classname and an origin");
        view = "entity";
    } else if (!camera) {
        camera = render::spawn_camera(scene);
        view = "spawn";
        if (!camera) {
            fmt::print(stderr, "{}: no player start: rendering the overview instead\n", a.file);
            camera = render::overview_camera(scene, options);
            view = "overview";
        }
    }
    if (!camera->orthographic) camera->fov = a.fov;

    const auto t0 = std::chrono::steady_clock::now();
    const render::Frame frame = render::render(scene, *camera, options);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const std::filesystem::path out(a.out);
    if (out.has_parent_path() && !std::filesystem::is_directory(out.parent_path()))
        throw Error({a.out, "", -1}, "the output folder does not exist");
    write_png(out, frame.width, frame.height, 4, frame.rgba);

    const render::Stats& st = frame.stats;
    if (a.json) {
        const nlohmann::json j = {
            {"file", a.file},
            {"format", format_id(bsp.format())},
            {"output", a.out},
            {"width", frame.width},
            {"height", frame.height},
            {"view", view},
            {"camera",
             {{"position", {camera->position.x, camera->position.y, camera->position.z}},
              {"angles", {camera->pitch, camera->yaw, camera->roll}},
              {"orthographic", camera->orthographic},
              {"fov", camera->fov}}},
            {"pvs", options.pvs},
            {"sky", options.hide_sky ? std::string_view("hidden")
                    : options.sky_images && options.textures && !options.lightmap_only ? scene.sky()
                                                                                      : std::string_view("colour")},
            {"camera_leaf", st.camera_leaf},
            {"camera_cluster", st.camera_cluster},
            {"clusters", {{"total", st.clusters}, {"drawn", st.clusters_visible}, {"culled", st.clusters - st.clusters_visible}}},
            {"faces", {{"drawn", st.faces_drawn}, {"culled", st.faces_culled}}},
            {"other_surfaces", st.surfaces_other},
            {"triangles", st.triangles},
            {"pixels_covered", st.pixels_covered},
            {"milliseconds", ms},
        };
        fmt::print("{}\n", json_text(j));
    } else {
        fmt::print("{}\n", a.out);
    }
    return kExitOk;
}

void add_render(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("render", "Render a picture of the map (CPU): a view, an overview or a thumbnail, as PNG");
    auto a = std::make_shared<RenderArgs>();
    cmd->add_option("FILE", a->file, "BSP file")->required();
    cmd->add_option("-o,--output", a->out, "PNG file to write")->required();
    cmd->add_option("--size", a->size, "WIDTHxHEIGHT (default 1920x1080; thumbnails 256x256)");
    cmd->add_option("--camera", a->camera, "Eye position X,Y,Z");
    cmd->add_option("--angles", a->angles, "PITCH,YAW[,ROLL] in degrees (Quake convention: positive pitch looks down)");
    cmd->add_option("--fov", a->fov, "Horizontal field of view in degrees (default 90)");
    cmd->add_option("--from", a->from, "View of an entity: index, targetname or classname (default: the first player start)");
    cmd->add_flag("--overview", a->overview, "Orthographic from above over the world, sky and roofs removed, shaded by height");
    cmd->add_flag("--thumbnail", a->thumbnail, "A small view from the spawn along its longest free direction");
    cmd->add_flag("--no-pvs", a->no_pvs, "Draw every face (default: only the clusters the camera's cluster can see)");
    cmd->add_flag("--lightmap-only", a->lightmap_only, "The raw combined lightmap alone (white textures)");
    cmd->add_flag("--no-textures", a->no_textures, "Flat colours instead of textures");
    cmd->add_flag("--no-lightmaps", a->no_lightmaps, "Textures fullbright");
    cmd->add_flag("--no-props", a->no_props, "Leave out Source static prop boxes");
    cmd->add_flag("--flat-sky", a->flat_sky, "Sky surfaces in one colour (default: the map's sky: Quake 1 / BSP2 its own layers, the others the sky box found with --game-dir)");
    cmd->add_option("--threads", a->threads, "Threads (default: all cores)");
    cmd->add_flag("--json", a->json, "Print the view and what was drawn and culled as JSON");
    add_texture_search_options(cmd, a->texture_search);
    add_salvage_flag(cmd);
    cmd->footer("Exit status: 0 ok, 1 unreadable file or geometry, 2 usage.");
    cmd->callback([&action, a] { action = [a] { return run_render(*a); }; });
}

}  // namespace

BSPKIT_REGISTER_VERB("render", add_render);

}  // namespace bspkit::cli
