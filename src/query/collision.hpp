// The compact collision data a query::World is prepared into: every family's
// planes, trees, leafs and brushes in one layout, filled by the per-format
// builders (src/formats/<format>/collision.cpp), validated here.
#pragma once

#include <bspkit/error.hpp>
#include <bspkit/query.hpp>
#include <bspkit/visibility.hpp>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::query::detail {

struct Plane {
    float n[3];
    float d;
    int32_t type;  ///< 0-2: normal exactly +x / +y / +z (distance = that coordinate - d; plane_type()); 3: any other
};

/// A tree node; a child < 0 is ~leaf (leaf = -child - 1), in the tree's leaf table.
struct Node {
    int32_t plane;
    int32_t child[2];
};

struct Leaf {
    int32_t contents = 0;  ///< raw engine contents
    int32_t cluster = -1;
    int32_t area = -1;
    uint32_t first_brush = 0, num_brushes = 0;  ///< into leaf_brushes
};

struct Brush {
    uint32_t first_side = 0, num_sides = 0;
    int32_t contents = 0;
};

struct Side {
    int32_t plane = 0;
    uint32_t surface = 0;  ///< engine surface flags
    bool bevel = false;
};

struct Triangle {
    Vec3 a, b, c;
    int32_t contents = 0;
    uint32_t surface = 0;
    bool stops_lines = true;  ///< false: line traces pass (Source DISP_FLAG_NO_RAY_COLL)
    bool stops_boxes = true;  ///< false: box traces pass (Source DISP_FLAG_NO_HULL_COLL)
};

/// One tree of a collision family. Quake 1 clip hulls use a leaf table of
/// the CONTENTS_* values (leaf i = contents -(i + 1)), so a clipnode child is
/// already its ~leaf.
struct Tree {
    std::vector<Node> nodes;
    std::vector<Leaf> leafs;
    std::string node_lump, leaf_lump;
    uint32_t node_bytes = 0;  ///< record size on disk, for error offsets
};

struct Model {
    /// Where its entity puts it (zero for the world) and whether traces meet
    /// it; set by World::prepare from the entities, after the family's builder.
    Vec3 origin;
    bool solid = true;  ///< false: its entity does not block traces when the map starts (solidity.hpp)
    std::array<int32_t, 4> root{-1, -1, -1, -1};  ///< per hull (brush families: [0] only)
    std::vector<uint32_t> brushes;      ///< brush families, models > 0: every brush of the model
    /// Displacement / patch triangles (line and box traces), in the model's
    /// space as its brushes: Source's displacements (the world's), Quake 3's
    /// patches (every model's: a submodel's surfaces collide as the world's do).
    std::vector<Triangle> triangles;
    /// Where what traces meet of it lies, in its own space (before `origin`):
    /// the union of its brushes' bounds (brush families, set by World::prepare)
    /// or the model's bounds in the file (Quake 1 family: the box its engines
    /// link the entity by, SV_LinkEdict). A trace that does not reach them
    /// skips the model (model_cull.hpp: the segment for brush families, the
    /// move's box for the Quake 1 family, as SV_ClipToLinks). Infinite
    /// (nothing skipped) when unknown, and for the world.
    float lo[3] = {-kInfinity, -kInfinity, -kInfinity}, hi[3] = {kInfinity, kInfinity, kInfinity};
    static constexpr float kInfinity = std::numeric_limits<float>::infinity();
};

enum class Kind : uint8_t { hulls, brushes };

struct Collision {
    Format format = Format::quake1;
    Kind kind = Kind::hulls;
    std::string file;
    std::vector<Plane> planes;
    std::array<Tree, 2> trees;  ///< [0] nodes + leafs; [1] Quake 1 clipnodes
    std::vector<uint32_t> leaf_brushes;
    std::vector<Brush> brushes;
    std::vector<Side> sides;
    std::vector<Model> models;
    std::vector<HullInfo> hulls;  ///< Quake 1 family
    std::string hull_missing;     ///< why hulls 1-3 are unavailable
    uint32_t mask_solid = 1, mask_playersolid = 1, mask_opaque = 1;
    float epsilon = 0.03125f;
    uint32_t (*flags_of)(int32_t raw) = nullptr;
    /// Brush contents -> the bits `mask` is tested against (null: the raw
    /// bits; Quake 1 BRUSHLIST brushes hold negative CONTENTS_* values).
    uint32_t (*mask_bits_of)(int32_t raw) = nullptr;
    std::pair<Vec3, Vec3> player_box;
    /// Which family's hull / box rules apply (Quake 1 vs GoldSrc).
    bool goldsrc_hulls = false;
    /// Quake 3 / Nightfire: point contents from the brushes, not the leaf.
    bool contents_from_brushes = false;
    std::optional<Visibility> vis;
    /// Why `vis` is empty when the map has vis data that could not be read.
    std::optional<Diagnostic> vis_error;
};

/// Throws Error naming `lump` with the file offset of record `record`.
[[noreturn]] void fail(const Bsp& bsp, const std::string& lump, int64_t record, uint32_t record_bytes,
                       const std::string& what);

/// Plane type for a normal: 0-2 only for +x / +y / +z (a normal down an
/// axis is type 3, measured with its sign).
int32_t plane_type(const float n[3]);

void build_quake1(const Bsp& bsp, Collision& c);
void build_quake2(const Bsp& bsp, Collision& c);
void build_quake3(const Bsp& bsp, Collision& c);
void build_nightfire(const Bsp& bsp, Collision& c);
void build_source(const Bsp& bsp, Collision& c);

/// Engine contents bit -> ContentFlag bits, for the table-driven mappings.
struct BitFlag {
    uint32_t bits;
    uint32_t flags;
};
inline uint32_t map_bits(int32_t raw, std::initializer_list<BitFlag> table) {
    uint32_t f = 0;
    for (const BitFlag& b : table)
        if (uint32_t(raw) & b.bits) f |= b.flags;
    return f;
}
/// Bits Quake 2 and Source share (Source kept Quake 2's CONTENTS_* values).
inline uint32_t quake2_common_flags(int32_t raw) {
    return map_bits(raw, {{0x1, kSolid}, {0x2, kWindow}, {0x10, kSlime}, {0x20, kWater}, {0x8000, kAreaPortal},
                          {0x10000, kPlayerClip}, {0x20000, kMonsterClip}, {0xFC0000, kCurrent}, {0x1000000, kOrigin},
                          {0x8000000, kDetail}, {0x10000000, kTranslucent}, {0x20000000, kLadder}});
}

/// Contents flag mappings per family.
uint32_t quake1_flags(int32_t raw);
uint32_t quake2_flags(int32_t raw);
uint32_t quake3_flags(int32_t raw);
uint32_t source_flags(int32_t raw);
uint32_t nightfire_flags(int32_t raw);

}  // namespace bspkit::query::detail
