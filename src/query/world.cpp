// query::World: preparation (per-format builders, then one validation of
// every tree and reference), point queries, visibility and batches. The
// traces themselves are in trace.cpp.
#include "core/parallel.hpp"
#include "query/solidity.hpp"
#include "query/world_impl.hpp"

#include <bspkit/entities.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>

namespace bspkit::query {
namespace detail {

[[noreturn]] void fail(const Bsp& bsp, const std::string& lump, int64_t record, uint32_t record_bytes,
                       const std::string& what) {
    int64_t offset = -1;
    if (const auto index = bsp.find_lump(lump)) {
        offset = bsp.entry(*index).offset;
        if (record >= 0) offset += record * int64_t(record_bytes);
    }
    throw Error({bsp.file_name(), lump, offset}, what);
}

int32_t plane_type(const float n[3]) {
    for (int i = 0; i < 3; ++i)
        if (n[i] == 1.0f) return n[(i + 1) % 3] == 0 && n[(i + 2) % 3] == 0 ? i : 3;
    return 3;
}

namespace {

/// Each brush model (> 0) where the first entity naming it ("model" "*N")
/// puts it ("origin"), and whether traces meet it (solid_at_spawn). Without
/// a usable entity lump, models stay where they were compiled, solid.
void place_models(const Bsp& bsp, Collision& c) {
    const size_t models = c.models.size();
    std::vector<bool> seen(models, false);
    EntityLump lump;
    try {
        lump = read_entities(bsp);
    } catch (const Error&) {
        return;
    }
    for (const Entity& e : lump.entities) {
        const auto model = e.find("model");
        const auto number = model ? brush_model_number(*model) : std::nullopt;
        if (!number || *number == 0 || *number >= models || seen[size_t(*number)]) continue;
        Model& out = c.models[size_t(*number)];
        seen[size_t(*number)] = true;
        if (const auto origin = e.find("origin")) {
            Vec3 v;
            if (std::sscanf(std::string(*origin).c_str(), "%f %f %f", &v.x, &v.y, &v.z) == 3) out.origin = v;
        }
        out.solid = solid_at_spawn(bsp.format(), e);
    }
}

// Every node's plane and children in range; no cycle under any root; no path
// longer than kMaxTreeDepth. Queries then need no range checks, cannot loop,
// and bound their recursion; a step budget per trace (trace.cpp) stops
// hostile shared subtrees that would make a trace exponential. `roots` holds
// `per_model` heads of each model in turn (a bad head names its model's record).
void validate_tree(const Bsp& bsp, const Collision& c, const Tree& t, std::span<const int32_t> roots, size_t per_model) {
    const size_t planes = c.planes.size(), nodes = t.nodes.size(), leafs = t.leafs.size();
    for (size_t i = 0; i < nodes; ++i) {
        const Node& n = t.nodes[i];
        if (n.plane < 0 || size_t(n.plane) >= planes)
            fail(bsp, t.node_lump, int64_t(i), t.node_bytes,
                 "node " + std::to_string(i) + " names plane " + std::to_string(n.plane) + " of " + std::to_string(planes));
        for (int s = 0; s < 2; ++s) {
            const int32_t ch = n.child[s];
            const bool ok = ch >= 0 ? size_t(ch) < nodes : size_t(~int64_t(ch)) < leafs;
            if (!ok)
                fail(bsp, t.node_lump, int64_t(i), t.node_bytes,
                     "node " + std::to_string(i) + " child " + std::to_string(s) + " = " + std::to_string(ch) +
                         " is out of range (" + std::to_string(nodes) + " nodes, " + std::to_string(leafs) + " leaves)");
        }
    }
    // Iterative depth-first walk: a node met again while it is on the path is a
    // cycle; subtrees shared between branches (Half-Life compilers merge equal
    // clipnode subtrees) are allowed, and their height is remembered so the
    // longest path is bounded without walking them twice.
    enum : uint8_t { kNew, kOnPath, kDone };
    std::vector<uint8_t> state(nodes, kNew);
    std::vector<int32_t> height(nodes, 0);
    struct Frame {
        int32_t node;
        int next;  ///< child to look at next
    };
    std::vector<Frame> path;
    const std::optional<size_t> model_lump = bsp.find_lump("models");
    const uint32_t model_bytes = model_lump ? bsp.record_size(*model_lump) : 0;
    for (size_t r = 0; r < roots.size(); ++r) {
        const int32_t root = roots[r];
        const int64_t model = int64_t(r / per_model);
        if (root < 0) {  // a model whose head is a leaf: in range like any child
            if (size_t(~int64_t(root)) >= leafs)
                fail(bsp, "models", model, model_bytes,
                     "model " + std::to_string(model) + "'s head is leaf " + std::to_string(~int64_t(root)) +
                         ", out of range (" + std::to_string(leafs) + " " + t.leaf_lump + ")");
            continue;
        }
        if (size_t(root) >= nodes)
            fail(bsp, "models", model, model_bytes,
                 "model " + std::to_string(model) + "'s head node " + std::to_string(root) + " is out of range (" +
                     std::to_string(nodes) + " " + t.node_lump + ")");
        if (state[size_t(root)] == kDone) continue;
        path.assign(1, {root, 0});
        state[size_t(root)] = kOnPath;
        while (!path.empty()) {
            Frame& f = path.back();
            if (f.next == 2) {
                int32_t h = 1;
                for (const int32_t ch : t.nodes[size_t(f.node)].child)
                    if (ch >= 0) h = std::max(h, height[size_t(ch)] + 1);
                height[size_t(f.node)] = h;
                state[size_t(f.node)] = kDone;
                path.pop_back();
                continue;
            }
            const int32_t ch = t.nodes[size_t(f.node)].child[f.next++];
            if (ch < 0) continue;
            if (state[size_t(ch)] == kOnPath)
                fail(bsp, t.node_lump, ch, t.node_bytes,
                     "node " + std::to_string(ch) + " is its own descendant (a cycle under head node " +
                         std::to_string(root) + ")");
            const int32_t depth = int32_t(path.size()) + (state[size_t(ch)] == kDone ? height[size_t(ch)] : 1);
            if (depth > kMaxTreeDepth)
                fail(bsp, t.node_lump, ch, t.node_bytes,
                     "the tree under head node " + std::to_string(root) + " is deeper than " +
                         std::to_string(kMaxTreeDepth) + " nodes");
            if (state[size_t(ch)] == kDone) continue;
            state[size_t(ch)] = kOnPath;
            path.push_back({ch, 0});
        }
    }
}

void validate_brushes(const Bsp& bsp, const Collision& c) {
    const Tree& t = c.trees[0];
    for (size_t i = 0; i < t.leafs.size(); ++i) {
        const Leaf& l = t.leafs[i];
        // An empty range names nothing, wherever it starts (Source's check and
        // the geometry take it so too).
        if (l.num_brushes != 0 && uint64_t(l.first_brush) + l.num_brushes > c.leaf_brushes.size())
            fail(bsp, t.leaf_lump, -1, 0,
                 "leaf " + std::to_string(i) + " names leaf brushes " + std::to_string(l.first_brush) + "+" +
                     std::to_string(l.num_brushes) + " of " + std::to_string(c.leaf_brushes.size()));
    }
    for (size_t i = 0; i < c.leaf_brushes.size(); ++i)
        if (c.leaf_brushes[i] >= c.brushes.size())
            fail(bsp, "leafbrushes", -1, 0,
                 "leaf brush " + std::to_string(i) + " names brush " + std::to_string(c.leaf_brushes[i]) + " of " +
                     std::to_string(c.brushes.size()));
    for (size_t i = 0; i < c.brushes.size(); ++i)
        if (c.brushes[i].num_sides != 0 && uint64_t(c.brushes[i].first_side) + c.brushes[i].num_sides > c.sides.size())
            fail(bsp, "brushes", -1, 0,
                 "brush " + std::to_string(i) + " names sides " + std::to_string(c.brushes[i].first_side) + "+" +
                     std::to_string(c.brushes[i].num_sides) + " of " + std::to_string(c.sides.size()));
    // Each brush owns its sides in a compiled map; ranges shared again and
    // again (a hostile file) would make the packed sides grow without bound.
    uint64_t total_sides = 0;
    const uint64_t side_budget = std::max<uint64_t>(uint64_t(1) << 22, 16 * uint64_t(c.sides.size()));
    for (const Brush& b : c.brushes) total_sides += b.num_sides;
    if (total_sides > side_budget)
        fail(bsp, "brushes", -1, 0,
             "the brushes name " + std::to_string(total_sides) + " sides in all, more than " +
                 std::to_string(side_budget) + " (their side ranges overlap)");
    for (size_t i = 0; i < c.sides.size(); ++i)
        if (c.sides[i].plane < 0 || size_t(c.sides[i].plane) >= c.planes.size())
            fail(bsp, "brushsides", -1, 0,
                 "brush side " + std::to_string(i) + " names plane " + std::to_string(c.sides[i].plane) + " of " +
                     std::to_string(c.planes.size()));
}

// Brush-model brushes of Quake 2 / Source: every brush in the leaves of the
// model's subtree (validated, so the walk ends).
void collect_model_brushes(const Bsp& bsp, Collision& c) {
    const Tree& t = c.trees[0];
    // Each node and brush once per model (stamped with the model's number, so
    // shared subtrees cost nothing twice); models whose subtrees overlap again
    // and again (never so in a compiled map) stop at a budget, not at a hang.
    std::vector<uint32_t> node_seen(t.nodes.size(), 0), leaf_seen(t.leafs.size(), 0), brush_seen(c.brushes.size(), 0);
    const uint64_t budget =
        std::max<uint64_t>(uint64_t(1) << 22, 16 * (uint64_t(t.nodes.size()) + c.leaf_brushes.size()));
    uint64_t visits = 0;  ///< nodes walked and leaf brushes read, over all models
    std::vector<int32_t> stack;
    for (size_t m = 1; m < c.models.size(); ++m) {
        Model& model = c.models[m];
        if (!model.brushes.empty() || model.root[0] < 0 || size_t(model.root[0]) >= t.nodes.size()) continue;
        const auto stamp = uint32_t(m);
        stack.assign(1, model.root[0]);
        node_seen[size_t(model.root[0])] = stamp;
        while (!stack.empty()) {
            const int32_t n = stack.back();
            stack.pop_back();
            if (++visits > budget)
                fail(bsp, t.node_lump, n, t.node_bytes,
                     "the brush models' subtrees overlap: more than " + std::to_string(budget) +
                         " nodes and leaf brushes read to list their brushes");
            for (const int32_t ch : t.nodes[size_t(n)].child) {
                if (ch >= 0) {
                    if (node_seen[size_t(ch)] != stamp) stack.push_back(ch);
                    node_seen[size_t(ch)] = stamp;
                    continue;
                }
                if (leaf_seen[size_t(~ch)] == stamp) continue;
                leaf_seen[size_t(~ch)] = stamp;
                const Leaf& l = t.leafs[size_t(~ch)];
                visits += l.num_brushes;  // checked at the next node (or harmless: the walk ends)
                for (uint32_t i = 0; i < l.num_brushes; ++i) {
                    const uint32_t b = c.leaf_brushes[l.first_brush + i];
                    if (brush_seen[b] != stamp) model.brushes.push_back(b);
                    brush_seen[b] = stamp;
                }
            }
        }
    }
}

}  // namespace
}  // namespace detail

using namespace detail;

std::string content_flag_names(uint32_t flags) {
    static constexpr std::pair<uint32_t, const char*> kNames[] = {
        {kSolid, "solid"}, {kWater, "water"}, {kSlime, "slime"}, {kLava, "lava"}, {kSky, "sky"},
        {kWindow, "window"}, {kPlayerClip, "playerclip"}, {kMonsterClip, "monsterclip"}, {kDetail, "detail"},
        {kLadder, "ladder"}, {kTranslucent, "translucent"}, {kCurrent, "current"}, {kOrigin, "origin"},
        {kGrate, "grate"}, {kFog, "fog"}, {kTrigger, "trigger"}, {kAreaPortal, "areaportal"}, {kMist, "mist"},
        {kClip, "clip"}, {kOpaque, "opaque"}};
    std::string out;
    for (const auto& [bit, name] : kNames)
        if (flags & bit) {
            if (!out.empty()) out += ',';
            out += name;
        }
    return out.empty() ? "empty" : out;
}

World World::prepare(const Bsp& bsp) {
    auto impl = std::make_unique<Impl>();
    Collision& c = impl->c;
    c.format = bsp.format();
    c.file = bsp.file_name();
    try {
        c.vis = Visibility::of(bsp);
    } catch (const Error& e) {
        // Broken vis data: collision still works, visible() reports pvs = true.
        c.vis.reset();
        c.vis_error = Diagnostic{Severity::warning, e.where().lump, e.where().offset, e.detail()};
    }
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: build_quake1(bsp, c); break;
        case Format::quake2: build_quake2(bsp, c); break;
        case Format::quake3: build_quake3(bsp, c); break;
        case Format::nightfire: build_nightfire(bsp, c); break;
        case Format::source: build_source(bsp, c); break;
    }
    if (c.models.empty()) fail(bsp, "models", -1, 0, "the map has no models (no world to query)");
    place_models(bsp, c);
    for (auto& p : c.planes)
        if (!std::isfinite(p.n[0]) || !std::isfinite(p.n[1]) || !std::isfinite(p.n[2]) || !std::isfinite(p.d))
            p = {{0, 0, 1}, 0, 2};  // NaN planes would make every comparison false; an axial plane keeps traces sane
    std::vector<int32_t> roots0, roots1;
    for (const Model& m : c.models) {
        roots0.push_back(m.root[0]);
        if (c.kind == Kind::hulls)
            for (size_t h = 1; h < 4; ++h)
                if (!c.trees[1].nodes.empty()) roots1.push_back(m.root[h]);
    }
    validate_tree(bsp, c, c.trees[0], roots0, 1);
    if (c.kind == Kind::hulls) {
        validate_tree(bsp, c, c.trees[1], roots1, 3);
        if (!c.brushes.empty()) validate_brushes(bsp, c);  // BSPX BRUSHLIST
    } else {
        validate_brushes(bsp, c);
        collect_model_brushes(bsp, c);
    }
    impl->pack_trees();
    impl->build_triangle_bvh();
    impl->pack_brushes();
    impl->build_model_bvh();
    return World(std::move(impl));
}

