// query::World on maps the test builds: traces through the box room of every
// Quake-family variant, hostile trees (cycles, out-of-range children, deep
// chains, shared subtrees) refused by prepare(), unavailable hulls, batches.
#include <bspkit/entities.hpp>
#include <bspkit/format.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>

#include "query/bvh.hpp"
#include "query/solidity.hpp"
#include "quake_test_maps.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
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

// The room with its outer leaf made water: a line from the room into it
// passes the open and the water (SV_RecursiveHullCheck's inopen / inwater, no
// hit). Quake's visible() counts that as no sight ("sight line crossed
// contents"); Half-Life's FVisible asks the fraction alone.
TEST(Query, Quake1LinesIntoWaterAreInOpenAndInWaterAndNoSight) {
    for (const bool goldsrc : {false, true}) {
        SCOPED_TRACE(goldsrc);
        Room m(goldsrc);
        m.leafs[0].contents = quake1::CONTENTS_WATER;
        const Bsp bsp = Bsp::parse(m.build(goldsrc ? layouts::goldsrc() : layouts::quake1(), goldsrc ? 30 : 29),
                                   "room.bsp");
        const World w = World::prepare(bsp);
        const auto into = w.trace({0, 0, 64}, {-128, 0, 64});
        EXPECT_EQ(into.fraction, 1);
        EXPECT_TRUE(into.inopen);
        EXPECT_TRUE(into.inwater);
        const auto open = w.trace({0, 0, 64}, {50, 0, 64});
        EXPECT_TRUE(open.inopen);
        EXPECT_FALSE(open.inwater);
        const auto under = w.trace({-100, 0, 64}, {-120, 0, 64});
        EXPECT_FALSE(under.inopen);
        EXPECT_TRUE(under.inwater);
        const auto v = w.visible({0, 0, 64}, {-100, 0, 64});
        EXPECT_EQ(v.line_of_sight, goldsrc);
        EXPECT_TRUE(v.sight.inopen && v.sight.inwater);
        EXPECT_EQ(v.from.leaf, 1);
        EXPECT_EQ(v.to.leaf, 0);
        EXPECT_TRUE(w.visible({0, 0, 64}, {30, 30, 30}).line_of_sight);
    }
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

// The same room with its node on the plane -x = 64 (normal -x, children
// swapped): one place, named the other way round. An axial plane whose normal
// points down its axis must not be measured as if it pointed up (x - d instead
// of -x - d would put the whole room in solid).
TEST(Query, NegativeAxialNodePlaneIsMeasuredWithItsSign) {
    const Bsp bsp = q1([](Room& m) {
        auto plane = m.planes[size_t(m.nodes[0].planenum)];
        plane.normal[0] = -1, plane.normal[1] = plane.normal[2] = 0;
        plane.dist = 64;
        m.nodes[0].planenum = int32_t(m.planes.size());
        m.planes.push_back(plane);
        std::swap(m.nodes[0].children[0], m.nodes[0].children[1]);
    });
    const World w = World::prepare(bsp);
    EXPECT_EQ(w.leaf_at({0, 0, 64}).leaf, 1);
    EXPECT_FALSE(w.contents({0, 0, 64}).solid());
    EXPECT_EQ(w.leaf_at({-100, 0, 64}).leaf, 0);
    EXPECT_TRUE(w.contents({-100, 0, 64}).solid());
    query::TraceOptions hull0;
    hull0.hull = 0;
    const auto t = w.trace({0, 0, 64}, {-128, 0, 64}, hull0);
    EXPECT_FALSE(t.startsolid);
    EXPECT_NEAR(t.end.x, -64, 0.1);
    EXPECT_EQ(t.normal.x, 1);
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

// A hull 0 chain of 250 nodes on 250 planes x = const, each naming the next
// as both children (shared subtrees, legal), all leaves empty: a line across
// the planes reaches node k in k + 1 pieces, some 31,000 steps in all, under
// the step budget of one trace. Twenty brush models naming the same chain
// must not get a budget each (a fuzzed BSP2 file took minutes that way): the
// whole trace shares one budget and ends with an Error naming the node lump.
TEST(Query, HullTraceStepBudgetIsSharedByTheModels) {
    const Bsp bsp = q1([](Room& m) {
        const auto base = m.nodes[0];
        m.nodes.clear();
        for (int i = 0; i < 250; ++i) {
            auto plane = m.planes[0];
            plane.normal[0] = 1, plane.normal[1] = plane.normal[2] = 0;
            plane.dist = -100 + 0.5f * float(i);
            plane.type = 0;
            auto n = base;
            n.planenum = int32_t(m.planes.size());
            m.planes.push_back(plane);
            n.children[0] = n.children[1] = int16_t(i + 1);
            m.nodes.push_back(n);
        }
        m.nodes.back().children[0] = m.nodes.back().children[1] = -2;  // the empty leaf
        m.leafs[0].contents = quake1::CONTENTS_EMPTY;
        for (int k = 1; k < 20; ++k) m.models.push_back(m.models[0]);
    });
    const World w = World::prepare(bsp);
    query::TraceOptions hull0;
    hull0.hull = 0;
    const auto world_only = w.trace({64, 0, 64}, {-128, 0, 64}, hull0);
    EXPECT_EQ(world_only.fraction, 1);
    EXPECT_FALSE(world_only.startsolid);
    hull0.models = true;
    try {
        (void)w.trace({64, 0, 64}, {-128, 0, 64}, hull0);
        FAIL() << "twenty walks of the shared chain ran on twenty budgets";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("room.bsp: lump nodes", 0), 0u) << msg;
        EXPECT_NE(msg.find("steps"), std::string::npos) << msg;
    }
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
    // A bad head names its model and that model's record (the second of two: 48 bytes into the lump).
    const Bsp two = build([](Quake2Map& m) {
        m.models.push_back(m.models[0]);
        m.models[1].headnode = 40;
    });
    const std::string error = prepare_error(two);
    EXPECT_NE(error.find("model 1's head node 40"), std::string::npos) << error;
    EXPECT_NE(error.find("lump models at offset " +
                         std::to_string(two.entry(*two.find_lump("models")).offset + sizeof(quake2::dmodel_t))),
              std::string::npos)
        << error;
}

namespace {

// 80 nodes on one plane, each naming the next as both children: a walk of the
// tree that sends a box down both sides of every node takes 2^80 paths.
void make_lattice(Quake2Map& m) {
    const auto base = m.nodes[0];
    m.nodes.clear();
    for (int i = 0; i < 80; ++i) {
        auto n = base;
        n.children[0] = n.children[1] = i + 1;
        m.nodes.push_back(n);
    }
    m.nodes.back().children[0] = -2;
    m.nodes.back().children[1] = -1;
}

// The room's brush sides face into the room (an empty brush); turned outwards
// they make the brush the room's solid volume, which traces can meet.
void make_room_brush_solid(Quake2Map& m) {
    for (int f = 0; f < 6; ++f) {
        auto p = m.planes[size_t(f)];
        for (float& n : p.normal) n = -n;
        p.dist = -p.dist;
        m.brushsides[size_t(f)].planenum = uint16_t(m.planes.size());
        m.planes.push_back(p);
    }
}

// Segments into, along and out of the solid room, from outside it.
const std::pair<Vec3, Vec3> kRoomSegments[] = {
    {{-300, 0, 64}, {0, 0, 64}}, {{0, 0, 400}, {0, 0, 64}}, {{-300, 0, 64}, {-200, 0, 64}}, {{300, 300, 300}, {0, 0, 64}}};

}  // namespace

// Shared subtrees are legal (Half-Life compilers merge equal clipnode
// subtrees), and the lattice would make a tree walk take 2^80 steps. Brush
// families trace through a BVH of the world's brushes (each once), so the
// lattice costs them nothing: each trace ends where the plain room's does.
TEST(Query, SharedSubtreeLatticeTracesInBrushFamilies) {
    Quake2Map m, plain;
    make_lattice(m);
    make_room_brush_solid(m);
    make_room_brush_solid(plain);
    const Bsp bsp = Bsp::parse(m.build(), "lattice.bsp"), plain_bsp = Bsp::parse(plain.build(), "room.bsp");
    const World w = World::prepare(bsp), room = World::prepare(plain_bsp);
    const auto box = query::TraceOptions::box({-16, -16, -16}, {16, 16, 16});
    int blocked = 0;
    for (const auto& [from, to] : kRoomSegments) {
        const auto a = w.trace(from, to, box), b = room.trace(from, to, box);
        blocked += b.fraction < 1 || b.startsolid;
        EXPECT_EQ(a.fraction, b.fraction);
        EXPECT_EQ(a.startsolid, b.startsolid);
        EXPECT_EQ(a.end, b.end);
    }
    EXPECT_GT(blocked, 0);  // the comparison is between traces that meet the brush
}

// A brush model whose head is the lattice's top: listing its brushes walked
// every path (2^80) before each node and leaf was stamped once per model;
// fuzz_query hung on such a file. Now prepare() ends and the model's brush
// stops a trace like the world's does.
TEST(Query, SharedSubtreeLatticeUnderABrushModel) {
    Quake2Map m;
    make_lattice(m);
    make_room_brush_solid(m);
    m.models.push_back(m.models[0]);  // model 1: the same lattice (headnode 0)
    const Bsp bsp = Bsp::parse(m.build(), "lattice_model.bsp");
    const World w = World::prepare(bsp);
    query::TraceOptions with_models = query::TraceOptions::box({-16, -16, -16}, {16, 16, 16});
    with_models.models = true;
    int blocked = 0;
    for (const auto& [from, to] : kRoomSegments) {
        const auto plain = w.trace(from, to, query::TraceOptions::box({-16, -16, -16}, {16, 16, 16}));
        const auto through_models = w.trace(from, to, with_models);
        blocked += plain.fraction < 1 || plain.startsolid;
        EXPECT_EQ(through_models.fraction, plain.fraction);
        EXPECT_EQ(through_models.startsolid, plain.startsolid);
    }
    EXPECT_GT(blocked, 0);
}

// Eight copies of the solid room brush, listed by the leaf last one first:
// every trace into them enters all eight at once. The one reported is brush
// 0, the lowest-numbered, not whichever the BVH happened to meet first, and a
// trace that never leaves them reports brush 0 and no impact plane.
TEST(Query, TiedBrushesReportTheLowestNumbered) {
    Quake2Map m;
    make_room_brush_solid(m);
    const auto first = m.brushes[0];
    m.brushes.clear();
    m.leafbrushes.clear();
    for (uint16_t b = 0; b < 8; ++b) {
        m.brushes.push_back(first);
        m.leafbrushes.push_back({uint16_t(7 - b)});
    }
    m.leafs[1].numleafbrushes = 8;
    const World w = World::prepare(Bsp::parse(m.build(), "tied.bsp"));
    int hits = 0;
    for (const auto& [from, to] : kRoomSegments)
        for (const auto& o : {query::TraceOptions{}, query::TraceOptions::box({-16, -16, -16}, {16, 16, 16})}) {
            const auto r = w.trace(from, to, o);
            if (r.fraction >= 1 && !r.startsolid) continue;
            ++hits;
            EXPECT_EQ(r.brush, 0) << from.x << " " << from.y << " " << from.z;
        }
    EXPECT_GT(hits, 4);
    const auto inside = w.trace({0, 0, 64}, {10, 0, 64});
    EXPECT_TRUE(inside.allsolid);
    EXPECT_EQ(inside.brush, 0);
    EXPECT_EQ(inside.normal, (Vec3{0, 0, 0}));
}

// Boxes with NaN or infinite corners (a hostile patch or displacement vertex):
// the binned build used int(NaN) as a bin index and wrote 8 GB below the
// stack (fuzz_query). The build ends, every id is kept once, finite boxes are
// still found by a segment.
TEST(Query, BvhBuildSurvivesNonFiniteBoxes) {
    constexpr float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<query::detail::Aabb> boxes;
    std::vector<uint32_t> ids;
    for (uint32_t i = 0; i < 200; ++i) {
        const float x = float(i) * 10;
        query::detail::Aabb b{{x, 0, 0}, {x + 1, 1, 1}};
        if (i % 7 == 3) b.hi[0] = nan;
        if (i % 11 == 5) b.lo[1] = -inf;
        if (i % 13 == 6) b.hi[2] = 3e38f, b.lo[2] = 3e38f;
        boxes.push_back(b);
        ids.push_back(i);
    }
    const auto bvh = query::detail::Bvh::build(boxes, ids);
    std::vector<uint32_t> items = bvh.items;
    std::sort(items.begin(), items.end());
    EXPECT_EQ(items, ids);
    const float start[3] = {-5, 0.5f, 0.5f}, dir[3] = {2010, 0, 0}, grow[3] = {0, 0, 0};
    const float tmax = 1;
    std::vector<bool> met(boxes.size(), false);
    query::detail::walk(bvh, start, dir, grow, grow, tmax, [&](uint32_t id) {
        met[id] = true;
        return true;
    });
    for (uint32_t i = 0; i < 200; ++i)
        if (i % 7 != 3 && i % 11 != 5 && i % 13 != 6) {
            EXPECT_TRUE(met[i]) << "box " << i;
        }
}

// Brush lists a compiled map gives each brush model once, repeated by a
// hostile file until they fill memory or time (fuzz_query: a Nightfire
// input ran past 10 s; every Quake 3 submodel naming every brush is the
// same shape): prepare() stops at a budget with a message naming the lump.
TEST(Query, OverlappingBrushListsStopAtABudget) {
    const std::string nightfire = prepare_error([] {
        NightfireMap m;
        m.leaf_brushes.assign(5000, m.leaf_brushes[0]);
        m.leaves[1].LeafBrushesIndex = 0;
        m.leaves[1].LeafBrushesCount = 5000;
        auto model = m.models[0];
        model.LeavesIndex = 0;
        model.LeavesCount = 2;
        m.models.resize(2000, model);  // 1999 brush models, each over both leaves
        return Bsp::parse(m.build(), "overlap_nf.bsp");
    }());
    EXPECT_NE(nightfire.find("lump models at offset"), std::string::npos) << nightfire;
    EXPECT_NE(nightfire.find("overlap"), std::string::npos) << nightfire;
    // Three brush models over the same leaves are not hostile: each lists the one brush once.
    EXPECT_EQ(prepare_error([] {
                  NightfireMap m;
                  auto model = m.models[0];
                  model.LeavesIndex = 0;
                  model.LeavesCount = 2;
                  m.models.resize(4, model);
                  return Bsp::parse(m.build(), "shared_nf.bsp");
              }()),
              "");
    const std::string q3 = prepare_error([] {
        Quake3Map m;
        m.brushes.resize(3000, m.brushes[0]);
        auto model = m.models[0];
        model.firstBrush = 0;
        model.numBrushes = 3000;
        m.models.resize(1500, model);
        return Bsp::parse(m.build(), "overlap_q3.bsp");
    }());
    EXPECT_NE(q3.find("overlap"), std::string::npos) << q3;
    const std::string q2 = prepare_error([] {
        Quake2Map m;
        m.brushsides.resize(300, m.brushsides[0]);
        m.brushes[0].numsides = 300;
        m.brushes.resize(14000, m.brushes[0]);  // 4.2 million sides named by 300
        return Bsp::parse(m.build(), "overlap_q2.bsp");
    }());
    EXPECT_NE(q2.find("side ranges overlap"), std::string::npos) << q2;
    // 20000 brush models under the one node, whose room leaf names 300 leaf brushes.
    const std::string q2_models = prepare_error([] {
        Quake2Map m;
        m.leafbrushes.assign(300, m.leafbrushes[0]);
        m.leafs[1].numleafbrushes = 300;
        m.models.resize(20000, m.models[0]);
        return Bsp::parse(m.build(), "overlap_q2_models.bsp");
    }());
    EXPECT_NE(q2_models.find("subtrees overlap"), std::string::npos) << q2_models;
}

// A BVH large enough to be built on several threads (its top on one, then
// subtrees on each core): every item once, every node's box holding its
// children's, and a walk along random segments meets every box the segment
// meets (brute force).
TEST(Query, LargeBvhBuiltInParallelIsWholeAndWalksToEveryBoxMet) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> at(-4000, 4000), size(0, 48);
    std::vector<query::detail::Aabb> boxes(60000);
    std::vector<uint32_t> ids(boxes.size());
    for (uint32_t i = 0; i < boxes.size(); ++i) {
        for (int k = 0; k < 3; ++k) {
            boxes[i].lo[k] = at(rng);
            boxes[i].hi[k] = boxes[i].lo[k] + size(rng);
        }
        if (i % 500 == 0) boxes[i] = boxes[0];  // repeated boxes: the median splits
        ids[i] = i * 3 + 1;
    }
    const auto bvh = query::detail::Bvh::build(boxes, ids);
    std::vector<uint32_t> items = bvh.items;
    std::sort(items.begin(), items.end());
    EXPECT_EQ(items, ids);
    // Each slot's box holds its leaf items' boxes and its child node's slots.
    size_t leaf_items = 0;
    for (const auto& node : bvh.nodes)
        for (int k = 0; k < query::detail::kBvhWidth; ++k) {
            if (!(node.used >> k & 1)) continue;
            auto holds = [&](const float lo[3], const float hi[3]) {
                for (int a = 0; a < 3; ++a)
                    if (lo[a] < node.lo[a][k] || hi[a] > node.hi[a][k]) return false;
                return true;
            };
            if (node.count[k]) {
                for (uint32_t i = node.ref[k]; i < node.ref[k] + node.count[k]; ++i) {
                    const auto& b = boxes[(bvh.items[i] - 1) / 3];
                    ASSERT_TRUE(holds(b.lo, b.hi));
                }
                leaf_items += node.count[k];
            } else {
                const auto& child = bvh.nodes.at(node.ref[k]);
                for (int j = 0; j < query::detail::kBvhWidth; ++j)
                    if (child.used >> j & 1) {
                        const float lo[3] = {child.lo[0][j], child.lo[1][j], child.lo[2][j]};
                        const float hi[3] = {child.hi[0][j], child.hi[1][j], child.hi[2][j]};
                        ASSERT_TRUE(holds(lo, hi));
                    }
            }
        }
    EXPECT_EQ(leaf_items, boxes.size());
    const float grow[3] = {0, 0, 0};
    for (int ray = 0; ray < 200; ++ray) {
        const float start[3] = {at(rng), at(rng), at(rng)};
        const float dir[3] = {at(rng) - start[0], at(rng) - start[1], at(rng) - start[2]};
        const float tmax = 1;
        std::vector<bool> met(boxes.size(), false);
        query::detail::walk(bvh, start, dir, grow, grow, tmax, [&](uint32_t id) {
            met[(id - 1) / 3] = true;
            return true;
        });
        for (uint32_t i = 0; i < boxes.size(); ++i) {  // the slab test, in double
            double t0 = 0, t1 = 1;
            for (int a = 0; a < 3 && t0 <= t1; ++a) {
                if (dir[a] == 0) {
                    if (start[a] < boxes[i].lo[a] || start[a] > boxes[i].hi[a]) t0 = 2;
                    continue;
                }
                double ta = (double(boxes[i].lo[a]) - start[a]) / dir[a], tb = (double(boxes[i].hi[a]) - start[a]) / dir[a];
                if (ta > tb) std::swap(ta, tb);
                t0 = std::max(t0, ta), t1 = std::min(t1, tb);
            }
            if (t0 < t1 - 1e-6) {
                ASSERT_TRUE(met[i]) << "ray " << ray << " box " << i;
            }
        }
    }
}

