// Quake 3 / RTCW geometry (model::build) on maps the test builds itself: the
// box room of quake_test_maps.hpp plus generated patches, meshes and flares.
// Patch vertices are compared with a Bezier evaluated here in double
// precision; watertightness, level choice, triangle filtering, materials,
// lightmaps, and hostile records (Error, never a crash or huge allocation).
#include "quake_test_maps.hpp"

#include "formats/quake3/geometry.hpp"

#include <bspkit/model.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

using namespace bspkit;
using namespace bspkit::testmaps;
using model::Vec3;

namespace {

struct Ctrl {
    double x = 0, y = 0, z = 0, s = 0, t = 0, ls = 0, lt = 0;
    uint8_t color[4] = {255, 255, 255, 255};
};

/// Adds a patch surface of `w` x `h` control points to model 0; returns its face index.
int add_patch(Quake3Map& q, int w, int h, const std::function<Ctrl(int, int)>& at, int lightmap = -1) {
    quake3::dsurface_t s{};
    s.surfaceType = quake3::MST_PATCH;
    s.fogNum = -1;
    s.firstVert = int32_t(q.verts.size());
    s.numVerts = w * h;
    s.lightmapNum = lightmap;
    s.patchWidth = w;
    s.patchHeight = h;
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) {
            const Ctrl c = at(i, j);
            quake3::drawVert_t v{};
            v.xyz[0] = float(c.x);
            v.xyz[1] = float(c.y);
            v.xyz[2] = float(c.z);
            v.st[0] = float(c.s);
            v.st[1] = float(c.t);
            v.lightmap[0] = float(c.ls);
            v.lightmap[1] = float(c.lt);
            v.normal[2] = 1;
            std::memcpy(v.color, c.color, 4);
            q.verts.push_back(v);
        }
    q.surfaces.push_back(s);
    q.models[0].numSurfaces = int32_t(q.surfaces.size());
    return int(q.surfaces.size()) - 1;
}

/// Adds a triangle-soup (or other type) surface from positions and meshvert offsets.
int add_mesh(Quake3Map& q, const std::vector<Vec3>& pts, const std::vector<int>& offsets, int type = quake3::MST_TRIANGLE_SOUP) {
    quake3::dsurface_t s{};
    s.surfaceType = type;
    s.fogNum = -1;
    s.firstVert = int32_t(q.verts.size());
    s.numVerts = int32_t(pts.size());
    s.firstIndex = int32_t(q.meshverts.size());
    s.numIndexes = int32_t(offsets.size());
    s.lightmapNum = -3;
    for (const Vec3& p : pts) {
        quake3::drawVert_t v{};
        v.xyz[0] = p.x;
        v.xyz[1] = p.y;
        v.xyz[2] = p.z;
        v.color[0] = 10;
        v.color[1] = 20;
        v.color[2] = 30;
        v.color[3] = 40;
        q.verts.push_back(v);
    }
    for (int o : offsets) q.meshverts.push_back({o});
    q.surfaces.push_back(s);
    q.models[0].numSurfaces = int32_t(q.surfaces.size());
    return int(q.surfaces.size()) - 1;
}

/// The box room with its face normals stored where q3map2 stores them (lightmapVecs[2]).
Quake3Map box() {
    Quake3Map q;
    const auto faces = box_faces();
    for (size_t f = 0; f < 6; ++f)
        for (int k = 0; k < 3; ++k) q.surfaces[f].lightmapVecs[2][k] = faces[f].normal[k];
    return q;
}

model::Map build(const Quake3Map& q, int level = -1, bool lightmaps = true) {
    const Bsp bsp = Bsp::parse(q.build(), "gen.bsp");
    model::BuildOptions o;
    o.patch_level = level;
    o.lightmaps = lightmaps;
    return model::build(bsp, o);
}

const model::Surface& face(const model::Map& m, int index) {
    for (const auto& s : m.models.at(0).surfaces)
        if (s.face == index) return s;
    throw std::runtime_error("face not built");
}

// Reference biquadratic Bezier in double precision over one 3 x 3 block.
double b(int k, double t) { return k == 0 ? (1 - t) * (1 - t) : k == 1 ? 2 * t * (1 - t) : t * t; }
double db(int k, double t) { return k == 0 ? -2 * (1 - t) : k == 1 ? 2 - 4 * t : 2 * t; }

Ctrl eval(const std::function<Ctrl(int, int)>& at, int c, int r, double u, double v) {
    Ctrl out{};
    double col[4] = {0, 0, 0, 0};
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            const Ctrl p = at(2 * c + i, 2 * r + j);
            const double w = b(i, u) * b(j, v);
            out.x += w * p.x, out.y += w * p.y, out.z += w * p.z, out.s += w * p.s, out.t += w * p.t;
            out.ls += w * p.ls, out.lt += w * p.lt;
            for (int k = 0; k < 4; ++k) col[k] += w * p.color[k];
        }
    for (int k = 0; k < 4; ++k) out.color[k] = uint8_t(std::lround(col[k]));
    return out;
}

Vec3 eval_normal(const std::function<Ctrl(int, int)>& at, int c, int r, double u, double v) {
    double du[3] = {0, 0, 0}, dv[3] = {0, 0, 0};
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            const Ctrl p = at(2 * c + i, 2 * r + j);
            const double pu = db(i, u) * b(j, v), pv = b(i, u) * db(j, v);
            du[0] += pu * p.x, du[1] += pu * p.y, du[2] += pu * p.z;
            dv[0] += pv * p.x, dv[1] += pv * p.y, dv[2] += pv * p.z;
        }
    const double n[3] = {du[1] * dv[2] - du[2] * dv[1], du[2] * dv[0] - du[0] * dv[2], du[0] * dv[1] - du[1] * dv[0]};
    const double l = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    return {float(n[0] / l), float(n[1] / l), float(n[2] / l)};
}

