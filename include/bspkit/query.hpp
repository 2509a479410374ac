// Spatial queries on the BSP tree of any supported family: which leaf a point
// is in, what contents it has, line / box / hull traces as the engines define
// them, and visibility (PVS + line of sight).
//
//   const bspkit::Bsp bsp = bspkit::Bsp::open("map.bsp");
//   const bspkit::query::World world = bspkit::query::World::prepare(bsp);
//   auto leaf = world.leaf_at({0, 0, 64});
//   auto tr = world.trace({0, 0, 64}, {0, 0, -1000}, bspkit::query::TraceOptions::player(world));
//   if (tr.fraction < 1) ... tr.end, tr.normal ...
//
// How each family traces (facts from the engines' collision code, our own code):
//   - Quake 1, BSP2, GoldSrc: SV_RecursiveHullCheck through hull 0 (nodes and
//     leafs) or the clipnode hulls 1-3; a box picks a hull as SV_HullForEntity
//     (GoldSrc: SV_HullForBsp) does and is offset by hull mins - box mins
//     (GoldSrc's hull 0: no offset). DIST_EPSILON 1/32.
//     Maps without clipnodes but with BSPX BRUSHLIST (ericw-tools
//     -wrbrushes) trace hulls 1-3 through those brushes (HullInfo::brushlist),
//     as FTE does; without either, a box / hull trace throws Error.
//   - Quake 2, Quake 3, Nightfire, Source: brushes in the leaves reached by
//     the box swept down the tree (CM_BoxTrace): each side plane moved out by
//     the box's extent along its normal, the compilers' bevel sides included
//     for boxes. DIST_EPSILON 1/32 (Quake 3: SURFACE_CLIP_EPSILON 1/8).
//   - Traces also hit the triangles of Source displacements and Quake 3
//     patches (the model's tessellation) whose contents match the mask: lines
//     by ray / triangle, boxes by the separating axes of the moving box and
//     the triangle (CDispCollTree's swept boxes, Quake 3's patch collision),
//     stopping DIST_EPSILON short. A box overlapping such a triangle where it
//     starts is startsolid (and, not moving, allsolid: the engines' position
//     tests); a moving one goes on, a surface having no inside to leave. A
//     Source displacement flagged "no ray collision" stops no line, one
//     flagged "no hull collision" no box (Hammer's attributes, in minTess).
// Every tree is validated by prepare(): out-of-range children or planes,
// cycles and paths longer than kMaxTreeDepth are Errors naming the lump and
// offset, so queries never loop and never recurse unboundedly. Subtrees
// shared between branches are legal (Half-Life compilers merge equal clipnode
// subtrees); a trace whose walk exceeds a step budget far above the tree's
// size (a hostile shared-subtree lattice) throws Error instead of running on.
//
// The World keeps a reference to the Bsp's visibility lump: the Bsp must
// outlive it.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/model.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::query {

using Vec3 = model::Vec3;

inline constexpr int kMaxTreeDepth = 4096;

/// Engine-neutral contents flags; each family maps its own bits (or Quake's
/// negative CONTENTS_* values) onto these.
enum ContentFlag : uint32_t {
    kSolid = 1u << 0,
    kWater = 1u << 1,
    kSlime = 1u << 2,
    kLava = 1u << 3,
    kSky = 1u << 4,
    kWindow = 1u << 5,
    kPlayerClip = 1u << 6,
    kMonsterClip = 1u << 7,
    kDetail = 1u << 8,
    kLadder = 1u << 9,
    kTranslucent = 1u << 10,
    kCurrent = 1u << 11,  ///< Quake / Quake 2 / Source water currents
    kOrigin = 1u << 12,
    kGrate = 1u << 13,
    kFog = 1u << 14,
    kTrigger = 1u << 15,
    kAreaPortal = 1u << 16,
    kMist = 1u << 17,
    kClip = 1u << 18,  ///< Quake 1 / GoldSrc CONTENTS_CLIP (both player and monster)
    kOpaque = 1u << 19,
};
/// Names of the set flags, comma-separated ("solid,detail"); "empty" for 0.
std::string content_flag_names(uint32_t flags);

