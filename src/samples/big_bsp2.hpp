// Big Quake BSP2 maps for the size-vs-time curve of issue 9 and for the test
// that BSP2's 32-bit indices really hold past BSP29's 16-bit limits.
//
//   const auto map = bspkit::samples::big_bsp2(bspkit::samples::big_bsp2_grid_for_mb(100));
//   write_file_atomic("big.bsp", map.bytes);
//
// The map: a grid x grid field of 64-unit square cells, each a column of empty
// space above a floor at its own height (0-56 units, steps of 8), stepped
// walls where neighbouring floors differ, open to the sky (no ceiling), solid
// below the floors and outside the field. Built from the typed records of
// <bspkit/formats/quake1.hpp>, every byte generated here (no game data):
//   - hull 0: a kd-tree of the cells (split at cell boundaries, the longer
//     side first), four border nodes keeping the outside solid, and under each
//     cell one node on its floor plane: empty leaf above (one leaf per cell),
//     the shared solid leaf 0 below. Floors lie on those nodes, walls on the
//     kd node that splits at their plane; nodes list their faces in preorder.
//   - hulls 1 and 2 (Quake's player box -16 -16 -24 .. 16 16 32 and the
//     shambler's -32 -32 -24 .. 32 32 64): exact for this terrain. The same
//     kd-tree of cells, then each cell cut into strips where the box starts to
//     overlap a neighbour (16 units from each side for hull 1, the middle for
//     hull 2); in each region the box centre is empty above the highest floor
//     the box overlaps + 24 (cells outside the field are solid).
//   - faces sharing vertices and edges (walked backwards by the second face),
//     two embedded 64 x 64 miptex, grey lightmaps sized by the 16-texel luxel
//     rule (a made-up light, brighter on higher floors), one marksurface per
//     face (the leaf it faces), model 0 only, and no visibility data (every
//     leaf sees every other, as engines treat a map without vis: a PVS of
//     g^2 leafs would grow as g^4).
//
// Counts for a grid of g cells a side (g = 523: 174.9 MB): g^2 + 1 leafs,
// 2 g^2 nodes, 26 g^2 clipnodes (half the file: the clip hulls are exact, 9 and
// 4 regions a cell), 2.1 g^2 faces and marksurfaces, 2 g^2 vertexes, 4.3 g^2
// edges, 8.4 g^2 surfedges, 36 bytes of lightmap a cell: about 640 bytes of
// file per cell. Every BSP29 limit is passed from g = 256 (42 MB) on; the list
// with where each limit comes from is at the top of big_bsp2.cpp.
#pragma once

#include <bspkit/bytes.hpp>

#include <cstddef>
#include <cstdint>

namespace bspkit::samples {

/// Record counts of a generated map (as written: leafs include leaf 0, edges edge 0).
struct BigBsp2Counts {
    size_t planes = 0, vertexes = 0, nodes = 0, texinfo = 0, faces = 0, clipnodes = 0, leafs = 0, marksurfaces = 0,
           edges = 0, surfedges = 0, models = 0, textures = 0;
    size_t lighting_bytes = 0;
};

struct BigBsp2 {
    Bytes bytes;
    BigBsp2Counts counts;
    int grid = 0;  ///< cells a side
};

/// Side of one cell (units).
inline constexpr float kBigBsp2Cell = 64;
/// Player start height above its floor (where engines put an info_player_start's origin).
inline constexpr float kBigBsp2PlayerHeight = 24;

/// Floor height of cell (x, y): 0 .. 56 in steps of 8 (a few rolling hills and a
/// one-step noise, deterministic). Cells outside 0 .. grid - 1 are solid.
float big_bsp2_floor(int x, int y);

/// Leaf of cell (x, y) in the generated file (leaf 0 is the shared solid leaf).
/// Equals what leaf_at answers for a point above that cell's floor.
int32_t big_bsp2_leaf_of_cell(int grid, int x, int y);

/// The grid giving a file of about `mb` megabytes (1e6 bytes), at least 2.
int big_bsp2_grid_for_mb(double mb);

/// Builds the map. Throws std::invalid_argument for grid < 2 or grid > 4096.
BigBsp2 big_bsp2(int grid);

}  // namespace bspkit::samples
