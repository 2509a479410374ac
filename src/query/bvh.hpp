// A bounding volume hierarchy over boxes (brush bounds, triangle bounds),
// built with binned surface-area splits and walked front to back along a
// segment: the traces' acceleration structure. The BSP tree decides what a
// point is in; for a moving point or box the set of brushes it can touch is
// the same whichever structure finds them, and this one is shallower and
// laid out for the cache (a node is 32 bytes, the left child follows its
// parent).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace bspkit::query::detail {

struct Aabb {
    float lo[3], hi[3];
};

struct BvhNode {
    float lo[3], hi[3];
    uint32_t index;  ///< leaf: first of Bvh::items; inner: the right child (the left one is this node + 1)
    uint16_t count;  ///< items in a leaf, 0 for an inner node
    uint8_t axis;    ///< inner: the split axis (walk order)
    uint8_t pad = 0;
};
static_assert(sizeof(BvhNode) == 32);

struct Bvh {
    std::vector<BvhNode> nodes;
    std::vector<uint32_t> items;  ///< ids as given to build(), in leaf order

    /// boxes[i] belongs to ids[i]; every box must be finite. Depth stays
    /// below 64 (surface-area splits give way to median splits further down).
    static Bvh build(std::span<const Aabb> boxes, std::span<const uint32_t> ids);
    bool empty() const noexcept { return nodes.empty(); }
};

/// A segment start + t * dir, t in [0, tmax], against the nodes' boxes grown
/// by `grow_lo` below and `grow_hi` above (a traced box's extents plus a
/// margin). visit(id) is called for the items of every leaf the segment
/// reaches, nearest leaves first; it returns false to stop. `tmax` is read
/// again after each visit (a hit shortens the segment).
template <class Visit>
void walk(const Bvh& bvh, const float start[3], const float dir[3], const float grow_lo[3], const float grow_hi[3],
          const float& tmax, Visit&& visit) {
    if (bvh.nodes.empty()) return;
    float inv[3];
    for (int a = 0; a < 3; ++a) inv[a] = dir[a] != 0 ? 1.0f / dir[a] : 0.0f;
    // Where the segment enters a node's grown box (t0), or false when it misses it.
    auto enters = [&](const BvhNode& node, float& t0) {
        t0 = 0;
        float t1 = tmax;
        for (int a = 0; a < 3; ++a) {
            const float lo = node.lo[a] - grow_lo[a], hi = node.hi[a] + grow_hi[a];
            if (dir[a] == 0) {
                if (start[a] < lo || start[a] > hi) return false;
                continue;
            }
            float ta = (lo - start[a]) * inv[a], tb = (hi - start[a]) * inv[a];
            if (ta > tb) std::swap(ta, tb);
            t0 = ta > t0 ? ta : t0;
            t1 = tb < t1 ? tb : t1;
            if (t0 > t1) return false;
        }
        return true;
    };
    struct Pending {
        uint32_t node;
        float t0;
    };
    Pending stack[64];
    int sp = 0;
    float t_root;
    if (!enters(bvh.nodes[0], t_root)) return;
    uint32_t n = 0;
    for (;;) {
        const BvhNode& node = bvh.nodes[n];
        if (node.count) {
            for (uint32_t i = node.index; i < node.index + node.count; ++i)
                if (!visit(bvh.items[i])) return;
        } else {
            // Both children tested here: the nearer next, the farther kept with
            // its entry so that a hit found meanwhile drops it unread.
            uint32_t near = n + 1, far = node.index;
            float t_near, t_far;
            const bool hit_near = enters(bvh.nodes[near], t_near), hit_far = enters(bvh.nodes[far], t_far);
            if (hit_near && hit_far) {
                if (t_far < t_near) {
                    std::swap(near, far);
                    std::swap(t_near, t_far);
                }
                if (sp < 64) stack[sp++] = {far, t_far};
                n = near;
                continue;
            }
            if (hit_near || hit_far) {
                n = hit_near ? near : far;
                continue;
            }
        }
        for (;;) {  // the next pending node the segment still reaches
            if (sp == 0) return;
            const Pending p = stack[--sp];
            if (p.t0 <= tmax) {
                n = p.node;
                break;
            }
        }
    }
}

}  // namespace bspkit::query::detail
