// decompile on every corpus map with brush lumps (Source, Quake 2, Quake 3 /
// RTCW, Nightfire), checked against the BSP's own records read here:
//   - every written side lies on the plane of the BSP brush side it names:
//     its three points within 1e-3 units of it, the plane through them with
//     the same facing (normals' dot product above 1 - 1e-9) and distance;
//   - every corner of every decompiled brush (each triple of its planes that
//     meets inside all of them) is inside every plane of its BSP brush
//     within 0.01 (Source bevel planes, which vbsp adds tangent to the brush
//     up to float error and which are not written: 0.05): with the planes a
//     subset, the decompiled volume is the BSP brush's;
//   - texture vectors: at each corner of a side, s and t from the written
//     axes equal the BSP's texinfo (Source, Quake 2) / projection (Nightfire)
//     within 0.01 texels (the entity origin undone);
//   - contents: Quake 2 / 3 / Nightfire sides carry their brush's contents;
//     Source world brushes with CONTENTS_DETAIL sit in func_detail;
//   - each BSP brush is written at most once, and (Source) every one is
//     written or counted as skipped;
//   - Source: one dispinfo per displacement with its power and vertex data,
//     one prop_static per static prop with its model, one env_cubemap per
//     cubemap, one info_overlay per overlay whose "sides" name written sides;
//   - Quake 3: one patchDef2 per patch surface, with its control points;
//     brush-primitive matrices that give the drawn surfaces' st on their sides
//     (up to whole repeats: >= 99% of the vertices within 1e-3, >= 99.5% within 0.01;
//     the rest are coplanar surfaces of other projections near the side);
//   - the written text reads back with bspkit's reader to the same data.
#include <bspkit/check.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>

#include "corpus.hpp"
#include "disp_flags.hpp"
#include "run.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

using namespace bspkit;
using namespace bspkit::test;
using decompile::PlaneD;
using mapfile::Vec3d;

namespace {

std::vector<CorpusFile> with_brush_lumps() {
    std::vector<CorpusFile> out;
    for (const auto& f : corpus_files()) {
        const auto fmt = expected_format(f);
        if (fmt && (*fmt == "source" || *fmt == "quake2" || *fmt == "quake3" || *fmt == "nightfire")) out.push_back(f);
    }
    return out;
}

using Vecs = std::array<std::array<double, 4>, 2>;

/// A BSP brush as the records give it.
struct BspBrush {
    int64_t first_side = 0;
    std::vector<PlaneD> planes;
    std::vector<bool> bevel;
    std::vector<std::optional<Vecs>> tex;
    int32_t contents = 0;
};

template <class F>
Vecs vecs_of(const F (&v)[2][4]) {
    Vecs out{};
    for (size_t i = 0; i < 2; ++i)
        for (size_t k = 0; k < 4; ++k) out[i][k] = v[i][k];
    return out;
}

std::vector<BspBrush> bsp_brushes(const Bsp& bsp) {
    std::vector<BspBrush> out;
    if (bsp.format() == Format::source) {
        const source::Map m(bsp);
        for (const auto& b : m.brushes()) {
            BspBrush o{b.firstside, {}, {}, {}, b.contents};
            for (int k = 0; k < b.numsides; ++k) {
                const auto& s = m.brushsides()[size_t(b.firstside + k)];
                const auto& p = m.planes()[s.planenum];
                o.planes.push_back({{p.normal.x, p.normal.y, p.normal.z}, p.dist});
                o.bevel.push_back((s.bevel & 0xff) != 0);
                o.tex.push_back(s.texinfo >= 0 ? std::optional(vecs_of(m.texinfo()[size_t(s.texinfo)].textureVecs)) : std::nullopt);
            }
            out.push_back(std::move(o));
        }
    } else if (bsp.format() == Format::quake2) {
        const quake2::Map m(bsp);
        for (const auto& b : m.brushes()) {
            BspBrush o{b.firstside, {}, {}, {}, b.contents};
            for (int k = 0; k < b.numsides; ++k) {
                const auto& s = m.brushsides()[size_t(b.firstside + k)];
                const auto& p = m.planes()[s.planenum];
                o.planes.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist});
                o.bevel.push_back(false);
                o.tex.push_back(s.texinfo >= 0 ? std::optional(vecs_of(m.texinfo()[size_t(s.texinfo)].vecs)) : std::nullopt);
            }
            out.push_back(std::move(o));
        }
    } else if (bsp.format() == Format::quake3) {
        const quake3::Map m(bsp);
        for (const auto& b : m.brushes()) {
            BspBrush o{b.firstSide, {}, {}, {}, m.shaders()[size_t(b.shaderNum)].contentFlags};
            for (int k = 0; k < b.numSides; ++k) {
                const auto& p = m.planes()[size_t(m.brushsides()[size_t(b.firstSide + k)].planeNum)];
                o.planes.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist});
                o.bevel.push_back(false);
                o.tex.push_back(std::nullopt);
            }
            out.push_back(std::move(o));
        }
    } else if (bsp.format() == Format::nightfire) {
        const nightfire::Map m(bsp);
        for (const auto& b : m.brushes()) {
            BspBrush o{b.BrushSidesIndex, {}, {}, {}, int32_t(b.Attributes)};
            for (size_t k = 0; k < b.BrushSidesCount; ++k) {
                const auto& s = m.brush_sides()[b.BrushSidesIndex + k];
                const auto& p = m.planes()[s.PlaneIndex];
                o.planes.push_back({{p.Normal[0], p.Normal[1], p.Normal[2]}, p.Distance});
                o.bevel.push_back(false);
                const auto& surf = m.surfaces()[s.SurfaceIndex];
                const auto& pr = m.projections()[surf.TextureProjectionIndex];
                Vecs v{};
                for (size_t c = 0; c < 4; ++c) v[0][c] = pr.S[c], v[1][c] = pr.T[c];
                o.tex.push_back(v);
            }
            out.push_back(std::move(o));
        }
    }
    return out;
}

