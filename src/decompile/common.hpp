// Private pieces shared by the per-family decompilers.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace bspkit::decompile::detail {

using mapfile::Vec3d;

inline double dot(const Vec3d& a, const Vec3d& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline Vec3d sub(const Vec3d& a, const Vec3d& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3d add(const Vec3d& a, const Vec3d& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
inline Vec3d scale(const Vec3d& a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
inline Vec3d cross(const Vec3d& a, const Vec3d& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// "FILE: lump NAME at offset N: WHAT" for record `record` of lump `lump`.
[[noreturn]] void fail(const Bsp& bsp, size_t lump, size_t record, const std::string& what);

/// Element `i` of `records` (a lump's typed records), or an Error naming
/// lump `lump` at the record `from` that refers to it.
template <class T>
const T& at(const Bsp& bsp, std::span<const T> records, int64_t i, size_t lump, size_t from_lump, size_t from_record,
            const char* what) {
    if (i < 0 || uint64_t(i) >= records.size())
        fail(bsp, from_lump, from_record,
             std::string(what) + " " + std::to_string(i) + " out of range (" + std::string(bsp.lump_name(lump)) + " has " +
                 std::to_string(records.size()) + ")");
    return records[size_t(i)];
}

/// Three numbers of an entity value ("x y z"), nullopt when it does not hold three.
std::optional<Vec3d> parse_vec3(std::string_view s);
/// A float read from the map as the double of its shortest text ("3832.8518",
/// not 3832.851806640625): written so, it reads back to the same float.
inline double pretty(float v) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    double d = 0;
    std::from_chars(buf, r.ptr, d);
    return d;
}

/// Shortest-round-trip text of a number / of three.
std::string num_text(double v);
std::string vec_text(const Vec3d& v);

/// Brush indices reachable from `headnode` through a node tree: `children`
/// gives the two children of a node (negative: leaf -(c + 1)), `leaf_brushes`
/// the brush indices of a leaf. Visits each node once.
template <class Children, class LeafBrushes>
void collect_brushes(size_t node_count, int64_t headnode, Children&& children, LeafBrushes&& leaf_brushes,
                     std::vector<uint8_t>& node_seen) {
    std::vector<int64_t> stack{headnode};
    node_seen.resize(node_count);
    while (!stack.empty()) {
        const int64_t n = stack.back();
        stack.pop_back();
        if (n < 0) {
            leaf_brushes(-(n + 1));
            continue;
        }
        if (size_t(n) >= node_count || node_seen[size_t(n)]) continue;
        node_seen[size_t(n)] = 1;
        const auto [a, b] = children(size_t(n));
        stack.push_back(a);
        stack.push_back(b);
    }
}

/// Lump indices a tree walk names in its errors.
struct TreeLumps {
    size_t models, leafs, leafbrushes, brushes;
};

/// The brushes of model `model` (headnode `headnode`) not already owned by
/// an earlier model, sorted; marks them in `owned`. Works on the Quake 2 and
/// Source records (children[2], numleafbrushes / firstleafbrush, brush).
template <class Node, class Leaf, class LeafBrush>
std::vector<size_t> model_brushes(const Bsp& bsp, std::span<const Node> nodes, std::span<const Leaf> leafs,
                                  std::span<const LeafBrush> leafbrushes, size_t brush_count, int64_t headnode,
                                  size_t model, const TreeLumps& lumps, std::vector<uint8_t>& owned,
                                  std::vector<uint8_t>& seen) {
    std::vector<size_t> list;
    owned.resize(brush_count);
    collect_brushes(
        nodes.size(), headnode,
        [&](size_t n) { return std::pair<int64_t, int64_t>(nodes[n].children[0], nodes[n].children[1]); },
        [&](int64_t leaf) {
            const auto& l = at(bsp, leafs, leaf, lumps.leafs, lumps.models, model, "leaf");
            for (size_t k = 0; k < l.numleafbrushes; ++k) {
                const auto& lb = at(bsp, leafbrushes, int64_t(l.firstleafbrush) + int64_t(k), lumps.leafbrushes,
                                    lumps.leafs, size_t(leaf), "leafbrush");
                if (lb.brush >= brush_count)
                    fail(bsp, lumps.leafbrushes, size_t(l.firstleafbrush + k),
                         "brush " + std::to_string(lb.brush) + " out of range (" + std::to_string(brush_count) + " brushes)");
                if (!owned[lb.brush]) owned[lb.brush] = 1, list.push_back(lb.brush);
            }
        },
        seen);
    std::sort(list.begin(), list.end());
    return list;
}

/// Shared brush assembly: the planes of a BSP brush (already moved by the
/// entity origin) in, the sides with an area out (index into `planes` and
/// their three points).
struct BuiltSide {
    size_t index = 0;
    std::array<Vec3d, 3> points{};
    Winding winding;
};
std::vector<BuiltSide> build_sides(std::span<const PlaneD> planes);
/// A square of the plane larger than any map, the part of `w` behind `p`, a polygon's area.
Winding plane_winding(const PlaneD& p);
void clip_to_back(Winding& w, const PlaneD& p);
double winding_area(const Winding& w);

/// Entity bookkeeping shared by the families: parses the entity lump into
/// map entities (model "*N" removed from brush entities, which are indexed
/// by model number), worldspawn first.
struct EntityTable {
    std::vector<mapfile::MapEntity> entities;
    std::vector<int64_t> model_entity;  ///< per model: index in entities, -1 when no entity uses it
    std::vector<Vec3d> model_offset;    ///< per model: the entity's origin (brushes are stored relative to it)
};
EntityTable entity_table(const Bsp& bsp, size_t model_count, bool origin_moves_brushes);

/// The start every family shares: the output dialect (the family's
/// `fallback` unless asked; VMF refused outside Source) and the entities.
EntityTable start_map(Result& r, const Bsp& bsp, const Options& options, mapfile::Dialect fallback, size_t model_count);


/// Records brush `b` (with sides built from `built`) in the result.
void add_brush(Result& r, size_t entity, mapfile::Brush brush, int64_t bsp_brush, const Vec3d& offset,
               std::vector<int64_t> bsp_sides);

/// texinfo-style vectors translated by `offset`: the shift that keeps the texture in place.
inline std::array<std::array<double, 4>, 2> moved_vectors(std::array<std::array<double, 4>, 2> v, const Vec3d& offset) {
    for (auto& a : v) a[3] -= a[0] * offset[0] + a[1] * offset[1] + a[2] * offset[2];
    return v;
}

Result decompile_source(const Bsp& bsp, const Options& options);
Result decompile_quake2(const Bsp& bsp, const Options& options);
Result decompile_quake3(const Bsp& bsp, const Options& options);
Result decompile_nightfire(const Bsp& bsp, const Options& options);
Result decompile_quake1(const Bsp& bsp, const Options& options);

}  // namespace bspkit::decompile::detail

namespace bspkit::decompile::detail {

/// Resets what `d` does not write, so that the map reads back equal.
inline void keep_written(mapfile::Side& s, mapfile::Dialect d) {
    if (!mapfile::uses_surface_flags(d)) s.contents = s.flags = s.value = 0;
    if (mapfile::uses_axes(d) || d == mapfile::Dialect::quake3_bp) s.standard = {};
    if (!mapfile::uses_axes(d)) s.axes = {};
    if (d != mapfile::Dialect::quake3_bp) s.bp_matrix = mapfile::Side{}.bp_matrix;
}

/// Builds one brush from its planes (moved by `offset`) and adds it when it
/// has a volume; `make(side, k)` fills material and texture of the side made
/// from plane k. `side_ids[k]`: index of plane k's side in the brush side lump.
template <class MakeSide>
void emit_brush(Result& r, size_t entity, int64_t bsp_brush, const Vec3d& offset, const std::vector<PlaneD>& planes,
                const std::vector<int64_t>& side_ids, MakeSide&& make) {
    const auto built = build_sides(planes);
    r.stats.dropped_sides += planes.size() - built.size();
    if (built.size() < 4) {
        ++r.stats.skipped_brushes;
        return;
    }
    mapfile::Brush out;
    std::vector<int64_t> from;
    for (const auto& bs : built) {
        mapfile::Side s;
        s.points = bs.points;
        if constexpr (std::is_invocable_v<MakeSide, mapfile::Side&, size_t, const Winding&>) make(s, bs.index, bs.winding);
        else make(s, bs.index);
        keep_written(s, r.map.dialect);
        out.sides.push_back(std::move(s));
        from.push_back(side_ids[bs.index]);
    }
    add_brush(r, entity, std::move(out), bsp_brush, offset, std::move(from));
}

/// A fixed-size name field as a string (up to its first NUL).
inline std::string field_name(const char* s, size_t n) {
    size_t len = 0;
    while (len < n && s[len]) ++len;
    return std::string(s, len);
}

/// The sides' texture in the dialect: axes for Valve 220 / Quake 2 / VMF, the standard projection otherwise.
inline void set_projection(mapfile::Side& s, mapfile::Dialect d, const std::array<std::array<double, 4>, 2>& vecs,
                           const Vec3d& normal) {
    if (mapfile::uses_axes(d)) s.axes = mapfile::axes_from_vectors(vecs);
    else s.standard = mapfile::standard_from_vectors(normal, vecs);
}

}  // namespace bspkit::decompile::detail
