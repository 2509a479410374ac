// query::World on every corpus map bspkit reads:
//   - every player spawn point is in empty space for the player hull / box,
//     and a trace straight down from it finds a floor (upward normal) within
//     1-200 units; the exceptions are listed exactly, with their reasons;
//   - random line traces agree with a brute-force ray / triangle intersection
//     against model::build's world mesh (drawn, solid surfaces) within 0.5
//     units for >= 99% of the rays where both hit;
//   - player-box traces never end in solid, and the way back is free.
#include <bspkit/entities.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>

#include "corpus.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>

using namespace bspkit;
using namespace bspkit::test;
using bspkit::query::Vec3;
using bspkit::query::World;

namespace {

std::vector<CorpusFile> queryable() {
    std::vector<CorpusFile> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f);
    return out;
}

const std::set<std::string> kSpawnClasses = {
    "info_player_start", "info_player_deathmatch", "info_player_coop", "info_player_team1", "info_player_team2",
    "info_player_teamspawn", "info_player_terrorist", "info_player_counterterrorist", "info_player_combine",
    "info_player_rebel", "team_CTF_redplayer", "team_CTF_blueplayer", "team_CTF_redspawn", "team_CTF_bluespawn",
    "info_survivor_position", "info_player_axis", "info_player_allies"};

struct SpawnException {
    std::string file;
    std::string classname;
    std::string origin;  ///< as in the entity
    std::string what;    ///< "startsolid" or "no floor"
    std::string reason;
};

std::vector<SpawnException> spawn_exceptions() {
    return {
        {"src_v17/vtmb_sp_genesisdevice_1.bsp", "info_player_start", "235 0 145", "startsolid",
         "the point is in a solid leaf of the compiled tree itself (leaf 9, contents SOLID, no cluster): outside "
         "the 32-face map's rooms, so every query agrees; Bloodlines does not use this start"},
    };
}

/// How far above its entity origin the game puts a spawning player: Quake 2's
/// SelectSpawnPoint raises it by 9 and PutClientInServer by 1 more ("make sure
/// off ground"); Quake 3's SelectSpawnPoint by 9; Half-Life's and Source's
/// EntSelectSpawnPoint by 1. Quake 1 uses the origin as it is.
float spawn_lift(Format f) {
    switch (f) {
        case Format::quake2: return 10;
        case Format::quake3: return 9;
        case Format::goldsrc:
        case Format::nightfire:
        case Format::source: return 1;
        default: return 0;
    }
}

std::string origin_text(const Entity& e) { return std::string(e.get("origin")); }

}  // namespace

class QueryCorpus : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(QueryCorpus, SpawnPointsStandOnFloors) {
    const CorpusFile& f = GetParam();
    const Bsp bsp = Bsp::open(f.path);
    const World world = World::prepare(bsp);
    const auto player = world.player();
    if (world.hulls().size() > 1 && !world.hulls()[1].available) {  // BSPX BRUSHLIST maps: no clipnodes
        EXPECT_THROW(world.trace(Vec3{}, Vec3{}, player), Error) << f.relpath;
        return;
    }
    const auto expected = spawn_exceptions();
    std::set<std::string> found_keys, expected_keys;
    for (const auto& e : expected)
        if (e.file == f.relpath) expected_keys.insert(e.classname + " " + e.origin + " " + e.what);
    size_t spawns = 0;
    for (const Entity& e : read_entities(bsp).entities) {
        const std::string cls(e.get("classname"));
        if (!kSpawnClasses.count(cls)) continue;
        Vec3 o;
        if (std::sscanf(origin_text(e).c_str(), "%f %f %f", &o.x, &o.y, &o.z) != 3) continue;
        ++spawns;
        o.z += spawn_lift(bsp.format());
        const auto here = world.trace(o, o, player);
        if (here.startsolid) {
            found_keys.insert(cls + " " + origin_text(e) + " startsolid");
            continue;
        }
        // A line from the origin down (the box's bottom is below it by -mins.z).
        const auto down = world.trace(o, o - Vec3{0, 0, 400}, player);
        const float drop = o.z - down.end.z;
        const bool floor = down.fraction < 1 && down.normal.z > 0 && drop <= 200 && !down.startsolid;
        if (!floor) found_keys.insert(cls + " " + origin_text(e) + " no floor");
    }
    for (const auto& k : found_keys)
        EXPECT_TRUE(expected_keys.count(k)) << f.relpath << ": spawn " << k << " (unlisted)";
    for (const auto& k : expected_keys)
        EXPECT_TRUE(found_keys.count(k)) << f.relpath << ": listed spawn " << k << " is fine now";
    std::printf("%s: %zu spawn points, %zu exceptions\n", f.relpath.c_str(), spawns, found_keys.size());
}

