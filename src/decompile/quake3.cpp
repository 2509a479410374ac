// Quake 3 (IBSP 46) and RTCW (IBSP 47) -> .map from the brush lumps (brushes
// with the shader's contents and surface flags) and patchDef2 from the patch
// surfaces' control points. The BSP keeps no texture projection for brush
// sides (only the drawn surfaces' vertex st), so sides get the default one.
#include "common.hpp"

#include <bspkit/formats/quake3.hpp>

namespace bspkit::decompile::detail {
namespace {

std::string shader_name(const quake3::dshader_t& s) {
    std::string n = field_name(s.shader, sizeof s.shader);
    if (n.rfind("textures/", 0) == 0) n = n.substr(9);
    if (n.empty() || n.find_first_of(" \t\"") != std::string::npos) n = "common/caulk";
    return n;
}

}  // namespace

Result decompile_quake3(const Bsp& bsp, const Options& options) {
    using M = quake3::Map;
    const quake3::Map map(bsp);
    Result r;
    const auto models = map.models();
    EntityTable t = start_map(r, bsp, options, mapfile::Dialect::quake3, models.size());
    const auto brushes = map.brushes();
    const auto sides = map.brushsides();
    const auto planes = map.planes();
    const auto shaders = map.shaders();
    const auto surfaces = map.surfaces();
    const auto verts = map.vertexes();
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
            emit_brush(r, ent, int64_t(bi), off, pl, ids, [&](mapfile::Side& s, size_t k) {
                const size_t si = size_t(ids[k]);
                const auto& sh = sides[si].shaderNum < 0
                                     ? bshader
                                     : at(bsp, shaders, sides[si].shaderNum, M::LUMP_SHADERS, M::LUMP_BRUSHSIDES, si, "shader");
                s.material = shader_name(sh);
                s.contents = bshader.contentFlags;
                s.flags = sh.surfaceFlags;
                s.standard = {0, 0, 0, 0.5, 0.5};
                set_projection(s, r.map.dialect, mapfile::standard_vectors(pl[k].normal, s.standard), pl[k].normal);
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
    r.notes.push_back("brush sides carry no texture projection in Quake 3 maps: the default one is written");
    return r;
}

}  // namespace bspkit::decompile::detail
