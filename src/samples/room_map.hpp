// A small but complete Quake 1 (BSP 29) map compiled by bspkit itself: a few
// rooms on a grid of 64-unit cells joined by openings, a func_door brush model,
// light entities, lightmaps lit from them (direct light, shadows by rays cast
// through the compiled node tree), embedded procedural miptex, a PVS computed
// from rays between leaf portals, and clipnode hulls 1 and 2 built from the
// solid cells expanded by the player boxes.
//
//   const auto design = bspkit::samples::room_design();
//   const bspkit::Bytes bsp = bspkit::samples::compile_room_map(design);
//
// The design is axis-aligned on purpose: every BSP split is a cell boundary,
// every leaf a box of cells, so the tree, faces and hulls stay exact.
#pragma once

#include <bspkit/bytes.hpp>

#include <array>
#include <string>
#include <vector>

namespace bspkit::samples {

using Vec3 = std::array<float, 3>;

struct Box {
    Vec3 mins, maxs;
    bool contains(const Vec3& p) const {
        for (int a = 0; a < 3; ++a)
            if (p[a] < mins[a] || p[a] >= maxs[a]) return false;
        return true;
    }
};

struct PointLight {
    Vec3 origin;
    float light = 300;  ///< Quake "light" key: brightness at distance 0, falling linearly to 0
};

/// The map as the designer drew it: empty boxes carved out of solid.
struct RoomDesign {
    float cell = 64;                       ///< grid step (units)
    Vec3 origin{};                         ///< world position of cell (0, 0, 0)'s minimum corner
    std::array<int, 3> cells{};            ///< grid size; the outer layer of cells stays solid
    std::vector<std::string> room_names;   ///< one per room
    std::vector<Box> rooms;                ///< empty space: the rooms...
    std::vector<Box> openings;             ///< ...and the openings between them
    std::vector<Box> pillars;              ///< solid boxes standing inside rooms
    Box door;                              ///< the func_door brush (model *1), in the first opening
    std::vector<PointLight> lights;
    Vec3 player_start{};
    float min_light = 8;                   ///< ambient floor of every luxel

    /// True where the designer's world is solid (outside every room and opening).
    bool solid(const Vec3& p) const;
    /// Cell index of a point along axis a (may be out of range).
    int cell_index(float v, int a) const;
    bool cell_solid(int x, int y, int z) const;
};

/// Three rooms: A (with a pillar) and B joined through a 128-unit-thick wall by a 64-wide opening
/// holding the door; B and C joined by an opening in a perpendicular wall. No straight line passes
/// both openings (the thick wall allows slopes up to 1/2, the other opening needs at least 1), so
/// rooms A and C cannot see each other.
RoomDesign room_design();

/// Player boxes of the clip hulls (Quake's hull 1 and hull 2).
inline constexpr Vec3 kHullMins[3] = {{0, 0, 0}, {-16, -16, -24}, {-32, -32, -24}};
inline constexpr Vec3 kHullMaxs[3] = {{0, 0, 0}, {16, 16, 32}, {32, 32, 64}};

/// Compiles the design into a BSP 29 file (entities, planes, textures, vertexes, visibility, nodes,
/// texinfo, faces, lighting, clipnodes, leafs, marksurfaces, edges, surfedges, models).
Bytes compile_room_map(const RoomDesign& design);

}  // namespace bspkit::samples
