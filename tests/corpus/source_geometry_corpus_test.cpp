// Source geometry over every Source map of the corpus (v17 Bloodlines to
// v21 CS:GO, the big-endian Xbox 360 map, the LZMA repack): each builds, and
// the model agrees with the records it came from. The expected values are
// recomputed here from the typed records (dface_t, texinfo_t, ddispinfo_t,
// the lighting lump bytes, the 'sprp' game lump), never taken from the model.
//
// What the corpus says about dface_t::area: it is the area of the face's
// polygon in square units as vbsp emitted it, before T-junction fixing and
// vertex welding adjusted some corners. Per model, the triangle areas match
// the summed areas within 3e-6 (relative) on every map; per face, 96-100% of
// the faces of a map match within 0.1%, the rest are slivers that welding
// moved or collapsed (sdk2013_boxinaroom face 173 stores 1.43 but its four
// corners lie on a line).
#include "corpus.hpp"
#include "run.hpp"
#include "model/builders.hpp"

#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>
#include <bspkit/model.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <cmath>
#include <set>

namespace bspkit::source {
namespace {

using model::Vec3;
using test::CorpusFile;

std::vector<const CorpusFile*> source_files() {
    std::vector<const CorpusFile*> out;
    for (const CorpusFile& f : test::corpus_files())
        if (test::expected_format(f) == std::optional<std::string>("source")) out.push_back(&f);
    return out;
}

/// One corpus map: the file, its typed view and the builder's output before
/// lightmap packing (images and in-image lightmap UVs).
struct Built {
    Bsp bsp;
    Map view;
    model::Map map;
    explicit Built(const CorpusFile& f, const model::BuildOptions& options = {})
        : bsp(Bsp::parse(test::read_corpus(f), f.relpath)), view(bsp) {
        map.format = bsp.format();
        build_model(bsp, options, map);
    }
    /// The faces models index: faces, or faces_hdr in HDR-only maps.
    std::span<const dface_t> faces() const { return view.faces().empty() ? view.faces_hdr() : view.faces(); }
    std::vector<Vec3> corners(const dface_t& f) const {
        std::vector<Vec3> out;
        for (int k = 0; k < f.numedges; ++k) {
            const int32_t e = view.surfedges()[size_t(f.firstedge + k)].edge;
            const uint16_t v = e >= 0 ? view.edges()[size_t(e)].v[0] : view.edges()[size_t(-e)].v[1];
            const Vector& p = view.vertexes()[v].point;
            out.push_back({p.x, p.y, p.z});
        }
        return out;
    }
};

double axis(const float (&a)[4], Vec3 p) { return double(a[0]) * p.x + double(a[1]) * p.y + double(a[2]) * p.z + a[3]; }

const std::vector<const CorpusFile*>& files() {
    static const std::vector<const CorpusFile*> f = source_files();
    return f;
}

TEST(SourceGeometryCorpus, EveryMapBuildsOneSurfacePerFaceOfEveryModel) {
    ASSERT_GE(files().size(), 12u) << "the manifest lists fewer Source maps than expected";
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto models = b.view.models();
        ASSERT_EQ(b.map.models.size(), models.size());
        for (size_t m = 0; m < models.size(); ++m) {
            EXPECT_EQ(b.map.models[m].index, m);
            ASSERT_EQ(b.map.models[m].surfaces.size(), size_t(models[m].numfaces));
            for (size_t k = 0; k < b.map.models[m].surfaces.size(); ++k) {
                const model::Surface& s = b.map.models[m].surfaces[k];
                EXPECT_EQ(s.face, int64_t(models[m].firstface) + int64_t(k));
                ASSERT_LT(s.material, b.map.materials.size());
                for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size());
            }
        }
        // The full pipeline packs one atlas page per light style in use, in style order.
        const model::Map packed = model::build(b.bsp);
        std::set<uint32_t> styles;
        for (const auto& m : b.map.models)
            for (const auto& s : m.surfaces)
                if (s.lightmap >= 0)
                    for (size_t k = 0; k < b.map.lightmap_images[size_t(s.lightmap)].styles.size(); ++k)
                        styles.insert(s.styles[k]);
        ASSERT_EQ(packed.lightmaps.size(), styles.size());
        size_t page = 0;
        for (const uint32_t style : styles) EXPECT_EQ(packed.lightmaps[page++].style, style);
        EXPECT_TRUE(packed.lightmap_images.empty());
    }
}