// walk_overlap() finds exactly the boxes a query box meets, faces touching
// included (closed boxes), and nothing for a query box with a NaN.
TEST(Query, BvhOverlapFindsEveryBoxTheQueryMeets) {
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> at(-2000, 2000), size(0, 300);
    std::vector<query::detail::Aabb> boxes(5000);
    std::vector<uint32_t> ids(boxes.size());
    for (uint32_t i = 0; i < boxes.size(); ++i) {
        for (int k = 0; k < 3; ++k) {
            boxes[i].lo[k] = std::round(at(rng));  // whole numbers: queries touch faces exactly
            boxes[i].hi[k] = boxes[i].lo[k] + std::round(size(rng));
        }
        ids[i] = i + 7;
    }
    const auto bvh = query::detail::Bvh::build(boxes, ids);
    size_t found = 0, touching = 0;
    for (int q = 0; q < 500; ++q) {
        float lo[3], hi[3];
        const auto& near = boxes[size_t(q) * 7 % boxes.size()];
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::round(at(rng));
            hi[k] = lo[k] + std::round(size(rng)) * 2;
        }
        if (q % 2) {  // touch a box's face from outside
            std::copy(near.lo, near.lo + 3, lo), std::copy(near.hi, near.hi + 3, hi);
            const int k = q % 3;
            hi[k] = near.lo[k];
            lo[k] = near.lo[k] - 50;
        }
        std::vector<uint32_t> got, want;
        query::detail::walk_overlap(bvh, lo, hi, [&](uint32_t id) {
            got.push_back(id);
            return true;
        });
        for (uint32_t i = 0; i < boxes.size(); ++i) {
            bool meets = true;
            for (int k = 0; k < 3; ++k) meets = meets && boxes[i].lo[k] <= hi[k] && boxes[i].hi[k] >= lo[k];
            if (meets) want.push_back(ids[i]);
            if (meets && q % 2 && i == size_t(q) * 7 % boxes.size()) ++touching;
        }
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, want) << "query " << q;
        found += want.size();
    }
    EXPECT_GT(found, 1000u);
    EXPECT_EQ(touching, 250u);  // each touching query finds the box it touches
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float lo[3] = {nan, -1e9f, -1e9f}, hi[3] = {1e9f, 1e9f, 1e9f};
    size_t any = 0;
    query::detail::walk_overlap(bvh, lo, hi, [&](uint32_t) { return ++any, true; });
    EXPECT_EQ(any, 0u);
    // visit() returning false stops the walk.
    const float all_lo[3] = {-1e9f, -1e9f, -1e9f}, all_hi[3] = {1e9f, 1e9f, 1e9f};
    query::detail::walk_overlap(bvh, all_lo, all_hi, [&](uint32_t) { return ++any < 10; });
    EXPECT_EQ(any, 10u);
}

