// `bspkit check` for Nightfire (BSP 42): every reference of seed 003's
// "Indexing Lumps" table, draw indices against each surface's own vertex
// block, projection indices, lightmap sizes and visibility rows.
//
// Lightmap size: the lightmap projection is pre-scaled (S, T in luxels per
// unit), so a surface needs (ceil(max s) - floor(min s) + 1) x (same for t)
// RGB samples per style; consecutive LightingOffsets of real maps differ by
// exactly that.
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/visibility.hpp>

#include "formats/common/check_util.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace bspkit::nightfire {
namespace {

using checks::Checker;

class NightfireCheck {
public:
    NightfireCheck(const Map& map, Checker& c) : map_(map), c_(c) {}

    void run() {
        planes_ = map_.planes();
        vertices_ = map_.vertices();
        indices_ = map_.draw_indices();
        nodes_ = map_.nodes();
        surfaces_ = map_.surfaces();
        leaves_ = map_.leaves();
        leaf_surfaces_ = map_.leaf_surfaces();
        leaf_brushes_ = map_.leaf_brushes();
        models_ = map_.models();
        brushes_ = map_.brushes();
        brush_sides_ = map_.brush_sides();
        projections_ = map_.projections();
        lighting_ = map_.lighting();
        simple();
        surfaces();
        nodes();
        leaves();
        models();
        brushes();
        visibility();
    }

private:
    void simple() {
        for (size_t i = 0; i < planes_.size(); ++i) {
            c_.unit_normal("planes", i, "Normal", planes_[i].Normal);
            c_.finite("planes", i, "Distance", planes_[i].Distance);
            if (planes_[i].Type > 5)
                c_.warning("planes", i, "Type", "Type " + std::to_string(planes_[i].Type) + " is not 0-5");
        }
        for (size_t i = 0; i < vertices_.size(); ++i) c_.finite("vertices", i, "Point", vertices_[i].Point);
        for (size_t i = 0; i < projections_.size(); ++i) {
            c_.finite("projections", i, "S", projections_[i].S);
            c_.finite("projections", i, "T", projections_[i].T);
        }
        const size_t zero = map_.zero_vertices().size();
        if (zero != vertices_.size())
            c_.warning("zero_vertices", -1, "",
                       std::to_string(zero) + " records, Vertices has " + std::to_string(vertices_.size()) +
                           " (the compiler writes one per vertex)");
    }