TEST(SourceGeometryCorpus, PlanarTrianglesLieOnTheirFacePlaneAndFaceItsFront) {
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto faces = b.faces();
        size_t triangles = 0;
        double worst = 0, area = 0, projected = 0;
        for (const auto& m : b.map.models)
            for (const auto& s : m.surfaces) {
                if (s.kind == model::SurfaceKind::displacement) continue;
                const dplane_t& p = b.view.planes()[faces[size_t(s.face)].planenum];
                ASSERT_TRUE(s.plane);
                EXPECT_EQ(s.plane->normal, (Vec3{p.normal.x, p.normal.y, p.normal.z}));
                EXPECT_EQ(s.plane->dist, p.dist);
                std::set<std::array<std::array<float, 3>, 3>> seen;
                for (size_t k = 0; k < s.indices.size(); k += 3) {
                    const Vec3 a = s.vertices[s.indices[k]].position, c1 = s.vertices[s.indices[k + 1]].position,
                               c2 = s.vertices[s.indices[k + 2]].position;
                    const Vec3 n = model::cross(c1 - a, c2 - a);
                    // Not degenerate, front-facing (counter-clockwise), not repeated.
                    ASSERT_GE(model::triangle_area(a, c1, c2), 1e-3) << "face " << s.face;
                    ASSERT_GT(model::dot(n, s.plane->normal), 0) << "face " << s.face;
                    area += model::triangle_area(a, c1, c2);
                    projected += 0.5 * model::dot(n, s.plane->normal);
                    std::array<std::array<float, 3>, 3> key{{{a.x, a.y, a.z}, {c1.x, c1.y, c1.z}, {c2.x, c2.y, c2.z}}};
                    std::sort(key.begin(), key.end());
                    ASSERT_TRUE(seen.insert(key).second) << "face " << s.face << " repeats a triangle";
                    for (const Vec3& v : {a, c1, c2}) {
                        worst = std::max(worst, std::fabs(model::dot(v, s.plane->normal) - s.plane->dist));
                    }
                    ++triangles;
                }
            }
        // vbsp welds a few corners off their plane: 0.37 units at worst
        // (vtmb_ch_temple_3 face 1513); a wrong or flipped plane is off by far more.
        EXPECT_LT(worst, 0.5);
        EXPECT_GT(triangles, 0u);
        // Seen along the plane normal, the triangles keep their whole area:
        // only slivers with a welded corner tilt (sdk2013_boxinaroom face 255).
        EXPECT_GE(projected, (1 - 1e-5) * area);
    }
}

TEST(SourceGeometryCorpus, TriangleAreaPerModelMatchesTheStoredFaceAreas) {
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto faces = b.faces();
        size_t faces_total = 0, faces_matching = 0;
        for (const auto& m : b.map.models) {
            double triangles = 0, stored = 0;
            for (const auto& s : m.surfaces) {
                const dface_t& face = faces[size_t(s.face)];
                if (face.dispinfo != -1 && b.view.version() > 17) continue;
                const double a = model::surface_area(s);
                triangles += a;
                stored += face.area;
                ++faces_total;
                faces_matching += std::fabs(a - face.area) <= 1e-3 * face.area;
            }
            if (stored > 0) {
                EXPECT_NEAR(triangles, stored, 1e-3 * stored) << "model " << m.index;
            }
        }
        // Most faces match on their own (see the file comment for the rest).
        EXPECT_GE(double(faces_matching), 0.95 * double(faces_total));
    }
}

