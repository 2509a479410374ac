// render::Scene: the map's triangles, materials, textures (with mip levels),
// lightmap and visibility, prepared once for any number of frames; and the
// cameras the command line offers (spawn, entity, overview, thumbnail).
#include "scene_impl.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/engine_light.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numbers>

namespace bspkit::render {
namespace {

/// A stable colour per material name (FNV-1a), mid-bright so light shows on it.
std::array<float, 3> name_colour(const std::string& name) {
    uint32_t h = 2166136261u;
    for (const char ch : name) h = (h ^ uint8_t(ascii_lower(ch))) * 16777619u;
    return {float(80 + (h & 0x7f)), float(80 + ((h >> 8) & 0x7f)), float(80 + ((h >> 16) & 0x7f))};
}

bool finite(Vec3 v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

float finite_or_zero(float v) { return std::isfinite(v) ? v : 0.0f; }

MaterialInfo material_info(const model::Map& map, const model::Material& m, int32_t texture) {
    MaterialInfo info;
    info.flags = m.flags;
    info.sky = m.flags & model::kSky;
    info.translucent = m.flags & model::kTranslucent;
    info.alpha_test = m.flags & model::kAlphaTest;
    info.unlit = m.flags & model::kUnlit;
    info.two_sided = info.translucent || info.alpha_test;
    if (texture >= 0) {
        const auto& t = map.textures[size_t(texture)];
        info.texture = texture;
        for (size_t i = 3; i < t.rgba.size(); i += 4) info.has_alpha = info.has_alpha || t.rgba[i] < 255;
    }
    if (m.reflectivity && finite(*m.reflectivity)) {
        // Source texdata reflectivity is linear light: to sRGB for display.
        const auto enc = [](float v) { return float(255.0 * std::pow(std::clamp(double(v), 0.0, 1.0), 1.0 / 2.2)); };
        info.flat = {enc(m.reflectivity->x), enc(m.reflectivity->y), enc(m.reflectivity->z)};
    } else {
        info.flat = name_colour(m.name);
    }
    return info;
}

/// Texels per world unit of a surface (level 0), for the mip level choice.
float texel_density(const model::Surface& s, const model::Material& m, const model::Texture* t) {
    if (!t) return 0;
    const double tw = m.width ? double(t->width) : 1.0, th = m.width ? double(t->height) : 1.0;
    double world = 0, texel = 0;
    for (size_t i = 0; i + 2 < s.indices.size(); i += 3) {
        const auto& a = s.vertices[s.indices[i]];
        const auto& b = s.vertices[s.indices[i + 1]];
        const auto& c = s.vertices[s.indices[i + 2]];
        world += model::length(model::cross(b.position - a.position, c.position - a.position));
        const double e1u = (b.uv.x - a.uv.x) * tw, e1v = (b.uv.y - a.uv.y) * th;
        const double e2u = (c.uv.x - a.uv.x) * tw, e2v = (c.uv.y - a.uv.y) * th;
        texel += std::fabs(e1u * e2v - e2u * e1v);
    }
    const double d = world > 0 ? std::sqrt(texel / world) : 0;
    return std::isfinite(d) ? float(d) : 0.0f;
}

constexpr float kPropHalf = 16, kPropHeight = 64;

}  // namespace

void Camera::basis(Vec3& forward, Vec3& right, Vec3& up) const {
    constexpr double k = std::numbers::pi / 180.0;
    const double sp = std::sin(pitch * k), cp = std::cos(pitch * k);
    const double sy = std::sin(yaw * k), cy = std::cos(yaw * k);
    const double sr = std::sin(roll * k), cr = std::cos(roll * k);
    forward = {float(cp * cy), float(cp * sy), float(-sp)};
    right = {float(-sr * sp * cy + cr * sy), float(-sr * sp * sy - cr * cy), float(-sr * cp)};
    up = {float(cr * sp * cy + sr * sy), float(cr * sp * sy - sr * cy), float(cr * cp)};
}

Scene::Scene(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Scene::Scene(Scene&&) noexcept = default;
Scene& Scene::operator=(Scene&&) noexcept = default;
Scene::~Scene() = default;

Format Scene::format() const noexcept { return impl_->format; }
std::pair<Vec3, Vec3> Scene::bounds() const noexcept { return {impl_->mins, impl_->maxs}; }
const std::vector<Entity>& Scene::entities() const noexcept { return impl_->entities; }
size_t Scene::triangle_count() const noexcept { return impl_->tris.size(); }
const std::vector<std::string>& Scene::warnings() const noexcept { return impl_->warnings; }
std::string_view Scene::sky() const noexcept {
    if (impl_->sky_layers) return "layers";
    if (impl_->sky_box) return impl_->sky_clouds ? "box+clouds" : "box";
    return impl_->sky_clouds ? "clouds" : "colour";
}

Scene Scene::prepare(const model::Map& map, const Bsp& bsp, const Options& light) {
    auto s = std::make_unique<Impl>();
    s->format = map.format;
    s->entities = map.entities;
    // The tree and the PVS only cull and place cameras: without them (a map
    // with no usable tree or vis data) every face is drawn, and the Scene says why.
    try {
        s->world = std::make_unique<query::World>(query::World::prepare(bsp));
        s->vis = Visibility::of(bsp);
        s->cluster_faces = ClusterFaces::of(bsp, s->vis);
    } catch (const Error& e) {
        s->world.reset();
        s->vis = Visibility();
        s->cluster_faces = ClusterFaces();
        s->warnings.push_back(std::string(e.what()) + " (drawing every face, without the PVS)");
    }
    s->listed = s->cluster_faces.listed();

    // A texture with texels for every pixel of its size (else it is left out).
    const auto usable = [](const model::Texture& t) {
        return t.width && t.height && t.rgba.size() == size_t(t.width) * t.height * 4;
    };
    s->textures.resize(map.textures.size());
    for (size_t t = 0; t < map.textures.size(); ++t)
        if (usable(map.textures[t])) s->textures[t] = model::mip_chain(map.textures[t]);
    for (const auto& m : map.materials) {
        const bool usable = m.texture >= 0 && size_t(m.texture) < s->textures.size() && !s->textures[size_t(m.texture)].empty();
        s->materials.push_back(material_info(map, m, usable ? m.texture : -1));
    }
    if (map.sky_layers && usable(map.sky_layers->front) && usable(map.sky_layers->back)) s->sky_layers = map.sky_layers;
    if (map.sky_box && std::all_of(map.sky_box->faces.begin(), map.sky_box->faces.end(), usable)) s->sky_box = map.sky_box;
    if (map.sky_clouds && !map.sky_clouds->layers.empty() &&
        std::all_of(map.sky_clouds->layers.begin(), map.sky_clouds->layers.end(),
                    [&](const model::SkyClouds::Layer& l) { return usable(l.image); }))
        s->sky_clouds = map.sky_clouds;
    s->light_raw = model::combined_lightmap(map);
    s->light_engine = s->light_raw;
    model::shade_lightmap(map.format, light.engine_light, light.exposure, s->light_engine);
    const bool have_light = s->light_raw.width && s->light_raw.height;

    constexpr float kInf = std::numeric_limits<float>::infinity();
    s->mins = {kInf, kInf, kInf};
    s->maxs = {-kInf, -kInf, -kInf};
    const auto vertex_light = [&](const std::array<uint8_t, 4>& c, float out[3]) {
        const uint8_t rgb[3] = {c[0], c[1], c[2]};
        const auto v = map.format == Format::quake3 ? model::engine_light(map.format, rgb)
                                                    : std::array<double, 3>{double(c[0]), double(c[1]), double(c[2])};
        for (int k = 0; k < 3; ++k) out[k] = float(std::min(255.0, v[size_t(k)]));
    };
    for (const auto& m : map.models) {
        for (const auto& surf : m.surfaces) {
            if (surf.material >= map.materials.size()) continue;
            const auto& mat = map.materials[surf.material];
            // Sky faces are drawn (as the sky) even when the format also marks them nodraw
            // (Quake 2 / Source SURF_SKY | SURF_NODRAW): the engines draw the skybox there.
            if ((mat.flags & (model::kNodraw | model::kTrigger | model::kClip)) && !(mat.flags & model::kSky)) continue;
            Draw d;
            d.world = m.index == 0;
            d.brush_model = !d.world;
            d.face = d.world ? surf.face : -1;
            d.material = surf.material;
            d.first = uint32_t(s->tris.size());
            d.lightmapped = surf.lightmap >= 0 && have_light;
            const int32_t tex = s->materials[surf.material].texture;
            d.texel_density = texel_density(surf, mat, tex >= 0 ? &map.textures[size_t(tex)] : nullptr);
            const float sw = tex >= 0 && mat.width == 0 ? 1.0f / float(map.textures[size_t(tex)].width) : 1.0f;
            const float sh = tex >= 0 && mat.width == 0 ? 1.0f / float(map.textures[size_t(tex)].height) : 1.0f;
            for (size_t i = 0; i + 2 < surf.indices.size(); i += 3) {
                Tri t;
                bool ok = true;
                Vec3 nsum;
                for (int k = 0; k < 3; ++k) {
                    const uint32_t vi = surf.indices[i + size_t(k)];
                    if (vi >= surf.vertices.size()) {
                        ok = false;
                        break;
                    }
                    const auto& v = surf.vertices[vi];
                    t.p[k] = v.position + m.origin;
                    ok = ok && finite(t.p[k]);
                    t.uv[k][0] = finite_or_zero(v.uv.x) * sw;
                    t.uv[k][1] = finite_or_zero(v.uv.y) * sh;
                    t.luv[k][0] = finite_or_zero(v.lightmap_uv.x);
                    t.luv[k][1] = finite_or_zero(v.lightmap_uv.y);
                    vertex_light(v.color, t.rgb[k]);
                    if (finite(v.normal)) nsum = nsum + v.normal;
                }
                if (!ok) continue;
                Vec3 n = model::cross(t.p[1] - t.p[0], t.p[2] - t.p[0]);
                if (!(model::length(n) > 0)) continue;
                const Vec3 ref = surf.plane ? surf.plane->normal : nsum;
                if (model::dot(n, ref) < 0) n = n * -1.0f;
                t.normal = model::normalized(n);
                t.draw = uint32_t(s->draws.size());
                s->tris.push_back(t);
                if (d.world && !s->materials[surf.material].sky)
                    for (const Vec3& p : t.p) {
                        s->mins = {std::min(s->mins.x, p.x), std::min(s->mins.y, p.y), std::min(s->mins.z, p.z)};
                        s->maxs = {std::max(s->maxs.x, p.x), std::max(s->maxs.y, p.y), std::max(s->maxs.z, p.z)};
                    }
            }
            d.count = uint32_t(s->tris.size()) - d.first;
            if (d.count) s->draws.push_back(d);
        }
    }
    // Static props: boxes, grey, lit by their face's direction.
    if (!map.props.empty()) {
        MaterialInfo box;
        box.flat = {170, 170, 170};
        s->materials.push_back(box);
        const uint32_t box_material = uint32_t(s->materials.size() - 1);
        for (const auto& prop : map.props) {
            if (!finite(prop.origin)) continue;
            Draw d;
            d.prop = true;
            d.material = box_material;
            d.first = uint32_t(s->tris.size());
            const Vec3 lo = prop.origin + Vec3{-kPropHalf, -kPropHalf, 0};
            const Vec3 hi = prop.origin + Vec3{kPropHalf, kPropHalf, kPropHeight};
            const auto corner = [&](int i) { return Vec3{i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z}; };
            // Six sides: corners (counter-clockwise seen from outside) and normal.
            static constexpr int kSides[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
            static constexpr float kNormals[6][3] = {{0, 0, -1}, {0, 0, 1}, {0, -1, 0}, {0, 1, 0}, {-1, 0, 0}, {1, 0, 0}};
            for (int side = 0; side < 6; ++side) {
                const Vec3 n{kNormals[side][0], kNormals[side][1], kNormals[side][2]};
                const float shade = float(255.0 * (0.55 + 0.3 * n.z + 0.1 * n.x));
                for (const auto& tri : {std::array<int, 3>{0, 1, 2}, std::array<int, 3>{0, 2, 3}}) {
                    Tri t{};
                    for (int k = 0; k < 3; ++k) {
                        t.p[k] = corner(kSides[side][tri[size_t(k)]]);
                        for (float& c : t.rgb[k]) c = shade;
                    }
                    t.normal = n;
                    t.draw = uint32_t(s->draws.size());
                    s->tris.push_back(t);
                }
            }
            d.count = uint32_t(s->tris.size()) - d.first;
            s->draws.push_back(d);
        }
    }
    if (!(s->mins.x <= s->maxs.x)) s->mins = s->maxs = {};
    return Scene(std::move(s));
}

float eye_height(Format format) {
    switch (format) {
        case Format::quake3: return 26;
        case Format::goldsrc:
        case Format::nightfire: return 28;
        case Format::source: return 64;
        default: return 22;
    }
}

namespace {

std::optional<Vec3> parse_vec(std::string_view text) {
    float v[3];
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (float& x : v) {
        while (p < end && (*p == ' ' || *p == '\t')) ++p;
        const auto r = std::from_chars(p, end, x);
        if (r.ec != std::errc() || !std::isfinite(x)) return std::nullopt;
        p = r.ptr;
    }
    return Vec3{v[0], v[1], v[2]};
}

std::optional<Camera> camera_at(const Scene& scene, const Entity& e) {
    const auto origin = e.find("origin");
    if (!origin) return std::nullopt;
    const auto o = parse_vec(*origin);
    if (!o) return std::nullopt;
    Camera cam;
    cam.position = *o + Vec3{0, 0, eye_height(scene.format())};
    if (const auto angles = e.find("angles")) {
        if (const auto a = parse_vec(*angles)) {
            cam.pitch = a->x;
            cam.yaw = a->y;
        }
    } else if (const auto angle = e.find("angle")) {
        float yaw = 0;
        const auto r = std::from_chars(angle->data(), angle->data() + angle->size(), yaw);
        if (r.ec == std::errc() && std::isfinite(yaw)) cam.yaw = yaw;
    }
    if (const auto pitch = e.find("pitch")) {  // Source info_player_* may carry it separately
        float p = 0;
        const auto r = std::from_chars(pitch->data(), pitch->data() + pitch->size(), p);
        if (r.ec == std::errc() && std::isfinite(p)) cam.pitch = p;
    }
    return cam;
}

/// Player starts in the order they are preferred: single player, then the
/// families' multiplayer and team starts.
constexpr std::string_view kStarts[] = {
    "info_player_start",         "info_player_deathmatch",  "info_player_terrorist", "info_player_counterterrorist",
    "info_player_teamspawn",     "info_player_coop",        "team_ctf_redplayer",    "team_ctf_blueplayer",
    "team_ctf_redspawn",         "team_ctf_bluespawn",      "info_player_team1",     "info_player_team2",
    "info_player_combine",       "info_player_rebel",       "info_survivor_position", "info_player_axis",
    "info_player_allies",
};

}  // namespace

std::optional<Camera> spawn_camera(const Scene& scene) {
    for (const std::string_view cls : kStarts)
        for (const Entity& e : scene.entities())
            if (ascii_iequals(e.get("classname"), cls))
                if (auto cam = camera_at(scene, e)) return cam;
    return std::nullopt;
}

std::optional<Camera> entity_camera(const Scene& scene, std::string_view which) {
    const auto& ents = scene.entities();
    size_t index = 0;
    const auto r = std::from_chars(which.data(), which.data() + which.size(), index);
    if (r.ec == std::errc() && r.ptr == which.data() + which.size())
        return index < ents.size() ? camera_at(scene, ents[index]) : std::nullopt;
    for (const Entity& e : ents)
        if (e.get("targetname") == which)
            if (auto cam = camera_at(scene, e)) return cam;
    for (const Entity& e : ents)
        if (ascii_iequals(e.get("classname"), which))
            if (auto cam = camera_at(scene, e)) return cam;
    return std::nullopt;
}

Camera overview_camera(const Scene& scene, Options& options) {
    const auto [lo, hi] = scene.bounds();
    Camera cam;
    cam.orthographic = true;
    cam.pitch = 90;
    cam.yaw = 90;  // +X to the right, +Y up in the image
    const float w = std::max(1.0f, hi.x - lo.x), h = std::max(1.0f, hi.y - lo.y);
    const float aspect = float(options.width) / float(std::max(1u, options.height));
    cam.ortho_width = std::max(w, h * aspect) * 1.02f;
    cam.position = {(lo.x + hi.x) / 2, (lo.y + hi.y) / 2, hi.z + 64};
    // The playable space: up to two player heights above the highest start.
    float top = -std::numeric_limits<float>::infinity();
    for (const std::string_view cls : kStarts)
        for (const Entity& e : scene.entities())
            if (ascii_iequals(e.get("classname"), cls))
                if (const auto o = e.find("origin"))
                    if (const auto v = parse_vec(*o)) top = std::max(top, v->z);
    const float player = scene.format() == Format::source ? 72.0f : 56.0f;
    top = std::isfinite(top) ? std::min(hi.z, top + 2 * player) : hi.z;
    options.clip_above = top;
    options.hide_sky = true;
    options.lightmaps = false;  // the layout reads better fullbright; height gives the shading
    options.shade_heights = std::make_pair(lo.z, top);
    return cam;
}

Camera orbit_camera(const Scene& scene) {
    const auto [lo, hi] = scene.bounds();
    const Vec3 mid = (lo + hi) * 0.5f;
    Camera cam;
    cam.fov = 90;
    cam.yaw = 45;
    cam.pitch = 35;
    Vec3 f, r, u;
    cam.basis(f, r, u);
    // Far enough back along the view that every corner of the bounds is within
    // 45 degrees of the view's axis (a square image shows them all), plus 10%.
    float back = 16;
    for (int i = 0; i < 8; ++i) {
        const Vec3 c = Vec3{i & 1 ? hi.x : lo.x, i & 2 ? hi.y : lo.y, i & 4 ? hi.z : lo.z} - mid;
        const float side = std::max(std::fabs(float(model::dot(c, r))), std::fabs(float(model::dot(c, u))));
        back = std::max(back, side - float(model::dot(c, f)));
    }
    cam.position = mid - f * (back * 1.1f);
    return cam;
}

Camera thumbnail_camera(const Scene& scene) {
    Camera cam;
    if (!scene.impl().world) return orbit_camera(scene);
    const query::World& world = *scene.impl().world;
    if (auto spawn = spawn_camera(scene)) {
        cam = *spawn;
    } else {
        // No player start: the first entity in open space, else the 3/4 view from outside.
        bool found = false;
        for (size_t e = 1; e < scene.entities().size() && !found; ++e)
            if (auto c = entity_camera(scene, std::to_string(e))) {
                const auto leaf = world.leaf_at(c->position);
                if (leaf.cluster >= 0 && !leaf.contents.solid()) {
                    cam = *c;
                    found = true;
                }
            }
        if (!found) return orbit_camera(scene);
    }
    float best = -1;
    const float base = cam.yaw;
    for (int i = 0; i < 8; ++i) {
        const float yaw = base + 45.0f * float(i);
        const double a = yaw * std::numbers::pi / 180.0;
        const Vec3 dir{float(std::cos(a)), float(std::sin(a)), 0};
        const auto tr = world.trace(cam.position, cam.position + dir * 16384.0f);
        const float len = tr.startsolid ? 0.0f : tr.fraction * 16384.0f;
        if (len > best + 1) {
            best = len;
            cam.yaw = yaw;
        }
    }
    cam.pitch = 10;
    cam.roll = 0;
    cam.fov = 90;
    return cam;
}

}  // namespace bspkit::render
