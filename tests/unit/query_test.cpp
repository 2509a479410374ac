// query::World on maps the test builds: traces through the box room of every
// Quake-family variant, hostile trees (cycles, out-of-range children, deep
// chains, shared subtrees) refused by prepare(), unavailable hulls, batches.
#include <bspkit/formats/quake1.hpp>
#include <bspkit/query.hpp>

#include "quake_test_maps.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <random>

using namespace bspkit;
using namespace bspkit::testmaps;
using bspkit::query::Vec3;
using bspkit::query::World;

namespace {

using Room = Quake1Map<quake1::Bsp29Types>;

Bsp q1(const std::function<void(Room&)>& edit = {}) {
    Room m(false);
    if (edit) edit(m);
    return Bsp::parse(m.build(layouts::quake1(), 29), "room.bsp");
}

std::string prepare_error(const Bsp& bsp) {
    try {
        (void)World::prepare(bsp);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// The room's one node splits on x = -64 (normal +x): x >= -64 is the empty
// leaf, the rest is solid; the clip hull has the same plane.
TEST(Query, Quake1RoomLeafContentsAndTraces) {
    const Bsp bsp = q1();
    const World w = World::prepare(bsp);
    const auto in = w.leaf_at({0, 0, 64});
    EXPECT_EQ(in.leaf, 1);
    EXPECT_EQ(in.cluster, 0);
    EXPECT_EQ(in.contents.raw, quake1::CONTENTS_EMPTY);
    EXPECT_FALSE(in.contents.solid());
    const auto out = w.leaf_at({-100, 0, 64});
    EXPECT_EQ(out.leaf, 0);
    EXPECT_TRUE(out.contents.solid());
    EXPECT_EQ(query::content_flag_names(out.contents.flags), "solid");

    for (int hull : {-1, 1}) {
        SCOPED_TRACE(hull);
        query::TraceOptions o;
        o.hull = hull;
        const auto t = w.trace({0, 0, 64}, {-128, 0, 64}, o);
        // Impact DIST_EPSILON in front of the plane: x = -64 + 1/32.
        EXPECT_NEAR(t.end.x, -64 + 0.03125, 1e-4);
        EXPECT_NEAR(t.fraction, (64 - 0.03125) / 128, 1e-5);
        EXPECT_EQ(t.normal, (Vec3{1, 0, 0}));
        EXPECT_FLOAT_EQ(t.dist, -64);
        EXPECT_FALSE(t.startsolid);
        EXPECT_FALSE(t.allsolid);
        EXPECT_TRUE(t.contents.solid());
        EXPECT_EQ(t.model, 0);
        const auto free = w.trace({0, 0, 64}, {50, 10, 64}, o);
        EXPECT_EQ(free.fraction, 1);
        EXPECT_EQ(free.end, (Vec3{50, 10, 64}));
        EXPECT_FALSE(free.hit());
        const auto from_solid = w.trace({-100, 0, 64}, {0, 0, 64}, o);
        EXPECT_TRUE(from_solid.startsolid);
        EXPECT_FALSE(from_solid.allsolid);
        const auto all_solid = w.trace({-100, 0, 64}, {-90, 0, 64}, o);
        EXPECT_TRUE(all_solid.startsolid);
        EXPECT_TRUE(all_solid.allsolid);
        EXPECT_EQ(all_solid.fraction, 1);  // Quake leaves the fraction at 1 in solid
    }
    // A box picks hull 1 (size 32) and is offset by hull mins - box mins.
    const auto box = w.trace({0, 0, 64}, {-128, 0, 64}, query::TraceOptions::box({-16, -16, -24}, {16, 16, 32}));
    EXPECT_NEAR(box.end.x, -64 + 0.03125, 1e-4);
    // Hull 3 is not built by Quake's qbsp.
    query::TraceOptions h3;
    h3.hull = 3;
    EXPECT_THROW(w.trace({0, 0, 0}, {1, 0, 0}, h3), Error);
    // Visibility: the room sees itself; through the wall there is no line of sight.
    EXPECT_TRUE(w.visible({0, 0, 64}, {30, 30, 30}).visible());
    EXPECT_FALSE(w.visible({0, 0, 64}, {-100, 0, 64}).visible());
}

TEST(Query, Quake1WithoutClipnodesHasNoHulls) {
    const Bsp bsp = q1([](Room& m) { m.clipnodes.clear(); });
    const World w = World::prepare(bsp);
    EXPECT_EQ(w.trace({0, 0, 64}, {-128, 0, 64}).model, 0);  // hull 0 still works
    try {
        (void)w.trace({0, 0, 64}, {-128, 0, 64}, w.player());
        FAIL() << "hull 1 traced without clipnodes";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("no clipnodes"), std::string::npos) << e.what();
    }
}

TEST(Query, HostileTreesAreRefused) {
    // A node that is its own child: a cycle.
    EXPECT_NE(prepare_error(q1([](Room& m) { m.nodes[0].children[0] = 0; })).find("cycle"), std::string::npos);
    // A child past the node lump.
    EXPECT_NE(prepare_error(q1([](Room& m) { m.nodes[0].children[0] = 7; })).find("out of range"), std::string::npos);
    // A leaf past the leaf lump.
    EXPECT_NE(prepare_error(q1([](Room& m) { m.nodes[0].children[1] = -50; })).find("out of range"), std::string::npos);
    // A plane past the plane lump.
    EXPECT_NE(prepare_error(q1([](Room& m) { m.nodes[0].planenum = 99; })).find("plane 99"), std::string::npos);
    // A clipnode cycle through two nodes.
    EXPECT_NE(prepare_error(q1([](Room& m) {
                  m.clipnodes.push_back(m.clipnodes[0]);
                  m.clipnodes[0].children[0] = 1;
                  m.clipnodes[1].children[1] = 0;
                  for (int h = 1; h < 4; ++h) m.models[0].headnode[h] = 0;
              })).find("cycle"),
              std::string::npos);
    // A chain deeper than kMaxTreeDepth (BSP2: 32-bit children).
    const std::string deep = prepare_error([] {
        Quake1Map<quake1::Bsp2Types> m(false);
        const auto base = m.nodes[0];
        m.nodes.clear();
        for (int i = 0; i < query::kMaxTreeDepth + 10; ++i) {
            auto n = base;
            n.children[0] = i + 1;
            n.children[1] = -1;
            m.nodes.push_back(n);
        }
        m.nodes.back().children[0] = -2;
        return Bsp::parse(m.build(layouts::bsp2(), std::nullopt), "deep.bsp");
    }());
    EXPECT_NE(deep.find("deeper than"), std::string::npos) << deep;
    // Each message names the file, the lump and an offset.
    const std::string msg = prepare_error(q1([](Room& m) { m.nodes[0].children[0] = 0; }));
    EXPECT_EQ(msg.rfind("room.bsp: lump nodes at offset ", 0), 0u) << msg;
}

TEST(Query, Quake2HostileReferencesAreRefused) {
    auto build = [](const std::function<void(Quake2Map&)>& edit) {
        Quake2Map m;
        edit(m);
        return Bsp::parse(m.build(), "q2.bsp");
    };
    EXPECT_EQ(prepare_error(build([](Quake2Map&) {})), "");
    EXPECT_NE(prepare_error(build([](Quake2Map& m) { m.leafbrushes[0].brush = 9; })).find("names brush 9"),
              std::string::npos);
    EXPECT_NE(prepare_error(build([](Quake2Map& m) { m.brushes[0].numsides = 60; })).find("names sides"),
              std::string::npos);
    EXPECT_NE(prepare_error(build([](Quake2Map& m) { m.nodes[0].children[0] = 0; })).find("cycle"),
              std::string::npos);
    EXPECT_NE(prepare_error(build([](Quake2Map& m) { m.models[0].headnode = 40; })).find("head node 40"),
              std::string::npos);
    // A head that is a leaf (negative) out of range: found by fuzz_query on a
    // Nightfire input, where the trace then read past the leafs.
    EXPECT_NE(prepare_error(build([](Quake2Map& m) { m.models[0].headnode = -1000; })).find("head is leaf 999"),
              std::string::npos);
}

// Shared subtrees are legal (Half-Life compilers merge equal clipnode
// subtrees), but 80 nodes on one plane each sending both children to the next
// make a box trace near the plane visit 2^80 paths: the step budget ends it.
// 80 nodes on one plane, each naming the next as both children: a walk of the
// tree that sends a box down both sides of every node takes 2^80 steps.
// Brush families trace through a BVH of the world's brushes (each once), so
// the lattice costs them nothing: the trace ends, where the plain room's does.
TEST(Query, SharedSubtreeLatticeTracesInBrushFamilies) {
    Quake2Map m;
    const Quake2Map plain;
    const auto base = m.nodes[0];
    m.nodes.clear();
    for (int i = 0; i < 80; ++i) {
        auto n = base;
        n.children[0] = n.children[1] = i + 1;
        m.nodes.push_back(n);
    }
    m.nodes.back().children[0] = -2;
    m.nodes.back().children[1] = -1;
    const Bsp bsp = Bsp::parse(m.build(), "lattice.bsp"), plain_bsp = Bsp::parse(plain.build(), "room.bsp");
    const World w = World::prepare(bsp), room = World::prepare(plain_bsp);
    const auto box = query::TraceOptions::box({-16, -16, -16}, {16, 16, 16});
    for (const auto& [from, to] : {std::pair<Vec3, Vec3>{{0, 0, 64}, {50, 0, 64}}, {{-60, 0, 64}, {-50, 0, 64}},
                                   {{0, 0, 64}, {-200, 0, 64}}, {{0, 0, 64}, {0, 0, -200}}}) {
        const auto a = w.trace(from, to, box), b = room.trace(from, to, box);
        EXPECT_EQ(a.fraction, b.fraction);
        EXPECT_EQ(a.startsolid, b.startsolid);
        EXPECT_EQ(a.end, b.end);
    }
}

TEST(Query, BatchesEqualSingleTraces) {
    const Bsp bsp = q1();
    const World w = World::prepare(bsp);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-100, 100);
    std::vector<query::Ray> rays(5000);
    for (auto& r : rays) r = {{u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}};
    std::vector<query::TraceResult> out(rays.size());
    w.trace(rays, out, {}, 2);
    size_t hits = 0;
    for (size_t i = 0; i < rays.size(); ++i) {
        const auto one = w.trace(rays[i].start, rays[i].end);
        ASSERT_EQ(one.fraction, out[i].fraction) << i;
        ASSERT_EQ(one.end, out[i].end) << i;
        ASSERT_EQ(one.startsolid, out[i].startsolid) << i;
        hits += one.hit();
    }
    EXPECT_GT(hits, 100u);
    EXPECT_LT(hits, rays.size());
}
