// The CPU renderer (bspkit/render.hpp) on every readable corpus map: depth
// agrees with line traces, a PVS-culled frame is pixel-identical to an
// unculled one, lightmap-only frames show the atlas at the surfaces' own
// lightmap UVs, and the spawn view, overview and thumbnail show the map.
#include "corpus.hpp"
#include "render_checks.hpp"
#include "run.hpp"
#include "texture_files.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/render.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/visibility.hpp>

#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <limits>
#include <numbers>
#include <set>

using namespace bspkit;
using namespace bspkit::test;

namespace {

std::vector<CorpusFile> readable() {
    std::vector<CorpusFile> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f);
    return out;
}

struct Loaded {
    Bsp bsp;
    model::Map map;
    render::Scene scene;
    query::World world;
};

std::unique_ptr<Loaded> load(const CorpusFile& f) {
    Bsp bsp = Bsp::open(f.path);
    model::Map map = model::build(bsp);
    render::Scene scene = render::Scene::prepare(map, bsp);
    query::World world = query::World::prepare(bsp);
    return std::unique_ptr<Loaded>(new Loaded{std::move(bsp), std::move(map), std::move(scene), std::move(world)});
}

/// The spawn camera, else the first entity in an open leaf, else the middle of the world looking along +X.
render::Camera main_camera(const Loaded& l) {
    if (auto c = render::spawn_camera(l.scene)) return *c;
    for (size_t e = 1; e < l.scene.entities().size(); ++e)
        if (auto c = render::entity_camera(l.scene, std::to_string(e)))
            if (!l.world.leaf_at(c->position).contents.solid()) return *c;
    return render::orbit_camera(l.scene);
}

/// The main camera and the same place looking down at 60 degrees (maps whose walls are all sky).
std::vector<render::Camera> depth_cameras(const Loaded& l) {
    render::Camera down = main_camera(l);
    down.pitch = 60;
    return {main_camera(l), down};
}

/// More viewpoints: up to `n` entities, spread over the lump, whose eye
/// position has room for the player's box (a camera inside a wall would see
/// through it past the near plane, which no PVS covers) and a cluster.
std::vector<render::Camera> more_cameras(const Loaded& l, size_t n) {
    std::vector<render::Camera> out;
    const auto& ents = l.scene.entities();
    const auto player = l.world.player();
    const size_t stride = std::max<size_t>(1, ents.size() / (n * 2 + 1));
    for (size_t e = 1; e < ents.size() && out.size() < n; e += stride) {
        auto c = render::entity_camera(l.scene, std::to_string(e));
        if (!c) continue;
        const auto leaf = l.world.leaf_at(c->position);
        if (leaf.cluster < 0 || leaf.contents.solid()) continue;
        try {
            if (l.world.trace(c->position, c->position, player).startsolid) continue;
        } catch (const Error&) {  // no clip hulls (BSPX BRUSHLIST maps): the open leaf must do
        }
        c->yaw += 30.0f * float(out.size());
        out.push_back(*c);
    }
    return out;
}

class RenderCorpus : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(RenderCorpus, DepthAgreesWithLineTraces) {
    const auto l = load(GetParam());
    render::Options o;
    o.width = 320;
    o.height = 180;
    size_t compared = 0, agreed = 0;
    std::string first, skipped;
    std::vector<render::Camera> cams = depth_cameras(*l);
    for (const auto& c : more_cameras(*l, 3)) cams.push_back(c);
    for (const auto& cam : cams) {
        const render::Frame f = render::render(l->scene, cam, o);
        const DepthCheck d = depth_against_traces(l->map, l->world, cam, f, 3);
        compared += d.compared;
        agreed += d.agreed;
        if (first.empty()) first = d.first_disagreement;
        skipped += " [not world " + std::to_string(d.not_world) + ", not opaque " + std::to_string(d.not_opaque) +
                   ", trace not solid " + std::to_string(d.not_solid) + ", trace met another surface " +
                   std::to_string(d.other_surface) + "]";
    }
    ASSERT_GT(compared, 20u) << "too few opaque world pixels to compare:" << skipped;
    // Pixel centres within a fraction of a pixel of an edge may meet the
    // neighbour in the trace: 99% must agree.
    EXPECT_GE(double(agreed), 0.99 * double(compared)) << agreed << " of " << compared << "; first: " << first;
}

