// Traces: Quake 1 family clip hulls (SV_RecursiveHullCheck's rules), brush
// families (CM_BoxTrace's rules: the box swept down the tree, each brush
// clipped with its sides pushed out by the box), triangles (displacements,
// patches) for lines and boxes. Recursion depth is bounded by prepare()'s
// validation (kMaxTreeDepth), so nothing here can loop or overflow.
#include "query/model_cull.hpp"
#include "query/world_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bspkit::query {
using namespace detail;

namespace {

/// a - b into three floats in place. (A float struct returned by value, or
/// a float array copied, goes through the stack: floats stored four bytes at
/// a time and loaded eight at a time, a store-forwarding stall. Such copies
/// made a trace that meets nothing take 60 ns instead of 31-37.)
void sub(Vec3 a, Vec3 b, float out[3]) {
    out[0] = a.x - b.x;
    out[1] = a.y - b.y;
    out[2] = a.z - b.z;
}
Vec3 out(const float v[3]) { return {v[0], v[1], v[2]}; }

void lerp(const float a[3], const float b[3], float f, float r[3]) {
    for (int i = 0; i < 3; ++i) r[i] = a[i] + f * (b[i] - a[i]);
}

// ---- Quake 1 family: a point through a clip hull ---------------------------

/// Why a walk ran out of steps (out_of_steps()'s message).
enum class Overrun {
    tree,      ///< shared subtrees: the tree is too large to walk
    segment,   ///< the tree is one no finite trace runs out of steps on (PackedTree::bounded), so the
               ///< segment did it: a coordinate NaN, infinite or beyond PackedTree::finite_radius, where
               ///< distances to the planes overflow (and an impact's back-off from a NaN fraction never ends)
    planes,    ///< as `segment`, on a tree whose planes leave no finite radius at all (normals or
               ///< distances near FLT_MAX: a damaged planes lump)
};

[[noreturn]] void out_of_steps(const Collision& c, const Tree& t, Overrun why) {
    const char* what = why == Overrun::segment
                           ? "the segment's coordinates are too large (or not numbers) for distances to the map's planes"
                       : why == Overrun::planes
                           ? "the map's planes (normals or distances near the largest float) make the distances "
                             "to them overflow"
                           : "shared subtrees make the tree too large to walk";
    // The planes' overflow is the planes lump's fault; the rest the tree's (or the segment's).
    const std::string lump = why == Overrun::planes ? "planes" : t.node_lump;
    throw Error({c.file, lump, -1}, "a trace took more than " + std::to_string(step_budget(t)) + " steps: " + what);
}

/// kSkip: the tree's PackedTree::bounded holds for the hull and the segment
/// is within its finite_radius, so the trace cannot run out of steps: none
/// are counted. kDot (with kSkip): every distance is node_dot()'s, without
/// the branch on the plane's type that a walk mispredicts at random (the
/// same distances: plane_type() makes a plane axial only when its normal is
/// its axis exactly, see node_dot()).
template <bool kSkip, bool kDot = false>
struct HullTrace {
    const Collision& c;
    const Tree& tree;
    const HullNode* nodes;  ///< the tree packed (World::Impl::packed)
    const Leaf* leafs;
    int32_t root;           ///< packed numbering
    /// The nodes above the current one and the side taken at each (node * 2 +
    /// side), for the first kPath levels: impact() checks a point against them
    /// instead of descending from the head again. The caller's array, left
    /// uninitialised (a member array would be zeroed with the aggregate).
    static constexpr uint32_t kPath = 128;
    int32_t* path;
    uint64_t steps = 0, budget = 0;
    Overrun overrun = Overrun::tree;  ///< out_of_steps()'s
    bool allsolid = true, startsolid = false;
    bool inopen = false, inwater = false;  ///< SV_RecursiveHullCheck's: an empty / another non-solid leaf reached
    float fraction = 1;
    float end[3] = {0, 0, 0};
    float normal[3] = {0, 0, 0};
    float dist = 0;

    static_assert(kSkip || !kDot, "node_dot() is node_dist() for finite points only");
    static float dist_to(const HullNode& n, const float x[3]) noexcept {
        if constexpr (kDot) return node_dot(n, x);
        else return node_dist(n, x);
    }

    void step() {
        if constexpr (!kSkip)
            if (++steps > budget) out_of_steps(c, tree, overrun);
    }

    /// Whether `p` is in a solid leaf under `num`.
    bool solid(int32_t num, const float p[3]) {
        while (num >= 0) {
            step();
            const HullNode& n = nodes[num];
            if (dist_to(n, p) < 0) num = n.child[1];  // a branch, not a select: see point_leaf()
            else num = n.child[0];
        }
        return leafs[~num].contents == quake1_contents_solid;
    }

    /// Where a piece of the segment began when it was cut off at a node:
    /// that node (its plane: the side the trace came from), its own segment
    /// and the fraction of the cut, for the impact and its back-off.
    struct Entry {
        const HullNode* node;
        bool flip;
        float frac;
        const float* p1;
        const float* p2;
        float p1f, p2f;
        uint32_t depth;  ///< of the node
    };

    // SV_RecursiveHullCheck's results, walked front to back: the engine asks
    // the far side's contents at the cut point before it goes on; here the far
    // side's first leaf (the one holding the cut point) answers that itself,
    // which spares a descent from every cut. True while the trace goes on.
    bool check(int32_t num, uint32_t depth, float p1f, float p2f, const float p1[3], const float p2[3],
               const Entry* entry) {
        constexpr float DIST_EPSILON = 0.03125f;
        for (;;) {
            step();
            if (num < 0) {
                const int32_t contents = leafs[~num].contents;
                if (contents != quake1_contents_solid) {
                    allsolid = false;
                    if (contents == quake1_contents_empty) inopen = true;
                    else inwater = true;  // water, slime, lava, sky ...
                    return true;
                }
                if (!entry) {  // the trace starts in solid
                    startsolid = true;
                    return true;
                }
                if (allsolid) return false;  // never got out of the solid area
                impact(*entry);
                return false;
            }
            const HullNode& node = nodes[num];
            const float t1 = dist_to(node, p1), t2 = dist_to(node, p2);
            if (t1 >= 0 && t2 >= 0) {
                if (depth < kPath) path[depth] = num * 2;
                ++depth;
                num = node.child[0];
                continue;
            }
            if (t1 < 0 && t2 < 0) {
                if (depth < kPath) path[depth] = num * 2 + 1;
                ++depth;
                num = node.child[1];
                continue;
            }
            // Put the crosspoint DIST_EPSILON units on the near side.
            float frac = t1 < 0 ? (t1 + DIST_EPSILON) / (t1 - t2) : (t1 - DIST_EPSILON) / (t1 - t2);
            frac = std::clamp(frac, 0.0f, 1.0f);
            const float midf = p1f + (p2f - p1f) * frac;
            float mid[3];
            lerp(p1, p2, frac, mid);
            const int side = t1 < 0;
            if (depth < kPath) path[depth] = num * 2 + side;
            if (!check(node.child[side], depth + 1, p1f, midf, p1, mid, entry)) return false;
            if (depth < kPath) path[depth] = num * 2 + (side ^ 1);
            const Entry cut{&node, side != 0, frac, p1, p2, p1f, p2f, depth};
            return check(node.child[side ^ 1], depth + 1, midf, p2f, mid, p2, &cut);
        }
    }

