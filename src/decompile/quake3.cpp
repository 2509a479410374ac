// Quake 3 (IBSP 46) and RTCW (IBSP 47) -> .map from the brush lumps (brushes
// with the shader's contents and surface flags) and patchDef2 from the patch
// surfaces' control points. The BSP keeps no texture projection for brush
// sides: in brush primitives (the default, Radiant's own format) each side's
// matrix is solved from the st of the drawn planar surface lying on it;
// sides without one, and the standard dialect, get the default projection.
#include "common.hpp"

#include <bspkit/formats/quake3.hpp>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace bspkit::decompile::detail {
namespace {

std::string shader_name(const quake3::dshader_t& s) {
    std::string n = field_name(s.shader, sizeof s.shader);
    if (n.rfind("textures/", 0) == 0) n = n.substr(9);
    if (n.empty()) n = "common/caulk";  // names a .map cannot hold: decompile() notes them
    return n;
}

/// The brush-primitive matrix of a side from the drawn planar surface on
/// it: the st gradient in the plane, from three spread vertices.
std::optional<std::array<double, 6>> bp_from_surface(std::span<const quake3::drawVert_t> verts, const Vec3d& off,
                                                     const Vec3d& normal) {
    auto pos = [&](size_t i) { return Vec3d{verts[i].xyz[0] + off[0], verts[i].xyz[1] + off[1], verts[i].xyz[2] + off[2]}; };
    size_t b = 0, c = 0;
    double best = -1;
    for (size_t i = 1; i < verts.size(); ++i) {
        const Vec3d d = sub(pos(i), pos(0));
        if (dot(d, d) > best) best = dot(d, d), b = i;
    }
    best = -1;
    for (size_t i = 1; i < verts.size(); ++i) {
        const Vec3d cr = cross(sub(pos(b), pos(0)), sub(pos(i), pos(0)));
        if (dot(cr, cr) > best) best = dot(cr, cr), c = i;
    }
    const Vec3d e1 = sub(pos(b), pos(0)), e2 = sub(pos(c), pos(0));
    const double a11 = dot(e1, e1), a12 = dot(e1, e2), a22 = dot(e2, e2), det = a11 * a22 - a12 * a12;
    if (!(det > 1e-6)) return std::nullopt;
    const auto axes = mapfile::bp_axes(normal);
    std::array<double, 6> m{};
    for (size_t k = 0; k < 2; ++k) {
        const double d1 = double(verts[b].st[k]) - verts[0].st[k], d2 = double(verts[c].st[k]) - verts[0].st[k];
        const double al = (d1 * a22 - d2 * a12) / det, be = (d2 * a11 - d1 * a12) / det;
        const Vec3d g = add(scale(e1, al), scale(e2, be));
        const double x = dot(g, axes[0]), y = dot(g, axes[1]);
        const Vec3d p0 = pos(0);
        // Rounded to 1e-9 (0.9999999999999998 -> 1): far below a texel of any texture.
        auto tidy = [](double v) { return std::round(v * 1e9) / 1e9; };
        m[k * 3] = tidy(x);
        m[k * 3 + 1] = tidy(y);
        m[k * 3 + 2] = tidy(verts[0].st[k] - (x * dot(p0, axes[0]) + y * dot(p0, axes[1])));
    }
    return m;
}

}  // namespace