/// q3map2's vis far plane (worldspawn "_farplanedist"): clusters farther
/// than that from the viewer's portals are left out of the PVS on purpose
/// (the engine hides them in fog); infinity when the map sets none.
float vis_far_plane(const Loaded& l) {
    const auto& ents = l.scene.entities();
    if (ents.empty()) return std::numeric_limits<float>::infinity();
    const auto v = ents[0].find("_farplanedist");
    float d = 0;
    if (!v || std::from_chars(v->data(), v->data() + v->size(), d).ec != std::errc() || !(d > 0))
        return std::numeric_limits<float>::infinity();
    return d;
}

TEST_P(RenderCorpus, PvsCulledFrameIsPixelIdenticalToUnculled) {
    const auto l = load(GetParam());
    render::Options on, off;
    on.width = off.width = 320;
    on.height = off.height = 180;
    off.pvs = false;
    // With a vis far plane, only pixels well inside it are compared (half of it:
    // the compiler measures from the cluster's portals, not from the eye).
    const float reach = vis_far_plane(*l) / 2;
    std::vector<render::Camera> cams{main_camera(*l)};
    for (const auto& c : more_cameras(*l, 5)) cams.push_back(c);
    size_t compared_all = 0;
    for (const auto& cam : cams) {
        const render::Frame a = render::render(l->scene, cam, on);
        const render::Frame b = render::render(l->scene, cam, off);
        EXPECT_EQ(b.stats.faces_culled, 0u);
        size_t differ = 0, compared = 0, first = SIZE_MAX;
        for (size_t p = 0; p < b.depth.size(); ++p) {
            if (b.depth[p] >= reach) continue;
            ++compared;
            if (std::memcmp(&a.rgba[p * 4], &b.rgba[p * 4], 4) != 0 || a.depth[p] != b.depth[p]) {
                ++differ;
                first = std::min(first, p);
            }
        }
        compared_all += compared;
        EXPECT_EQ(differ, 0u) << "camera at " << cam.position.x << "," << cam.position.y << "," << cam.position.z
                              << " cluster " << a.stats.camera_cluster << ": first pixel " << first % 320 << ","
                              << first / 320 << " (face " << (first != SIZE_MAX ? b.face[first] : -1) << ")";
    }
    EXPECT_GT(compared_all, size_t(on.width) * on.height / 100) << "too little of the map in view";
}

TEST_P(RenderCorpus, LightmapOnlyFrameShowsTheAtlasAtTheSurfaceUVs) {
    const auto l = load(GetParam());
    const model::LightmapAtlas atlas = model::combined_lightmap(l->map);
    size_t lit = 0;
    for (const auto& s : l->map.models[0].surfaces) lit += s.lightmap >= 0;
    if (!atlas.width || lit == 0) {
        // Nothing to compare: the map has no lightmaps (checked, not skipped).
        EXPECT_TRUE(l->map.lightmaps.empty() || lit == 0);
        return;
    }
    render::Options o;
    o.width = 320;
    o.height = 180;
    o.lightmap_only = true;
    o.translucent = false;
    size_t compared = 0, agreed = 0;
    std::string first;
    std::vector<render::Camera> cams = depth_cameras(*l);
    for (const auto& c : more_cameras(*l, 3)) cams.push_back(c);
    for (const auto& cam : cams) {
        const render::Frame f = render::render(l->scene, cam, o);
        const LightmapCheck c = lightmap_against_atlas(l->map, cam, f, 2);
        compared += c.compared;
        agreed += c.agreed;
        if (first.empty()) first = c.first_disagreement;
    }
    ASSERT_GT(compared, 20u) << "too few lit world pixels to compare";
    EXPECT_GE(double(agreed), 0.98 * double(compared)) << agreed << " of " << compared << "; first: " << first;
}

