// query::World's private state, shared by world.cpp and trace.cpp.
#pragma once

#include "query/bvh.hpp"
#include "query/collision.hpp"

#include <algorithm>
#include <array>
#include <mutex>

namespace bspkit::query {

inline constexpr int32_t quake1_contents_solid = -2, quake1_contents_empty = -1;

/// A brush's bounds (from its axial sides; +-inf on an axis without them),
/// to reject it with one slab test, and where its side planes are copied in
/// order, all of them (boxes) and without bevels (points). Built while packing;
/// what the traces and point queries read is its copy in a BrushHead.
struct PackedBrush {
    float lo[3], hi[3];
    uint32_t first_all = 0, num_all = 0;      ///< into World::Impl::sides_all
    uint32_t first_point = 0, num_point = 0;  ///< into World::Impl::sides_point
    int32_t contents = 0;
    uint32_t mask_bits = 0;  ///< what a trace's mask is tested against (Collision::mask_bits_of)
};
struct PackedSide {
    float n[3];
    float d;
    uint32_t surface;
};
/// Four consecutive sides of a brush, each coordinate side by side, for one
/// SIMD step of the clip. A brush's last block is filled up with sides no
/// segment is in front of (normal 0, distance FLT_MAX: every point is far
/// behind them), which change nothing.
struct alignas(16) SideBlock {
    float nx[4], ny[4], nz[4], d[4];
};

/// A brush as the traces clip it: the head of its run of BrushUnits (below).
struct BrushHead {
    float lo[3], hi[3];  ///< PackedBrush::lo / hi
    uint32_t brush;      ///< index in Collision::brushes
    int32_t contents;
    uint32_t mask_bits;
    uint32_t num_point, num_all;      ///< sides (PackedBrush)
    uint32_t first_point, first_all;  ///< into World::Impl::sides_point / sides_all (the plane reported)
    uint32_t all_blocks;  ///< SSE2: units from the head to the first block of all sides (1 + point blocks)
    uint32_t units;       ///< units in the run: the next brush's head follows it
};
/// One 64-byte unit of World::Impl::brush_units: a brush is its head, then
/// (SSE2 builds) the blocks of its point sides, then those of all its sides.
/// The world's brushes lie in the order of the BVH's leaves, whose refs are
/// their heads: a leaf, its brush and its planes are one dependent load apart
/// (and neighbours in memory), where the leaf's item, the brush's PackedBrush
/// and its blocks took three.
union alignas(64) BrushUnit {
    BrushHead head;
    SideBlock block;
};
static_assert(sizeof(BrushUnit) == 64);

inline float axis(Vec3 v, int i) noexcept { return i == 0 ? v.x : i == 1 ? v.y : v.z; }

/// A tree node with its plane, as the point descents and the Quake 1 hull
/// traces read it: one load per level instead of a node and then its plane.
/// Children are packed indices (leaves stay ~leaf, as in detail::Node).
struct alignas(32) HullNode {
    float n[3];
    float d;
    int32_t child[2];
    int32_t type;   ///< detail::Plane::type
    int32_t plane;  ///< the plane's index in Collision::planes
};
static_assert(sizeof(HullNode) == 32);

/// A detail::Tree's nodes copied into HullNode records in depth-first order
/// from the heads of the models (a node, then its front subtree, then its
/// back one), so a walk down the front side often stays on one cache line.
/// Nodes no head reaches are left out.
struct PackedTree {
    std::vector<HullNode> nodes;
    std::vector<int32_t> index;  ///< detail::Tree node -> packed node (-1: unreachable)
    /// Per hull (models' root[h]): no trace through it with finite distances
    /// (within finite_radius) can take more steps than the trace budget
    /// (step_budget): its walks need not count them.
    std::array<bool, 4> bounded{};
    /// Segments whose coordinates are all below this in magnitude give
    /// finite distances to every plane at every point a walk computes.
    float finite_radius = 0;
    /// A head node (or ~leaf) of the detail::Tree in packed numbering.
    int32_t root(int32_t r) const noexcept { return r >= 0 ? index[size_t(r)] : r; }
};

/// Trace steps allowed over a tree: a real tree visits each node once, so a
/// budget far above the tree's size only stops hostile shared subtrees.
inline uint64_t step_budget(const detail::Tree& t) {
    return std::max<uint64_t>(uint64_t(1) << 16, 8 * (t.nodes.size() + t.leafs.size()));
}

/// Distance of `x` to a node's plane, exactly as detail::Plane's type says.
inline float node_dist(const HullNode& n, const float x[3]) noexcept {
    return n.type < 3 ? x[n.type] - n.d : n.n[0] * x[0] + n.n[1] * x[1] + n.n[2] * x[2] - n.d;
}

/// node_dist() without the branch on the plane's type: a dot product for every
/// node. An axial node's normal is its axis exactly (detail::plane_type()
/// gives no other plane a type below 3), so for a finite point x * 1 + y * 0
/// + z * 0 - d is x - d (the sums with zero are exact; at most a zero's sign
/// differs, which no test or division of the walks tells apart). The same
/// expression as node_dist()'s for the other nodes.
inline float node_dot(const HullNode& n, const float x[3]) noexcept {
    return n.n[0] * x[0] + n.n[1] * x[1] + n.n[2] * x[2] - n.d;
}

struct World::Impl {
    detail::Collision c;
    /// Per model, over its Model::triangles (left empty for a model traces never meet).
    std::vector<detail::Bvh> triangle_bvh;
    std::vector<uint32_t> triangle_models;  ///< the models > 0 whose triangle_bvh is not empty
    std::vector<PackedSide> sides_all, sides_point;
    /// Every brush as a run of units (BrushUnit): the world's bounded ones in
    /// the BVH's leaf order, then the others by index.
    std::vector<BrushUnit> brush_units;
    std::vector<uint32_t> brush_head;  ///< Collision::brushes index -> its head in brush_units
    /// The world's brushes (those in the leaves under model 0's head node):
    /// the bounded ones in a BVH, the rest (no axial sides) clipped every time.
    /// The BVH's leaf refs are heads in brush_units (its items are dropped).
    detail::Bvh world_brush_bvh;
    std::vector<uint32_t> world_unbounded;  ///< heads in brush_units
    /// The solid brush models (> 0) a trace with `models` may reach, found
    /// without testing each: those whose bounds at their origin (Model::lo,
    /// hi + origin) are finite and within kModelBvhRange, in a BVH with each
    /// box grown by kModelBvhSlack, and the others (model_unbounded). A trace
    /// takes from them a superset of what its own test (model_cull.hpp) lets
    /// through, tests those exactly as before and runs them in index order,
    /// so its result is the one a test of every model gives.
    detail::Bvh model_bvh;
    std::vector<uint32_t> model_unbounded;
    static constexpr float kModelBvhRange = 1 << 20;
    /// Beyond the traces' own unit of slack: the BVH's float rounding
    /// (coordinates under 2^21, so well under a unit each way) stays inside it.
    static constexpr float kModelBvhSlack = 8;
    /// Quake 1 family, per model and hull (hull_solids()): a box (in the hull's space, before
    /// the model's origin) holding every point within 2^21 units that the
    /// model's tree sends to a solid leaf. The planes on the way narrow it:
    /// axial ones exactly, others along the axes their normals lean to, a
    /// unit wider (world.cpp narrow_by_plane()); so it may be larger, never
    /// smaller. Empty (lo > hi) when no solid leaf is reached; infinite for
    /// hulls traces do not walk and past a budget (shared subtrees). A model
    /// trace whose segment stays clear of it cannot end in, start in or be
    /// all in solid, so the model cannot change the trace's result
    /// (World::trace skips its walk: model_cull.hpp clear_of_solid()).
    /// Worked out at the first such trace: nothing else reads them.
    const std::vector<std::array<detail::Aabb, 4>>& hull_solids() const {
        std::call_once(hull_solid_once_, [this] { bound_hull_solids(); });
        return hull_solid_;
    }
    /// Quake 1 family: the Collision::trees / packed index a hull walks (hull 0
    /// the nodes, hulls 1-3 the clipnodes).
    static constexpr size_t hull_tree(int hull) noexcept { return hull == 0 ? 0 : 1; }
    /// Collision::trees[0] and [1] packed (trees[1]: Quake 1 clipnodes).
    std::array<PackedTree, 2> packed;