    /// contents(root, p) for a point near `e`'s cut: when the nodes above the
    /// cut send `p` the way the walk went and the cut's node sends it to the
    /// near side, the descent from the head would pass them all and go on
    /// from the near child: it starts there, with the same steps counted.
    ///
    /// `at_cut`: p is the cut point itself, where the walk of the near side
    /// ended: in the leaf the walk reached last, a non-solid one (a solid
    /// leaf there would have ended the trace or left allsolid set, and no
    /// impact is made then). With finite distances (kSkip) the descent from
    /// the near child meets the same planes with the same signs as that
    /// walk's last piece, so it would reach that leaf: it is not made.
    bool solid_near(const Entry& e, const float p[3], bool at_cut) {
        if (e.depth < kPath) {
            bool same = (dist_to(*e.node, p) < 0) == e.flip;
            for (uint32_t i = 0; i < e.depth; ++i)
                same &= (dist_to(nodes[path[i] >> 1], p) < 0) == bool(path[i] & 1);
            if constexpr (kSkip)
                if (same && at_cut) return false;
            if (same) {
                if constexpr (!kSkip) {
                    steps += e.depth + 1;
                    if (steps > budget) out_of_steps(c, tree, overrun);
                }
                return solid(e.node->child[e.flip], p);
            }
        }
        return solid(root, p);
    }

    /// The far side of `e`'s cut is solid: the impact is on its plane, backed
    /// off while the point is in solid (float error on steep planes).
    void impact(const Entry& e) {
        const float s = e.flip ? -1.0f : 1.0f;
        for (int i = 0; i < 3; ++i) normal[i] = s * e.node->n[i];
        dist = s * e.node->d;
        float frac = e.frac;
        float midf = e.p1f + (e.p2f - e.p1f) * frac;
        float mid[3];
        lerp(e.p1, e.p2, frac, mid);
        for (bool at_cut = true; solid_near(e, mid, at_cut); at_cut = false) {
            frac -= 0.1f;
            if (frac < 0) break;
            midf = e.p1f + (e.p2f - e.p1f) * frac;
            lerp(e.p1, e.p2, frac, mid);
        }
        fraction = midf;
        std::copy(mid, mid + 3, end);
    }
};

// ---- brush families ---------------------------------------------------------

struct BoxTrace {
    const Collision& c;
    const World::Impl& w;
    static constexpr float kMargin = 1.0f;  ///< above every family's epsilon
    float start[3], end[3], mins[3], maxs[3];
    bool point;
    uint32_t mask;
    float eps;
    float inv_dir[3] = {0, 0, 0};  ///< 1 / (end - start) per axis, inf where the segment is parallel
    // results
    float fraction = 1;
    bool startsolid = false, allsolid = false;
    const PackedSide* plane = nullptr;
    int32_t contents = 0;
    uint32_t surface = 0;  ///< of a triangle hit (a brush's: plane->surface, read once at the end)
    int32_t brush = -1;

    /// The segment from a to b, both less `origin` (a brush model's), computed
    /// in place (see sub()).
    void set_segment(Vec3 a, Vec3 b, Vec3 origin) {
        sub(a, origin, start);
        sub(b, origin, end);
        for (int i = 0; i < 3; ++i) {
            const float d = end[i] - start[i];
            inv_dir[i] = d != 0 ? 1.0f / d : std::numeric_limits<float>::infinity();
        }
    }

    /// False when the segment misses the brush's bounds grown by the box and
    /// a margin above the epsilon: the sides could not report a hit or a solid
    /// start there (the axial sides are among them), so the brush is skipped.
    bool may_touch(const float (&blo)[3], const float (&bhi)[3]) const {
        float t0 = 0, t1 = 1;
        for (int a = 0; a < 3; ++a) {
            const float lo = blo[a] - maxs[a] - kMargin, hi = bhi[a] - mins[a] + kMargin;
            if (end[a] == start[a]) {
                if (start[a] < lo || start[a] > hi) return false;
                continue;
            }
            float ta = (lo - start[a]) * inv_dir[a], tb = (hi - start[a]) * inv_dir[a];
            if (ta > tb) std::swap(ta, tb);
            t0 = std::max(t0, ta);  // an infinite bound gives +-inf here, never NaN (finite start)
            t1 = std::min(t1, tb);
            if (t0 > t1) return false;
        }
        return true;
    }

