// A bounding volume hierarchy over boxes (brush bounds, triangle bounds),
// built with binned surface-area splits and walked front to back along a
// segment: the traces' acceleration structure. The BSP tree decides what a
// point is in; for a moving point or box the set of brushes it can touch is
// the same whichever structure finds them, and this one is shallower: eight
// children to a node, whose boxes two SIMD tests meet (SSE2 on x86; the same
// arithmetic lane by lane elsewhere, e.g. WebAssembly).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

// The traces' SIMD paths (SSE2, every x86-64); elsewhere (WebAssembly, ARM)
// the same arithmetic runs lane by lane. BSPKIT_QUERY_SCALAR forces those
// paths on x86 too: the query_scalar_tests build does, so they are tested.
#if defined(__SSE2__) && !defined(BSPKIT_QUERY_SCALAR)
#define BSPKIT_QUERY_SSE2 1
#include <emmintrin.h>
#else
#define BSPKIT_QUERY_SSE2 0
#endif

namespace bspkit::query::detail {

struct Aabb {
    float lo[3], hi[3];
};

/// Widens `a` to hold `b` too.
inline void grow(Aabb& a, const Aabb& b) {
    for (int k = 0; k < 3; ++k) {
        a.lo[k] = std::min(a.lo[k], b.lo[k]);
        a.hi[k] = std::max(a.hi[k], b.hi[k]);
    }
}

/// Children per node of the BVH a walk reads. Eight measured 11-18% faster
/// line traces than four on brush maps (fewer levels, so fewer of the
/// dependent loads and mispredicted branches a level costs), though a node
/// is then tested in two SIMD steps.
inline constexpr int kBvhWidth = 8;

/// kBvhWidth children, their boxes side by side (x of all of them, then y,
/// z) so one SIMD step meets four: the BVH a walk reads. It is the binary
/// build's tree with levels folded in, so it has the same leaves.
struct alignas(64) WideNode {
    float lo[3][kBvhWidth], hi[3][kBvhWidth];
    uint32_t ref[kBvhWidth];    ///< count 0: the child node's index; else the leaf's first of Bvh::items
    uint16_t count[kBvhWidth];  ///< items in a leaf child, 0 for a node child
    uint8_t used;               ///< bit k: slot k holds a child
};
static_assert(sizeof(WideNode) == 256 && kBvhWidth % 4 == 0 && kBvhWidth <= 8);

struct Bvh {
    std::vector<WideNode> nodes;
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
          const float& tmax, Visit&& visit);

/// walk() by leaves: visit(ref, count) gets each leaf's WideNode::ref and
/// count (the BVH's items or, for a BVH whose leaf refs were rewritten,
/// whatever they name); it returns false to stop.
template <class VisitLeaf>
void walk_leaves(const Bvh& bvh, const float start[3], const float dir[3], const float grow_lo[3],
                 const float grow_hi[3], const float& tmax, VisitLeaf&& visit) {
    if (bvh.nodes.empty()) return;
    // Per axis, t = (bound - origin) * inv: the low bounds meet start + grow_lo, the high ones
    // start - grow_hi. A direction too small to invert gets a huge inverse: the slab is then
    // everything or nothing (the boxes carry a margin, so a start on a face is conservative).
    float inv[3], from_lo[3], from_hi[3];
    for (int a = 0; a < 3; ++a) {
        inv[a] = std::fabs(dir[a]) > 1e-20f ? 1.0f / dir[a] : 1e30f;
        from_lo[a] = start[a] + grow_lo[a];
        from_hi[a] = start[a] - grow_hi[a];
    }
    struct Pending {
        uint32_t ref;
        uint32_t count;  ///< 0: a node
        float t0;        ///< where the segment enters it
    };
    // A node pushes at most kBvhWidth - 1 pending children and the tree is under 64 deep.
    Pending stack[(kBvhWidth - 1) * 64 + kBvhWidth];
    int sp = 0;
    Pending cur{0, 0, 0};
    for (;;) {
        if (cur.count) {
            if (!visit(cur.ref, cur.count)) return;
        } else {
            const WideNode& node = bvh.nodes[cur.ref];
            alignas(16) float t0[kBvhWidth];
#if BSPKIT_QUERY_SSE2
            unsigned hit = 0;
            for (int h = 0; h < kBvhWidth; h += 4) {
                __m128 near = _mm_setzero_ps(), far = _mm_set1_ps(tmax);
                for (int a = 0; a < 3; ++a) {
                    const __m128 i4 = _mm_set1_ps(inv[a]);
                    const __m128 ta = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(node.lo[a] + h), _mm_set1_ps(from_lo[a])), i4);
                    const __m128 tb = _mm_mul_ps(_mm_sub_ps(_mm_load_ps(node.hi[a] + h), _mm_set1_ps(from_hi[a])), i4);
                    near = _mm_max_ps(near, _mm_min_ps(ta, tb));
                    far = _mm_min_ps(far, _mm_max_ps(ta, tb));
                }
                _mm_store_ps(t0 + h, near);
                hit |= unsigned(_mm_movemask_ps(_mm_cmple_ps(near, far))) << h;
            }
            hit &= node.used;
#else
            unsigned hit = 0;
            for (int k = 0; k < kBvhWidth; ++k) {
                float n = 0, f = tmax;
                for (int a = 0; a < 3; ++a) {
                    const float ta = (node.lo[a][k] - from_lo[a]) * inv[a], tb = (node.hi[a][k] - from_hi[a]) * inv[a];
                    n = std::max(n, std::min(ta, tb));
                    f = std::min(f, std::max(ta, tb));
                }
                t0[k] = n;
                hit |= unsigned(n <= f) << k;
            }
            hit &= node.used;
#endif
            // The children met, farthest first onto the stack; the nearest is next (of
            // equal entries, the later slot). One or two children met are the common
            // cases: taken without a loop over the slots, whose branches mispredict.
            if (hit) {
                const int k0 = std::countr_zero(hit);
                hit &= hit - 1;
                if (!hit) {
                    cur = {node.ref[k0], node.count[k0], t0[k0]};
                    continue;
                }
                const int k1 = std::countr_zero(hit);
                hit &= hit - 1;
                if (!hit) {
                    const Pending a{node.ref[k0], node.count[k0], t0[k0]}, b{node.ref[k1], node.count[k1], t0[k1]};
                    const bool a_first = a.t0 < b.t0;
                    stack[sp++] = a_first ? b : a;
                    cur = a_first ? a : b;
                    continue;
                }
                Pending met[kBvhWidth];
                int m = 0;
                for (int k = k0;;) {
                    Pending p{node.ref[k], node.count[k], t0[k]};
                    int j = m++;
                    for (; j > 0 && met[j - 1].t0 < p.t0; --j) met[j] = met[j - 1];  // t0 descending
                    met[j] = p;
                    if (k == k0) {
                        k = k1;
                        continue;
                    }
                    if (!hit) break;
                    k = std::countr_zero(hit);
                    hit &= hit - 1;
                }
                for (int k = 0; k + 1 < m; ++k) stack[sp++] = met[k];
                cur = met[m - 1];
                continue;
            }
        }
        for (;;) {  // the next pending child the segment still reaches
            if (sp == 0) return;
            const Pending p = stack[--sp];
            if (p.t0 <= tmax) {
                cur = p;
                break;
            }
        }
    }
}

