// Quake 3 / RTCW geometry (model::build) on every Quake 3 and RTCW corpus
// map, checked against the map's own records (read here through the typed
// view): polygons on their planes, triangle area equal to the source
// triangles', no degenerate or repeated triangles, vertex attributes as
// stored, billboards kept, lightmap pages wired to their surfaces; patches at
// the adaptive level and at fixed levels 1..8: vertices on the Bezier
// (evaluated here in double precision), control points at the parameter
// corners, and watertight where two patches share an edge.
#include "corpus.hpp"
#include "run.hpp"

#include "formats/quake3/geometry.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/model.hpp>
#include <bspkit/png.hpp>
#include <bspkit/textures.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

using namespace bspkit;
using namespace bspkit::test;
using model::Vec3;

namespace {

std::vector<std::string> quake3_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f) == "quake3") out.push_back(f.relpath);
    return out;
}

Vec3 v3(const float* p) { return {p[0], p[1], p[2]}; }
bool same(Vec3 a, Vec3 b) { return a.x == b.x && a.y == b.y && a.z == b.z; }
uint32_t fbits(float f) { return std::bit_cast<uint32_t>(f == 0.0f ? 0.0f : f); }
std::array<uint32_t, 3> key(Vec3 p) { return {fbits(p.x), fbits(p.y), fbits(p.z)}; }

/// A triangle by its positions, rotated so the smallest comes first (winding kept).
std::array<std::array<uint32_t, 3>, 3> tri_key(Vec3 a, Vec3 b, Vec3 c) {
    std::array<std::array<uint32_t, 3>, 3> k{key(a), key(b), key(c)};
    const size_t first = size_t(std::min_element(k.begin(), k.end()) - k.begin());
    std::rotate(k.begin(), k.begin() + long(first), k.end());
    return k;
}

double area_d(Vec3 a, Vec3 b, Vec3 c) {
    const double ux = double(b.x) - a.x, uy = double(b.y) - a.y, uz = double(b.z) - a.z;
    const double vx = double(c.x) - a.x, vy = double(c.y) - a.y, vz = double(c.z) - a.z;
    const double x = uy * vz - uz * vy, y = uz * vx - ux * vz, z = ux * vy - uy * vx;
    return 0.5 * std::sqrt(x * x + y * y + z * z);
}

struct Source {
    explicit Source(const std::string& relpath) : bsp(Bsp::open(corpus_file(relpath).path)), view(bsp) {}
    Bsp bsp;
    quake3::Map view;
};

model::Map build(const Bsp& bsp, int level) {
    model::BuildOptions o;
    o.patch_level = level;
    return model::build(bsp, o);
}

// --- Bezier reference (double) ----------------------------------------------

double bern(int k, double t) { return k == 0 ? (1 - t) * (1 - t) : k == 1 ? 2 * t * (1 - t) : t * t; }

struct Patch {
    const quake3::dsurface_t* s;
    std::span<const quake3::drawVert_t> verts;
    const quake3::drawVert_t& at(int i, int j) const { return verts[size_t(s->firstVert + j * s->patchWidth + i)]; }
    int nu() const { return (s->patchWidth - 1) / 2; }
    int nv() const { return (s->patchHeight - 1) / 2; }
    /// Attribute k (0-2 xyz, 3-4 st, 5-6 lightmap) of block (c, r) at (u, v).
    double eval(int c, int r, double u, double v, int k) const {
        double out = 0;
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 3; ++i) {
                const auto& p = at(2 * c + i, 2 * r + j);
                const double value = k < 3 ? p.xyz[k] : k < 5 ? p.st[k - 3] : p.lightmap[k - 5];
                out += bern(i, u) * bern(j, v) * value;
            }
        return out;
    }
};

