// Typed records of James Bond 007: Nightfire (BSP 42): 18 lumps, named as in
// seed 003 (the afterburner-compiletools wiki): Plane, Texture, Material,
// Vertex, DrawIndex, Node, Surface, Leaf, Model, Brush, BrushSide, Projection.
//
//   const bspkit::nightfire::Map map(bsp);
//   for (const bspkit::nightfire::Surface& s : map.surfaces()) ...
#pragma once

#include <bspkit/records.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace bspkit::nightfire {

struct Plane {
    float Normal[3];
    float Distance;
    uint32_t Type;
    static constexpr std::string_view kLayout = "3ffi";
};
BSPKIT_RECORD(Plane, 20);

struct Texture {
    char Path[64];  ///< not necessarily NUL-terminated
    static constexpr std::string_view kLayout = "64b";
};
BSPKIT_RECORD(Texture, 64);

struct Material {
    char Path[64];
    static constexpr std::string_view kLayout = "64b";
};
BSPKIT_RECORD(Material, 64);

struct Vertex {
    float Point[3];
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(Vertex, 12);

/// Lump 5: as long as Vertices, all zero; purpose unknown.
struct ZeroVertex {
    float Point[3];
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(ZeroVertex, 12);

struct DrawIndex {
    uint32_t TriangleCorner;  ///< index into the surface's own vertex block
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(DrawIndex, 4);

struct Node {
    uint32_t PlaneIndex;
    int32_t Children[2];  ///< >= 0 node; negative: leaf -(n + 1)
    float Mins[3];
    float Maxs[3];
    static constexpr std::string_view kLayout = "i2i3f3f";
};
BSPKIT_RECORD(Node, 36);

struct Surface {
    uint32_t PlaneIndex;
    uint32_t VerticesIndex;
    uint32_t VerticesCount;
    uint32_t DrawIndicesIndex;
    uint32_t DrawIndicesCount;
    uint32_t Flags;
    uint32_t TextureIndex;
    uint32_t MaterialIndex;
    uint32_t TextureProjectionIndex;
    uint32_t LightmapProjectionIndex;
    uint8_t LightStyles[4];  ///< 255 = unused
    int32_t LightingOffset;  ///< byte offset into Lighting (RGB), -1 = none
    static constexpr std::string_view kLayout = "10i4bi";
};
BSPKIT_RECORD(Surface, 48);

struct Leaf {
    uint32_t Type;               ///< 1 empty, 2 solid
    int32_t VisibilityOffset;    ///< into Visibility; -1 for brush-model leaves, ignored for leaf 0
    float Mins[3];
    float Maxs[3];
    uint32_t LeafSurfacesIndex;
    uint32_t LeafSurfacesCount;
    uint32_t LeafBrushesIndex;
    uint32_t LeafBrushesCount;
    static constexpr std::string_view kLayout = "ii3f3fiiii";
};
BSPKIT_RECORD(Leaf, 48);

struct LeafSurface {
    uint32_t SurfaceIndex;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(LeafSurface, 4);

struct LeafBrush {
    uint32_t BrushIndex;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(LeafBrush, 4);

struct Model {
    float Mins[3];
    float Maxs[3];
    uint32_t Hulls[4];  ///< always zero
    uint32_t LeavesIndex;
    uint32_t LeavesCount;
    uint32_t SurfacesIndex;
    uint32_t SurfacesCount;
    static constexpr std::string_view kLayout = "3f3f4iiiii";
};
BSPKIT_RECORD(Model, 56);

struct Brush {
    uint32_t Attributes;
    uint32_t BrushSidesIndex;
    uint32_t BrushSidesCount;
    static constexpr std::string_view kLayout = "iii";
};
BSPKIT_RECORD(Brush, 12);

struct BrushSide {
    uint32_t SurfaceIndex;
    uint32_t PlaneIndex;
    static constexpr std::string_view kLayout = "ii";
};
BSPKIT_RECORD(BrushSide, 8);

struct Projection {
    float S[4];
    float T[4];
    static constexpr std::string_view kLayout = "4f4f";
};
BSPKIT_RECORD(Projection, 32);

/// Typed view of a Nightfire map; lumps decode on first access.
class Map {
public:
    explicit Map(const Bsp& bsp);  ///< throws Error when `bsp` is not Nightfire

    const Bsp& bsp() const noexcept { return *bsp_; }

    ByteSpan entities() const;
    ByteSpan visibility() const;  ///< uncompressed rows per leaf; see visibility.hpp
    ByteSpan lighting() const;    ///< RGB bytes

    std::span<const Plane> planes() const;
    std::span<const Texture> textures() const;
    std::span<const Material> materials() const;
    std::span<const Vertex> vertices() const;
    std::span<const ZeroVertex> zero_vertices() const;
    std::span<const DrawIndex> draw_indices() const;
    std::span<const Node> nodes() const;
    std::span<const Surface> surfaces() const;
    std::span<const Leaf> leaves() const;
    std::span<const LeafSurface> leaf_surfaces() const;
    std::span<const LeafBrush> leaf_brushes() const;
    std::span<const Model> models() const;
    std::span<const Brush> brushes() const;
    std::span<const BrushSide> brush_sides() const;
    std::span<const Projection> projections() const;

    enum Lump : size_t {
        Entities, Planes, Textures, Materials, Vertices, ZeroVertices, DrawIndices, Visibility, Nodes, Surfaces,
        Lighting, Leaves, LeafSurfaces, LeafBrushes, Models, Brushes, BrushSides, Projections,
    };

private:
    const Bsp* bsp_;
    LazyRecords<Plane> planes_;
    LazyRecords<Texture> textures_;
    LazyRecords<Material> materials_;
    LazyRecords<Vertex> vertices_;
    LazyRecords<ZeroVertex> zero_vertices_;
    LazyRecords<DrawIndex> draw_indices_;
    LazyRecords<Node> nodes_;
    LazyRecords<Surface> surfaces_;
    LazyRecords<Leaf> leaves_;
    LazyRecords<LeafSurface> leaf_surfaces_;
    LazyRecords<LeafBrush> leaf_brushes_;
    LazyRecords<Model> models_;
    LazyRecords<Brush> brushes_;
    LazyRecords<BrushSide> brush_sides_;
    LazyRecords<Projection> projections_;
};

/// A surface's lightmap: the lightmap projection is in luxels, so each axis
/// holds ceil(max) - floor(min) + 1 samples over the surface's vertices;
/// 3 bytes (RGB) per sample and style.
struct SurfaceLightmap {
    int width = 0, height = 0;
    int styles = 0;
    int64_t offset = -1;  ///< LightingOffset
    size_t bytes = 0;
};
/// nullopt when the surface has no lightmap or its references are broken.
std::optional<SurfaceLightmap> surface_lightmap(const Map& map, size_t surface);

}  // namespace bspkit::nightfire
