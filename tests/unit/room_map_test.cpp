// The demo's room map (src/samples/room_map.cpp), read back through bspkit's
// typed records and walked independently of the compiler: the node tree puts
// every point of the design in the right leaf, the clip hulls agree with the
// player boxes, the faces are exactly the walls, the PVS holds every line of
// sight and separates the far rooms, and the lightmap has light and shadow.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/visibility.hpp>

#include "room_map.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

using namespace bspkit;
using namespace bspkit::quake1;
using samples::Vec3;

namespace {

struct RoomMap {
    samples::RoomDesign design = samples::room_design();
    Bytes bytes = samples::compile_room_map(design);
    Bsp bsp = Bsp::parse(bytes, "rooms.bsp");
    Map map{bsp};
    Tables<Bsp29Types> t = map.bsp29();
};

const RoomMap& room_map() {
    static const RoomMap m;
    return m;
}

float side(const Tables<Bsp29Types>& t, int32_t planenum, const Vec3& p) {
    const dplane_t& pl = t.planes[size_t(planenum)];
    return pl.normal[0] * p[0] + pl.normal[1] * p[1] + pl.normal[2] * p[2] - pl.dist;
}

/// Leaf index of a point in hull 0 of model `m`.
int leaf_at(const Tables<Bsp29Types>& t, const Vec3& p, size_t m = 0) {
    int n = t.models[m].headnode[0];
    while (n >= 0) {
        const dnode_t& node = t.nodes[size_t(n)];
        n = node.children[side(t, node.planenum, p) >= 0 ? 0 : 1];
    }
    return -1 - n;
}

/// Contents of a point in clip hull h of model `m` (SV_HullPointContents).
int hull_contents(const Tables<Bsp29Types>& t, const Vec3& p, int h, size_t m = 0) {
    int n = t.models[m].headnode[h];
    while (n >= 0) {
        const dclipnode_t& c = t.clipnodes[size_t(n)];
        n = c.children[side(t, c.planenum, p) >= 0 ? 0 : 1];
    }
    return n;
}

/// Design truth for a clip hull: the player box centred at p overlaps a solid cell.
bool box_hits_solid(const samples::RoomDesign& d, const Vec3& p, int h) {
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = d.cell_index(p[size_t(a)] + samples::kHullMins[h][size_t(a)], a);
        hi[a] = d.cell_index(p[size_t(a)] + samples::kHullMaxs[h][size_t(a)], a);
    }
    for (int z = lo[2]; z <= hi[2]; ++z)
        for (int y = lo[1]; y <= hi[1]; ++y)
            for (int x = lo[0]; x <= hi[0]; ++x)
                if (d.cell_solid(x, y, z)) return true;
    return false;
}

/// Points every 16 units, offset by 4 so none lies on a split plane (all are multiples of 8),
/// over the map and one cell beyond it.
std::vector<Vec3> sample_points(const samples::RoomDesign& d, float step = 16) {
    std::vector<Vec3> out;
    for (float z = d.origin[2] - 64 + 4; z < d.origin[2] + float(d.cells[2] + 1) * d.cell; z += step)
        for (float y = d.origin[1] - 64 + 4; y < d.origin[1] + float(d.cells[1] + 1) * d.cell; y += step)
            for (float x = d.origin[0] - 64 + 4; x < d.origin[0] + float(d.cells[0] + 1) * d.cell; x += step)
                out.push_back({x, y, z});
    return out;
}

/// True when the straight segment a-b stays in the design's empty space (marched every unit).
bool line_of_sight(const samples::RoomDesign& d, const Vec3& a, const Vec3& b) {
    const float len = std::sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    const int steps = int(len) + 1;
    for (int i = 0; i <= steps; ++i) {
        const float f = float(i) / float(steps);
        if (d.solid({a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2])})) return false;
    }
    return true;
}

