// Quake 2 collision data for query::World: nodes, leafs, brushes and brush
// sides with the surface flags of their texinfo (qfiles.h CONTENTS_*).
#include "query/collision.hpp"

#include <bspkit/formats/quake2.hpp>

namespace bspkit::query::detail {

uint32_t quake2_flags(int32_t raw) {
    return quake2_common_flags(raw) | map_bits(raw, {{0x8, kLava}, {0x40, kMist}});
}

void build_quake2(const Bsp& bsp, Collision& c) {
    const quake2::Map map(bsp);
    c.kind = Kind::brushes;
    c.flags_of = quake2_flags;
    for (const auto& p : map.planes()) c.planes.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist, plane_type(p.normal)});
    Tree& t = c.trees[0];
    t.node_lump = "nodes";
    t.leaf_lump = "leafs";
    t.node_bytes = sizeof(quake2::dnode_t);
    for (const auto& n : map.nodes()) t.nodes.push_back({n.planenum, {n.children[0], n.children[1]}});
    for (const auto& l : map.leafs())
        t.leafs.push_back({l.contents, l.cluster, l.area, l.firstleafbrush, l.numleafbrushes});
    for (const auto& lb : map.leafbrushes()) c.leaf_brushes.push_back(lb.brush);
    for (const auto& b : map.brushes()) c.brushes.push_back({uint32_t(b.firstside), uint32_t(b.numsides), b.contents});
    const auto texinfo = map.texinfo();
    for (const auto& s : map.brushsides()) {
        const uint32_t surface =
            s.texinfo >= 0 && size_t(s.texinfo) < texinfo.size() ? uint32_t(texinfo[size_t(s.texinfo)].flags) : 0;
        c.sides.push_back({int32_t(s.planenum), surface, false});
    }
    const auto models = map.models();
    for (size_t m = 0; m < models.size(); ++m) {
        Model out;
        out.root[0] = models[m].headnode;
        c.models.push_back(out);
    }
    // q_shared.h: MASK_SOLID = SOLID | WINDOW; MASK_PLAYERSOLID adds
    // PLAYERCLIP and MONSTER; MASK_OPAQUE = SOLID | SLIME | LAVA.
    c.mask_solid = 0x1 | 0x2;
    c.mask_playersolid = 0x1 | 0x2 | 0x10000 | 0x2000000;
    c.mask_opaque = 0x1 | 0x10 | 0x8;
    c.epsilon = 0.03125f;
    c.player_box = {{-16, -16, -24}, {16, 16, 32}};
}

}  // namespace bspkit::query::detail