/// Distance from `p` to the quadratic Bezier curve a, b, c.
double curve_distance(Vec3 p, Vec3 a, Vec3 b, Vec3 c) {
    const auto dist = [&](double t) {
        double d2 = 0;
        const double pa[3] = {a.x, a.y, a.z}, pb[3] = {b.x, b.y, b.z}, pc[3] = {c.x, c.y, c.z}, pp[3] = {p.x, p.y, p.z};
        for (int k = 0; k < 3; ++k) {
            const double q = bern(0, t) * pa[k] + bern(1, t) * pb[k] + bern(2, t) * pc[k] - pp[k];
            d2 += q * q;
        }
        return d2;
    };
    constexpr int N = 64;
    int best = 0;
    for (int i = 1; i <= N; ++i)
        if (dist(double(i) / N) < dist(double(best) / N)) best = i;
    double lo = std::max(0.0, (best - 1.0) / N), hi = std::min(1.0, (best + 1.0) / N);
    for (int it = 0; it < 60; ++it) {
        const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        if (dist(m1) < dist(m2)) hi = m2;
        else lo = m1;
    }
    return std::sqrt(dist((lo + hi) / 2));
}

class Quake3GeometryCorpus : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST(Quake3GeometryCorpusFiles, AllQuake3AndRtcwMapsArePresent) {
    const auto paths = quake3_paths();
    for (const char* required : {"q3_v46/nexuiz_ons-reborn.bsp", "q3_v46/oa_ctf2.bsp", "q3_v46/oa_oacmpctf3.bsp",
                                 "q3_v46/q3_mp_lobby.bsp", "q3_ibsp47/rtcw_testroom.bsp"}) {
        EXPECT_NE(std::find(paths.begin(), paths.end(), required), paths.end()) << required;
        EXPECT_EQ(read_corpus(corpus_file(required)).size(), corpus_file(required).size) << required;
    }
}