// A brush without sides (a damaged brushes lump: fuzz_query found one under
// UBSan) holds no side to test: a point's contents and a trace read none of
// the sides array, which is then empty.
TEST(Query, BrushesWithoutSidesAreReadWithoutTheirSides) {
    Quake3Map m;
    m.brushes[0].numSides = 0;
    m.brushsides.clear();
    m.fogs.clear();
    const Bsp bsp = Bsp::parse(m.build(), "sideless_q3.bsp");
    const query::World world = query::World::prepare(bsp);
    EXPECT_EQ(world.contents({0, 0, 64}).raw, 0);
    EXPECT_EQ(world.leaf_at({0, 0, 64}).contents.raw, 0);
    const query::TraceResult r = world.trace({0, 0, 64}, {0, 0, -64});
    EXPECT_EQ(r.brush, -1);
    EXPECT_FALSE(r.startsolid);
}

TEST(Query, BatchesEqualSingleTraces) {
    const Bsp bsp = q1();
    const World w = World::prepare(bsp);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-100, 100);
    std::vector<query::Ray> rays(5000);
    for (auto& r : rays) r = {{u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}};
    std::vector<query::TraceResult> out(rays.size()), many(rays.size());
    w.trace(rays, out, {}, 2);
    // A thread count from a user (Python, a script) far beyond any machine's is cut
    // down (to 256), not a million threads started or a process aborted.
    w.trace(rays, many, {}, 1000000);
    size_t hits = 0;
    for (size_t i = 0; i < rays.size(); ++i) {
        const auto one = w.trace(rays[i].start, rays[i].end);
        ASSERT_EQ(one.fraction, out[i].fraction) << i;
        ASSERT_EQ(one.end, out[i].end) << i;
        ASSERT_EQ(one.startsolid, out[i].startsolid) << i;
        ASSERT_EQ(one.fraction, many[i].fraction) << i;
        ASSERT_EQ(one.end, many[i].end) << i;
        hits += one.hit();
    }
    EXPECT_GT(hits, 100u);
    EXPECT_LT(hits, rays.size());
}

