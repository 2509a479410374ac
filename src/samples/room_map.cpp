// The room-map compiler of room_map.hpp. Steps, in the order of a real
// qbsp / light / vis run:
//   1. hull 0: a kd-tree over the design's cells (every split a cell boundary,
//      chosen to leave the fewest mixed cells); solid leafs all become leaf 0;
//   2. faces: one 64 x 64 quad per boundary between an empty and a solid cell,
//      facing the empty one, kept by the node whose plane separates the two
//      cells (their lowest common ancestor) and marked in the empty cell's leaf;
//   3. hulls 1 and 2: the same tree builder over the cells of an irregular grid
//      whose lines are the cell boundaries moved by the player box, a cell
//      being solid when the player box centred there overlaps a solid cell;
//   4. lightmaps: per face, the luxel grid of the 16-texel rule; each luxel
//      adds, for every light it sees (a ray through the hull-0 tree), light.exe's
//      linear falloff times its angle term;
//   5. visibility: leaf A sees leaf B when a ray joins sample points of their
//      portals through empty space, plus the portal neighbours of what it sees
//      (a margin for rays the sampling could miss);
//   6. the door (model *1): a brush box with its own 6-node tree and hulls.
#include "room_map.hpp"

#include "samples.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/records.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>

namespace bspkit::samples {

int RoomDesign::cell_index(float v, int a) const { return int(std::floor((v - origin[size_t(a)]) / cell)); }

bool RoomDesign::solid(const Vec3& p) const {
    for (const Box& b : pillars)
        if (b.contains(p)) return true;
    for (const Box& b : rooms)
        if (b.contains(p)) return false;
    for (const Box& b : openings)
        if (b.contains(p)) return false;
    return true;
}

bool RoomDesign::cell_solid(int x, int y, int z) const {
    if (x <= 0 || y <= 0 || z <= 0 || x >= cells[0] - 1 || y >= cells[1] - 1 || z >= cells[2] - 1) return true;
    const Vec3 centre{origin[0] + (float(x) + 0.5f) * cell, origin[1] + (float(y) + 0.5f) * cell,
                      origin[2] + (float(z) + 0.5f) * cell};
    return solid(centre);
}

RoomDesign room_design() {
    RoomDesign d;
    d.origin = {-64, -64, -64};
    d.cells = {18, 15, 5};  // x -64..1088, y -64..896, z -64..256
    d.room_names = {"A", "B", "C"};
    d.rooms = {{{0, 0, 0}, {512, 384, 192}}, {{640, 0, 0}, {1024, 384, 192}}, {{640, 448, 0}, {1024, 832, 192}}};
    d.openings = {{{512, 128, 0}, {640, 192, 128}},   // A|B through a 128-unit wall
                  {{704, 384, 0}, {768, 448, 128}}};  // B|C through a 64-unit wall
    d.pillars = {{{256, 192, 0}, {320, 256, 192}}};
    d.door = {{560, 128, 0}, {592, 192, 128}};
    d.lights = {{{160, 224, 144}, 400}, {{832, 192, 144}, 350}, {{832, 640, 144}, 350}};
    d.player_start = {96, 96, 32};
    return d;
}

namespace {

using namespace quake1;

// ---------------------------------------------------------------------------
// kd-tree over a (possibly irregular) grid of homogeneous cells

struct CellGrid {
    std::array<std::vector<float>, 3> lines;  ///< n[a] + 1 coordinates per axis
    std::vector<uint8_t> solid;               ///< n0 * n1 * n2, x fastest
    std::vector<int> prefix;                  ///< (n0+1)(n1+1)(n2+1) solid counts