    /// The brush whose run of units starts at `head` (World::Impl::brush_units).
    /// `bounds_met`: the segment is known to meet its bounds grown as
    /// may_touch() grows them (a BVH leaf of this brush alone was met: the
    /// same test), so may_touch() is not asked again.
    void clip_brush(const BrushUnit* head, bool bounds_met = false) {
        const BrushHead& h = head->head;
        const uint32_t num_sides = point ? h.num_point : h.num_all;
        if (num_sides == 0) return;
        if (!(h.mask_bits & mask) || (!bounds_met && !may_touch(h.lo, h.hi))) return;
        const PackedSide* sides = point ? &w.sides_point[h.first_point] : &w.sides_all[h.first_all];
#if BSPKIT_QUERY_SSE2
        clip_blocks(h, sides, &head[point ? 1 : h.all_blocks].block, (num_sides + 3) / 4);
#else
        clip_sides(h, sides, num_sides);
#endif
    }

#if BSPKIT_QUERY_SSE2
    /// clip_sides() four sides at a time: the same arithmetic in the same
    /// order per side, so the same results to the bit; of the sides that
    /// enter last, the first in order is the one reported, as there.
    void clip_blocks(const BrushHead& brush_rec, const PackedSide* sides, const SideBlock* blocks,
                     uint32_t num_blocks) {
        const __m128 sx = _mm_set1_ps(start[0]), sy = _mm_set1_ps(start[1]), sz = _mm_set1_ps(start[2]);
        const __m128 ex = _mm_set1_ps(end[0]), ey = _mm_set1_ps(end[1]), ez = _mm_set1_ps(end[2]);
        const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f), epsv = _mm_set1_ps(eps);
        __m128 any_d1 = zero, any_d2 = zero;  // lanes where a side had the start / end in front
        __m128 enter = _mm_set1_ps(-1.0f), leave = one;
        __m128i enter_side = _mm_set1_epi32(-1);
        __m128i lane_side = _mm_setr_epi32(0, 1, 2, 3);
        const __m128i four = _mm_set1_epi32(4);
        for (uint32_t k = 0; k < num_blocks; ++k, lane_side = _mm_add_epi32(lane_side, four)) {
            const SideBlock& block = blocks[k];
            const __m128 nx = _mm_load_ps(block.nx), ny = _mm_load_ps(block.ny), nz = _mm_load_ps(block.nz);
            __m128 dist = _mm_load_ps(block.d);
            if (!point) {  // push each plane out by the box corner nearest to it
                const __m128 cx = _mm_or_ps(_mm_and_ps(_mm_cmplt_ps(nx, zero), _mm_set1_ps(maxs[0])),
                                            _mm_andnot_ps(_mm_cmplt_ps(nx, zero), _mm_set1_ps(mins[0])));
                const __m128 cy = _mm_or_ps(_mm_and_ps(_mm_cmplt_ps(ny, zero), _mm_set1_ps(maxs[1])),
                                            _mm_andnot_ps(_mm_cmplt_ps(ny, zero), _mm_set1_ps(mins[1])));
                const __m128 cz = _mm_or_ps(_mm_and_ps(_mm_cmplt_ps(nz, zero), _mm_set1_ps(maxs[2])),
                                            _mm_andnot_ps(_mm_cmplt_ps(nz, zero), _mm_set1_ps(mins[2])));
                dist = _mm_sub_ps(dist, _mm_mul_ps(nx, cx));
                dist = _mm_sub_ps(dist, _mm_mul_ps(ny, cy));
                dist = _mm_sub_ps(dist, _mm_mul_ps(nz, cz));
            }
            const __m128 d1 = _mm_sub_ps(
                _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, sx), _mm_mul_ps(ny, sy)), _mm_mul_ps(nz, sz)), dist);
            const __m128 d2 = _mm_sub_ps(
                _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, ex), _mm_mul_ps(ny, ey)), _mm_mul_ps(nz, ez)), dist);
            const __m128 d1_out = _mm_cmpgt_ps(d1, zero), d2_out = _mm_cmpgt_ps(d2, zero);
            any_d1 = _mm_or_ps(any_d1, d1_out);
            any_d2 = _mm_or_ps(any_d2, d2_out);
            // Completely in front of a face: no intersection with this brush.
            const __m128 front = _mm_and_ps(d1_out, _mm_or_ps(_mm_cmpge_ps(d2, epsv), _mm_cmpge_ps(d2, d1)));
            if (_mm_movemask_ps(front)) return;
            const __m128 crosses = _mm_or_ps(d1_out, d2_out);
            const __m128 entering = _mm_and_ps(crosses, _mm_cmpgt_ps(d1, d2));
            const __m128 leaving = _mm_andnot_ps(_mm_cmpgt_ps(d1, d2), crosses);
            const __m128 denom = _mm_sub_ps(d1, d2);
            const __m128 f_enter = _mm_max_ps(_mm_div_ps(_mm_sub_ps(d1, epsv), denom), zero);  // = std::max(0, f), NaN included
            const __m128 f_leave = _mm_min_ps(_mm_div_ps(_mm_add_ps(d1, epsv), denom), one);  // = std::min(1, f)
            const __m128 later = _mm_and_ps(entering, _mm_cmpgt_ps(f_enter, enter));
            enter = _mm_or_ps(_mm_and_ps(later, f_enter), _mm_andnot_ps(later, enter));
            const __m128i later_i = _mm_castps_si128(later);
            enter_side = _mm_or_si128(_mm_and_si128(later_i, lane_side), _mm_andnot_si128(later_i, enter_side));
            const __m128 sooner = _mm_and_ps(leaving, _mm_cmplt_ps(f_leave, leave));
            leave = _mm_or_ps(_mm_and_ps(sooner, f_leave), _mm_andnot_ps(sooner, leave));
        }
        // Across the lanes: the latest entry, of its sides the first in order (sides as
        // floats: exact, and SSE2 has no integer minimum), the soonest exit. A lane no side
        // entered holds -1 (every entry is at least 0, as is f_enter), so it never wins.
        __m128 best = _mm_max_ps(enter, _mm_shuffle_ps(enter, enter, _MM_SHUFFLE(1, 0, 3, 2)));
        best = _mm_max_ps(best, _mm_shuffle_ps(best, best, _MM_SHUFFLE(2, 3, 0, 1)));
        const __m128 tied = _mm_and_ps(_mm_cmpeq_ps(enter, best),
                                       _mm_castsi128_ps(_mm_cmpgt_epi32(enter_side, _mm_set1_epi32(-1))));
        const __m128 none = _mm_set1_ps(16777216.0f);
        __m128 side = _mm_or_ps(_mm_and_ps(tied, _mm_cvtepi32_ps(enter_side)), _mm_andnot_ps(tied, none));
        side = _mm_min_ps(side, _mm_shuffle_ps(side, side, _MM_SHUFFLE(1, 0, 3, 2)));
        side = _mm_min_ps(side, _mm_shuffle_ps(side, side, _MM_SHUFFLE(2, 3, 0, 1)));
        // min of +0 and -0 may keep either: the exit is only compared, where they are equal.
        leave = _mm_min_ps(leave, _mm_shuffle_ps(leave, leave, _MM_SHUFFLE(1, 0, 3, 2)));
        leave = _mm_min_ps(leave, _mm_shuffle_ps(leave, leave, _MM_SHUFFLE(2, 3, 0, 1)));
        const float best_enter = _mm_cvtss_f32(best), best_leave = _mm_cvtss_f32(leave);
        const float side_f = _mm_cvtss_f32(side);
        const int32_t best_side = side_f < 16777216.0f ? int32_t(side_f) : -1;
        finish_clip(brush_rec, _mm_movemask_ps(any_d1) != 0, _mm_movemask_ps(any_d2) != 0, best_enter, best_leave,
                    best_side >= 0 ? &sides[best_side] : nullptr);
    }
