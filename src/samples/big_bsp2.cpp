// Big Quake BSP2 maps (see big_bsp2.hpp for the design).
//
// Limits of the older BSP29 format that the largest maps of the curve pass
// (id's bspfile.h and the record fields; QuakeSpasm-family engines' loaders):
//   - vertexes > 65,535: dedge_t stores its two vertex indices as uint16
//     (MAX_MAP_VERTS 65535); BSP2's bsp2_dedge_t stores uint32.
//   - faces > 65,535: dnode_t firstface / numfaces and dmarksurface_t are
//     uint16 (MAX_MAP_FACES 65535; QuakeSpasm warns past 32,767 faces).
//   - marksurfaces > 65,535: dleaf_t firstmarksurface / nummarksurfaces are
//     uint16 (MAX_MAP_MARKSURFACES 65535).
//   - nodes > 32,767 and > 65,535: dnode_t children are int16, negative for
//     leafs (MAX_MAP_NODES 32767); the engines' unsigned reading of them
//     (FitzQuake's "nodes > 32k" hack) stops at 65,535 minus the leafs.
//   - clipnodes > 32,767 and > 65,535: dclipnode_t children are int16, with
//     -1 .. -15 taken by contents (MAX_MAP_CLIPNODES 32767; the same unsigned
//     hack in enhanced engines stops below 65,520).
//   - leafs > 32,767 and > 65,535: a node child -(leaf + 1) must fit int16;
//     QuakeSpasm refuses BSP29 maps with more than 32,767 leafs (Host_Error
//     "leafs exceeds limit of 32767"), id's MAX_MAP_LEAFS was 8,192.
//   - edges > 256,000 and surfedges > 512,000 (MAX_MAP_EDGES, MAX_MAP_SURFEDGES
//     of bspfile.h; BSP2 engines allocate by the lump size).
//   - world extent past 32,767 units from a grid of 512 cells (168 MB) on:
//     BSP29 and 2PSB store node and leaf bounds as int16; BSP2 stores floats.
// BSP2's own fields are int32 / uint32, and its loaders (QuakeSpasm's
// Mod_Load*_L2) check no counts: what bounds a BSP2 map is the int32 lump
// offsets and lengths of the header (2 GiB), far past these maps. Limits not
// pushed here: planes (about 8 per cell row, far below BSP29's int16 face
// planenum), texinfo (3), textures (2), lighting and entity bytes.
#include "big_bsp2.hpp"

#include "samples.hpp"

#include <bspkit/format.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/records.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace bspkit::samples {
namespace {

using namespace quake1;

constexpr float C = kBigBsp2Cell;
constexpr float kTop = 128;                          // top of the leaf / node bounds (floors reach 56)
constexpr float kHullBottom = 24;                    // both hulls' boxes reach 24 below their centre
constexpr float kHullHalfWidth[3] = {0, 16, 32};     // hull 1 (player), hull 2 (shambler)
constexpr float kSolid = std::numeric_limits<float>::infinity();

uint32_t mix(uint32_t x) {
    x ^= x >> 16, x *= 0x7feb352du, x ^= x >> 15, x *= 0x846ca68bu, x ^= x >> 16;
    return x;
}

/// Floor level 0..7 (x 8 units): two triangle waves (hills 36 and 28 cells
/// across) plus one step of noise. Integer-only, so every build agrees.
int level(int x, int y) {
    const int a = x % 36, b = y % 28;
    const int ta = a < 18 ? a : 36 - a, tb = b < 14 ? b : 28 - b;
    return (ta + tb) * 6 / 32 + int(mix(uint32_t(x) * 0x9e3779b1u ^ uint32_t(y) * 0x85ebca77u) & 1);
}

/// One axis-aligned rectangle face (as in room_map.cpp's compiler).
struct Quad {
    uint8_t axis;     ///< of its plane
    int8_t sign;      ///< +1: faces +axis, -1: faces -axis
    float dist;       ///< plane coordinate
    float mins[3], maxs[3];
    int32_t cell;     ///< the cell whose leaf it faces
};

template <class T>
Bytes enc(const std::vector<T>& v) {
    return encode_records<T>(std::span<const T>(v), ByteOrder::little);
}

/// Splits cells [lo, hi) of the longer side; returns {axis, mid}. Shared by the
/// builder and big_bsp2_leaf_of_cell so both number leafs alike.
std::pair<int, int> split(int x0, int x1, int y0, int y1) {
    if (x1 - x0 >= y1 - y0) return {0, (x0 + x1) / 2};
    return {1, (y0 + y1) / 2};
}

class Builder {
public:
    explicit Builder(int g) : g_(g), leaf_of_cell_(size_t(g) * size_t(g), -1) {
        levels_.resize(size_t(g) * size_t(g));
        for (int y = 0; y < g; ++y)
            for (int x = 0; x < g; ++x) levels_[cell(x, y)] = uint8_t(level(x, y));
    }