    int n(int a) const { return int(lines[size_t(a)].size()) - 1; }
    size_t at(int x, int y, int z) const { return (size_t(z) * size_t(n(1)) + size_t(y)) * size_t(n(0)) + size_t(x); }
    size_t pat(int x, int y, int z) const {
        return (size_t(z) * size_t(n(1) + 1) + size_t(y)) * size_t(n(0) + 1) + size_t(x);
    }
    void finish() {
        prefix.assign(size_t(n(0) + 1) * size_t(n(1) + 1) * size_t(n(2) + 1), 0);
        for (int z = 1; z <= n(2); ++z)
            for (int y = 1; y <= n(1); ++y)
                for (int x = 1; x <= n(0); ++x)
                    prefix[pat(x, y, z)] = solid[at(x - 1, y - 1, z - 1)] + prefix[pat(x - 1, y, z)] +
                                           prefix[pat(x, y - 1, z)] + prefix[pat(x, y, z - 1)] -
                                           prefix[pat(x - 1, y - 1, z)] - prefix[pat(x - 1, y, z - 1)] -
                                           prefix[pat(x, y - 1, z - 1)] + prefix[pat(x - 1, y - 1, z - 1)];
    }
    /// Solid cells in [lo, hi).
    int count(const std::array<int, 3>& lo, const std::array<int, 3>& hi) const {
        const auto P = [&](int x, int y, int z) { return prefix[pat(x, y, z)]; };
        return P(hi[0], hi[1], hi[2]) - P(lo[0], hi[1], hi[2]) - P(hi[0], lo[1], hi[2]) - P(hi[0], hi[1], lo[2]) +
               P(lo[0], lo[1], hi[2]) + P(lo[0], hi[1], lo[2]) + P(hi[0], lo[1], lo[2]) - P(lo[0], lo[1], lo[2]);
    }
};

struct KdNode {
    int axis = 0;
    float dist = 0;
    int child[2] = {0, 0};  ///< [0] front (>= dist), [1] back; >= 0 node, < 0: -1 - leaf
    int parent = -1, depth = 0;
    std::array<int, 3> lo{}, hi{};
};
struct KdLeaf {
    bool solid = false;
    int parent = -1;
    std::array<int, 3> lo{}, hi{};
};
struct KdTree {
    std::vector<KdNode> nodes;  ///< preorder, root 0 (empty when the root is a leaf)
    std::vector<KdLeaf> leafs;
    int root = 0;  ///< node index, or -1 - leaf
};

class KdBuilder {
public:
    explicit KdBuilder(const CellGrid& g) : g_(g) {}
    KdTree build() {
        t_.root = node({0, 0, 0}, {g_.n(0), g_.n(1), g_.n(2)}, -1, 0);
        return std::move(t_);
    }

private:
    int node(const std::array<int, 3>& lo, const std::array<int, 3>& hi, int parent, int depth) {
        const int total = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        const int solid = g_.count(lo, hi);
        if (solid == 0 || solid == total) {
            t_.leafs.push_back({solid == total, parent, lo, hi});
            return -int(t_.leafs.size());
        }
        // The split leaving the fewest cells on the minority side of each child.
        int best_axis = -1, best_k = 0;
        long best = -1;
        for (int a = 0; a < 3; ++a) {
            for (int k = lo[size_t(a)] + 1; k < hi[size_t(a)]; ++k) {
                auto bhi = hi, flo = lo;
                bhi[size_t(a)] = k;
                flo[size_t(a)] = k;
                const int bt = (bhi[0] - lo[0]) * (bhi[1] - lo[1]) * (bhi[2] - lo[2]), ft = total - bt;
                const int bs = g_.count(lo, bhi), fs = solid - bs;
                const long impurity = std::min(bs, bt - bs) + std::min(fs, ft - fs);
                // Ties: prefer the more even split (a shallower tree).
                const long score = impurity * 4096 + std::abs(bt - ft);
                if (best < 0 || score < best) best = score, best_axis = a, best_k = k;
            }
        }
        const int index = int(t_.nodes.size());
        t_.nodes.push_back({});
        t_.nodes[size_t(index)].axis = best_axis;
        t_.nodes[size_t(index)].dist = g_.lines[size_t(best_axis)][size_t(best_k)];
        t_.nodes[size_t(index)].parent = parent;
        t_.nodes[size_t(index)].depth = depth;
        t_.nodes[size_t(index)].lo = lo;
        t_.nodes[size_t(index)].hi = hi;
        auto bhi = hi, flo = lo;
        bhi[size_t(best_axis)] = best_k;
        flo[size_t(best_axis)] = best_k;
        const int front = node(flo, hi, index, depth + 1);
        const int back = node(lo, bhi, index, depth + 1);
        t_.nodes[size_t(index)].child[0] = front;
        t_.nodes[size_t(index)].child[1] = back;
        return index;
    }
    const CellGrid& g_;
    KdTree t_;
};

/// The leaf a point falls in (Quake's rule: d >= 0 goes to the front).
int find_leaf(const KdTree& t, const Vec3& p) {
    int n = t.root;
    while (n >= 0) {
        const KdNode& k = t.nodes[size_t(n)];
        n = p[size_t(k.axis)] - k.dist >= 0 ? k.child[0] : k.child[1];
    }
    return -1 - n;
}

/// True when the segment p-q crosses only empty leafs (light.exe's TestLine).
bool line_clear(const KdTree& t, int n, Vec3 p, Vec3 q) {
    while (n >= 0) {
        const KdNode& k = t.nodes[size_t(n)];
        const float d1 = p[size_t(k.axis)] - k.dist, d2 = q[size_t(k.axis)] - k.dist;
        if (d1 >= 0 && d2 >= 0) {
            n = k.child[0];
        } else if (d1 < 0 && d2 < 0) {
            n = k.child[1];
        } else {
            const float f = d1 / (d1 - d2);
            Vec3 mid;
            for (size_t a = 0; a < 3; ++a) mid[a] = p[a] + f * (q[a] - p[a]);
            mid[size_t(k.axis)] = k.dist;
            const int near = d1 >= 0 ? k.child[0] : k.child[1];
            if (!line_clear(t, near, p, mid)) return false;
            n = d1 >= 0 ? k.child[1] : k.child[0];
            p = mid;
        }
    }
    return !t.leafs[size_t(-1 - n)].solid;
}

// ---------------------------------------------------------------------------
// procedural miptex (quantised to the Quake palette, without its fullbrights)

struct Rgb {
    float r, g, b;
};

uint32_t hash(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
float noise(int x, int y, uint32_t seed) { return float(hash(uint32_t(x) * 73856093u ^ uint32_t(y) * 19349663u ^ seed) & 255) / 255.0f; }

Rgb texel(const std::string& name, int x, int y) {
    const float n = noise(x, y, uint32_t(name.size()) * 2654435761u);
    if (name == "bricks") {
        const int row = y / 16, bx = (x + (row & 1) * 16) % 32, by = y % 16;
        if (bx < 2 || by < 2) return {70 + 20 * n, 66 + 20 * n, 60 + 20 * n};  // mortar
        const float tone = noise((x + (row & 1) * 16) / 32, row, 7) * 40;
        return {130 + tone + 30 * n, 62 + tone * 0.5f + 20 * n, 40 + 15 * n};
    }
    if (name == "floor") {
        const int tx = x % 32, ty = y % 32;
        if (tx < 1 || ty < 1) return {40, 38, 34};
        const float tone = ((x / 32 + y / 32) & 1) ? 20 : 0;
        return {110 + tone + 12 * n, 104 + tone + 12 * n, 92 + tone + 10 * n};
    }
    if (name == "ceiling") {
        // Panels of 32 x 64 with a light top-left bevel and a dark seam.
        const int px = x % 32, py = y % 64;
        if (px == 0 || py == 0) return {44, 44, 52};
        const float bevel = (px == 1 || py == 1) ? 40.0f : (px == 31 || py == 63) ? -25.0f : 0.0f;
        return {88 + bevel + 30 * n, 90 + bevel + 30 * n, 100 + bevel + 30 * n};
    }
    // door: vertical planks with two iron bands
    if (y % 32 < 4) return {60 + 20 * n, 60 + 20 * n, 66 + 20 * n};
    const bool gap = x % 16 == 0;
    return gap ? Rgb{40, 24, 12} : Rgb{120 + 30 * n, 76 + 20 * n, 36 + 12 * n};
}

uint8_t nearest(const Palette& pal, Rgb c) {
    int best = 0;
    float bestd = 1e30f;
    for (int i = 0; i < 224; ++i) {  // 224-255 are fullbright in Quake
        const float dr = pal[size_t(i) * 3] - c.r, dg = pal[size_t(i) * 3 + 1] - c.g, db = pal[size_t(i) * 3 + 2] - c.b;
        const float d = dr * dr * 0.3f + dg * dg * 0.59f + db * db * 0.11f;
        if (d < bestd) bestd = d, best = i;
    }
    return uint8_t(best);
}

Bytes miptex_lump(const std::vector<std::string>& names) {
    constexpr int W = 64;
    const Palette& pal = quake_palette();
    Bytes out;
    append<int32_t>(out, int32_t(names.size()), ByteOrder::little);
    const size_t dir = out.size();
    out.resize(out.size() + 4 * names.size());
    for (size_t i = 0; i < names.size(); ++i) {
        const uint32_t ofs = uint32_t(out.size());
        std::memcpy(out.data() + dir + 4 * i, &ofs, 4);
        miptex_t mt{};
        std::strncpy(mt.name, names[i].c_str(), sizeof mt.name - 1);
        mt.width = mt.height = W;
        uint32_t at = sizeof(miptex_t);
        for (int m = 0; m < 4; ++m) {
            mt.offsets[m] = at;
            at += uint32_t((W >> m) * (W >> m));
        }
        const Bytes head = encode_records<miptex_t>(std::span<const miptex_t>(&mt, 1), ByteOrder::little);
        out.insert(out.end(), head.begin(), head.end());
        std::vector<Rgb> full(W * W);
        for (int y = 0; y < W; ++y)
            for (int x = 0; x < W; ++x) full[size_t(y * W + x)] = texel(names[i], x, y);
        for (int m = 0; m < 4; ++m) {
            const int s = W >> m, f = 1 << m;
            for (int y = 0; y < s; ++y)
                for (int x = 0; x < s; ++x) {
                    Rgb sum{0, 0, 0};
                    for (int v = 0; v < f; ++v)
                        for (int u = 0; u < f; ++u) {
                            const Rgb& c = full[size_t((y * f + v) * W + x * f + u)];
                            sum.r += c.r, sum.g += c.g, sum.b += c.b;
                        }
                    const float k = 1.0f / float(f * f);
                    out.push_back(nearest(pal, {sum.r * k, sum.g * k, sum.b * k}));
                }
        }
    }
    return out;
}

// ---------------------------------------------------------------------------
// the compiler

struct Quad {
    int axis;       ///< plane axis
    float dist;     ///< plane coordinate
    int sign;       ///< +1: faces +axis (empty on the + side), -1: faces -axis
    Vec3 mins, maxs;  ///< the rectangle (mins[axis] == maxs[axis] == dist)
    int texture;    ///< miptex index
    int node = -1;  ///< node keeping it (world faces)
    int leaf = -1;  ///< empty leaf it is marked in (world faces)
};

enum Texture { kBricks, kFloor, kCeiling, kDoor };

class Compiler {
public:
    explicit Compiler(const RoomDesign& d) : d_(d) {}

    Bytes run() {
        world_tree();
        world_faces();
        door();
        hulls();
        lighting();
        visibility();
        return write();
    }

private:
    // ---- hull 0 -----------------------------------------------------------
    void world_tree() {
        for (int a = 0; a < 3; ++a)
            for (int i = 0; i <= d_.cells[size_t(a)]; ++i) grid_.lines[size_t(a)].push_back(d_.origin[size_t(a)] + float(i) * d_.cell);
        grid_.solid.resize(size_t(d_.cells[0]) * size_t(d_.cells[1]) * size_t(d_.cells[2]));
        for (int z = 0; z < d_.cells[2]; ++z)
            for (int y = 0; y < d_.cells[1]; ++y)
                for (int x = 0; x < d_.cells[0]; ++x) grid_.solid[grid_.at(x, y, z)] = d_.cell_solid(x, y, z);
        grid_.finish();
        tree_ = KdBuilder(grid_).build();
        if (tree_.root < 0) throw std::logic_error("room map: the design has no empty cell");
        // Leaf numbers in the file: solid leafs share leaf 0, empty ones 1.. in tree order.
        file_leaf_.assign(tree_.leafs.size(), 0);
        for (size_t i = 0; i < tree_.leafs.size(); ++i)
            if (!tree_.leafs[i].solid) {
                file_leaf_[i] = int(empty_leafs_.size()) + 1;
                empty_leafs_.push_back(int(i));
            }
    }

    int leaf_of_cell(int x, int y, int z) const {
        const Vec3 c{grid_.lines[0][size_t(x)] + d_.cell / 2, grid_.lines[1][size_t(y)] + d_.cell / 2,
                     grid_.lines[2][size_t(z)] + d_.cell / 2};
        return find_leaf(tree_, c);
    }

    /// Lowest common ancestor node of two leafs.
    int common_node(int la, int lb) const {
        int a = tree_.leafs[size_t(la)].parent, b = tree_.leafs[size_t(lb)].parent;
        while (a != b) {
            if (tree_.nodes[size_t(a)].depth >= tree_.nodes[size_t(b)].depth)
                a = tree_.nodes[size_t(a)].parent;
            else
                b = tree_.nodes[size_t(b)].parent;
        }
        return a;
    }

    void world_faces() {
        const int n[3] = {d_.cells[0], d_.cells[1], d_.cells[2]};
        for (int a = 0; a < 3; ++a) {
            for (int z = 0; z < n[2]; ++z)
                for (int y = 0; y < n[1]; ++y)
                    for (int x = 0; x < n[0]; ++x) {
                        int c[3] = {x, y, z};
                        if (c[a] + 1 >= n[a]) continue;
                        int o[3] = {x, y, z};
                        ++o[a];
                        const bool s0 = grid_.solid[grid_.at(x, y, z)], s1 = grid_.solid[grid_.at(o[0], o[1], o[2])];
                        if (s0 == s1) continue;
                        Quad q{};
                        q.axis = a;
                        q.dist = grid_.lines[size_t(a)][size_t(o[a])];
                        q.sign = s0 ? 1 : -1;  // faces the empty cell
                        for (int k = 0; k < 3; ++k) {
                            q.mins[size_t(k)] = k == a ? q.dist : grid_.lines[size_t(k)][size_t(c[k])];
                            q.maxs[size_t(k)] = k == a ? q.dist : grid_.lines[size_t(k)][size_t(c[k] + 1)];
                        }
                        q.texture = a != 2 ? kBricks : (q.sign > 0 ? kFloor : kCeiling);
                        const int l0 = leaf_of_cell(x, y, z), l1 = leaf_of_cell(o[0], o[1], o[2]);
                        q.leaf = s0 ? l1 : l0;
                        q.node = common_node(l0, l1);
                        const KdNode& kn = tree_.nodes[size_t(q.node)];
                        if (kn.axis != a || kn.dist != q.dist) throw std::logic_error("room map: face off its node plane");
                        quads_.push_back(q);
                    }
        }
        // Faces grouped by node (each node's faces are one run), then the door's.
        std::stable_sort(quads_.begin(), quads_.end(), [](const Quad& x, const Quad& y) { return x.node < y.node; });
        world_faces_ = int(quads_.size());
    }

    // ---- the door: model 1 -----------------------------------------------
    void door() {
        const Box& b = d_.door;
        for (int a = 0; a < 3; ++a)
            for (int sign : {-1, 1}) {
                Quad q{};
                q.axis = a;
                q.sign = sign;
                q.dist = sign > 0 ? b.maxs[size_t(a)] : b.mins[size_t(a)];
                q.mins = b.mins;
                q.maxs = b.maxs;
                q.mins[size_t(a)] = q.maxs[size_t(a)] = q.dist;
                q.texture = kDoor;
                quads_.push_back(q);
            }
    }

    // ---- hulls 1 and 2 ------------------------------------------------------
    void hulls() {
        for (int h = 1; h <= 2; ++h) {
            CellGrid g;
            const Vec3 &mn = kHullMins[h], &mx = kHullMaxs[h];
            for (int a = 0; a < 3; ++a) {
                auto& lines = g.lines[size_t(a)];
                const float lo = grid_.lines[size_t(a)].front(), hi = grid_.lines[size_t(a)].back();
                for (const float c : grid_.lines[size_t(a)])
                    for (const float v : {c - mx[size_t(a)], c - mn[size_t(a)]})
                        if (v >= lo && v <= hi) lines.push_back(v);
                std::sort(lines.begin(), lines.end());
                lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
            }
            g.solid.resize(size_t(g.n(0)) * size_t(g.n(1)) * size_t(g.n(2)));
            for (int z = 0; z < g.n(2); ++z)
                for (int y = 0; y < g.n(1); ++y)
                    for (int x = 0; x < g.n(0); ++x) {
                        const int c[3] = {x, y, z};
                        int lo[3], hi[3];
                        for (int a = 0; a < 3; ++a) {
                            const float p = (g.lines[size_t(a)][size_t(c[a])] + g.lines[size_t(a)][size_t(c[a] + 1)]) / 2;
                            lo[a] = d_.cell_index(p + mn[size_t(a)], a);
                            hi[a] = d_.cell_index(p + mx[size_t(a)], a);  // box overlaps cells lo..hi
                        }
                        bool solid = false;
                        for (int cz = lo[2]; cz <= hi[2] && !solid; ++cz)
                            for (int cy = lo[1]; cy <= hi[1] && !solid; ++cy)
                                for (int cx = lo[0]; cx <= hi[0] && !solid; ++cx)
                                    solid = cx < 0 || cy < 0 || cz < 0 || cx >= d_.cells[0] || cy >= d_.cells[1] ||
                                            cz >= d_.cells[2] || grid_.solid[grid_.at(cx, cy, cz)];
                        g.solid[g.at(x, y, z)] = solid;
                    }
            g.finish();
            const KdTree t = KdBuilder(g).build();
            world_hull_[h] = emit_clip_tree(t);
            // The door expanded by the same box: a chain of six planes.
            Box e = d_.door;
            for (int a = 0; a < 3; ++a) e.mins[size_t(a)] -= mx[size_t(a)], e.maxs[size_t(a)] -= mn[size_t(a)];
            door_hull_[h] = emit_box_chain(e, /*clip=*/true);
        }
    }

    int plane(int axis, float dist) {
        const auto key = std::make_pair(axis, dist);
        const auto it = plane_index_.find(key);
        if (it != plane_index_.end()) return it->second;
        dplane_t p{};
        p.normal[axis] = 1;
        p.dist = dist;
        p.type = axis;
        planes_.push_back(p);
        return plane_index_[key] = int(planes_.size()) - 1;
    }

    /// Writes a kd-tree as clipnodes (preorder); returns its head (a clipnode or a contents value).
    int emit_clip_tree(const KdTree& t) {
        std::function<int(int)> emit = [&](int n) -> int {
            if (n < 0) return t.leafs[size_t(-1 - n)].solid ? CONTENTS_SOLID : CONTENTS_EMPTY;
            const int index = int(clipnodes_.size());
            clipnodes_.push_back({});
            const KdNode& k = t.nodes[size_t(n)];
            const int p = plane(k.axis, k.dist);
            const int front = emit(k.child[0]), back = emit(k.child[1]);
            clipnodes_[size_t(index)] = {p, {int16_t(front), int16_t(back)}};
            return index;
        };
        return emit(t.root);
    }

    /// Six nodes / clipnodes cutting a box out of empty space; returns the head.
    /// For nodes, the outside goes to `outside_leaf` and the inside to leaf 0.
    int emit_box_chain(const Box& b, bool clip, int outside_leaf = 0) {
        const int first = clip ? int(clipnodes_.size()) : int(nodes_.size());
        const int outside = clip ? CONTENTS_EMPTY : -1 - outside_leaf;
        const int inside = clip ? CONTENTS_SOLID : -1;
        for (int k = 0; k < 6; ++k) {
            const int a = k / 2;
            const bool max_side = k & 1;
            const int p = plane(a, max_side ? b.maxs[size_t(a)] : b.mins[size_t(a)]);
            const int next = k == 5 ? inside : first + k + 1;
            // min side: front (>= min) goes on; max side: front (>= max) is outside.
            const int front = max_side ? outside : next, back = max_side ? next : outside;
            if (clip) {
                clipnodes_.push_back({p, {int16_t(front), int16_t(back)}});
            } else {
                dnode_t n{};
                n.planenum = p;
                n.children[0] = int16_t(front);
                n.children[1] = int16_t(back);
                for (int c = 0; c < 3; ++c) n.mins[c] = int16_t(std::floor(b.mins[size_t(c)])), n.maxs[c] = int16_t(std::ceil(b.maxs[size_t(c)]));
                door_node_planes_.push_back({a, k});
                nodes_.push_back(n);
            }
        }
        return first;
    }

    // ---- lighting ---------------------------------------------------------
    static std::array<int, 2> tex_axes(int axis) {
        // qbsp's TextureAxisFromPlane: floors/ceilings s=x t=-y; x walls s=y t=-z; y walls s=x t=-z.
        return axis == 2 ? std::array<int, 2>{0, 1} : axis == 0 ? std::array<int, 2>{1, 2} : std::array<int, 2>{0, 2};
    }

    struct Lightmap {
        int smin, tmin, w, h;
    };
    static Lightmap luxels(const Quad& q) {
        const auto ax = tex_axes(q.axis);
        // s = +coord(ax[0]); t = -coord(ax[1])
        const float s0 = q.mins[size_t(ax[0])], s1 = q.maxs[size_t(ax[0])];
        const float t0 = -q.maxs[size_t(ax[1])], t1 = -q.mins[size_t(ax[1])];
        Lightmap m{};
        m.smin = int(std::floor(s0 / 16));
        m.tmin = int(std::floor(t0 / 16));
        m.w = int(std::ceil(s1 / 16)) - m.smin + 1;
        m.h = int(std::ceil(t1 / 16)) - m.tmin + 1;
        return m;
    }

    void lighting() {
        for (const Quad& q : quads_) {
            const Lightmap m = luxels(q);
            const auto ax = tex_axes(q.axis);
            lightofs_.push_back(int32_t(lighting_.size()));
            for (int t = 0; t < m.h; ++t)
                for (int s = 0; s < m.w; ++s) {
                    Vec3 p{};
                    // Luxel centre on the face, kept 1 unit inside its rectangle and 1 unit off the wall.
                    p[size_t(ax[0])] = std::clamp(float((m.smin + s) * 16), q.mins[size_t(ax[0])] + 1, q.maxs[size_t(ax[0])] - 1);
                    p[size_t(ax[1])] = std::clamp(-float((m.tmin + t) * 16), q.mins[size_t(ax[1])] + 1, q.maxs[size_t(ax[1])] - 1);
                    p[size_t(q.axis)] = q.dist + float(q.sign);
                    lighting_.push_back(light_at(p, q));
                }
        }
    }

    uint8_t light_at(const Vec3& p, const Quad& q) const {
        float total = d_.min_light;
        for (const PointLight& l : d_.lights) {
            Vec3 v{l.origin[0] - p[0], l.origin[1] - p[1], l.origin[2] - p[2]};
            const float dist = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            if (dist >= l.light || dist <= 0) continue;
            const float cosine = v[size_t(q.axis)] * float(q.sign) / dist;
            if (cosine <= 0) continue;
            if (!line_clear(tree_, tree_.root, p, l.origin)) continue;
            total += (l.light - dist) * (0.5f + 0.5f * cosine);  // light.exe's angle scale 0.5
        }
        return uint8_t(std::clamp(std::lround(total), 0l, 255l));
    }

    // ---- visibility -------------------------------------------------------
    void visibility() {
        const size_t n = empty_leafs_.size();
        const auto box = [&](size_t i, int a, bool hi) {
            const KdLeaf& l = tree_.leafs[size_t(empty_leafs_[i])];
            return grid_.lines[size_t(a)][size_t(hi ? l.hi[size_t(a)] : l.lo[size_t(a)])];
        };
        // Portals: rectangles shared by two empty leafs.
        struct Portal {
            size_t a, b;
            Box rect;
        };
        std::vector<Portal> portals;
        std::vector<std::vector<size_t>> neighbours(n);
        for (size_t i = 0; i < n; ++i)
            for (size_t j = i + 1; j < n; ++j)
                for (int a = 0; a < 3; ++a) {
                    float plane_at;
                    if (box(i, a, true) == box(j, a, false)) plane_at = box(i, a, true);
                    else if (box(j, a, true) == box(i, a, false)) plane_at = box(j, a, true);
                    else continue;
                    Box r{};
                    bool overlap = true;
                    for (int k = 0; k < 3; ++k) {
                        if (k == a) {
                            r.mins[size_t(k)] = r.maxs[size_t(k)] = plane_at;
                            continue;
                        }
                        r.mins[size_t(k)] = std::max(box(i, k, false), box(j, k, false));
                        r.maxs[size_t(k)] = std::min(box(i, k, true), box(j, k, true));
                        overlap = overlap && r.maxs[size_t(k)] > r.mins[size_t(k)];
                    }
                    if (!overlap) continue;
                    portals.push_back({i, j, r});
                    neighbours[i].push_back(j);
                    neighbours[j].push_back(i);
                }
        // Sample points of each leaf's portals (every 16 units, 1 unit in from the edges).
        std::vector<std::vector<Vec3>> samples(n);
        for (const Portal& p : portals) {
            int a = 0;
            while (p.rect.mins[size_t(a)] != p.rect.maxs[size_t(a)]) ++a;
            const int u = (a + 1) % 3, v = (a + 2) % 3;
            const auto steps = [](float lo, float hi) {
                std::vector<float> out;
                for (float x = lo + 1; x < hi - 1; x += 16) out.push_back(x);
                out.push_back(hi - 1);
                return out;
            };
            for (const float su : steps(p.rect.mins[size_t(u)], p.rect.maxs[size_t(u)]))
                for (const float sv : steps(p.rect.mins[size_t(v)], p.rect.maxs[size_t(v)])) {
                    Vec3 pt{};
                    pt[size_t(a)] = p.rect.mins[size_t(a)];
                    pt[size_t(u)] = su;
                    pt[size_t(v)] = sv;
                    samples[p.a].push_back(pt);
                    samples[p.b].push_back(pt);
                }
        }
        std::vector<std::vector<uint8_t>> sees(n, std::vector<uint8_t>(n, 0));
        for (size_t i = 0; i < n; ++i) {
            sees[i][i] = 1;
            for (size_t j : neighbours[i]) sees[i][j] = 1;
            for (size_t j = i + 1; j < n; ++j) {
                if (sees[i][j]) continue;
                bool seen = false;
                for (size_t x = 0; x < samples[i].size() && !seen; ++x)
                    for (size_t y = 0; y < samples[j].size() && !seen; ++y)
                        seen = line_clear(tree_, tree_.root, samples[i][x], samples[j][y]);
                sees[i][j] = sees[j][i] = seen;
            }
        }
        // Margin: whatever shares a portal with a leaf seen is seen too.
        std::vector<std::vector<uint8_t>> pvs = sees;
        for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < n; ++j)
                if (sees[i][j])
                    for (size_t k : neighbours[j]) pvs[i][k] = pvs[k][i] = 1;
        const size_t row_bytes = (n + 7) / 8;
        for (size_t i = 0; i < n; ++i) {
            Bytes row(row_bytes, 0);
            for (size_t j = 0; j < n; ++j)
                if (pvs[i][j]) row[j >> 3] |= uint8_t(1u << (j & 7));
            visofs_.push_back(int32_t(visibility_.size()));
            for (size_t k = 0; k < row.size(); ++k) {  // Quake's zero-run compression
                visibility_.push_back(row[k]);
                if (row[k]) continue;
                uint8_t run = 1;
                while (k + 1 < row.size() && row[k + 1] == 0 && run < 255) ++k, ++run;
                visibility_.push_back(run);
            }
        }
    }

    // ---- records ----------------------------------------------------------
    Bytes write() {
        // Nodes: the world tree in preorder (kd node i becomes node i), then the door's chain.
        for (const KdNode& k : tree_.nodes) {
            dnode_t n{};
            n.planenum = plane(k.axis, k.dist);
            for (int c = 0; c < 2; ++c)
                n.children[c] = int16_t(k.child[c] >= 0 ? k.child[c] : -1 - file_leaf_[size_t(-1 - k.child[c])]);
            for (int a = 0; a < 3; ++a) {
                n.mins[a] = int16_t(grid_.lines[size_t(a)][size_t(k.lo[size_t(a)])]);
                n.maxs[a] = int16_t(grid_.lines[size_t(a)][size_t(k.hi[size_t(a)])]);
            }
            nodes_.push_back(n);
        }
        const int door_leaf = int(empty_leafs_.size()) + 1;
        const int door_head = emit_box_chain(d_.door, /*clip=*/false, door_leaf);

        // Texinfo: one per (texture, plane axis).
        std::map<std::pair<int, int>, int> texinfo_index;
        std::vector<texinfo_t> texinfo;
        const auto texinfo_of = [&](const Quad& q) {
            const auto key = std::make_pair(q.texture, q.axis);
            if (const auto it = texinfo_index.find(key); it != texinfo_index.end()) return it->second;
            texinfo_t ti{};
            const auto ax = tex_axes(q.axis);
            ti.vecs[0][ax[0]] = 1;
            ti.vecs[1][ax[1]] = -1;
            ti.miptex = q.texture;
            texinfo.push_back(ti);
            return texinfo_index[key] = int(texinfo.size()) - 1;
        };

        // Faces, edges (shared, walked backwards by the second face), vertexes.
        std::vector<dvertex_t> vertexes;
        std::map<std::array<float, 3>, uint16_t> vertex_index;
        std::vector<dedge_t> edges(1);  // edge 0 is never used
        std::map<std::pair<uint16_t, uint16_t>, int> edge_index;
        std::vector<dsurfedge_t> surfedges;
        std::vector<dface_t> faces;
        const auto vertex = [&](const Vec3& p) {
            if (const auto it = vertex_index.find(p); it != vertex_index.end()) return it->second;
            vertexes.push_back({{p[0], p[1], p[2]}});
            return vertex_index[p] = uint16_t(vertexes.size() - 1);
        };
        for (size_t i = 0; i < quads_.size(); ++i) {
            const Quad& q = quads_[i];
            dface_t f{};
            f.planenum = int16_t(plane(q.axis, q.dist));
            f.side = q.sign > 0 ? 0 : 1;
            f.firstedge = int32_t(surfedges.size());
            f.numedges = 4;
            f.texinfo = int16_t(texinfo_of(q));
            f.styles[0] = 0;
            f.styles[1] = f.styles[2] = f.styles[3] = 255;
            f.lightofs = lightofs_[i];
            // Corners clockwise seen from the front (the side the normal points to).
            const int u = (q.axis + 1) % 3, v = (q.axis + 2) % 3;
            const int uv_ccw[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
            std::array<uint16_t, 4> loop{};
            for (int k = 0; k < 4; ++k) {
                const int* c = uv_ccw[q.sign > 0 ? (4 - k) % 4 : k];
                Vec3 p = q.mins;
                p[size_t(u)] = c[0] ? q.maxs[size_t(u)] : q.mins[size_t(u)];
                p[size_t(v)] = c[1] ? q.maxs[size_t(v)] : q.mins[size_t(v)];
                loop[size_t(k)] = vertex(p);
            }
            for (int k = 0; k < 4; ++k) {
                const uint16_t a = loop[size_t(k)], b = loop[size_t((k + 1) % 4)];
                if (const auto it = edge_index.find({b, a}); it != edge_index.end()) {
                    surfedges.push_back({-it->second});
                } else {
                    edges.push_back({{a, b}});
                    edge_index[{a, b}] = int(edges.size()) - 1;
                    surfedges.push_back({int(edges.size()) - 1});
                }
            }
            faces.push_back(f);
        }
        for (size_t i = 0; i < tree_.nodes.size(); ++i) {
            const auto first = std::find_if(quads_.begin(), quads_.begin() + world_faces_, [&](const Quad& q) { return q.node == int(i); });
            const auto count = std::count_if(quads_.begin(), quads_.begin() + world_faces_, [&](const Quad& q) { return q.node == int(i); });
            nodes_[i].firstface = uint16_t(first - quads_.begin());
            nodes_[i].numfaces = uint16_t(count);
        }
        for (size_t k = 0; k < 6; ++k) {  // the door's nodes keep its face on their plane
            nodes_[size_t(door_head) + k].firstface = uint16_t(world_faces_ + door_node_planes_[k].second);
            nodes_[size_t(door_head) + k].numfaces = 1;
        }

        // Leafs and marksurfaces.
        std::vector<dleaf_t> leafs(1);
        leafs[0].contents = CONTENTS_SOLID;
        leafs[0].visofs = -1;
        std::vector<dmarksurface_t> marks;
        for (size_t e = 0; e < empty_leafs_.size(); ++e) {
            const KdLeaf& kl = tree_.leafs[size_t(empty_leafs_[e])];
            dleaf_t l{};
            l.contents = CONTENTS_EMPTY;
            l.visofs = visofs_[e];
            for (int a = 0; a < 3; ++a) {
                l.mins[a] = int16_t(grid_.lines[size_t(a)][size_t(kl.lo[size_t(a)])]);
                l.maxs[a] = int16_t(grid_.lines[size_t(a)][size_t(kl.hi[size_t(a)])]);
            }
            l.firstmarksurface = uint16_t(marks.size());
            for (int i = 0; i < world_faces_; ++i)
                if (quads_[size_t(i)].leaf == empty_leafs_[e]) marks.push_back({uint16_t(i)});
            l.nummarksurfaces = uint16_t(marks.size() - l.firstmarksurface);
            leafs.push_back(l);
        }
        dleaf_t outside{};  // the door's empty outside
        outside.contents = CONTENTS_EMPTY;
        outside.visofs = -1;
        leafs.push_back(outside);

        // Models: the world and the door.
        std::vector<dmodel_t> models(2);
        for (int a = 0; a < 3; ++a) {
            models[0].mins[a] = grid_.lines[size_t(a)][1];
            models[0].maxs[a] = grid_.lines[size_t(a)][grid_.lines[size_t(a)].size() - 2];
            models[1].mins[a] = d_.door.mins[size_t(a)];
            models[1].maxs[a] = d_.door.maxs[size_t(a)];
        }
        models[0].headnode[0] = 0;
        models[0].headnode[1] = world_hull_[1];
        models[0].headnode[2] = world_hull_[2];
        models[0].visleafs = int32_t(empty_leafs_.size());
        models[0].firstface = 0;
        models[0].numfaces = world_faces_;
        models[1].headnode[0] = door_head;
        models[1].headnode[1] = door_hull_[1];
        models[1].headnode[2] = door_hull_[2];
        models[1].firstface = world_faces_;
        models[1].numfaces = 6;

        const FormatLayout& layout = layouts::quake1();
        std::vector<Bytes> lumps(layout.lumps.size());
        const auto put = [&](std::string_view name, Bytes b) { lumps.at(*layout.find_lump(name)) = std::move(b); };
        const auto enc = [](const auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            return encode_records<T>(std::span<const T>(v), ByteOrder::little);
        };
        put("entities", entities());
        put("planes", enc(planes_));
        put("textures", miptex_lump({"bricks", "floor", "ceiling", "door"}));
        put("vertexes", enc(vertexes));
        put("visibility", visibility_);
        put("nodes", enc(nodes_));
        put("texinfo", enc(texinfo));
        put("faces", enc(faces));
        put("lighting", lighting_);
        put("clipnodes", enc(clipnodes_));
        put("leafs", enc(leafs));
        put("marksurfaces", enc(marks));
        put("edges", enc(edges));
        put("surfedges", enc(surfedges));
        put("models", enc(models));
        return build(layout, 29, lumps);
    }

    Bytes entities() const {
        const auto vec = [](const Vec3& v) {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%g %g %g", double(v[0]), double(v[1]), double(v[2]));
            return std::string(buf);
        };
        std::string s = "{\n\"classname\" \"worldspawn\"\n\"message\" \"bspkit demo: three rooms and a door\"\n"
                        "\"worldtype\" \"0\"\n}\n";
        s += "{\n\"classname\" \"info_player_start\"\n\"origin\" \"" + vec(d_.player_start) + "\"\n\"angle\" \"0\"\n}\n";
        for (const PointLight& l : d_.lights)
            s += "{\n\"classname\" \"light\"\n\"origin\" \"" + vec(l.origin) + "\"\n\"light\" \"" +
                 std::to_string(int(l.light)) + "\"\n}\n";
        s += "{\n\"classname\" \"func_door\"\n\"model\" \"*1\"\n\"angle\" \"-1\"\n\"speed\" \"100\"\n\"wait\" \"3\"\n}\n";
        Bytes out(s.begin(), s.end());
        out.push_back(0);
        return out;
    }

    const RoomDesign& d_;
    CellGrid grid_;
    KdTree tree_;
    std::vector<int> file_leaf_, empty_leafs_;
    std::vector<Quad> quads_;
    int world_faces_ = 0;
    std::vector<dplane_t> planes_;
    std::map<std::pair<int, float>, int> plane_index_;
    std::vector<dnode_t> nodes_;
    std::vector<dclipnode_t> clipnodes_;
    std::vector<std::pair<int, int>> door_node_planes_;  ///< (axis, k) of each door node
    int world_hull_[3] = {0, 0, 0}, door_hull_[3] = {0, 0, 0};
    std::vector<int32_t> lightofs_;
    Bytes lighting_, visibility_;
    std::vector<int32_t> visofs_;
};

}  // namespace

Bytes compile_room_map(const RoomDesign& design) { return Compiler(design).run(); }

}  // namespace bspkit::samples