namespace {

/// Narrows `box` to the part of it on one side of a plane that is not of an
/// axial type (negative axes included): front n.x - d >= 0, back < 0, as
/// node_dist() decides in floats. Along each axis k whose normal component
/// is at least 1/2, the other axes' extent over the box bounds x_k; the
/// bound is moved out by a unit, beyond the float rounding of the walk's
/// distances (a fraction of a unit below 2^20, over |n_k| >= 1/2) and its
/// DIST_EPSILON (1/32 over |n_k|). An axis with an infinite extent among
/// the others is not narrowed.
void narrow_by_plane(const HullNode& n, Aabb& box, bool front) {
    for (int k = 0; k < 3; ++k) {
        if (!(std::fabs(n.n[k]) >= 0.5f)) continue;
        // The sum over the other axes of n_j x_j: its least and greatest over the box.
        double least = 0, most = 0;
        bool finite = true;
        for (int j = 0; j < 3; ++j) {
            if (j == k || n.n[j] == 0) continue;
            const double a = double(n.n[j]) * box.lo[j], b = double(n.n[j]) * box.hi[j];
            least += std::min(a, b);
            most += std::max(a, b);
            finite = finite && std::isfinite(a) && std::isfinite(b);
        }
        if (!finite) continue;
        // front: n_k x_k >= d - sum >= d - most; back: n_k x_k < d - sum <= d - least.
        const double edge = ((front ? n.d - most : n.d - least)) / n.n[k];
        const bool lower = front == (n.n[k] > 0);  // the edge is a lower bound of x_k
        if (lower) box.lo[k] = std::max(box.lo[k], float(edge - 1));
        else box.hi[k] = std::min(box.hi[k], float(edge + 1));
    }
}

}  // namespace