// A map whose lightmaps were kept outside it (q3map2 -external): `lightmaps`
// writes nothing and points at the warning instead of claiming no surface is lit.
TEST(Quake3GeometryCorpusFiles, LightmapsVerbOnExternalLightmapsNamesTheReason) {
    const CorpusFile& f = corpus_file("q3_v46/nexuiz_ons-reborn.bsp");
    (void)read_corpus(f);
    const RunResult r = run_cli({"lightmaps", f.path.string(), "-o", temp_dir("q3_external_lm")});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find("the lightmaps lump is empty (lightmaps kept outside the map"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no lightmaps (no surface kept one: see the warnings above)"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("no lit surfaces"), std::string::npos) << r.err;
}

// q3map2 -external: the lightmaps lump is empty and the pages are images the
// engines load as maps/<map>/lm_NNNN.tga (.jpg, .png). oa_oacmpctf3's own 40
// pages written that way (TGA stored bottom-up, as q3map2 writes them; page 1
// as PNG) beside a copy whose lightmaps lump is emptied give back the same
// model, the same glb and the same render as the map itself.
TEST(Quake3GeometryCorpusFiles, ExternalLightmapsGiveBackTheInternalOnes) {
    const CorpusFile& f = corpus_file("q3_v46/oa_oacmpctf3.bsp");
    Bytes bytes = read_corpus(f);
    const Bsp original = Bsp::parse(bytes, f.path.string());
    const LumpEntry lump = original.entry(quake3::Map::LUMP_LIGHTMAPS);
    const size_t pages = size_t(lump.length) / sizeof(quake3::dlightmap_t);
    ASSERT_EQ(pages, 40u);
    const std::filesystem::path dir = temp_dir("q3_external_lightmaps");
    const std::filesystem::path folder = dir / "game" / "maps" / "ext_ctf3";
    std::filesystem::create_directories(folder);
    for (size_t p = 0; p < pages; ++p) {
        const uint8_t* rgb = bytes.data() + lump.offset + p * sizeof(quake3::dlightmap_t);
        char name[32];
        std::snprintf(name, sizeof name, "lm_%04zu", p);
        if (p == 1) {
            write_png(folder / (std::string(name) + ".png"), 128, 128, 3, ByteSpan(rgb, 128 * 128 * 3));
            continue;
        }
        Bytes tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 0, 128, 0, 24, 0};  // origin bottom left
        for (int y = 127; y >= 0; --y)
            for (int x = 0; x < 128; ++x) {
                const uint8_t* px = rgb + (size_t(y) * 128 + size_t(x)) * 3;
                tga.insert(tga.end(), {px[2], px[1], px[0]});
            }
        write_file_atomic(folder / (std::string(name) + ".tga"), tga);
    }
    // The lump's length in the directory set to 0: its bytes stay, unread.
    const int32_t zero = 0;
    std::memcpy(bytes.data() + 8 + 8 * quake3::Map::LUMP_LIGHTMAPS + 4, &zero, 4);
    const std::filesystem::path copy = dir / "ext_ctf3.bsp";
    write_file_atomic(copy, bytes);

    const model::Map want = model::build(original);
    ASSERT_FALSE(want.lightmaps.empty());
    const Bsp external = Bsp::open(copy);
    model::Map got = model::build(external);
    EXPECT_TRUE(got.lightmaps.empty());
    ASSERT_FALSE(got.external_lightmaps.empty());
    EXPECT_EQ(got.external_lightmaps.folder, "maps/ext_ctf3");
    textures::SearchPath path;
    path.game_dirs = {dir / "game"};
    path.textures = false;
    const textures::Resolved r = textures::resolve(got, external, path);
    EXPECT_EQ(r.lightmap_pages, pages);
    EXPECT_TRUE(r.missing.empty());
    EXPECT_TRUE(got.external_lightmaps.empty()) << "taken by resolve()";
    for (const Diagnostic& d : got.diagnostics) ADD_FAILURE() << "left: " << d.message;
    ASSERT_EQ(got.lightmaps.size(), want.lightmaps.size());
    for (size_t i = 0; i < want.lightmaps.size(); ++i) {
        EXPECT_EQ(got.lightmaps[i].width, want.lightmaps[i].width);
        EXPECT_EQ(got.lightmaps[i].height, want.lightmaps[i].height);
        EXPECT_TRUE(got.lightmaps[i].rgb == want.lightmaps[i].rgb) << "atlas page " << i;
    }
    ASSERT_EQ(got.models.size(), want.models.size());
    size_t lit = 0;
    for (size_t m = 0; m < want.models.size(); ++m) {
        ASSERT_EQ(got.models[m].surfaces.size(), want.models[m].surfaces.size());
        for (size_t k = 0; k < want.models[m].surfaces.size(); ++k) {
            const model::Surface& a = want.models[m].surfaces[k];
            const model::Surface& b = got.models[m].surfaces[k];
            EXPECT_EQ(b.lightmap, a.lightmap) << "model " << m << " surface " << k;
            lit += a.lightmap >= 0;
            ASSERT_EQ(b.vertices.size(), a.vertices.size());
            for (size_t v = 0; v < a.vertices.size(); ++v) {  // bit for bit: unlit patches hold NaN here
                const auto bits = [](model::Vec2 uv) {
                    return std::pair(std::bit_cast<uint32_t>(uv.x), std::bit_cast<uint32_t>(uv.y));
                };
                EXPECT_EQ(bits(b.vertices[v].lightmap_uv), bits(a.vertices[v].lightmap_uv))
                    << "model " << m << " surface " << k << " vertex " << v;
            }
        }
    }
    EXPECT_GT(lit, 1000u);

    // The CLI: export and render with --game-dir give the map's own bytes, with
    // --no-textures too (the search then looks for the pages alone).
    for (const std::string ext : {".glb", ".png"})
        for (const bool textured : {true, false}) {
            const std::string verb = ext == ".glb" ? "export" : "render";
            const std::string a = (dir / ("orig" + ext)).string(), b = (dir / ("ext" + ext)).string();
            std::vector<std::string> want = {verb, f.path.string(), "-o", a};
            std::vector<std::string> got = {verb, copy.string(), "-o", b, "--game-dir", (dir / "game").string()};
            if (!textured) {
                want.push_back("--no-textures");
                got.push_back("--no-textures");
            }
            ASSERT_EQ(run_cli(want).exit_code, 0);
            const RunResult rb = run_cli(got);
            ASSERT_EQ(rb.exit_code, 0) << rb.err;
            EXPECT_NE(rb.err.find("40 lightmap pages loaded from outside the map"), std::string::npos) << rb.err;
            EXPECT_EQ(rb.err.find("lightmaps lump is empty"), std::string::npos) << rb.err;
            if (!textured) {  // no texture is looked for
                EXPECT_EQ(rb.err.find("not found"), std::string::npos) << rb.err;
            }
            EXPECT_TRUE(read_file(a) == read_file(b)) << verb << (textured ? "" : " --no-textures") << ": " << a
                                                      << " and " << b << " differ";
        }

    // A page not found: reported like a texture, its surfaces left unlit and counted.
    std::filesystem::remove(folder / "lm_0003.tga");
    model::Map partial = model::build(external);
    const textures::Resolved rp = textures::resolve(partial, external, path);
    EXPECT_EQ(rp.lightmap_pages, pages - 1);
    ASSERT_EQ(rp.missing.size(), 1u);
    EXPECT_EQ(rp.missing[0].material, "maps/ext_ctf3/lm_0003");
    ASSERT_EQ(partial.diagnostics.size(), 1u);
    EXPECT_NE(partial.diagnostics[0].message.find("surfaces name lightmap pages not found outside the map (1 of 40 "
                                                  "pages, maps/ext_ctf3/lm_NNNN)"),
              std::string::npos)
        << partial.diagnostics[0].message;
    const RunResult lm = run_cli({"lightmaps", copy.string(), "-o", (dir / "lm").string(), "--game-dir",
                                  (dir / "game").string()});
    EXPECT_EQ(lm.exit_code, 0) << lm.err;
    EXPECT_NE(lm.err.find("texture \"maps/ext_ctf3/lm_0003\" not found"), std::string::npos) << lm.err;
    EXPECT_TRUE(std::filesystem::exists(dir / "lm" / "lightmap_style0.png"));
}

