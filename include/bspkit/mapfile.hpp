// Editor map files: the .map dialects of the id family (Quake standard,
// Valve 220, Quake 2 / Quake 3 with contents, flags and value, Quake 3
// patchDef2) and Hammer's VMF (KeyValues text with world / entity / solid /
// side / dispinfo). One data model, a writer and a reader for each dialect:
//
//   bspkit::mapfile::MapFile m = bspkit::mapfile::read(text, "in.map");  // throws Error
//   m.entities[0].brushes[0].sides[0].material = "BRICK1";
//   std::string out = bspkit::mapfile::write(m);
//
// Numbers are written in the shortest form that reads back to the same
// double (std::to_chars), so write -> read gives back the same data exactly.
#pragma once

#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::mapfile {

using Vec3d = std::array<double, 3>;

enum class Dialect : uint8_t {
    quake,     ///< ( p ) ( p ) ( p ) TEX xoff yoff rot xscale yscale
    valve220,  ///< ( p ) ( p ) ( p ) TEX [ ux uy uz ushift ] [ vx vy vz vshift ] rot uscale vscale  ("mapversion" "220")
    quake2,    ///< Valve 220 sides + contents flags value (TrenchBroom's Quake 2 Valve format), "mapversion" "220"
    quake2_standard,  ///< quake sides + contents flags value (the Quake 2 editors' own format)
    quake3,    ///< quake sides + contents flags value, patchDef2 patches
    quake3_bp,  ///< Quake 3 brush primitives: brushDef { ( p ) ( p ) ( p ) ( ( a b c ) ( d e f ) ) TEX contents flags value }
    vmf,       ///< Hammer KeyValues
};
std::string_view dialect_name(Dialect d) noexcept;
std::optional<Dialect> dialect_from_name(std::string_view name) noexcept;
/// Whether sides of the dialect carry texture axes (Valve 220, Quake 2, VMF) or the standard shift/rotate/scale.
bool uses_axes(Dialect d) noexcept;
/// Whether sides of the dialect carry contents / flags / value.
bool uses_surface_flags(Dialect d) noexcept;

/// Texture projection as axes: s = dot(p, u_axis) / u_scale + u_shift (texels); same for t.
struct TextureAxes {
    Vec3d u_axis{1, 0, 0}, v_axis{0, -1, 0};
    double u_shift = 0, v_shift = 0, u_scale = 1, v_scale = 1, rotation = 0;
    bool operator==(const TextureAxes&) const = default;
};
/// Texture projection of the Quake standard format (axis chosen from the plane normal).
struct TextureStandard {
    double x_shift = 0, y_shift = 0, rotation = 0, x_scale = 1, y_scale = 1;
    bool operator==(const TextureStandard&) const = default;
};