/// Area of the Bezier surface of a control grid of nu x nv blocks (midpoint rule on |Pu x Pv|).
double bezier_area(const std::function<Ctrl(int, int)>& at, int nu, int nv) {
    constexpr int N = 200;
    double total = 0;
    for (int r = 0; r < nv; ++r)
        for (int c = 0; c < nu; ++c)
            for (int y = 0; y < N; ++y)
                for (int x = 0; x < N; ++x) {
                    const double u = (x + 0.5) / N, v = (y + 0.5) / N;
                    double du[3] = {0, 0, 0}, dv[3] = {0, 0, 0};
                    for (int j = 0; j < 3; ++j)
                        for (int i = 0; i < 3; ++i) {
                            const Ctrl p = at(2 * c + i, 2 * r + j);
                            const double pu = db(i, u) * b(j, v), pv = b(i, u) * db(j, v);
                            du[0] += pu * p.x, du[1] += pu * p.y, du[2] += pu * p.z;
                            dv[0] += pv * p.x, dv[1] += pv * p.y, dv[2] += pv * p.z;
                        }
                    const double n0 = du[1] * dv[2] - du[2] * dv[1], n1 = du[2] * dv[0] - du[0] * dv[2],
                                 n2 = du[0] * dv[1] - du[1] * dv[0];
                    total += std::sqrt(n0 * n0 + n1 * n1 + n2 * n2) / (N * N);
                }
    return total;
}

bool same(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }

/// Half a cylinder of radius `radius` along y: `w` control columns across, `h` rows along the axis.
std::function<Ctrl(int, int)> half_cylinder(int w, int h, double radius, double length, double y0 = 0) {
    return [=](int i, int j) {
        // Each 3-column block is a quarter circle: corners on the circle, the middle at the tangents' crossing.
        const int block = i / 2, k = i % 2;
        const double a0 = M_PI * block / ((w - 1) / 2.0), a1 = M_PI * (block + 1) / ((w - 1) / 2.0);
        Ctrl c;
        if (k == 0) {
            c.x = radius * std::cos(a0);
            c.z = radius * std::sin(a0);
        } else {
            const double mid = (a0 + a1) / 2, r = radius / std::cos((a1 - a0) / 2);
            c.x = r * std::cos(mid);
            c.z = r * std::sin(mid);
        }
        c.y = y0 + length * j / (h - 1);
        c.s = i * 0.25;
        c.t = j * 0.5;
        c.ls = 0.1 + 0.05 * i;
        c.lt = 0.2 + 0.1 * j;
        c.color[0] = uint8_t(20 * i);
        c.color[1] = uint8_t(30 * j);
        return c;
    };
}

double area(const model::Surface& s) { return model::surface_area(s); }

}  // namespace

// ---------------------------------------------------------------------------

TEST(Quake3Geometry, BoxRoomPolygonsAndFlatPatch) {
    const Quake3Map q = box();
    const model::Map m = build(q);
    ASSERT_EQ(m.models.size(), 1u);
    ASSERT_EQ(m.models[0].surfaces.size(), 7u);
    ASSERT_EQ(m.materials.size(), 2u);
    EXPECT_EQ(m.materials[0].name, "textures/base/floor");
    EXPECT_EQ(m.materials[0].width, 0u);
    const auto faces = box_faces();
    for (int f = 0; f < 6; ++f) {
        const model::Surface& s = face(m, f);
        EXPECT_EQ(s.kind, model::SurfaceKind::polygon);
        ASSERT_EQ(s.indices.size(), 6u);
        EXPECT_NEAR(area(s), 128.0 * 128.0, 1e-6);
        ASSERT_TRUE(s.plane);
        EXPECT_FLOAT_EQ(s.plane->normal.x, faces[size_t(f)].normal[0]);
        EXPECT_FLOAT_EQ(s.plane->normal.z, faces[size_t(f)].normal[2]);
        EXPECT_FLOAT_EQ(s.plane->dist, faces[size_t(f)].dist);
        for (uint32_t i : s.indices) EXPECT_NEAR(model::dot(s.plane->normal, s.vertices[i].position), s.plane->dist, 1e-4);
        EXPECT_EQ(s.lightmap, 0);  // the one page of the lightmaps lump
        EXPECT_EQ(s.styles[0], 0);
        EXPECT_EQ(s.styles[1], 255);
    }
    // The flat, evenly spaced 3 x 3 patch needs one segment each way (adaptive).
    const model::Surface& p = face(m, 6);
    EXPECT_EQ(p.kind, model::SurfaceKind::patch);
    EXPECT_EQ(p.vertices.size(), 4u);
    EXPECT_EQ(p.indices.size(), 6u);
    EXPECT_NEAR(area(p), 64.0 * 64.0, 1e-6);
    EXPECT_EQ(p.lightmap, -1);
    EXPECT_FALSE(p.plane);
    // Lightmaps: one 128 x 128 page, packed as style 0 only.
    ASSERT_EQ(m.lightmaps.size(), 1u);
    EXPECT_EQ(m.lightmaps[0].style, 0u);
    EXPECT_GE(m.lightmaps[0].width, 128u);
    EXPECT_TRUE(m.lightmap_images.empty());
    size_t grey = 0;
    for (uint8_t c : m.lightmaps[0].rgb) grey += c == 0x80;
    EXPECT_GE(grey, 128u * 128u * 3u);
}