#endif

    /// The clip one side after another (CM_ClipBoxToBrush).
    void clip_sides(const BrushHead& brush_rec, const PackedSide* sides, uint32_t num_sides) {
        float enter = -1, leave = 1;
        const PackedSide* clip = nullptr;
        bool getout = false, startout = false;
        for (uint32_t i = 0; i < num_sides; ++i) {
            const PackedSide& p = sides[i];
            float dist = p.d;
            if (!point)  // push the plane out by the box corner nearest to it
                for (int j = 0; j < 3; ++j) dist -= p.n[j] * (p.n[j] < 0 ? maxs[j] : mins[j]);
            const float d1 = p.n[0] * start[0] + p.n[1] * start[1] + p.n[2] * start[2] - dist;
            const float d2 = p.n[0] * end[0] + p.n[1] * end[1] + p.n[2] * end[2] - dist;
            if (d2 > 0) getout = true;
            if (d1 > 0) startout = true;
            // Completely in front of a face: no intersection with this brush.
            if (d1 > 0 && (d2 >= eps || d2 >= d1)) return;
            if (d1 <= 0 && d2 <= 0) continue;
            if (d1 > d2) {  // entering
                const float f = std::max(0.0f, (d1 - eps) / (d1 - d2));
                if (f > enter) {
                    enter = f;
                    clip = &p;
                }
            } else {  // leaving
                const float f = std::min(1.0f, (d1 + eps) / (d1 - d2));
                if (f < leave) leave = f;
            }
        }
        finish_clip(brush_rec, startout, getout, enter, leave, clip);
    }

    /// A brush's clip applied to the trace: a solid start, or a nearer hit.
    void finish_clip(const BrushHead& brush_rec, bool startout, bool getout, float enter, float leave,
                     const PackedSide* clip) {
        const uint32_t b = brush_rec.brush;
        if (!startout) {  // the start is inside this brush
            startsolid = true;
            // No way out: no impact plane either (whatever brush was met before).
            // Of several such brushes, the lowest-numbered, whatever the BVH's order.
            if (!getout && (!allsolid || int32_t(b) < brush)) {
                allsolid = true;
                fraction = 0;
                contents = brush_rec.contents;
                brush = int32_t(b);
                plane = nullptr;
            }
            return;
        }
        if (allsolid) return;  // nothing is nearer than a trace that never leaves solid
        // Brushes entered at the same fraction (a face two brushes share): the
        // lowest-numbered one is reported, whatever order the BVH met them in.
        const bool nearer = enter < fraction || (enter == fraction && brush >= 0 && int32_t(b) < brush);
        if (enter < leave && enter > -1 && nearer && clip) {
            fraction = std::max(0.0f, enter);
            plane = clip;
#if BSPKIT_QUERY_SSE2
            _mm_prefetch(reinterpret_cast<const char*>(clip), _MM_HINT_T0);  // read at the end of the trace
#endif
            contents = brush_rec.contents;
            brush = int32_t(b);
        }
    }
};

// ---- triangles (displacements, patches) ----------------------------------------

/// Möller-Trumbore, both sides; returns t in [0, tmax] or a negative value.
float ray_triangle(const float o[3], const float d[3], const Triangle& t, float tmax) {
    const float e1[3] = {t.b.x - t.a.x, t.b.y - t.a.y, t.b.z - t.a.z};
    const float e2[3] = {t.c.x - t.a.x, t.c.y - t.a.y, t.c.z - t.a.z};
    const float pv[3] = {d[1] * e2[2] - d[2] * e2[1], d[2] * e2[0] - d[0] * e2[2], d[0] * e2[1] - d[1] * e2[0]};
    const float det = e1[0] * pv[0] + e1[1] * pv[1] + e1[2] * pv[2];
    if (std::fabs(det) < 1e-12f) return -1;
    const float inv = 1.0f / det;
    const float tv[3] = {o[0] - t.a.x, o[1] - t.a.y, o[2] - t.a.z};
    const float u = (tv[0] * pv[0] + tv[1] * pv[1] + tv[2] * pv[2]) * inv;
    if (u < 0 || u > 1) return -1;
    const float qv[3] = {tv[1] * e1[2] - tv[2] * e1[1], tv[2] * e1[0] - tv[0] * e1[2], tv[0] * e1[1] - tv[1] * e1[0]};
    const float v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) * inv;
    if (v < 0 || u + v > 1) return -1;
    const float t_hit = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) * inv;
    return t_hit >= 0 && t_hit <= tmax ? t_hit : -1;
}