// Polygons, meshes, billboards, materials and lightmaps at the default (adaptive) level.
TEST_P(Quake3GeometryCorpus, FacesMatchTheirRecords) {
    const Source src(GetParam());
    const model::Map m = build(src.bsp, -1);
    const auto shaders = src.view.shaders();
    const auto faces = src.view.surfaces();
    const auto verts = src.view.vertexes();
    const auto meshverts = src.view.meshverts();
    const auto models = src.view.models();
    const size_t pages = src.bsp.decoded(quake3::Map::LUMP_LIGHTMAPS).size() / sizeof(quake3::dlightmap_t);
    const ByteSpan lightmaps = src.bsp.decoded(quake3::Map::LUMP_LIGHTMAPS);

    ASSERT_EQ(m.materials.size(), shaders.size());
    for (size_t i = 0; i < shaders.size(); ++i)
        EXPECT_EQ(m.materials[i].name, std::string(shaders[i].shader, strnlen(shaders[i].shader, 64)));
    if (pages > 0) {
        ASSERT_EQ(m.lightmaps.size(), 1u);  // style 0 only
        EXPECT_EQ(m.lightmaps[0].style, 0u);
    } else {
        EXPECT_TRUE(m.lightmaps.empty());
    }

    ASSERT_EQ(m.models.size(), models.size());
    size_t polygons = 0, meshes = 0, billboards = 0, planes = 0, sampled = 0, lit = 0;
    for (size_t mi = 0; mi < models.size(); ++mi) {
        const model::Model& mm = m.models[mi];
        EXPECT_EQ(mm.index, mi);
        ASSERT_EQ(mm.surfaces.size(), size_t(models[mi].numSurfaces));
        double area_out = 0, area_src = 0;
        for (size_t k = 0; k < mm.surfaces.size(); ++k) {
            const model::Surface& s = mm.surfaces[k];
            const size_t fi = size_t(models[mi].firstSurface) + k;
            ASSERT_EQ(s.face, int64_t(fi));
            const quake3::dsurface_t& f = faces[fi];
            EXPECT_EQ(s.material, uint32_t(f.shaderNum));
            for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size()) << "face " << fi;
            // No degenerate or repeated triangles (same positions, same winding) in any surface.
            std::set<std::array<std::array<uint32_t, 3>, 3>> seen;
            for (size_t t = 0; t < s.indices.size(); t += 3) {
                const Vec3 a = s.vertices[s.indices[t]].position, b = s.vertices[s.indices[t + 1]].position,
                           c = s.vertices[s.indices[t + 2]].position;
                EXPECT_GT(model::triangle_area(a, b, c), 0.0) << "face " << fi;
                EXPECT_TRUE(seen.insert(tri_key(a, b, c)).second) << "face " << fi << " repeats a triangle";
            }
            const bool has_lightmap = pages > 0 && f.lightmapNum >= 0 && size_t(f.lightmapNum) < pages &&
                                      f.surfaceType != quake3::MST_FLARE;
            EXPECT_EQ(s.lightmap, has_lightmap ? f.lightmapNum : -1) << "face " << fi;
            EXPECT_EQ(s.styles[0], has_lightmap ? 0 : 255);

            if (f.surfaceType == quake3::MST_FLARE) {
                ++billboards;
                EXPECT_EQ(s.kind, model::SurfaceKind::billboard);
                ASSERT_EQ(s.vertices.size(), 1u);
                EXPECT_TRUE(s.indices.empty());
                EXPECT_TRUE(same(s.vertices[0].position, v3(f.lightmapOrigin)));
                continue;
            }
            if (f.surfaceType == quake3::MST_PATCH) {
                EXPECT_EQ(s.kind, model::SurfaceKind::patch);
                continue;  // see the patch tests
            }
            const bool polygon = f.surfaceType == quake3::MST_PLANAR;
            EXPECT_EQ(s.kind, polygon ? model::SurfaceKind::polygon : model::SurfaceKind::mesh);
            polygons += polygon;
            meshes += !polygon;
            // Vertices as stored.
            ASSERT_EQ(s.vertices.size(), size_t(f.numVerts));
            for (int32_t i = 0; i < f.numVerts; ++i) {
                const quake3::drawVert_t& d = verts[size_t(f.firstVert + i)];
                const model::Vertex& v = s.vertices[size_t(i)];
                ASSERT_TRUE(same(v.position, v3(d.xyz)));
                ASSERT_TRUE(same(v.normal, v3(d.normal)));
                ASSERT_EQ(v.uv, (model::Vec2{d.st[0], d.st[1]}));
                ASSERT_EQ(std::memcmp(v.color.data(), d.color, 4), 0);
                if (!has_lightmap) {
                    ASSERT_EQ(v.lightmap_uv, (model::Vec2{d.lightmap[0], d.lightmap[1]}));
                    continue;
                }
                // The atlas texel under the vertex is the page texel under its stored coordinates.
                ++lit;
                const double px = d.lightmap[0] * 128.0, py = d.lightmap[1] * 128.0;
                const double fx = px - std::floor(px), fy = py - std::floor(py);
                if (px < 0 || py < 0 || px >= 128 || py >= 128 || fx < 0.2 || fx > 0.8 || fy < 0.2 || fy > 0.8) continue;
                const model::LightmapAtlas& atlas = m.lightmaps[0];
                const size_t ax = size_t(double(v.lightmap_uv.x) * atlas.width),
                             ay = size_t(double(v.lightmap_uv.y) * atlas.height);
                ASSERT_LT(ax, atlas.width);
                ASSERT_LT(ay, atlas.height);
                const uint8_t* page = lightmaps.data() + size_t(f.lightmapNum) * sizeof(quake3::dlightmap_t) +
                                      (size_t(py) * 128 + size_t(px)) * 3;
                ASSERT_EQ(std::memcmp(atlas.rgb.data() + (ay * atlas.width + ax) * 3, page, 3), 0) << "face " << fi;
                ++sampled;
            }
            // Plane: lightmapVecs[2] through the first vertex, when it is a unit normal.
            const Vec3 n = v3(f.lightmapVecs[2]);
            if (polygon && std::abs(model::length(n) - 1) < 1e-3 && f.numVerts > 0) {
                ++planes;
                ASSERT_TRUE(s.plane) << "face " << fi;
                EXPECT_TRUE(same(s.plane->normal, n));
                const double dist = model::dot(n, v3(verts[size_t(f.firstVert)].xyz));
                EXPECT_NEAR(s.plane->dist, dist, 1e-3);
                // q3map2 snaps vertexes to 1/8 unit grids: within a quarter unit of the plane.
                for (uint32_t i : s.indices) EXPECT_NEAR(model::dot(n, s.vertices[i].position), dist, 0.25) << "face " << fi;
            } else {
                EXPECT_FALSE(s.plane) << "face " << fi;
            }
            // Area: the source's distinct, non-degenerate triangles.
            std::set<std::array<std::array<uint32_t, 3>, 3>> distinct;
            for (int32_t t = 0; t + 2 < f.numIndexes; t += 3) {
                const Vec3 a = v3(verts[size_t(f.firstVert + meshverts[size_t(f.firstIndex + t)].offset)].xyz);
                const Vec3 b = v3(verts[size_t(f.firstVert + meshverts[size_t(f.firstIndex + t + 1)].offset)].xyz);
                const Vec3 c = v3(verts[size_t(f.firstVert + meshverts[size_t(f.firstIndex + t + 2)].offset)].xyz);
                if (area_d(a, b, c) > quake3::kDegenerateArea && distinct.insert(tri_key(a, b, c)).second)
                    area_src += area_d(a, b, c);
            }
            EXPECT_EQ(s.indices.size(), distinct.size() * 3) << "face " << fi;
            for (size_t t = 0; t < s.indices.size(); t += 3)
                area_out += area_d(s.vertices[s.indices[t]].position, s.vertices[s.indices[t + 1]].position,
                                   s.vertices[s.indices[t + 2]].position);
        }
        EXPECT_NEAR(area_out, area_src, 1e-9 * std::max(1.0, area_src)) << "model " << mi;
    }
    // Every face of the records is accounted for.
    size_t src_polygons = 0, src_meshes = 0, src_flares = 0;
    for (const auto& md : models)
        for (int32_t k = 0; k < md.numSurfaces; ++k) {
            const int t = faces[size_t(md.firstSurface + k)].surfaceType;
            src_polygons += t == quake3::MST_PLANAR;
            src_meshes += t == quake3::MST_TRIANGLE_SOUP || t == quake3::MST_FOLIAGE;
            src_flares += t == quake3::MST_FLARE;
        }
    // Faces naming a page the file does not hold (q3map2 -external) are reported once.
    size_t missing = 0;
    for (const auto& md : models)
        for (int32_t k = 0; k < md.numSurfaces; ++k) {
            const auto& f = faces[size_t(md.firstSurface + k)];
            missing += f.surfaceType != quake3::MST_FLARE && f.lightmapNum >= 0 && size_t(f.lightmapNum) >= pages;
        }
    if (missing == 0) {
        EXPECT_TRUE(m.diagnostics.empty());
    } else {
        ASSERT_EQ(m.diagnostics.size(), 1u);
        EXPECT_EQ(m.diagnostics[0].message.find(std::to_string(missing) + " faces"), 0u) << m.diagnostics[0].message;
    }
    EXPECT_EQ(polygons, src_polygons);
    EXPECT_EQ(meshes, src_meshes);
    EXPECT_EQ(billboards, src_flares);
    EXPECT_GT(polygons, 0u);
    EXPECT_GT(planes, 0u);
    if (pages > 0) {
        EXPECT_GT(lit, 0u);
        EXPECT_GT(sampled, 0u);
    }
}