TEST(SourceGeometryCorpus, TextureCoordinatesReproduceTheTexinfoFormula) {
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto faces = b.faces();
        const auto texinfo = b.view.texinfo();
        for (const auto& m : b.map.models)
            for (const auto& s : m.surfaces) {
                const dface_t& face = faces[size_t(s.face)];
                if (face.texinfo < 0) continue;
                const texinfo_t& ti = texinfo[size_t(face.texinfo)];
                const dtexdata_t& td = b.view.texdata()[size_t(ti.texdata)];
                const model::Material& mat = b.map.materials[s.material];
                EXPECT_EQ(mat.name, b.view.texture_name(size_t(ti.texdata)).value_or("(none)"));
                EXPECT_EQ(mat.width, uint32_t(td.width));
                EXPECT_EQ(mat.height, uint32_t(td.height));
                // Texture space is mapped on the flat face: for displacements,
                // the point of the base quad under each grid vertex.
                std::vector<Vec3> at;
                if (s.kind == model::SurfaceKind::displacement) {
                    const ddispinfo_t& d = b.view.dispinfo()[size_t(face.dispinfo)];
                    const std::vector<Vec3> c = b.corners(face);
                    size_t first = 0;
                    const Vec3 sp{d.startPosition.x, d.startPosition.y, d.startPosition.z};
                    for (size_t k = 1; k < 4; ++k)
                        if (model::length(c[k] - sp) < model::length(c[first] - sp)) first = k;
                    const Vec3 p0 = c[first], p1 = c[(first + 1) % 4], p2 = c[(first + 2) % 4], p3 = c[(first + 3) % 4];
                    const int n = 1 << d.power;
                    for (int i = 0; i <= n; ++i)
                        for (int j = 0; j <= n; ++j) {
                            const float fi = float(i) / float(n), fj = float(j) / float(n);
                            const Vec3 e0 = p0 + (p1 - p0) * fi, e1 = p3 + (p2 - p3) * fi;
                            at.push_back(e0 + (e1 - e0) * fj);
                        }
                } else {
                    for (const auto& v : s.vertices) at.push_back(v.position);
                }
                ASSERT_EQ(at.size(), s.vertices.size());
                for (size_t k = 0; k < at.size(); ++k) {
                    const double u = axis(ti.textureVecs[0], at[k]) / td.width, v = axis(ti.textureVecs[1], at[k]) / td.height;
                    ASSERT_NEAR(s.vertices[k].uv.x, u, 1e-3 + 1e-5 * std::fabs(u)) << "face " << s.face << " vertex " << k;
                    ASSERT_NEAR(s.vertices[k].uv.y, v, 1e-3 + 1e-5 * std::fabs(v)) << "face " << s.face << " vertex " << k;
                }
            }
    }
}

TEST(SourceGeometryCorpus, DisplacementsHaveTheirGridAndOffsetCorners) {
    size_t total = 0;
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto faces = b.faces();
        size_t found = 0;
        for (const auto& m : b.map.models)
            for (const auto& s : m.surfaces) {
                const dface_t& face = faces[size_t(s.face)];
                const bool disp = face.dispinfo != -1 && b.view.version() > 17;
                EXPECT_EQ(s.kind == model::SurfaceKind::displacement, disp) << "face " << s.face;
                if (!disp) continue;
                ++found;
                const ddispinfo_t& d = b.view.dispinfo()[size_t(face.dispinfo)];
                const int n = 1 << d.power, side = n + 1;
                ASSERT_EQ(s.vertices.size(), size_t(side * side));
                ASSERT_EQ(s.indices.size(), size_t(2 * n * n * 3));
                // Grid corners = the base corners from the one nearest
                // startPosition on, each moved by its dispvert.
                const std::vector<Vec3> c = b.corners(face);
                ASSERT_EQ(c.size(), 4u);
                const Vec3 sp{d.startPosition.x, d.startPosition.y, d.startPosition.z};
                size_t first = 0;
                for (size_t k = 1; k < 4; ++k)
                    if (model::length(c[k] - sp) < model::length(c[first] - sp)) first = k;
                const int grid[4] = {0, n * side, n * side + n, n};  // (0,0) (n,0) (n,n) (0,n)
                for (size_t k = 0; k < 4; ++k) {
                    const dDispVert& dv = b.view.disp_verts()[size_t(d.DispVertStart + grid[k])];
                    const Vec3 want = c[(first + k) % 4] + Vec3{dv.m_vVector.x, dv.m_vVector.y, dv.m_vVector.z} * dv.m_flDist;
                    const Vec3 got = s.vertices[size_t(grid[k])].position;
                    EXPECT_NEAR(got.x, want.x, 1e-3);
                    EXPECT_NEAR(got.y, want.y, 1e-3);
                    EXPECT_NEAR(got.z, want.z, 1e-3);
                }
                for (int k = 0; k < side * side; ++k) {
                    const float alpha = b.view.disp_verts()[size_t(d.DispVertStart + k)].m_flAlpha;
                    EXPECT_EQ(s.vertices[size_t(k)].color[3], uint8_t(std::lround(std::clamp(alpha, 0.f, 255.f))));
                    EXPECT_NEAR(model::length(s.vertices[size_t(k)].normal), 1, 1e-4);
                }
                std::set<std::set<uint32_t>> seen;
                for (size_t k = 0; k < s.indices.size(); k += 3) {
                    EXPECT_TRUE(seen.insert({s.indices[k], s.indices[k + 1], s.indices[k + 2]}).second);
                    EXPECT_GT(model::triangle_area(s.vertices[s.indices[k]].position, s.vertices[s.indices[k + 1]].position,
                                                   s.vertices[s.indices[k + 2]].position),
                              1e-3);
                }
            }
        EXPECT_EQ(found, b.view.version() > 17 ? b.view.dispinfo().size() : 0u);
        if (f->relpath == "src_v20/tf2_test_displacement_decompile.bsp") {
            EXPECT_EQ(found, 3u);
        }
        total += found;
    }
    EXPECT_GE(total, 70u);  // 3 + 68 (sdk_vehicles) + 4 (x360_shack)
}

