// Decompiling: a compiled map back to an editor map (see mapfile.hpp).
//
//   auto bsp = bspkit::Bsp::open("map.bsp");
//   bspkit::decompile::Result r = bspkit::decompile::decompile(bsp);   // throws Error
//   std::string text = bspkit::mapfile::write(r.map);
//
// Source maps give a Hammer VMF: brushes from the brush lumps (planes,
// materials, uaxis / vaxis from texinfo, lightmap scale, smoothing groups),
// brush entities with their models (moved back by their "origin"),
// func_detail from CONTENTS_DETAIL, displacements as dispinfo on a brush
// built on their face, prop_static, info_overlay, env_cubemap.
// Quake 2 / Quake 3 / Nightfire maps give a .map from their brush lumps
// (Quake 3 as brush primitives solved from the drawn surfaces' st).
// Quake 1 / BSP2 / GoldSrc maps (no brush lump) give a .map from BSPX
// BRUSHLIST when present, else from the hull 0 tree: each solid, sky or
// liquid leaf's cell (split from the model's bounds node by node) becomes a
// brush, cells of the same contents merged pairwise while their union stays
// convex, each side textured from the drawn face on it (the nearest face on
// its plane, else "skip").
// Every side's three points are vertices of the brush's own polygon on the
// BSP plane (clipped from a large winding by the other sides, in doubles;
// a sliver thinner than 0.5 units gets a triangle on its plane instead),
// snapped to integers where that keeps them within 1e-6 of the plane.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/mapfile.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace bspkit::decompile {

enum class BrushSource : uint8_t {
    lumps,  ///< the brush and brush side lumps (default)
    faces,  ///< Source: one thin brush per original face (when the brush lumps are not wanted)
};

struct Options {
    /// Output dialect; nullopt: the family's own (VMF for Source, Quake 2 Valve 220 for
    /// Quake 2, Quake 3 brush primitives for Quake 3 / RTCW, Quake 2 Valve 220 for Nightfire,
    /// Quake standard for Quake 1 / BSP2, Valve 220 for GoldSrc).
    std::optional<mapfile::Dialect> dialect;
    BrushSource brushes = BrushSource::lumps;
    /// Quake 1 family without BRUSHLIST: merge leaf cells whose union stays convex.
    bool merge = true;
};

struct Stats {
    size_t entities = 0, brushes = 0, sides = 0, displacements = 0, patches = 0, props = 0, overlays = 0, cubemaps = 0;
    size_t skipped_brushes = 0;  ///< brushes of the BSP with no volume (fewer than 4 sides with an area)
    size_t dropped_sides = 0;    ///< bevel or redundant sides that touch the brush in no area
};

/// Where a brush of the output came from (for tests and tools).
struct BrushOrigin {
    size_t entity = 0, brush = 0;  ///< index in MapFile::entities and in its brushes
    int64_t bsp_brush = -1;        ///< index in the BSP's brush lump, -1 when built otherwise (displacements)
    mapfile::Vec3d offset{};       ///< what was added to the BSP's coordinates (entity origin)
    std::vector<int64_t> bsp_sides;  ///< per output side: index in the brush side lump, -1 when made up
    int32_t contents = 0;            ///< the BSP brush's or leaf's contents (Quake 1 family: CONTENTS_*)
};

struct Result {
    mapfile::MapFile map;
    Stats stats;
    std::vector<BrushOrigin> origins;
    std::vector<std::string> notes;  ///< what could not be recovered
};

/// Decompiles `bsp`. Throws Error (file, lump, offset) for references out
/// of range.
Result decompile(const Bsp& bsp, const Options& options = {});

// --- geometry shared by the families (exposed for the tests) --------------

struct PlaneD {
    mapfile::Vec3d normal{};
    double dist = 0;
};
using Winding = std::vector<mapfile::Vec3d>;

/// The polygon of each side of the convex brush { p : dot(n_i, p) <= d_i }:
/// empty for a side that touches the brush in no area (bevels, repeats).
std::vector<Winding> brush_windings(std::span<const PlaneD> planes);
/// Three corners of `w` spanning it, ordered so that
/// mapfile::plane_from_points gives `plane`'s facing; coordinates snapped to
/// integers when the snapped point stays within 1e-6 of the plane.
std::array<mapfile::Vec3d, 3> side_points(const Winding& w, const PlaneD& plane);

}  // namespace bspkit::decompile