namespace {

/// The Quake 3 box room (its brush and the world's patch made of a shader
/// without contents, so nothing in the world stops a trace) with a submodel:
/// one flat solid patch at z = 64 over x, y in [-32, 32], placed by its
/// entity at `origin`.
Quake3Map q3_room_with_patch_model(Vec3 origin) {
    Quake3Map m;
    quake3::dshader_t curve{};
    std::memcpy(curve.shader, "textures/base/curve", 19);
    curve.contentFlags = 1;  // CONTENTS_SOLID
    m.shaders.push_back(curve);
    const quake3::dsurface_t patch = m.flat_patch(64.0f, int32_t(m.shaders.size()) - 1);
    quake3::dmodel_t model{};
    model.mins[0] = model.mins[1] = -32, model.mins[2] = 64;
    model.maxs[0] = model.maxs[1] = 32, model.maxs[2] = 64;
    model.firstSurface = int32_t(m.surfaces.size());
    model.numSurfaces = 1;
    model.firstBrush = int32_t(m.brushes.size());
    m.surfaces.push_back(patch);
    m.models.push_back(model);
    char entities[256];
    std::snprintf(entities, sizeof entities,
                  "{\n\"classname\" \"worldspawn\"\n}\n{\n\"classname\" \"func_bobbing\"\n\"model\" \"*1\"\n"
                  "\"origin\" \"%g %g %g\"\n}\n",
                  double(origin.x), double(origin.y), double(origin.z));
    m.entities = text(entities);
    return m;
}

}  // namespace