/// A box (`centre` at the trace's start, half extents `half`) moved by
/// `delta` against a triangle, by the separating axes of a box and a
/// triangle (the three axes, the triangle's normal, the nine edge x axis
/// products): along each, the fractions of the move where the projections
/// overlap; the box meets the triangle where every axis overlaps, from the
/// latest entry. Returns that fraction in [0, tmax] with the axis it entered
/// by as the unit normal facing the box; kInside when the box already
/// overlaps the triangle at the start (for a zero move too: the engines'
/// position tests, CM_TestInDispTree); else a negative value. Double
/// precision: the edge axes of thin triangles are short.
constexpr double kInside = -2;
double sweep_box_triangle(const double centre[3], const double delta[3], const double half[3], const Triangle& t,
                          double tmax, double normal[3]) {
    const double v[3][3] = {{t.a.x, t.a.y, t.a.z}, {t.b.x, t.b.y, t.b.z}, {t.c.x, t.c.y, t.c.z}};
    double edge[3][3];
    for (int j = 0; j < 3; ++j)
        for (int a = 0; a < 3; ++a) edge[j][a] = v[(j + 1) % 3][a] - v[j][a];
    double longest = 0;
    for (const auto& e : edge) longest = std::max(longest, e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    if (!(longest > 0) || !std::isfinite(longest)) return -1;
    // Axis k: 0-2 the box's (the test most triangles fail), 3 the normal, 4-12 edge j x unit
    // axis i, whose components are the edge's own: (0, e.z, -e.y), (-e.z, 0, e.x), (e.y, -e.x, 0).
    auto axis_of = [&](int k, double l[3]) {
        if (k < 3) {
            l[0] = k == 0, l[1] = k == 1, l[2] = k == 2;
        } else if (k == 3) {
            l[0] = edge[0][1] * edge[1][2] - edge[0][2] * edge[1][1];
            l[1] = edge[0][2] * edge[1][0] - edge[0][0] * edge[1][2];
            l[2] = edge[0][0] * edge[1][1] - edge[0][1] * edge[1][0];
        } else {
            const double* e = edge[(k - 4) / 3];
            const int i = (k - 4) % 3, a1 = (i + 1) % 3, a2 = (i + 2) % 3;
            l[i] = 0;
            l[a1] = e[a2];
            l[a2] = -e[a1];
        }
    };
    double enter = -std::numeric_limits<double>::infinity(), leave = std::numeric_limits<double>::infinity();
    int enter_axis = -1;
    double enter_sign = 0;
    // One axis: the projections' interval [lo, hi] of the triangle, r of the box, c and
    // speed of its centre. False: no contact within tmax.
    auto axis = [&](int k, double lo, double hi, double r, double c, double speed, double len2) {
        lo -= r;
        hi += r;
        if (speed * speed <= 1e-24 * len2) return lo <= c && c <= hi;  // apart for the whole move, or never
        const double inv = 1.0 / speed;
        double t0 = (lo - c) * inv, t1 = (hi - c) * inv;
        if (t0 > t1) std::swap(t0, t1);
        if (t0 > enter) {
            enter = t0;
            enter_axis = k;
            enter_sign = speed > 0 ? -1.0 : 1.0;  // the box comes from the axis's low side: the normal points down it
        }
        leave = std::min(leave, t1);
        // Apart, met only after tmax, or only before the start: no later axis changes that.
        return !(enter > leave || enter > tmax || leave < 0);
    };
    for (int a = 0; a < 3; ++a)
        if (!axis(a, std::min({v[0][a], v[1][a], v[2][a]}), std::max({v[0][a], v[1][a], v[2][a]}), half[a], centre[a],
                  delta[a], 1))
            return -1;
    {
        double n[3];
        axis_of(3, n);
        const double len2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
        if (len2 > 1e-12 * longest * longest) {  // not a sliver
            const double p = n[0] * v[0][0] + n[1] * v[0][1] + n[2] * v[0][2];
            if (!axis(3, p, p, half[0] * std::fabs(n[0]) + half[1] * std::fabs(n[1]) + half[2] * std::fabs(n[2]),
                      n[0] * centre[0] + n[1] * centre[1] + n[2] * centre[2],
                      n[0] * delta[0] + n[1] * delta[1] + n[2] * delta[2], len2))
                return -1;
        }
    }
    for (int j = 0; j < 3; ++j) {
        const double* e = edge[j];
        const double* far = v[(j + 2) % 3];  // the vertex off the edge; both of its ends project alike
        const double* on = v[j];
        for (int i = 0; i < 3; ++i) {
            const int a1 = (i + 1) % 3, a2 = (i + 2) % 3;
            const double l1 = e[a2], l2 = -e[a1];  // the axis's components on a1, a2 (0 on i)
            const double len2 = l1 * l1 + l2 * l2;
            if (len2 <= 1e-12 * longest) continue;  // the edge along axis i
            const double p_on = l1 * on[a1] + l2 * on[a2], p_far = l1 * far[a1] + l2 * far[a2];
            if (!axis(4 + 3 * j + i, std::min(p_on, p_far), std::max(p_on, p_far),
                      half[a1] * std::fabs(l1) + half[a2] * std::fabs(l2), l1 * centre[a1] + l2 * centre[a2],
                      l1 * delta[a1] + l2 * delta[a2], len2))
                return -1;
        }
    }
    if (enter_axis < 0 || enter < 0) return kInside;  // every axis overlaps at the start
    double l[3];
    axis_of(enter_axis, l);
    const double inv = enter_sign / std::sqrt(l[0] * l[0] + l[1] * l[1] + l[2] * l[2]);
    for (int a = 0; a < 3; ++a) normal[a] = l[a] * inv;
    return enter;
}

}  // namespace

namespace {

/// A BVH over triangles' bounds (ids: their indices), leaving out those with
/// a non-finite corner.
Bvh triangle_bvh_of(std::span<const Triangle> triangles) {
    std::vector<Aabb> boxes(triangles.size());
    std::vector<uint32_t> ids(triangles.size());
    size_t kept = 0;
    for (size_t i = 0; i < triangles.size(); ++i) {
        const Triangle& t = triangles[i];
        Aabb& box = boxes[kept];
        bool finite = true;
        for (int a = 0; a < 3; ++a) {
            box.lo[a] = std::min({axis(t.a, a), axis(t.b, a), axis(t.c, a)});
            box.hi[a] = std::max({axis(t.a, a), axis(t.b, a), axis(t.c, a)});
            finite = finite && std::isfinite(box.lo[a]) && std::isfinite(box.hi[a]);
        }
        if (!finite) continue;  // a hostile vertex: no segment can meet it, and the BVH wants finite boxes
        ids[kept++] = uint32_t(i);
    }
    boxes.resize(kept);
    ids.resize(kept);
    return Bvh::build(boxes, ids);
}

}  // namespace

void World::Impl::build_triangle_bvh() {
    triangle_bvh.assign(c.models.size(), Bvh{});
    for (size_t m = 0; m < c.models.size(); ++m) {
        if (m > 0 && !c.models[m].solid) continue;
        triangle_bvh[m] = triangle_bvh_of(c.models[m].triangles);
        if (m > 0 && !triangle_bvh[m].empty()) triangle_models.push_back(uint32_t(m));
    }
}