/// The lightmap sample of the world face under `p` (a point on a floor), by the 16-texel rule.
int floor_luxel(const RoomMap& m, const Vec3& p) {
    const auto& t = m.t;
    for (size_t i = 0; i < size_t(t.models[0].numfaces); ++i) {
        const dface_t& f = t.faces[i];
        const dplane_t& pl = t.planes[size_t(f.planenum)];
        if (pl.type != 2 || f.side != 0 || pl.dist != p[2]) continue;
        float mins[3] = {1e9f, 1e9f, 1e9f}, maxs[3] = {-1e9f, -1e9f, -1e9f};
        const texinfo_t& ti = t.texinfo[size_t(f.texinfo)];
        double st_min[2] = {1e30, 1e30}, st_max[2] = {-1e30, -1e30};
        for (int k = 0; k < f.numedges; ++k) {
            const int32_t e = t.surfedges[size_t(f.firstedge + k)].edge;
            const dvertex_t& v = t.vertexes[e < 0 ? t.edges[size_t(-e)].v[1] : t.edges[size_t(e)].v[0]];
            for (int a = 0; a < 3; ++a) mins[a] = std::min(mins[a], v.point[a]), maxs[a] = std::max(maxs[a], v.point[a]);
            for (int a = 0; a < 2; ++a) {
                const double st = double(v.point[0] * ti.vecs[a][0] + v.point[1] * ti.vecs[a][1] +
                                         v.point[2] * ti.vecs[a][2] + ti.vecs[a][3]);
                st_min[a] = std::min(st_min[a], st);
                st_max[a] = std::max(st_max[a], st);
            }
        }
        if (p[0] < mins[0] || p[0] >= maxs[0] || p[1] < mins[1] || p[1] >= maxs[1]) continue;
        const int width = int(std::ceil(st_max[0] / 16) - std::floor(st_min[0] / 16)) + 1;
        int luxel[2];
        for (int a = 0; a < 2; ++a) {
            const double s = p[0] * ti.vecs[a][0] + p[1] * ti.vecs[a][1] + p[2] * ti.vecs[a][2] + ti.vecs[a][3];
            luxel[a] = int(std::lround(s / 16 - std::floor(st_min[a] / 16)));
        }
        return m.map.lighting()[size_t(f.lightofs) + size_t(luxel[1] * width + luxel[0])];
    }
    ADD_FAILURE() << "no floor face under " << p[0] << " " << p[1] << " " << p[2];
    return -1;
}

}  // namespace

TEST(RoomMap, ChecksClean) {
    const CheckReport r = check(room_map().bsp);
    for (const auto& f : r.findings) ADD_FAILURE() << f.lump << "[" << f.record << "]." << f.field << ": " << f.message;
    EXPECT_EQ(r.errors(), 0u);
    EXPECT_EQ(r.warnings(), 0u);
}

TEST(RoomMap, EveryPointOfTheDesignIsInALeafOfItsContents) {
    const auto& m = room_map();
    size_t empty = 0, solid = 0;
    for (const Vec3& p : sample_points(m.design)) {
        const int leaf = leaf_at(m.t, p);
        ASSERT_LT(size_t(leaf), m.t.leafs.size());
        const bool is_solid = m.design.solid(p);
        EXPECT_EQ(m.t.leafs[size_t(leaf)].contents, is_solid ? CONTENTS_SOLID : CONTENTS_EMPTY)
            << p[0] << " " << p[1] << " " << p[2];
        if (!is_solid) {
            EXPECT_GT(leaf, 0);
            EXPECT_LE(leaf, m.t.models[0].visleafs);
            // The leaf's bounds hold the point.
            const dleaf_t& l = m.t.leafs[size_t(leaf)];
            for (int a = 0; a < 3; ++a) EXPECT_TRUE(p[size_t(a)] >= l.mins[a] && p[size_t(a)] <= l.maxs[a]);
        }
        (is_solid ? solid : empty) += 1;
    }
    EXPECT_GT(empty, 1000u);
    EXPECT_GT(solid, 1000u);
}