namespace {

struct Tri {
    Vec3 a, b, c;
};

/// Nearest t in [0, 1] of the segment o + t d hitting any triangle (both sides), or -1.
double brute_force(const std::vector<Tri>& tris, Vec3 o, Vec3 d) {
    double best = -1;
    for (const Tri& t : tris) {
        const Vec3 e1 = t.b - t.a, e2 = t.c - t.a;
        const Vec3 p = model::cross(d, e2);
        const double det = model::dot(e1, p);
        if (std::fabs(det) < 1e-9) continue;
        const Vec3 s = o - t.a;
        const double u = model::dot(s, p) / det;
        if (u < 0 || u > 1) continue;
        const Vec3 q = model::cross(s, e1);
        const double v = model::dot(d, q) / det;
        if (v < 0 || u + v > 1) continue;
        const double tt = model::dot(e2, q) / det;
        if (tt >= 0 && tt <= 1 && (best < 0 || tt < best)) best = tt;
    }
    return best;
}

}  // namespace

TEST_P(QueryCorpus, LineTracesMatchTheMesh) {
    const CorpusFile& f = GetParam();
    const Bsp bsp = Bsp::open(f.path);
    const World world = World::prepare(bsp);
    model::BuildOptions options;
    options.lightmaps = options.textures = false;
    options.all_models = false;
    const model::Map mesh = model::build(bsp, options);
    std::vector<Tri> drawn;
    Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
    constexpr uint32_t kNotDrawnSolid = model::kSky | model::kNodraw | model::kTrigger | model::kWater |
                                        model::kTranslucent | model::kClip | model::kAlphaTest;
    for (const auto& m : mesh.models) {
        if (m.index != 0) continue;
        for (const auto& s : m.surfaces) {
            for (const auto& v : s.vertices) {
                lo = {std::min(lo.x, v.position.x), std::min(lo.y, v.position.y), std::min(lo.z, v.position.z)};
                hi = {std::max(hi.x, v.position.x), std::max(hi.y, v.position.y), std::max(hi.z, v.position.z)};
            }
            if (mesh.materials[s.material].flags & kNotDrawnSolid) continue;
            for (size_t i = 0; i + 2 < s.indices.size(); i += 3)
                drawn.push_back({s.vertices[s.indices[i]].position, s.vertices[s.indices[i + 1]].position,
                                 s.vertices[s.indices[i + 2]].position});
        }
    }
    ASSERT_FALSE(drawn.empty()) << f.relpath;
    std::mt19937 rng(1234);
    std::uniform_real_distribution<float> ux(lo.x, hi.x), uy(lo.y, hi.y), uz(lo.z, hi.z), dir(-1, 1);
    size_t both = 0, agree = 0, only_trace = 0, only_mesh = 0, rays = 0;
    const size_t target = drawn.size() > 200000 ? 150 : 400;
    for (size_t attempt = 0; rays < target && attempt < target * 200; ++attempt) {
        const Vec3 a{ux(rng), uy(rng), uz(rng)};
        if (world.contents(a).flags & query::kSolid) continue;
        if (world.leaf_at(a).cluster < 0 && bsp.format() != Format::nightfire) continue;  // outside the world
        Vec3 d{dir(rng), dir(rng), dir(rng)};
        if (model::length(d) < 0.1) continue;
        d = model::normalized(d) * 2048.0f;
        const auto tr = world.trace(a, a + d);
        if (tr.startsolid) continue;
        ++rays;
        const double t = brute_force(drawn, a, d);
        const bool trace_hit = tr.fraction < 1;
        if (trace_hit && t >= 0) {
            ++both;
            const Vec3 p = a + d * float(t);
            if (model::length(p - tr.end) <= 0.5) ++agree;
        } else if (trace_hit) {
            ++only_trace;
        } else if (t >= 0) {
            ++only_mesh;
        }
    }
    std::printf("%s: %zu rays, both hit %zu, agree %zu (%.2f%%), trace only %zu, mesh only %zu\n", f.relpath.c_str(),
                rays, both, agree, both ? 100.0 * double(agree) / double(both) : 0.0, only_trace, only_mesh);
    EXPECT_GE(rays, target / 2) << f.relpath;
    EXPECT_GE(double(agree), 0.99 * double(both)) << f.relpath;
}

