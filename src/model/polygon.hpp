// Private helpers of the geometry builders: cleaning a face's polygon loop
// and triangulating it (fan when convex, ear clipping when concave) without
// degenerate triangles. All tests run in doubles: map coordinates reach tens
// of thousands, where float cross products lose the 0.01 units that matter.
#pragma once

#include <bspkit/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace bspkit::model {

/// Distance below which two corners are one point, or a corner lies on the
/// line through its neighbours (map units): the compile tools' own plane
/// tolerance (real maps store corners up to 0.01 off their planes, so a
/// corner closer than that to a line is noise, and keeping it only makes a
/// sliver whose facing is noise too). Dropping such a corner changes the
/// face's area by at most half this times the face's perimeter.
inline constexpr double kPolygonEpsilon = 0.01;

namespace polygon_detail {

struct D3 {
    double x, y, z;
};
inline D3 d3(Vec3 v) { return {v.x, v.y, v.z}; }
inline D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline double dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline D3 cross(D3 a, D3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }

/// Whether corner b adds nothing between a and c: it repeats a, it is the
/// tip of a zero-area spike (a and c coincide), or it lies within `eps` of
/// the line through a and c.
inline bool redundant(D3 a, D3 b, D3 c, double eps) {
    const D3 ab = b - a, ac = c - a;
    const double eps2 = eps * eps, ac2 = dot(ac, ac);
    if (dot(ab, ab) <= eps2 || ac2 <= eps2) return true;
    const D3 cr = cross(ab, ac);
    return dot(cr, cr) <= eps2 * ac2;
}

}  // namespace polygon_detail

/// The corners of a polygon loop worth keeping, in loop order: repeated
/// points and points on the line through their neighbours (which add no area
/// and would only make zero-area triangles) are dropped. Fewer than three
/// corners come back when the loop has no area. Linear time.
/// This form fills `out` (cleared first), so a builder reuses one vector for
/// every face.
inline void clean_polygon(std::span<const Vec3> loop, std::vector<uint32_t>& out, double epsilon = kPolygonEpsilon) {
    using namespace polygon_detail;
    out.clear();
    out.reserve(loop.size());
    auto at = [&](size_t i) { return d3(loop[out[i]]); };
    for (uint32_t i = 0; i < loop.size(); ++i) {
        if (!out.empty()) {
            const D3 d = d3(loop[i]) - at(out.size() - 1);
            if (dot(d, d) <= epsilon * epsilon) continue;  // repeats the last kept corner
        }
        out.push_back(i);
        // Each new corner may make the one before it redundant, and so on back.
        while (out.size() >= 3 && redundant(at(out.size() - 3), at(out.size() - 2), at(out.size() - 1), epsilon))
            out.erase(out.end() - 2);
    }
    // Across the seam (the last corners with the first ones), from both ends.
    size_t head = 0;
    bool changed = true;
    while (changed && out.size() - head >= 3) {
        changed = false;
        const size_t last = out.size() - 1;
        if (redundant(at(last - 1), at(last), at(head), epsilon)) {
            out.pop_back();
            changed = true;
        } else if (redundant(at(last), at(head), at(head + 1), epsilon)) {
            ++head;
            changed = true;
        }
    }
    if (out.size() - head < 3) {
        out.clear();
        return;
    }
    out.erase(out.begin(), out.begin() + std::ptrdiff_t(head));
}

inline std::vector<uint32_t> clean_polygon(std::span<const Vec3> loop, double epsilon = kPolygonEpsilon) {
    std::vector<uint32_t> out;
    clean_polygon(loop, out, epsilon);
    return out;
}

/// Triangles (0, i, i + 1) over `corners` corners starting at `base`.
inline void fan_triangles(uint32_t base, size_t corners, std::vector<uint32_t>& indices) {
    for (size_t i = 1; i + 1 < corners; ++i) {
        indices.push_back(base);
        indices.push_back(base + uint32_t(i));
        indices.push_back(base + uint32_t(i + 1));
    }
}