TEST(RoomMap, ClipHullsAreTheSolidExpandedByThePlayerBoxes) {
    const auto& m = room_map();
    const samples::Box& door = m.design.door;
    for (int h = 1; h <= 2; ++h) {
        size_t empty = 0;
        for (const Vec3& p : sample_points(m.design)) {
            const bool blocked = box_hits_solid(m.design, p, h);
            EXPECT_EQ(hull_contents(m.t, p, h), blocked ? CONTENTS_SOLID : CONTENTS_EMPTY)
                << "hull " << h << " at " << p[0] << " " << p[1] << " " << p[2];
            empty += !blocked;
            // The door (model 1): solid where the player box overlaps the door brush.
            bool hits_door = true;
            for (int a = 0; a < 3; ++a)
                hits_door = hits_door && p[size_t(a)] + samples::kHullMaxs[h][size_t(a)] > door.mins[size_t(a)] &&
                            p[size_t(a)] + samples::kHullMins[h][size_t(a)] < door.maxs[size_t(a)];
            EXPECT_EQ(hull_contents(m.t, p, h, 1), hits_door ? CONTENTS_SOLID : CONTENTS_EMPTY);
        }
        EXPECT_GT(empty, 100u) << "hull " << h;
    }
    // The player starts standing free; the opening with the door lets the player (hull 1) through
    // once the door is open, but not the large hull 2 (64 units wide, as wide as the opening).
    EXPECT_EQ(hull_contents(m.t, m.design.player_start, 1), CONTENTS_EMPTY);
    const Vec3 doorway{(door.mins[0] + door.maxs[0]) / 2 + 4, (door.mins[1] + door.maxs[1]) / 2 + 4, 28};
    EXPECT_EQ(hull_contents(m.t, doorway, 1), CONTENTS_EMPTY);
    EXPECT_EQ(hull_contents(m.t, doorway, 2), CONTENTS_SOLID);
    EXPECT_EQ(hull_contents(m.t, doorway, 1, 1), CONTENTS_SOLID);
}