struct Contents {
    int32_t raw = 0;     ///< engine bits (Quake 1 / GoldSrc: the negative CONTENTS_* value; Nightfire: leaf Type)
    uint32_t flags = 0;  ///< ContentFlag bits
    bool solid() const noexcept { return flags & kSolid; }
};

struct LeafInfo {
    int32_t leaf = -1;     ///< index into the leaf lump
    int32_t cluster = -1;  ///< visibility row (Visibility::cluster_of_leaf), -1 = none
    int32_t area = -1;     ///< Quake 2 / 3 / Source area, -1 elsewhere
    Contents contents;
};

struct TraceOptions {
    /// Quake 1 / BSP2 / GoldSrc: clipnode hull 0-3. Other families: ignored.
    /// -1 = use `mins` / `maxs` (a point when both are zero).
    int hull = -1;
    Vec3 mins, maxs;
    /// Engine contents bits that stop the trace (Quake 2 / 3 / Source /
    /// Nightfire); 0 = the family's MASK_SOLID for a line, MASK_PLAYERSOLID
    /// for a box. Quake 1 hulls: only CONTENTS_SOLID stops, as in the engine.
    uint32_t mask = 0;
    /// Also trace the brush models (doors, platforms) at their entities' origins;
    /// not those whose entity the game spawns not solid (SOLID_TRIGGER,
    /// SOLID_NOT; Source's FSOLID_NOT_SOLID): trigger_*, func_illusionary and
    /// func_ladder everywhere; Counter-Strike's zones, func_friction, game_*
    /// brushes, Half-Life doors with a contents skin, func_rotating "Not
    /// Solid"; "Passable" doors and walls that start off (Half-Life, Source);
    /// Quake 2 walls / explosives / objects spawned by a trigger; Source's
    /// func_brush with Solidity "Never" (or disabled, unless "Always") and
    /// func_nav_blocker. A model is traced only where the move reaches it:
    /// Quake 1 family, as SV_ClipToLinks, where the move's box (both ends'
    /// boxes of `mins` / `maxs`, or of the hull's box, one unit more) meets
    /// the model's bounds in the file at its origin (one unit more), even
    /// when the clip hull the engine picks for the box is taller than it;
    /// brush families, where the segment meets its brushes' bounds.
    bool models = false;

    static TraceOptions line() { return {}; }
    static TraceOptions box(Vec3 mins, Vec3 maxs) {
        TraceOptions o;
        o.mins = mins;
        o.maxs = maxs;
        return o;
    }
};

struct TraceResult {
    float fraction = 1;        ///< 0..1 of the way from start to end before the hit
    Vec3 end;                  ///< start + fraction * (end - start)
    Vec3 normal;               ///< of the plane hit (zero when nothing was hit, and for brush-family allsolid traces)
    float dist = 0;            ///< plane distance (in model space for brush models)
    bool startsolid = false;   ///< the start point was in solid
    bool allsolid = false;     ///< the whole trace was in solid
    Contents contents;         ///< of what was hit (brush / leaf contents)
    uint32_t surface_flags = 0;  ///< engine surface flags of the side hit (SURF_*), 0 for Quake 1
    int32_t model = -1;        ///< model hit (0 = world), -1 = nothing
    /// Brush hit (brush families), -1 otherwise. Brushes met at the same
    /// fraction (a shared face), or all holding an allsolid trace: the
    /// lowest-numbered; triangles hit at the same distance: the same rule.
    int32_t brush = -1;
    bool triangle = false;     ///< hit a displacement / patch triangle
    /// Quake 1 family clip-hull traces (SV_RecursiveHullCheck's trace_inopen /
    /// trace_inwater): the trace passed through an empty leaf / a leaf of other
    /// non-solid contents (water, slime, lava, sky). Both set: the line crossed
    /// contents, which QuakeC's visible() counts as no sight. False for the
    /// other families.
    bool inopen = false, inwater = false;
    bool hit() const noexcept { return fraction < 1 || startsolid; }
};