void World::Impl::bound_hull_solids() const {
    if (c.kind != Kind::hulls) return;
    constexpr float inf = std::numeric_limits<float>::infinity();
    const Aabb everywhere{{-inf, -inf, -inf}, {inf, inf, inf}};
    const Aabb nowhere{{inf, inf, inf}, {-inf, -inf, -inf}};
    constexpr float r = 2 * kModelBvhRange;
    const Aabb reach{{-r, -r, -r}, {r, r, r}};
    hull_solid_.assign(c.models.size(), {everywhere, everywhere, everywhere, everywhere});
    struct Pending {
        int32_t num;
        Aabb box;
    };
    std::vector<Pending> stack;
    // A compiled map's models own disjoint subtrees, each hull's its own: every
    // node is visited about once. Shared subtrees (hostile files) could make
    // the walks exponential: past this budget, for all of them together, the
    // boxes left are infinite (those models are walked by every trace).
    size_t budget = 4 * (packed[0].nodes.size() + packed[1].nodes.size()) + 64 * 4 * c.models.size();
    for (size_t m = 1; m < c.models.size(); ++m)
        for (size_t h = 0; h < 4; ++h) {
            const Tree& t = c.trees[hull_tree(int(h))];
            const PackedTree& p = packed[hull_tree(int(h))];
            const int32_t head = c.models[m].root[h];
            // Hulls no trace walks (require_hull(): Quake's hull 3, whose head nodes
            // are often 0, the world's hull 1) and heads World::trace does not walk.
            if (h >= c.hulls.size() || !c.hulls[h].available || c.hulls[h].brushlist) continue;
            if (head >= 0 && size_t(head) >= t.nodes.size()) continue;
            if (h > 0 && t.nodes.empty()) continue;
            Aabb solid = nowhere;
            stack.clear();
            // Only segments within kModelBvhRange are tested against the box
            // (clear_of_solid()), so the walk starts from twice that: finite,
            // which lets planes a hair off an axis narrow it too.
            stack.push_back({p.root(head), reach});
            while (!stack.empty()) {
                if (budget == 0) {
                    solid = everywhere;
                    break;
                }
                --budget;
                const Pending cur = stack.back();
                stack.pop_back();
                if (cur.num < 0) {
                    if (t.leafs[size_t(~cur.num)].contents == quake1_contents_solid) grow(solid, cur.box);
                    continue;
                }
                const HullNode& n = p.nodes[size_t(cur.num)];
                Pending front{n.child[0], cur.box}, back{n.child[1], cur.box};
                if (n.type < 3) {  // node_dist(): x[type] - d >= 0 goes to the front, exactly
                    front.box.lo[n.type] = std::max(front.box.lo[n.type], n.d);
                    back.box.hi[n.type] = std::min(back.box.hi[n.type], n.d);
                } else {
                    narrow_by_plane(n, front.box, true);
                    narrow_by_plane(n, back.box, false);
                }
                stack.push_back(back);
                stack.push_back(front);
            }
            hull_solid_[m][h] = solid;
        }
}

