// Geometry, lightmaps and textures of every Quake 1 / BSP2 / GoldSrc,
// Quake 2 and Nightfire corpus map, checked against facts the test derives
// from the records itself: each face's corner loop, plane, texture axes and
// the luxel rule are computed here from the typed records and raw lump bytes,
// never taken from the builder.
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/model.hpp>
#include <bspkit/png.hpp>
#include <bspkit/file_io.hpp>

#include "corpus.hpp"
#include "model/builders.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

using namespace bspkit;
using namespace bspkit::test;

namespace {

using D3 = std::array<double, 3>;

D3 sub(D3 a, D3 b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
D3 cross3(D3 a, D3 b) { return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}; }
double dot3(D3 a, D3 b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double len3(D3 a) { return std::sqrt(dot3(a, a)); }
D3 d3(const float p[3]) { return {p[0], p[1], p[2]}; }
D3 d3(const model::Vec3& v) { return {v.x, v.y, v.z}; }

/// Vector area of a polygon loop (Newell's formula): its length is the
/// area of a planar loop; for any loop it equals the summed half cross
/// products of any triangulation bounded by the loop.
D3 newell(const std::vector<D3>& loop) {
    D3 n{0, 0, 0};
    for (size_t i = 0; i < loop.size(); ++i) {
        const D3& a = loop[i];
        const D3& b = loop[(i + 1) % loop.size()];
        n[0] += 0.5 * (a[1] - b[1]) * (a[2] + b[2]);
        n[1] += 0.5 * (a[2] - b[2]) * (a[0] + b[0]);
        n[2] += 0.5 * (a[0] - b[0]) * (a[1] + b[1]);
    }
    return n;
}

double perimeter(const std::vector<D3>& loop) {
    double p = 0;
    for (size_t i = 0; i < loop.size(); ++i) p += len3(sub(loop[(i + 1) % loop.size()], loop[i]));
    return p;
}

/// How far a builder's area may stray from the polygon's: it drops corners
/// within 0.01 units of the line through their neighbours (the compilers'
/// plane tolerance), which moves the outline by at most that much.
double area_tolerance(double area, double perimeter) { return 0.5 * 0.01 * perimeter + 1e-6 * area + 1e-6; }

/// One face / surface as the records describe it, computed by the test.
struct RecordFace {
    std::vector<D3> corners;                   ///< loop (Quake) or vertex block (Nightfire)
    std::vector<std::array<uint32_t, 3>> tris;  ///< Nightfire draw triangles (block-relative)
    D3 vector_area{};  ///< Newell vector (loops) or summed triangle half cross products (Nightfire)
    double area = 0;   ///< its length
    double perimeter = 0;
    D3 normal{};
    double dist = 0;
    double off_plane = 0;  ///< farthest corner from the plane (stored data: compilers leave some off)
    double vecs[2][4] = {};
    double width = 1, height = 1;  ///< UV denominators (1: UVs in texels)
    bool lit = false;
    int styles = 0;
    std::array<uint8_t, 4> style_ids{255, 255, 255, 255};  ///< the light style of each slot
    int64_t lightofs = -1;
    double luxel = 16;  ///< texels per luxel (Nightfire: the projection is in luxels)
    double lm_vecs[2][4] = {};
    int bytes_per_sample = 3;
    int64_t fixed_w = 0, fixed_h = 0;  ///< BSPX DECOUPLED_LM: the lightmap's own size (grid based at 0)
};

struct Records {
    std::vector<RecordFace> faces;
    std::vector<std::pair<int64_t, int64_t>> models;  ///< first face, count
    ByteSpan lighting;
    int64_t pad = 4;  ///< lightmaps start on this byte boundary (12: RGBLIGHTING, 4 grey samples x 3)
};

void set_vecs(double out[2][4], const float (&in)[2][4]) {
    for (int a = 0; a < 2; ++a)
        for (int k = 0; k < 4; ++k) out[a][k] = in[a][k];
}

/// The miptex width / height of directory entry `i`, read from the raw lump.
std::pair<uint32_t, uint32_t> miptex_size(ByteSpan lump, int64_t i) {
    if (lump.size() < 4 || i < 0 || i >= load<int32_t>(lump.data())) return {0, 0};
    const int32_t ofs = load<int32_t>(lump.data() + 4 + 4 * i);
    if (ofs < 0 || size_t(ofs) + 40 > lump.size()) return {0, 0};
    return {load<uint32_t>(lump.data() + ofs + 16), load<uint32_t>(lump.data() + ofs + 20)};
}

std::string miptex_name(ByteSpan lump, int64_t i) {
    if (lump.size() < 4 || i < 0 || i >= load<int32_t>(lump.data())) return "";
    const int32_t ofs = load<int32_t>(lump.data() + 4 + 4 * i);
    if (ofs < 0 || size_t(ofs) + 40 > lump.size()) return "";
    const char* p = reinterpret_cast<const char*>(lump.data() + ofs);
    return std::string(p, std::find(p, p + 16, '\0'));
}

/// A BSPX lump read straight from the file (directory at the end of the last
/// lump rounded up to 4: "BSPX", count, {name[24], ofs, len}); empty if absent.
ByteSpan raw_bspx_lump(const Bsp& bsp, std::string_view name) {
    const ByteSpan file = bsp.file_bytes();
    uint64_t end = 0;
    for (size_t i = 0; i < bsp.lump_count(); ++i)
        end = std::max<uint64_t>(end, uint64_t(bsp.entry(i).offset) + uint64_t(bsp.entry(i).length));
    end = (end + 3) & ~uint64_t(3);
    if (end + 8 > file.size() || std::string_view(reinterpret_cast<const char*>(file.data() + end), 4) != "BSPX")
        return {};
    const int32_t n = load<int32_t>(file.data() + end + 4);
    for (int32_t k = 0; k < n && end + 8 + 32 * uint64_t(k + 1) <= file.size(); ++k) {
        const char* e = reinterpret_cast<const char*>(file.data() + end + 8 + 32 * k);
        if (std::string_view(e, strnlen(e, 24)) == name)
            return file.subspan(size_t(load<int32_t>(file.data() + end + 8 + 32 * k + 24)),
                                size_t(load<int32_t>(file.data() + end + 8 + 32 * k + 28)));
    }
    return {};
}

Records quake1_records(const Bsp& bsp) {
    Records r;
    const quake1::Map q(bsp);
    r.lighting = q.lighting();
    // ericw-tools' BSPX lighting: RGB samples (3 bytes at 3 x offset) and
    // per-face DECOUPLED_LM records (uint16 w, h; int32 offset; float rows[2][4]).
    const ByteSpan rgb = raw_bspx_lump(bsp, "RGBLIGHTING"), decoupled = raw_bspx_lump(bsp, "DECOUPLED_LM");
    if (!rgb.empty()) {
        r.lighting = rgb;
        r.pad = 12;
    }
    const ByteSpan textures = q.textures();
    q.visit([&](const auto& t) {
        for (const auto& m : t.models) r.models.push_back({m.firstface, m.numfaces});
        for (const auto& f : t.faces) {
            RecordFace rf;
            for (int64_t k = 0; k < int64_t(f.numedges); ++k) {
                const int64_t e = t.surfedges[size_t(f.firstedge + k)].edge;
                const auto& edge = t.edges[size_t(std::llabs(e))];
                rf.corners.push_back(d3(t.vertexes[e < 0 ? edge.v[1] : edge.v[0]].point));
            }
            rf.vector_area = newell(rf.corners);
            rf.area = len3(rf.vector_area);
            rf.perimeter = perimeter(rf.corners);
            const auto& p = t.planes[size_t(f.planenum)];
            const double sign = f.side ? -1 : 1;
            rf.normal = {sign * p.normal[0], sign * p.normal[1], sign * p.normal[2]};
            rf.dist = sign * p.dist;
            const auto& ti = t.texinfo[size_t(f.texinfo)];
            set_vecs(rf.vecs, ti.vecs);
            set_vecs(rf.lm_vecs, ti.vecs);
            const auto [w, h] = miptex_size(textures, ti.miptex);
            rf.width = w ? w : 1;
            rf.height = h ? h : 1;
            while (rf.styles < 4 && f.styles[rf.styles] != 255) ++rf.styles;
        std::copy_n(f.styles, 4, rf.style_ids.begin());
            std::copy_n(f.styles, 4, rf.style_ids.begin());
            rf.lightofs = f.lightofs;
            rf.bytes_per_sample = bsp.format() == Format::goldsrc ? 3 : 1;
            const size_t index = r.faces.size();
            const bool own_size = !decoupled.empty() && decoupled.size() == t.faces.size() * 40;
            if (own_size) {
                const uint8_t* d = decoupled.data() + index * 40;
                rf.fixed_w = load<uint16_t>(d);
                rf.fixed_h = load<uint16_t>(d + 2);
                rf.lightofs = load<int32_t>(d + 4);
                for (int a = 0; a < 2; ++a)
                    for (int k = 0; k < 4; ++k) rf.lm_vecs[a][k] = load<float>(d + 8 + 16 * a + 4 * k);
                rf.luxel = 1;
            }
            if (!rgb.empty()) {
                rf.bytes_per_sample = 3;
                if (rf.lightofs >= 0) rf.lightofs *= 3;
            }
            rf.lit = rf.styles > 0 && rf.lightofs >= 0 && !(ti.flags & quake1::TEX_SPECIAL) &&
                     (!own_size || (rf.fixed_w > 0 && rf.fixed_h > 0));
            r.faces.push_back(std::move(rf));
        }
    });
    return r;
}

Records quake2_records(const Bsp& bsp) {
    Records r;
    const quake2::Map q(bsp);
    r.lighting = q.lighting();
    for (const auto& m : q.models()) r.models.push_back({m.firstface, m.numfaces});
    for (const auto& f : q.faces()) {
        RecordFace rf;
        for (int64_t k = 0; k < f.numedges; ++k) {
            const int64_t e = q.surfedges()[size_t(f.firstedge + k)].edge;
            const auto& edge = q.edges()[size_t(std::llabs(e))];
            rf.corners.push_back(d3(q.vertices()[e < 0 ? edge.v[1] : edge.v[0]].point));
        }
        rf.vector_area = newell(rf.corners);
        rf.area = len3(rf.vector_area);
        rf.perimeter = perimeter(rf.corners);
        const auto& p = q.planes()[f.planenum];
        const double sign = f.side ? -1 : 1;
        rf.normal = {sign * p.normal[0], sign * p.normal[1], sign * p.normal[2]};
        rf.dist = sign * p.dist;
        const auto& ti = q.texinfo()[size_t(f.texinfo)];
        set_vecs(rf.vecs, ti.vecs);
        set_vecs(rf.lm_vecs, ti.vecs);
        while (rf.styles < 4 && f.styles[rf.styles] != 255) ++rf.styles;
        std::copy_n(f.styles, 4, rf.style_ids.begin());
        rf.lightofs = f.lightofs;
        rf.lit = rf.styles > 0 && f.lightofs >= 0 && !(ti.flags & (quake2::SURF_SKY | quake2::SURF_WARP));
        r.faces.push_back(std::move(rf));
    }
    return r;
}

Records nightfire_records(const Bsp& bsp) {
    Records r;
    const nightfire::Map q(bsp);
    r.lighting = q.lighting();
    for (const auto& m : q.models()) r.models.push_back({m.SurfacesIndex, m.SurfacesCount});
    for (const auto& s : q.surfaces()) {
        RecordFace rf;
        for (uint32_t k = 0; k < s.VerticesCount; ++k) rf.corners.push_back(d3(q.vertices()[s.VerticesIndex + k].Point));
        for (uint32_t k = 0; k + 2 < s.DrawIndicesCount; k += 3) {
            std::array<uint32_t, 3> tri;
            for (uint32_t c = 0; c < 3; ++c) tri[c] = q.draw_indices()[s.DrawIndicesIndex + k + c].TriangleCorner;
            const D3 c = cross3(sub(rf.corners[tri[1]], rf.corners[tri[0]]), sub(rf.corners[tri[2]], rf.corners[tri[0]]));
            for (int k = 0; k < 3; ++k) rf.vector_area[size_t(k)] += 0.5 * c[size_t(k)];
            rf.tris.push_back(tri);
        }
        rf.area = len3(rf.vector_area);
        const auto& p = q.planes()[s.PlaneIndex];
        rf.normal = d3(p.Normal);
        rf.dist = p.Distance;
        const auto& tp = q.projections()[s.TextureProjectionIndex];
        const auto& lp = q.projections()[s.LightmapProjectionIndex];
        for (int k = 0; k < 4; ++k) {
            rf.vecs[0][k] = tp.S[k];
            rf.vecs[1][k] = tp.T[k];
            rf.lm_vecs[0][k] = lp.S[k];
            rf.lm_vecs[1][k] = lp.T[k];
        }
        while (rf.styles < 4 && s.LightStyles[rf.styles] != 255) ++rf.styles;
        std::copy_n(s.LightStyles, 4, rf.style_ids.begin());
        rf.lightofs = s.LightingOffset;
        rf.lit = rf.styles > 0 && s.LightingOffset >= 0 && s.DrawIndicesCount > 0;
        rf.luxel = 1;
        r.faces.push_back(std::move(rf));
    }
    return r;
}

Records records_of(const Bsp& bsp) {
    Records r;
    switch (bsp.format()) {
        case Format::quake2: r = quake2_records(bsp); break;
        case Format::nightfire: r = nightfire_records(bsp); break;
        default: r = quake1_records(bsp); break;
    }
    for (RecordFace& rf : r.faces)
        for (const D3& c : rf.corners) rf.off_plane = std::max(rf.off_plane, std::abs(dot3(rf.normal, c) - rf.dist));
    return r;
}

/// The builder's output before lightmap packing (images per surface).
model::Map unpacked(const Bsp& bsp) {
    model::Map map;
    map.format = bsp.format();
    model::BuildOptions options;
    switch (bsp.format()) {
        case Format::quake2: quake2::build_model(bsp, options, map); break;
        case Format::nightfire: nightfire::build_model(bsp, options, map); break;
        default: quake1::build_model(bsp, options, map); break;
    }
    return map;
}

double project(const double v[4], D3 p) { return p[0] * v[0] + p[1] * v[1] + p[2] * v[2] + v[3]; }

/// The luxel grid of a record face by the rule (16 texels, or 1 for Nightfire).
struct Grid {
    int64_t w = 0, h = 0;
    double base[2] = {0, 0};
};
Grid grid_of(const RecordFace& rf) {
    double mins[2] = {1e300, 1e300}, maxs[2] = {-1e300, -1e300};
    for (const D3& p : rf.corners)
        for (int a = 0; a < 2; ++a) {
            mins[a] = std::min(mins[a], project(rf.lm_vecs[a], p));
            maxs[a] = std::max(maxs[a], project(rf.lm_vecs[a], p));
        }
    Grid g;
    if (rf.fixed_w > 0) {  // DECOUPLED_LM: sample (i, j) at lightmap coordinate (i, j)
        g.w = rf.fixed_w;
        g.h = rf.fixed_h;
        return g;
    }
    for (int a = 0; a < 2; ++a) g.base[a] = std::floor(mins[a] / rf.luxel);
    g.w = int64_t(std::ceil(maxs[0] / rf.luxel) - g.base[0] + 1);
    g.h = int64_t(std::ceil(maxs[1] / rf.luxel) - g.base[1] + 1);
    return g;
}

struct Png {
    uint32_t width = 0, height = 0;
    Bytes rgba;
};
/// Decodes with libpng itself (not bspkit's reader).
Png libpng_decode(ByteSpan file) {
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    Png out;
    if (!png_image_begin_read_from_memory(&img, file.data(), file.size())) return out;
    img.format = PNG_FORMAT_RGBA;
    out.rgba.resize(PNG_IMAGE_SIZE(img));
    if (!png_image_finish_read(&img, nullptr, out.rgba.data(), 0, nullptr)) {
        png_image_free(&img);
        return {};
    }
    out.width = img.width;
    out.height = img.height;
    return out;
}

/// Relative paths of every corpus map of the formats built here.
std::vector<std::string> geometry_files() {
    std::vector<std::string> out;
    for (const CorpusFile& f : corpus_files()) {
        const auto fmt = expected_format(f);
        if (fmt && (*fmt == "quake1" || *fmt == "bsp2" || *fmt == "goldsrc" || *fmt == "quake2" || *fmt == "nightfire"))
            out.push_back(f.relpath);
    }
    return out;
}

/// Faces whose stored corners themselves lie off their stored plane (the
/// builder keeps the corners as stored): how many beyond 0.01 and beyond 1
/// unit, per file, as a separate script counted them in the raw lumps (and
/// the faces were inspected); any other file must have none. The plane and
/// winding checks apply to the other faces.
struct OffPlane {
    const char* file;
    int beyond_001, beyond_1;
    const char* reason;
};
const OffPlane kOffPlane[] = {
    {"hl1_v30/cs16_de_torabora.bsp", 1, 0,
     "face 3053: a corner stored at 831.99 on the plane at 832 (0.01001 after float rounding)"},
    {"q2_v38/alienarena_dm-deathray.bsp", 97, 0,
     "corners welded by the compiler to nearby vertices of other faces (up to 0.66 units off)"},
    {"q2_v38/librequake_lq_e0m2_quake2.bsp", 41, 1, "welded corners (up to 2.2 units off)"},
    {"q2_v38/q2_base1.bsp", 214, 11,
     "id's retail compile: welded corners, and 11 faces naming another plane (face 2736: corners at y = -264, "
     "plane y = -168)"},
};

class QuakeGeometryCorpus : public ::testing::TestWithParam<std::string> {};

TEST(QuakeGeometryCorpusList, CoversEveryFormat) {
    std::set<std::string> formats;
    for (const std::string& f : geometry_files()) formats.insert(*expected_format(corpus_file(f)));
    EXPECT_EQ(formats, (std::set<std::string>{"quake1", "bsp2", "goldsrc", "quake2", "nightfire"}));
    EXPECT_GE(geometry_files().size(), 19u);
}

TEST_P(QuakeGeometryCorpus, TrianglesUvsAndAreasMatchTheRecords) {
    const CorpusFile& f = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const Records rec = records_of(bsp);
    const model::Map map = unpacked(bsp);
    EXPECT_TRUE(map.diagnostics.empty()) << map.diagnostics.front().message;
    ASSERT_EQ(map.models.size(), rec.models.size());
    size_t triangles = 0;
    int beyond_001 = 0, beyond_1 = 0;
    for (size_t m = 0; m < map.models.size(); ++m) {
        const model::Model& mdl = map.models[m];
        EXPECT_EQ(mdl.index, m);
        const auto [first, count] = rec.models[m];
        double expected = 0, tolerance = 0;
        for (int64_t k = 0; k < count; ++k) {
            expected += rec.faces[size_t(first + k)].area;
            tolerance += area_tolerance(rec.faces[size_t(first + k)].area, rec.faces[size_t(first + k)].perimeter);
        }
        double area = 0;
        std::set<int64_t> seen;
        for (const model::Surface& s : mdl.surfaces) {
            ASSERT_GE(s.face, first);
            ASSERT_LT(s.face, first + count);
            ASSERT_TRUE(seen.insert(s.face).second) << "face " << s.face << " twice";
            const RecordFace& rf = rec.faces[size_t(s.face)];
            ASSERT_TRUE(s.plane);
            EXPECT_NEAR(s.plane->normal.x, rf.normal[0], 1e-6);
            EXPECT_NEAR(s.plane->normal.y, rf.normal[1], 1e-6);
            EXPECT_NEAR(s.plane->normal.z, rf.normal[2], 1e-6);
            EXPECT_NEAR(s.plane->dist, rf.dist, 1e-3);
            ASSERT_EQ(s.indices.size() % 3, 0u);
            ASSERT_FALSE(s.indices.empty());
            std::set<std::array<D3, 3>> tris;
            const bool planar = rf.off_plane <= 0.01;
            double face_area = 0;
            D3 face_vector{0, 0, 0};
            for (size_t i = 0; i < s.indices.size(); i += 3) {
                std::array<D3, 3> t;
                for (int c = 0; c < 3; ++c) {
                    ASSERT_LT(s.indices[i + c], s.vertices.size());
                    t[size_t(c)] = d3(s.vertices[s.indices[i + c]].position);
                    // On the face's plane.
                    if (planar) {
                        ASSERT_NEAR(dot3(rf.normal, t[size_t(c)]), rf.dist, 0.01) << "face " << s.face;
                    }
                }
                const D3 n = cross3(sub(t[1], t[0]), sub(t[2], t[0]));
                const double longest =
                    std::max({len3(sub(t[1], t[0])), len3(sub(t[2], t[0])), len3(sub(t[2], t[1]))});
                // Not degenerate: its height over the longest side is real.
                ASSERT_GT(len3(n) / longest, 1e-4) << "degenerate triangle in face " << s.face;
                // Wound clockwise seen from the front, as the engines draw it.
                if (planar) {
                    EXPECT_LT(dot3(n, rf.normal), 0) << "face " << s.face;
                }
                std::sort(t.begin(), t.end());
                ASSERT_TRUE(tris.insert(t).second) << "duplicated triangle in face " << s.face;
                face_area += 0.5 * len3(n);
                for (int k = 0; k < 3; ++k) face_vector[size_t(k)] += 0.5 * n[size_t(k)];
                ++triangles;
            }
            area += len3(face_vector);
            // The triangles cover the face's loop exactly once: same vector
            // area (whatever the loop's shape, planar or not) ...
            const double tol = area_tolerance(rf.area, rf.perimeter);
            EXPECT_LE(len3(sub(face_vector, rf.vector_area)), tol) << "face " << s.face;
            // ... and, where the stored corners are planar, the same area.
            if (planar) {
                EXPECT_NEAR(face_area, rf.area, tol) << "face " << s.face;
            }
            for (const model::Vertex& v : s.vertices) {
                const D3 p = d3(v.position);
                // A corner of the face as stored.
                EXPECT_NE(std::find(rf.corners.begin(), rf.corners.end(), p), rf.corners.end());
                EXPECT_EQ(v.normal, s.plane->normal);
                const double u = project(rf.vecs[0], p) / rf.width, w = project(rf.vecs[1], p) / rf.height;
                ASSERT_NEAR(v.uv.x, u, 1e-4 * std::max(1.0, std::abs(u))) << "face " << s.face;
                ASSERT_NEAR(v.uv.y, w, 1e-4 * std::max(1.0, std::abs(w))) << "face " << s.face;
            }
        }
        EXPECT_NEAR(area, expected, tolerance) << "model " << m;
    }
    EXPECT_GT(triangles, 0u);
    for (const RecordFace& rf : rec.faces) {
        beyond_001 += rf.off_plane > 0.01;
        beyond_1 += rf.off_plane > 1.0;
    }
    const auto known = std::find_if(std::begin(kOffPlane), std::end(kOffPlane),
                                    [&](const OffPlane& o) { return f.relpath == o.file; });
    const bool listed = known != std::end(kOffPlane);
    EXPECT_EQ(beyond_001, listed ? known->beyond_001 : 0) << "faces with corners over 0.01 units off their plane";
    EXPECT_EQ(beyond_1, listed ? known->beyond_1 : 0) << "faces with corners over 1 unit off their plane";
    // Material sizes: the miptex header for Quake 1 / GoldSrc, 0 (texels) otherwise.
    for (const auto& mdl : map.models)
        for (const auto& s : mdl.surfaces) {
            const auto& mat = map.materials.at(s.material);
            const RecordFace& rf = rec.faces[size_t(s.face)];
            EXPECT_EQ(double(mat.width ? mat.width : 1), rf.width);
            EXPECT_EQ(double(mat.height ? mat.height : 1), rf.height);
        }
    RecordProperty("triangles", int(triangles));
}

TEST_P(QuakeGeometryCorpus, LightmapsFollowTheLuxelRuleAndTheLightingLump) {
    const CorpusFile& f = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const Records rec = records_of(bsp);
    const model::Map map = unpacked(bsp);
    // Every lit face's claim fits in the lighting lump; measure how much of it they cover.
    std::vector<std::pair<int64_t, int64_t>> claims;
    for (const RecordFace& rf : rec.faces) {
        if (!rf.lit) continue;
        const Grid g = grid_of(rf);
        const int64_t bytes = g.w * g.h * rf.styles * rf.bytes_per_sample;
        ASSERT_LE(rf.lightofs + bytes, int64_t(rec.lighting.size()));
        claims.push_back({rf.lightofs, rf.lightofs + bytes});
    }
    std::sort(claims.begin(), claims.end());
    // The faces' claims tile the lump: what lies between them is only the
    // zero padding ericw-tools adds to start each lightmap on a 4-byte
    // boundary, and nothing follows the last one (one listed exception).
    int64_t covered = 0, end = 0;
    for (const auto& [a, b] : claims) {
        if (a > end) {
            EXPECT_LT(a - end, rec.pad) << "unclaimed lighting bytes at " << end;
            EXPECT_EQ(a % rec.pad, 0) << "unclaimed lighting bytes at " << end;
            for (int64_t i = end; i < a; ++i) ASSERT_EQ(rec.lighting[size_t(i)], 0) << "padding byte " << i;
        }
        covered += std::max<int64_t>(0, b - std::max(a, end));
        end = std::max(end, b);
    }
    // svencoop_q2dm1: 25296 zero bytes after the last lightmap, claimed by no face.
    const int64_t tail = f.relpath == "hl1_v30/svencoop_q2dm1.bsp" ? 25296 : 0;
    EXPECT_EQ(int64_t(rec.lighting.size()) - end, tail);
    for (int64_t i = end; i < int64_t(rec.lighting.size()); ++i) ASSERT_EQ(rec.lighting[size_t(i)], 0);
    if (bsp.format() == Format::nightfire) {
        // The rule worked out for Nightfire tiles its lighting lump exactly.
        EXPECT_EQ(covered, int64_t(rec.lighting.size()));
        for (size_t i = 1; i < claims.size(); ++i) EXPECT_EQ(claims[i].first, claims[i - 1].second);
    }
    RecordProperty("lighting_bytes", int(rec.lighting.size()));
    RecordProperty("lighting_covered", int(covered));

    size_t lit = 0;
    for (const auto& mdl : map.models)
        for (const model::Surface& s : mdl.surfaces) {
            const RecordFace& rf = rec.faces[size_t(s.face)];
            if (!rf.lit) {
                EXPECT_EQ(s.lightmap, -1) << "face " << s.face;
                continue;
            }
            ASSERT_GE(s.lightmap, 0) << "face " << s.face;
            ++lit;
            const model::LightmapImage& img = map.lightmap_images.at(size_t(s.lightmap));
            const Grid g = grid_of(rf);
            ASSERT_EQ(img.width, uint64_t(g.w)) << "face " << s.face;
            ASSERT_EQ(img.height, uint64_t(g.h)) << "face " << s.face;
            ASSERT_EQ(img.styles.size(), size_t(rf.styles));
            const uint8_t* src = rec.lighting.data() + rf.lightofs;
            for (const auto& slot : img.styles) {
                ASSERT_EQ(slot.size(), size_t(g.w * g.h * 3));
                for (int64_t i = 0; i < g.w * g.h; ++i)
                    for (int c = 0; c < 3; ++c)
                        ASSERT_EQ(slot[size_t(i * 3 + c)], src[i * rf.bytes_per_sample + (rf.bytes_per_sample == 3 ? c : 0)]);
                src += g.w * g.h * rf.bytes_per_sample;
            }
            for (const model::Vertex& v : s.vertices) {
                // Luxel centres: uv * size - 0.5 is the luxel coordinate of the corner.
                const D3 p = d3(v.position);
                const double lx = project(rf.lm_vecs[0], p) / rf.luxel - g.base[0];
                const double ly = project(rf.lm_vecs[1], p) / rf.luxel - g.base[1];
                EXPECT_NEAR(v.lightmap_uv.x * double(g.w) - 0.5, lx, 1e-3);
                EXPECT_NEAR(v.lightmap_uv.y * double(g.h) - 0.5, ly, 1e-3);
                EXPECT_GE(lx, -1e-6);
                EXPECT_LE(lx, double(g.w - 1) + 1e-6);
            }
        }
    const size_t lit_records = size_t(std::count_if(rec.faces.begin(), rec.faces.end(), [](const RecordFace& rf) { return rf.lit; }));
    EXPECT_LE(lit, lit_records);
    RecordProperty("lit_surfaces", int(lit));
}

TEST_P(QuakeGeometryCorpus, LightmapsVerbWritesAtlasPages) {
    const CorpusFile& f = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const Records rec = records_of(bsp);
    const model::Map map = model::build(bsp);
    // One page per light style the lit faces use, in style order.
    std::set<int> styles;
    for (const RecordFace& rf : rec.faces)
        if (rf.lit)
            for (int k = 0; k < rf.styles; ++k) styles.insert(rf.style_ids[size_t(k)]);
    ASSERT_EQ(map.lightmaps.size(), styles.size());
    size_t page = 0;
    for (const int style : styles) EXPECT_EQ(map.lightmaps[page++].style, uint32_t(style));

    const std::string dir = temp_dir("qgeo_lm");
    const RunResult r = run_cli({"lightmaps", f.path.string(), "-o", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    page = 0;
    for (const int style : styles) {
        const model::LightmapAtlas& atlas = map.lightmaps[page++];
        const auto path = std::filesystem::path(dir) / ("lightmap_style" + std::to_string(style) + ".png");
        ASSERT_TRUE(std::filesystem::exists(path)) << path;
        const Png png = libpng_decode(read_file(path));
        ASSERT_EQ(png.width, atlas.width);
        ASSERT_EQ(png.height, atlas.height);
        // Corners of lit surfaces land on their own luxels in the page of
        // each slot's style.
        size_t checked = 0;
        for (const auto& mdl : map.models)
            for (const model::Surface& s : mdl.surfaces) {
                if (s.lightmap < 0 || checked > 200) continue;
                const RecordFace& rf = rec.faces[size_t(s.face)];
                const Grid g = grid_of(rf);
                int slot = 0;
                while (slot < rf.styles && rf.style_ids[size_t(slot)] != style) ++slot;
                if (slot == rf.styles) continue;  // black on this page
                for (const model::Vertex& v : s.vertices) {
                    const D3 p = d3(v.position);
                    const double lx = project(rf.lm_vecs[0], p) / rf.luxel - g.base[0] + 0.5;
                    const double ly = project(rf.lm_vecs[1], p) / rf.luxel - g.base[1] + 0.5;
                    if (std::abs(lx - std::round(lx)) < 1e-2 || std::abs(ly - std::round(ly)) < 1e-2) continue;
                    const int64_t sx = std::clamp<int64_t>(int64_t(std::floor(lx)), 0, g.w - 1);
                    const int64_t sy = std::clamp<int64_t>(int64_t(std::floor(ly)), 0, g.h - 1);
                    const uint8_t* sample = rec.lighting.data() + rf.lightofs +
                                            (int64_t(slot) * g.w * g.h + sy * g.w + sx) * rf.bytes_per_sample;
                    const size_t px = size_t(double(v.lightmap_uv.x) * png.width);
                    const size_t py = size_t(double(v.lightmap_uv.y) * png.height);
                    const uint8_t* got = png.rgba.data() + (py * png.width + px) * 4;
                    for (int c = 0; c < 3; ++c)
                        ASSERT_EQ(got[c], sample[rf.bytes_per_sample == 3 ? c : 0]) << "face " << s.face;
                    ++checked;
                }
            }
        if (style == 0) {
            EXPECT_GT(checked, 0u);
        }
    }
    size_t written = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) written += e.path().extension() == ".png";
    EXPECT_EQ(written, styles.size());
}

TEST_P(QuakeGeometryCorpus, EmbeddedTexturesDecodeAndRoundTripThroughPng) {
    const CorpusFile& f = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const std::string dir = temp_dir("qgeo_tex");
    const RunResult r = run_cli({"textures", f.path.string(), "-o", dir});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const bool q1 = bsp.format() != Format::quake2 && bsp.format() != Format::nightfire;
    if (!q1) {
        EXPECT_TRUE(std::filesystem::is_empty(dir));
        return;
    }
    const quake1::Map q(bsp);
    const ByteSpan lump = q.textures();
    const model::Map map = unpacked(bsp);
    // Each embedded miptex of the raw directory, decoded and written.
    size_t embedded = 0;
    const int32_t count = lump.size() >= 4 ? load<int32_t>(lump.data()) : 0;
    std::set<std::string> written;
    for (const auto& e : std::filesystem::directory_iterator(dir)) written.insert(e.path().filename().string());
    for (int32_t i = 0; i < count; ++i) {
        const int32_t ofs = load<int32_t>(lump.data() + 4 + 4 * i);
        if (ofs < 0) continue;
        const uint8_t* h = lump.data() + ofs;
        const uint32_t w = load<uint32_t>(h + 16), ht = load<uint32_t>(h + 20), mip0 = load<uint32_t>(h + 24);
        if (mip0 == 0) continue;  // in a WAD
        ++embedded;
        const std::string name = miptex_name(lump, i);
        const auto it = std::find_if(map.textures.begin(), map.textures.end(),
                                     [&](const model::Texture& t) { return t.name == name; });
        ASSERT_NE(it, map.textures.end()) << name;
        ASSERT_EQ(it->width, w);
        ASSERT_EQ(it->height, ht);
        // A pixel from the raw bytes and the palette (GoldSrc: the texture's own).
        const uint32_t x = w / 2 + 1, y = ht / 3;
        const uint8_t index = h[mip0 + y * w + x];
        const uint8_t* palette = quake1::quake_palette().data();
        if (bsp.format() == Format::goldsrc) {
            const uint32_t end = load<uint32_t>(h + 36) + (w / 8) * (ht / 8);
            ASSERT_EQ(load<uint16_t>(h + end), 256);
            palette = h + end + 2;
        }
        std::array<uint8_t, 4> expect = {palette[index * 3], palette[index * 3 + 1], palette[index * 3 + 2], 255};
        if (name[0] == '{' && index == 255) expect = {0, 0, 0, 0};
        const uint8_t* got = it->rgba.data() + (size_t(y) * w + x) * 4;
        EXPECT_EQ((std::array<uint8_t, 4>{got[0], got[1], got[2], got[3]}), expect) << name;
        // Round trip through bspkit's PNG writer and libpng's reader.
        const Png png = libpng_decode(encode_png(it->width, it->height, 4, it->rgba));
        ASSERT_EQ(png.width, w);
        ASSERT_EQ(png.rgba, it->rgba) << name;
        // The CLI wrote it under its sanitised name, inside DIR.
        std::string stem;
        for (char c : name) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
        EXPECT_TRUE(written.count(stem + ".png") || std::any_of(written.begin(), written.end(), [&](const std::string& n) {
                        return n.rfind(stem + "_", 0) == 0;
                    }))
            << name;
    }
    EXPECT_EQ(map.textures.size(), embedded);
    EXPECT_EQ(written.size(), embedded);
    RecordProperty("embedded_textures", int(embedded));
}

INSTANTIATE_TEST_SUITE_P(Corpus, QuakeGeometryCorpus, ::testing::ValuesIn(geometry_files()),
                         [](const auto& info) { return test_name(info.param); });

}  // namespace
