// A generated BSP2 map past every 16-bit limit of BSP29 (src/samples/big_bsp2.cpp,
// the map of issue 9's size curve at a test's size): written to a temp dir and
// read back, it is BSP2, `check` finds nothing, an unchanged save is the file
// byte for byte, the records are the ones generated and really use indices
// past 16 bits, and leaf / trace queries land where the generator put the floors.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/query.hpp>

#include "big_bsp2.hpp"
#include "run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

using namespace bspkit;
using namespace bspkit::quake1;

namespace {

// 186 x 186 cells: 34,597 leafs, 69,195 nodes, about 72,000 faces, 900,000 clipnodes (22 MB).
constexpr int kGrid = 186;
constexpr float C = samples::kBigBsp2Cell;

struct Generated {
    samples::BigBsp2 map = samples::big_bsp2(kGrid);
    std::string dir = test::temp_dir("big_bsp2");
    std::string path = dir + "/big.bsp";
    Generated() { write_file_atomic(path, map.bytes); }
};

const Generated& generated() {
    static const Generated g;
    return g;
}

/// Cells spread over the field: the corners, the middle, and a stride through it.
std::vector<std::pair<int, int>> probe_cells() {
    std::vector<std::pair<int, int>> out{{0, 0}, {kGrid - 1, 0}, {0, kGrid - 1}, {kGrid - 1, kGrid - 1}, {kGrid / 2, kGrid / 2}};
    for (int k = 0; k < 40; ++k) out.push_back({(k * 37 + 11) % kGrid, (k * 53 + 5) % kGrid});
    return out;
}

query::Vec3 centre(int x, int y, float z) { return {(float(x) + 0.5f) * C, (float(y) + 0.5f) * C, z}; }

}  // namespace

TEST(BigBsp2, OpensAsBsp2AndCheckFindsNothing) {
    const Generated& g = generated();
    const Bsp bsp = Bsp::open(g.path);
    EXPECT_EQ(bsp.format(), Format::bsp2);
    EXPECT_EQ(bsp.layout().variant, "BSP2");
    EXPECT_EQ(Map(bsp).variant(), Variant::bsp2);
    const CheckReport report = check(bsp);
    for (const Finding& f : report.findings) ADD_FAILURE() << f.lump << " " << f.record << " " << f.field << ": " << f.message;
    EXPECT_EQ(report.errors(), 0u);
    const test::RunResult r = test::run_cli({"check", g.path});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("bsp2 (BSP2): 0 errors, 0 warnings"), std::string::npos) << r.out;
}