    BigBsp2 run() {
        leafs_.push_back(solid_leaf());
        world_tree();
        for (int h = 1; h <= 2; ++h) hull_root_[h] = clip_tree(h, 0, g_, 0, g_);
        return write();
    }

private:
    size_t cell(int x, int y) const { return size_t(y) * size_t(g_) + size_t(x); }
    float floor_at(int x, int y) const {
        if (x < 0 || y < 0 || x >= g_ || y >= g_) return kSolid;
        return float(levels_[cell(x, y)]) * 8;
    }

    int32_t plane(int axis, float dist) {
        const uint64_t key = (uint64_t(axis) << 32) | std::bit_cast<uint32_t>(dist);
        if (const auto it = plane_index_.find(key); it != plane_index_.end()) return it->second;
        dplane_t p{};
        p.normal[axis] = 1;
        p.dist = dist;
        p.type = axis;
        planes_.push_back(p);
        return plane_index_[key] = int32_t(planes_.size() - 1);
    }

    static bsp2_dleaf_t solid_leaf() {
        bsp2_dleaf_t l{};
        l.contents = CONTENTS_SOLID;
        l.visofs = -1;
        return l;
    }

    // ---- hull 0 ----------------------------------------------------------

    void world_tree() {
        // Four border nodes: outside 0 .. W on x and y goes to the solid leaf 0.
        const float W = float(g_) * C;
        const float planes_at[4][2] = {{0, 0}, {0, W}, {1, 0}, {1, W}};
        for (int k = 0; k < 4; ++k) {
            bsp2_dnode_t n{};
            n.planenum = plane(int(planes_at[k][0]), planes_at[k][1]);
            const bool max_side = k & 1;
            const int32_t next = k + 1;  // the kd-tree's root follows the fourth
            n.children[0] = max_side ? -1 : next;  // front: >= the plane
            n.children[1] = max_side ? next : -1;
            n.maxs[0] = n.maxs[1] = W;
            n.maxs[2] = kTop;
            nodes_.push_back(n);
        }
        node_tree(0, g_, 0, g_);
    }

    /// Emits the subtree of cells [x0, x1) x [y0, y1) in preorder (front first); returns its node.
    int32_t node_tree(int x0, int x1, int y0, int y1) {
        const int32_t index = int32_t(nodes_.size());
        nodes_.emplace_back();
        bsp2_dnode_t n{};
        n.mins[0] = float(x0) * C, n.mins[1] = float(y0) * C, n.mins[2] = 0;
        n.maxs[0] = float(x1) * C, n.maxs[1] = float(y1) * C, n.maxs[2] = kTop;
        n.firstface = uint32_t(quads_.size());
        if (x1 - x0 == 1 && y1 - y0 == 1) {
            // The cell: its floor plane, empty above (its leaf), solid below.
            const float h = floor_at(x0, y0);
            n.planenum = plane(2, h);
            Quad q{2, 1, h, {n.mins[0], n.mins[1], h}, {n.maxs[0], n.maxs[1], h}, int32_t(cell(x0, y0))};
            quads_.push_back(q);
            n.numfaces = 1;
            const int32_t leaf = int32_t(leafs_.size());
            bsp2_dleaf_t l{};
            l.contents = CONTENTS_EMPTY;
            l.visofs = -1;
            std::copy(n.mins, n.mins + 3, l.mins);
            std::copy(n.maxs, n.maxs + 3, l.maxs);
            l.mins[2] = h;
            leafs_.push_back(l);
            leaf_of_cell_[cell(x0, y0)] = leaf;
            n.children[0] = -1 - leaf;
            n.children[1] = -1;  // leaf 0
            nodes_[size_t(index)] = n;
            return index;
        }
        const auto [axis, mid] = split(x0, x1, y0, y1);
        const float dist = float(mid) * C;
        n.planenum = plane(axis, dist);
        // Walls on this plane: between cell mid - 1 and cell mid across it, facing the lower floor.
        const int o0 = axis == 0 ? y0 : x0, o1 = axis == 0 ? y1 : x1;
        for (int o = o0; o < o1; ++o) {
            const int lx = axis == 0 ? mid - 1 : o, ly = axis == 0 ? o : mid - 1;
            const int hx = axis == 0 ? mid : o, hy = axis == 0 ? o : mid;
            const float lo_side = floor_at(lx, ly), hi_side = floor_at(hx, hy);
            if (lo_side == hi_side) continue;
            Quad q{};
            q.axis = uint8_t(axis);
            q.dist = dist;
            q.sign = lo_side > hi_side ? 1 : -1;  // faces the lower floor
            q.cell = int32_t(lo_side > hi_side ? cell(hx, hy) : cell(lx, ly));
            const int other = 1 - axis;
            q.mins[axis] = q.maxs[axis] = dist;
            q.mins[other] = float(o) * C, q.maxs[other] = float(o + 1) * C;
            q.mins[2] = std::min(lo_side, hi_side), q.maxs[2] = std::max(lo_side, hi_side);
            quads_.push_back(q);
        }
        n.numfaces = uint32_t(quads_.size()) - n.firstface;
        if (axis == 0) {
            n.children[0] = node_tree(mid, x1, y0, y1);
            n.children[1] = node_tree(x0, mid, y0, y1);
        } else {
            n.children[0] = node_tree(x0, x1, mid, y1);
            n.children[1] = node_tree(x0, x1, y0, mid);
        }
        nodes_[size_t(index)] = n;
        return index;
    }

