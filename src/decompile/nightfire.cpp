// Nightfire (v42) -> .map from the brush lumps: each side's texture,
// projection (exact, Valve 220 axes) and surface flags from the surface it
// names, the brush's attributes as contents (written as Valve 220 sides
// with contents / flags / value, the Quake 2 Valve dialect); brushes of
// each model through its leaves.
#include "common.hpp"

#include <bspkit/formats/nightfire.hpp>

#include <algorithm>

namespace bspkit::decompile::detail {

Result decompile_nightfire(const Bsp& bsp, const Options& options) {
    using M = nightfire::Map;
    const nightfire::Map map(bsp);
    Result r;
    const auto models = map.models();
    EntityTable t = start_map(r, bsp, options, mapfile::Dialect::quake2, models.size());
    const auto brushes = map.brushes();
    const auto sides = map.brush_sides();
    const auto planes = map.planes();
    const auto surfaces = map.surfaces();
    const auto textures = map.textures();
    const auto projections = map.projections();
    const auto leaves = map.leaves();
    const auto leaf_brushes = map.leaf_brushes();
    std::vector<uint8_t> owned(brushes.size());
    for (size_t m = 0; m < models.size(); ++m) {
        const auto& md = models[m];
        std::vector<size_t> list;
        if (size_t(md.LeavesIndex) + size_t(md.LeavesCount) > leaves.size()) fail(bsp, M::Models, m, "leaves out of range");
        for (size_t li = md.LeavesIndex; li < size_t(md.LeavesIndex) + md.LeavesCount; ++li) {
            const auto& l = leaves[li];
            for (size_t k = 0; k < l.LeafBrushesCount; ++k) {
                const auto& lb = at(bsp, leaf_brushes, int64_t(l.LeafBrushesIndex) + int64_t(k), M::LeafBrushes, M::Leaves, li,
                                    "leaf brush");
                (void)at(bsp, brushes, lb.BrushIndex, M::Brushes, M::LeafBrushes, l.LeafBrushesIndex + k, "brush");
                if (!owned[lb.BrushIndex]) owned[lb.BrushIndex] = 1, list.push_back(lb.BrushIndex);
            }
        }
        std::sort(list.begin(), list.end());
        if (t.model_entity[m] < 0) continue;
        const size_t ent = size_t(t.model_entity[m]);
        const Vec3d off = t.model_offset[m];
        for (size_t bi : list) {
            const auto& b = brushes[bi];
            if (size_t(b.BrushSidesIndex) + size_t(b.BrushSidesCount) > sides.size())
                fail(bsp, M::Brushes, bi, "sides out of range");
            std::vector<PlaneD> pl;
            std::vector<int64_t> ids;
            for (size_t k = 0; k < b.BrushSidesCount; ++k) {
                const size_t si = b.BrushSidesIndex + k;
                const auto& p = at(bsp, planes, sides[si].PlaneIndex, M::Planes, M::BrushSides, si, "plane");
                PlaneD d{{p.Normal[0], p.Normal[1], p.Normal[2]}, p.Distance};
                d.dist += dot(d.normal, off);
                pl.push_back(d);
                ids.push_back(int64_t(si));
            }
            emit_brush(r, ent, int64_t(bi), off, pl, ids, [&](mapfile::Side& s, size_t k) {
                const size_t si = size_t(ids[k]);
                const auto& surf = at(bsp, surfaces, sides[si].SurfaceIndex, M::Surfaces, M::BrushSides, si, "surface");
                const auto& tex = at(bsp, textures, surf.TextureIndex, M::Textures, M::Surfaces, sides[si].SurfaceIndex, "texture");
                s.material = field_name(tex.Path, sizeof tex.Path);
                if (s.material.empty()) s.material = "special/nodraw";
                s.contents = int32_t(b.Attributes);
                s.flags = int32_t(surf.Flags);
                std::array<std::array<double, 4>, 2> vecs{};
                if (surf.TextureProjectionIndex < projections.size()) {
                    const auto& pr = projections[surf.TextureProjectionIndex];
                    for (size_t c = 0; c < 4; ++c) vecs[0][c] = pr.S[c], vecs[1][c] = pr.T[c];
                    vecs = moved_vectors(vecs, off);
                } else {
                    vecs = mapfile::standard_vectors(pl[k].normal, {});
                }
                set_projection(s, r.map.dialect, vecs, pl[k].normal);
            });
        }
    }
    if (r.map.dialect == mapfile::Dialect::valve220 || r.map.dialect == mapfile::Dialect::quake2)
        r.map.entities[0].set("mapversion", "220");
    return r;
}

}  // namespace bspkit::decompile::detail