    void surfaces() {
        c_.set_budget(2 * uint64_t(indices_.size()) + 2 * uint64_t(vertices_.size()) + (uint64_t(1) << 22));
        const size_t textures = map_.textures().size(), materials = map_.materials().size();
        for (size_t i = 0; i < surfaces_.size(); ++i) {
            const Surface& s = surfaces_[i];
            c_.index("surfaces", i, "PlaneIndex", s.PlaneIndex, planes_.size(), "planes");
            const bool verts_ok = c_.range("surfaces", i, "VerticesIndex", s.VerticesIndex, "VerticesCount",
                                           s.VerticesCount, vertices_.size(), "vertices");
            const bool index_ok = c_.range("surfaces", i, "DrawIndicesIndex", s.DrawIndicesIndex, "DrawIndicesCount",
                                           s.DrawIndicesCount, indices_.size(), "draw_indices");
            if (s.DrawIndicesCount % 3)
                c_.error("surfaces", i, "DrawIndicesCount",
                         "DrawIndicesCount " + std::to_string(s.DrawIndicesCount) + " is not a multiple of 3 (triangles)");
            c_.index("surfaces", i, "TextureIndex", s.TextureIndex, textures, "textures");
            c_.index("surfaces", i, "MaterialIndex", s.MaterialIndex, materials, "materials");
            c_.index("surfaces", i, "TextureProjectionIndex", s.TextureProjectionIndex, projections_.size(),
                     "projections");
            const bool lproj_ok = c_.index("surfaces", i, "LightmapProjectionIndex", s.LightmapProjectionIndex,
                                           projections_.size(), "projections");
            if (verts_ok && index_ok && s.DrawIndicesCount && c_.spend(s.DrawIndicesCount, "draw_indices")) {
                for (uint32_t k = 0; k < s.DrawIndicesCount; ++k) {
                    const uint32_t v = indices_[s.DrawIndicesIndex + k].TriangleCorner;
                    if (v >= s.VerticesCount) {
                        c_.error("draw_indices", int64_t(s.DrawIndicesIndex) + k, "TriangleCorner",
                                 "TriangleCorner " + std::to_string(v) + " of surface " + std::to_string(i) +
                                     " is outside its " + std::to_string(s.VerticesCount) + " vertices");
                        break;
                    }
                }
            }
            const int styles = checks::style_count(s.LightStyles);
            if (s.LightingOffset == -1 || styles == 0) continue;
            if (s.LightingOffset < 0 || size_t(s.LightingOffset) >= lighting_.size()) {
                c_.error("surfaces", i, "LightingOffset",
                         "LightingOffset " + std::to_string(s.LightingOffset) + " is outside the " +
                             std::to_string(lighting_.size()) + "-byte lighting lump");
                continue;
            }
            if (!verts_ok || !lproj_ok || s.VerticesCount == 0 || !c_.spend(s.VerticesCount, "surfaces")) continue;
            const Projection& p = projections_[s.LightmapProjectionIndex];
            float vecs[2][4];
            std::copy(p.S, p.S + 4, vecs[0]);
            std::copy(p.T, p.T + 4, vecs[1]);
            checks::LuxelExtents ext;
            for (uint32_t k = 0; k < s.VerticesCount; ++k) ext.add(vertices_[s.VerticesIndex + k].Point, vecs);
            int size[2];
            if (!ext.size(size, 1.0)) {
                c_.error("surfaces", i, "LightmapProjectionIndex",
                         "lightmap coordinates of the surface are not finite or too large");
                continue;
            }
            const uint64_t need = uint64_t(size[0]) * uint64_t(size[1]) * uint64_t(styles) * 3;
            if (uint64_t(s.LightingOffset) + need > lighting_.size())
                c_.error("surfaces", i, "LightingOffset",
                         "lightmap of " + std::to_string(size[0]) + " x " + std::to_string(size[1]) + " samples x " +
                             std::to_string(styles) + " styles x 3 bytes at LightingOffset " +
                             std::to_string(s.LightingOffset) + " runs past the " + std::to_string(lighting_.size()) +
                             "-byte lighting lump");
        }
    }

    void nodes() {
        for (size_t i = 0; i < nodes_.size(); ++i) {
            const Node& n = nodes_[i];
            c_.index("nodes", i, "PlaneIndex", n.PlaneIndex, planes_.size(), "planes");
            for (int k = 0; k < 2; ++k) {
                if (n.Children[k] >= 0)
                    c_.index("nodes", i, "Children", n.Children[k], nodes_.size(), "nodes");
                else
                    c_.index("nodes", i, "Children", -1 - int64_t(n.Children[k]), leaves_.size(), "leaves");
            }
        }
        // One parent per node: the tree from node 0 (the world's root).
        const int64_t root[] = {0};
        check_node_trees(c_, nodes_.size(), root, "Children",
                         [&](size_t n, int k) -> int64_t { return nodes_[n].Children[k]; });
    }

    void leaves() {
        for (size_t i = 0; i < leaves_.size(); ++i) {
            const Leaf& l = leaves_[i];
            c_.range("leaves", i, "LeafSurfacesIndex", l.LeafSurfacesIndex, "LeafSurfacesCount", l.LeafSurfacesCount,
                     leaf_surfaces_.size(), "leaf_surfaces");
            c_.range("leaves", i, "LeafBrushesIndex", l.LeafBrushesIndex, "LeafBrushesCount", l.LeafBrushesCount,
                     leaf_brushes_.size(), "leaf_brushes");
        }
        for (size_t i = 0; i < leaf_surfaces_.size(); ++i)
            c_.index("leaf_surfaces", i, "SurfaceIndex", leaf_surfaces_[i].SurfaceIndex, surfaces_.size(), "surfaces");
        for (size_t i = 0; i < leaf_brushes_.size(); ++i)
            c_.index("leaf_brushes", i, "BrushIndex", leaf_brushes_[i].BrushIndex, brushes_.size(), "brushes");
    }