TEST_P(RenderCorpus, ViewsShowTheMap) {
    const auto l = load(GetParam());
    render::Options o;
    o.width = 256;
    o.height = 256;
    const render::Frame spawn = render::render(l->scene, main_camera(*l), o);
    render::Options ov = o;
    const render::Camera top = render::overview_camera(l->scene, ov);
    const render::Frame overview = render::render(l->scene, top, ov);
    const render::Frame thumb = render::render(l->scene, render::thumbnail_camera(l->scene), o);
    const size_t n = size_t(o.width) * o.height;
    EXPECT_GT(covered(spawn), n / 10);
    EXPECT_GT(covered(thumb), n / 10);
    // The overview fits the world's bounds: the drawn part spans most of the wider side.
    uint32_t lo = o.width, hi = 0, top_row = o.height, bottom_row = 0;
    for (uint32_t y = 0; y < o.height; ++y)
        for (uint32_t x = 0; x < o.width; ++x)
            if (std::isfinite(overview.depth[size_t(y) * o.width + x])) {
                lo = std::min(lo, x);
                hi = std::max(hi, x);
                top_row = std::min(top_row, y);
                bottom_row = std::max(bottom_row, y);
            }
    ASSERT_LE(lo, hi) << "empty overview";
    EXPECT_GE(std::max(hi - lo, bottom_row - top_row), o.width * 3 / 4);
    // No sky in the overview.
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(overview.depth[i])) {
            EXPECT_FALSE(overview.rgba[i * 4] == ov.sky[0] && overview.rgba[i * 4 + 1] == ov.sky[1] &&
                         overview.rgba[i * 4 + 2] == ov.sky[2])
                << "sky at pixel " << i;
        }
}

INSTANTIATE_TEST_SUITE_P(Maps, RenderCorpus, ::testing::ValuesIn(readable()),
                         [](const auto& info) { return test_name(info.param.relpath); });

TEST(RenderCorpusPvs, CullsFacesOnMapsWithVisibility) {
    // The PVS comparison above means something only if culling happens.
    for (const char* rel : {"q2_v38/q2_base1.bsp", "hl1_v30/cs16_de_torabora.bsp", "q1_v29/hl_crossfire_bsp29.bsp",
                            "q3_v46/oa_oacmpctf3.bsp", "src_v17/vtmb_ch_temple_3.bsp"}) {
        const auto l = load(corpus_file(rel));
        size_t culled = 0;
        std::vector<render::Camera> cams{main_camera(*l)};
        for (const auto& c : more_cameras(*l, 5)) cams.push_back(c);
        render::Options o;
        o.width = 64;
        o.height = 36;
        for (const auto& cam : cams) culled += render::render(l->scene, cam, o).stats.faces_culled;
        EXPECT_GT(culled, 0u) << rel;
    }
}

}  // namespace

namespace {

/// Per world face number: whether its surface is sky (Frame::face names the face of each pixel).
std::vector<bool> sky_faces(const model::Map& map) {
    std::vector<bool> sky;
    for (const model::Surface& s : map.models[0].surfaces)
        if (s.face >= 0 && s.material < map.materials.size() && (map.materials[s.material].flags & model::kSky)) {
            if (size_t(s.face) >= sky.size()) sky.resize(size_t(s.face) + 1, false);
            sky[size_t(s.face)] = true;
        }
    return sky;
}

/// A 4 x 4 uncompressed TGA of one colour.
Bytes solid_tga(std::array<uint8_t, 3> rgb) {
    Bytes t = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 4, 0, 32, 0x28};
    for (int p = 0; p < 16; ++p) t.insert(t.end(), {rgb[2], rgb[1], rgb[0], 255});
    return t;
}

/// textures::resolve() with the game folder `dir` and the sky asked for.
textures::Resolved resolve_with_sky(model::Map& map, const Bsp& bsp, const std::string& dir) {
    textures::SearchPath path;
    path.game_dirs = {dir};
    path.sky_box = true;
    return textures::resolve(map, bsp, path);
}

/// The sky tests' frames: small, one thread.
render::Options small_frame() {
    render::Options o;
    o.width = 96;
    o.height = 64;
    o.threads = 1;
    return o;
}

}  // namespace

