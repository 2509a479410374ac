// Geometry and lightmaps of James Bond 007: Nightfire (BSP 42) maps for the
// engine-neutral model (seed 003).
//
// Per model (Models: SurfacesIndex / SurfacesCount) one Surface per drawn
// surface record:
//   - triangles straight from the map: the surface's block of Vertices
//     (VerticesIndex, VerticesCount) indexed by its DrawIndices
//     (TriangleCorner, 0-based in the block). Surfaces without draw indices
//     are collision-only (not drawn) and get no Surface; zero-area and
//     repeated triangles are dropped. Winding as stored (clockwise seen from
//     the front, like GoldSrc).
//   - plane and normals: the surface's plane (Nightfire has no `side`).
//   - texture UVs from the texture projection: u = dot(p, S.xyz) + S.w,
//     v = dot(p, T.xyz) + T.w. Textures live outside the map, so
//     Material::width / height are 0 and the UVs are in texels.
//   - materials: one per (Textures path, Materials name); the name is the
//     texture path; flags from the material (wld_fullbright: unlit; sky) and
//     tool texture names (nodraw, skip, hint, origin, null, clip, trigger).
//   - lightmap (a style and LightingOffset >= 0): the lightmap projection is
//     already in luxels, so the grid spans floor(min) .. ceil(max) of its
//     coordinates over the surface's vertices, ceil(max) - floor(min) + 1
//     samples per axis, 3 bytes (RGB) per sample and style from
//     LightingOffset. On the corpus map these sizes tile the lighting lump
//     exactly (consecutive offsets, no gap, nothing left over). Lightmap UVs
//     at luxel centres: (l - floor(min) + 0.5) / width.
#include "../../model/builders.hpp"
#include "../../model/polygon.hpp"
#include "../common/luxel_lightmaps.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/nightfire.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace bspkit::nightfire {
namespace {

std::string path_string(const char (&path)[64]) {
    const char* end = std::find(path, path + 64, '\0');
    return std::string(path, end);
}

uint32_t material_flags(std::string_view texture, std::string_view material) {
    using namespace model;
    const std::string t = ascii_lower(texture), m = ascii_lower(material);
    const std::string base = t.substr(t.find_last_of('/') == std::string::npos ? 0 : t.find_last_of('/') + 1);
    uint32_t f = 0;
    if (m.find("fullbright") != std::string::npos) f |= kUnlit;
    if (m.find("sky") != std::string::npos || base.rfind("sky", 0) == 0) f |= kSky | kUnlit;
    if (base == "nodraw" || base == "skip" || base == "hint" || base == "origin" || base == "null") f |= kNodraw;
    if (base == "clip" || base == "playerclip" || base == "npcclip") f |= kClip;
    if (base == "trigger" || base == "aaatrigger") f |= kTrigger;
    if (!base.empty() && base[0] == '{') f |= kAlphaTest;
    return f;
}

double project(const float p[3], const float v[4]) {
    return double(p[0]) * v[0] + double(p[1]) * v[1] + double(p[2]) * v[2] + double(v[3]);
}

class Builder {
public:
    Builder(const Map& q, const model::BuildOptions& options, model::Map& out)
        : q_(q), options_(options), out_(out), file_(q.bsp().file_name()) {}

    void run() {
        planes_ = q_.planes();
        vertices_ = q_.vertices();
        indices_ = q_.draw_indices();
        surfaces_ = q_.surfaces();
        projections_ = q_.projections();
        textures_ = q_.textures();
        materials_lump_ = q_.materials();
        lighting_ = q_.lighting();
        work_budget_ = 4 * (uint64_t(vertices_.size()) + indices_.size()) + (uint64_t(1) << 20);
        lighting_reader_.emplace(lighting_);
        const auto models = q_.models();
        for (size_t m = 0; m < models.size(); ++m) build_model(m, models[m]);
    }

private:
    int64_t record_offset(size_t lump, size_t index, size_t size) const {
        return int64_t(q_.bsp().entry(lump).offset) + int64_t(index * size);
    }

    [[noreturn]] void fail(size_t lump, size_t index, size_t size, const std::string& detail) const {
        throw Error({file_, std::string(q_.bsp().lump_name(lump)), record_offset(lump, index, size)}, detail);
    }

    [[noreturn]] void fail_surface(size_t i, const std::string& detail) const {
        fail(Map::Surfaces, i, sizeof(Surface), "surface " + std::to_string(i) + ": " + detail);
    }

