// Traces: Quake 1 family clip hulls (SV_RecursiveHullCheck's rules), brush
// families (CM_BoxTrace's rules: the box swept down the tree, each brush
// clipped with its sides pushed out by the box), triangles (displacements,
// patches) for line traces. Recursion depth is bounded by prepare()'s
// validation (kMaxTreeDepth), so nothing here can loop or overflow.
#include "query/world_impl.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bspkit::query {
using namespace detail;

namespace {

struct V {
    float v[3];
    float operator[](int i) const { return v[i]; }
};
V vec(Vec3 a) { return {{a.x, a.y, a.z}}; }
Vec3 out(const float v[3]) { return {v[0], v[1], v[2]}; }
float plane_dist(const Plane& p, const float x[3]) {
    return p.type < 3 ? x[p.type] - p.d : p.n[0] * x[0] + p.n[1] * x[1] + p.n[2] * x[2] - p.d;
}
void lerp(const float a[3], const float b[3], float f, float r[3]) {
    for (int i = 0; i < 3; ++i) r[i] = a[i] + f * (b[i] - a[i]);
}

// ---- Quake 1 family: a point through a clip hull ---------------------------

/// Trace steps allowed over a tree: a real tree visits each node once, so a
/// budget far above the tree's size only stops hostile shared subtrees.
uint64_t step_budget(const Tree& t) { return std::max<uint64_t>(uint64_t(1) << 16, 8 * (t.nodes.size() + t.leafs.size())); }

[[noreturn]] void out_of_steps(const Collision& c, const Tree& t) {
    throw Error({c.file, t.node_lump, -1}, "a trace took more than " + std::to_string(step_budget(t)) +
                                               " steps: shared subtrees make the tree too large to walk");
}

struct HullTrace {
    const Collision& c;
    const Tree& tree;
    const Plane* planes;
    const Node* nodes;
    const Leaf* leafs;
    int32_t root;
    uint64_t steps = 0, budget = 0;
    bool allsolid = true, startsolid = false;
    float fraction = 1;
    float end[3] = {0, 0, 0};
    float normal[3] = {0, 0, 0};
    float dist = 0;

    int32_t contents(int32_t num, const float p[3]) const {
        while (num >= 0) {
            const Node& n = nodes[num];
            num = n.child[plane_dist(planes[n.plane], p) < 0];
        }
        return leafs[~num].contents;
    }

    // True while the trace goes on (no impact on this path).
    bool check(int32_t num, float p1f, float p2f, const float p1[3], const float p2[3]) {
        constexpr float DIST_EPSILON = 0.03125f;
        if (++steps > budget) out_of_steps(c, tree);
        if (num < 0) {
            if (leafs[~num].contents != quake1_contents_solid) allsolid = false;
            else startsolid = true;
            return true;
        }
        const Node& node = nodes[num];
        const Plane& plane = planes[node.plane];
        const float t1 = plane_dist(plane, p1), t2 = plane_dist(plane, p2);
        if (t1 >= 0 && t2 >= 0) return check(node.child[0], p1f, p2f, p1, p2);
        if (t1 < 0 && t2 < 0) return check(node.child[1], p1f, p2f, p1, p2);
        // Put the crosspoint DIST_EPSILON units on the near side.
        float frac = t1 < 0 ? (t1 + DIST_EPSILON) / (t1 - t2) : (t1 - DIST_EPSILON) / (t1 - t2);
        frac = std::clamp(frac, 0.0f, 1.0f);
        float midf = p1f + (p2f - p1f) * frac;
        float mid[3];
        lerp(p1, p2, frac, mid);
        const int side = t1 < 0;
        if (!check(node.child[side], p1f, midf, p1, mid)) return false;
        if (contents(node.child[side ^ 1], mid) != quake1_contents_solid)
            return check(node.child[side ^ 1], midf, p2f, mid, p2);
        if (allsolid) return false;  // never got out of the solid area
        // The other side of the node is solid: this is the impact point.
        const float s = side ? -1.0f : 1.0f;
        for (int i = 0; i < 3; ++i) normal[i] = s * plane.n[i];
        dist = s * plane.d;
        // Back off while the point is in solid (float error on steep planes).
        while (contents(root, mid) == quake1_contents_solid) {
            frac -= 0.1f;
            if (frac < 0) {
                fraction = midf;
                std::copy(mid, mid + 3, end);
                return false;
            }
            midf = p1f + (p2f - p1f) * frac;
            lerp(p1, p2, frac, mid);
        }
        fraction = midf;
        std::copy(mid, mid + 3, end);
        return false;
    }
};

// ---- brush families ---------------------------------------------------------

struct Marks {
    uint64_t world = 0;
    uint32_t current = 0;
    std::vector<uint32_t> marks;
};
thread_local Marks tls_marks;

struct BoxTrace {
    const Collision& c;
    float start[3], end[3], mins[3], maxs[3], ext[3];
    bool point;
    uint32_t mask;
    float eps;
    Marks* marks = nullptr;
    uint64_t steps = 0, budget = 0;
    // results
    float fraction = 1;
    bool startsolid = false, allsolid = false;
    const Plane* plane = nullptr;
    int32_t contents = 0;
    uint32_t surface = 0;
    int32_t brush = -1;