    // ---- hulls 1 and 2 ---------------------------------------------------

    int32_t clip_node(int axis, float dist, int32_t front, int32_t back, int32_t at = -1) {
        bsp2_dclipnode_t c{};
        c.planenum = plane(axis, dist);
        c.children[0] = front;
        c.children[1] = back;
        if (at >= 0) {
            clipnodes_[size_t(at)] = c;
            return at;
        }
        clipnodes_.push_back(c);
        return int32_t(clipnodes_.size() - 1);
    }

    int32_t clip_tree(int h, int x0, int x1, int y0, int y1) {
        if (x1 - x0 == 1 && y1 - y0 == 1) return clip_cell(h, x0, y0);
        const int32_t index = int32_t(clipnodes_.size());
        clipnodes_.emplace_back();
        const auto [axis, mid] = split(x0, x1, y0, y1);
        const int32_t front = axis == 0 ? clip_tree(h, mid, x1, y0, y1) : clip_tree(h, x0, x1, mid, y1);
        const int32_t back = axis == 0 ? clip_tree(h, x0, mid, y0, y1) : clip_tree(h, x0, x1, y0, mid);
        return clip_node(axis, float(mid) * C, front, back, index);
    }

    /// Strip boundaries of one cell side for a box of half-width w: where the
    /// box starts or stops overlapping the neighbours.
    static std::vector<float> strips(int c, float w) {
        std::vector<float> b{float(c) * C, float(c) * C + w, float(c + 1) * C - w, float(c + 1) * C};
        b.erase(std::unique(b.begin(), b.end()), b.end());
        return b;
    }

    /// Cells a box of half-width w overlaps when its centre lies in the open strip (a, b).
    static std::pair<int, int> overlapped(float a, float b, float w) {
        const float m = (a + b) / 2;
        return {int(std::floor((m - w) / C)), int(std::ceil((m + w) / C)) - 1};
    }