TEST(Quake3Geometry, PolygonTrianglesKeepTheirMeshvertOrder) {
    // The model keeps the meshverts' triangles and winding as stored.
    const Quake3Map q = box();
    const model::Map m = build(q);
    for (int f = 0; f < 6; ++f) {
        const model::Surface& s = face(m, f);
        for (size_t k = 0; k < 6; ++k)
            EXPECT_EQ(s.indices[k], uint32_t(std::array{0, 1, 2, 0, 2, 3}[k]));
    }
}

TEST(Quake3Geometry, FixedLevelsMatchTheBezierEverywhere) {
    for (int level = 1; level <= 8; ++level) {
        Quake3Map q = box();
        const auto at = half_cylinder(5, 5, 48, 96);
        const int f = add_patch(q, 5, 5, at, 0);
        const model::Map m = build(q, level);
        const model::Surface& s = face(m, f);
        const uint32_t W = 2 * uint32_t(level) + 1, H = W;
        ASSERT_EQ(s.vertices.size(), size_t(W) * H) << "level " << level;
        EXPECT_EQ(s.indices.size(), size_t(W - 1) * (H - 1) * 6) << "level " << level;
        for (uint32_t y = 0; y < H; ++y)
            for (uint32_t x = 0; x < W; ++x) {
                const int c = std::min<int>(int(x) / level, 1), r = std::min<int>(int(y) / level, 1);
                const double u = double(int(x) - c * level) / level, v = double(int(y) - r * level) / level;
                const Ctrl e = eval(at, c, r, u, v);
                const model::Vertex& got = s.vertices[size_t(y) * W + x];
                EXPECT_NEAR(got.position.x, e.x, 1e-4);
                EXPECT_NEAR(got.position.y, e.y, 1e-4);
                EXPECT_NEAR(got.position.z, e.z, 1e-4);
                EXPECT_NEAR(got.uv.x, e.s, 1e-6);
                EXPECT_NEAR(got.uv.y, e.t, 1e-6);
                EXPECT_NEAR(got.color[0], e.color[0], 1);
                EXPECT_NEAR(got.color[1], e.color[1], 1);
                // lightmap_uv went through the atlas: check it is inside the atlas.
                EXPECT_GE(got.lightmap_uv.x, 0.0f);
                EXPECT_LE(got.lightmap_uv.x, 1.0f);
                const Vec3 n = eval_normal(at, c, r, u, v);
                EXPECT_NEAR(model::dot(got.normal, n), 1.0, 1e-4) << "level " << level << " vertex " << x << "," << y;
                if (x % uint32_t(level) == 0 && y % uint32_t(level) == 0) {  // parameter corners: the control points
                    const Ctrl p = at(2 * int(x) / level, 2 * int(y) / level);
                    EXPECT_TRUE(same(got.position, Vec3{float(p.x), float(p.y), float(p.z)}));
                    EXPECT_EQ(got.uv.x, float(p.s));
                    EXPECT_EQ(got.uv.y, float(p.t));
                }
            }
        // Area: chords across a sheet curved one way only stay below the
        // surface's area, and close in on it as the level grows.
        const double exact = bezier_area(at, 2, 2);
        EXPECT_LT(area(s), exact * (1 + 1e-6)) << "level " << level;
        EXPECT_GT(area(s), exact * (level == 1 ? 0.85 : level == 2 ? 0.96 : level < 8 ? 0.98 : 0.997))
            << "level " << level;
    }
}

TEST(Quake3Geometry, PatchLightmapUVsAreInterpolatedInsideThePage) {
    Quake3Map q = box();
    const auto at = half_cylinder(3, 3, 32, 32);
    const int f = add_patch(q, 3, 3, at, 0);
    const model::Map unpacked = build(q, 4, false);  // no atlas: lightmap_uv stays page coordinates
    const model::Surface& s = face(unpacked, f);
    EXPECT_EQ(s.lightmap, -1);  // lightmaps off
    for (uint32_t y = 0; y <= 4; ++y)
        for (uint32_t x = 0; x <= 4; ++x) {
            const Ctrl e = eval(at, 0, 0, x / 4.0, y / 4.0);
            EXPECT_NEAR(s.vertices[y * 5 + x].lightmap_uv.x, e.ls, 1e-6);
            EXPECT_NEAR(s.vertices[y * 5 + x].lightmap_uv.y, e.lt, 1e-6);
        }
    const model::Map packed = build(q, 4, true);
    EXPECT_EQ(face(packed, f).lightmap, 0);
}