void World::Impl::build_model_bvh() {
    std::vector<Aabb> boxes;
    std::vector<uint32_t> ids;
    for (size_t m = 1; m < c.models.size(); ++m) {
        const Model& model = c.models[m];
        if (!model.solid) continue;
        const float at[3] = {model.origin.x, model.origin.y, model.origin.z};
        Aabb box;
        bool bounded = true;
        for (int a = 0; a < 3; ++a) {
            const float lo = model.lo[a] + at[a], hi = model.hi[a] + at[a];
            // false for NaN; an inside-out box is left to the traces' own test too
            bounded = bounded && std::fabs(lo) <= kModelBvhRange && std::fabs(hi) <= kModelBvhRange && lo <= hi;
            box.lo[a] = lo - kModelBvhSlack;
            box.hi[a] = hi + kModelBvhSlack;
        }
        if (!bounded) {
            model_unbounded.push_back(uint32_t(m));
            continue;
        }
        boxes.push_back(box);
        ids.push_back(uint32_t(m));
    }
    model_bvh = Bvh::build(boxes, ids);
}

void World::Impl::pack_brushes() {
    if (c.brushes.empty()) return;
    constexpr float inf = std::numeric_limits<float>::infinity();
    std::vector<PackedBrush> brushes(c.brushes.size());
    sides_all.reserve(c.sides.size());
    for (size_t i = 0; i < c.brushes.size(); ++i) {
        const Brush& b = c.brushes[i];
        PackedBrush& pb = brushes[i];
        pb.contents = b.contents;
        pb.mask_bits = c.mask_bits_of ? c.mask_bits_of(b.contents) : uint32_t(b.contents);
        pb.first_all = uint32_t(sides_all.size());
        pb.first_point = uint32_t(sides_point.size());
        for (int a = 0; a < 3; ++a) {
            pb.lo[a] = -inf;
            pb.hi[a] = inf;
        }
        for (uint32_t k = 0; k < b.num_sides; ++k) {
            const Side& side = c.sides[b.first_side + k];
            const Plane& p = c.planes[size_t(side.plane)];
            const PackedSide ps{{p.n[0], p.n[1], p.n[2]}, p.d, side.surface};
            sides_all.push_back(ps);
            if (!side.bevel) sides_point.push_back(ps);
            // An axial side bounds the brush (bevels too: they touch the brush without cutting it);
            // the sides facing down an axis are axial too, though not of an axial type.
            for (int a = 0; a < 3; ++a) {
                if (std::fabs(p.n[a]) != 1.0f || p.n[(a + 1) % 3] != 0 || p.n[(a + 2) % 3] != 0) continue;
                if (p.n[a] > 0) pb.hi[a] = std::min(pb.hi[a], p.d);
                else pb.lo[a] = std::max(pb.lo[a], -p.d);
            }
        }
        pb.num_all = uint32_t(sides_all.size()) - pb.first_all;
        pb.num_point = uint32_t(sides_point.size()) - pb.first_point;
        for (int a = 0; a < 3; ++a)
            if (!(pb.lo[a] <= pb.hi[a])) {  // contradictory axial sides: no bounds, clip it side by side
                for (int k = 0; k < 3; ++k) {
                    pb.lo[k] = -inf;
                    pb.hi[k] = inf;
                }
                break;
            }
    }
    // The world's brushes: those the builder listed for model 0 (BSPX BRUSHLIST),
    // else every brush in a leaf under model 0's head node (validated: the walk ends).
    const Tree& t = c.trees[0];
    std::vector<bool> seen(c.brushes.size(), false);
    std::vector<Aabb> boxes;
    std::vector<uint32_t> ids;
    auto add = [&](uint32_t b) {
        if (seen[b]) return;
        seen[b] = true;
        const PackedBrush& pb = brushes[b];
        if (std::isinf(pb.lo[0]) || std::isinf(pb.lo[1]) || std::isinf(pb.lo[2]) || std::isinf(pb.hi[0]) ||
            std::isinf(pb.hi[1]) || std::isinf(pb.hi[2]))
            world_unbounded.push_back(b);
        else {
            boxes.push_back({{pb.lo[0], pb.lo[1], pb.lo[2]}, {pb.hi[0], pb.hi[1], pb.hi[2]}});
            ids.push_back(b);
        }
    };
    for (const uint32_t b : c.models[0].brushes) add(b);
    std::vector<int32_t> stack;
    if (c.kind == Kind::brushes) stack.push_back(c.models[0].root[0]);
    std::vector<bool> node_seen(t.nodes.size(), false), leaf_seen(t.leafs.size(), false);  // shared subtrees are walked once
    while (!stack.empty()) {
        const int32_t n = stack.back();
        stack.pop_back();
        if (n >= 0) {
            if (node_seen[size_t(n)]) continue;
            node_seen[size_t(n)] = true;
            for (const int32_t ch : t.nodes[size_t(n)].child) stack.push_back(ch);
            continue;
        }
        if (size_t(~n) >= t.leafs.size() || leaf_seen[size_t(~n)]) continue;
        leaf_seen[size_t(~n)] = true;  // a leaf named by many nodes is read once
        const Leaf& l = t.leafs[size_t(~n)];
        for (uint32_t i = 0; i < l.num_brushes; ++i) add(c.leaf_brushes[l.first_brush + i]);
    }
    world_brush_bvh = Bvh::build(boxes, ids);

    // Every brush's run of units: the BVH's items first (they are in leaf order), then the rest.
    brush_head.assign(c.brushes.size(), UINT32_MAX);
    auto append = [&](uint32_t b) {
        const PackedBrush& pb = brushes[b];
        const auto head = uint32_t(brush_units.size());
        brush_head[b] = head;
        BrushUnit unit{};
        BrushHead& h = unit.head;
        std::copy(pb.lo, pb.lo + 3, h.lo);
        std::copy(pb.hi, pb.hi + 3, h.hi);
        h.brush = b;
        h.contents = pb.contents;
        h.mask_bits = pb.mask_bits;
        h.num_point = pb.num_point;
        h.num_all = pb.num_all;
        h.first_point = pb.first_point;
        h.first_all = pb.first_all;
        brush_units.push_back(unit);
#if BSPKIT_QUERY_SSE2
        // The blocks the SIMD clip reads: sides copied four to a block, the last block filled up.
        auto blocks_of = [&](std::span<const PackedSide> sides) {
            for (size_t k = 0; k < sides.size(); k += 4) {
                BrushUnit u{};
                SideBlock& block = u.block;
                for (size_t j = 0; j < 4; ++j) {
                    const bool real = k + j < sides.size();
                    block.nx[j] = real ? sides[k + j].n[0] : 0.0f;
                    block.ny[j] = real ? sides[k + j].n[1] : 0.0f;
                    block.nz[j] = real ? sides[k + j].n[2] : 0.0f;
                    block.d[j] = real ? sides[k + j].d : std::numeric_limits<float>::max();
                }
                brush_units.push_back(u);
            }
        };
        blocks_of(std::span(sides_point).subspan(pb.first_point, pb.num_point));
        brush_units[head].head.all_blocks = uint32_t(brush_units.size()) - head;
        blocks_of(std::span(sides_all).subspan(pb.first_all, pb.num_all));
#endif
        brush_units[head].head.units = uint32_t(brush_units.size()) - head;
    };
    for (const uint32_t b : world_brush_bvh.items) append(b);
    for (uint32_t& b : world_unbounded) {
        append(b);
        b = brush_head[b];
    }
    for (uint32_t b = 0; b < uint32_t(c.brushes.size()); ++b)
        if (brush_head[b] == UINT32_MAX) append(b);
    // Each brush model's bounds: its brushes' union (infinite where one of them is;
    // a bound that is not a number, which a brush's own test lets through, makes
    // the model's infinite too).
    for (size_t m = 1; m < c.models.size(); ++m) {
        Model& model = c.models[m];
        if (model.brushes.empty()) continue;
        float lo[3] = {Model::kInfinity, Model::kInfinity, Model::kInfinity};
        float hi[3] = {-Model::kInfinity, -Model::kInfinity, -Model::kInfinity};
        bool numbers = true;
        for (const uint32_t b : model.brushes) {
            const BrushHead& h = brush_units[brush_head[b]].head;
            for (int a = 0; a < 3; ++a) {
                numbers = numbers && !std::isnan(h.lo[a]) && !std::isnan(h.hi[a]);
                lo[a] = std::min(lo[a], h.lo[a]);
                hi[a] = std::max(hi[a], h.hi[a]);
            }
        }
        if (numbers) std::copy(lo, lo + 3, model.lo), std::copy(hi, hi + 3, model.hi);
    }
    // The BVH's leaves name the heads of their first brushes (the others follow).
    std::vector<uint32_t> item_head(world_brush_bvh.items.size());
    for (size_t i = 0; i < item_head.size(); ++i) item_head[i] = brush_head[world_brush_bvh.items[i]];
    for (WideNode& n : world_brush_bvh.nodes)
        for (int k = 0; k < kBvhWidth; ++k)
            if (n.count[k]) n.ref[k] = item_head[n.ref[k]];
    world_brush_bvh.items = {};
}