    void clip_brush(uint32_t b) {
        const Brush& brush_rec = c.brushes[b];
        if (!(uint32_t(brush_rec.contents) & mask) || brush_rec.num_sides == 0) return;
        float enter = -1, leave = 1;
        const Plane* clip = nullptr;
        uint32_t clip_surface = 0;
        bool getout = false, startout = false;
        for (uint32_t i = 0; i < brush_rec.num_sides; ++i) {
            const Side& side = c.sides[brush_rec.first_side + i];
            if (point && side.bevel) continue;  // bevels only matter for boxes
            const Plane& p = c.planes[size_t(side.plane)];
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
                    clip_surface = side.surface;
                }
            } else {  // leaving
                const float f = std::min(1.0f, (d1 + eps) / (d1 - d2));
                if (f < leave) leave = f;
            }
        }
        if (!startout) {  // the start is inside this brush
            startsolid = true;
            if (!getout) {
                allsolid = true;
                fraction = 0;
                contents = brush_rec.contents;
                brush = int32_t(b);
            }
            return;
        }
        if (enter < leave && enter > -1 && enter < fraction && clip) {
            fraction = std::max(0.0f, enter);
            plane = clip;
            surface = clip_surface;
            contents = brush_rec.contents;
            brush = int32_t(b);
        }
    }

    void leaf(int32_t l) {
        const Leaf& lf = c.trees[0].leafs[size_t(l)];
        for (uint32_t i = 0; i < lf.num_brushes; ++i) {
            const uint32_t b = c.leaf_brushes[lf.first_brush + i];
            if (marks->marks[b] == marks->current) continue;
            marks->marks[b] = marks->current;
            clip_brush(b);
            if (allsolid) return;
        }
    }

    void node(int32_t num, float p1f, float p2f, const float p1[3], const float p2[3]) {
        if (fraction <= p1f) return;  // already hit something nearer
        if (++steps > budget) out_of_steps(c, c.trees[0]);
        if (num < 0) {
            leaf(~num);
            return;
        }
        const Node& n = c.trees[0].nodes[size_t(num)];
        const Plane& p = c.planes[size_t(n.plane)];
        float t1, t2, offset;
        if (p.type < 3) {
            t1 = p1[p.type] - p.d;
            t2 = p2[p.type] - p.d;
            offset = ext[p.type];
        } else {
            t1 = p.n[0] * p1[0] + p.n[1] * p1[1] + p.n[2] * p1[2] - p.d;
            t2 = p.n[0] * p2[0] + p.n[1] * p2[1] + p.n[2] * p2[2] - p.d;
            offset = point ? 0 : std::fabs(ext[0] * p.n[0]) + std::fabs(ext[1] * p.n[1]) + std::fabs(ext[2] * p.n[2]);
        }
        if (t1 >= offset + 1 && t2 >= offset + 1) return node(n.child[0], p1f, p2f, p1, p2);
        if (t1 < -offset - 1 && t2 < -offset - 1) return node(n.child[1], p1f, p2f, p1, p2);
        int side;
        float frac, frac2;
        if (t1 < t2) {
            const float idist = 1.0f / (t1 - t2);
            side = 1;
            frac2 = (t1 + offset + eps) * idist;
            frac = (t1 - offset + eps) * idist;
        } else if (t1 > t2) {
            const float idist = 1.0f / (t1 - t2);
            side = 0;
            frac2 = (t1 - offset - eps) * idist;
            frac = (t1 + offset + eps) * idist;
        } else {
            side = 0;
            frac = 1;
            frac2 = 0;
        }
        frac = std::clamp(frac, 0.0f, 1.0f);
        frac2 = std::clamp(frac2, 0.0f, 1.0f);
        float mid[3];
        lerp(p1, p2, frac, mid);
        node(n.child[side], p1f, p1f + (p2f - p1f) * frac, p1, mid);
        lerp(p1, p2, frac2, mid);
        node(n.child[side ^ 1], p1f + (p2f - p1f) * frac2, p2f, mid, p2);
    }
};