    int32_t clip_cell(int h, int x, int y) {
        const float w = kHullHalfWidth[h];
        const std::vector<float> bx = strips(x, w), by = strips(y, w);
        // Regions: a balanced tree over the x strips, in each a tree over the y strips.
        const auto region = [&](size_t i, size_t j) -> int32_t {
            const auto [cx0, cx1] = overlapped(bx[i], bx[i + 1], w);
            const auto [cy0, cy1] = overlapped(by[j], by[j + 1], w);
            float top = -kSolid;
            for (int cy = cy0; cy <= cy1; ++cy)
                for (int cx = cx0; cx <= cx1; ++cx) top = std::max(top, floor_at(cx, cy));
            if (top == kSolid) return CONTENTS_SOLID;
            return clip_node(2, top + kHullBottom, CONTENTS_EMPTY, CONTENTS_SOLID);
        };
        const auto tree_y = [&](auto&& self, size_t i, size_t j0, size_t j1) -> int32_t {
            if (j1 - j0 == 1) return region(i, j0);
            const size_t mid = (j0 + j1) / 2;
            const int32_t index = int32_t(clipnodes_.size());
            clipnodes_.emplace_back();
            const int32_t front = self(self, i, mid, j1), back = self(self, i, j0, mid);
            return clip_node(1, by[mid], front, back, index);
        };
        const auto tree_x = [&](auto&& self, size_t i0, size_t i1) -> int32_t {
            if (i1 - i0 == 1) return tree_y(tree_y, i0, 0, by.size() - 1);
            const size_t mid = (i0 + i1) / 2;
            const int32_t index = int32_t(clipnodes_.size());
            clipnodes_.emplace_back();
            const int32_t front = self(self, mid, i1), back = self(self, i0, mid);
            return clip_node(0, bx[mid], front, back, index);
        };
        return tree_x(tree_x, 0, bx.size() - 1);
    }

    // ---- faces, lighting, the file ---------------------------------------

    /// Texture axes as qbsp picks them: floors s = x, t = -y; x walls s = y, t = -z; y walls s = x, t = -z.
    static texinfo_t texinfo_for(int axis) {
        texinfo_t ti{};
        const int s = axis == 0 ? 1 : 0, t = axis == 2 ? 1 : 2;
        ti.vecs[0][s] = 1;
        ti.vecs[1][t] = -1;
        ti.miptex = axis == 2 ? 0 : 1;
        return ti;
    }

    static Bytes miptex_lump() {
        constexpr uint32_t W = 64;
        const char* names[2] = {"bigground", "bigcliff"};
        Bytes out;
        append<int32_t>(out, 2, ByteOrder::little);
        const size_t dir = out.size();
        out.resize(out.size() + 8);
        for (int i = 0; i < 2; ++i) {
            const uint32_t ofs = uint32_t(out.size());
            std::memcpy(out.data() + dir + 4 * size_t(i), &ofs, 4);
            miptex_t mt{};
            std::strncpy(mt.name, names[i], sizeof mt.name - 1);
            mt.width = mt.height = W;
            uint32_t at = sizeof(miptex_t);
            for (int m = 0; m < 4; ++m) mt.offsets[m] = at, at += (W >> m) * (W >> m);
            const Bytes head = encode_records<miptex_t>(std::span<const miptex_t>(&mt, 1), ByteOrder::little);
            out.insert(out.end(), head.begin(), head.end());
            for (int m = 0; m < 4; ++m)
                for (uint32_t y = 0; y < (W >> m); ++y)
                    for (uint32_t x = 0; x < (W >> m); ++x) {
                        // Quake palette: ground in browns (16..31), cliff in greys (0..15).
                        const uint32_t X = x << m, Y = y << m;
                        const uint32_t tile = i == 0 ? ((X / 16 + Y / 16) & 1) * 3 : ((Y / 8) & 1) * 2 + ((X / 32 + Y / 8) & 1);
                        out.push_back(uint8_t((i == 0 ? 18 : 4) + tile + (mix(X * 131 + Y) & 1)));
                    }
        }
        return out;
    }