void World::Impl::pack_trees() {
    for (size_t k = 0; k < 2; ++k) {
        const Tree& t = c.trees[k];
        PackedTree& p = packed[k];
        p.index.assign(t.nodes.size(), -1);
        p.nodes.clear();
        p.nodes.reserve(t.nodes.size());
        // Preorder, front child first; a subtree shared by several parents
        // (merged clipnodes) is packed once, where it is first met.
        std::vector<int32_t> stack;
        for (const Model& m : c.models)
            for (const int32_t r : m.root) {
                if (r < 0 || size_t(r) >= t.nodes.size() || p.index[size_t(r)] >= 0) continue;
                stack.assign(1, r);
                while (!stack.empty()) {
                    const int32_t n = stack.back();
                    stack.pop_back();
                    if (p.index[size_t(n)] >= 0) continue;
                    p.index[size_t(n)] = int32_t(p.nodes.size());
                    const Node& node = t.nodes[size_t(n)];
                    const Plane& pl = c.planes[size_t(node.plane)];
                    p.nodes.push_back({{pl.n[0], pl.n[1], pl.n[2]}, pl.d, {node.child[0], node.child[1]}, pl.type, node.plane});
                    for (int s = 1; s >= 0; --s)
                        if (node.child[s] >= 0 && p.index[size_t(node.child[s])] < 0) stack.push_back(node.child[s]);
                }
            }
        for (HullNode& n : p.nodes)
            for (int32_t& ch : n.child)
                if (ch >= 0) ch = p.index[size_t(ch)];

        // Per node, children first (validated: no cycles), bounds on any
        // trace's steps below it: `visits`, the
        // nodes and leaves of the subtree unfolded (a walk enters each at most
        // once; shared subtrees count once per path, saturating), and
        // `height`, the nodes on its longest path (each of an impact's point
        // descents takes at most that many steps).
        constexpr uint64_t kCap = uint64_t(1) << 60;
        const size_t n_packed = p.nodes.size();
        std::vector<uint64_t> visits(n_packed, 0);
        std::vector<uint32_t> height(n_packed, 0);
        std::vector<uint8_t> done(n_packed, 0);
        std::vector<int32_t> order;
        for (size_t i = 0; i < n_packed; ++i) {
            if (done[i]) continue;
            order.assign(1, int32_t(i));
            while (!order.empty()) {
                const int32_t x = order.back();
                const HullNode& n = p.nodes[size_t(x)];
                bool ready = true;
                for (const int32_t ch : n.child)
                    if (ch >= 0 && !done[size_t(ch)]) {
                        order.push_back(ch);
                        ready = false;
                    }
                if (!ready) continue;
                order.pop_back();
                if (done[size_t(x)]) continue;
                uint64_t v = 1;
                uint32_t h = 1;
                for (const int32_t ch : n.child) {
                    if (ch < 0) {
                        v += 1;
                    } else {
                        v = std::min(kCap, v + visits[size_t(ch)]);
                        h = std::max(h, height[size_t(ch)] + 1);
                    }
                }
                visits[size_t(x)] = v;
                height[size_t(x)] = h;
                done[size_t(x)] = 1;
            }
        }
        float max_n = 1, max_d = 0;
        for (const HullNode& n : p.nodes) {
            for (const float x : n.n) max_n = std::max(max_n, std::fabs(x));
            max_d = std::max(max_d, std::fabs(n.d));
        }
        // |distance| <= 3 max_n |x| + max_d, and a walk's points stay within
        // the segment's box (lerps by a fraction in [0, 1]): far below FLT_MAX.
        p.finite_radius = max_d < 1e29f ? (1e30f - max_d) / (12 * max_n) : 0.0f;
        // A trace walks each model's head once (all of them when it asks for
        // models), with at most 12 point descents for the impact (its back-off
        // by 0.1 from a fraction <= 1): under the budget, no trace can run out.
        const uint64_t budget = step_budget(t);
        for (size_t h = 0; h < 4; ++h) {
            if ((k == 0) != (h == 0)) continue;
            uint64_t worst = 0;
            for (const Model& m : c.models) {
                const int32_t r = m.root[h];
                if (r >= 0 && size_t(r) >= t.nodes.size()) continue;  // never walked
                const int32_t pr = p.root(r);
                worst += pr < 0 ? 1 : visits[size_t(pr)] + 16 * (uint64_t(height[size_t(pr)]) + 1);
                worst = std::min(worst, kCap);
            }
            p.bounded[h] = worst <= budget;
        }
    }
}

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;
World::~World() = default;