TEST(RoomMap, FacesCoverExactlyTheWalls) {
    const auto& m = room_map();
    const auto& d = m.design;
    const auto& t = m.t;
    double area = 0;
    std::set<std::array<float, 4>> seen;  // (axis, centre) of every face: no two on the same spot
    const auto miptex = m.map.miptex();
    for (size_t i = 0; i < size_t(t.models[0].numfaces); ++i) {
        const dface_t& f = t.faces[i];
        const dplane_t& pl = t.planes[size_t(f.planenum)];
        Vec3 mins{1e9f, 1e9f, 1e9f}, maxs{-1e9f, -1e9f, -1e9f};
        for (int k = 0; k < f.numedges; ++k) {
            const int32_t e = t.surfedges[size_t(f.firstedge + k)].edge;
            const dvertex_t& v = t.vertexes[e < 0 ? t.edges[size_t(-e)].v[1] : t.edges[size_t(e)].v[0]];
            for (size_t a = 0; a < 3; ++a) mins[a] = std::min(mins[a], v.point[a]), maxs[a] = std::max(maxs[a], v.point[a]);
        }
        const int axis = pl.type;
        ASSERT_LE(axis, 2);
        const int u = (axis + 1) % 3, v = (axis + 2) % 3;
        area += double(maxs[size_t(u)] - mins[size_t(u)]) * double(maxs[size_t(v)] - mins[size_t(v)]);
        Vec3 c{(mins[0] + maxs[0]) / 2, (mins[1] + maxs[1]) / 2, (mins[2] + maxs[2]) / 2};
        EXPECT_TRUE(seen.insert({float(axis), c[0], c[1], c[2]}).second) << "two faces at one place";
        // Empty in front of it (the side its normal points to), solid behind.
        const float normal = f.side ? -1.0f : 1.0f;
        Vec3 front = c, back = c;
        front[size_t(axis)] += normal;
        back[size_t(axis)] -= normal;
        EXPECT_FALSE(d.solid(front)) << "face " << i;
        EXPECT_TRUE(d.solid(back)) << "face " << i;
        // Floors show the floor texture, walls the bricks.
        const std::string& tex = miptex.entries[size_t(t.texinfo[size_t(f.texinfo)].miptex)].name;
        if (axis == 2 && f.side == 0) {
            EXPECT_EQ(tex, "floor");
        }
        if (axis != 2) {
            EXPECT_EQ(tex, "bricks");
        }
        // The face is kept by a node on its own plane and marked by the leaf in front of it.
        bool on_node = false;
        for (const dnode_t& n : t.nodes)
            on_node = on_node || (i >= n.firstface && i < size_t(n.firstface) + n.numfaces && n.planenum == f.planenum);
        EXPECT_TRUE(on_node) << "face " << i;
        const dleaf_t& l = t.leafs[size_t(leaf_at(t, front))];
        bool marked = false;
        for (size_t k = l.firstmarksurface; k < size_t(l.firstmarksurface) + l.nummarksurfaces; ++k)
            marked = marked || t.marksurfaces[k].face == i;
        EXPECT_TRUE(marked) << "face " << i;
    }
    // The walls of the design: every empty / solid boundary between cells, sampled at cell centres.
    double walls = 0;
    for (int z = 0; z < d.cells[2]; ++z)
        for (int y = 0; y < d.cells[1]; ++y)
            for (int x = 0; x < d.cells[0]; ++x)
                for (int a = 0; a < 3; ++a) {
                    int o[3] = {x, y, z};
                    ++o[a];
                    if (o[a] < d.cells[size_t(a)] && d.cell_solid(x, y, z) != d.cell_solid(o[0], o[1], o[2]))
                        walls += double(d.cell) * d.cell;
                }
    EXPECT_EQ(area, walls);
    // The door: six faces of its own texture, named by the func_door entity.
    EXPECT_EQ(t.models.size(), 2u);
    EXPECT_EQ(t.models[1].numfaces, 6);
    for (int k = 0; k < 6; ++k)
        EXPECT_EQ(miptex.entries[size_t(t.texinfo[size_t(t.faces[size_t(t.models[1].firstface + k)].texinfo)].miptex)].name, "door");
    const std::string ents(m.map.entities().begin(), m.map.entities().end());
    EXPECT_NE(ents.find("\"classname\" \"func_door\"\n\"model\" \"*1\""), std::string::npos);
}

TEST(RoomMap, VisibilityKeepsEveryLineOfSightAndSeparatesTheFarRooms) {
    const auto& m = room_map();
    const auto& d = m.design;
    const Visibility vis = Visibility::of(m.bsp);
    ASSERT_EQ(vis.clusters(), size_t(m.t.models[0].visleafs));
    const auto sees = [&](int from, int to) {
        const Bytes row = vis.pvs(size_t(from - 1));
        return (row[size_t(to - 1) >> 3] >> ((to - 1) & 7)) & 1;
    };
    // Cell centres at eye height.
    std::vector<Vec3> points;
    for (int y = 0; y < d.cells[1]; ++y)
        for (int x = 0; x < d.cells[0]; ++x) {
            const Vec3 p{d.origin[0] + (float(x) + 0.5f) * d.cell, d.origin[1] + (float(y) + 0.5f) * d.cell, 60};
            if (!d.solid(p)) points.push_back(p);
        }
    size_t checked = 0;
    for (size_t i = 0; i < points.size(); ++i)
        for (size_t j = i + 1; j < points.size(); ++j) {
            if (!line_of_sight(d, points[i], points[j])) continue;
            const int a = leaf_at(m.t, points[i]), b = leaf_at(m.t, points[j]);
            EXPECT_TRUE(sees(a, b) && sees(b, a)) << "leafs " << a << " and " << b << " see each other";
            ++checked;
        }
    EXPECT_GT(checked, 1000u);
    // Within one room everything sees everything; rooms A and C never see each other.
    const auto leafs_of = [&](const samples::Box& room) {
        std::set<int> out;
        for (const Vec3& p : sample_points(d))
            if (room.contains(p) && !d.solid(p)) out.insert(leaf_at(m.t, p));
        return out;
    };
    const std::set<int> a = leafs_of(d.rooms[0]), c = leafs_of(d.rooms[2]);
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(c.empty());
    for (const auto& room : d.rooms)
        for (int x : leafs_of(room))
            for (int y : leafs_of(room)) EXPECT_TRUE(sees(x, y));
    for (int x : a)
        for (int y : c) {
            if (x == y) continue;  // a leaf reaching into both rooms would be a design error
            EXPECT_FALSE(sees(x, y)) << "room A leaf " << x << " sees room C leaf " << y;
        }
    // No straight line joins A and C in the design (what the assertion above relies on).
    for (const Vec3& p : points)
        for (const Vec3& q : points)
            if (d.rooms[0].contains(p) && d.rooms[2].contains(q)) {
                ASSERT_FALSE(line_of_sight(d, p, q));
            }
}