    void models() {
        if (models_.empty()) {
            c_.error("models", -1, "", "no models: model 0 (the world) is required");
            return;
        }
        for (size_t i = 0; i < models_.size(); ++i) {
            const Model& m = models_[i];
            c_.finite("models", i, "Mins", m.Mins);
            c_.finite("models", i, "Maxs", m.Maxs);
            c_.range("models", i, "LeavesIndex", m.LeavesIndex, "LeavesCount", m.LeavesCount, leaves_.size(), "leaves");
            c_.range("models", i, "SurfacesIndex", m.SurfacesIndex, "SurfacesCount", m.SurfacesCount, surfaces_.size(),
                     "surfaces");
        }
    }

    void brushes() {
        for (size_t i = 0; i < brushes_.size(); ++i)
            c_.range("brushes", i, "BrushSidesIndex", brushes_[i].BrushSidesIndex, "BrushSidesCount",
                     brushes_[i].BrushSidesCount, brush_sides_.size(), "brush_sides");
        for (size_t i = 0; i < brush_sides_.size(); ++i) {
            c_.index("brush_sides", i, "SurfaceIndex", brush_sides_[i].SurfaceIndex, surfaces_.size(), "surfaces");
            c_.index("brush_sides", i, "PlaneIndex", brush_sides_[i].PlaneIndex, planes_.size(), "planes");
        }
    }

    void visibility() {
        const ByteSpan vis_lump = map_.visibility();
        // Leaf 0's offset is ignored by the engine (seed 003); -1 marks brush-model leaves.
        for (size_t i = 1; i < leaves_.size(); ++i) {
            const int32_t ofs = leaves_[i].VisibilityOffset;
            if (ofs == -1 || vis_lump.empty()) continue;
            if (ofs < 0 || size_t(ofs) >= vis_lump.size())
                c_.error("leaves", i, "VisibilityOffset",
                         "VisibilityOffset " + std::to_string(ofs) + " is outside the " +
                             std::to_string(vis_lump.size()) + "-byte visibility lump");
        }
        Visibility vis;
        try {
            vis = Visibility::of(map_.bsp());
        } catch (const Error& e) {
            c_.error("visibility", -1, "", e.detail());
            return;
        }
        if (vis.encoding() == Visibility::Encoding::none) return;
        for (size_t cl = 0; cl < vis.clusters(); ++cl) {
            if (!checks::vis_budget(c_, "visibility", cl, vis.row_bytes())) break;
            const auto ofs = vis.row_offset(cl);
            if (!ofs || *ofs < 0 || size_t(*ofs) >= vis_lump.size()) continue;  // reported above
            if (vis.row_status(cl) == RowStatus::truncated)
                c_.error("leaves", int64_t(cl + 1), "VisibilityOffset",
                         "the " + std::to_string(vis.stored_row_bytes()) + "-byte row at VisibilityOffset " +
                             std::to_string(*ofs) + " runs past the end of the visibility lump");
        }
    }

    const Map& map_;
    Checker& c_;
    std::span<const Plane> planes_;
    std::span<const Vertex> vertices_;
    std::span<const DrawIndex> indices_;
    std::span<const Node> nodes_;
    std::span<const Surface> surfaces_;
    std::span<const Leaf> leaves_;
    std::span<const LeafSurface> leaf_surfaces_;
    std::span<const LeafBrush> leaf_brushes_;
    std::span<const Model> models_;
    std::span<const Brush> brushes_;
    std::span<const BrushSide> brush_sides_;
    std::span<const Projection> projections_;
    ByteSpan lighting_;
};

}  // namespace

void check(const Bsp& bsp, CheckReport& report) {
    Checker c(report);
    const Map map(bsp);
    NightfireCheck(map, c).run();
}

}  // namespace bspkit::nightfire
