// Source collision data for query::World: nodes, leafs, brushes, brush sides
// with their bevel marks and texinfo surface flags (bspflags.h CONTENTS_*),
// and the triangles of displacements (line and box traces).
#include "query/collision.hpp"

#include <bspkit/formats/source.hpp>

namespace bspkit::query::detail {

uint32_t source_flags(int32_t raw) {
    // Source reuses Quake 2's bits; 0x8 is GRATE and 0x80 OPAQUE instead of LAVA and (unused) 0x80.
    return quake2_common_flags(raw) | map_bits(raw, {{0x8, kGrate}, {0x80, kOpaque}});
}

void build_source(const Bsp& bsp, Collision& c) {
    const source::Map map(bsp);
    c.kind = Kind::brushes;
    c.flags_of = source_flags;
    for (const auto& p : map.planes()) {
        const float n[3] = {p.normal.x, p.normal.y, p.normal.z};
        c.planes.push_back({{n[0], n[1], n[2]}, p.dist, plane_type(n)});
    }
    Tree& t = c.trees[0];
    t.node_lump = "nodes";
    t.leaf_lump = "leafs";
    t.node_bytes = sizeof(source::dnode_t);
    for (const auto& n : map.nodes()) t.nodes.push_back({n.planenum, {n.children[0], n.children[1]}});
    for (const auto& l : map.leafs())
        t.leafs.push_back({l.contents, l.cluster, l.area(), l.firstleafbrush, l.numleafbrushes});
    for (const auto& lb : map.leafbrushes()) c.leaf_brushes.push_back(lb.brush);
    for (const auto& b : map.brushes()) c.brushes.push_back({uint32_t(b.firstside), uint32_t(b.numsides), b.contents});
    const auto texinfo = map.texinfo();
    for (const auto& s : map.brushsides()) {
        const uint32_t surface =
            s.texinfo >= 0 && size_t(s.texinfo) < texinfo.size() ? uint32_t(texinfo[size_t(s.texinfo)].flags) : 0;
        c.sides.push_back({int32_t(s.planenum), surface, (s.bevel & 0xFF) != 0});
    }
    const auto models = map.models();
    for (size_t m = 0; m < models.size(); ++m) {
        Model out;
        out.root[0] = models[m].headnode;
        c.models.push_back(out);
    }
    // Displacements collide by their triangles (CDispCollTree), with the
    // contents of their dispinfo; one flagged "no ray collision" stops no line
    // trace (CDispCollTree::AABBTree_Ray) and one flagged "no hull collision"
    // no box (AABBTree_SweepAABB, AABBTree_IntersectAABB).
    const auto dispinfo = map.dispinfo();
    // The faces the model's surfaces name: HDR-only console maps keep theirs in faces_hdr.
    const auto faces = map.world_faces();
    if (!dispinfo.empty() && !c.models.empty()) {
        Model& world = c.models[0];  // displacements belong to the world
        model::BuildOptions options;
        options.lightmaps = options.textures = false;
        options.all_models = false;
        options.kinds = model::kind_bit(model::SurfaceKind::displacement);  // the other faces unread
        const model::Map mesh = model::build(bsp, options);
        for (const auto& m : mesh.models) {
            if (m.index != 0) continue;
            for (const auto& s : m.surfaces) {
                if (s.kind != model::SurfaceKind::displacement || s.face < 0 || size_t(s.face) >= faces.size()) continue;
                const int d = faces[size_t(s.face)].dispinfo;
                if (d < 0 || size_t(d) >= dispinfo.size()) continue;
                const int32_t contents = dispinfo[size_t(d)].contents ? dispinfo[size_t(d)].contents : 0x1;
                const auto& face = faces[size_t(s.face)];
                const uint32_t surface = face.texinfo >= 0 && size_t(face.texinfo) < texinfo.size()
                                             ? uint32_t(texinfo[size_t(face.texinfo)].flags)
                                             : 0;
                const uint32_t flags = source::disp_flags(dispinfo[size_t(d)]);
                const bool lines = !(flags & source::DISP_FLAG_NO_RAY_COLL);
                const bool boxes = !(flags & source::DISP_FLAG_NO_HULL_COLL);
                if (!lines && !boxes) continue;
                for (size_t i = 0; i + 2 < s.indices.size(); i += 3)
                    world.triangles.push_back({s.vertices[s.indices[i]].position, s.vertices[s.indices[i + 1]].position,
                                               s.vertices[s.indices[i + 2]].position, contents, surface, lines, boxes});
            }
        }
    }
    // bspflags.h: MASK_SOLID = SOLID | MOVEABLE | WINDOW | MONSTER | GRATE;
    // MASK_PLAYERSOLID adds PLAYERCLIP; MASK_OPAQUE = SOLID | MOVEABLE | OPAQUE.
    c.mask_solid = 0x1 | 0x4000 | 0x2 | 0x2000000 | 0x8;
    c.mask_playersolid = c.mask_solid | 0x10000;
    c.mask_opaque = 0x1 | 0x4000 | 0x80;
    c.epsilon = 0.03125f;
    c.player_box = {{-16, -16, 0}, {16, 16, 72}};  // VEC_HULL_MIN / MAX
}

}  // namespace bspkit::query::detail