TEST(RoomMap, LightmapsHaveLightAndShadow) {
    const auto& m = room_map();
    const auto& d = m.design;
    const samples::PointLight& light = d.lights[0];
    const samples::Box& pillar = d.pillars[0];
    const float floor = d.rooms[0].mins[2];
    // Under the light vs. a far corner of the same room.
    const Vec3 under{light.origin[0], light.origin[1], floor};
    const Vec3 corner{d.rooms[0].maxs[0] - 16, d.rooms[0].mins[1] + 16, floor};
    EXPECT_GT(floor_luxel(m, under), floor_luxel(m, corner) + 100);
    // Behind the pillar, seen from the light, vs. a point as far from the light in another direction.
    const float cx = (pillar.mins[0] + pillar.maxs[0]) / 2, cy = (pillar.mins[1] + pillar.maxs[1]) / 2;
    const float dx = cx - light.origin[0], dy = cy - light.origin[1];
    const Vec3 shadow{light.origin[0] + 2 * dx, light.origin[1] + 2 * dy, floor};
    const float r = 2 * std::sqrt(dx * dx + dy * dy), angle = std::atan2(dy, dx) - 1.0472f;  // 60 degrees away
    const Vec3 lit{light.origin[0] + r * std::cos(angle), light.origin[1] + r * std::sin(angle), floor};
    const Vec3 above_shadow{shadow[0], shadow[1], floor + 1}, above_lit{lit[0], lit[1], floor + 1};
    ASSERT_TRUE(d.rooms[0].contains(above_shadow) && d.rooms[0].contains(above_lit));
    ASSERT_FALSE(line_of_sight(d, above_shadow, light.origin));
    ASSERT_TRUE(line_of_sight(d, above_lit, light.origin));
    EXPECT_LT(floor_luxel(m, shadow) + 40, floor_luxel(m, lit));
}

TEST(RoomMap, TexturesAreEmbeddedWithTheirMipLevels) {
    const auto& m = room_map();
    const auto dir = m.map.miptex();
    std::set<std::string> names;
    for (const Miptex& t : dir.entries) {
        EXPECT_TRUE(t.embedded);
        EXPECT_EQ(t.width, 64u);
        EXPECT_EQ(t.offsets[3], t.offsets[0] + 64 * 64 + 32 * 32 + 16 * 16);
        // Not a flat colour: a procedural pattern uses many palette entries.
        const ByteSpan lump = m.map.textures();
        std::set<uint8_t> colours(lump.begin() + t.dataofs + t.offsets[0], lump.begin() + t.dataofs + t.offsets[0] + 64 * 64);
        EXPECT_GT(colours.size(), 4u) << t.name;
        names.insert(t.name);
    }
    EXPECT_EQ(names, (std::set<std::string>{"bricks", "floor", "ceiling", "door"}));
}
