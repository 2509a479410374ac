// query::World's private state, shared by world.cpp and trace.cpp.
#pragma once

#include "query/collision.hpp"

namespace bspkit::query {

inline constexpr int32_t quake1_contents_solid = -2, quake1_contents_empty = -1;

/// A bounding volume hierarchy over Collision::triangles (line traces only).
struct BvhNode {
    float lo[3], hi[3];
    uint32_t first;  ///< leaf: first triangle index; inner: right child (the left one is first - 1)
    uint32_t count;  ///< triangles in a leaf, 0 for an inner node
};

inline float axis(Vec3 v, int i) noexcept { return i == 0 ? v.x : i == 1 ? v.y : v.z; }

struct World::Impl {
    detail::Collision c;
    uint64_t id = 0;  ///< distinguishes worlds in the per-thread brush marks
    std::vector<BvhNode> bvh;
    std::vector<uint32_t> bvh_tris;

    void build_bvh();
    /// Leaf index (~child) under `root`; root < 0 is already a leaf.
    int32_t point_leaf(const detail::Tree& t, int32_t root, Vec3 p) const noexcept {
        int32_t num = root;
        while (num >= 0) {
            const detail::Node& n = t.nodes[size_t(num)];
            const detail::Plane& pl = c.planes[size_t(n.plane)];
            const float d = pl.type < 3 ? axis(p, pl.type) - pl.d : pl.n[0] * p.x + pl.n[1] * p.y + pl.n[2] * p.z - pl.d;
            num = n.child[d < 0];
        }
        return ~num;
    }
    /// Throws Error when Quake 1 hull `hull` is out of range or not in the file.
    void require_hull(int hull) const;
};

}  // namespace bspkit::query