    BigBsp2 write() {
        const size_t nquads = quads_.size();
        std::vector<texinfo_t> texinfo{texinfo_for(2), texinfo_for(0), texinfo_for(1)};
        const auto texinfo_of = [](int axis) { return axis == 2 ? 0 : axis == 0 ? 1 : 2; };

        std::vector<dvertex_t> vertexes;
        std::vector<int32_t> vertex_id(size_t(g_ + 1) * size_t(g_ + 1) * 8, -1);
        const auto vertex = [&](const float p[3]) {
            const size_t gx = size_t(std::lround(p[0] / C)), gy = size_t(std::lround(p[1] / C));
            const size_t key = (gy * size_t(g_ + 1) + gx) * 8 + size_t(std::lround(p[2] / 8));
            if (vertex_id[key] < 0) {
                vertex_id[key] = int32_t(vertexes.size());
                vertexes.push_back({{p[0], p[1], p[2]}});
            }
            return uint32_t(vertex_id[key]);
        };
        std::vector<bsp2_dedge_t> edges(1);  // edge 0 is never used
        std::unordered_map<uint64_t, int32_t> edge_index;
        edge_index.reserve(nquads * 3);
        std::vector<dsurfedge_t> surfedges;
        surfedges.reserve(nquads * 4);
        std::vector<bsp2_dface_t> faces;
        faces.reserve(nquads);
        Bytes lighting;
        for (const Quad& q : quads_) {
            bsp2_dface_t f{};
            f.planenum = plane(q.axis, q.dist);
            f.side = q.sign > 0 ? 0 : 1;
            f.firstedge = int32_t(surfedges.size());
            f.numedges = 4;
            f.texinfo = texinfo_of(q.axis);
            f.styles[0] = 0;
            f.styles[1] = f.styles[2] = f.styles[3] = 255;
            // Corners clockwise seen from the front (the side the normal points to).
            const int u = (q.axis + 1) % 3, v = (q.axis + 2) % 3;
            const int uv_ccw[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
            std::array<uint32_t, 4> loop{};
            float corners[4][3];
            for (int k = 0; k < 4; ++k) {
                const int* c = uv_ccw[q.sign > 0 ? (4 - k) % 4 : k];
                float* p = corners[k];
                std::copy(q.mins, q.mins + 3, p);
                p[u] = c[0] ? q.maxs[u] : q.mins[u];
                p[v] = c[1] ? q.maxs[v] : q.mins[v];
                loop[size_t(k)] = vertex(p);
            }
            for (int k = 0; k < 4; ++k) {
                const uint32_t a = loop[size_t(k)], b = loop[size_t((k + 1) % 4)];
                if (const auto it = edge_index.find((uint64_t(b) << 32) | a); it != edge_index.end()) {
                    surfedges.push_back({-it->second});
                } else {
                    edges.push_back({{a, b}});
                    edge_index[(uint64_t(a) << 32) | b] = int32_t(edges.size() - 1);
                    surfedges.push_back({int32_t(edges.size() - 1)});
                }
            }
            // The lightmap by the 16-texel luxel rule, lit by a made-up sky light.
            const texinfo_t& ti = texinfo[size_t(f.texinfo)];
            double smin = 1e30, smax = -1e30, tmin = 1e30, tmax = -1e30;
            for (const auto& p : corners) {
                const double s = double(p[0]) * ti.vecs[0][0] + double(p[1]) * ti.vecs[0][1] + double(p[2]) * ti.vecs[0][2];
                const double t = double(p[0]) * ti.vecs[1][0] + double(p[1]) * ti.vecs[1][1] + double(p[2]) * ti.vecs[1][2];
                smin = std::min(smin, s), smax = std::max(smax, s), tmin = std::min(tmin, t), tmax = std::max(tmax, t);
            }
            const int w = int(std::ceil(smax / 16) - std::floor(smin / 16)) + 1;
            const int h = int(std::ceil(tmax / 16) - std::floor(tmin / 16)) + 1;
            f.lightofs = int32_t(lighting.size());
            const int base = q.axis == 2 ? 96 + int(q.dist) * 2 : 56 + (q.sign > 0 ? 24 : 0) + q.axis * 12;
            for (int t = 0; t < h; ++t)
                for (int s = 0; s < w; ++s) lighting.push_back(uint8_t(std::clamp(base + ((s + t) & 1) * 6 - t * 2, 0, 255)));
            faces.push_back(f);
        }

        // Marksurfaces: each face in the leaf it faces, leafs in order.
        std::vector<uint32_t> first(leafs_.size() + 1, 0);
        std::vector<int32_t> face_leaf(nquads);
        for (size_t i = 0; i < nquads; ++i) face_leaf[i] = leaf_of_cell_[size_t(quads_[i].cell)], ++first[size_t(face_leaf[i]) + 1];
        for (size_t l = 1; l < first.size(); ++l) first[l] += first[l - 1];
        std::vector<bsp2_dmarksurface_t> marks(nquads);
        std::vector<uint32_t> fill(first.begin(), first.end() - 1);
        for (size_t i = 0; i < nquads; ++i) marks[fill[size_t(face_leaf[i])]++] = {uint32_t(i)};
        for (size_t l = 0; l < leafs_.size(); ++l) {
            leafs_[l].firstmarksurface = first[l];
            leafs_[l].nummarksurfaces = first[l + 1] - first[l];
        }

        std::vector<dmodel_t> models(1);
        const float W = float(g_) * C;
        models[0].mins[0] = models[0].mins[1] = models[0].mins[2] = 0;
        models[0].maxs[0] = models[0].maxs[1] = W;
        models[0].maxs[2] = kTop;
        models[0].headnode[0] = 0;
        models[0].headnode[1] = hull_root_[1];
        models[0].headnode[2] = hull_root_[2];
        models[0].headnode[3] = 0;  // as qbsp leaves it: Quake has no hull 3
        models[0].visleafs = int32_t(leafs_.size() - 1);
        models[0].firstface = 0;
        models[0].numfaces = int32_t(faces.size());

        const int mid = g_ / 2;
        char origin[96];
        std::snprintf(origin, sizeof origin, "%g %g %g", double((float(mid) + 0.5f) * C), double((float(mid) + 0.5f) * C),
                      double(floor_at(mid, mid) + kBigBsp2PlayerHeight));
        const std::string ents = "{\n\"classname\" \"worldspawn\"\n\"message\" \"bspkit big BSP2: " +
                                 std::to_string(g_) + " x " + std::to_string(g_) +
                                 " cells\"\n\"worldtype\" \"0\"\n}\n{\n\"classname\" \"info_player_start\"\n\"origin\" \"" +
                                 origin + "\"\n\"angle\" \"0\"\n}\n";
        Bytes entities(ents.begin(), ents.end());
        entities.push_back(0);

        const FormatLayout& layout = layouts::bsp2();
        std::vector<Bytes> lumps(layout.lumps.size());
        const auto put = [&](std::string_view name, Bytes b) { lumps.at(*layout.find_lump(name)) = std::move(b); };
        put("entities", std::move(entities));
        put("planes", enc(planes_));
        put("textures", miptex_lump());
        put("vertexes", enc(vertexes));
        put("nodes", enc(nodes_));
        put("texinfo", enc(texinfo));
        put("faces", enc(faces));
        put("lighting", lighting);
        put("clipnodes", enc(clipnodes_));
        put("leafs", enc(leafs_));
        put("marksurfaces", enc(marks));
        put("edges", enc(edges));
        put("surfedges", enc(surfedges));
        put("models", enc(models));

        BigBsp2 out;
        out.grid = g_;
        BigBsp2Counts& n = out.counts;
        n.planes = planes_.size(), n.vertexes = vertexes.size(), n.nodes = nodes_.size(), n.texinfo = texinfo.size();
        n.faces = faces.size(), n.clipnodes = clipnodes_.size(), n.leafs = leafs_.size(), n.marksurfaces = marks.size();
        n.edges = edges.size(), n.surfedges = surfedges.size(), n.models = models.size(), n.textures = 2;
        n.lighting_bytes = lighting.size();
        out.bytes = build(layout, std::nullopt, lumps);
        return out;
    }

    int g_;
    std::vector<uint8_t> levels_;
    std::vector<int32_t> leaf_of_cell_;
    std::vector<dplane_t> planes_;
    std::unordered_map<uint64_t, int32_t> plane_index_;
    std::vector<bsp2_dnode_t> nodes_;
    std::vector<bsp2_dleaf_t> leafs_;
    std::vector<bsp2_dclipnode_t> clipnodes_;
    std::vector<Quad> quads_;
    int32_t hull_root_[3] = {0, 0, 0};
};

}  // namespace

float big_bsp2_floor(int x, int y) { return float(level(x, y)) * 8; }

int32_t big_bsp2_leaf_of_cell(int grid, int x, int y) {
    int x0 = 0, x1 = grid, y0 = 0, y1 = grid;
    int32_t base = 1;
    while (x1 - x0 > 1 || y1 - y0 > 1) {
        const auto [axis, mid] = split(x0, x1, y0, y1);
        // Front (the upper half) is emitted first.
        if (axis == 0) {
            if (x >= mid) x0 = mid;
            else base += (x1 - mid) * (y1 - y0), x1 = mid;
        } else {
            if (y >= mid) y0 = mid;
            else base += (x1 - x0) * (y1 - mid), y1 = mid;
        }
    }
    return base;
}

int big_bsp2_grid_for_mb(double mb) {
    constexpr double kBytesPerCell = 640;  // measured: 174,869,524 bytes for grid 523
    return std::max(2, int(std::lround(std::sqrt(std::max(0.0, mb) * 1e6 / kBytesPerCell))));
}

BigBsp2 big_bsp2(int grid) {
    if (grid < 2 || grid > 4096) throw std::invalid_argument("big_bsp2: grid must be 2 .. 4096 cells a side");
    return Builder(grid).run();
}

}  // namespace bspkit::samples