    void build_model(size_t m, const Model& rec) {
        if (uint64_t(rec.SurfacesIndex) + rec.SurfacesCount > surfaces_.size())
            fail(Map::Models, m, sizeof(Model),
                 "model " + std::to_string(m) + ": SurfacesIndex " + std::to_string(rec.SurfacesIndex) +
                     " + SurfacesCount " + std::to_string(rec.SurfacesCount) + " runs past the " +
                     std::to_string(surfaces_.size()) + " records of surfaces");
        model::Model out;
        out.index = uint32_t(m);
        for (uint32_t k = 0; k < rec.SurfacesCount; ++k) build_surface(size_t(rec.SurfacesIndex) + k, out);
        out_.models.push_back(std::move(out));
    }

    uint32_t material(size_t i, const Surface& s) {
        const auto key = std::make_pair(s.TextureIndex, s.MaterialIndex);
        if (const auto it = materials_.find(key); it != materials_.end()) return it->second;
        model::Material mat;
        std::string shader;
        if (s.TextureIndex < textures_.size())
            mat.name = path_string(textures_[s.TextureIndex].Path);
        else
            diagnose(i, "TextureIndex " + std::to_string(s.TextureIndex) + " is out of range (" +
                            std::to_string(textures_.size()) + " textures): nameless material");
        if (s.MaterialIndex < materials_lump_.size())
            shader = path_string(materials_lump_[s.MaterialIndex].Path);
        mat.flags = material_flags(mat.name, shader);
        const uint32_t index = uint32_t(out_.materials.size());
        out_.materials.push_back(std::move(mat));
        materials_.emplace(key, index);
        return index;
    }

    void build_surface(size_t i, model::Model& out) {
        const Surface& s = surfaces_[i];
        if (s.DrawIndicesCount == 0) return;  // collision-only surface: nothing drawn
        if (s.PlaneIndex >= planes_.size())
            fail_surface(i, "PlaneIndex " + std::to_string(s.PlaneIndex) + " is out of range (" +
                                std::to_string(planes_.size()) + " planes)");
        if (uint64_t(s.VerticesIndex) + s.VerticesCount > vertices_.size())
            fail_surface(i, "VerticesIndex " + std::to_string(s.VerticesIndex) + " + VerticesCount " +
                                std::to_string(s.VerticesCount) + " runs past the " + std::to_string(vertices_.size()) +
                                " vertices");
        if (uint64_t(s.DrawIndicesIndex) + s.DrawIndicesCount > indices_.size())
            fail_surface(i, "DrawIndicesIndex " + std::to_string(s.DrawIndicesIndex) + " + DrawIndicesCount " +
                                std::to_string(s.DrawIndicesCount) + " runs past the " +
                                std::to_string(indices_.size()) + " draw indices");
        if (s.DrawIndicesCount % 3)
            fail_surface(i, "DrawIndicesCount " + std::to_string(s.DrawIndicesCount) + " is not a multiple of 3");
        if (s.TextureProjectionIndex >= projections_.size())
            fail_surface(i, "TextureProjectionIndex " + std::to_string(s.TextureProjectionIndex) +
                                " is out of range (" + std::to_string(projections_.size()) + " projections)");
        const uint64_t work = uint64_t(s.VerticesCount) + s.DrawIndicesCount;
        if (work > work_budget_)
            fail_surface(i, "the surfaces of the models use the vertices and draw indices more than 4 times over "
                            "(hostile ranges): geometry not built");
        work_budget_ -= work;

        const Plane& plane = planes_[s.PlaneIndex];
        const Projection& tex = projections_[s.TextureProjectionIndex];
        model::Surface out_s;
        out_s.face = int64_t(i);
        out_s.material = material(i, s);
        out_s.plane = model::Plane{{plane.Normal[0], plane.Normal[1], plane.Normal[2]}, plane.Distance};
        std::copy(s.LightStyles, s.LightStyles + 4, out_s.styles.begin());
        out_s.vertices.reserve(s.VerticesCount);
        for (uint32_t k = 0; k < s.VerticesCount; ++k) {
            const float* p = vertices_[size_t(s.VerticesIndex) + k].Point;
            model::Vertex v;
            v.position = {p[0], p[1], p[2]};
            v.normal = out_s.plane->normal;
            v.uv = {float(project(p, tex.S)), float(project(p, tex.T))};
            out_s.vertices.push_back(v);
        }
        std::set<std::array<uint32_t, 3>> seen;
        for (uint32_t k = 0; k < s.DrawIndicesCount; k += 3) {
            std::array<uint32_t, 3> tri;
            for (uint32_t c = 0; c < 3; ++c) {
                tri[c] = indices_[size_t(s.DrawIndicesIndex) + k + c].TriangleCorner;
                if (tri[c] >= s.VerticesCount)
                    fail(Map::DrawIndices, size_t(s.DrawIndicesIndex) + k + c, sizeof(DrawIndex),
                         "TriangleCorner " + std::to_string(tri[c]) + " of surface " + std::to_string(i) +
                             " is outside its " + std::to_string(s.VerticesCount) + " vertices");
            }
            // Zero-area triangles (repeated corners, collinear) draw nothing.
            using namespace model::polygon_detail;
            const D3 a = d3(out_s.vertices[tri[0]].position), b = d3(out_s.vertices[tri[1]].position),
                     c = d3(out_s.vertices[tri[2]].position);
            const D3 n = cross(b - a, c - a);
            const double longest2 = std::max({dot(b - a, b - a), dot(c - a, c - a), dot(c - b, c - b)});
            if (!(dot(n, n) > model::kMinTriangleHeight * model::kMinTriangleHeight * longest2)) continue;
            // The same triangle twice (any rotation of its corners) is drawn once.
            std::array<uint32_t, 3> key = tri;
            std::rotate(key.begin(), std::min_element(key.begin(), key.end()), key.end());
            if (!seen.insert(key).second) continue;
            out_s.indices.insert(out_s.indices.end(), tri.begin(), tri.end());
        }
        if (out_s.indices.empty()) return;
        if (options_.lightmaps) lightmap(i, s, out_s);
        out.surfaces.push_back(std::move(out_s));
    }