Format World::format() const noexcept { return impl_->c.format; }
std::span<const HullInfo> World::hulls() const noexcept { return impl_->c.hulls; }
const std::optional<Diagnostic>& World::vis_error() const noexcept { return impl_->c.vis_error; }
std::pair<Vec3, Vec3> World::player_box() const noexcept { return impl_->c.player_box; }

TraceOptions World::player() const {
    TraceOptions o;
    if (impl_->c.kind == Kind::hulls) {
        o.hull = 1;
    } else {
        o.mins = impl_->c.player_box.first;
        o.maxs = impl_->c.player_box.second;
    }
    return o;
}

LeafInfo World::leaf_at(Vec3 point) const {
    const Collision& c = impl_->c;
    const Tree& t = c.trees[0];
    const int32_t leaf = impl_->point_leaf(impl_->packed[0], c.models[0].root[0], point);
    LeafInfo out;
    if (leaf < 0 || size_t(leaf) >= t.leafs.size()) return out;
    const Leaf& l = t.leafs[size_t(leaf)];
    out.leaf = leaf;
    out.cluster = l.cluster;
    out.area = l.area;
    out.contents = impl_->contents_in(l, point);
    return out;
}

Contents World::contents(Vec3 point) const {
    const Collision& c = impl_->c;
    const Tree& t = c.trees[0];
    const int32_t leaf = impl_->point_leaf(impl_->packed[0], c.models[0].root[0], point);
    if (leaf < 0 || size_t(leaf) >= t.leafs.size()) return {};
    return impl_->contents_in(t.leafs[size_t(leaf)], point);
}

