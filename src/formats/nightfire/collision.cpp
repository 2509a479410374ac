// Nightfire collision data for query::World: nodes, leaves (Type 1 empty,
// 2 solid) and the brushes of the leaves. Brush Attributes have no public
// description; every brush is treated as solid.
#include "query/collision.hpp"

#include <bspkit/formats/nightfire.hpp>

#include <algorithm>

namespace bspkit::query::detail {

uint32_t nightfire_flags(int32_t raw) { return raw == 2 ? kSolid : 0u; }

void build_nightfire(const Bsp& bsp, Collision& c) {
    const nightfire::Map map(bsp);
    c.kind = Kind::brushes;
    c.flags_of = nightfire_flags;
    for (const auto& p : map.planes()) c.planes.push_back({{p.Normal[0], p.Normal[1], p.Normal[2]}, p.Distance, plane_type(p.Normal)});
    Tree& t = c.trees[0];
    t.node_lump = "nodes";
    t.leaf_lump = "leaves";
    t.node_bytes = sizeof(nightfire::Node);
    for (const auto& n : map.nodes()) t.nodes.push_back({int32_t(n.PlaneIndex), {n.Children[0], n.Children[1]}});
    for (size_t i = 0; i < map.leaves().size(); ++i) {
        const auto& l = map.leaves()[i];
        Leaf out{int32_t(l.Type), -1, -1, l.LeafBrushesIndex, l.LeafBrushesCount};
        if (c.vis) out.cluster = c.vis->cluster_of_leaf(i) ? int32_t(*c.vis->cluster_of_leaf(i)) : -1;
        t.leafs.push_back(out);
    }
    for (const auto& lb : map.leaf_brushes()) c.leaf_brushes.push_back(lb.BrushIndex);
    for (const auto& b : map.brushes()) c.brushes.push_back({b.BrushSidesIndex, b.BrushSidesCount, 2});
    for (const auto& s : map.brush_sides()) c.sides.push_back({int32_t(s.PlaneIndex), 0, false});
    const auto models = map.models();
    const auto leaf_brushes = map.leaf_brushes();
    // In a compiled map every leaf belongs to one model, so listing the brush
    // models' brushes reads each leaf brush about once; models whose leaf
    // ranges overlap again and again (a hostile file) stop at a budget.
    const uint64_t budget = std::max<uint64_t>(uint64_t(1) << 22, 16 * (uint64_t(t.leafs.size()) + leaf_brushes.size()));
    uint64_t work = 0;
    std::vector<uint32_t> brush_seen(c.brushes.size(), 0);
    for (size_t m = 0; m < models.size(); ++m) {
        Model out;
        if (m == 0) {
            out.root[0] = t.nodes.empty() ? -1 : 0;
        } else {  // brush models: the brushes of their leaves, each once
            const uint64_t first = models[m].LeavesIndex, count = models[m].LeavesCount;
            for (uint64_t l = first; l < first + count && l < t.leafs.size(); ++l) {
                const uint64_t lb_first = uint64_t(t.leafs[l].first_brush),
                               lb_end = std::min<uint64_t>(lb_first + t.leafs[l].num_brushes, leaf_brushes.size());
                work += 1 + (lb_end > lb_first ? lb_end - lb_first : 0);
                if (work > budget)
                    fail(bsp, "models", int64_t(m), sizeof(nightfire::Model),
                         "the brush models' leaf ranges overlap: more than " + std::to_string(budget) +
                             " leaf brushes read to list their brushes");
                for (uint64_t b = lb_first; b < lb_end; ++b) {
                    const uint32_t brush = leaf_brushes[b].BrushIndex;
                    if (brush < brush_seen.size() && brush_seen[brush] == uint32_t(m)) continue;
                    if (brush < brush_seen.size()) brush_seen[brush] = uint32_t(m);
                    out.brushes.push_back(brush);
                }
            }
        }
        c.models.push_back(out);
    }
    c.contents_from_brushes = true;
    c.mask_solid = c.mask_playersolid = c.mask_opaque = 2;
    c.epsilon = 0.03125f;
    c.player_box = {{-16, -16, -36}, {16, 16, 36}};
}

}  // namespace bspkit::query::detail