TEST_P(QueryCorpus, BoxTracesNeverEndInSolid) {
    const CorpusFile& f = GetParam();
    const Bsp bsp = Bsp::open(f.path);
    const World world = World::prepare(bsp);
    if (world.hulls().size() > 1 && !world.hulls()[1].available) {
        EXPECT_THROW(world.trace({}, {1, 0, 0}, world.player()), Error) << f.relpath;
        return;  // BSPX BRUSHLIST maps: hulls 1-3 unavailable
    }
    const auto player = world.player();
    const auto [bmin, bmax] = world.player_box();
    (void)bmin;
    (void)bmax;
    std::mt19937 rng(99);
    // Start points: above spawn-like places are not needed; random empty points of the world.
    model::BuildOptions options;
    options.lightmaps = options.textures = false;
    options.all_models = false;
    const model::Map mesh = model::build(bsp, options);
    Vec3 lo{1e30f, 1e30f, 1e30f}, hi{-1e30f, -1e30f, -1e30f};
    for (const auto& s : mesh.models.at(0).surfaces)
        for (const auto& v : s.vertices) {
            lo = {std::min(lo.x, v.position.x), std::min(lo.y, v.position.y), std::min(lo.z, v.position.z)};
            hi = {std::max(hi.x, v.position.x), std::max(hi.y, v.position.y), std::max(hi.z, v.position.z)};
        }
    std::uniform_real_distribution<float> ux(lo.x, hi.x), uy(lo.y, hi.y), uz(lo.z, hi.z), dir(-1, 1);
    size_t traces = 0, ended_in_solid = 0, back_blocked = 0;
    for (size_t attempt = 0; traces < 300 && attempt < 100000; ++attempt) {
        const Vec3 a{ux(rng), uy(rng), uz(rng)};
        if (world.trace(a, a, player).startsolid) continue;
        if (world.leaf_at(a).cluster < 0 && bsp.format() != Format::nightfire) continue;
        const Vec3 b = a + Vec3{dir(rng), dir(rng), dir(rng)} * 1024.0f;
        const auto tr = world.trace(a, b, player);
        if (tr.startsolid) continue;
        ++traces;
        if (world.trace(tr.end, tr.end, player).startsolid) ++ended_in_solid;
        const auto back = world.trace(tr.end, a, player);
        if (back.startsolid || model::length(back.end - a) > 0.5) ++back_blocked;
    }
    std::printf("%s: %zu box traces, %zu ended in solid, %zu blocked on the way back\n", f.relpath.c_str(), traces,
                ended_in_solid, back_blocked);
    EXPECT_GE(traces, 100u) << f.relpath;
    EXPECT_EQ(ended_in_solid, 0u) << f.relpath;
    EXPECT_EQ(back_blocked, 0u) << f.relpath;
}

INSTANTIATE_TEST_SUITE_P(All, QueryCorpus, ::testing::ValuesIn(queryable()),
                         [](const auto& info) { return test_name(info.param.relpath); });