Contents World::Impl::contents_in(const Leaf& l, Vec3 point) const {
    int32_t raw = l.contents;
    if (c.contents_from_brushes) {
        int32_t from_brushes = 0;
        const float at[3] = {point.x, point.y, point.z};
        for (uint32_t i = 0; i < l.num_brushes; ++i) {
            // The packed brush: its bounds first (beyond them, one of its axial sides
            // has the point in front, the same answer to the bit), then every side.
            const BrushHead& b = brush_units[brush_head[c.leaf_brushes[l.first_brush + i]]].head;
            bool inside = true;
            for (int a = 0; a < 3 && inside; ++a) inside = at[a] >= b.lo[a] && at[a] <= b.hi[a];
            // By pointer: a brush without sides may start at the end of the array (or
            // the array be empty), where indexing it is undefined.
            const PackedSide* sides = sides_all.data() + b.first_all;
            for (uint32_t s = 0; s < b.num_all && inside; ++s) {
                const PackedSide& p = sides[s];
                inside = p.n[0] * point.x + p.n[1] * point.y + p.n[2] * point.z - p.d <= 0;
            }
            if (inside) from_brushes |= b.contents;
        }
        raw = c.format == Format::nightfire ? (from_brushes ? 2 : raw) : from_brushes;
    }
    return {raw, c.flags_of(raw)};
}

