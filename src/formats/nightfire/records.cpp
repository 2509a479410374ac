// Typed view of Nightfire maps.
#include <bspkit/formats/nightfire.hpp>

namespace bspkit::nightfire {

Map::Map(const Bsp& bsp) : bsp_(&bsp) {
    if (bsp.format() != Format::nightfire)
        throw Error({bsp.file_name(), "header", 0}, std::string(format_id(bsp.format())) + " is not a Nightfire map");
}

ByteSpan Map::entities() const { return bsp_->decoded(Entities); }
ByteSpan Map::visibility() const { return bsp_->decoded(Visibility); }
ByteSpan Map::lighting() const { return bsp_->decoded(Lighting); }

std::span<const Plane> Map::planes() const { return planes_.get(*bsp_, Planes); }
std::span<const Texture> Map::textures() const { return textures_.get(*bsp_, Textures); }
std::span<const Material> Map::materials() const { return materials_.get(*bsp_, Materials); }
std::span<const Vertex> Map::vertices() const { return vertices_.get(*bsp_, Vertices); }
std::span<const ZeroVertex> Map::zero_vertices() const { return zero_vertices_.get(*bsp_, ZeroVertices); }
std::span<const DrawIndex> Map::draw_indices() const { return draw_indices_.get(*bsp_, DrawIndices); }
std::span<const Node> Map::nodes() const { return nodes_.get(*bsp_, Nodes); }
std::span<const Surface> Map::surfaces() const { return surfaces_.get(*bsp_, Surfaces); }
std::span<const Leaf> Map::leaves() const { return leaves_.get(*bsp_, Leaves); }
std::span<const LeafSurface> Map::leaf_surfaces() const { return leaf_surfaces_.get(*bsp_, LeafSurfaces); }
std::span<const LeafBrush> Map::leaf_brushes() const { return leaf_brushes_.get(*bsp_, LeafBrushes); }
std::span<const Model> Map::models() const { return models_.get(*bsp_, Models); }
std::span<const Brush> Map::brushes() const { return brushes_.get(*bsp_, Brushes); }
std::span<const BrushSide> Map::brush_sides() const { return brush_sides_.get(*bsp_, BrushSides); }
std::span<const Projection> Map::projections() const { return projections_.get(*bsp_, Projections); }

}  // namespace bspkit::nightfire

#include "formats/common/check_util.hpp"

#include <algorithm>

namespace bspkit::nightfire {

std::optional<SurfaceLightmap> surface_lightmap(const Map& map, size_t surface) {
    const auto surfaces = map.surfaces();
    if (surface >= surfaces.size()) return std::nullopt;
    const Surface& s = surfaces[surface];
    SurfaceLightmap out;
    out.styles = checks::style_count(s.LightStyles);
    out.offset = s.LightingOffset;
    if (s.LightingOffset < 0 || out.styles == 0 || s.VerticesCount == 0) return std::nullopt;
    const auto vertices = map.vertices();
    const auto projections = map.projections();
    if (s.LightmapProjectionIndex >= projections.size()) return std::nullopt;
    if (uint64_t(s.VerticesIndex) + s.VerticesCount > vertices.size()) return std::nullopt;
    const Projection& p = projections[s.LightmapProjectionIndex];
    float vecs[2][4];
    std::copy(p.S, p.S + 4, vecs[0]);
    std::copy(p.T, p.T + 4, vecs[1]);
    checks::LuxelExtents ext;
    for (uint32_t k = 0; k < s.VerticesCount; ++k) ext.add(vertices[s.VerticesIndex + k].Point, vecs);
    int size[2];
    if (!ext.size(size, 1.0)) return std::nullopt;
    out.width = size[0];
    out.height = size[1];
    out.bytes = size_t(out.width) * size_t(out.height) * size_t(out.styles) * 3;
    return out;
}

}  // namespace bspkit::nightfire