// Where displacements meet, their edge vertices share a position and get one
// normal (no shading seam); the normals stay unit length.
TEST(SourceGeometryCorpus, DisplacementSeamsShareOneNormal) {
    size_t shared = 0;
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        for (const auto& m : b.map.models) {
            std::map<std::array<int64_t, 3>, std::vector<std::pair<size_t, Vec3>>> at;  // position -> (surface, normal)
            for (size_t i = 0; i < m.surfaces.size(); ++i) {
                const auto& s = m.surfaces[i];
                if (s.kind != model::SurfaceKind::displacement) continue;
                for (const auto& v : s.vertices)
                    at[{std::llround(double(v.position.x) * 8), std::llround(double(v.position.y) * 8),
                        std::llround(double(v.position.z) * 8)}]
                        .push_back({i, v.normal});
            }
            for (const auto& [pos, list] : at) {
                std::set<size_t> surfaces;
                for (const auto& [i, n] : list) surfaces.insert(i);
                if (surfaces.size() < 2) continue;
                ++shared;
                for (const auto& [i, n] : list) {
                    EXPECT_NEAR(model::length(n), 1, 1e-4);
                    EXPECT_NEAR(n.x, list[0].second.x, 1e-5);
                    EXPECT_NEAR(n.y, list[0].second.y, 1e-5);
                    EXPECT_NEAR(n.z, list[0].second.z, 1e-5);
                }
            }
        }
    }
    EXPECT_GT(shared, 0u) << "the corpus has displacements that meet";
    RecordProperty("seam_positions", int(shared));
}

/// The documented tonemap, restated: c * 2^e / 255, gamma 1/2.2, clamped.
uint8_t tonemap(uint8_t c, int8_t e) {
    return uint8_t(std::lround(std::min(1.0, std::pow(std::ldexp(double(c), e) / 255.0, 1 / 2.2)) * 255));
}