Contents World::contents(Vec3 point, int hull) const {
    const Collision& c = impl_->c;
    if (c.kind != Kind::hulls || hull == 0) return contents(point);
    impl_->require_hull(hull);
    if (c.hulls[size_t(hull)].brushlist) {  // the hull's box at the point overlaps a solid brush
        TraceOptions o;
        o.hull = hull;
        const int32_t raw = trace(point, point, o).startsolid ? quake1_contents_solid : quake1_contents_empty;
        return {raw, c.flags_of(raw)};
    }
    const Tree& t = c.trees[1];
    const int32_t leaf = impl_->point_leaf(impl_->packed[1], c.models[0].root[size_t(hull)], point);
    const int32_t raw = leaf >= 0 ? t.leafs[size_t(leaf)].contents : quake1_contents_solid;
    return {raw, c.flags_of(raw)};
}

namespace {

/// Calls trace_one(i) for i in [0, n) on `threads` threads, chunks handed out
/// by an atomic counter so both cores stay busy whatever a ray costs. The
/// first exception stops the batch and is rethrown once every thread is done.
template <class TraceOne>
void for_each_ray(size_t n, unsigned threads, TraceOne&& trace_one) {
    threads = bspkit::detail::thread_count(threads);
    if (threads == 1 || n < 256) {
        for (size_t i = 0; i < n; ++i) trace_one(i);
        return;
    }
    std::atomic<size_t> next{0};
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    auto work = [&] {
        try {
            constexpr size_t kChunk = 1024;
            for (;;) {
                const size_t begin = next.fetch_add(kChunk);
                if (begin >= n || failed) return;
                const size_t end = std::min(n, begin + kChunk);
                for (size_t i = begin; i < end; ++i) trace_one(i);
            }
        } catch (...) {
            if (!failed.exchange(true)) error = std::current_exception();
        }
    };
    bspkit::detail::run_on_threads(threads, work);
    if (error) std::rethrow_exception(error);
}

}  // namespace

void World::trace(std::span<const Ray> rays, std::span<TraceResult> results, const TraceOptions& options,
                  unsigned threads) const {
    if (results.size() != rays.size())
        throw std::invalid_argument("World::trace: results must hold one entry per ray");
    for_each_ray(rays.size(), threads, [&](size_t i) { results[i] = trace(rays[i].start, rays[i].end, options); });
}

size_t World::try_trace(std::span<const Ray> rays, std::span<TraceResult> results, std::span<std::string> errors,
                        const TraceOptions& options, unsigned threads) const {
    if (results.size() != rays.size() || errors.size() != rays.size())
        throw std::invalid_argument("World::try_trace: results and errors must hold one entry per ray");
    // A hull the map lacks is the call's error, not every ray's.
    if (impl_->c.kind == Kind::hulls) (void)impl_->trace_hull(options);
    std::atomic<size_t> failed{0};
    for_each_ray(rays.size(), threads, [&](size_t i) {
        try {
            results[i] = trace(rays[i].start, rays[i].end, options);
            errors[i].clear();
        } catch (const Error& e) {
            results[i] = {};
            errors[i] = e.what();
            failed.fetch_add(1, std::memory_order_relaxed);
        }
    });
    return failed;
}

Visible World::visible(Vec3 a, Vec3 b) const {
    const Collision& c = impl_->c;
    Visible out;
    const LeafInfo la = leaf_at(a), lb = leaf_at(b);
    if (!c.vis || c.vis->encoding() == Visibility::Encoding::none) {
        out.pvs = true;
    } else if (la.cluster >= 0 && lb.cluster >= 0 && size_t(la.cluster) < c.vis->clusters() &&
               size_t(lb.cluster) < c.vis->clusters()) {
        // A row that cannot be read as far as b's bit rules nothing out.
        out.pvs = c.vis->pvs_sees(size_t(la.cluster), size_t(lb.cluster)).value_or(true);
    }
    TraceOptions o;
    o.mask = c.mask_opaque;
    out.sight = trace(a, b, o);
    out.line_of_sight = !out.sight.startsolid && out.sight.fraction >= 1;
    // QuakeC's visible(): "sight line crossed contents" (from the open into
    // water, slime, lava or sky, or back) is no sight. Half-Life's point
    // form, FVisible(const Vector&), asks the fraction alone (its rule on
    // water levels is the entity form's, about eyes and feet, not points).
    const Format f = format();
    if ((f == Format::quake1 || f == Format::bsp2) && out.sight.inopen && out.sight.inwater)
        out.line_of_sight = false;
    out.from = la;
    out.to = lb;
    return out;
}

}  // namespace bspkit::query