int World::Impl::trace_hull(const TraceOptions& o) const {
    int hull = o.hull;
    if (hull < 0) {
        hull = 0;
        const bool is_box = o.mins != o.maxs || o.mins != Vec3{};
        if (is_box) {
            const float size_x = o.maxs.x - o.mins.x, size_z = o.maxs.z - o.mins.z;
            if (c.goldsrc_hulls)
                hull = size_x <= 8 ? 0 : size_x <= 36 ? (size_z <= 36 ? 3 : 1) : 2;
            else
                hull = size_x < 3 ? 0 : size_x <= 32 ? 1 : 2;
        }
    }
    require_hull(hull);
    return hull;
}

void World::Impl::require_hull(int hull) const {
    if (hull < 0 || size_t(hull) >= c.hulls.size())
        throw Error({c.file, "models", -1}, "hull " + std::to_string(hull) + " does not exist (hulls 0-" +
                                                 std::to_string(c.hulls.size() ? c.hulls.size() - 1 : 0) + ")");
    if (!c.hulls[size_t(hull)].available)
        throw Error({c.file, "clipnodes", -1},
                    "hull " + std::to_string(hull) + " is not available: " +
                        (c.hull_missing.empty() ? std::string("the compiler did not build it") : c.hull_missing));
}

namespace {

/// Brush families (and Quake 1 hulls traced through BSPX BRUSHLIST): the
/// box swept against the world's brush BVH, then the brush models, then for
/// the displacement / patch triangles.
TraceResult brush_trace(const World::Impl& w, Vec3 start_v, Vec3 end_v, const TraceOptions& o, bool is_box) {
    const Collision& c = w.c;
    TraceResult r;
    r.end = end_v;
    // Brush families.
    const uint32_t mask = o.mask ? o.mask : is_box ? c.mask_playersolid : c.mask_solid;
    // The box's extents written straight into their places (see sub()).
    BoxTrace bt{c, w, {}, {}, {o.mins.x, o.mins.y, o.mins.z}, {o.maxs.x, o.maxs.y, o.maxs.z},
                !is_box, mask, c.epsilon};
    const float* mins = bt.mins;
    const float* maxs = bt.maxs;
    // A brush's bounds as the box's centre meets them, plus BoxTrace's margin.
    const float grow_lo[3] = {o.maxs.x + BoxTrace::kMargin, o.maxs.y + BoxTrace::kMargin, o.maxs.z + BoxTrace::kMargin};
    const float grow_hi[3] = {-o.mins.x + BoxTrace::kMargin, -o.mins.y + BoxTrace::kMargin, -o.mins.z + BoxTrace::kMargin};
    auto run = [&](size_t m) {
        const Model& model = c.models[m];
        bt.set_segment(start_v, end_v, model.origin);
        const float* s = bt.start;
        const float* e = bt.end;
        const float before = bt.fraction;
        const int32_t brush_before = bt.brush;
        if (m == 0) {
            const float dir[3] = {e[0] - s[0], e[1] - s[1], e[2] - s[2]};
            // An allsolid trace goes on too (its fraction is 0, so only the brushes
            // around the start are left), for the lowest-numbered brush holding it.
            const BrushUnit* units = w.brush_units.data();
            walk_leaves(w.world_brush_bvh, s, dir, grow_lo, grow_hi, bt.fraction, [&](uint32_t head, uint32_t count) {
                if (count == 1) bt.clip_brush(&units[head], true);
                else
                    for (; count; --count, head += units[head].head.units) bt.clip_brush(&units[head]);
                return true;
            });
            for (const uint32_t head : w.world_unbounded) bt.clip_brush(&units[head]);
        } else {
            for (const uint32_t b : model.brushes) {
                bt.clip_brush(&w.brush_units[w.brush_head[b]]);
                if (bt.allsolid) break;
            }
        }
        if (bt.fraction < before || bt.brush != brush_before) r.model = int32_t(m);
    };
    run(0);
    if (o.models) {
        // A model none of whose brushes' bounds (grown as may_touch() grows them) the
        // segment meets cannot be hit: skipped before its brushes are looked at.
        const ModelCull cull(start_v, end_v);
        auto consider = [&](size_t m) {
            if (c.models[m].solid && cull.meets(c.models[m].lo, c.models[m].hi, c.models[m].origin, grow_lo, grow_hi))
                run(m);
        };
        ModelCandidates near;
        models_meeting_segment(w, start_v, end_v, grow_lo, grow_hi, near);
        if (near.complete)
            for (size_t i = 0; i < near.count && !bt.allsolid; ++i) consider(near.ids[i]);
        else
            for (size_t m = 1; m < c.models.size() && !bt.allsolid; ++m) consider(m);
    }

    // Displacement / patch triangles: Source's CDispCollTree and Quake 3's patch
    // collision stop rays and boxes alike: the world's, then (with o.models)
    // each submodel's, in its space.
    bool tri_hit = false;
    uint32_t tri_id = 0;
    int32_t tri_model = 0;
    Vec3 tri_normal{};
    float tri_dist = 0;
    bool tri_inside = false;  // the box starts overlapping a triangle
    uint32_t tri_inside_id = 0;
    int32_t tri_inside_model = 0, tri_inside_contents = 0;
    const Vec3 delta = end_v - start_v;
    const float length = float(model::length(delta));
    const bool any_triangles = !w.triangle_bvh[0].empty() || (o.models && !w.triangle_models.empty());
    if (any_triangles && !bt.allsolid && (is_box || length > 0)) {
        const float d3[3] = {delta.x, delta.y, delta.z};
        float best = bt.fraction;
        // A hit at t: the nearer one, or of a tie (an edge two triangles share) the
        // lowest-numbered (by model, then triangle), whatever the BVH's order. The
        // tests are asked for hits a little past `best` (past()): a tie computed a
        // rounding above it is still one.
        const auto past = [](float t) { return t * (1 + 1e-5f) + 1e-6f; };
        const auto lower = [](int32_t m, uint32_t id, int32_t than_m, uint32_t than_id) {
            return m < than_m || (m == than_m && id < than_id);
        };
        int32_t model_now = 0;
        auto take = [&](uint32_t id, float t, const Triangle& tri) {
            if (!(t < best || (tri_hit && t == best && lower(model_now, id, tri_model, tri_id)))) return false;
            best = t;
            tri_hit = true;
            tri_id = id;
            tri_model = model_now;
            bt.contents = tri.contents;
            bt.surface = tri.surface;
            return true;
        };
        // One model's triangles through their BVH, the segment moved into the
        // model's space.
        auto pass = [&](size_t m, const Bvh& bvh, std::span<const Triangle> triangles) {
            if (bvh.empty()) return;
            auto visit = [&](const float* o3, const float* lo, const float* hi, const float& reach, auto&& test) {
                walk(bvh, o3, d3, lo, hi, reach, [&](uint32_t id) {
                    test(id, triangles[id]);
                    return true;
                });
            };
            model_now = int32_t(m);
            const Vec3 s = start_v - c.models[m].origin;
            const float o3[3] = {s.x, s.y, s.z};
            if (is_box) {
                const double centre[3] = {double(s.x) + 0.5 * (double(mins[0]) + double(maxs[0])),
                                          double(s.y) + 0.5 * (double(mins[1]) + double(maxs[1])),
                                          double(s.z) + 0.5 * (double(mins[2]) + double(maxs[2]))};
                const double half[3] = {0.5 * (double(maxs[0]) - double(mins[0])),
                                        0.5 * (double(maxs[1]) - double(mins[1])),
                                        0.5 * (double(maxs[2]) - double(mins[2]))};
                const double d[3] = {delta.x, delta.y, delta.z};
                visit(o3, grow_lo, grow_hi, best, [&](uint32_t id, const Triangle& tri) {
                    if (!(uint32_t(tri.contents) & mask) || !tri.stops_boxes) return;
                    double nrm[3];
                    const double t = sweep_box_triangle(centre, d, half, tri, past(best), nrm);
                    if (t == kInside && (!tri_inside || lower(model_now, id, tri_inside_model, tri_inside_id))) {
                        tri_inside = true;  // the lowest-numbered, whatever the order
                        tri_inside_id = id;
                        tri_inside_model = model_now;
                        tri_inside_contents = tri.contents;
                    }
                    if (t < 0 || !take(id, float(t), tri)) return;
                    tri_normal = {float(nrm[0]), float(nrm[1]), float(nrm[2])};
                    // The plane the box met: the triangle's side along the normal.
                    double dist = -std::numeric_limits<double>::infinity();
                    for (const Vec3 p : {tri.a, tri.b, tri.c})
                        dist = std::max(dist, nrm[0] * p.x + nrm[1] * p.y + nrm[2] * p.z);
                    tri_dist = float(dist);
                });
            } else {
                // The walk too reaches a little past the nearest hit: a triangle hit at the
                // same distance has a box whose entry, as rounded, may lie just beyond it
                // (the boxes' walks have their margin for this).
                float reach = past(best);
                const float zero[3] = {0, 0, 0};
                visit(o3, zero, zero, reach, [&](uint32_t id, const Triangle& tri) {
                    if (!(uint32_t(tri.contents) & mask) || !tri.stops_lines) return;
                    const float t = ray_triangle(o3, d3, tri, past(best));
                    if (t < 0 || !take(id, t, tri)) return;
                    reach = past(best);
                    const Vec3 nrm = model::normalized(model::cross(tri.b - tri.a, tri.c - tri.a));
                    tri_normal = model::dot(nrm, delta) > 0 ? nrm * -1.0f : nrm;
                });
            }
        };
        pass(0, w.triangle_bvh[0], c.models[0].triangles);
        if (o.models)
            for (const uint32_t m : w.triangle_models) pass(m, w.triangle_bvh[m], c.models[m].triangles);
        if (tri_hit) {
            bt.fraction = std::max(0.0f, best - c.epsilon / length);
            bt.brush = -1;
            r.model = tri_model;
        }
        // A box overlapping a surface: a position test (no move) is in solid, as the
        // engines' are (startsolid and allsolid); a move starts in solid but goes on,
        // a surface having no inside to leave.
        if (tri_inside && !bt.startsolid) {
            bt.startsolid = true;
            if (length == 0) {
                bt.allsolid = true;
                bt.fraction = 0;
            }
            if (bt.fraction >= 1 || length == 0) {
                bt.contents = tri_inside_contents;
                bt.brush = -1;
                r.model = tri_inside_model;
            }
        }
    }

    r.fraction = bt.fraction;
    r.startsolid = bt.startsolid;
    r.allsolid = bt.allsolid;
    r.triangle = tri_hit;
    r.brush = bt.brush;
    if (bt.fraction < 1 || bt.startsolid) {
        r.contents = {bt.contents, c.flags_of(bt.contents)};
        r.surface_flags = tri_hit ? bt.surface : bt.plane ? bt.plane->surface : 0;
        if (r.model < 0) r.model = 0;
    }
    if (tri_hit && is_box) {
        r.normal = tri_normal;
        r.dist = tri_dist;
    } else if (tri_hit) {
        r.normal = tri_normal;
        r.dist = float(model::dot(tri_normal, start_v - c.models[size_t(tri_model)].origin + delta * bt.fraction));
    } else if (bt.plane) {
        r.normal = {bt.plane->n[0], bt.plane->n[1], bt.plane->n[2]};
        r.dist = bt.plane->d;
    }
    r.end = bt.fraction >= 1 ? end_v : start_v + delta * bt.fraction;
    return r;
}

}  // namespace