TEST(Quake3Geometry, AdaptiveLevelFollowsCurvatureAndIsCapped) {
    EXPECT_EQ(quake3::adaptive_level(0), 1);
    EXPECT_EQ(quake3::adaptive_level(-1), 1);
    EXPECT_EQ(quake3::adaptive_level(std::nan("")), 1);
    EXPECT_EQ(quake3::adaptive_level(1e30), quake3::kAdaptiveMaxLevel);
    for (double d = 0.5; d < 4096; d *= 1.7) EXPECT_LE(quake3::adaptive_level(d), quake3::adaptive_level(d * 1.7));

    // Along u the half cylinder curves, along v it is straight: u gets segments, v one.
    for (double radius : {4.0, 16.0, 64.0, 256.0, 4096.0}) {
        Quake3Map q = box();
        const auto at = half_cylinder(5, 3, radius, 64);
        const int f = add_patch(q, 5, 3, at);
        const model::Map m = build(q, -1);
        const model::Surface& s = face(m, f);
        ASSERT_EQ(s.vertices.size() % 2, 0u);
        const uint32_t W = uint32_t(s.vertices.size() / 2);  // two rows: v needs a single segment
        ASSERT_EQ((W - 1) % 2, 0u);
        const int L = int(W - 1) / 2;  // both quarter circles are alike: same level
        EXPECT_GE(L, 1);
        EXPECT_LE(L, quake3::kAdaptiveMaxLevel);
        // The control points sit at the grid corners.
        EXPECT_TRUE(same(s.vertices[0].position, Vec3{float(at(0, 0).x), float(at(0, 0).y), float(at(0, 0).z)}));
        EXPECT_TRUE(same(s.vertices[size_t(L)].position, Vec3{float(at(2, 0).x), float(at(2, 0).y), float(at(2, 0).z)}));
        EXPECT_TRUE(same(s.vertices[W + W - 1].position, Vec3{float(at(4, 2).x), float(at(4, 2).y), float(at(4, 2).z)}));
        // Chord deviation: midpoints of every segment against the curve.
        double worst = 0;
        for (int c = 0; c < 2; ++c)
            for (int i = 0; i < L; ++i) {
                const Ctrl mid = eval(at, c, 0, (i + 0.5) / L, 0);
                const Vec3 a = s.vertices[size_t(c * L + i)].position, b2 = s.vertices[size_t(c * L + i + 1)].position;
                const double dx = mid.x - (a.x + b2.x) / 2, dz = mid.z - (a.z + b2.z) / 2;
                worst = std::max(worst, std::sqrt(dx * dx + dz * dz));
            }
        if (L < quake3::kAdaptiveMaxLevel)
            EXPECT_LE(worst, quake3::kPatchTolerance * 1.0001) << "radius " << radius;
        else
            EXPECT_GE(radius, 256.0) << "capped only for the large radii";
        if (L > 1) {  // one segment fewer would not do
            const int fewer = L - 1;
            double dev = 0;
            for (int i = 0; i < fewer; ++i) {
                const Ctrl a = eval(at, 0, 0, double(i) / fewer, 0), b2 = eval(at, 0, 0, double(i + 1) / fewer, 0);
                const Ctrl mid = eval(at, 0, 0, (i + 0.5) / fewer, 0);
                dev = std::max(dev, std::hypot(mid.x - (a.x + b2.x) / 2, mid.z - (a.z + b2.z) / 2));
            }
            EXPECT_GT(dev, quake3::kPatchTolerance * 0.999) << "radius " << radius;
        }
        if (radius >= 4096) {
            EXPECT_EQ(L, quake3::kAdaptiveMaxLevel);
        }
        if (radius <= 4) {
            EXPECT_LE(L, 2);
        }
    }
}

// Two patches share an edge (the same three control points, reversed): one
// bulges strongly inside, the shared edge curves gently; the other is nearly
// flat. The flat one must take the bulging one's segments along the edge,
// and the edge vertices must be the same bits in both.
TEST(Quake3Geometry, PatchesSharingAnEdgeAreWatertight) {
    const auto curved = [](int i, int j) {
        Ctrl c;
        c.x = 64.0 * i;
        c.y = 64.0 * j;
        c.z = (j == 1 && i == 1) ? 300.0 : 0.0;  // bulges in the middle
        if (j == 0) {  // the shared edge: gently curved, odd coordinates (rounding shows)
            const double ex[3] = {0.3, 40.1, 128.7}, ez[3] = {0.7, 13.3, 5.1};
            c.x = ex[i];
            c.z = ez[i];
        }
        return c;
    };
    const auto flat = [&](int i, int j) {
        // Below the curved one; its j = 2 row is the curved one's j = 0 row,
        // reversed; its v curves are evenly spaced lines (one segment will do).
        const Ctrl edge = curved(2 - i, 0);
        Ctrl c;
        c.x = j == 2 ? edge.x : j == 1 ? (128.0 - 64.0 * i + edge.x) / 2 : 128.0 - 64.0 * i;
        c.z = j == 2 ? edge.z : j == 1 ? edge.z / 2 : 0.0;
        c.y = -64.0 * (2 - j);
        return c;
    };
    for (int level = -1; level <= 8; ++level) {
        if (level == 0) continue;
        Quake3Map q = box();
        const int a = add_patch(q, 3, 3, curved);
        const int b2 = add_patch(q, 3, 3, flat);
        const model::Map m = build(q, level);
        const model::Surface& sa = face(m, a);
        const model::Surface& sb = face(m, b2);
        // Edge vertices of each: positions with y == 0 (the shared edge lies on y = 0, nothing else does).
        std::vector<Vec3> ea, eb;
        for (const auto& v : sa.vertices)
            if (v.position.y == 0) ea.push_back(v.position);
        for (const auto& v : sb.vertices)
            if (v.position.y == 0) eb.push_back(v.position);
        const auto key = [](Vec3 v) { return std::tuple(v.x, v.y, v.z); };
        std::sort(ea.begin(), ea.end(), [&](Vec3 p, Vec3 r) { return key(p) < key(r); });
        std::sort(eb.begin(), eb.end(), [&](Vec3 p, Vec3 r) { return key(p) < key(r); });
        ASSERT_EQ(ea.size(), eb.size()) << "level " << level;
        for (size_t k = 0; k < ea.size(); ++k) EXPECT_TRUE(same(ea[k], eb[k])) << "level " << level;
        if (level > 0) {
            EXPECT_EQ(ea.size(), size_t(level) + 1);
        }
        if (level == -1) {
            // The bulge needs many segments along u; the flat patch follows along the shared edge.
            EXPECT_GT(ea.size(), 3u);
            // Its other direction (v, across the edge) is free: one segment.
            EXPECT_EQ(sb.vertices.size(), ea.size() * 2);
        }
    }
}