Marks& marks_for(const World::Impl& w) {
    Marks& m = tls_marks;
    if (m.world != w.id || m.marks.size() != w.c.brushes.size()) {
        m.world = w.id;
        m.marks.assign(w.c.brushes.size(), 0);
        m.current = 0;
    }
    if (++m.current == 0) {  // wrapped: clear
        std::fill(m.marks.begin(), m.marks.end(), 0);
        m.current = 1;
    }
    return m;
}

// ---- triangles (line traces) --------------------------------------------------

/// Möller-Trumbore, both sides; returns t in [0, tmax) or a negative value.
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
    return t_hit >= 0 && t_hit < tmax ? t_hit : -1;
}

}  // namespace

void World::Impl::build_bvh() {
    const size_t n = c.triangles.size();
    if (n == 0) return;
    bvh_tris.resize(n);
    std::vector<float> centre(n * 3);
    for (size_t i = 0; i < n; ++i) {
        bvh_tris[i] = uint32_t(i);
        const Triangle& t = c.triangles[i];
        centre[i * 3 + 0] = (t.a.x + t.b.x + t.c.x) / 3;
        centre[i * 3 + 1] = (t.a.y + t.b.y + t.c.y) / 3;
        centre[i * 3 + 2] = (t.a.z + t.b.z + t.c.z) / 3;
    }
    struct Job {
        uint32_t node, first, count;
    };
    std::vector<Job> jobs;
    bvh.push_back({});
    jobs.push_back({0, 0, uint32_t(n)});
    while (!jobs.empty()) {
        const Job j = jobs.back();
        jobs.pop_back();
        BvhNode& node = bvh[j.node];
        for (int a = 0; a < 3; ++a) {
            node.lo[a] = std::numeric_limits<float>::max();
            node.hi[a] = -std::numeric_limits<float>::max();
        }
        for (uint32_t i = j.first; i < j.first + j.count; ++i) {
            const Triangle& t = c.triangles[bvh_tris[i]];
            for (const Vec3& v : {t.a, t.b, t.c}) {
                const float p[3] = {v.x, v.y, v.z};
                for (int a = 0; a < 3; ++a) {
                    node.lo[a] = std::min(node.lo[a], p[a]);
                    node.hi[a] = std::max(node.hi[a], p[a]);
                }
            }
        }
        if (j.count <= 4) {
            node.first = j.first;
            node.count = j.count;
            continue;
        }
        int axis_i = 0;
        for (int a = 1; a < 3; ++a)
            if (node.hi[a] - node.lo[a] > node.hi[axis_i] - node.lo[axis_i]) axis_i = a;
        const uint32_t half = j.count / 2;
        std::nth_element(bvh_tris.begin() + j.first, bvh_tris.begin() + j.first + half,
                         bvh_tris.begin() + j.first + j.count, [&](uint32_t x, uint32_t y) {
                             return centre[x * 3 + size_t(axis_i)] < centre[y * 3 + size_t(axis_i)];
                         });
        const uint32_t left = uint32_t(bvh.size());
        bvh.push_back({});
        const uint32_t right = uint32_t(bvh.size());
        bvh.push_back({});
        bvh[j.node].first = right;
        bvh[j.node].count = 0;
        jobs.push_back({left, j.first, half});
        jobs.push_back({right, j.first + half, j.count - half});
    }
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

TraceResult World::trace(Vec3 start_v, Vec3 end_v, const TraceOptions& o) const {
    const Impl& w = *impl_;
    const Collision& c = w.c;
    TraceResult r;
    r.end = end_v;
    const bool is_box = o.mins != o.maxs || o.mins != Vec3{};

    if (c.kind == Kind::hulls) {
        int hull = o.hull;
        Vec3 offset{};  // hull mins - box mins (SV_HullForEntity)
        if (hull < 0) {
            hull = 0;
            if (is_box) {
                const float size_x = o.maxs.x - o.mins.x, size_z = o.maxs.z - o.mins.z;
                if (c.goldsrc_hulls)
                    hull = size_x <= 8 ? 0 : size_x <= 36 ? (size_z <= 36 ? 3 : 1) : 2;
                else
                    hull = size_x < 3 ? 0 : size_x <= 32 ? 1 : 2;
            }
            w.require_hull(hull);
            if (hull > 0) offset = c.hulls[size_t(hull)].mins - o.mins;
        } else {
            w.require_hull(hull);
        }
        const Tree& t = c.trees[hull == 0 ? 0 : 1];
        bool first = true;
        auto run = [&](size_t m) {
            const Model& model = c.models[m];
            if (model.root[size_t(hull)] >= 0 && size_t(model.root[size_t(hull)]) >= t.nodes.size()) return;
            const Vec3 shift = offset + model.origin;
            const V s = vec(start_v - shift), e = vec(end_v - shift);
            HullTrace h{c, t, c.planes.data(), t.nodes.data(), t.leafs.data(), model.root[size_t(hull)]};
            h.budget = step_budget(t);
            std::copy(e.v, e.v + 3, h.end);
            h.check(h.root, 0, 1, s.v, e.v);
            if (h.allsolid) h.startsolid = true;  // SV_ClipMoveToEntity
            // SV_ClipToLinks: a nearer hit (or any solid start) replaces the result.
            if (!first && !(h.allsolid || h.startsolid || h.fraction < r.fraction)) return;
            const bool was_startsolid = r.startsolid;
            r.fraction = h.fraction;
            r.startsolid = h.startsolid || (!first && was_startsolid);
            r.allsolid = h.allsolid;
            r.normal = out(h.normal);
            r.dist = h.dist;
            r.end = out(h.end) + shift;
            r.model = h.fraction < 1 || h.startsolid ? int32_t(m) : -1;
            r.contents = r.model >= 0 ? Contents{quake1_contents_solid, c.flags_of(quake1_contents_solid)} : Contents{};
            first = false;
        };
        run(0);
        if (o.models)
            for (size_t m = 1; m < c.models.size(); ++m) run(m);
        if (r.fraction >= 1 && !r.startsolid) r.end = end_v;
        return r;
    }

    // Brush families.
    const uint32_t mask = o.mask ? o.mask : is_box ? c.mask_playersolid : c.mask_solid;
    BoxTrace bt{c, {}, {}, {}, {}, {}, !is_box, mask, c.epsilon};
    bt.marks = &marks_for(w);
    bt.budget = step_budget(c.trees[0]);
    const V mins = vec(o.mins), maxs = vec(o.maxs);
    for (int i = 0; i < 3; ++i) {
        bt.mins[i] = mins[i];
        bt.maxs[i] = maxs[i];
        bt.ext[i] = std::max(-mins[i], maxs[i]);
    }
    auto run = [&](size_t m) {
        const Model& model = c.models[m];
        const V s = vec(start_v - model.origin), e = vec(end_v - model.origin);
        std::copy(s.v, s.v + 3, bt.start);
        std::copy(e.v, e.v + 3, bt.end);
        const float before = bt.fraction;
        const int32_t brush_before = bt.brush;
        if (m == 0) {
            bt.node(model.root[0], 0, 1, s.v, e.v);
        } else {
            for (const uint32_t b : model.brushes) {
                bt.clip_brush(b);
                if (bt.allsolid) break;
            }
        }
        if (bt.fraction < before || bt.brush != brush_before) r.model = int32_t(m);
    };
    run(0);
    if (o.models)
        for (size_t m = 1; m < c.models.size() && !bt.allsolid; ++m) run(m);

    // Displacement / patch triangles, line traces only (as Source's and Quake 3's engines do for rays).
    bool tri_hit = false;
    Vec3 tri_normal{};
    const Vec3 delta = end_v - start_v;
    const float length = float(model::length(delta));
    if (!is_box && !w.bvh.empty() && length > 0 && !bt.allsolid) {
        const float o3[3] = {start_v.x, start_v.y, start_v.z}, d3[3] = {delta.x, delta.y, delta.z};
        const float inv[3] = {1.0f / d3[0], 1.0f / d3[1], 1.0f / d3[2]};
        float best = bt.fraction;
        uint32_t stack[64];
        int sp = 0;
        stack[sp++] = 0;
        while (sp > 0) {
            const BvhNode& n = w.bvh[stack[--sp]];
            float t0 = 0, t1 = best;
            bool miss = false;
            for (int a = 0; a < 3 && !miss; ++a) {
                float ta = (n.lo[a] - o3[a]) * inv[a], tb = (n.hi[a] - o3[a]) * inv[a];
                if (std::isnan(ta) || std::isnan(tb)) {  // parallel ray on the slab boundary
                    if (o3[a] < n.lo[a] || o3[a] > n.hi[a]) miss = true;
                    continue;
                }
                if (ta > tb) std::swap(ta, tb);
                t0 = std::max(t0, ta);
                t1 = std::min(t1, tb);
                miss = t0 > t1;
            }
            if (miss) continue;
            if (n.count) {
                for (uint32_t i = n.first; i < n.first + n.count; ++i) {
                    const Triangle& tri = c.triangles[w.bvh_tris[i]];
                    if (!(uint32_t(tri.contents) & mask)) continue;
                    const float t = ray_triangle(o3, d3, tri, best);
                    if (t < 0) continue;
                    best = t;
                    tri_hit = true;
                    const Vec3 nrm = model::normalized(model::cross(tri.b - tri.a, tri.c - tri.a));
                    tri_normal = model::dot(nrm, delta) > 0 ? nrm * -1.0f : nrm;
                    bt.contents = tri.contents;
                    bt.surface = tri.surface;
                }
            } else if (sp + 2 <= 64) {
                stack[sp++] = n.first - 1;  // left child
                stack[sp++] = n.first;      // right child
            }
        }
        if (tri_hit) {
            bt.fraction = std::max(0.0f, best - c.epsilon / length);
            bt.brush = -1;
            r.model = 0;
        }
    }

    r.fraction = bt.fraction;
    r.startsolid = bt.startsolid;
    r.allsolid = bt.allsolid;
    r.triangle = tri_hit;
    r.brush = bt.brush;
    if (bt.fraction < 1 || bt.startsolid) {
        r.contents = {bt.contents, c.flags_of(bt.contents)};
        r.surface_flags = bt.surface;
        if (r.model < 0) r.model = 0;
    }
    if (tri_hit) {
        r.normal = tri_normal;
        r.dist = float(model::dot(tri_normal, start_v + delta * bt.fraction));
    } else if (bt.plane) {
        r.normal = {bt.plane->n[0], bt.plane->n[1], bt.plane->n[2]};
        r.dist = bt.plane->d;
    }
    r.end = bt.fraction >= 1 ? end_v : start_v + delta * bt.fraction;
    return r;
}

}  // namespace bspkit::query