// Quake 3 submodels collide with their patches too (CMod_LoadSubmodels gives
// a submodel its surfaces, CM_TraceThroughLeaf its patches): with `models`,
// lines and boxes stop on a door's or platform's curve, moved by its
// entity's origin, and the hit names the model.
TEST(Query, Quake3SubmodelPatchesCollideAtTheirOrigin) {
    const Vec3 origin{8, 0, 16};
    const Bsp bsp = Bsp::parse(q3_room_with_patch_model(origin).build(), "patch_model.bsp");
    const World w = World::prepare(bsp);
    query::TraceOptions models;
    models.models = true;

    // Without the models nothing stops the line; with them the patch does, at
    // z = 64 + 16, backed off by SURFACE_CLIP_EPSILON (0.125).
    EXPECT_FALSE(w.trace({0, 0, 120}, {0, 0, 2}).hit());
    const auto line = w.trace({0, 0, 120}, {0, 0, 2}, models);
    EXPECT_TRUE(line.triangle);
    EXPECT_EQ(line.model, 1);
    EXPECT_NEAR(line.end.z, 80.125, 1e-3);
    EXPECT_EQ(line.normal, (Vec3{0, 0, 1}));
    EXPECT_NEAR(line.dist, 64.125, 1e-3);  // in the model's space, as for its brushes
    EXPECT_EQ(line.contents.raw, 1);
    // The patch spans x in [-24, 40] where the entity puts it, not [-32, 32].
    EXPECT_TRUE(w.trace({36, 0, 120}, {36, 0, 2}, models).hit());
    EXPECT_FALSE(w.trace({-28, 0, 120}, {-28, 0, 2}, models).hit());

    // The player's box lands on it with its mins (z -24) on the surface.
    query::TraceOptions player = w.player();
    player.models = true;
    const auto box = w.trace({0, 0, 120}, {0, 0, 60}, player);
    EXPECT_EQ(box.model, 1);
    EXPECT_TRUE(box.triangle);
    EXPECT_NEAR(box.end.z, 104, 0.2);
    EXPECT_FALSE(w.trace({0, 0, 120}, {0, 0, 60}, w.player()).hit());
    // A box placed across the surface starts in solid, as the engine's position test.
    const auto placed = w.trace({0, 0, 90}, {0, 0, 90}, player);
    EXPECT_TRUE(placed.startsolid);
    EXPECT_EQ(placed.model, 1);
}