/// Quake 1 sky layers (model::SkyLayers, render::Options::sky_images): q1_mp_lobby
/// with its only texture renamed "sky1" (every face is then sky) and painted, its
/// left half (the front layer) one index and its right half (the back layer)
/// another. Every pixel showing the map must be the front colour where the
/// front is opaque, the back colour where the front is index 0 (clear), and
/// the flat sky colour with the layers off.
TEST(RenderCorpusSky, QuakeSkyLayersAreDrawnFrontOverBack) {
    Bytes bytes = read_corpus(corpus_file("q1_v29/q1_mp_lobby.bsp"));
    const uint32_t textures = load<uint32_t>(&bytes[4 + 2 * 8]);  // lump 2's offset
    ASSERT_EQ(load<int32_t>(&bytes[textures]), 2);                  // miptex -1 (none), then the one texture
    ASSERT_EQ(load<int32_t>(&bytes[textures + 4]), -1);
    uint8_t* mt = &bytes[textures + load<uint32_t>(&bytes[textures + 8])];
    ASSERT_EQ(std::string(reinterpret_cast<const char*>(mt)), "128_grey_3");
    const uint32_t w = load<uint32_t>(mt + 16), h = load<uint32_t>(mt + 20);
    ASSERT_EQ(w, 128u);
    std::memset(mt, 0, 16);
    std::memcpy(mt, "sky1", 4);
    uint8_t* pixels = mt + load<uint32_t>(mt + 24);
    const auto& palette = quake1::quake_palette();
    const auto colour = [&](uint8_t index) {
        return std::array<uint8_t, 3>{palette[index * 3u], palette[index * 3u + 1], palette[index * 3u + 2]};
    };
    const auto frame = [&](uint8_t front, uint8_t back, bool layers, size_t& shown) {
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x) pixels[y * w + x] = x < w / 2 ? front : back;
        const Bsp bsp = Bsp::parse(bytes, "q1_sky.bsp");
        const model::Map map = model::build(bsp);
        EXPECT_TRUE(map.sky_layers.has_value());
        if (map.sky_layers) {
            EXPECT_EQ(map.sky_layers->front.width, w / 2);
            EXPECT_EQ(map.sky_layers->back.height, h);
            // Clear front texels take the back layer's mean colour, alpha 0.
            const auto b = colour(back);
            const std::array<uint8_t, 4> clear{b[0], b[1], b[2], 0};
            std::array<uint8_t, 4> first{};
            std::copy_n(map.sky_layers->front.rgba.begin(), 4, first.begin());
            if (front == 0) {
                EXPECT_EQ(first, clear);
            }
        }
        const render::Scene scene = render::Scene::prepare(map, bsp);
        const auto camera = render::spawn_camera(scene);
        EXPECT_TRUE(camera.has_value());
        render::Options o = small_frame();
        o.sky_images = layers;
        const render::Frame f = render::render(scene, camera.value_or(render::orbit_camera(scene)), o);
        std::set<std::array<uint8_t, 3>> seen;
        shown = 0;
        for (size_t i = 0; i < f.face.size(); ++i)
            if (f.face[i] >= 0) {
                ++shown;
                seen.insert({f.rgba[i * 4], f.rgba[i * 4 + 1], f.rgba[i * 4 + 2]});
            }
        return seen;
    };
    size_t shown = 0;
    using Colours = std::set<std::array<uint8_t, 3>>;
    EXPECT_EQ(frame(0, 251, true, shown), Colours{colour(251)});   // front clear: the back layer
    EXPECT_GT(shown, size_t(96 * 64 / 2));
    EXPECT_EQ(frame(79, 251, true, shown), Colours{colour(79)});   // front opaque: over the back
    EXPECT_EQ(frame(79, 251, false, shown), (Colours{{110, 150, 205}}));  // the flat colour
}

