// The renderer's correctness measures, shared by the unit tests (generated
// maps) and the corpus tests (real maps). Each looks at a frame as numbers
// and recomputes what a pixel must hold from something independent of the
// rasterizer: a line trace (depth), the surface's own triangles and the
// lightmap atlas (lightmap UVs).
#pragma once

#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::test {

/// Unit direction of pixel (x, y)'s ray (perspective camera), by the camera's definition.
inline model::Vec3 pixel_ray(const render::Camera& cam, uint32_t w, uint32_t h, double x, double y) {
    model::Vec3 f, r, u;
    cam.basis(f, r, u);
    const double focal = w / 2.0 / std::tan(cam.fov * std::numbers::pi / 360.0);
    const double rx = (x + 0.5 - w / 2.0) / focal, ry = (h / 2.0 - y - 0.5) / focal;
    return model::normalized(f + r * float(rx) + u * float(ry));
}

/// World surfaces by face number (the first surface with that number).
inline std::map<int64_t, const model::Surface*> surfaces_by_face(const model::Map& map) {
    std::map<int64_t, const model::Surface*> out;
    if (map.models.empty()) return out;
    for (const auto& s : map.models[0].surfaces) out.emplace(s.face, &s);
    return out;
}

struct DepthCheck {
    size_t compared = 0, agreed = 0;
    size_t not_world = 0, not_opaque = 0, not_solid = 0, other_surface = 0;  ///< pixels left out, by reason
    std::string first_disagreement;
};

/// On every `step`-th pixel whose nearest surface is an opaque world face
/// (not sky, liquid, translucent or alpha-tested), the rendered depth against
/// a line trace along the pixel's ray. Compared only where the trace meets
/// that surface (its plane; for displacements and patches, a triangle):
/// pixels where the trace hits nothing solid (non-solid detail) or an
/// undrawn solid (clip brushes) are counted apart.
inline DepthCheck depth_against_traces(const model::Map& map, const query::World& world, const render::Camera& cam,
                                       const render::Frame& f, uint32_t step) {
    DepthCheck out;
    const auto faces = surfaces_by_face(map);
    for (uint32_t y = step / 2; y < f.height; y += step)
        for (uint32_t x = step / 2; x < f.width; x += step) {
            const size_t i = size_t(y) * f.width + x;
            const auto it = faces.find(f.face[i]);
            if (f.face[i] < 0 || !std::isfinite(f.depth[i]) || it == faces.end()) {
                ++out.not_world;
                continue;
            }
            const uint32_t flags = map.materials[it->second->material].flags;
            if (flags & (model::kSky | model::kWater | model::kTranslucent | model::kAlphaTest)) {
                ++out.not_opaque;
                continue;
            }
            const model::Vec3 dir = pixel_ray(cam, f.width, f.height, x, y);
            const float reach = f.depth[i] * 1.5f + 64;
            const auto tr = world.trace(cam.position, cam.position + dir * reach);
            if (tr.startsolid || tr.fraction >= 1 || !tr.contents.solid()) {
                ++out.not_solid;
                continue;
            }
            // The trace must have met this surface, not an undrawn solid
            // (clip, invisible brushes) in front of it or behind a gap.
            const auto& plane = it->second->plane;
            const bool same = plane ? model::dot(tr.normal, plane->normal) > 0.999 && std::fabs(tr.dist - plane->dist) < 1
                                    : tr.triangle;
            if (!same) {
                ++out.other_surface;
                continue;
            }
            const double traced = tr.fraction * reach;
            ++out.compared;
            // The tolerance, plus the trace's own back-off from the
            // plane (DIST_EPSILON, at most Quake 3's 1/8 unit) along a ray
            // that may graze the surface.
            const double cosine = std::max(1e-3, std::fabs(model::dot(dir, tr.normal)));
            const double tolerance = std::max(0.5, 0.01 * traced) + 0.125 / cosine;
            if (std::fabs(traced - f.depth[i]) <= tolerance) {
                ++out.agreed;
            } else if (out.first_disagreement.empty()) {
                out.first_disagreement = "pixel " + std::to_string(x) + "," + std::to_string(y) + " face " +
                                         std::to_string(f.face[i]) + ": rendered " + std::to_string(f.depth[i]) +
                                         ", traced " + std::to_string(traced);
            }
        }
    return out;
}

struct LightmapCheck {
    size_t compared = 0, agreed = 0;
    std::string first_disagreement;
};