double dot(const Vec3d& a, const Vec3d& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
Vec3d cross(const Vec3d& a, const Vec3d& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Corners of the convex brush bounded by `planes`: every triple's meeting
/// point that lies inside all planes (brute force, independent of the decompiler's clipping).
std::vector<Vec3d> corners(const std::vector<mapfile::Plane>& planes) {
    std::vector<Vec3d> out;
    const size_t n = planes.size();
    for (size_t i = 0; i < n; ++i)
        for (size_t j = i + 1; j < n; ++j)
            for (size_t k = j + 1; k < n; ++k) {
                const Vec3d &a = planes[i].normal, &b = planes[j].normal, &c = planes[k].normal;
                const Vec3d bc = cross(b, c);
                const double det = dot(a, bc);
                if (std::abs(det) < 1e-9) continue;
                const Vec3d ca = cross(c, a), ab = cross(a, b);
                Vec3d p;
                for (size_t q = 0; q < 3; ++q)
                    p[q] = (planes[i].dist * bc[q] + planes[j].dist * ca[q] + planes[k].dist * ab[q]) / det;
                bool inside = true;
                for (const auto& pl : planes)
                    if (dot(pl.normal, p) - pl.dist > 1e-3) {
                        inside = false;
                        break;
                    }
                if (inside) out.push_back(p);
            }
    return out;
}

class DecompileCorpus : public ::testing::TestWithParam<CorpusFile> {};

TEST_P(DecompileCorpus, BrushesPlanesTexturesAndParseBack) {
    const CorpusFile& f = GetParam();
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    const decompile::Result r = decompile::decompile(bsp);
    const auto brushes = bsp_brushes(bsp);
    const bool source = bsp.format() == Format::source;
    const bool has_tex = bsp.format() != Format::quake3;
    ASSERT_FALSE(r.map.entities.empty());
    EXPECT_EQ(r.map.entities[0].get("classname"), "worldspawn");

    std::set<int64_t> written;
    size_t checked_sides = 0, checked_tex = 0;
    for (const auto& o : r.origins) {
        if (o.bsp_brush < 0) continue;
        ASSERT_LT(size_t(o.bsp_brush), brushes.size());
        EXPECT_TRUE(written.insert(o.bsp_brush).second) << "brush " << o.bsp_brush << " written twice";
        const BspBrush& bb = brushes[size_t(o.bsp_brush)];
        const mapfile::Brush& db = r.map.entities[o.entity].brushes[o.brush];
        ASSERT_EQ(db.sides.size(), o.bsp_sides.size());
        ASSERT_GE(db.sides.size(), 4u);
        std::vector<mapfile::Plane> dplanes;
        std::vector<PlaneD> bplanes;
        // BSP planes normalised (float normals are up to ~1e-7 off unit length), moved by the entity origin.
        for (const auto& p : bb.planes) {
            const double len = std::sqrt(dot(p.normal, p.normal));
            const Vec3d n{p.normal[0] / len, p.normal[1] / len, p.normal[2] / len};
            bplanes.push_back({n, p.dist / len + dot(n, o.offset)});
        }
        for (size_t k = 0; k < db.sides.size(); ++k) {
            const auto& s = db.sides[k];
            const int64_t j = o.bsp_sides[k] - bb.first_side;
            ASSERT_TRUE(j >= 0 && size_t(j) < bb.planes.size());
            EXPECT_FALSE(bb.bevel[size_t(j)]) << "a bevel side was written";
            const PlaneD& bp = bplanes[size_t(j)];
            for (const auto& pt : s.points) EXPECT_LT(std::abs(dot(pt, bp.normal) - bp.dist), 1e-3) << f.relpath << " brush " << o.bsp_brush;
            const mapfile::Plane dp = mapfile::plane_from_points(s.points);
            EXPECT_GT(dot(dp.normal, bp.normal), 1 - 1e-9) << f.relpath << " brush " << o.bsp_brush << " side " << k;
            EXPECT_LT(std::abs(dp.dist - bp.dist), 1e-3);
            dplanes.push_back(dp);
            if (!source) {
                EXPECT_EQ(s.contents, bb.contents) << f.relpath << " brush " << o.bsp_brush;
            }
            ++checked_sides;
        }
        const auto pts = corners(dplanes);
        ASSERT_GE(pts.size(), 4u) << f.relpath << " brush " << o.bsp_brush;
        for (const auto& p : pts)
            for (size_t j = 0; j < bplanes.size(); ++j)
                ASSERT_LE(dot(bplanes[j].normal, p) - bplanes[j].dist, bb.bevel[j] ? 0.05 : 0.01)
                    << f.relpath << " brush " << o.bsp_brush << ": a corner outside the BSP brush";
        if (!has_tex) continue;
        for (size_t k = 0; k < db.sides.size(); ++k) {
            const auto& tex = bb.tex[size_t(o.bsp_sides[k] - bb.first_side)];
            if (!tex) continue;
            const auto& a = db.sides[k].axes;
            for (const auto& p : pts) {
                if (std::abs(dot(dplanes[k].normal, p) - dplanes[k].dist) > 1e-3) continue;
                const Vec3d local{p[0] - o.offset[0], p[1] - o.offset[1], p[2] - o.offset[2]};
                const double s_bsp = dot(local, {(*tex)[0][0], (*tex)[0][1], (*tex)[0][2]}) + (*tex)[0][3];
                const double t_bsp = dot(local, {(*tex)[1][0], (*tex)[1][1], (*tex)[1][2]}) + (*tex)[1][3];
                const double s_dec = dot(p, a.u_axis) / a.u_scale + a.u_shift;
                const double t_dec = dot(p, a.v_axis) / a.v_scale + a.v_shift;
                EXPECT_NEAR(s_dec, s_bsp, 0.01) << f.relpath << " brush " << o.bsp_brush << " side " << k;
                EXPECT_NEAR(t_dec, t_bsp, 0.01);
                ++checked_tex;
            }
        }
    }
    EXPECT_GT(checked_sides, 0u);
    if (has_tex) {
        EXPECT_GT(checked_tex, 0u);
    }
    if (source) {
        EXPECT_EQ(written.size() + r.stats.skipped_brushes, brushes.size());
    } else {
        EXPECT_LE(written.size() + r.stats.skipped_brushes, brushes.size());
    }

    if (source) {
        const source::Map m(bsp);
        // func_detail holds exactly the world's CONTENTS_DETAIL brushes.
        for (const auto& o : r.origins) {
            if (o.bsp_brush < 0) continue;
            const bool detail = brushes[size_t(o.bsp_brush)].contents & 0x8000000;
            const auto cls = r.map.entities[o.entity].get("classname");
            if (cls == "func_detail") {
                EXPECT_TRUE(detail);
            }
            if (o.entity == 0) {
                EXPECT_FALSE(detail) << "detail brush " << o.bsp_brush << " left in the world";
            }
        }
        // Displacements.
        size_t disps = 0;
        std::multiset<int> powers;
        for (const auto& e : r.map.entities)
            for (const auto& b : e.brushes)
                for (const auto& s : b.sides)
                    if (s.displacement) {
                        ++disps;
                        powers.insert(s.displacement->power);
                        EXPECT_EQ(s.displacement->normals.size(), size_t(s.displacement->vertex_count()));
                        const auto pl = mapfile::plane_from_points(s.points);
                        EXPECT_LT(std::abs(dot(pl.normal, s.displacement->start_position) - pl.dist), 0.1);
                    }
        std::multiset<int> bsp_powers;
        for (const auto& d : m.dispinfo()) bsp_powers.insert(d.power);
        EXPECT_EQ(disps, m.dispinfo().size());
        EXPECT_EQ(powers, bsp_powers);
        // Props, cubemaps.
        std::vector<std::string> models;
        size_t cubemaps = 0;
        for (const auto& e : r.map.entities) {
            if (e.get("classname") == "prop_static") models.emplace_back(e.get("model"));
            cubemaps += e.get("classname") == "env_cubemap";
        }
        std::vector<std::string> bsp_models;
        if (const auto props = source::read_static_props(bsp))
            for (const auto& p : props->props) bsp_models.push_back(props->names[p.prop_type]);
        EXPECT_EQ(models, bsp_models);
        EXPECT_EQ(cubemaps, m.cubemaps().size());
        // Overlays: one info_overlay per overlay, its "sides" ids naming written sides.
        std::set<int64_t> side_ids;
        for (const auto& e : r.map.entities)
            for (const auto& b : e.brushes)
                for (const auto& s : b.sides) side_ids.insert(s.id);
        size_t overlays = 0, with_sides = 0;
        for (const auto& e : r.map.entities) {
            if (e.get("classname") != "info_overlay") continue;
            ++overlays;
            std::istringstream ids{std::string(e.get("sides"))};
            int64_t id = 0;
            bool any = false;
            while (ids >> id) {
                EXPECT_TRUE(side_ids.count(id)) << f.relpath << ": overlay side " << id << " is not a written side";
                any = true;
            }
            with_sides += any;
        }
        EXPECT_EQ(overlays, m.overlays().size());
        EXPECT_EQ(with_sides, overlays) << f.relpath << ": overlays whose faces lie on no written side";
    }
    if (bsp.format() == Format::quake3) {
        const quake3::Map m(bsp);
        size_t bsp_patches = 0, patches = 0;
        for (const auto& s : m.surfaces()) bsp_patches += s.surfaceType == quake3::MST_PATCH;
        for (const auto& e : r.map.entities)
            for (const auto& p : e.patches) {
                ++patches;
                EXPECT_EQ(p.points.size(), size_t(p.rows) * size_t(p.columns));
            }
        // Patches of models no entity uses are left out; all corpus patches belong to used models.
        EXPECT_EQ(patches, bsp_patches);
        // Brush primitives: where a drawn planar surface of the side's shader lies on a written side
        // (every vertex within 0.05 of its plane and inside the brush), the side's matrix gives that
        // surface's st at its vertices, up to whole texture repeats (see the header for the shares).
        ASSERT_EQ(r.map.dialect, mapfile::Dialect::quake3_bp);
        size_t st_checked = 0, st_close = 0, st_near = 0;
        for (const auto& o : r.origins) {
            const auto& db = r.map.entities[o.entity].brushes[o.brush];
            for (size_t k = 0; k < db.sides.size(); ++k) {
                const auto& side = db.sides[k];
                const int32_t shader = m.brushsides()[size_t(o.bsp_sides[k])].shaderNum;
                const auto pl = mapfile::plane_from_points(side.points);
                const auto ax = mapfile::bp_axes(pl.normal);
                for (const auto& sf : m.surfaces()) {
                    if (sf.surfaceType != quake3::MST_PLANAR || sf.shaderNum != shader) continue;
                    bool on = true;
                    for (int v = 0; v < sf.numVerts && on; ++v) {
                        const auto& dv = m.vertexes()[size_t(sf.firstVert + v)];
                        const Vec3d p{dv.xyz[0] + o.offset[0], dv.xyz[1] + o.offset[1], dv.xyz[2] + o.offset[2]};
                        on = std::abs(dot(p, pl.normal) - pl.dist) < 0.05 &&
                             dot(Vec3d{dv.normal[0], dv.normal[1], dv.normal[2]}, pl.normal) > 0.9;
                    }
                    if (!on || side.bp_matrix == mapfile::Side{}.bp_matrix) continue;
                    // Inside this brush: every vertex satisfies all its planes.
                    for (int v = 0; v < sf.numVerts && on; ++v) {
                        const auto& dv = m.vertexes()[size_t(sf.firstVert + v)];
                        const Vec3d p{dv.xyz[0] + o.offset[0], dv.xyz[1] + o.offset[1], dv.xyz[2] + o.offset[2]};
                        for (const auto& other : db.sides) {
                            const auto op = mapfile::plane_from_points(other.points);
                            if (dot(p, op.normal) - op.dist > 0.5) on = false;
                        }
                    }
                    if (!on) continue;
                    for (int v = 0; v < sf.numVerts; ++v) {
                        const auto& dv = m.vertexes()[size_t(sf.firstVert + v)];
                        const Vec3d p{dv.xyz[0] + o.offset[0], dv.xyz[1] + o.offset[1], dv.xyz[2] + o.offset[2]};
                        const double x = dot(p, ax[0]), y = dot(p, ax[1]);
                        const auto& mt = side.bp_matrix;
                        // Textures repeat: q3map2 shifts a surface's st by whole repeats.
                        auto off_by = [](double a, double b) { return std::abs((a - b) - std::round(a - b)); };
                        const double e = std::max(off_by(mt[0] * x + mt[1] * y + mt[2], dv.st[0]),
                                                  off_by(mt[3] * x + mt[4] * y + mt[5], dv.st[1]));
                        st_close += e < 1e-3;
                        st_near += e < 0.01;
                        ++st_checked;
                    }
                    break;
                }
            }
        }
        EXPECT_GT(st_checked, 0u) << f.relpath;
        std::printf("%s: brush primitives: %zu surface vertices checked, %zu within 1e-3, %zu within 0.01\n",
                    f.relpath.c_str(), st_checked, st_close, st_near);
        EXPECT_GE(double(st_close), 0.99 * double(st_checked)) << f.relpath;
        EXPECT_GE(double(st_near), 0.995 * double(st_checked)) << f.relpath;
    }

    // Written and read back: the same data.
    const std::string text = mapfile::write(r.map);
    const mapfile::MapFile back = mapfile::read(text, f.relpath, r.map.dialect);
    EXPECT_TRUE(back == r.map) << f.relpath << ": the written map reads back different";
    if (r.map.dialect == mapfile::Dialect::vmf) {
        EXPECT_TRUE(text.starts_with("versioninfo\n{\n"));
        EXPECT_EQ(std::count(text.begin(), text.end(), '{'), std::count(text.begin(), text.end(), '}'));
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, DecompileCorpus, ::testing::ValuesIn(with_brush_lumps()),
                         [](const auto& info) { return test_name(info.param.relpath); });

/// Source, --brushes faces: one brush per drawn face of every model, its
/// first side on the face's plane (every corner of the face within 1e-3 of
/// the written plane), reading back to the same data.
TEST(DecompileCorpusFaces, SourceBrushPerFace) {
    for (const auto& f : with_brush_lumps()) {
        if (*expected_format(f) != "source") continue;
        const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
        decompile::Options o;
        o.brushes = decompile::BrushSource::faces;
        const auto r = decompile::decompile(bsp, o);
        const source::Map m(bsp);
        const auto faces = m.faces().empty() ? m.faces_hdr() : m.faces();
        size_t drawn = 0;
        for (const auto& md : m.models())
            for (int k = 0; k < md.numfaces; ++k) drawn += faces[size_t(md.firstface + k)].dispinfo < 0;
        size_t face_brushes = 0;
        for (const auto& e : r.map.entities)
            for (const auto& b : e.brushes) {
                EXPECT_GE(b.sides.size(), 4u);
                face_brushes += !b.sides[0].displacement;
            }
        EXPECT_GT(face_brushes, 0u) << f.relpath;
        // Faces of models no entity uses and faces with no area are left out.
        EXPECT_LE(face_brushes, drawn) << f.relpath;
        EXPECT_GE(double(face_brushes), 0.5 * double(drawn)) << f.relpath;
        EXPECT_TRUE(mapfile::read(mapfile::write(r.map), f.relpath) == r.map) << f.relpath;
    }
}

/// Damaged copies (truncated, bytes overwritten) give an Error or a map, never a crash.
TEST(DecompileCorpusDamaged, TruncatedAndOverwrittenCopies) {
    size_t errors = 0, runs = 0;
    for (const auto& f : with_brush_lumps()) {
        if (f.size > 3'000'000) continue;
        const Bytes full = read_corpus(f);
        for (int variant = 0; variant < 6; ++variant) {
            Bytes b = full;
            if (variant < 3) b.resize(b.size() * size_t(variant + 1) / 4);
            else
                for (size_t i = 64 + size_t(variant) * 131; i < b.size(); i += 997) b[i] = uint8_t(b[i] * 31 + 7 * variant);
            ++runs;
            try {
                const Bsp bsp = Bsp::parse(std::move(b), f.relpath);
                const auto r = decompile::decompile(bsp);
                (void)mapfile::write(r.map);
            } catch (const Error& e) {
                ++errors;
                EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
            }
        }
    }
    EXPECT_GT(runs, 0u);
    EXPECT_GT(errors, 0u);
}

/// Model 0's bounds turned inside out in every Quake 1 family map cut from
/// its tree (no BRUSHLIST): the engines load such a map (they only link and
/// cull by these bounds), so the decompiler cuts from the bounds the head node
/// keeps and says so, giving the same brushes as the undamaged map (their
/// outer sides may lie a little further out). It refused the map before.
TEST(DecompileCorpusDamaged, InsideOutModelBoundsCutFromTheHeadNode) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        SCOPED_TRACE(f->relpath);
        Bsp bsp = Bsp::parse(read_corpus(*f), f->relpath);
        const decompile::Result before = decompile::decompile(bsp);
        const size_t models = *bsp.find_lump("models");
        Bytes records(bsp.decoded(models).begin(), bsp.decoded(models).end());
        const float inside_out[6] = {100, 100, 100, -100, -100, -100};  // dmodel_t: mins[3], maxs[3] first
        std::memcpy(records.data(), inside_out, sizeof inside_out);
        bsp.replace(models, records);
        const decompile::Result after = decompile::decompile(bsp);
        const bool cut = std::any_of(after.notes.begin(), after.notes.end(), [](const std::string& n) {
            return n.find("model 0's bounds are not a box") != std::string::npos;
        });
        const bool brushlist = std::any_of(before.notes.begin(), before.notes.end(),
                                           [](const std::string& n) { return n.find("BRUSHLIST") != std::string::npos; });
        EXPECT_EQ(cut, !brushlist);
        EXPECT_EQ(after.stats.brushes, before.stats.brushes);
        EXPECT_NEAR(double(after.stats.sides), double(before.stats.sides), 0.01 * double(before.stats.sides) + 1);
        maps += cut;
    }
    EXPECT_GE(maps, 10u);
}

/// svencoop_q2dm1 with 60 random bytes over its planes 352-355 (found by
/// DamageConsistencyCorpus with seed 11): the cell merging read a face index
/// of a cell merged earlier in the same pass, past the merged cell's faces
/// (the CLI died with SIGSEGV). Stale entries are dropped now; under ASan the
/// read is caught even where it does not crash. (check found no error in the
/// copy then; it now reports the normals the bytes made, which are not unit
/// vectors, and decompile still takes the map as it is.)
TEST(DecompileCorpusDamaged, MergingSkipsCellsMergedInThePass) {
    const CorpusFile& f = corpus_file("hl1_v30/svencoop_q2dm1.bsp");
    Bytes bytes = read_corpus(f);
    static constexpr char kRun[] =
        "b5d46b08b26387ffe67431d8aaf604c43b8cb538f595e1819b83d30f9916458bef2efade396a20b11cca3c485560bd9f28739e8f500494dabd2b535c";
    constexpr size_t kAt = 7178;  // planes start at 124: plane 352, byte 14
    ASSERT_EQ(sizeof kRun - 1, 120u);
    for (size_t i = 0; i < 60; ++i) bytes[kAt + i] = uint8_t(std::stoi(std::string(kRun + 2 * i, 2), nullptr, 16));
    const Bsp bsp = Bsp::parse(std::move(bytes), f.relpath);
    const CheckReport report = check(bsp);
    EXPECT_GT(report.errors(), 0u);
    for (const Finding& x : report.findings)
        if (x.severity == Severity::error) {
            EXPECT_EQ(x.lump, "planes");
            EXPECT_EQ(x.field, "normal");
        }
    const decompile::Result r = decompile::decompile(bsp);
    EXPECT_GT(r.stats.brushes, 700u);
}

/// A material name an editor file cannot hold (a space and a control byte in a
/// Quake 3 shader name; a quote in a Source one): '_' in their place and a
/// note, not a map that cannot be written at all.
TEST(DecompileCorpusNames, MaterialNamesAFileCannotHoldAreWrittenWithUnderscores) {
    struct Case {
        const char* rel;
        const char* lump;
        size_t first_name_at;  ///< offset of the first name in the lump
        std::string bytes;     ///< written over the name's bytes 3..
        std::string expected;  ///< what those bytes become
        bool vmf;
    };
    for (const Case& c : {Case{"q3_v46/oa_ctf2.bsp", "textures", 0, std::string("a b\x1b", 3), "a_b_", false},
                          Case{"src_v20/sdk2013_boxinaroom.bsp", "texdata_string_data", 0, "a\"b", "a_b", true}}) {
        SCOPED_TRACE(c.rel);
        const CorpusFile& f = corpus_file(c.rel);
        Bytes bytes = read_corpus(f);
        const Bsp probe = Bsp::parse(read_corpus(f), f.relpath);
        const auto lump = probe.find_lump(c.lump);
        ASSERT_TRUE(lump && !probe.compressed(*lump));
        const size_t at = size_t(probe.entry(*lump).offset) + c.first_name_at;
        const std::string before(reinterpret_cast<const char*>(bytes.data() + at));
        ASSERT_GT(before.size(), 3 + c.bytes.size());
        std::copy(c.bytes.begin(), c.bytes.end(), bytes.begin() + std::ptrdiff_t(at + 3));
        std::string expected = before;
        expected.replace(3, c.bytes.size(), c.expected.substr(0, c.bytes.size()));
        const Bsp bsp = Bsp::parse(std::move(bytes), f.relpath);
        const auto r = decompile::decompile(bsp);
        std::string text;
        ASSERT_NO_THROW(text = mapfile::write(r.map));
        EXPECT_EQ(r.map.dialect == mapfile::Dialect::vmf, c.vmf);
        bool noted = false;
        for (const auto& n : r.notes) noted |= n.find("material name holds") != std::string::npos;
        EXPECT_TRUE(noted);
        // The changed name is in the file (in any letter case), the original nowhere.
        auto lower = [](std::string s) {
            for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
            return s;
        };
        EXPECT_NE(lower(text).find(lower(expected)), std::string::npos) << expected;
        EXPECT_EQ(text.find(c.bytes), std::string::npos);
        EXPECT_TRUE(mapfile::read(text, f.relpath) == r.map);
    }
}

/// The command line: a map written to the named file, counts in --json, damaged input one line and exit 1.
TEST(DecompileCli, WritesTheFileAndReportsBadInput) {
    const std::string dir = temp_dir("decompile");
    const CorpusFile& f = corpus_file("src_v20/tf2_test_displacement_decompile.bsp");
    const auto ok = run_cli({"decompile", f.path.string(), "-o", dir + "/out.vmf", "--json"});
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_NE(ok.out.find("\"displacements\": 3"), std::string::npos) << ok.out;
    std::ifstream in(dir + "/out.vmf");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto m = mapfile::read(text, "out.vmf");
    EXPECT_EQ(m.dialect, mapfile::Dialect::vmf);
    EXPECT_GT(m.entities[0].brushes.size(), 0u);

    const auto q1 = run_cli({"decompile", corpus_file("q1_v29/q1_mp_lobby.bsp").path.string(), "-o", dir + "/q1.map", "--format", "vmf"});
    EXPECT_EQ(q1.exit_code, 1) << "VMF is for Source maps";
    const auto bad_format = run_cli({"decompile", f.path.string(), "-o", dir + "/x.map", "--format", "nonsense"});
    EXPECT_EQ(bad_format.exit_code, 2);

    const Bytes full = read_corpus(f);
    {
        std::ofstream cut(dir + "/cut.bsp", std::ios::binary);
        cut.write(reinterpret_cast<const char*>(full.data()), std::streamsize(full.size() / 3));
    }
    const auto bad = run_cli({"decompile", dir + "/cut.bsp", "-o", dir + "/cut.vmf"});
    EXPECT_EQ(bad.exit_code, 1) << bad.err;
    EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

}  // namespace

// func_occluder: none of the corpus maps has one, so one is added to a real
// Source map the way vbsp stores it (an occlusion lump polygon on the map's
// own face 0, and "occludernumber" on the entity), and the decompiled entity
// must get a brush whose TOOLS/TOOLSOCCLUDER side lies on that face's plane
// with the face's corners on it; an occludernumber the lump lacks is a note.
// Hammer's displacement attributes come back as the VMF dispinfo "flags" that
// vbsp stored in minTess: none on the corpus map (its minTess holds the high
// bit alone), and the set bits on a copy with "no hull" and "no ray collision".
// A Source map written as a .map dialect loses its displacements (the format
// has none): a note says how many, instead of a silent "0 displacements".
TEST(DecompileSource, DisplacementsDroppedByAMapDialectAreNoted) {
    const CorpusFile& file = corpus_file("src_v19/sdk_vehicles_v19.bsp");
    const Bsp bsp = Bsp::open(file.path);
    const decompile::Result vmf = decompile::decompile(bsp);
    ASSERT_GT(vmf.stats.displacements, 0u);
    for (const std::string& n : vmf.notes) EXPECT_EQ(n.find("displacement"), std::string::npos) << n;
    decompile::Options options;
    options.dialect = mapfile::Dialect::valve220;
    const decompile::Result map = decompile::decompile(bsp, options);
    EXPECT_EQ(map.stats.displacements, 0u);
    EXPECT_EQ(map.stats.brushes, vmf.stats.brushes);
    const std::string want = std::to_string(vmf.stats.displacements) + " displacements not written: the valve220 format";
    EXPECT_TRUE(std::any_of(map.notes.begin(), map.notes.end(),
                            [&](const std::string& n) { return n.find(want) != std::string::npos; }))
        << want;
}

TEST(DecompileSource, DisplacementFlagsComeBackFromMinTess) {
    const CorpusFile& file = corpus_file("src_v20/tf2_test_displacement_decompile.bsp");
    const auto flags_of = [](const Bsp& bsp) {
        std::vector<int> out;
        for (const auto& e : decompile::decompile(bsp).map.entities)
            for (const auto& b : e.brushes)
                for (const auto& side : b.sides)
                    if (side.displacement) out.push_back(side.displacement->flags);
        return out;
    };
    const std::vector<int> plain = flags_of(Bsp::open(file.path));
    ASSERT_EQ(plain.size(), 3u);
    EXPECT_EQ(plain, std::vector<int>(3, 0));
    const uint32_t set = source::DISP_FLAG_NO_HULL_COLL | source::DISP_FLAG_NO_RAY_COLL;
    const std::vector<int> flagged = flags_of(with_disp_flags(file.path, set));
    EXPECT_EQ(flagged, std::vector<int>(3, int(set)));
    const std::string vmf = mapfile::write(decompile::decompile(with_disp_flags(file.path, set)).map);
    EXPECT_NE(vmf.find("\"flags\" \"12\""), std::string::npos);
}

TEST(DecompileSource, FuncOccluderComesBackFromTheOcclusionLump) {
    const CorpusFile& file = corpus_file("src_v20/sdk2013_boxinaroom.bsp");
    Bsp bsp = Bsp::open(file.path);
    Vec3d normal{}, corner{};
    double dist = 0;
    std::vector<int32_t> indices;
    int32_t planenum = 0;
    {
        const source::Map map(bsp);
        ASSERT_FALSE(map.faces().empty());
        const auto& face = map.faces()[0];
        planenum = face.planenum;
        for (int32_t k = 0; k < face.numedges; ++k) {
            const int32_t se = map.surfedges()[size_t(face.firstedge + k)].edge;
            const auto& e = map.edges()[size_t(se < 0 ? -se : se)];
            indices.push_back(se < 0 ? e.v[1] : e.v[0]);
        }
        const auto& p = map.planes()[size_t(planenum)];
        normal = {p.normal.x, p.normal.y, p.normal.z};
        dist = p.dist;
        const auto& v = map.vertexes()[size_t(indices[0])];
        corner = {v.point.x, v.point.y, v.point.z};
    }
    ASSERT_GE(indices.size(), 3u);
    auto put = [](Bytes& b, int32_t v) {
        for (int i = 0; i < 4; ++i) b.push_back(uint8_t(uint32_t(v) >> (8 * i)));
    };
    Bytes occlusion;
    put(occlusion, 1);  // occluders
    for (int32_t v : {0, 0, 1}) put(occlusion, v);         // flags, firstpoly, polycount
    for (int i = 0; i < 6; ++i) put(occlusion, 0);         // mins, maxs (unused here)
    put(occlusion, 0);                                       // area
    put(occlusion, 1);                                       // polygons
    for (int32_t v : {0, int32_t(indices.size()), planenum}) put(occlusion, v);
    put(occlusion, int32_t(indices.size()));                 // vertex indices
    for (int32_t v : indices) put(occlusion, v);
    ASSERT_EQ(bsp.entry(source::lump::occlusion).version, 2) << "doccluderdata_t with area";
    bsp.replace(source::lump::occlusion, occlusion);
    const ByteSpan old_entities = bsp.decoded(source::lump::entities);
    std::string text(old_entities.begin(), old_entities.end());
    while (!text.empty() && text.back() == '\0') text.pop_back();
    text += "{\n\"classname\" \"func_occluder\"\n\"StartActive\" \"1\"\n\"occludernumber\" \"0\"\n}\n"
            "{\n\"classname\" \"func_occluder\"\n\"occludernumber\" \"7\"\n}\n";
    text.push_back('\0');
    bsp.replace(source::lump::entities, Bytes(text.begin(), text.end()));
    const Bsp edited = Bsp::parse(bsp.serialize(), "occluder.bsp");

    const decompile::Result r = decompile::decompile(edited);
    std::vector<const mapfile::MapEntity*> occluders;
    for (const auto& e : r.map.entities)
        if (e.get("classname") == "func_occluder") occluders.push_back(&e);
    ASSERT_EQ(occluders.size(), 2u);
    const mapfile::MapEntity& good = *occluders[0];
    EXPECT_EQ(good.get("occludernumber", "gone"), "gone");
    EXPECT_EQ(good.get("StartActive"), "1");
    ASSERT_EQ(good.brushes.size(), 1u);
    size_t tops = 0;
    for (const auto& side : good.brushes[0].sides) {
        if (side.material != "TOOLS/TOOLSOCCLUDER") {
            EXPECT_EQ(side.material, "TOOLS/TOOLSNODRAW");
            continue;
        }
        ++tops;
        const auto p = mapfile::plane_from_points(side.points);
        EXPECT_GT(p.normal[0] * normal[0] + p.normal[1] * normal[1] + p.normal[2] * normal[2], 1 - 1e-9);
        EXPECT_NEAR(p.dist, dist, 0.01);
        EXPECT_NEAR(p.normal[0] * corner[0] + p.normal[1] * corner[1] + p.normal[2] * corner[2], p.dist, 0.01);
    }
    EXPECT_EQ(tops, 1u);
    EXPECT_TRUE(occluders[1]->brushes.empty());
    bool noted = false;
    for (const auto& n : r.notes) noted |= n.find("occluder '7'") != std::string::npos;
    EXPECT_TRUE(noted);
}