/// Sky boxes (model::SkyBox via textures::resolve, render::Options::sky_images):
/// q2_base1 names "unit1_"; a game folder holds its six images, each one colour.
/// From the spawn, looking around and up, every sky pixel must be the colour
/// of the face its view direction meets (model::sky_box_at), and the sky
/// must show several faces; with the images off, the flat colour.
TEST(RenderCorpusSky, SkyBoxFaceAlongEachPixelsViewDirection) {
    const std::string dir = temp_dir("render-skybox");
    const auto colour = [](size_t face) { return std::array<uint8_t, 3>{uint8_t(40 * face + 10), uint8_t(200 - 30 * face), 77}; };
    const char* suffixes[6] = {"rt", "bk", "lf", "ft", "up", "dn"};
    for (size_t i = 0; i < 6; ++i)
        write_bytes(std::filesystem::path(dir) / "env" / (std::string("unit1_") + suffixes[i] + ".tga"), solid_tga(colour(i)));
    const Bsp bsp = Bsp::open(corpus_file("q2_v38/q2_base1.bsp").path);
    model::Map map = model::build(bsp);
    const textures::Resolved r = resolve_with_sky(map, bsp, dir);
    ASSERT_FALSE(r.sky_box_missing.has_value()) << r.sky_box_missing->material;
    ASSERT_TRUE(map.sky_box.has_value());
    const std::vector<bool> sky_face = sky_faces(map);
    const render::Scene scene = render::Scene::prepare(map, bsp);
    EXPECT_EQ(scene.sky(), "box");
    // Cameras in the open 48 units in front of sky surfaces, looking at them
    // and 50 degrees either side (the spawn of this map sees no sky).
    const query::World world = query::World::prepare(bsp);
    std::vector<render::Camera> cameras;
    for (const model::Surface& s : map.models[0].surfaces) {
        if (cameras.size() >= 12) break;
        if (s.face < 0 || size_t(s.face) >= sky_face.size() || !sky_face[size_t(s.face)] || s.indices.size() < 3) continue;
        const model::Vec3 a = s.vertices[s.indices[0]].position, b = s.vertices[s.indices[1]].position,
                          c = s.vertices[s.indices[2]].position;
        model::Vec3 n = model::normalized(model::cross(b - a, c - a));
        model::Vec3 centre{};
        for (const model::Vertex& v : s.vertices) centre = centre + v.position * (1.0f / float(s.vertices.size()));
        render::Camera cam;
        cam.position = centre + n * 48.0f;
        if (world.leaf_at(cam.position).contents.solid()) {  // the winding's normal may face either way
            n = n * -1.0f;
            cam.position = centre + n * 48.0f;
            if (world.leaf_at(cam.position).contents.solid()) continue;
        }
        const float deg = 180.0f / float(std::numbers::pi);
        cam.pitch = std::asin(std::clamp(n.z, -1.0f, 1.0f)) * deg;
        for (float turn : {-50.0f, 0.0f, 50.0f}) {
            cam.yaw = std::atan2(-n.y, -n.x) * deg + turn;
            cameras.push_back(cam);
        }
    }
    ASSERT_FALSE(cameras.empty());
    render::Options o = small_frame();
    o.pvs = false;
    size_t sky_pixels = 0, wrong = 0, flat = 0;
    std::set<int> faces_seen;
    for (const render::Camera& cam : cameras) {
        model::Vec3 fwd, right, up;
        cam.basis(fwd, right, up);
        const float focal = float(o.width) / 2 / std::tan(cam.fov * float(std::numbers::pi) / 360);
        for (bool images : {true, false}) {
            o.sky_images = images;
            const render::Frame f = render::render(scene, cam, o);
            for (uint32_t y = 0; y < f.height; ++y)
                for (uint32_t x = 0; x < f.width; ++x) {
                    const size_t i = size_t(y) * f.width + x;
                    if (f.face[i] < 0 || size_t(f.face[i]) >= sky_face.size() || !sky_face[size_t(f.face[i])]) continue;
                    const std::array<uint8_t, 3> got{f.rgba[i * 4], f.rgba[i * 4 + 1], f.rgba[i * 4 + 2]};
                    if (!images) {
                        flat += got == std::array<uint8_t, 3>{110, 150, 205};
                        continue;
                    }
                    const float rx = (float(x) + 0.5f - float(o.width) / 2) / focal;
                    const float ry = (float(y) + 0.5f - float(o.height) / 2) / focal;
                    const model::SkyBoxPoint p = model::sky_box_at(fwd + right * rx - up * ry);
                    ++sky_pixels;
                    faces_seen.insert(p.face);
                    wrong += got != colour(size_t(p.face));
                }
        }
    }
    EXPECT_GT(sky_pixels, 2000u);
    EXPECT_EQ(wrong, 0u) << "of " << sky_pixels;
    EXPECT_EQ(flat, sky_pixels);
    EXPECT_GE(faces_seen.size(), 4u);
}

