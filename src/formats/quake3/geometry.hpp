// Quake 3 / RTCW patch tessellation rules (internal; the tests read them).
//
// A patch surface (MST_PATCH) is a control grid of patchWidth x patchHeight
// drawVerts (both odd, row-major: width varies fastest), that is
// (patchWidth - 1) / 2 x (patchHeight - 1) / 2 biquadratic Bezier patches
// sharing their border rows and columns. Column c of the grid is split into
// Lu[c] segments along u, row r into Lv[r] segments along v; the surface's
// vertices are then ONE grid of W = 1 + sum Lu by H = 1 + sum Lv vertices
// (row-major, u fastest), so the control point (2c, 2r) is vertex
// (sum of Lv before r) * W + (sum of Lu before c), bit for bit.
//
// Levels: BuildOptions::patch_level >= 0 gives every column and row that
// many segments (clamped to 1..kMaxPatchLevel). patch_level < 0 is adaptive:
// a column (row) gets the fewest segments whose chords stay within
// kPatchTolerance world units of every curve of that column (row), at most
// kAdaptiveMaxLevel; then every column / row whose control points along some
// edge are those of another column / row (in any surface, either direction)
// takes the largest level of the group, so patches that share an edge share
// its vertices exactly.
#pragma once

#include <cstdint>

namespace bspkit::quake3 {

/// Largest fixed BuildOptions::patch_level honoured (larger ones are clamped, 0 counts as 1).
inline constexpr int kMaxPatchLevel = 16;
/// Most segments the adaptive choice gives a column or row.
inline constexpr int kAdaptiveMaxLevel = 8;
/// Chordal deviation (world units) the adaptive choice keeps each direction within.
inline constexpr double kPatchTolerance = 1.0;
/// Most tessellated patch vertices one build produces; more is an Error (hostile sizes).
inline constexpr uint64_t kMaxPatchVertices = uint64_t(1) << 22;
/// Triangles of at most this area (square units) are dropped as degenerate.
inline constexpr double kDegenerateArea = 1e-6;

/// Segments the adaptive rule gives one quadratic Bezier direction whose
/// second difference |P0 - 2 P1 + P2| is `second_difference` (before grouping).
int adaptive_level(double second_difference);

}  // namespace bspkit::quake3