TEST(Quake3Geometry, WideGridSharesColumnLevelsBetweenItsRows) {
    // 5 x 5 grid: only block (0, 0) bulges. Column 0 and row 0 get its level;
    // the grid stays one vertex lattice, so blocks (0, 1) and (1, 0) follow.
    const auto at = [](int i, int j) {
        Ctrl c;
        c.x = 32.0 * i;
        c.y = 32.0 * j;
        c.z = (i == 1 && j == 1) ? 200.0 : 0.0;
        return c;
    };
    Quake3Map q = box();
    const int f = add_patch(q, 5, 5, at);
    const model::Map m = build(q, -1);
    const model::Surface& s = face(m, f);
    // Grid size: (Lu0 + Lu1 + 1) x (Lv0 + Lv1 + 1) with Lu1 = Lv1 = 1 (flat, even).
    const size_t n = s.vertices.size();
    const size_t side = size_t(std::lround(std::sqrt(double(n))));
    ASSERT_EQ(side * side, n);  // symmetric bulge: same level both ways
    EXPECT_GT(side, 3u);
    EXPECT_TRUE(same(s.vertices[side - 1].position, Vec3{128, 0, 0}));
    EXPECT_TRUE(same(s.vertices[side - 2].position, Vec3{64, 0, 0}));  // column 1: one segment
    EXPECT_TRUE(same(s.vertices[n - 1].position, Vec3{128, 128, 0}));
    // No degenerate or repeated triangles; all indices inside.
    for (size_t k = 0; k < s.indices.size(); k += 3) {
        EXPECT_GT(model::triangle_area(s.vertices[s.indices[k]].position, s.vertices[s.indices[k + 1]].position,
                                       s.vertices[s.indices[k + 2]].position),
                  0.0);
    }
    // Area: the flat blocks exactly, the bulge more than flat.
    EXPECT_GT(area(s), 128.0 * 128.0);
}

TEST(Quake3Geometry, PatchNormalsAgreeWithTheWinding) {
    // Quake 3 winds front faces clockwise seen from the normal (polygons, and RB_SurfaceGrid's order).
    Quake3Map q = box();
    const int f = add_patch(q, 5, 3, half_cylinder(5, 3, 64, 64));
    const model::Map m = build(q, 6);
    const model::Surface& s = face(m, f);
    for (size_t k = 0; k < s.indices.size(); k += 3) {
        const auto& a = s.vertices[s.indices[k]];
        const auto& b2 = s.vertices[s.indices[k + 1]];
        const auto& c = s.vertices[s.indices[k + 2]];
        const Vec3 n = model::cross(b2.position - a.position, c.position - a.position);
        EXPECT_LT(model::dot(n, a.normal + b2.normal + c.normal), 0) << "triangle " << k / 3;
    }
}

TEST(Quake3Geometry, CollapsedPatchEdgeDropsDegenerateTrianglesAndKeepsControlNormals) {
    // A cone: the whole j = 2 row is one point (the apex).
    const auto at = [](int i, int j) {
        Ctrl c;
        if (j == 2) {
            c.z = 64;
            return c;
        }
        const double a = M_PI / 2 * i / 2;
        const double r = j == 0 ? 64 : 32;
        c.x = r * std::cos(a);
        c.y = r * std::sin(a);
        c.z = j == 0 ? 0 : 32;
        return c;
    };
    Quake3Map q = box();
    const int f = add_patch(q, 3, 3, at);
    for (int level : {1, 2, 4, 8}) {
        const model::Map m = build(q, level);
        const model::Surface& s = face(m, f);
        const uint32_t W = uint32_t(level) + 1;
        ASSERT_EQ(s.vertices.size(), size_t(W) * W);
        // The apex row: W copies of the apex; each quad next to it loses one triangle.
        EXPECT_EQ(s.indices.size(), size_t(W - 1) * (W - 1) * 6 - size_t(W - 1) * 3);
        for (uint32_t x = 0; x < W; ++x) {
            EXPECT_TRUE(same(s.vertices[(W - 1) * W + x].position, Vec3{0, 0, 64}));
            EXPECT_NEAR(model::length(s.vertices[(W - 1) * W + x].normal), 1.0, 1e-5);  // from the control normals
        }
        for (size_t k = 0; k < s.indices.size(); k += 3)
            EXPECT_GT(model::triangle_area(s.vertices[s.indices[k]].position, s.vertices[s.indices[k + 1]].position,
                                           s.vertices[s.indices[k + 2]].position),
                      quake3::kDegenerateArea);
    }
}

TEST(Quake3Geometry, MeshDropsDegenerateAndRepeatedTriangles) {
    Quake3Map q = box();
    const std::vector<Vec3> pts = {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}, {10, 0, 0}, {0, 10, 0}, {5, 0, 0}, {0, 0, 0}};
    const int f = add_mesh(q, pts,
                           {0, 1, 2,    // kept
                            6, 3, 4,    // the same positions and winding, other vertices: a repeat
                            1, 2, 0,    // the same triangle rotated: a repeat
                            0, 2, 1,    // reversed winding: kept (the back face)
                            0, 5, 1,    // collinear: degenerate
                            0, 0, 2});  // two equal corners: degenerate
    const model::Map m = build(q);
    const model::Surface& s = face(m, f);
    EXPECT_EQ(s.kind, model::SurfaceKind::mesh);
    ASSERT_EQ(s.indices, (std::vector<uint32_t>{0, 1, 2, 0, 2, 1}));
    EXPECT_EQ(s.vertices.size(), pts.size());
    EXPECT_EQ(s.vertices[3].color, (std::array<uint8_t, 4>{10, 20, 30, 40}));
    EXPECT_FALSE(s.plane);
    EXPECT_EQ(s.lightmap, -1);  // lightmapNum -3: vertex lit
}