    /// Packs every tree (after validation: children in range, no cycles).
    void pack_trees();

    void build_triangle_bvh();
    /// Packs the brush families' brushes and builds the world's brush BVH.
    void pack_brushes();
    /// model_bvh and model_unbounded, once the models' bounds, origins and
    /// solidity are known (after place_models() and pack_brushes()).
    void build_model_bvh();
    /// hull_solid_ (hull_solids() calls it once).
    void bound_hull_solids() const;
    mutable std::vector<std::array<detail::Aabb, 4>> hull_solid_;
    mutable std::once_flag hull_solid_once_;
    /// Leaf index (~child) under `root`; root < 0 is already a leaf.
    int32_t point_leaf(const PackedTree& t, int32_t root, Vec3 p) const noexcept {
        const float x[3] = {p.x, p.y, p.z};
        const HullNode* nodes = t.nodes.data();
        int32_t num = t.root(root);
        while (num >= 0) {
            const HullNode& n = nodes[num];
            // A branch, not n.child[dist < 0]: the next node's load then starts
            // on the predicted side instead of waiting for the distance (the
            // select measured half as fast: 5.6 against 10.8 M/s on GoldSrc).
            if (node_dist(n, x) < 0) num = n.child[1];
            else num = n.child[0];
        }
        return ~num;
    }
    /// What `point`, found in world leaf `l`, is in: the leaf's contents, or
    /// those of the leaf's brushes holding it where the family says so.
    Contents contents_in(const detail::Leaf& l, Vec3 point) const;
    /// Throws Error when Quake 1 hull `hull` is out of range or not in the file.
    void require_hull(int hull) const;
    /// Quake 1 family: the hull a trace with `o` walks, o.hull or the one the
    /// engine picks for o's box (SV_HullForEntity); require_hull()'s errors.
    int trace_hull(const TraceOptions& o) const;
};

}  // namespace bspkit::query
