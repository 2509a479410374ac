// Which brush models a trace with TraceOptions::models tests (internal,
// shared by trace.cpp and the tests): the exact tests (the brush families'
// segment against a model's bounds, the Quake 1 family's boxes as
// SV_ClipToLinks), and the models World::Impl::model_bvh offers them, so
// that a trace need not test every model.
#pragma once

#include "query/world_impl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <utility>

namespace bspkit::query::detail {

/// One trace's segment against the brush families' models' bounds (the
/// union of their brushes'), its inverse direction worked out once: a model
/// whose box the segment does not meet is not traced. (The Quake 1 family
/// tests boxes instead, as its engines do: World::trace.)
class ModelCull {
public:
    ModelCull(Vec3 start, Vec3 end) {
        const float s[3] = {start.x, start.y, start.z}, e[3] = {end.x, end.y, end.z};
        for (int a = 0; a < 3; ++a) {
            const float d = e[a] - s[a];
            // A coordinate that is not finite (or a difference that overflows) meets
            // every box: the traces themselves then report what they make of it.
            if (!std::isfinite(s[a]) || !std::isfinite(d)) every_ = true;
            start_[a] = s[a];
            inv_[a] = d != 0 ? 1.0f / d : std::numeric_limits<float>::infinity();
        }
    }
    /// Whether the segment meets [lo + at - below, hi + at + above] (bounds may
    /// be infinite; a bound that is not a number rules nothing out). Another
    /// unit of slack on each side covers the rounding of the world-space bounds
    /// against the model-space tests they stand for.
    bool meets(const float lo[3], const float hi[3], Vec3 at, const float below[3], const float above[3]) const {
        if (every_) return true;
        const float shift[3] = {at.x, at.y, at.z};
        float t0 = 0, t1 = 1;
        for (int a = 0; a < 3; ++a) {
            const float l = lo[a] + shift[a] - below[a] - 1, h = hi[a] + shift[a] + above[a] + 1;
            if (std::isinf(inv_[a])) {  // parallel to the slab
                if (start_[a] < l || start_[a] > h) return false;
                continue;
            }
            float ta = (l - start_[a]) * inv_[a], tb = (h - start_[a]) * inv_[a];
            if (ta > tb) std::swap(ta, tb);
            if (ta > t0) t0 = ta;  // false for NaN: the bound stays
            if (tb < t1) t1 = tb;
            if (t0 > t1) return false;
        }
        return true;
    }

private:
    float start_[3] = {}, inv_[3] = {};
    bool every_ = false;
};

/// The Quake 1 family's test (SV_ClipToLinks): the move's box [move_lo,
/// move_hi] (SV_MoveBounds: both ends' boxes, 1 unit more) against the
/// model's bounds at its origin, 1 unit more (SV_LinkEdict). A bound that is
/// not a number fails both comparisons: the model is traced.
inline bool quake1_linked(const Model& model, const float move_lo[3], const float move_hi[3]) {
    const float at[3] = {model.origin.x, model.origin.y, model.origin.z};
    for (int a = 0; a < 3; ++a)
        if (move_lo[a] > model.hi[a] + at[a] + 1 || move_hi[a] < model.lo[a] + at[a] - 1) return false;
    return true;
}

/// The solid models > 0 a trace may reach (World::Impl::model_bvh's finds
/// and every unbounded model), ascending, for the trace's own test to
/// decide: so the same models are traced in the same order as when every
/// model is tested. `complete` is false when the query does not apply (a
/// coordinate or extent beyond the BVH's range, an inside-out box) or finds
/// more than kMax: the caller then tests every model.
struct ModelCandidates {
    static constexpr size_t kMax = 256;
    uint32_t ids[kMax];
    size_t count = 0;
    bool complete = false;

    bool add(uint32_t m) {
        if (count == kMax) return complete = false;
        ids[count++] = m;
        return true;
    }
    /// `query(add)` adds the BVH's finds and returns false when it does not apply.
    template <class Query>
    void collect(const World::Impl& w, Query&& query) {
        complete = true;
        if (!query([&](uint32_t m) { return add(m); }) || !complete) {
            complete = false;
            return;
        }
        for (const uint32_t m : w.model_unbounded)
            if (!add(m)) return;
        std::sort(ids, ids + count);
    }
};

/// Whether every value is finite and within the model BVH's range.
inline bool in_model_bvh_range(std::initializer_list<float> v) {
    for (const float x : v)
        if (!(std::fabs(x) <= World::Impl::kModelBvhRange)) return false;
    return true;
}

/// Brush families: the models whose boxes the segment grown by grow_lo /
/// grow_hi (as ModelCull::meets() grows them) may meet. The BVH's boxes hold
/// each model's with kModelBvhSlack beyond the test's unit; a box grown
/// inside out (an inverted traced box) is left to the full loop.
inline void models_meeting_segment(const World::Impl& w, Vec3 start, Vec3 end, const float grow_lo[3],
                                   const float grow_hi[3], ModelCandidates& out) {
    out.collect(w, [&](auto&& add) {
        if (!in_model_bvh_range({start.x, start.y, start.z, end.x, end.y, end.z, grow_lo[0], grow_lo[1], grow_lo[2],
                                 grow_hi[0], grow_hi[1], grow_hi[2]}))
            return false;
        for (int a = 0; a < 3; ++a)
            if (!(grow_lo[a] + grow_hi[a] >= 0)) return false;
        const float s[3] = {start.x, start.y, start.z};
        const float dir[3] = {end.x - start.x, end.y - start.y, end.z - start.z};
        const float whole = 1;
        walk(w.model_bvh, s, dir, grow_lo, grow_hi, whole, add);
        return true;
    });
}

/// The Quake 1 family: the models whose boxes the move's box may meet.
inline void models_meeting_box(const World::Impl& w, const float move_lo[3], const float move_hi[3],
                               ModelCandidates& out) {
    out.collect(w, [&](auto&& add) {
        if (!in_model_bvh_range({move_lo[0], move_lo[1], move_lo[2], move_hi[0], move_hi[1], move_hi[2]}))
            return false;
        walk_overlap(w.model_bvh, move_lo, move_hi, add);
        return true;
    });
}

/// Quake 1 family: whether the segment s -> e (a model's hull space, as its
/// walk takes it) stays clear of `solid` (World::Impl::hull_solids()) by
/// more than 2 units: ModelCull's test of the box grown by a unit, and its
/// own. The walk's pieces then reach no solid leaf: each lies on its leaf's
/// side of the planes above it but for DIST_EPSILON (1/32) and the rounding
/// of its ends (under half a unit below 2^20). Beyond that range, false.
inline bool clear_of_solid(const Aabb& solid, const float s[3], const float e[3]) {
    for (int a = 0; a < 3; ++a)
        if (solid.lo[a] > solid.hi[a]) return true;  // no solid leaf (meets() would swap such bounds)
    if (!in_model_bvh_range({s[0], s[1], s[2], e[0], e[1], e[2]})) return false;
    constexpr float unit[3] = {1, 1, 1};
    return !ModelCull({s[0], s[1], s[2]}, {e[0], e[1], e[2]}).meets(solid.lo, solid.hi, Vec3{}, unit, unit);
}

}  // namespace bspkit::query::detail