TEST(SourceGeometryCorpus, LightmapsMatchTheLuxelCountsAndTheLightingLump) {
    for (const CorpusFile* f : files())
        for (const bool prefer_hdr : {false, true}) {
            SCOPED_TRACE(f->relpath + (prefer_hdr ? " --hdr" : ""));
            model::BuildOptions options;
            options.hdr_lightmaps = prefer_hdr;
            const Built b(*f, options);
            // LDR when the map has it (and HDR is not asked for while present),
            // else HDR; faces_hdr holds the HDR offsets when it pairs with faces.
            const size_t ldr = b.bsp.decoded_length(lump::lighting), hdr = b.bsp.decoded_length(lump::lighting_hdr);
            const bool use_hdr = !ldr || (prefer_hdr && hdr);
            const size_t light_lump = use_hdr ? lump::lighting_hdr : lump::lighting;
            EXPECT_EQ(b.map.lightmap_source, !ldr && !hdr ? "" : use_hdr ? "lighting_hdr" : "lighting");
            const ByteSpan light = b.bsp.decoded(light_lump);
            const auto faces = b.faces();
            const auto lfaces = use_hdr && b.view.faces_hdr().size() == faces.size() ? b.view.faces_hdr() : faces;
            size_t lit = 0;
            for (const auto& m : b.map.models)
                for (const auto& s : m.surfaces) {
                    const dface_t& face = lfaces[size_t(s.face)];
                    int styles = 0;
                    while (styles < 4 && face.styles[styles] != 255) ++styles;
                    if (face.lightofs == -1 || styles == 0 || light.empty()) {
                        EXPECT_EQ(s.lightmap, -1) << "face " << s.face;
                        continue;
                    }
                    ++lit;
                    ASSERT_GE(s.lightmap, 0);
                    const model::LightmapImage& img = b.map.lightmap_images[size_t(s.lightmap)];
                    const uint32_t w = uint32_t(face.LightmapTextureSizeInLuxels[0] + 1), h = uint32_t(face.LightmapTextureSizeInLuxels[1] + 1);
                    EXPECT_EQ(img.width, w);
                    EXPECT_EQ(img.height, h);
                    ASSERT_EQ(img.styles.size(), size_t(styles));
                    const bool bump = b.view.texinfo()[size_t(face.texinfo)].flags & SURF_BUMPLIGHT;
                    const uint64_t end = uint64_t(face.lightofs) + uint64_t(styles) * (bump ? 4 : 1) * w * h * 4;
                    EXPECT_LE(end, light.size()) << "face " << s.face;
                    // First and last luxel of the first style, from the bytes.
                    for (size_t x : {size_t(0), size_t(w * h - 1)}) {
                        const uint8_t* sample = light.data() + face.lightofs + 4 * x;
                        for (int ch = 0; ch < 3; ++ch)
                            EXPECT_EQ(img.styles[0][3 * x + size_t(ch)], tonemap(sample[ch], int8_t(sample[3])))
                                << "face " << s.face << " luxel " << x;
                    }
                    EXPECT_EQ(s.styles, (std::array<uint8_t, 4>{face.styles[0], face.styles[1], face.styles[2], face.styles[3]}));
                    // Luxel centres of a face's corners lie inside its image.
                    if (s.kind == model::SurfaceKind::displacement) continue;
                    for (const auto& v : s.vertices) {
                        EXPECT_GT(v.lightmap_uv.x, 0);
                        EXPECT_LT(v.lightmap_uv.x, 1);
                        EXPECT_GT(v.lightmap_uv.y, 0);
                        EXPECT_LT(v.lightmap_uv.y, 1);
                    }
                }
            EXPECT_EQ(lit, b.map.lightmap_images.size());
            if (ldr || hdr) {
                EXPECT_GT(lit, 0u);
            }
        }
}

