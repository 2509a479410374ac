// Private: what a render::Scene holds (see bspkit/render.hpp).
#pragma once

#include <bspkit/query.hpp>
#include <bspkit/render.hpp>
#include <bspkit/visibility.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::render {

/// One triangle in world space (brush models already moved to their origin).
struct Tri {
    Vec3 p[3];
    float uv[3][2];
    float luv[3][2];
    float rgb[3][3];      ///< vertex light (0-255) for surfaces without a lightmap
    Vec3 normal;          ///< geometric normal on the surface's front side
    uint32_t draw = 0;    ///< index into Scene::Impl::draws
};

/// One surface (or prop box): a run of triangles sharing a material.
struct Draw {
    int64_t face = -1;        ///< model::Surface::face (world only), -1 otherwise
    uint32_t material = 0;    ///< index into Scene::Impl::materials
    uint32_t first = 0, count = 0;  ///< triangles
    bool world = false;
    bool brush_model = false;
    bool prop = false;
    bool lightmapped = false;  ///< samples the lightmap atlas; else the vertex light
    float texel_density = 0;   ///< sqrt(texel area / world area) of the surface (level-0 texels per unit)
};

struct MaterialInfo {
    uint32_t flags = 0;            ///< model::MaterialFlag
    int32_t texture = -1;          ///< index into Scene::Impl::textures
    std::array<float, 3> flat{};   ///< colour without a texture (0-255)
    bool has_alpha = false;        ///< the texture has texels with alpha < 255
    bool translucent = false, alpha_test = false, sky = false, unlit = false;
    bool two_sided = false;
};

struct Scene::Impl {
    Format format = Format::quake1;
    std::vector<Tri> tris;
    std::vector<Draw> draws;
    std::vector<MaterialInfo> materials;
    std::vector<std::vector<model::Texture>> textures;  ///< mip chains
    model::LightmapAtlas light_raw;      ///< combined lightmap, as stored
    model::LightmapAtlas light_engine;   ///< as the engine shows it (with the exposure of prepare())
    std::optional<model::SkyLayers> sky_layers;  ///< model::Map::sky_layers
    std::optional<model::SkyBox> sky_box;        ///< model::Map::sky_box, every face with texels
    std::optional<model::SkyClouds> sky_clouds;  ///< model::Map::sky_clouds, every layer with texels
    std::vector<Entity> entities;
    Vec3 mins, maxs;
    std::unique_ptr<query::World> world;
    Visibility vis;
    ClusterFaces cluster_faces;
    std::vector<uint8_t> listed;   ///< per face number: some cluster lists it
    std::vector<std::string> warnings;
};

}  // namespace bspkit::render