struct Ray {
    Vec3 start, end;
};

struct Visible {
    bool pvs = false;            ///< b's cluster is in a's PVS (true when the map has no vis data)
    /// A line trace from a to b is not blocked by MASK_OPAQUE-like solids;
    /// Quake 1 / BSP2, as QuakeC's visible(): nor does it cross from the open
    /// into other contents (water, slime, lava, sky: TraceResult::inwater).
    bool line_of_sight = false;
    LeafInfo from, to;           ///< where a and b are (their clusters decide `pvs`)
    TraceResult sight;           ///< that line trace: where it ends is what blocks the sight
    bool visible() const noexcept { return pvs && line_of_sight; }
};

/// One Quake 1 / GoldSrc clip hull.
struct HullInfo {
    int index = 0;
    Vec3 mins, maxs;       ///< the box the hull was built for
    bool available = false;
    /// Traced through the brushes of BSPX BRUSHLIST (a map without clipnodes,
    /// e.g. ericw-tools -wrbrushes): the hull's box swept against every brush,
    /// each side pushed out by the box as FTE does, instead of a clip tree.
    bool brushlist = false;
};

class World {
public:
    /// Converts the map's planes, nodes, leafs, brushes (and for Source /
    /// Quake 3 the displacement / patch triangles) into compact arrays.
    /// Throws Error for broken or hostile trees.
    static World prepare(const Bsp& bsp);

    World(World&&) noexcept;
    World& operator=(World&&) noexcept;
    ~World();

    Format format() const noexcept;
    /// Quake 1 / BSP2 / GoldSrc clip hulls (empty for other families).
    std::span<const HullInfo> hulls() const noexcept;
    /// The family's player box, as its games use it (origin-relative).
    std::pair<Vec3, Vec3> player_box() const noexcept;
    /// Options tracing the player: Quake 1 / GoldSrc hull 1, else player_box().
    TraceOptions player() const;

    LeafInfo leaf_at(Vec3 point) const;
    /// What the engine's point-contents reports: Quake 1 / 2 / Source the leaf's
    /// contents, Quake 3 / Nightfire the brushes containing the point.
    Contents contents(Vec3 point) const;
    Contents contents(Vec3 point, int hull) const;  ///< Quake 1 family: in clip hull `hull`

    /// Throws Error when a Quake 1 hull is unavailable (maps without clipnodes).
    TraceResult trace(Vec3 start, Vec3 end, const TraceOptions& options = {}) const;
    /// Traces every ray; results.size() must equal rays.size(). `threads` 0 =
    /// hardware concurrency.
    void trace(std::span<const Ray> rays, std::span<TraceResult> results, const TraceOptions& options = {},
               unsigned threads = 0) const;
    /// trace(rays, results, ...), except that a ray which cannot be traced
    /// (its single trace throws Error, e.g. coordinates too large for
    /// distances to the map's planes) does not stop the others: its result is
    /// left default and errors[i] holds the message. errors[i] is emptied for
    /// every ray traced. errors.size() must equal rays.size(). Throws Error,
    /// before any ray, when the options trace none (a hull the map lacks).
    /// Returns how many rays were not traced.
    size_t try_trace(std::span<const Ray> rays, std::span<TraceResult> results, std::span<std::string> errors,
                     const TraceOptions& options = {}, unsigned threads = 0) const;

    Visible visible(Vec3 a, Vec3 b) const;
    /// Vis data the map has but prepare() could not read (lump, offset, why):
    /// collision works without it, and visible() then counts every cluster
    /// as in the PVS. Empty when the vis data was read (or there is none).
    const std::optional<Diagnostic>& vis_error() const noexcept;

    struct Impl;
    /// The prepared state (src/query/world_impl.hpp, not installed): for the
    /// library's own tests, which check its acceleration structures.
    const Impl& impl() const noexcept { return *impl_; }

private:
    explicit World(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace bspkit::query