TEST(Quake3Geometry, BillboardsKeepOneVertexAtTheirOrigin) {
    Quake3Map q = box();
    quake3::dsurface_t s{};
    s.surfaceType = quake3::MST_FLARE;
    s.fogNum = -1;
    s.lightmapNum = 0;
    s.lightmapOrigin[0] = 1, s.lightmapOrigin[1] = 2, s.lightmapOrigin[2] = 3;
    s.lightmapVecs[0][0] = 1, s.lightmapVecs[0][1] = 0.5f;
    s.lightmapVecs[2][2] = 1;
    s.firstVert = 1 << 30;  // flares use no vertexes: never read
    q.surfaces.push_back(s);
    q.models[0].numSurfaces = int32_t(q.surfaces.size());
    const model::Map m = build(q);
    const model::Surface& b = face(m, int(q.surfaces.size()) - 1);
    EXPECT_EQ(b.kind, model::SurfaceKind::billboard);
    ASSERT_EQ(b.vertices.size(), 1u);
    EXPECT_TRUE(b.indices.empty());
    EXPECT_TRUE(same(b.vertices[0].position, Vec3{1, 2, 3}));
    EXPECT_TRUE(same(b.vertices[0].normal, Vec3{0, 0, 1}));
    EXPECT_EQ(b.vertices[0].color, (std::array<uint8_t, 4>{255, 128, 0, 255}));
    EXPECT_EQ(b.lightmap, -1);
}

TEST(Quake3Geometry, MaterialFlagsFromShaderBits) {
    Quake3Map q = box();
    const auto shader = [&](const char* name, int32_t surf, int32_t contents) {
        quake3::dshader_t s{};
        std::strncpy(s.shader, name, sizeof s.shader);
        s.surfaceFlags = surf;
        s.contentFlags = contents;
        q.shaders.push_back(s);
        return q.shaders.size() - 1;
    };
    const size_t sky = shader("textures/skies/space", 0x4 | 0x400, 1);
    const size_t nodraw = shader("textures/x/caulkish", 0x80, 1);
    const size_t hint = shader("textures/x/h", 0x100, 0);
    const size_t water = shader("textures/liquids/water", 0, 0x20 | 0x20000000);
    const size_t lava = shader("textures/liquids/lava", 0, 0x8);
    const size_t trigger = shader("textures/x/t", 0, 0x40000000);
    const size_t clip = shader("textures/x/c", 0, 0x10000);
    const size_t alpha = shader("textures/x/grate", 0x10000, 1);
    const size_t byname = shader("textures/common/trigger", 0, 1);
    const size_t weapclip = shader("textures/common/weapclip", 0, 1);
    const size_t plain = shader("textures/x/wall", 0, 1);
    const model::Map m = build(q);
    using namespace model;
    EXPECT_EQ(m.materials[sky].flags, uint32_t(kSky | kUnlit));
    EXPECT_EQ(m.materials[nodraw].flags, uint32_t(kNodraw));
    EXPECT_EQ(m.materials[hint].flags, uint32_t(kNodraw));
    EXPECT_EQ(m.materials[water].flags, uint32_t(kWater | kTranslucent));
    EXPECT_EQ(m.materials[lava].flags, uint32_t(kWater));
    EXPECT_EQ(m.materials[trigger].flags, uint32_t(kTrigger));
    EXPECT_EQ(m.materials[clip].flags, uint32_t(kClip));
    EXPECT_EQ(m.materials[alpha].flags, uint32_t(kAlphaTest));
    EXPECT_EQ(m.materials[byname].flags, uint32_t(kTrigger | kNodraw));
    EXPECT_EQ(m.materials[weapclip].flags, uint32_t(kClip | kNodraw));
    EXPECT_EQ(m.materials[plain].flags, 0u);
    EXPECT_EQ(m.materials[plain].name, "textures/x/wall");
}

TEST(Quake3Geometry, LightmapPagesBecomeImagesInOrder) {
    Quake3Map q = box();
    q.lightmaps.assign(3 * sizeof(quake3::dlightmap_t), 0);
    for (size_t p = 0; p < 3; ++p)
        std::fill_n(q.lightmaps.begin() + long(p * sizeof(quake3::dlightmap_t)), sizeof(quake3::dlightmap_t),
                    uint8_t(50 + 60 * p));
    q.surfaces[0].lightmapNum = 2;
    q.surfaces[1].lightmapNum = 1;
    q.surfaces[2].lightmapNum = 7;   // no such page (q3map2 -external): no lightmap
    q.surfaces[3].lightmapNum = -1;  // none
    for (int k = 0; k < 4; ++k) {  // page coordinates in the middle of the page
        q.verts[size_t(k)].lightmap[0] = 0.5f;
        q.verts[size_t(k)].lightmap[1] = 0.5f;
    }
    const Bsp bsp = Bsp::parse(q.build(), "gen.bsp");
    model::BuildOptions o;
    o.lightmaps = true;
    const model::Map m = model::build(bsp, o);
    EXPECT_EQ(face(m, 0).lightmap, 2);
    EXPECT_EQ(face(m, 1).lightmap, 1);
    EXPECT_EQ(face(m, 2).lightmap, -1);
    EXPECT_EQ(face(m, 3).lightmap, -1);
    EXPECT_EQ(face(m, 2).styles[0], 255);
    ASSERT_EQ(m.diagnostics.size(), 1u);  // face 2's missing page is reported, not fatal
    EXPECT_EQ(m.diagnostics[0].lump, "faces");
    EXPECT_NE(m.diagnostics[0].message.find("1 faces (the first: face 2)"), std::string::npos) << m.diagnostics[0].message;
    EXPECT_NE(m.diagnostics[0].message.find("3 pages"), std::string::npos) << m.diagnostics[0].message;
    ASSERT_EQ(m.lightmaps.size(), 1u);
    const model::LightmapAtlas& atlas = m.lightmaps[0];
    const model::Vertex& v = face(m, 0).vertices[0];
    const size_t x = size_t(v.lightmap_uv.x * float(atlas.width)), y = size_t(v.lightmap_uv.y * float(atlas.height));
    EXPECT_EQ(atlas.rgb[(y * atlas.width + x) * 3], 50 + 60 * 2);
}