/// Bilinear sample of an RGB atlas, clamped at its edges (the renderer's rule,
/// written again here in doubles).
inline std::array<double, 3> atlas_sample(const model::LightmapAtlas& a, double u, double v, bool bilinear = true) {
    if (!bilinear) {  // the luxel the point is in, clamped to the atlas
        const size_t ix = size_t(std::clamp(std::floor(u * a.width), 0.0, double(a.width - 1)));
        const size_t iy = size_t(std::clamp(std::floor(v * a.height), 0.0, double(a.height - 1)));
        const uint8_t* p = &a.rgb[(iy * a.width + ix) * 3];
        return {double(p[0]), double(p[1]), double(p[2])};
    }
    const double x = u * a.width - 0.5, y = v * a.height - 0.5;
    const double fx = std::floor(x), fy = std::floor(y);
    const double ax = std::clamp(x - fx, 0.0, 1.0), ay = std::clamp(y - fy, 0.0, 1.0);
    const auto at = [&](double px, double py, int c) {
        const size_t ix = size_t(std::clamp(px, 0.0, double(a.width - 1)));
        const size_t iy = size_t(std::clamp(py, 0.0, double(a.height - 1)));
        return double(a.rgb[(iy * a.width + ix) * 3 + size_t(c)]);
    };
    std::array<double, 3> out{};
    for (int c = 0; c < 3; ++c)
        out[size_t(c)] = (at(fx, fy, c) * (1 - ax) + at(fx + 1, fy, c) * ax) * (1 - ay) +
                         (at(fx, fy + 1, c) * (1 - ax) + at(fx + 1, fy + 1, c) * ax) * ay;
    return out;
}

/// On every `step`-th pixel of a lightmap-only frame whose nearest surface
/// is a lit world surface (translucent surfaces not drawn): the ray meets one of the surface's own triangles;
/// its barycentric lightmap UV sampled from the combined atlas must be the
/// pixel's colour (within 2 of 255 per channel). `bilinear` false: the
/// luxel the UV falls in (render::Options::bilinear off).
inline LightmapCheck lightmap_against_atlas(const model::Map& map, const render::Camera& cam, const render::Frame& f,
                                            uint32_t step, bool bilinear = true) {
    LightmapCheck out;
    const model::LightmapAtlas atlas = model::combined_lightmap(map);
    if (!atlas.width) return out;
    const auto faces = surfaces_by_face(map);
    for (uint32_t y = step / 2; y < f.height; y += step)
        for (uint32_t x = step / 2; x < f.width; x += step) {
            const size_t i = size_t(y) * f.width + x;
            if (f.face[i] < 0) continue;
            const auto it = faces.find(f.face[i]);
            if (it == faces.end()) continue;
            const model::Surface& s = *it->second;
            const uint32_t flags = map.materials[s.material].flags;
            if (s.lightmap < 0 || (flags & (model::kSky | model::kTranslucent | model::kAlphaTest | model::kUnlit)))
                continue;
            const model::Vec3 dir = pixel_ray(cam, f.width, f.height, x, y);
            // Möller-Trumbore against each triangle of the surface.
            std::optional<model::Vec2> uv;
            for (size_t k = 0; k + 2 < s.indices.size() && !uv; k += 3) {
                const auto& a = s.vertices[s.indices[k]];
                const auto& b = s.vertices[s.indices[k + 1]];
                const auto& c = s.vertices[s.indices[k + 2]];
                const model::Vec3 e1 = b.position - a.position, e2 = c.position - a.position;
                const model::Vec3 p = model::cross(dir, e2);
                const double det = model::dot(e1, p);
                if (std::fabs(det) < 1e-12) continue;
                const model::Vec3 t = cam.position - a.position;
                const double bu = model::dot(t, p) / det;
                const model::Vec3 q = model::cross(t, e1);
                const double bv = model::dot(dir, q) / det;
                constexpr double kIn = -1e-4;
                if (bu < kIn || bv < kIn || bu + bv > 1 - kIn) continue;
                const double bw = 1 - bu - bv;
                uv = model::Vec2{float(bw * a.lightmap_uv.x + bu * b.lightmap_uv.x + bv * c.lightmap_uv.x),
                                 float(bw * a.lightmap_uv.y + bu * b.lightmap_uv.y + bv * c.lightmap_uv.y)};
            }
            if (!uv) continue;  // the pixel centre is on another triangle's edge pixel
            const auto expected = atlas_sample(atlas, uv->x, uv->y, bilinear);
            ++out.compared;
            bool ok = true;
            for (int c = 0; c < 3; ++c) ok = ok && std::fabs(expected[size_t(c)] - f.rgba[i * 4 + size_t(c)]) <= 2.0;
            if (ok) {
                ++out.agreed;
            } else if (out.first_disagreement.empty()) {
                out.first_disagreement = "pixel " + std::to_string(x) + "," + std::to_string(y) + " face " +
                                         std::to_string(f.face[i]) + ": rendered " +
                                         std::to_string(f.rgba[i * 4]) + " expected " + std::to_string(expected[0]);
            }
        }
    return out;
}

/// Pixels not covered by geometry (depth infinite).
inline size_t covered(const render::Frame& f) {
    return size_t(std::count_if(f.depth.begin(), f.depth.end(), [](float d) { return std::isfinite(d); }));
}

}  // namespace bspkit::test