    void lightmap(size_t i, const Surface& s, model::Surface& out_s) {
        int styles = 0;
        while (styles < 4 && s.LightStyles[styles] != 255) ++styles;
        if (s.LightingOffset < 0 || styles == 0 || s.VerticesCount == 0) return;
        if (s.LightmapProjectionIndex >= projections_.size()) {
            diagnose(i, "LightmapProjectionIndex " + std::to_string(s.LightmapProjectionIndex) + " is out of range (" +
                            std::to_string(projections_.size()) + " projections): no lightmap");
            return;
        }
        const Projection& proj = projections_[s.LightmapProjectionIndex];
        const float* axes[2] = {proj.S, proj.T};
        luxels::Grid grid;
        for (uint32_t k = 0; k < s.VerticesCount; ++k) {
            const float* p = vertices_[size_t(s.VerticesIndex) + k].Point;
            grid.add(project(p, axes[0]), project(p, axes[1]));
        }
        if (!grid.finish()) {
            diagnose(i, "lightmap coordinates of the surface are not finite or too large: no lightmap");
            return;
        }
        std::string why;
        auto img = lighting_reader_->read(s.LightingOffset, "LightingOffset", grid, styles, 3, why);
        if (!img) {
            if (!why.empty()) diagnose(i, why);
            return;
        }
        for (uint32_t k = 0; k < s.VerticesCount; ++k) {
            const float* p = vertices_[size_t(s.VerticesIndex) + k].Point;
            out_s.vertices[k].lightmap_uv = grid.uv(project(p, axes[0]), project(p, axes[1]));
        }
        out_s.lightmap = int32_t(out_.lightmap_images.size());
        out_.lightmap_images.push_back(std::move(*img));
    }

    void diagnose(size_t i, const std::string& message) {
        out_.diagnostics.push_back({Severity::warning, "surfaces", record_offset(Map::Surfaces, i, sizeof(Surface)),
                                    "surface " + std::to_string(i) + ": " + message});
    }

    const Map& q_;
    const model::BuildOptions& options_;
    model::Map& out_;
    std::string file_;
    std::span<const Plane> planes_;
    std::span<const Vertex> vertices_;
    std::span<const DrawIndex> indices_;
    std::span<const Surface> surfaces_;
    std::span<const Projection> projections_;
    std::span<const Texture> textures_;
    std::span<const Material> materials_lump_;
    ByteSpan lighting_;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> materials_;
    uint64_t work_budget_ = 0;
    std::optional<luxels::LightingReader> lighting_reader_;
};

}  // namespace

void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map) {
    const Map q(bsp);
    Builder(q, options, map).run();
}

}  // namespace bspkit::nightfire