TEST(Quake3Geometry, WorldOnlyAndRtcwFoliage) {
    Quake3Map q = box();
    q.models.push_back(q.models[0]);
    q.models[1].firstSurface = 2;
    q.models[1].numSurfaces = 2;
    model::BuildOptions o;
    o.all_models = false;
    EXPECT_EQ(model::build(Bsp::parse(q.build(), "gen.bsp"), o).models.size(), 1u);
    const model::Map both = model::build(Bsp::parse(q.build(), "gen.bsp"));
    ASSERT_EQ(both.models.size(), 2u);
    EXPECT_EQ(both.models[1].index, 1u);
    EXPECT_EQ(both.models[1].surfaces.size(), 2u);
    EXPECT_EQ(both.models[1].surfaces[0].face, 2);

    // RTCW (IBSP 47): MST_FOLIAGE (5) is built as its base mesh; Quake 3 has no type 5.
    Quake3Map r = box();
    add_mesh(r, {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}}, {0, 1, 2}, quake3::MST_FOLIAGE);
    r.version = 47;
    const model::Map rtcw = model::build(Bsp::parse(r.build(), "rtcw.bsp"));
    EXPECT_EQ(rtcw.models[0].surfaces.back().kind, model::SurfaceKind::mesh);
    EXPECT_EQ(rtcw.models[0].surfaces.back().indices.size(), 3u);
    r.version = 46;
    EXPECT_THROW(model::build(Bsp::parse(r.build(), "q3.bsp")), Error);
}

// kinds = patches (what collision builds): exactly the patches of the full build,
// in every model, vertex for vertex, levels chosen alike; the other faces are
// not read, so a damaged polygon or mesh does not stop it.
TEST(Quake3Geometry, PatchKindBuildsThePatchesOfEveryModelAlike) {
    Quake3Map q = box();
    add_patch(q, 5, 3, half_cylinder(5, 3, 40, 64));
    add_mesh(q, {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}}, {0, 1, 2});
    add_patch(q, 3, 5, half_cylinder(3, 5, 30, 32, 64));  // model 1's, below
    q.models.push_back(q.models[0]);
    q.models[0].numSurfaces = int32_t(q.surfaces.size()) - 1;
    q.models[1].firstSurface = int32_t(q.surfaces.size()) - 1;
    q.models[1].numSurfaces = 1;
    const model::Map full = model::build(Bsp::parse(q.build(), "gen.bsp"));
    model::BuildOptions o;
    o.lightmaps = false;
    o.kinds = model::kind_bit(model::SurfaceKind::patch);
    q.surfaces[1].shaderNum = 999;            // a polygon, damaged
    q.surfaces[q.surfaces.size() - 2].numIndexes = 4;  // the mesh, damaged
    const model::Map patches = model::build(Bsp::parse(q.build(), "gen.bsp"), o);
    ASSERT_EQ(patches.models.size(), 2u);
    size_t compared = 0;
    for (size_t m = 0; m < 2; ++m) {
        std::vector<const model::Surface*> expected;
        for (const auto& s : full.models[m].surfaces)
            if (s.kind == model::SurfaceKind::patch) expected.push_back(&s);
        ASSERT_EQ(patches.models[m].surfaces.size(), expected.size()) << m;
        for (size_t k = 0; k < expected.size(); ++k) {
            const model::Surface& a = *expected[k];
            const model::Surface& b = patches.models[m].surfaces[k];
            EXPECT_EQ(b.kind, model::SurfaceKind::patch);
            EXPECT_EQ(b.face, a.face);
            EXPECT_EQ(b.indices, a.indices);
            ASSERT_EQ(b.vertices.size(), a.vertices.size());
            for (size_t v = 0; v < a.vertices.size(); ++v) EXPECT_TRUE(same(a.vertices[v].position, b.vertices[v].position));
            ++compared;
        }
    }
    EXPECT_EQ(compared, 3u);  // the room's floor patch, the cylinder, model 1's
    EXPECT_THROW(model::build(Bsp::parse(q.build(), "gen.bsp")), Error);  // the full build refuses the damage
    q.surfaces.back().shaderNum = 999;  // a patch, damaged: still an error
    try {
        (void)model::build(Bsp::parse(q.build(), "gen.bsp"), o);
        ADD_FAILURE() << "a patch naming shader 999 was built";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, "faces") << e.what();
        EXPECT_NE(std::string(e.what()).find("face " + std::to_string(q.surfaces.size() - 1) + ": shaderNum 999"),
                  std::string::npos)
            << e.what();
    }
}

// ---------------------------------------------------------------------------
// Hostile records: an Error naming the lump, never a crash or huge allocation.

namespace {

void expect_error(const Quake3Map& q, std::string_view lump, int level = -1) {
    const Bsp bsp = Bsp::parse(q.build(), "bad.bsp");
    model::BuildOptions o;
    o.patch_level = level;
    try {
        (void)model::build(bsp, o);
        ADD_FAILURE() << "no error; expected one in lump " << lump;
    } catch (const Error& e) {
        EXPECT_EQ(e.where().lump, lump) << e.what();
        EXPECT_EQ(e.where().file, "bad.bsp");
        EXPECT_GE(e.where().offset, 0) << e.what();
    }
}

}  // namespace