// The engine's collision reads no face but the patches (CMod_LoadPatches skips
// the others), so a damaged polygon face does not stop traces; a damaged
// patch is an error naming its record.
TEST(Query, Quake3TracesNeedOnlyThePatchFaces) {
    const Vec3 origin{8, 0, 16};
    const Bsp good = Bsp::parse(q3_room_with_patch_model(origin).build(), "patch_model.bsp");
    Quake3Map damaged_polygon = q3_room_with_patch_model(origin);
    damaged_polygon.surfaces[2].shaderNum = 5898262;
    damaged_polygon.surfaces[3].surfaceType = 77;
    const Bsp polygon_bsp = Bsp::parse(damaged_polygon.build(), "damaged_polygon.bsp");
    EXPECT_THROW((void)model::build(polygon_bsp), Error);  // the renderer's model refuses it
    const World a = World::prepare(good), b = World::prepare(polygon_bsp);
    query::TraceOptions models;
    models.models = true;
    for (const float x : {-40.0f, -20.0f, 0.0f, 20.0f, 36.0f}) {
        const auto ta = a.trace({x, 4, 120}, {x, 4, 2}, models), tb = b.trace({x, 4, 120}, {x, 4, 2}, models);
        EXPECT_EQ(ta.fraction, tb.fraction) << x;
        EXPECT_EQ(ta.model, tb.model) << x;
    }
    Quake3Map damaged_patch = q3_room_with_patch_model(origin);
    damaged_patch.surfaces.back().shaderNum = 5898262;
    const std::string error = prepare_error(Bsp::parse(damaged_patch.build(), "damaged_patch.bsp"));
    EXPECT_NE(error.find("face 7: shaderNum 5898262"), std::string::npos) << error;
}