/// The displacement of one VMF side (dispinfo). Per-vertex arrays have
/// (2^power + 1)^2 entries in row order, triangle_tags 2 * 4^power.
struct Displacement {
    int power = 2;
    Vec3d start_position{};
    int flags = 0, elevation = 0, subdiv = 0;
    std::vector<Vec3d> normals;
    std::vector<double> distances;
    std::vector<Vec3d> offsets;
    std::vector<Vec3d> offset_normals;
    std::vector<double> alphas;
    std::vector<int> triangle_tags;
    std::array<int, 10> allowed_verts{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    int vertex_count() const noexcept { return ((1 << power) + 1) * ((1 << power) + 1); }
    int triangle_count() const noexcept { return 2 * (1 << power) * (1 << power); }
    bool operator==(const Displacement&) const = default;
};

/// An optional value kept on the heap (most sides have no displacement:
/// this keeps Side small). Copies are deep; == compares the values.
template <class T>
class Boxed {
public:
    Boxed() = default;
    Boxed(T v) : p_(std::make_unique<T>(std::move(v))) {}
    Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
    Boxed(Boxed&&) noexcept = default;
    Boxed& operator=(const Boxed& o) {
        p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
        return *this;
    }
    Boxed& operator=(Boxed&&) noexcept = default;
    Boxed& operator=(T v) {
        p_ = std::make_unique<T>(std::move(v));
        return *this;
    }
    bool has_value() const noexcept { return p_ != nullptr; }
    explicit operator bool() const noexcept { return has_value(); }
    T& operator*() { return *p_; }
    const T& operator*() const { return *p_; }
    T* operator->() { return p_.get(); }
    const T* operator->() const { return p_.get(); }
    void reset() noexcept { p_.reset(); }
    bool operator==(const Boxed& o) const { return has_value() == o.has_value() && (!p_ || *p_ == *o.p_); }

private:
    std::unique_ptr<T> p_;
};

struct Side {
    std::array<Vec3d, 3> points{};  ///< on the plane; normal = cross(p0 - p1, p2 - p1) points out of the brush
    std::string material;
    TextureAxes axes;          ///< Valve 220, Quake 2, VMF
    TextureStandard standard;  ///< Quake standard, Quake 2 standard, Quake 3
    /// Quake 3 brush primitives: st = matrix * (dot(p, S), dot(p, T), 1) with S, T from bp_axes(normal).
    std::array<double, 6> bp_matrix{1.0 / 128, 0, 0, 0, 1.0 / 128, 0};
    int32_t contents = 0, flags = 0, value = 0;  ///< Quake 2 / Quake 3 dialects
    double lightmap_scale = 16;  ///< VMF
    uint32_t smoothing_groups = 0;  ///< VMF
    int64_t id = 0;  ///< VMF side id (0: assigned when writing)
    Boxed<Displacement> displacement;  ///< VMF
    bool operator==(const Side&) const = default;
};

struct Brush {
    std::vector<Side> sides;
    int64_t id = 0;  ///< VMF solid id
    bool operator==(const Brush&) const = default;
};

/// A Quake 3 patchDef2: rows x columns control points, each x y z s t.
struct Patch {
    std::string material;
    int rows = 0, columns = 0;
    std::vector<std::array<double, 5>> points;  ///< row-major
    bool operator==(const Patch&) const = default;
};

struct MapEntity {
    std::vector<KeyValue> pairs;
    std::vector<Brush> brushes;
    std::vector<Patch> patches;
    int64_t id = 0;  ///< VMF entity id
    std::string_view get(std::string_view key, std::string_view fallback = {}) const noexcept;
    void set(std::string_view key, std::string value);
    bool operator==(const MapEntity&) const = default;
};

/// The whole file. entities[0] is worldspawn (VMF "world").
struct MapFile {
    Dialect dialect = Dialect::valve220;
    std::vector<MapEntity> entities;
    bool operator==(const MapFile&) const = default;
};

/// Writes the map in `map.dialect`. Throws Error when a key, value or
/// material cannot be written (a '"' or newline inside, an empty material).
std::string write(const MapFile& map);
/// Reads a .map (dialect detected per side: brackets mean Valve 220, three
/// trailing integers mean contents/flags/value) or, when `vmf` is set or the
/// text starts with a KeyValues block, a VMF. Throws Error naming `file` and
/// the byte offset where the text goes wrong.
MapFile read(std::string_view text, const std::string& file = "map", std::optional<Dialect> dialect = std::nullopt);

/// Numbers every entity, brush and side 1, 2, 3... (VMF ids), so that a
/// written VMF reads back equal to `map`.
void assign_ids(MapFile& map);

/// Plane of three points the way qbsp / vbsp compute it: normal =
/// normalize(cross(p0 - p1, p2 - p1)), dist = dot(p0, normal).
struct Plane {
    Vec3d normal{};
    double dist = 0;
};
Plane plane_from_points(const std::array<Vec3d, 3>& points) noexcept;

/// The two texture axes of the Quake standard projection (qbsp's
/// TextureAxisFromPlane + rotation + scale) as texinfo vectors:
/// s = dot(p, vecs[0].xyz) + vecs[0].w.
std::array<std::array<double, 4>, 2> standard_vectors(const Vec3d& normal, const TextureStandard& t) noexcept;
/// The standard projection closest to texinfo vectors `vecs` on a plane with
/// `normal` (exact when the vectors have no shear).
TextureStandard standard_from_vectors(const Vec3d& normal, const std::array<std::array<double, 4>, 2>& vecs) noexcept;
/// The two in-plane axes of Radiant's brush primitives (ComputeAxisBase) for a plane normal.
std::array<Vec3d, 2> bp_axes(const Vec3d& normal) noexcept;
/// Axes form of texinfo vectors: axis = vec / |vec|, scale = 1 / |vec|, shift = offset.
TextureAxes axes_from_vectors(const std::array<std::array<double, 4>, 2>& vecs) noexcept;
/// texinfo vectors of an axes projection.
std::array<std::array<double, 4>, 2> vectors_from_axes(const TextureAxes& a) noexcept;

}  // namespace bspkit::mapfile
