// Brush polygons from planes and the three points of each side, plus the
// entity bookkeeping every family shares.
#include "common.hpp"

#include <bspkit/zip.hpp>

#include <algorithm>

namespace bspkit::decompile {

using detail::cross;
using mapfile::Vec3d;
using detail::dot;
using detail::sub;

namespace {

/// Half the side of the square every side's polygon starts from: beyond
/// any map's coordinates (Source's ±16384, Strata's larger worlds).
constexpr double kBaseSize = 1 << 20;
/// Points closer than this to a clipping plane count as on it.
constexpr double kClipEpsilon = 1e-6;
/// A polygon with less area than this touches the brush in a line or a point.
constexpr double kMinArea = 1e-3;
/// A polygon thinner than this across (units) is a sliver: its three points come from the plane.
constexpr double kMinWidth = 0.5;

Winding base_winding(const PlaneD& p) {
    const Vec3d& n = p.normal;
    // Axis least aligned with the normal as "up".
    Vec3d up{0, 0, 1};
    const double ax = std::abs(n[0]), ay = std::abs(n[1]), az = std::abs(n[2]);
    if (az >= ax && az >= ay) up = {1, 0, 0};
    Vec3d u = cross(up, n);
    const double ul = std::sqrt(dot(u, u));
    u = detail::scale(u, 1 / ul);
    const Vec3d v = cross(n, u);
    const Vec3d c = detail::scale(n, p.dist);
    const Vec3d us = detail::scale(u, kBaseSize), vs = detail::scale(v, kBaseSize);
    return {detail::add(detail::add(c, us), vs), detail::add(detail::sub(c, us), vs), detail::sub(detail::sub(c, us), vs),
            detail::sub(detail::add(c, us), vs)};
}

/// Keeps the part of `w` behind `p` (dot(n, x) <= d).
void clip_behind(Winding& w, const PlaneD& p) {
    if (w.empty()) return;
    std::vector<double> dist(w.size());
    bool any_front = false, any_back = false;
    for (size_t i = 0; i < w.size(); ++i) {
        dist[i] = dot(w[i], p.normal) - p.dist;
        if (dist[i] > kClipEpsilon) any_front = true;
        else if (dist[i] < -kClipEpsilon) any_back = true;
    }
    if (!any_front) return;
    if (!any_back) {
        w.clear();
        return;
    }
    Winding out;
    out.reserve(w.size() + 1);
    for (size_t i = 0; i < w.size(); ++i) {
        const Vec3d& a = w[i];
        const Vec3d& b = w[(i + 1) % w.size()];
        const double da = dist[i], db = dist[(i + 1) % w.size()];
        if (da <= kClipEpsilon) out.push_back(a);
        if ((da > kClipEpsilon && db < -kClipEpsilon) || (da < -kClipEpsilon && db > kClipEpsilon)) {
            const double t = da / (da - db);
            Vec3d m;
            for (size_t k = 0; k < 3; ++k) {
                // Exact on axial planes: the coordinate along the normal is the plane's.
                if (p.normal[k] == 1) m[k] = p.dist;
                else if (p.normal[k] == -1) m[k] = -p.dist;
                else m[k] = a[k] + t * (b[k] - a[k]);
            }
            out.push_back(m);
        }
    }
    w = std::move(out);
}

double area(const Winding& w) {
    Vec3d total{0, 0, 0};
    for (size_t i = 2; i < w.size(); ++i) total = detail::add(total, cross(sub(w[i - 1], w[0]), sub(w[i], w[0])));
    return std::sqrt(dot(total, total)) / 2;
}

bool same_plane(const PlaneD& a, const PlaneD& b) {
    return std::abs(a.dist - b.dist) < 1e-4 && std::abs(a.normal[0] - b.normal[0]) < 1e-7 &&
           std::abs(a.normal[1] - b.normal[1]) < 1e-7 && std::abs(a.normal[2] - b.normal[2]) < 1e-7;
}

double dist_to_line(const Vec3d& p, const Vec3d& a, const Vec3d& b) {
    const Vec3d ab = sub(b, a);
    const double l = dot(ab, ab);
    if (l == 0) return std::sqrt(dot(sub(p, a), sub(p, a)));
    const Vec3d c = cross(sub(p, a), ab);
    return std::sqrt(dot(c, c) / l);
}

}  // namespace

std::vector<Winding> brush_windings(std::span<const PlaneD> given) {
    // Float normals are up to ~1e-7 off unit length: the same planes, normalised.
    std::vector<PlaneD> planes(given.begin(), given.end());
    for (auto& p : planes) {
        const double len = std::sqrt(dot(p.normal, p.normal));
        if (len > 0.5 && len < 1.5) p = {detail::scale(p.normal, 1 / len), p.dist / len};
    }
    std::vector<Winding> out(planes.size());
    for (size_t i = 0; i < planes.size(); ++i) {
        const double len = dot(planes[i].normal, planes[i].normal);
        if (!(len > 0.99 && len < 1.01) || !std::isfinite(planes[i].dist) || std::abs(planes[i].dist) > kBaseSize) continue;
        bool repeat = false;
        for (size_t j = 0; j < i && !repeat; ++j) repeat = same_plane(planes[i], planes[j]);
        if (repeat) continue;
        Winding w = base_winding(planes[i]);
        for (size_t j = 0; j < planes.size() && !w.empty(); ++j)
            if (j != i && !same_plane(planes[i], planes[j])) clip_behind(w, planes[j]);
        if (w.size() >= 3 && area(w) >= kMinArea) out[i] = std::move(w);
    }
    return out;
}

std::array<Vec3d, 3> side_points(const Winding& w, const PlaneD& plane) {
    // Corners spanning the polygon: one, the farthest from it, the farthest from their line.
    size_t a = 0, b = 0, c = 0;
    double best = -1;
    for (size_t i = 0; i < w.size(); ++i) {
        const double d = dot(sub(w[i], w[a]), sub(w[i], w[a]));
        if (d > best) best = d, b = i;
    }
    best = -1;
    for (size_t i = 0; i < w.size(); ++i) {
        const double d = dist_to_line(w[i], w[a], w[b]);
        if (d > best) best = d, c = i;
    }
    std::array<Vec3d, 3> p{w[a], w[b], w[c]};
    if (dist_to_line(w[c], w[a], w[b]) < kMinWidth) {
        // A sliver (float planes meeting where the editor's met exactly):
        // its corners would give a poor plane; take a right triangle on the
        // plane itself around the sliver's middle.
        Vec3d n = plane.normal;
        const double len = std::sqrt(dot(n, n));
        n = detail::scale(n, 1 / len);
        const double d = plane.dist / len;
        Vec3d mid = detail::scale(detail::add(w[a], w[b]), 0.5);
        mid = detail::sub(mid, detail::scale(n, dot(mid, n) - d));
        Vec3d u = detail::sub(w[b], w[a]);
        u = detail::sub(u, detail::scale(n, dot(u, n)));
        u = detail::scale(u, 1 / std::sqrt(dot(u, u)));
        const Vec3d v = cross(n, u);
        p = {detail::add(mid, detail::scale(u, 32)), mid, detail::add(mid, detail::scale(v, 32))};
    }
    auto span = [](const std::array<Vec3d, 3>& q) {
        const Vec3d n = cross(sub(q[0], q[1]), sub(q[2], q[1]));
        return dot(n, n);
    };
    const double raw = span(p);
    std::array<Vec3d, 3> snapped = p;
    for (auto& q : snapped) {
        Vec3d r{std::round(q[0]), std::round(q[1]), std::round(q[2])};
        if (std::abs(dot(r, plane.normal) - plane.dist) <= 1e-6) q = r;
    }
    // Snapping must not fold the triangle (its area may shrink by a quarter at most).
    if (span(snapped) >= raw * 0.5625) p = snapped;
    if (dot(mapfile::plane_from_points(p).normal, plane.normal) < 0) std::swap(p[0], p[2]);
    return p;
}

namespace detail {

Winding plane_winding(const PlaneD& p) { return base_winding(p); }
void clip_to_back(Winding& w, const PlaneD& p) { clip_behind(w, p); }
double winding_area(const Winding& w) { return area(w); }

void fail(const Bsp& bsp, size_t lump, size_t record, const std::string& what) {
    int64_t offset = -1;
    if (lump < bsp.lump_count() && !bsp.compressed(lump))
        offset = int64_t(bsp.entry(lump).offset) + int64_t(record) * int64_t(bsp.record_size(lump));
    throw Error({bsp.file_name(), std::string(lump < bsp.lump_count() ? bsp.lump_name(lump) : "?"), offset}, what);
}

std::vector<BuiltSide> build_sides(std::span<const PlaneD> planes) {
    std::vector<Winding> w = brush_windings(planes);
    std::vector<BuiltSide> out;
    for (size_t i = 0; i < planes.size(); ++i)
        if (!w[i].empty()) out.push_back({i, side_points(w[i], planes[i]), std::move(w[i])});
    return out;
}

std::optional<Vec3d> parse_vec3(std::string_view s) {
    Vec3d v{};
    size_t pos = 0;
    for (size_t k = 0; k < 3; ++k) {
        while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
        const auto r = std::from_chars(s.data() + pos, s.data() + s.size(), v[k]);
        if (r.ec != std::errc()) return std::nullopt;
        pos = size_t(r.ptr - s.data());
    }
    return v;
}

std::string num_text(double v) {
    if (v == 0) v = 0;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

std::string vec_text(const Vec3d& v) { return num_text(v[0]) + ' ' + num_text(v[1]) + ' ' + num_text(v[2]); }

EntityTable entity_table(const Bsp& bsp, size_t model_count, bool origin_moves_brushes) {
    EntityTable t;
    t.model_entity.assign(model_count, -1);
    t.model_offset.assign(model_count, Vec3d{0, 0, 0});
    const EntityLump lump = read_entities(bsp);
    // What an editor map cannot hold (quoted strings may span lines in the
    // entity lump): line breaks become spaces, quotes apostrophes, NULs go.
    auto clean = [](std::string v) {
        std::string o;
        for (char c : v)
            if (c == '\n' || c == '\r') o += ' ';
            else if (c == '"') o += '\'';
            else if (c != '\0') o += c;
        return o;
    };
    for (const Entity& e : lump.entities) {
        mapfile::MapEntity m;
        int64_t model = -1;
        for (const KeyValue& raw : e.pairs) {
            const KeyValue kv{clean(raw.key), clean(raw.value)};
            if (kv.key == "model")
                if (const auto n = brush_model_number(kv.value);
                    n && *n > 0 && *n < model_count && t.model_entity[size_t(*n)] < 0) {
                    model = int64_t(*n);
                    continue;
                }
            m.pairs.push_back(kv);
        }
        const bool world = m.get("classname") == "worldspawn";
        if (world && !t.entities.empty() && t.entities[0].get("classname") != "worldspawn") {
            t.entities.insert(t.entities.begin(), std::move(m));
            for (auto& me : t.model_entity)
                if (me >= 0) ++me;
            if (model_count) t.model_entity[0] = 0;
            continue;
        }
        if (world && t.entities.empty() && model_count) t.model_entity[0] = 0;
        if (model > 0) {
            t.model_entity[size_t(model)] = int64_t(t.entities.size());
            if (origin_moves_brushes)
                if (auto o = parse_vec3(m.get("origin"))) t.model_offset[size_t(model)] = *o;
        }
        t.entities.push_back(std::move(m));
    }
    if (t.entities.empty() || t.entities[0].get("classname") != "worldspawn") {
        mapfile::MapEntity w;
        w.pairs.push_back({"classname", "worldspawn"});
        t.entities.insert(t.entities.begin(), std::move(w));
        for (auto& me : t.model_entity)
            if (me >= 0) ++me;
        if (model_count) t.model_entity[0] = 0;
    }
    return t;
}

EntityTable start_map(Result& r, const Bsp& bsp, const Options& options, mapfile::Dialect fallback, size_t model_count) {
    r.map.dialect = options.dialect.value_or(fallback);
    if (r.map.dialect == mapfile::Dialect::vmf && fallback != mapfile::Dialect::vmf)
        throw Error({bsp.file_name(), "header", 0}, "VMF output is for Source maps; choose a .map dialect");
    EntityTable t = entity_table(bsp, model_count, true);
    r.map.entities = std::move(t.entities);
    return t;
}

void add_brush(Result& r, size_t entity, mapfile::Brush brush, int64_t bsp_brush, const Vec3d& offset,
               std::vector<int64_t> bsp_sides) {
    auto& list = r.map.entities[entity].brushes;
    r.stats.sides += brush.sides.size();
    ++r.stats.brushes;
    r.origins.push_back({entity, list.size(), bsp_brush, offset, std::move(bsp_sides)});
    list.push_back(std::move(brush));
}

}  // namespace detail

namespace {

/// Material names the editor file cannot hold: a quote, newline or NUL in
/// any dialect, and in a .map (whitespace-separated tokens) any byte up to
/// the space. Each such byte becomes '_', and a note says which names were
/// changed, instead of the whole map failing to be written.
void writable_materials(Result& r) {
    const bool vmf = r.map.dialect == mapfile::Dialect::vmf;
    std::vector<std::pair<std::string, std::string>> renamed;
    const auto unwritable = [vmf](char c) {
        return c == '"' || c == '\n' || c == '\r' || c == '\0' || (!vmf && static_cast<unsigned char>(c) <= ' ');
    };
    auto fix = [&](std::string& name) {
        if (std::none_of(name.begin(), name.end(), unwritable)) return;  // every side is looked at: no copy then
        std::string out = name;
        std::replace_if(out.begin(), out.end(), unwritable, '_');
        if (std::find_if(renamed.begin(), renamed.end(), [&](const auto& p) { return p.first == name; }) == renamed.end())
            renamed.emplace_back(name, out);
        name = std::move(out);
    };
    for (auto& e : r.map.entities) {
        for (auto& b : e.brushes)
            for (auto& s : b.sides) fix(s.material);
        for (auto& p : e.patches) fix(p.material);
    }
    if (renamed.empty()) return;
    const std::string shown = zip::printable(renamed[0].first);
    const bool one = renamed.size() == 1;
    r.notes.push_back(std::to_string(renamed.size()) + (one ? " material name holds " : " material names hold ") +
                      (vmf ? "a quote, newline or NUL" : "white space, control bytes or quotes") + ", which a " +
                      (vmf ? "VMF" : ".map") + " cannot hold: written with '_' in their place (\"" + shown +
                      "\" as \"" + renamed[0].second + "\"" + (one ? "" : ", ...") + ")");
}

}  // namespace

Result decompile(const Bsp& bsp, const Options& options) {
    Result r;
    switch (bsp.format()) {
        case Format::source: r = detail::decompile_source(bsp, options); break;
        case Format::quake2: r = detail::decompile_quake2(bsp, options); break;
        case Format::quake3: r = detail::decompile_quake3(bsp, options); break;
        case Format::nightfire: r = detail::decompile_nightfire(bsp, options); break;
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: r = detail::decompile_quake1(bsp, options); break;
    }
    writable_materials(r);
    r.stats.entities = r.map.entities.size();
    for (const auto& e : r.map.entities) {
        r.stats.patches += e.patches.size();
        for (const auto& b : e.brushes)
            for (const auto& s : b.sides) r.stats.displacements += s.displacement.has_value();
    }
    return r;
}

}  // namespace bspkit::decompile