TEST(Quake3Geometry, BrokenReferencesAreErrors) {
    {
        Quake3Map q = box();
        q.surfaces[2].shaderNum = 99;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[2].firstVert = int32_t(q.verts.size()) - 2;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[1].numVerts = INT32_MAX;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[1].firstIndex = -6;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[1].numIndexes = 5;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.meshverts[7].offset = 4;  // face 1 has 4 vertexes
        expect_error(q, "meshverts");
    }
    {
        Quake3Map q = box();
        q.meshverts[7].offset = -1;
        expect_error(q, "meshverts");
    }
    {
        Quake3Map q = box();
        q.surfaces[6].patchWidth = 4;  // even
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[6].patchWidth = 1;
        q.surfaces[6].patchHeight = 9;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[6].patchHeight = 5;  // 3 x 5 != 9 vertexes
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[6].patchWidth = q.surfaces[6].patchHeight = 65537;  // 65537^2 overflows 32 bits
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[3].surfaceType = 0;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.surfaces[3].surfaceType = 77;
        expect_error(q, "faces");
    }
    {
        Quake3Map q = box();
        q.models[0].numSurfaces = INT32_MAX;
        expect_error(q, "models");
    }
    {
        Quake3Map q = box();
        q.models[0].firstSurface = -1;
        expect_error(q, "models");
    }
}

TEST(Quake3Geometry, OverlappingFacesAndHugePatchesHitTheBudgets) {
    {
        // 4000 faces all naming the same 2000 vertexes: 8 million copies refused.
        Quake3Map q = box();
        std::vector<Vec3> pts;
        std::vector<int> offs;
        for (int k = 0; k < 2000; ++k) pts.push_back({float(k), float(k % 7), 0});
        for (int k = 0; k + 2 < 2000; k += 3) offs.insert(offs.end(), {k, k + 1, k + 2});
        const int f = add_mesh(q, pts, offs);
        for (int k = 0; k < 4000; ++k) q.surfaces.push_back(q.surfaces[size_t(f)]);
        q.models[0].numSurfaces = int32_t(q.surfaces.size());
        expect_error(q, "faces");
    }
    {
        // Faces share meshvert runs (q3map2 does), but 3 vertexes cannot use 300000 meshverts.
        Quake3Map q = box();
        std::vector<int> offs;
        for (int k = 0; k < 100000; ++k) offs.insert(offs.end(), {0, 1, 2});
        add_mesh(q, {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}}, offs);
        expect_error(q, "faces");
        // Shared runs are fine: 2000 quads all naming the first face's six meshverts.
        Quake3Map shared = box();
        for (int k = 0; k < 2000; ++k) {
            quake3::dsurface_t s = shared.surfaces[0];
            s.firstVert = int32_t(shared.verts.size());
            for (int v = 0; v < 4; ++v) {
                quake3::drawVert_t d = shared.verts[size_t(v)];
                d.xyz[2] += float(k);
                shared.verts.push_back(d);
            }
            shared.surfaces.push_back(s);
        }
        shared.models[0].numSurfaces = int32_t(shared.surfaces.size());
        const model::Map m = build(shared);
        EXPECT_EQ(m.models[0].surfaces.size(), shared.surfaces.size());
        EXPECT_EQ(m.models[0].surfaces.back().indices.size(), 6u);
    }
    {
        // A 3 x 40001 patch (20000 blocks) at the largest fixed level: 17 x 320001 > kMaxPatchVertices.
        Quake3Map q = box();
        add_patch(q, 3, 40001, [](int i, int j) {
            Ctrl c;
            c.x = i;
            c.y = j;
            return c;
        });
        static_assert(17ull * 320001 > quake3::kMaxPatchVertices);
        expect_error(q, "faces", 1000);  // clamped to kMaxPatchLevel
        // Adaptive on the same flat patch: one segment each, well inside the budget.
        const model::Map m = build(q, -1);
        EXPECT_EQ(m.models[0].surfaces.back().vertices.size(), 2u * 20001u);
    }
}

TEST(Quake3Geometry, RandomCorruptionGivesErrorsNotCrashes) {
    Quake3Map base = box();
    add_patch(base, 5, 3, half_cylinder(5, 3, 32, 64));
    add_mesh(base, {{0, 0, 0}, {10, 0, 0}, {0, 10, 0}}, {0, 1, 2});
    const Bytes good = base.build();
    const Bsp probe = Bsp::parse(good, "probe.bsp");
    std::mt19937 rng(1234);
    size_t errors = 0, built = 0;
    for (int round = 0; round < 1500; ++round) {
        Bytes bad = good;
        // Flip bytes inside faces, models and meshverts (the records the geometry trusts least).
        const size_t lump = std::array<size_t, 3>{quake3::Map::LUMP_SURFACES, quake3::Map::LUMP_MODELS,
                                                  quake3::Map::LUMP_DRAWINDEXES}[size_t(round % 3)];
        const auto& e = probe.entry(lump);
        for (int k = 0; k < 1 + round % 4; ++k) {
            const size_t at = size_t(e.offset) + rng() % size_t(e.length);
            bad[at] = uint8_t(rng());
        }
        try {
            const model::Map m = model::build(Bsp::parse(bad, "fuzz.bsp"));
            for (const auto& model : m.models)
                for (const auto& s : model.surfaces)
                    for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size());
            ++built;
        } catch (const Error&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 100u);
    EXPECT_GT(built, 100u);
}