// The games' spawn rules for brush entities that do not block traces, each
// case as the game's code sets it: SOLID_NOT / SOLID_TRIGGER (Quake, Half-Life,
// Counter-Strike, Quake 2) or FSOLID_NOT_SOLID (Source).
TEST(Query, BrushEntitiesSolidAsTheirGamesSpawnThem) {
    struct Case {
        Format format;
        std::string_view entity;  ///< key / value pairs, the classname first
        bool solid;
    };
    const Case cases[] = {
        {Format::quake1, R"("classname" "func_door")", true},
        {Format::quake1, R"("classname" "func_wall")", true},
        {Format::quake1, R"("classname" "trigger_multiple")", false},
        {Format::quake1, R"("classname" "func_illusionary")", false},
        {Format::quake1, R"("classname" "func_door" "spawnflags" "8")", true},  // Quake: 8 is the gold key
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" "8")", false},  // Half-Life: Passable
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" "1")", true},
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" " +9")", false},   // read as atoi does
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" "8 junk")", false},
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" "x8")", true},
        {Format::goldsrc, R"("classname" "func_door" "spawnflags" "99999999999999999999")", true},
        {Format::goldsrc, R"("classname" "func_water" "skin" "-3")", false},
        {Format::goldsrc, R"("classname" "func_water")", true},  // skin 0: a plain door
        {Format::goldsrc, R"("classname" "func_door" "skin" "-3")", false},
        {Format::goldsrc, R"("classname" "func_door_rotating" "spawnflags" "8")", false},
        {Format::goldsrc, R"("classname" "func_door_rotating" "spawnflags" "2")", true},
        {Format::goldsrc, R"("classname" "func_rotating" "spawnflags" "64")", false},
        {Format::goldsrc, R"("classname" "func_rotating" "spawnflags" "1")", true},
        {Format::goldsrc, R"("classname" "func_wall_toggle" "spawnflags" "1")", false},
        {Format::goldsrc, R"("classname" "func_wall_toggle")", true},
        {Format::goldsrc, R"("classname" "func_ladder")", false},
        {Format::goldsrc, R"("classname" "func_buyzone")", false},
        {Format::goldsrc, R"("classname" "func_bomb_target")", false},
        {Format::goldsrc, R"("classname" "func_hostage_rescue")", false},
        {Format::goldsrc, R"("classname" "func_friction")", false},
        {Format::goldsrc, R"("classname" "game_zone_player")", false},
        {Format::goldsrc, R"("classname" "func_breakable")", true},
        {Format::goldsrc, R"("classname" "func_conveyor")", true},
        {Format::quake1, R"("classname" "func_buyzone")", false},  // Half-Life maps in version 29
        {Format::quake2, R"("classname" "func_wall")", true},
        {Format::quake2, R"("classname" "func_wall" "spawnflags" "1")", false},   // TRIGGER_SPAWN
        {Format::quake2, R"("classname" "func_wall" "spawnflags" "2")", false},   // TOGGLE implies it
        {Format::quake2, R"("classname" "func_wall" "spawnflags" "7")", true},    // START_ON
        {Format::quake2, R"("classname" "func_wall" "spawnflags" "1792")", true}, // skill bits only
        {Format::quake2, R"("classname" "func_explosive" "spawnflags" "1")", false},
        {Format::quake2, R"("classname" "func_explosive" "spawnflags" "2")", true},
        {Format::quake2, R"("classname" "func_object" "spawnflags" "2")", false},
        {Format::quake2, R"("classname" "func_object" "spawnflags" "256")", true},
        {Format::quake2, R"("classname" "func_door" "spawnflags" "8")", true},
        {Format::quake2, R"("classname" "trigger_once")", false},
        {Format::quake3, R"("classname" "func_door")", true},
        {Format::quake3, R"("classname" "trigger_push")", false},
        {Format::nightfire, R"("classname" "func_wall")", true},
        {Format::source, R"("classname" "func_brush")", true},
        {Format::source, R"("classname" "func_brush" "Solidity" "1")", false},
        {Format::source, R"("classname" "func_brush" "solidity" "1")", false},  // keys match without case
        {Format::source, R"("classname" "func_brush" "Solidity" "0" "StartDisabled" "1")", false},
        {Format::source, R"("classname" "func_brush" "Solidity" "2" "StartDisabled" "1")", true},
        {Format::source, R"("classname" "func_brush" "Solidity" "2")", true},
        {Format::source, R"("classname" "func_brush" "StartDisabled" "0")", true},
        {Format::source, R"("classname" "func_wall_toggle" "spawnflags" "1")", false},
        {Format::source, R"("classname" "func_buyzone")", false},
        {Format::source, R"("classname" "func_nav_blocker")", false},
        {Format::source, R"("classname" "func_door" "spawnflags" "8")", false},
        {Format::source, R"("classname" "func_door_rotating" "spawnflags" "416")", true},
        {Format::source, R"("classname" "func_water" "spawnflags" "8")", true},
        {Format::source, R"("classname" "func_breakable")", true},
        // Source finds a classname's factory without case (CUtlDict's caseless compare).
        {Format::source, R"("classname" "Func_Brush" "Solidity" "1")", false},
        {Format::source, R"("classname" "TRIGGER_multiple")", false},
        {Format::source, R"("classname" "FUNC_DOOR" "spawnflags" "8")", false},
        {Format::source, R"("classname" "Func_BuyZone")", false},
    };
    for (const Case& c : cases) {
        const EntityLump lump = EntityLump::parse("{" + std::string(c.entity) + "}");
        ASSERT_EQ(lump.entities.size(), 1u) << c.entity;
        EXPECT_EQ(query::detail::solid_at_spawn(c.format, lump.entities[0]), c.solid)
            << format_id(c.format) << " " << c.entity;
    }
}