TEST(BigBsp2, UnchangedSaveIsByteIdentical) {
    const Generated& g = generated();
    const Bsp bsp = Bsp::open(g.path);
    EXPECT_TRUE(bsp.serialize() == g.map.bytes);
    const std::string out = g.dir + "/repacked.bsp";
    const test::RunResult r = test::run_cli({"repack", g.path, "-o", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(read_file(out) == g.map.bytes);
}

TEST(BigBsp2, CountsAreTheGeneratedOnesPastEveryBsp29Limit) {
    const Generated& g = generated();
    const Bsp bsp = Bsp::open(g.path);
    const Map map(bsp);
    const Tables<Bsp2Types> t = map.bsp2();
    const samples::BigBsp2Counts& n = g.map.counts;
    EXPECT_EQ(t.planes.size(), n.planes);
    EXPECT_EQ(t.vertexes.size(), n.vertexes);
    EXPECT_EQ(t.nodes.size(), n.nodes);
    EXPECT_EQ(t.texinfo.size(), n.texinfo);
    EXPECT_EQ(t.faces.size(), n.faces);
    EXPECT_EQ(t.clipnodes.size(), n.clipnodes);
    EXPECT_EQ(t.leafs.size(), n.leafs);
    EXPECT_EQ(t.marksurfaces.size(), n.marksurfaces);
    EXPECT_EQ(t.edges.size(), n.edges);
    EXPECT_EQ(t.surfedges.size(), n.surfedges);
    EXPECT_EQ(t.models.size(), n.models);
    EXPECT_EQ(map.lighting().size(), n.lighting_bytes);
    EXPECT_EQ(size_t(map.miptex().nummiptex), n.textures);
    // The exact layout of the design: one leaf per cell plus leaf 0, four border nodes
    // plus a kd-tree of g^2 cells with one floor node under each.
    EXPECT_EQ(t.leafs.size(), size_t(kGrid) * kGrid + 1);
    EXPECT_EQ(t.nodes.size(), 4 + 2 * size_t(kGrid) * kGrid - 1);
    EXPECT_EQ(size_t(t.models[0].numfaces), t.faces.size());

    // Past BSP29's counts...
    EXPECT_GT(t.faces.size(), 70000u);
    EXPECT_GT(t.vertexes.size(), 65535u);
    EXPECT_GT(t.edges.size(), 65535u);
    EXPECT_GT(t.marksurfaces.size(), 65535u);
    EXPECT_GT(t.nodes.size(), 65535u);
    EXPECT_GT(t.clipnodes.size(), 65535u);
    EXPECT_GT(t.leafs.size(), 32767u);
    // ...and the fields really hold values a 16-bit field could not.
    uint32_t max_vertex = 0, max_mark = 0, max_first_mark = 0, max_first_face = 0;
    int32_t max_node_child = 0, max_clip_child = 0, min_node_child = 0;
    for (const auto& e : t.edges) max_vertex = std::max({max_vertex, e.v[0], e.v[1]});
    for (const auto& m : t.marksurfaces) max_mark = std::max(max_mark, m.face);
    for (const auto& l : t.leafs) max_first_mark = std::max(max_first_mark, l.firstmarksurface);
    for (const auto& nd : t.nodes) {
        max_first_face = std::max(max_first_face, nd.firstface);
        max_node_child = std::max({max_node_child, nd.children[0], nd.children[1]});
        min_node_child = std::min({min_node_child, nd.children[0], nd.children[1]});
    }
    for (const auto& c : t.clipnodes) max_clip_child = std::max({max_clip_child, c.children[0], c.children[1]});
    EXPECT_GT(max_vertex, 65535u);
    EXPECT_GT(max_mark, 65535u);
    EXPECT_GT(max_first_mark, 65535u);
    EXPECT_GT(max_first_face, 65535u);
    EXPECT_GT(max_node_child, 65535);
    EXPECT_LT(min_node_child, -32768);  // leaf -(child + 1) past int16
    EXPECT_GT(max_clip_child, 65535);
}

TEST(BigBsp2, LeafAndTraceLandWhereTheFloorsAre) {
    const Generated& g = generated();
    const Bsp bsp = Bsp::open(g.path);
    const auto world = query::World::prepare(bsp);
    for (const auto& [x, y] : probe_cells()) {
        SCOPED_TRACE("cell " + std::to_string(x) + " " + std::to_string(y));
        const float floor = samples::big_bsp2_floor(x, y);
        // Above the floor: the cell's own empty leaf; below: the solid leaf 0.
        const query::LeafInfo above = world.leaf_at(centre(x, y, floor + 40));
        EXPECT_EQ(above.leaf, samples::big_bsp2_leaf_of_cell(kGrid, x, y));
        EXPECT_EQ(above.contents.raw, CONTENTS_EMPTY);
        EXPECT_FALSE(above.contents.solid());
        const query::LeafInfo below = world.leaf_at(centre(x, y, floor - 4));
        EXPECT_EQ(below.leaf, 0);
        EXPECT_TRUE(below.contents.solid());
        // A line straight down stops on the floor, facing up.
        const query::TraceResult down = world.trace(centre(x, y, 200), centre(x, y, -100));
        ASSERT_TRUE(down.hit());
        EXPECT_FALSE(down.startsolid);
        EXPECT_NEAR(down.end.z, floor, 0.05f);
        EXPECT_EQ(down.normal.z, 1.0f);
        EXPECT_EQ(down.model, 0);
        // The player (hull 1) at the cell's centre overlaps no neighbour: it stands 24 above the floor.
        query::TraceOptions player;
        player.hull = 1;
        const query::TraceResult stand = world.trace(centre(x, y, 200), centre(x, y, -100), player);
        ASSERT_TRUE(stand.hit());
        EXPECT_NEAR(stand.end.z, floor + 24, 0.05f);
    }
}

TEST(BigBsp2, LineTraceStopsAtTheStepUpToTheNextCell) {
    const Generated& g = generated();
    const Bsp bsp = Bsp::open(g.path);
    const auto world = query::World::prepare(bsp);
    int found = 0;
    for (int y = 0; y < kGrid && found < 20; y += 7)
        for (int x = 0; x + 1 < kGrid && found < 20; x += 3) {
            const float here = samples::big_bsp2_floor(x, y), next = samples::big_bsp2_floor(x + 1, y);
            if (next <= here) continue;
            ++found;
            SCOPED_TRACE("cell " + std::to_string(x) + " " + std::to_string(y));
            const float z = here + (next - here) / 2;
            const query::TraceResult r = world.trace(centre(x, y, z), centre(x + 1, y, z));
            ASSERT_TRUE(r.hit());
            EXPECT_NEAR(r.end.x, float(x + 1) * C, 0.05f);
            EXPECT_EQ(r.normal.x, -1.0f);
        }
    EXPECT_EQ(found, 20);
}

TEST(BigBsp2, CommandLineLeafTraceAndExport) {
    const Generated& g = generated();
    const int x = kGrid - 3, y = kGrid / 3;
    const float floor = samples::big_bsp2_floor(x, y);
    const query::Vec3 p = centre(x, y, floor + 40);
    const auto num = [](float v) { return std::to_string(v); };
    test::RunResult r = test::run_cli({"leaf", g.path, num(p.x), num(p.y), num(p.z)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find(" leaf " + std::to_string(samples::big_bsp2_leaf_of_cell(kGrid, x, y)) + " "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("contents empty"), std::string::npos) << r.out;

    r = test::run_cli({"trace", g.path, "--from", num(p.x) + "," + num(p.y) + ",200", "--to", num(p.x) + "," + num(p.y) + ",-100"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    char dist[64];
    std::snprintf(dist, sizeof dist, "plane (0 0 1) dist %g ", double(floor));
    EXPECT_NE(r.out.find(dist), std::string::npos) << r.out;

    const std::string glb = g.dir + "/big.glb";
    r = test::run_cli({"export", g.path, "-o", glb});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(std::filesystem::file_size(glb), 0u);
    // Every face is a quad: two triangles each (the summary line goes to stderr).
    EXPECT_NE(r.err.find("(1 models, " + std::to_string(2 * g.map.counts.faces) + " triangles"), std::string::npos) << r.err;
}