/// Work allowance shared by all the ear clipping of one map, in corner
/// tests: once spent, what is left of a concave loop is fanned, so a hostile
/// map full of long concave loops costs bounded time. Real maps use a tiny
/// fraction of it: at most 3,749 tests on the corpus (q2_base1; the Quake 1,
/// BSP2 and GoldSrc maps none), where one 1,202-corner comb takes 3.4 million.
/// 2^24 keeps a map that spends it all within tens of milliseconds in a
/// release build, and inside libFuzzer's timeout under the fuzzer's
/// instrumentation, which 2^26 was not: a mutated map spending 27 million tests
/// took 3.3 s there (over 10 s on a loaded machine), 1.8 s with 2^24; its whole
/// release export went from 46 to 34 ms.
struct EarClipBudget {
    uint64_t remaining = uint64_t(1) << 24;
};

/// Triangles thinner than this (height over their longest side, map units)
/// are left out: they cover no visible area.
inline constexpr double kMinTriangleHeight = 1e-3;

/// Triangulates a cleaned polygon loop (see clean_polygon), appending
/// `base` + corner indices. Convex loops are fanned from corner 0; concave
/// ones (Quake 2 compilers merge faces into such loops) are ear-clipped in
/// the plane of their Newell normal. Either way the triangles keep the loop's
/// winding, cover it once (their summed vector area is the loop's, also for
/// the slightly non-planar loops compilers write), and none is thinner than
/// kMinTriangleHeight. Ear clipping spends `budget`.
inline void triangulate_polygon(std::span<const Vec3> loop, uint32_t base, std::vector<uint32_t>& indices,
                                EarClipBudget& budget) {
    const size_t n = loop.size();
    if (n < 3) return;
    // Newell normal, in doubles.
    double nx = 0, ny = 0, nz = 0;
    for (size_t i = 0; i < n; ++i) {
        const Vec3 a = loop[i], b = loop[(i + 1) % n];
        nx += (double(a.y) - b.y) * (double(a.z) + b.z);
        ny += (double(a.z) - b.z) * (double(a.x) + b.x);
        nz += (double(a.x) - b.x) * (double(a.y) + b.y);
    }
    const double nl = std::sqrt(nx * nx + ny * ny + nz * nz);
    if (!(nl > 0)) return;  // no area
    nx /= nl, ny /= nl, nz /= nl;
    // An orthonormal basis (e1, e2) of the loop's plane with e1 x e2 = normal:
    // in it the loop turns counter-clockwise.
    double e1[3];
    if (std::abs(nx) < 0.6) {  // e1 = normalize(X - (X.n) n)
        e1[0] = 1 - nx * nx, e1[1] = -nx * ny, e1[2] = -nx * nz;
    } else {                   // e1 = normalize(Y - (Y.n) n)
        e1[0] = -ny * nx, e1[1] = 1 - ny * ny, e1[2] = -ny * nz;
    }
    const double el = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
    for (double& c : e1) c /= el;
    const double e2[3] = {ny * e1[2] - nz * e1[1], nz * e1[0] - nx * e1[2], nx * e1[1] - ny * e1[0]};
    // The projected corners, in a vector each thread reuses (a builder
    // triangulates every face of a map: one allocation less per face).
    thread_local std::vector<std::pair<double, double>> projected;
    projected.resize(n);
    std::vector<std::pair<double, double>>& p = projected;
    for (size_t i = 0; i < n; ++i) {
        const double v[3] = {loop[i].x, loop[i].y, loop[i].z};
        p[i] = {v[0] * e1[0] + v[1] * e1[1] + v[2] * e1[2], v[0] * e2[0] + v[1] * e2[1] + v[2] * e2[2]};
    }
    auto turn = [&](size_t a, size_t b, size_t c) {
        return (p[b].first - p[a].first) * (p[c].second - p[a].second) -
               (p[b].second - p[a].second) * (p[c].first - p[a].first);
    };
    using namespace polygon_detail;
    auto emit = [&](size_t a, size_t b, size_t c) {
        const D3 ab = d3(loop[b]) - d3(loop[a]), ac = d3(loop[c]) - d3(loop[a]), bc = d3(loop[c]) - d3(loop[b]);
        const D3 cr = cross(ab, ac);
        const double longest2 = std::max(dot(ab, ab), std::max(dot(ac, ac), dot(bc, bc)));
        if (!(dot(cr, cr) > kMinTriangleHeight * kMinTriangleHeight * longest2)) return;
        indices.push_back(base + uint32_t(a));
        indices.push_back(base + uint32_t(b));
        indices.push_back(base + uint32_t(c));
    };
    bool convex = true;
    for (size_t i = 0; i < n && convex; ++i) convex = turn(i, (i + 1) % n, (i + 2) % n) > 0;
    if (convex) {
        for (size_t i = 1; i + 1 < n; ++i) emit(0, i, i + 1);
        return;
    }
    std::vector<size_t> ring(n);
    for (size_t i = 0; i < n; ++i) ring[i] = i;
    auto inside = [&](size_t q, size_t a, size_t b, size_t c) {
        return turn(a, b, q) >= 0 && turn(b, c, q) >= 0 && turn(c, a, q) >= 0;
    };
    // After an ear is cut its neighbours meet: a corner left on the straight
    // line between them would only make a zero-area triangle later.
    auto on_line = [&](size_t a, size_t b, size_t c) {
        const D3 ab = d3(loop[b]) - d3(loop[a]), ac = d3(loop[c]) - d3(loop[a]);
        const double ac2 = dot(ac, ac);
        const D3 cr = cross(ab, ac);
        return ac2 > 0 && dot(cr, cr) <= kPolygonEpsilon * kPolygonEpsilon * ac2 && dot(ab, ac) > 0 && dot(ab, ab) < ac2;
    };
    while (ring.size() > 3) {
        size_t m = ring.size();
        if (budget.remaining < uint64_t(m) * m) {
            // Out of budget: fan what is left (still one cover of the loop,
            // though a concave rest may fold over itself).
            budget.remaining = 0;
            for (size_t k = 1; k + 1 < m; ++k) emit(ring[0], ring[k], ring[k + 1]);
            return;
        }
        budget.remaining -= uint64_t(m);  // the collinear pass
        for (size_t k = 0; k < m && m > 3;) {
            if (on_line(ring[(k + m - 1) % m], ring[k], ring[(k + 1) % m])) {
                ring.erase(ring.begin() + std::ptrdiff_t(k));
                --m;
            } else {
                ++k;
            }
        }
        if (m == 3) break;
        size_t ear = m;
        for (size_t k = 0; k < m && ear == m; ++k) {
            const size_t a = ring[(k + m - 1) % m], b = ring[k], c = ring[(k + 1) % m];
            if (turn(a, b, c) <= 0) continue;
            bool empty = true;
            budget.remaining -= std::min<uint64_t>(budget.remaining, m);
            for (size_t j = 0; j < m && empty; ++j) {
                const size_t q = ring[j];
                if (q == a || q == b || q == c) continue;
                if (p[q] == p[a] || p[q] == p[b] || p[q] == p[c]) continue;
                empty = !inside(q, a, b, c);
            }
            if (empty) ear = k;
        }
        budget.remaining -= std::min<uint64_t>(budget.remaining, m);
        if (ear == m) {
            // No clean ear (a loop that touches itself in projection): cut the
            // corner turning most to the left, so the triangles still cover
            // the loop exactly once.
            double top = -1e300;
            for (size_t k = 0; k < m; ++k) {
                const double t = turn(ring[(k + m - 1) % m], ring[k], ring[(k + 1) % m]);
                if (t > top) {
                    top = t;
                    ear = k;
                }
            }
        }
        emit(ring[(ear + m - 1) % m], ring[ear], ring[(ear + 1) % m]);
        ring.erase(ring.begin() + std::ptrdiff_t(ear));
    }
    emit(ring[0], ring[1], ring[2]);
}

}  // namespace bspkit::model
