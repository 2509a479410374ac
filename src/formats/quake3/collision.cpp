// Quake 3 / RTCW collision data for query::World: nodes, leafs, brushes with
// the contents of their shader, sides with the shader's surface flags, and
// the triangles of patches (the model's tessellation) for line and box traces.
#include "query/collision.hpp"

#include <bspkit/formats/quake3.hpp>

#include <algorithm>

namespace bspkit::query::detail {

uint32_t quake3_flags(int32_t raw) {
    return map_bits(raw, {{0x1, kSolid}, {0x8, kLava}, {0x10, kSlime}, {0x20, kWater}, {0x40, kFog},
                          {0x8000, kAreaPortal}, {0x10000, kPlayerClip}, {0x20000, kMonsterClip}, {0x1000000, kOrigin},
                          {0x8000000, kDetail}, {0x20000000, kTranslucent}, {0x40000000, kTrigger}});
}

void build_quake3(const Bsp& bsp, Collision& c) {
    const quake3::Map map(bsp);
    c.kind = Kind::brushes;
    c.flags_of = quake3_flags;
    c.contents_from_brushes = true;
    for (const auto& p : map.planes()) c.planes.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist, plane_type(p.normal)});
    const auto shaders = map.shaders();
    auto shader = [&](int32_t i) -> const quake3::dshader_t* {
        return i >= 0 && size_t(i) < shaders.size() ? &shaders[size_t(i)] : nullptr;
    };
    for (const auto& b : map.brushes()) {
        const auto* s = shader(b.shaderNum);
        c.brushes.push_back({uint32_t(b.firstSide), uint32_t(b.numSides), s ? s->contentFlags : 0});
    }
    for (const auto& s : map.brushsides()) {
        const auto* sh = shader(s.shaderNum);
        c.sides.push_back({s.planeNum, sh ? uint32_t(sh->surfaceFlags) : 0u, false});
    }
    for (const auto& lb : map.leafbrushes()) c.leaf_brushes.push_back(uint32_t(lb.brush));
    Tree& t = c.trees[0];
    t.node_lump = "nodes";
    t.leaf_lump = "leafs";
    t.node_bytes = sizeof(quake3::dnode_t);
    for (const auto& n : map.nodes()) t.nodes.push_back({n.planeNum, {n.children[0], n.children[1]}});
    for (const auto& l : map.leafs())
        t.leafs.push_back({0, l.cluster, l.area, uint32_t(l.firstLeafBrush), uint32_t(l.numLeafBrushes)});
    const auto models = map.models();
    // Compiled submodels own disjoint brush ranges; ranges that overlap again
    // and again (a hostile file: every model naming every brush) stop at a
    // budget instead of filling memory.
    const uint64_t budget = std::max<uint64_t>(uint64_t(1) << 22, 16 * uint64_t(c.brushes.size()));
    uint64_t listed = 0;
    for (size_t m = 0; m < models.size(); ++m) {
        Model out;
        if (m == 0) {
            out.root[0] = t.nodes.empty() ? -1 : 0;
        } else {
            // Quake 3 submodels name their brushes directly (no subtree).
            const int64_t first = std::max<int64_t>(models[m].firstBrush, 0),
                          end = std::min<int64_t>(int64_t(models[m].firstBrush) + models[m].numBrushes,
                                                  int64_t(c.brushes.size()));
            if (models[m].firstBrush >= 0 && end > first) {
                listed += uint64_t(end - first);
                if (listed > budget)
                    fail(bsp, "models", int64_t(m), sizeof(quake3::dmodel_t),
                         "the submodels' brush ranges overlap: more than " + std::to_string(budget) +
                             " brushes listed");
                for (int64_t b = first; b < end; ++b) out.brushes.push_back(uint32_t(b));
            }
        }
        c.models.push_back(out);
    }
    // Patches collide in the engine (cm_patch.c), the world's and each
    // submodel's (CMod_LoadSubmodels gives a submodel its surfaces); their
    // triangles here come from the renderer's tessellation, close to the
    // engine's own subdivision. Only the patches are built: the engine's
    // collision reads no other face, so a damaged one does not stop traces.
    model::BuildOptions options;
    options.lightmaps = options.textures = false;
    options.kinds = model::kind_bit(model::SurfaceKind::patch);
    const model::Map mesh = model::build(bsp, options);
    const auto surfaces = map.surfaces();
    constexpr uint32_t SURF_NONSOLID = 0x4000;
    for (const auto& m : mesh.models) {
        if (m.index >= c.models.size()) continue;
        std::vector<Triangle>& out = c.models[m.index].triangles;
        for (const auto& s : m.surfaces) {
            if (s.kind != model::SurfaceKind::patch || s.face < 0 || size_t(s.face) >= surfaces.size()) continue;
            const auto* sh = shader(surfaces[size_t(s.face)].shaderNum);
            if (!sh || !sh->contentFlags || (uint32_t(sh->surfaceFlags) & SURF_NONSOLID)) continue;
            for (size_t i = 0; i + 2 < s.indices.size(); i += 3)
                out.push_back({s.vertices[s.indices[i]].position, s.vertices[s.indices[i + 1]].position,
                               s.vertices[s.indices[i + 2]].position, sh->contentFlags, uint32_t(sh->surfaceFlags)});
        }
    }
    // bg_public.h / surfaceflags.h: MASK_SOLID = SOLID; MASK_PLAYERSOLID adds
    // PLAYERCLIP and BODY; MASK_OPAQUE = SOLID | SLIME | LAVA.
    c.mask_solid = 0x1;
    c.mask_playersolid = 0x1 | 0x10000 | 0x2000000;
    c.mask_opaque = 0x1 | 0x10 | 0x8;
    c.epsilon = 0.125f;  // SURFACE_CLIP_EPSILON
    c.player_box = {{-15, -15, -24}, {15, 15, 32}};
}

}  // namespace bspkit::query::detail