TEST(SourceGeometryCorpus, StaticPropsAreTheDecodedSprpProps) {
    size_t total = 0;
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built b(*f);
        const auto sprp = read_static_props(b.bsp);
        ASSERT_EQ(b.map.props.size(), sprp ? sprp->props.size() : 0u);
        for (size_t i = 0; i < b.map.props.size(); ++i) {
            const StaticProp& p = sprp->props[i];
            EXPECT_EQ(b.map.props[i].model, sprp->names[p.prop_type]);
            EXPECT_EQ(b.map.props[i].origin, (Vec3{p.origin[0], p.origin[1], p.origin[2]}));
            EXPECT_EQ(b.map.props[i].angles, (Vec3{p.angles[0], p.angles[1], p.angles[2]}));
            EXPECT_EQ(b.map.props[i].skin, p.skin);
        }
        total += b.map.props.size();
    }
    EXPECT_GT(total, 200u);  // vtmb_ch_temple_3 alone has 208
}

}  // namespace
// Maps with both an LDR and an HDR lighting lump: --hdr (BuildOptions::
// hdr_lightmaps) decodes the HDR one (its samples are checked against the
// lump's bytes above). The luxel grids are the face's own in both, so the
// atlas layout and every lightmap UV are the same. Maps with one lump give
// that lump either way.
TEST(SourceGeometryCorpus, HdrLightmapsAreTheHdrLumpInTheSameLayout) {
    size_t both = 0;
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Bsp bsp = Bsp::parse(test::read_corpus(*f), f->relpath);
        const bool ldr = bsp.decoded_length(lump::lighting) > 0, hdr = bsp.decoded_length(lump::lighting_hdr) > 0;
        model::BuildOptions o;
        o.textures = false;
        const model::Map plain = model::build(bsp, o);
        o.hdr_lightmaps = true;
        const model::Map high = model::build(bsp, o);
        if (!ldr && !hdr) {
            EXPECT_TRUE(high.lightmaps.empty());
            continue;
        }
        EXPECT_EQ(plain.lightmap_source, ldr ? "lighting" : "lighting_hdr");
        EXPECT_EQ(high.lightmap_source, hdr ? "lighting_hdr" : "lighting");
        if (!(ldr && hdr)) continue;
        ++both;
        ASSERT_EQ(plain.lightmaps.size(), high.lightmaps.size());
        ASSERT_FALSE(plain.lightmaps.empty());
        EXPECT_EQ(plain.lightmaps[0].width, high.lightmaps[0].width);
        EXPECT_EQ(plain.lightmaps[0].height, high.lightmaps[0].height);
        ASSERT_EQ(plain.models.size(), high.models.size());
        for (size_t m = 0; m < plain.models.size(); ++m) {
            ASSERT_EQ(plain.models[m].surfaces.size(), high.models[m].surfaces.size());
            for (size_t i = 0; i < plain.models[m].surfaces.size(); ++i) {
                const auto& a = plain.models[m].surfaces[i];
                const auto& b = high.models[m].surfaces[i];
                ASSERT_EQ(a.lightmap >= 0, b.lightmap >= 0);
                ASSERT_EQ(a.vertices.size(), b.vertices.size());
                for (size_t v = 0; v < a.vertices.size(); ++v) ASSERT_EQ(a.vertices[v].lightmap_uv, b.vertices[v].lightmap_uv);
            }
        }
    }
    EXPECT_GT(both, 0u) << "the corpus has Source maps with both lighting lumps";
    // The verb says which lump it decoded.
    const std::string box = test::corpus_file("src_v20/sdk2013_boxinaroom.bsp").path.string();
    const std::string dir = test::temp_dir("src_hdr_lm");
    for (const bool prefer_hdr : {false, true}) {
        std::vector<std::string> args = {"lightmaps", box, "-o", dir, "--json"};
        if (prefer_hdr) args.push_back("--hdr");
        const test::RunResult r = test::run_cli(args);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(nlohmann::json::parse(r.out).at("lighting_lump"), prefer_hdr ? "lighting_hdr" : "lighting");
    }
    RecordProperty("maps_with_both", int(both));
}

}  // namespace bspkit::source