// End to end on a Half-Life room with a copy of its solid half as model 1 at
// x + 200: the entity naming it decides whether a --models trace stops there.
TEST(Query, ModelsOfEntitiesSpawnedNotSolidLetTracesThrough) {
    const auto stop_x = [](bool goldsrc, std::string_view entity) {
        Room m(goldsrc);
        m.models.push_back(m.models[0]);
        m.entities = text("{\n\"classname\" \"worldspawn\"\n}\n{\n\"model\" \"*1\"\n\"origin\" \"200 0 0\"\n" +
                          std::string(entity) + "\n}\n");
        const Bsp bsp = Bsp::parse(m.build(goldsrc ? layouts::goldsrc() : layouts::quake1(), goldsrc ? 30 : 29), "room.bsp");
        const World w = World::prepare(bsp);
        query::TraceOptions o;
        o.hull = 0;
        o.models = true;
        return w.trace({300, 0, 64}, {0, 0, 64}, o).end.x;
    };
    // Model 1's solid is x < -64 + 200.
    EXPECT_NEAR(stop_x(true, R"("classname" "func_door")"), 136, 0.1);
    EXPECT_EQ(stop_x(true, R"("classname" "func_water" "skin" "-3")"), 0);
    EXPECT_EQ(stop_x(true, R"("classname" "func_door" "spawnflags" "8")"), 0);
    EXPECT_NEAR(stop_x(false, R"("classname" "func_door" "spawnflags" "8")"), 136, 0.1);
    EXPECT_EQ(stop_x(false, R"("classname" "func_ladder")"), 0);
}
