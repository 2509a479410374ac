// Quake 2 (IBSP 38) -> .map from the brush lumps: Valve 220 axes with
// contents / flags / value by default (exact texinfo), the Quake 2 standard
// format on request.
#include "common.hpp"

#include <bspkit/formats/quake2.hpp>

#include <algorithm>

namespace bspkit::decompile::detail {

Result decompile_quake2(const Bsp& bsp, const Options& options) {
    using M = quake2::Map;
    const quake2::Map map(bsp);
    Result r;
    const auto models = map.models();
    EntityTable t = start_map(r, bsp, options, mapfile::Dialect::quake2, models.size());
    const auto brushes = map.brushes();
    const auto sides = map.brushsides();
    const auto planes = map.planes();
    const auto texinfo = map.texinfo();
    const auto nodes = map.nodes();
    const auto leafs = map.leafs();
    const auto leafbrushes = map.leafbrushes();
    std::vector<uint8_t> owned, seen;
    for (size_t m = 0; m < models.size(); ++m) {
        const auto list = model_brushes(bsp, nodes, leafs, leafbrushes, brushes.size(), models[m].headnode, m,
                                        {M::LUMP_MODELS, M::LUMP_LEAFS, M::LUMP_LEAFBRUSHES, M::LUMP_BRUSHES}, owned, seen);
        if (t.model_entity[m] < 0) continue;
        const size_t ent = size_t(t.model_entity[m]);
        const Vec3d off = t.model_offset[m];
        for (size_t bi : list) {
            const auto& b = brushes[bi];
            if (b.firstside < 0 || b.numsides < 0 || size_t(b.firstside) + size_t(b.numsides) > sides.size())
                fail(bsp, M::LUMP_BRUSHES, bi, "sides out of range");
            std::vector<PlaneD> pl;
            std::vector<int64_t> ids;
            for (int k = 0; k < b.numsides; ++k) {
                const size_t si = size_t(b.firstside + k);
                const auto& p = at(bsp, planes, sides[si].planenum, M::LUMP_PLANES, M::LUMP_BRUSHSIDES, si, "plane");
                PlaneD d{{p.normal[0], p.normal[1], p.normal[2]}, p.dist};
                d.dist += dot(d.normal, off);
                pl.push_back(d);
                ids.push_back(int64_t(si));
            }
            emit_brush(r, ent, int64_t(bi), off, pl, ids, [&](mapfile::Side& s, size_t k) {
                const size_t si = size_t(ids[k]);
                s.contents = b.contents;
                const int16_t ti = sides[si].texinfo;
                std::array<std::array<double, 4>, 2> vecs{};
                if (ti < 0) {
                    s.material = (b.contents & 0x10000) ? "e1u1/clip" : "e1u1/skip";
                    vecs = mapfile::standard_vectors(pl[k].normal, {});
                } else {
                    const auto& tx = at(bsp, texinfo, ti, M::LUMP_TEXINFO, M::LUMP_BRUSHSIDES, si, "texinfo");
                    for (size_t i = 0; i < 2; ++i)
                        for (size_t c = 0; c < 4; ++c) vecs[i][c] = tx.vecs[i][c];
                    vecs = moved_vectors(vecs, off);
                    s.material = field_name(tx.texture, sizeof tx.texture);
                    s.flags = tx.flags;
                    s.value = tx.value;
                    if (s.material.empty()) s.material = "e1u1/skip";
                }
                set_projection(s, r.map.dialect, vecs, pl[k].normal);
            });
        }
    }
    if (r.map.dialect == mapfile::Dialect::quake2 || r.map.dialect == mapfile::Dialect::valve220)
        r.map.entities[0].set("mapversion", "220");
    return r;
}

}  // namespace bspkit::decompile::detail