TraceResult World::trace(Vec3 start_v, Vec3 end_v, const TraceOptions& o) const {
    const Impl& w = *impl_;
    const Collision& c = w.c;
    TraceResult r;
    r.end = end_v;
    const bool is_box = o.mins != o.maxs || o.mins != Vec3{};

    if (c.kind == Kind::hulls) {
        const int hull = w.trace_hull(o);
        Vec3 offset{};  // hull mins - box mins (SV_HullForEntity)
        if (hull > 0 && c.hulls[size_t(hull)].brushlist) {
            if (o.hull < 0) return brush_trace(w, start_v, end_v, o, true);
            TraceOptions box = o;
            box.mins = c.hulls[size_t(hull)].mins;
            box.maxs = c.hulls[size_t(hull)].maxs;
            return brush_trace(w, start_v, end_v, box, true);
        }
        // Quake moves every box by hull mins - box mins, hull 0's (zero) too, so a
        // box under 3 units traces its mins corner; GoldSrc gives hull 0 no offset
        // (its VectorCopy of hull 0's zero clip_mins).
        if (o.hull < 0 && (hull > 0 || !c.goldsrc_hulls)) offset = c.hulls[size_t(hull)].mins - o.mins;
        const Tree& t = c.trees[World::Impl::hull_tree(hull)];
        const PackedTree& packed = w.packed[World::Impl::hull_tree(hull)];
        bool first = true;
        // One step budget for the whole trace, every model's walk included: a
        // compiled map's models own disjoint subtrees, so a trace visits each
        // node once at most; thousands of models naming one hostile shared
        // subtree must not get a fresh budget each.
        uint64_t steps = 0;
        // Only models (m > 0, after the world) read their solid boxes.
        const auto* solids = o.models ? &w.hull_solids() : nullptr;
        auto run = [&](size_t m) {
            const Model& model = c.models[m];
            if (model.root[size_t(hull)] >= 0 && size_t(model.root[size_t(hull)]) >= t.nodes.size()) return;
            const Vec3 shift = offset + model.origin;
            float s[3], e[3];
            sub(start_v, shift, s);
            sub(end_v, shift, e);
            int32_t path[HullTrace<false>::kPath];
            auto walk = [&](auto& h) {
                h.budget = step_budget(t);
                h.steps = steps;
                std::copy(e, e + 3, h.end);
                h.check(h.root, 0, 0, 1, s, e, nullptr);
                steps = h.steps;
            };
            const int32_t root = packed.root(model.root[size_t(hull)]);
            HullTrace<false> h{c, t, packed.nodes.data(), t.leafs.data(), root, path};
            // Steps need no counting on a bounded tree, for a segment giving
            // finite distances (an impact's back-off from a NaN fraction would
            // never end: the budget stops it).
            bool fast_ok = packed.bounded[size_t(hull)];
            for (int i = 0; i < 3; ++i)  // false for NaN too
                fast_ok = fast_ok && std::fabs(s[i]) < packed.finite_radius && std::fabs(e[i]) < packed.finite_radius;
            // A model whose solid the segment stays clear of ends its walk with no
            // impact, not starting in solid and not all in solid: it cannot replace
            // the result (the world's came first). Skipped where its walk would
            // count no steps (fast_ok), so what it leaves is all the same.
            if (!first && fast_ok && clear_of_solid((*solids)[m][size_t(hull)], s, e)) return;
            auto take = [&](const auto& fast) {
                h.allsolid = fast.allsolid;
                h.startsolid = fast.startsolid;
                h.inopen = fast.inopen;
                h.inwater = fast.inwater;
                h.fraction = fast.fraction;
                std::copy(fast.end, fast.end + 3, h.end);
                std::copy(fast.normal, fast.normal + 3, h.normal);
                h.dist = fast.dist;
            };
            if (fast_ok) {
                HullTrace<true, true> fast{c, t, packed.nodes.data(), t.leafs.data(), root, path};
                walk(fast);
                take(fast);
            } else {
                // A bounded tree is not what runs out of steps: the segment is, or
                // planes that leave not even the origin's neighbourhood finite.
                if (packed.bounded[size_t(hull)])
                    h.overrun = packed.finite_radius < 1 ? Overrun::planes : Overrun::segment;
                walk(h);
            }
            if (h.allsolid) h.startsolid = true;  // SV_ClipMoveToEntity
            // SV_ClipToLinks: a nearer hit (or any solid start) replaces the result.
            if (!first && !(h.allsolid || h.startsolid || h.fraction < r.fraction)) return;
            const bool was_startsolid = r.startsolid;
            r.fraction = h.fraction;
            r.startsolid = h.startsolid || (!first && was_startsolid);
            r.allsolid = h.allsolid;
            r.inopen = h.inopen;
            r.inwater = h.inwater;
            r.normal = out(h.normal);
            r.dist = h.dist;
            r.end = out(h.end) + shift;
            r.model = h.fraction < 1 || h.startsolid ? int32_t(m) : -1;
            r.contents = r.model >= 0 ? Contents{quake1_contents_solid, c.flags_of(quake1_contents_solid)} : Contents{};
            first = false;
        };
        run(0);
        if (o.models) {
            // SV_ClipToLinks: a model is traced only where the move's box (SV_MoveBounds:
            // both ends' boxes, 1 unit more) meets the model's (its bounds in the file
            // at its origin, 1 unit more: SV_LinkEdict). A box test, not the
            // segment's: a model's clip tree may answer solid outside its bounds, and
            // the engine asks it whenever the boxes meet. The world is always walked.
            const Vec3 box_lo = o.hull >= 0 ? c.hulls[size_t(hull)].mins : o.mins;
            const Vec3 box_hi = o.hull >= 0 ? c.hulls[size_t(hull)].maxs : o.maxs;
            const float move_lo[3] = {std::min(start_v.x, end_v.x) + box_lo.x - 1, std::min(start_v.y, end_v.y) + box_lo.y - 1,
                                      std::min(start_v.z, end_v.z) + box_lo.z - 1};
            const float move_hi[3] = {std::max(start_v.x, end_v.x) + box_hi.x + 1, std::max(start_v.y, end_v.y) + box_hi.y + 1,
                                      std::max(start_v.z, end_v.z) + box_hi.z + 1};
            const auto linked = [&](const Model& model) { return quake1_linked(model, move_lo, move_hi); };
            ModelCandidates near;
            models_meeting_box(w, move_lo, move_hi, near);
            if (near.complete) {
                for (size_t i = 0; i < near.count; ++i)
                    if (linked(c.models[near.ids[i]])) run(near.ids[i]);
            } else {
                for (size_t m = 1; m < c.models.size(); ++m)
                    if (c.models[m].solid && linked(c.models[m])) run(m);
            }
        }
        if (r.fraction >= 1 && !r.startsolid) r.end = end_v;
        return r;
    }

    return brush_trace(w, start_v, end_v, o, is_box);
}

}  // namespace bspkit::query
