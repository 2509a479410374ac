// Texture projections of editor maps: the Quake standard axis choice
// (qbsp's TextureAxisFromPlane), its inverse, and the axes form of texinfo
// vectors used by Valve 220, Quake 2 and VMF sides.
#include <bspkit/mapfile.hpp>

#include <cmath>
#include <numbers>

namespace bspkit::mapfile {
namespace {

double dot3(const Vec3d& a, const Vec3d& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// qbsp's baseaxis table: for each of six directions, the normal and the s / t axes.
constexpr double kBaseAxis[18][3] = {
    {0, 0, 1}, {1, 0, 0}, {0, -1, 0},   // floor
    {0, 0, -1}, {1, 0, 0}, {0, -1, 0},  // ceiling
    {1, 0, 0}, {0, 1, 0}, {0, 0, -1},   // west wall
    {-1, 0, 0}, {0, 1, 0}, {0, 0, -1},  // east wall
    {0, 1, 0}, {1, 0, 0}, {0, 0, -1},   // south wall
    {0, -1, 0}, {1, 0, 0}, {0, 0, -1},  // north wall
};

struct BaseAxes {
    Vec3d x, y;
    int sv, tv;  ///< the non-zero component of x and y
};

BaseAxes base_axes(const Vec3d& normal) {
    int best = 0;
    double best_dot = 0;
    for (int i = 0; i < 6; ++i) {
        const double d = dot3(normal, {kBaseAxis[i * 3][0], kBaseAxis[i * 3][1], kBaseAxis[i * 3][2]});
        if (d > best_dot) {
            best_dot = d;
            best = i;
        }
    }
    BaseAxes b;
    for (int k = 0; k < 3; ++k) {
        b.x[size_t(k)] = kBaseAxis[best * 3 + 1][k];
        b.y[size_t(k)] = kBaseAxis[best * 3 + 2][k];
    }
    b.sv = b.x[0] != 0 ? 0 : b.x[1] != 0 ? 1 : 2;
    b.tv = b.y[0] != 0 ? 0 : b.y[1] != 0 ? 1 : 2;
    return b;
}

void sin_cos_degrees(double degrees, double& s, double& c) {
    if (degrees == 0) { s = 0; c = 1; }
    else if (degrees == 90) { s = 1; c = 0; }
    else if (degrees == 180) { s = 0; c = -1; }
    else if (degrees == 270) { s = -1; c = 0; }
    else {
        const double a = degrees / 180 * std::numbers::pi;
        s = std::sin(a);
        c = std::cos(a);
    }
}

}  // namespace

std::array<std::array<double, 4>, 2> standard_vectors(const Vec3d& normal, const TextureStandard& t) noexcept {
    const BaseAxes b = base_axes(normal);
    std::array<std::array<double, 4>, 2> vecs{};
    for (int k = 0; k < 3; ++k) {
        vecs[0][size_t(k)] = b.x[size_t(k)];
        vecs[1][size_t(k)] = b.y[size_t(k)];
    }
    double s, c;
    sin_cos_degrees(t.rotation, s, c);
    for (auto& v : vecs) {
        const double ns = c * v[size_t(b.sv)] - s * v[size_t(b.tv)];
        const double nt = s * v[size_t(b.sv)] + c * v[size_t(b.tv)];
        v[size_t(b.sv)] = ns;
        v[size_t(b.tv)] = nt;
    }
    const double scale[2] = {t.x_scale != 0 ? t.x_scale : 1, t.y_scale != 0 ? t.y_scale : 1};
    for (int i = 0; i < 2; ++i)
        for (int k = 0; k < 3; ++k) vecs[size_t(i)][size_t(k)] /= scale[i];
    vecs[0][3] = t.x_shift;
    vecs[1][3] = t.y_shift;
    return vecs;
}

TextureStandard standard_from_vectors(const Vec3d& normal, const std::array<std::array<double, 4>, 2>& vecs) noexcept {
    const BaseAxes b = base_axes(normal);
    const auto sv = size_t(b.sv), tv = size_t(b.tv);
    // In the (sv, tv) plane: vecs[0] = R * x / xscale, vecs[1] = R * y / yscale.
    const double x2[2] = {b.x[sv], b.x[tv]}, y2[2] = {b.y[sv], b.y[tv]};
    const double s2[2] = {vecs[0][sv], vecs[0][tv]}, t2[2] = {vecs[1][sv], vecs[1][tv]};
    TextureStandard t;
    t.x_shift = vecs[0][3];
    t.y_shift = vecs[1][3];
    if (s2[0] == 0 && s2[1] == 0) return t;
    double angle = (std::atan2(s2[1], s2[0]) - std::atan2(x2[1], x2[0])) * 180 / std::numbers::pi;
    angle = std::fmod(angle + 360, 360);
    const double rounded = std::round(angle * 1e6) / 1e6;
    t.rotation = rounded == 360 ? 0 : rounded;
    double s, c;
    sin_cos_degrees(t.rotation, s, c);
    const double rx[2] = {c * x2[0] - s * x2[1], s * x2[0] + c * x2[1]};
    const double ry[2] = {c * y2[0] - s * y2[1], s * y2[0] + c * y2[1]};
    const double dx = s2[0] * rx[0] + s2[1] * rx[1], dy = t2[0] * ry[0] + t2[1] * ry[1];
    t.x_scale = dx != 0 ? 1 / dx : 1;
    t.y_scale = dy != 0 ? 1 / dy : 1;
    return t;
}

TextureAxes axes_from_vectors(const std::array<std::array<double, 4>, 2>& vecs) noexcept {
    TextureAxes a;
    Vec3d* axis[2] = {&a.u_axis, &a.v_axis};
    double* scale[2] = {&a.u_scale, &a.v_scale};
    double* shift[2] = {&a.u_shift, &a.v_shift};
    for (size_t i = 0; i < 2; ++i) {
        const double len = std::sqrt(vecs[i][0] * vecs[i][0] + vecs[i][1] * vecs[i][1] + vecs[i][2] * vecs[i][2]);
        if (len > 0) {
            *axis[i] = {vecs[i][0] / len, vecs[i][1] / len, vecs[i][2] / len};
            *scale[i] = 1 / len;
        }
        *shift[i] = vecs[i][3];
    }
    return a;
}

std::array<std::array<double, 4>, 2> vectors_from_axes(const TextureAxes& a) noexcept {
    const double us = a.u_scale != 0 ? a.u_scale : 1, vs = a.v_scale != 0 ? a.v_scale : 1;
    return {{{a.u_axis[0] / us, a.u_axis[1] / us, a.u_axis[2] / us, a.u_shift},
             {a.v_axis[0] / vs, a.v_axis[1] / vs, a.v_axis[2] / vs, a.v_shift}}};
}

Plane plane_from_points(const std::array<Vec3d, 3>& p) noexcept {
    const Vec3d a{p[0][0] - p[1][0], p[0][1] - p[1][1], p[0][2] - p[1][2]};
    const Vec3d b{p[2][0] - p[1][0], p[2][1] - p[1][1], p[2][2] - p[1][2]};
    Vec3d n{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    const double len = std::sqrt(dot3(n, n));
    if (len > 0)
        for (auto& c : n) c /= len;
    return {n, dot3(p[0], n)};
}

std::string_view dialect_name(Dialect d) noexcept {
    switch (d) {
        case Dialect::quake: return "quake";
        case Dialect::valve220: return "valve220";
        case Dialect::quake2: return "quake2";
        case Dialect::quake2_standard: return "quake2-standard";
        case Dialect::quake3: return "quake3";
        case Dialect::quake3_bp: return "quake3-bp";
        case Dialect::vmf: return "vmf";
    }
    return "?";
}

std::optional<Dialect> dialect_from_name(std::string_view name) noexcept {
    for (Dialect d : {Dialect::quake, Dialect::valve220, Dialect::quake2, Dialect::quake2_standard, Dialect::quake3,
                      Dialect::quake3_bp, Dialect::vmf})
        if (dialect_name(d) == name) return d;
    return std::nullopt;
}

bool uses_axes(Dialect d) noexcept { return d == Dialect::valve220 || d == Dialect::quake2 || d == Dialect::vmf; }
bool uses_surface_flags(Dialect d) noexcept {
    return d == Dialect::quake2 || d == Dialect::quake2_standard || d == Dialect::quake3 || d == Dialect::quake3_bp;
}

std::array<Vec3d, 2> bp_axes(const Vec3d& normal) noexcept {
    // Radiant's ComputeAxisBase, with its snapping of near-zero components.
    Vec3d n = normal;
    for (auto& c : n)
        if (std::abs(c) < 1e-6) c = 0;
    const double rot_y = -std::atan2(n[2], std::sqrt(n[1] * n[1] + n[0] * n[0]));
    const double rot_z = std::atan2(n[1], n[0]);
    return {Vec3d{-std::sin(rot_z), std::cos(rot_z), 0},
            Vec3d{-std::sin(rot_y) * std::cos(rot_z), -std::sin(rot_y) * std::sin(rot_z), -std::cos(rot_y)}};
}

std::string_view MapEntity::get(std::string_view key, std::string_view fallback) const noexcept {
    for (const auto& kv : pairs)
        if (kv.key == key) return kv.value;
    return fallback;
}

void MapEntity::set(std::string_view key, std::string value) {
    for (auto& kv : pairs)
        if (kv.key == key) {
            kv.value = std::move(value);
            return;
        }
    pairs.push_back({std::string(key), std::move(value)});
}

}  // namespace bspkit::mapfile