namespace {

/// oa_ctf2's spawn view, its sky shader given in a made pk3 a far box no
/// archive holds and `stages` over two one-colour images, textures/t/low.tga
/// (60, 40, 20) and textures/t/high.tga (30, 50, 70): how many pixels show
/// the sky and how many of them are not `want`.
struct CloudSky {
    size_t sky = 0, wrong = 0;
    bool box_missing = false;
    std::string drawn;  ///< render::Scene::sky()
};
CloudSky render_cloud_sky(const std::string& stages, std::array<uint8_t, 3> want) {
    CloudSky out;
    const std::string dir = temp_dir("render-clouds");
    const std::string shader = "textures/common/sky_space { surfaceparm sky skyparms full 512 - " + stages + " }\n";
    write_bytes(std::filesystem::path(dir) / "pak0.pk3",
                make_zip({{"scripts/t.shader", Bytes(shader.begin(), shader.end()), true},
                          {"textures/t/low.tga", solid_tga({60, 40, 20}), false},
                          {"textures/t/high.tga", solid_tga({30, 50, 70}), true}}));
    const Bsp bsp = Bsp::open(corpus_file("q3_v46/oa_ctf2.bsp").path);
    model::Map map = model::build(bsp);
    out.box_missing = resolve_with_sky(map, bsp, dir).sky_box_missing.has_value();
    if (!map.sky_clouds || map.sky_clouds->layers.size() != 2) {
        ADD_FAILURE() << stages << ": not two cloud layers";
        return out;
    }
    const std::vector<bool> sky_face = sky_faces(map);
    const render::Scene scene = render::Scene::prepare(map, bsp);
    out.drawn = scene.sky();
    const auto spawn = render::spawn_camera(scene);
    if (!spawn) {
        ADD_FAILURE() << "oa_ctf2 has no spawn view";
        return out;
    }
    const render::Frame f = render::render(scene, *spawn, small_frame());
    for (size_t i = 0; i < f.face.size(); ++i) {
        if (f.face[i] < 0 || size_t(f.face[i]) >= sky_face.size() || !sky_face[size_t(f.face[i])]) continue;
        ++out.sky;
        out.wrong += std::array<uint8_t, 3>{f.rgba[i * 4], f.rgba[i * 4 + 1], f.rgba[i * 4 + 2]} != want;
    }
    return out;
}

}  // namespace

/// Quake 3 cloud layers (model::SkyClouds): two one-colour stages, the second
/// added over the first. Every sky pixel of the spawn view must be their sum
/// (the box hidden under the opaque first layer).
TEST(RenderCorpusSky, Quake3CloudLayersBlendAsTheirStagesSay) {
    const CloudSky s = render_cloud_sky(
        "{ map textures/t/low.tga tcmod scale 3 2 } { map textures/t/high.tga blendfunc add }", {90, 90, 90});
    EXPECT_FALSE(s.box_missing);
    EXPECT_EQ(s.drawn, "clouds");
    EXPECT_GT(s.sky, 500u);
    EXPECT_EQ(s.wrong, 0u) << "of " << s.sky;
}

/// The other blend factors of a cloud layer (RB_StageIteratorSky blends each
/// stage as its blendFunc says): the second stage filtering the first
/// (GL_DST_COLOR GL_ZERO: src x dst / 255) and adding its inverse-weighted
/// colour (GL_ONE_MINUS_DST_COLOR GL_ONE: src x (1 - dst / 255) + dst), each
/// sky pixel rounded as the frame rounds (+ 0.5, truncated).
TEST(RenderCorpusSky, Quake3CloudLayersBlendWithTheOtherFactors) {
    struct Case {
        const char* blendfunc;
        std::array<uint8_t, 3> want;  // low (60, 40, 20), high (30, 50, 70)
    };
    for (const Case& c : {Case{"filter", {7, 8, 5}}, Case{"GL_DST_COLOR GL_ZERO", {7, 8, 5}},
                          Case{"GL_ONE_MINUS_DST_COLOR GL_ONE", {83, 82, 85}}}) {
        const CloudSky s = render_cloud_sky(
            std::string("{ map textures/t/low.tga } { map textures/t/high.tga blendfunc ") + c.blendfunc + " }", c.want);
        EXPECT_GT(s.sky, 500u) << c.blendfunc;
        EXPECT_EQ(s.wrong, 0u) << c.blendfunc << ": of " << s.sky;
    }
}