// Patches at the adaptive level and at fixed levels 1..8.
TEST_P(Quake3GeometryCorpus, PatchesAreBezierAndWatertight) {
    const Source src(GetParam());
    const auto faces = src.view.surfaces();
    const auto verts = src.view.vertexes();
    const auto models = src.view.models();
    // Patch faces of the models, and the control edges they share with another patch face.
    std::vector<size_t> patch_faces;
    for (const auto& md : models)
        for (int32_t k = 0; k < md.numSurfaces; ++k)
            if (faces[size_t(md.firstSurface + k)].surfaceType == quake3::MST_PATCH)
                patch_faces.push_back(size_t(md.firstSurface + k));
    using EdgeKey = std::array<std::array<uint32_t, 3>, 3>;
    std::map<EdgeKey, std::set<size_t>> edges;
    for (size_t fi : patch_faces) {
        const Patch p{&faces[fi], verts};
        const int w = p.s->patchWidth, h = p.s->patchHeight;
        auto add = [&](const quake3::drawVert_t& a, const quake3::drawVert_t& b, const quake3::drawVert_t& c) {
            EdgeKey fwd{key(v3(a.xyz)), key(v3(b.xyz)), key(v3(c.xyz))}, rev{fwd[2], fwd[1], fwd[0]};
            if (fwd[0] == fwd[1] && fwd[1] == fwd[2]) return;  // collapsed: a point
            edges[std::min(fwd, rev)].insert(fi);
        };
        for (int j = 0; j < h; j += 2)
            for (int i = 0; i + 2 < w; i += 2) add(p.at(i, j), p.at(i + 1, j), p.at(i + 2, j));
        for (int i = 0; i < w; i += 2)
            for (int j = 0; j + 2 < h; j += 2) add(p.at(i, j), p.at(i, j + 1), p.at(i, j + 2));
    }
    size_t shared = 0;
    for (const auto& [k, fs] : edges) shared += fs.size() > 1;
    const std::string name = GetParam();
    if (name == "q3_v46/oa_ctf2.bsp" || name == "q3_v46/oa_oacmpctf3.bsp") {
        EXPECT_GT(patch_faces.size(), 0u);
        EXPECT_GT(shared, 0u) << "these maps have patches sharing edges";
    }

    for (int level = -1; level <= 8; ++level) {
        if (level == 0) continue;
        const model::Map m = build(src.bsp, level);
        std::map<size_t, const model::Surface*> by_face;
        for (const auto& mm : m.models)
            for (const auto& s : mm.surfaces)
                if (s.kind == model::SurfaceKind::patch) by_face[size_t(s.face)] = &s;
        ASSERT_EQ(by_face.size(), patch_faces.size());
        size_t triangles = 0, wound = 0, normals = 0, agree = 0;
        for (size_t fi : patch_faces) {
            const Patch p{&faces[fi], verts};
            const model::Surface& s = *by_face.at(fi);
            const int nu = p.nu(), nv = p.nv();
            for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size());
            for (size_t t = 0; t < s.indices.size(); t += 3)
                EXPECT_GT(model::triangle_area(s.vertices[s.indices[t]].position, s.vertices[s.indices[t + 1]].position,
                                               s.vertices[s.indices[t + 2]].position),
                          0.0);
            // Normals and winding as Quake 3 has them: the normal agrees with
            // the compiler's control normals, and triangles wind clockwise
            // seen from it (as the polygons do).
            for (size_t t = 0; t < s.indices.size(); t += 3) {
                const auto& a = s.vertices[s.indices[t]];
                const auto& b = s.vertices[s.indices[t + 1]];
                const auto& c = s.vertices[s.indices[t + 2]];
                ++triangles;
                wound += model::dot(model::cross(b.position - a.position, c.position - a.position),
                                    a.normal + b.normal + c.normal) < 0;
            }
            if (level < 0) {
                // Between one segment and the cap per column and row; every block corner is a control point.
                const int cap = quake3::kAdaptiveMaxLevel;
                EXPECT_GE(s.vertices.size(), size_t(nu + 1) * size_t(nv + 1));
                EXPECT_LE(s.vertices.size(), size_t(nu * cap + 1) * size_t(nv * cap + 1));
                std::set<std::array<uint32_t, 3>> positions;
                for (const auto& v : s.vertices) positions.insert(key(v.position));
                for (int j = 0; j < p.s->patchHeight; j += 2)
                    for (int i = 0; i < p.s->patchWidth; i += 2)
                        EXPECT_TRUE(positions.count(key(v3(p.at(i, j).xyz)))) << "face " << fi << " corner " << i << "," << j;
                continue;
            }
            // Fixed level: a (nu L + 1) x (nv L + 1) grid on the Bezier, control points at the block corners.
            const int L = level;
            const uint32_t W = uint32_t(nu * L + 1), H = uint32_t(nv * L + 1);
            ASSERT_EQ(s.vertices.size(), size_t(W) * H) << "face " << fi << " level " << L;
            EXPECT_LE(s.indices.size(), size_t(W - 1) * (H - 1) * 6);
            for (uint32_t y = 0; y < H; ++y)
                for (uint32_t x = 0; x < W; ++x) {
                    const model::Vertex& v = s.vertices[size_t(y) * W + x];
                    if (x % uint32_t(L) == 0 && y % uint32_t(L) == 0) {
                        const auto& c = p.at(int(2 * x / uint32_t(L)), int(2 * y / uint32_t(L)));
                        ASSERT_TRUE(same(v.position, v3(c.xyz))) << "face " << fi << " level " << L;
                        ASSERT_EQ(v.uv, (model::Vec2{c.st[0], c.st[1]}));
                    }
                    const int c = std::min(int(x) / L, nu - 1), r = std::min(int(y) / L, nv - 1);
                    const double u = double(int(x) - c * L) / L, vv = double(int(y) - r * L) / L;
                    const double pos[3] = {v.position.x, v.position.y, v.position.z};
                    for (int k = 0; k < 3; ++k) {
                        const double e = p.eval(c, r, u, vv, k);
                        ASSERT_NEAR(pos[k], e, 1e-3 + 1e-6 * std::abs(e)) << "face " << fi << " level " << L;
                    }
                    ASSERT_NEAR(v.uv.x, p.eval(c, r, u, vv, 3), 1e-4);
                    ASSERT_NEAR(v.uv.y, p.eval(c, r, u, vv, 4), 1e-4);
                    ASSERT_NEAR(model::length(v.normal), 1.0, 1e-3) << "face " << fi;
                    double control_normal[3] = {0, 0, 0};
                    for (int j = 0; j < 3; ++j)
                        for (int i = 0; i < 3; ++i)
                            for (int k = 0; k < 3; ++k)
                                control_normal[k] += bern(i, u) * bern(j, vv) * p.at(2 * c + i, 2 * r + j).normal[k];
                    ++normals;
                    agree += v.normal.x * control_normal[0] + v.normal.y * control_normal[1] +
                                 v.normal.z * control_normal[2] >
                             0;
                }
        }
        EXPECT_EQ(wound, triangles) << "level " << level;
        EXPECT_EQ(agree, normals) << "level " << level;
        if (!patch_faces.empty()) {
            EXPECT_GT(triangles, 0u);
        }
        // Watertight: along every control edge two patch faces share, both
        // have the same vertices on the curve, bit for bit.
        size_t checked = 0;
        for (const auto& [k, fs] : edges) {
            if (fs.size() < 2) continue;
            const Vec3 a{std::bit_cast<float>(k[0][0]), std::bit_cast<float>(k[0][1]), std::bit_cast<float>(k[0][2])};
            const Vec3 b{std::bit_cast<float>(k[1][0]), std::bit_cast<float>(k[1][1]), std::bit_cast<float>(k[1][2])};
            const Vec3 c{std::bit_cast<float>(k[2][0]), std::bit_cast<float>(k[2][1]), std::bit_cast<float>(k[2][2])};
            constexpr double eps = 0.01;
            const auto on_edge = [&](const model::Surface& s) {
                std::set<std::array<uint32_t, 3>> out;
                for (const auto& v : s.vertices) {
                    const Vec3 q = v.position;
                    bool inside = true;
                    for (int ax = 0; ax < 3; ++ax) {
                        const float qa = ax == 0 ? q.x : ax == 1 ? q.y : q.z;
                        const float lo = std::min({ax == 0 ? a.x : ax == 1 ? a.y : a.z, ax == 0 ? b.x : ax == 1 ? b.y : b.z,
                                                   ax == 0 ? c.x : ax == 1 ? c.y : c.z});
                        const float hi = std::max({ax == 0 ? a.x : ax == 1 ? a.y : a.z, ax == 0 ? b.x : ax == 1 ? b.y : b.z,
                                                   ax == 0 ? c.x : ax == 1 ? c.y : c.z});
                        inside = inside && qa >= lo - eps && qa <= hi + eps;
                    }
                    if (inside && curve_distance(q, a, b, c) < eps) out.insert(key(q));
                }
                return out;
            };
            const auto first = on_edge(*by_face.at(*fs.begin()));
            EXPECT_GE(first.size(), 2u);
            if (level > 0) {
                EXPECT_EQ(first.size(), size_t(level) + 1) << "face " << *fs.begin() << " level " << level;
            }
            for (size_t other : fs) {
                EXPECT_EQ(on_edge(*by_face.at(other)), first)
                    << "faces " << *fs.begin() << " and " << other << " differ along a shared edge at level " << level;
                ++checked;
            }
        }
        EXPECT_EQ(checked > 0, shared > 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, Quake3GeometryCorpus, ::testing::ValuesIn(quake3_paths()),
                         [](const auto& info) { return test_name(info.param); });