template <class Visit>
void walk(const Bvh& bvh, const float start[3], const float dir[3], const float grow_lo[3], const float grow_hi[3],
          const float& tmax, Visit&& visit) {
    walk_leaves(bvh, start, dir, grow_lo, grow_hi, tmax, [&](uint32_t ref, uint32_t count) {
        for (uint32_t i = ref; i < ref + count; ++i)
            if (!visit(bvh.items[i])) return false;
        return true;
    });
}

/// Every item of the leaves whose boxes meet [lo, hi] (closed boxes; a bound
/// that is not a number meets nothing), in no particular order: visit(id)
/// returns false to stop. For box-against-box queries (a move's bounds
/// against brush models' bounds), where walk()'s segment does not apply.
template <class Visit>
void walk_overlap(const Bvh& bvh, const float lo[3], const float hi[3], Visit&& visit) {
    if (bvh.nodes.empty()) return;
    // A node pushes at most kBvhWidth children and the tree is under 64 deep.
    uint32_t stack[(kBvhWidth - 1) * 64 + kBvhWidth];
    int sp = 0;
    stack[sp++] = 0;
    while (sp) {
        const WideNode& node = bvh.nodes[stack[--sp]];
        unsigned met = 0;  // bit k: slot k's box meets the query's
#if BSPKIT_QUERY_SSE2
        for (int h = 0; h < kBvhWidth; h += 4) {
            __m128 all = _mm_castsi128_ps(_mm_set1_epi32(-1));
            for (int a = 0; a < 3; ++a) {
                all = _mm_and_ps(all, _mm_cmple_ps(_mm_load_ps(node.lo[a] + h), _mm_set1_ps(hi[a])));
                all = _mm_and_ps(all, _mm_cmpge_ps(_mm_load_ps(node.hi[a] + h), _mm_set1_ps(lo[a])));
            }
            met |= unsigned(_mm_movemask_ps(all)) << h;
        }
#else
        for (int k = 0; k < kBvhWidth; ++k) {
            bool meets = true;
            for (int a = 0; a < 3; ++a) meets = meets && node.lo[a][k] <= hi[a] && node.hi[a][k] >= lo[a];
            met |= unsigned(meets) << k;
        }
#endif
        met &= node.used;
        for (; met; met &= met - 1) {
            const int k = std::countr_zero(met);
            if (node.count[k] == 0) {
                stack[sp++] = node.ref[k];
                continue;
            }
            for (uint32_t i = node.ref[k]; i < node.ref[k] + node.count[k]; ++i)
                if (!visit(bvh.items[i])) return;
        }
    }
}

}  // namespace bspkit::query::detail
