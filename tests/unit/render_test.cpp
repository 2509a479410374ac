// The CPU renderer on maps the tests generate: the demo's room map (Quake 1
// with lightmaps, PVS, textures, a door) and the one-box sample of every
// format. Depth against traces, PVS-culled = unculled, lightmap UVs,
// coverage, determinism (twice, 1 vs 2 threads), the cluster face table and
// the `render` verb (exit codes, --json, bad input).
#include "render_checks.hpp"
#include "room_map.hpp"
#include "run.hpp"
#include "samples.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/png.hpp>
#include <bspkit/render.hpp>
#include <bspkit/visibility.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <random>
#include <set>

using namespace bspkit;
using namespace bspkit::test;

namespace {

struct Rooms {
    samples::RoomDesign design = samples::room_design();
    Bsp bsp = Bsp::parse(samples::compile_room_map(design), "rooms.bsp");
    model::Map map = model::build(bsp);
    render::Scene scene = render::Scene::prepare(map, bsp);
    query::World world = query::World::prepare(bsp);
};

const Rooms& rooms() {
    static const Rooms r;
    return r;
}

/// A camera in the middle of each room, looking along +X then turning.
std::vector<render::Camera> room_cameras() {
    std::vector<render::Camera> out;
    const auto& d = rooms().design;
    for (size_t i = 0; i < d.rooms.size(); ++i) {
        const auto& b = d.rooms[i];
        render::Camera c;
        c.position = {(b.mins[0] + b.maxs[0]) / 2, (b.mins[1] + b.maxs[1]) / 2, b.mins[2] + 40};
        c.yaw = 60.0f * float(i);
        out.push_back(c);
    }
    out.push_back(*render::spawn_camera(rooms().scene));
    return out;
}

render::Options small() {
    render::Options o;
    o.width = 160;
    o.height = 120;
    return o;
}

TEST(Render, SpawnViewOfTheRoomsIsCoveredAndLit) {
    const auto cam = render::spawn_camera(rooms().scene);
    ASSERT_TRUE(cam);
    const render::Frame f = render::render(rooms().scene, *cam, small());
    // Inside closed rooms every pixel meets a wall.
    EXPECT_EQ(covered(f), f.depth.size());
    // Lit: most pixels neither black nor white.
    size_t mid = 0;
    for (size_t i = 0; i < f.depth.size(); ++i) {
        const int luma = (f.rgba[i * 4] + f.rgba[i * 4 + 1] + f.rgba[i * 4 + 2]) / 3;
        mid += luma > 8 && luma < 250;
    }
    EXPECT_GT(mid, f.depth.size() / 2);
    EXPECT_EQ(f.stats.camera_cluster, int64_t(rooms().world.leaf_at(cam->position).cluster));
}

TEST(Render, DepthAgreesWithLineTraces) {
    size_t compared = 0;
    for (const auto& cam : room_cameras()) {
        const render::Frame f = render::render(rooms().scene, cam, small());
        const DepthCheck d = depth_against_traces(rooms().map, rooms().world, cam, f, 2);
        EXPECT_EQ(d.agreed, d.compared) << d.first_disagreement;
        compared += d.compared;
    }
    EXPECT_GT(compared, 1000u);
}

TEST(Render, LightmapOnlyShowsTheAtlasAtTheSurfaceUVs) {
    size_t compared = 0, agreed = 0;
    std::string first;
    render::Options o = small();
    o.lightmap_only = true;
    for (const auto& cam : room_cameras()) {
        const render::Frame f = render::render(rooms().scene, cam, o);
        const LightmapCheck c = lightmap_against_atlas(rooms().map, cam, f, 1);
        compared += c.compared;
        agreed += c.agreed;
        if (first.empty()) first = c.first_disagreement;
    }
    EXPECT_GT(compared, 5000u);
    EXPECT_GE(double(agreed), 0.995 * double(compared)) << first;
}

// bilinear off: each pixel is the one luxel its UV falls in (a pixel whose UV
// lies within rounding of a luxel edge may take the neighbour), and the frame
// is not the filtered one.
TEST(Render, NearestSamplingShowsTheLuxelTheUvFallsIn) {
    size_t compared = 0, agreed = 0, differ = 0;
    std::string first;
    render::Options o = small();
    o.lightmap_only = true;
    o.bilinear = false;
    render::Options filtered = o;
    filtered.bilinear = true;
    for (const auto& cam : room_cameras()) {
        const render::Frame f = render::render(rooms().scene, cam, o);
        const LightmapCheck c = lightmap_against_atlas(rooms().map, cam, f, 1, false);
        compared += c.compared;
        agreed += c.agreed;
        if (first.empty()) first = c.first_disagreement;
        const render::Frame g = render::render(rooms().scene, cam, filtered);
        for (size_t i = 0; i < f.rgba.size(); ++i) differ += f.rgba[i] != g.rgba[i];
    }
    EXPECT_GT(compared, 5000u);
    EXPECT_GE(double(agreed), 0.98 * double(compared)) << first;
    EXPECT_GT(differ, compared / 10);
}

TEST(Render, PvsCulledEqualsUnculledAndCulls) {
    size_t culled = 0;
    for (const auto& cam : room_cameras()) {
        render::Options on = small(), off = small();
        off.pvs = false;
        const render::Frame a = render::render(rooms().scene, cam, on);
        const render::Frame b = render::render(rooms().scene, cam, off);
        EXPECT_EQ(a.rgba, b.rgba);
        EXPECT_EQ(a.depth, b.depth);
        culled += a.stats.faces_culled;
        EXPECT_EQ(a.stats.faces_drawn + a.stats.faces_culled, b.stats.faces_drawn);
    }
    EXPECT_GT(culled, 0u) << "the room map's PVS culls nothing: the comparison proves nothing";
}

TEST(Render, SameFrameTwiceAndOnOneOrTwoThreads) {
    const auto cam = *render::spawn_camera(rooms().scene);
    render::Options one = small(), two = small();
    one.threads = 1;
    two.threads = 2;
    const render::Frame a = render::render(rooms().scene, cam, two);
    const render::Frame b = render::render(rooms().scene, cam, two);
    const render::Frame c = render::render(rooms().scene, cam, one);
    EXPECT_EQ(a.rgba, b.rgba);
    EXPECT_EQ(a.rgba, c.rgba);
    EXPECT_EQ(a.depth, c.depth);
    EXPECT_EQ(a.face, c.face);
}

TEST(Render, ClusterFacesListEveryWorldFaceOfTheRooms) {
    const Visibility vis = Visibility::of(rooms().bsp);
    const ClusterFaces cf = ClusterFaces::of(rooms().bsp, vis);
    ASSERT_EQ(cf.clusters(), vis.clusters());
    std::set<uint32_t> listed;
    for (size_t c = 0; c < cf.clusters(); ++c) {
        const auto faces = cf.faces(c);
        EXPECT_TRUE(std::is_sorted(faces.begin(), faces.end()));
        listed.insert(faces.begin(), faces.end());
    }
    for (const auto& s : rooms().map.models[0].surfaces) EXPECT_TRUE(listed.count(uint32_t(s.face))) << s.face;
}

TEST(Render, SamplesWithoutFacesGiveTheBackground) {
    // The one-box samples of every format hold planes and vertices but no
    // faces (and no models for a tree): every view is the background, no crash.
    for (const auto& s : samples::all()) {
        SCOPED_TRACE(s.name);
        const Bsp bsp = Bsp::parse(s.bytes, s.name);
        const model::Map map = model::build(bsp);
        const render::Scene scene = render::Scene::prepare(map, bsp);
        EXPECT_EQ(scene.triangle_count(), 0u);
        render::Options o = small();
        const render::Camera top = render::overview_camera(scene, o);
        EXPECT_TRUE(top.orthographic);
        for (const render::Frame& f : {render::render(scene, top, o), render::render(scene, render::thumbnail_camera(scene), small())}) {
            EXPECT_EQ(covered(f), 0u);
            for (size_t i = 0; i < f.depth.size(); ++i) ASSERT_EQ(f.rgba[i * 4 + 3], o.background[3]);
        }
    }
}

TEST(Render, OverviewLooksDownOnTheFloorsWithoutCeilings) {
    render::Options o = small();
    const render::Camera top = render::overview_camera(rooms().scene, o);
    const render::Frame f = render::render(rooms().scene, top, o);
    // Every covered pixel is a floor (or the top of a pillar), not a ceiling:
    // the depth from above reaches below the tallest room's ceiling.
    float ceiling = -1e9f, floor = 1e9f;
    for (const auto& b : rooms().design.rooms) {
        ceiling = std::max(ceiling, b.maxs[2]);
        floor = std::min(floor, b.mins[2]);
    }
    size_t n = 0;
    for (size_t i = 0; i < f.depth.size(); ++i) {
        if (!std::isfinite(f.depth[i])) continue;
        ++n;
        EXPECT_GT(top.position.z - f.depth[i], floor - 1.0f);
        EXPECT_LT(top.position.z - f.depth[i], ceiling - 1.0f) << "a ceiling at pixel " << i;
    }
    EXPECT_GT(n, f.depth.size() / 10);
}

// --- the verb -----------------------------------------------------------------

std::string rooms_file() {
    static const std::string path = [] {
        const std::string dir = temp_dir("render_cli");
        write_file_atomic(dir + "/rooms.bsp", samples::compile_room_map(samples::room_design()));
        return dir + "/rooms.bsp";
    }();
    return path;
}

TEST(RenderCli, WritesAPngAndReportsWhatWasDrawn) {
    const std::string out = std::filesystem::path(rooms_file()).parent_path() / "rooms.png";
    const RunResult r = run_cli({"render", rooms_file(), "-o", out, "--size", "200x100", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["view"], "spawn");
    EXPECT_EQ(j["width"], 200);
    EXPECT_GE(j["camera_cluster"].get<int>(), 0);
    EXPECT_EQ(j["clusters"]["drawn"].get<int>() + j["clusters"]["culled"].get<int>(), j["clusters"]["total"].get<int>());
    EXPECT_GT(j["faces"]["drawn"].get<int>(), 0);
    EXPECT_TRUE(j["faces"].contains("culled"));
    const DecodedPng png = decode_png(read_file(out));
    EXPECT_EQ(png.width, 200u);
    EXPECT_EQ(png.height, 100u);
    for (const char* mode : {"--overview", "--thumbnail"})
        EXPECT_EQ(run_cli({"render", rooms_file(), "-o", out, mode}).exit_code, 0) << mode;
    EXPECT_EQ(run_cli({"render", rooms_file(), "-o", out, "--camera", "0,0,40", "--angles", "10,90", "--size", "64x64"}).exit_code, 0);
    EXPECT_EQ(run_cli({"render", rooms_file(), "-o", out, "--from", "info_player_start", "--size", "64x64"}).exit_code, 0);
}

TEST(RenderCli, UsageMistakesExitTwo) {
    const std::string out = std::filesystem::path(rooms_file()).parent_path() / "bad.png";
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--size", "0x10"}, {"--size", "big"}, {"--size", "20000x10"},
          {"--camera", "1,2"}, {"--overview", "--thumbnail"}, {"--angles", "1,2"}, {"--fov", "0"},
          {"--from", "no_such_entity"}}) {
        std::vector<std::string> args{"render", rooms_file(), "-o", out};
        args.insert(args.end(), extra.begin(), extra.end());
        const RunResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(RenderCli, TruncatedMapIsOneLineExitOne) {
    const Bytes whole = samples::compile_room_map(samples::room_design());
    const std::string dir = temp_dir("render_cli_bad");
    write_file_atomic(dir + "/cut.bsp", Bytes(whole.begin(), whole.begin() + whole.size() / 2));
    const RunResult r = run_cli({"render", dir + "/cut.bsp", "-o", dir + "/cut.png"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("cut.bsp: lump "), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/cut.png"));
}

}  // namespace

// GLQuake's EmitSkyPolys at time 0: dir.z x 3, then 6 x 63 / |dir| over 128.
TEST(Render, QuakeSkyLayerUvIsTheEnginesFlattenedSphere) {
    constexpr float k = 378.0f / 128.0f;
    EXPECT_EQ(model::sky_layer_uv({0, 0, 1}), (model::Vec2{0, 0}));    // straight up: the layer's corner
    EXPECT_EQ(model::sky_layer_uv({0, 0, -7}), (model::Vec2{0, 0}));
    EXPECT_FLOAT_EQ(model::sky_layer_uv({5, 0, 0}).x, k);                // the horizon: 6 x 63 texels out
    EXPECT_FLOAT_EQ(model::sky_layer_uv({0, -2, 0}).y, -k);
    EXPECT_FLOAT_EQ(model::sky_layer_uv({1, 0, 1}).x, k / std::sqrt(10.0f));  // z counts three times
    EXPECT_FLOAT_EQ(model::sky_layer_uv({1, 0, 1}).y, 0.0f);
    EXPECT_EQ(model::sky_layer_uv({0, 0, 0}), (model::Vec2{0, 0}));
    EXPECT_EQ(model::sky_layer_uv({std::nanf(""), 0, 1}), (model::Vec2{0, 0}));
}

// model::sky_box_at() against Quake 2's R_DrawSkyBox tables: st_to_vec (axis
// -> where s, t and the box's distance go) and skytexorder (axis -> image of
// rt bk lf ft up dn); MakeSkyVec's u = (s + 1) / 2, v = 1 - (t + 1) / 2. For
// directions all around, the face and (u, v) found must lead back along the
// same direction.
TEST(Render, SkyBoxFaceAndTexelFollowQuake2sTables) {
    constexpr int st_to_vec[6][3] = {{3, -1, 2}, {-3, 1, 2}, {1, 3, 2}, {-1, -3, 2}, {-2, -1, 3}, {2, -1, -3}};
    constexpr int skytexorder[6] = {0, 2, 1, 3, 4, 5};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1, 1);
    std::array<int, 6> hits{};
    for (int i = 0; i < 20000; ++i) {
        const model::Vec3 dir{d(rng), d(rng), d(rng)};
        const model::SkyBoxPoint p = model::sky_box_at(dir);
        ASSERT_GE(p.face, 0);
        ASSERT_LT(p.face, 6);
        ++hits[size_t(p.face)];
        EXPECT_GE(p.u, 0.0f);
        EXPECT_LE(p.u, 1.0f);
        EXPECT_GE(p.v, 0.0f);
        EXPECT_LE(p.v, 1.0f);
        int axis = 0;
        while (skytexorder[axis] != p.face) ++axis;
        const float b[3] = {2 * p.u - 1, 1 - 2 * p.v, 1};  // s, t, the box's side
        float v[3];
        for (int j = 0; j < 3; ++j) {
            const int k = st_to_vec[axis][j];
            v[j] = k < 0 ? -b[-k - 1] : b[k - 1];
        }
        const model::Vec3 back{v[0], v[1], v[2]};
        const model::Vec3 n = model::normalized(dir), m = model::normalized(back);
        EXPECT_GT(model::dot(n, m), 0.99999f) << dir.x << " " << dir.y << " " << dir.z << " face " << p.face;
    }
    for (int f = 0; f < 6; ++f) EXPECT_GT(hits[size_t(f)], 2000) << f;
    EXPECT_EQ(model::sky_box_at({0, 0, 0}).face, 4);
    EXPECT_EQ(model::sky_box_at({std::nanf(""), 0, 0}).face, 4);
}

// ioquake3's R_InitSkyTexCoords: a sphere of radius 4096 centred 4096 below
// the eye, raised by the cloud height; (s, t) the arc cosines of the hit's
// direction from the centre along x and y.
TEST(Render, Quake3CloudDomeTexCoords) {
    const float half_pi = float(std::acos(0.0));
    EXPECT_FLOAT_EQ(model::sky_cloud_st({0, 0, 1}, 512).x, half_pi);  // straight up: the dome's top
    EXPECT_FLOAT_EQ(model::sky_cloud_st({0, 0, 5}, 512).y, half_pi);
    // Along +x: p = sqrt(2 R h + h^2) = 2111.0 out, 4096 up from the centre, at R + h = 4608.
    const double p = std::sqrt(2.0 * 4096 * 512 + 512.0 * 512);
    EXPECT_NEAR(model::sky_cloud_st({3, 0, 0}, 512).x, std::acos(p / 4608), 1e-6);
    EXPECT_FLOAT_EQ(model::sky_cloud_st({3, 0, 0}, 512).y, half_pi);
    EXPECT_NEAR(model::sky_cloud_st({0, -1, 0}, 512).y, std::acos(-p / 4608), 1e-6);
    // A higher dome spreads the texture less toward the horizon.
    EXPECT_LT(model::sky_cloud_st({1, 0, 0}, 1024).x, model::sky_cloud_st({1, 0, 0}, 512).x);
    EXPECT_FLOAT_EQ(model::sky_cloud_st({0, 0, 0}, 512).x, half_pi);
}