Result decompile_quake3(const Bsp& bsp, const Options& options) {
    using M = quake3::Map;
    const quake3::Map map(bsp);
    Result r;
    const auto models = map.models();
    EntityTable t = start_map(r, bsp, options, mapfile::Dialect::quake3_bp, models.size());
    const auto brushes = map.brushes();
    const auto sides = map.brushsides();
    const auto planes = map.planes();
    const auto shaders = map.shaders();
    const auto surfaces = map.surfaces();
    const auto verts = map.vertexes();
    // Planar surfaces by shader: the drawn faces that give sides their projection.
    std::unordered_map<int32_t, std::vector<size_t>> planar;
    for (size_t si = 0; si < surfaces.size(); ++si) {
        const auto& sf = surfaces[si];
        if (sf.surfaceType == quake3::MST_PLANAR && sf.numVerts >= 3 && sf.firstVert >= 0 &&
            size_t(sf.firstVert) + size_t(sf.numVerts) <= verts.size())
            planar[sf.shaderNum].push_back(si);
    }
    const bool bp = r.map.dialect == mapfile::Dialect::quake3_bp;
    size_t projected = 0, sides_total = 0;
    for (size_t m = 0; m < models.size(); ++m) {
        if (t.model_entity[m] < 0) continue;
        const size_t ent = size_t(t.model_entity[m]);
        const Vec3d off = t.model_offset[m];
        const auto& md = models[m];
        if (md.firstBrush < 0 || md.numBrushes < 0 || size_t(md.firstBrush) + size_t(md.numBrushes) > brushes.size())
            fail(bsp, M::LUMP_MODELS, m, "brushes out of range");
        for (size_t bi = size_t(md.firstBrush); bi < size_t(md.firstBrush) + size_t(md.numBrushes); ++bi) {
            const auto& b = brushes[bi];
            if (b.firstSide < 0 || b.numSides < 0 || size_t(b.firstSide) + size_t(b.numSides) > sides.size())
                fail(bsp, M::LUMP_BRUSHES, bi, "sides out of range");
            std::vector<PlaneD> pl;
            std::vector<int64_t> ids;
            for (int k = 0; k < b.numSides; ++k) {
                const size_t si = size_t(b.firstSide + k);
                const auto& p = at(bsp, planes, sides[si].planeNum, M::LUMP_PLANES, M::LUMP_BRUSHSIDES, si, "plane");
                PlaneD d{{p.normal[0], p.normal[1], p.normal[2]}, p.dist};
                d.dist += dot(d.normal, off);
                pl.push_back(d);
                ids.push_back(int64_t(si));
            }
            const auto& bshader = at(bsp, shaders, b.shaderNum, M::LUMP_SHADERS, M::LUMP_BRUSHES, bi, "shader");
            emit_brush(r, ent, int64_t(bi), off, pl, ids, [&](mapfile::Side& s, size_t k, const Winding& w) {
                const size_t si = size_t(ids[k]);
                const auto& sh = sides[si].shaderNum < 0
                                     ? bshader
                                     : at(bsp, shaders, sides[si].shaderNum, M::LUMP_SHADERS, M::LUMP_BRUSHSIDES, si, "shader");
                s.material = shader_name(sh);
                s.contents = bshader.contentFlags;
                s.flags = sh.surfaceFlags;
                s.standard = {0, 0, 0, 0.5, 0.5};
                set_projection(s, r.map.dialect, mapfile::standard_vectors(pl[k].normal, s.standard), pl[k].normal);
                if (!bp) return;
                ++sides_total;
                // The drawn surface of the side's shader lying on its plane, inside its polygon's box.
                Vec3d lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
                for (const auto& v : w)
                    for (size_t q = 0; q < 3; ++q) lo[q] = std::min(lo[q], v[q] - 0.5), hi[q] = std::max(hi[q], v[q] + 0.5);
                const auto it = planar.find(sides[si].shaderNum);
                if (it == planar.end()) return;
                const double len = std::sqrt(dot(pl[k].normal, pl[k].normal));
                const Vec3d n = scale(pl[k].normal, 1 / len);
                for (size_t sfi : it->second) {
                    const auto& sf = surfaces[sfi];
                    const auto sv = verts.subspan(size_t(sf.firstVert), size_t(sf.numVerts));
                    bool on = true;
                    for (const auto& v : sv) {
                        const Vec3d p{v.xyz[0] + off[0], v.xyz[1] + off[1], v.xyz[2] + off[2]};
                        if (std::abs(dot(p, n) - pl[k].dist / len) > 0.05 || dot(Vec3d{v.normal[0], v.normal[1], v.normal[2]}, n) < 0.9) {
                            on = false;
                            break;
                        }
                        for (size_t q = 0; q < 3 && on; ++q) on = p[q] >= lo[q] && p[q] <= hi[q];
                        if (!on) break;
                    }
                    if (!on) continue;
                    if (auto mtx = bp_from_surface(sv, off, n)) {
                        s.bp_matrix = *mtx;
                        ++projected;
                        break;
                    }
                }
            });
        }
        if (md.firstSurface < 0 || md.numSurfaces < 0 || size_t(md.firstSurface) + size_t(md.numSurfaces) > surfaces.size())
            fail(bsp, M::LUMP_MODELS, m, "surfaces out of range");
        for (size_t si = size_t(md.firstSurface); si < size_t(md.firstSurface) + size_t(md.numSurfaces); ++si) {
            const auto& s = surfaces[si];
            if (s.surfaceType != quake3::MST_PATCH) continue;
            if (s.patchWidth < 3 || s.patchHeight < 3 || s.patchWidth % 2 == 0 || s.patchHeight % 2 == 0 ||
                int64_t(s.patchWidth) * s.patchHeight != s.numVerts || s.firstVert < 0 ||
                size_t(s.firstVert) + size_t(s.numVerts) > verts.size())
                fail(bsp, M::LUMP_SURFACES, si, "patch of " + std::to_string(s.patchWidth) + " x " +
                                                    std::to_string(s.patchHeight) + " control points does not match its vertices");
            mapfile::Patch p;
            p.material = shader_name(at(bsp, shaders, s.shaderNum, M::LUMP_SHADERS, M::LUMP_SURFACES, si, "shader"));
            p.rows = s.patchHeight;
            p.columns = s.patchWidth;
            for (int v = 0; v < s.numVerts; ++v) {
                const auto& dv = verts[size_t(s.firstVert + v)];
                p.points.push_back({pretty(dv.xyz[0]) + off[0], pretty(dv.xyz[1]) + off[1], pretty(dv.xyz[2]) + off[2],
                                    pretty(dv.st[0]), pretty(dv.st[1])});
            }
            r.map.entities[ent].patches.push_back(std::move(p));
        }
    }
    if (bp)
        r.notes.push_back(std::to_string(projected) + " of " + std::to_string(sides_total) +
                          " brush sides projected from the drawn surface on them (brush primitives); the others "
                          "(hidden, caulk, no surface) get the default");
    else
        r.notes.push_back("brush sides carry no texture projection in Quake 3 maps: the default one is written "
                          "(quake3-bp recovers it from the drawn surfaces)");
    return r;
}

}  // namespace bspkit::decompile::detail