namespace bspkit::source {
namespace {

// A model of 256 faces or more is built on every core, in chunks; the error
// raised is still that of the first broken face in face order (a texinfo that
// is out of range counts from that face on, as when faces were built one by one).
// kinds = displacements (what collision builds): on every Source map, the
// full build's displacements, vertex for vertex, and nothing else; the other
// faces are not read, so a broken polygon face (texinfo, planenum, edges out
// of range) stops the full build but not this one.
TEST(SourceGeometryCorpus, DisplacementKindBuildsTheDisplacementsAloneAndReadsNoOtherFace) {
    model::BuildOptions only;
    only.lightmaps = only.textures = false;
    only.kinds = model::kind_bit(model::SurfaceKind::displacement);
    size_t maps_with = 0;
    for (const CorpusFile* f : files()) {
        SCOPED_TRACE(f->relpath);
        const Built full(*f), part(*f, only);
        ASSERT_EQ(part.map.models.size(), full.map.models.size());
        size_t displacements = 0;
        for (size_t m = 0; m < full.map.models.size(); ++m) {
            std::vector<const model::Surface*> expected;
            for (const auto& s : full.map.models[m].surfaces)
                if (s.kind == model::SurfaceKind::displacement) expected.push_back(&s);
            ASSERT_EQ(part.map.models[m].surfaces.size(), expected.size()) << "model " << m;
            for (size_t k = 0; k < expected.size(); ++k) {
                const model::Surface& a = *expected[k];
                const model::Surface& b = part.map.models[m].surfaces[k];
                ASSERT_EQ(b.face, a.face);
                ASSERT_EQ(b.indices, a.indices);
                ASSERT_EQ(b.vertices.size(), a.vertices.size());
                for (size_t v = 0; v < a.vertices.size(); ++v) {
                    ASSERT_EQ(b.vertices[v].position, a.vertices[v].position) << "face " << a.face << " vertex " << v;
                    ASSERT_EQ(b.vertices[v].normal, a.vertices[v].normal) << "face " << a.face << " vertex " << v;
                }
            }
            displacements += expected.size();
        }
        if (displacements == 0) continue;
        ++maps_with;
        // Break every polygon face of the world: the full build fails on the
        // first, the displacements-only build does not read them.
        Bytes bytes = test::read_corpus(*f);
        const Bsp original = Bsp::parse(bytes, f->relpath);
        const size_t face_lump = original.entry(lump::faces).length > 0 ? size_t(lump::faces) : size_t(lump::faces_hdr);
        const LumpEntry entry = original.entry(face_lump);
        if (original.decoded_length(face_lump) != size_t(entry.length) || original.byte_order() != ByteOrder::little)
            continue;  // edited in place below: stored as read
        size_t broken = 0;
        for (size_t fi = 0; fi < full.faces().size(); ++fi) {
            if (full.faces()[fi].dispinfo != -1) continue;
            const int16_t bad = 30000;
            std::memcpy(bytes.data() + entry.offset + fi * sizeof(dface_t) + offsetof(dface_t, texinfo), &bad, 2);
            ++broken;
        }
        ASSERT_GT(broken, 0u);
        const Bsp damaged = Bsp::parse(bytes, "damaged.bsp");
        EXPECT_THROW((void)model::build(damaged), Error);
        model::Map again;
        again.format = damaged.format();
        build_model(damaged, only, again);
        size_t rebuilt = 0;
        for (const auto& m : again.models) rebuilt += m.surfaces.size();
        EXPECT_EQ(rebuilt, displacements);
    }
    EXPECT_GE(maps_with, 3u);
}

TEST(SourceGeometryCorpus, TheFirstBrokenFaceIsNamedWhicheverThreadBuildsIt) {
    const CorpusFile& f = test::corpus_file("src_v20/tf2_test_displacement_decompile.bsp");
    const Bytes original = test::read_corpus(f);
    const LumpEntry faces = Bsp::parse(original, f.relpath).entry(lump::faces);
    ASSERT_GT(faces.length / int64_t(sizeof(dface_t)), 2000);
    struct Damage {
        size_t face;
        size_t field;  ///< offsetof in dface_t
        int32_t value;
        size_t bytes;
    };
    const auto first_error = [&](std::initializer_list<Damage> damage) -> std::string {
        Bytes b = original;
        for (const Damage& d : damage) {
            const int16_t v16 = int16_t(d.value);
            std::memcpy(b.data() + faces.offset + d.face * sizeof(dface_t) + d.field, d.bytes == 2 ? static_cast<const void*>(&v16) : &d.value, d.bytes);
        }
        try {
            (void)model::build(Bsp::parse(b, "damaged.bsp"));
        } catch (const Error& e) {
            return e.what();
        }
        return "built";
    };
    const Damage texinfo_1500{1500, offsetof(dface_t, texinfo), 30000, 2}, planenum_700{700, offsetof(dface_t, planenum), 60000, 2};
    EXPECT_NE(first_error({texinfo_1500, planenum_700}).find("faces record 700: planenum 60000 is outside"), std::string::npos);
    EXPECT_NE(first_error({texinfo_1500}).find("faces record 1500: texinfo 30000 is outside"), std::string::npos);
    const Damage texinfo_250{250, offsetof(dface_t, texinfo), 30000, 2}, firstedge_300{300, offsetof(dface_t, firstedge), -5, 4};
    EXPECT_NE(first_error({firstedge_300, texinfo_250}).find("faces record 250: texinfo 30000"), std::string::npos);
    EXPECT_NE(first_error({firstedge_300}).find("faces record 300: surfedges -5 + "), std::string::npos);
    const Damage firstedge_2000{2000, offsetof(dface_t, firstedge), -5, 4}, firstedge_100{100, offsetof(dface_t, firstedge), -5, 4};
    EXPECT_NE(first_error({firstedge_2000, firstedge_100}).find("faces record 100: surfedges"), std::string::npos);
    EXPECT_EQ(first_error({}), "built");
}

}  // namespace
}  // namespace bspkit::source
