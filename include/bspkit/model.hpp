// One engine-neutral map model, built from any format: per model (the world
// and each brush model) a list of surfaces with triangles, normals, texture
// UVs, lightmap UVs, material name and flags; the lightmaps packed into atlas
// pages per light style; embedded textures; entities; static props.
//
//   const bspkit::Bsp bsp = bspkit::Bsp::open("map.bsp");
//   const bspkit::model::Map map = bspkit::model::build(bsp);
//   for (const auto& m : map.models) for (const auto& s : m.surfaces) ...
//
// Data flows one way: container -> typed records (per format) -> this model
// -> algorithms and front ends (exporters, renderer, bindings). Each format
// builds its part in src/formats/<format>/geometry.cpp; what is shared
// (lightmap atlas packing, triangulation helpers) lives in src/model/.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/bspx.hpp>
#include <bspkit/entities.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::model {

struct Vec2 {
    float x = 0, y = 0;
    bool operator==(const Vec2&) const = default;
};

struct Vec3 {
    float x = 0, y = 0, z = 0;
    bool operator==(const Vec3&) const = default;
};

inline Vec3 operator+(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline Vec3 operator-(Vec3 a, Vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline Vec3 operator*(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
inline double dot(Vec3 a, Vec3 b) { return double(a.x) * b.x + double(a.y) * b.y + double(a.z) * b.z; }
inline Vec3 cross(Vec3 a, Vec3 b) {
    return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
inline double length(Vec3 a) { return std::sqrt(dot(a, a)); }
inline Vec3 normalized(Vec3 a) {
    const double l = length(a);
    return l > 0 ? a * float(1.0 / l) : a;
}

/// Material flags, engine-neutral. Formats map their own bits onto these.
enum MaterialFlag : uint32_t {
    kSky = 1u << 0,
    kNodraw = 1u << 1,       ///< never drawn (nodraw, skip, hint, caulk, origin, null)
    kTrigger = 1u << 2,
    kWater = 1u << 3,        ///< any liquid: water, slime, lava
    kTranslucent = 1u << 4,  ///< alpha-blended or additive (windows, {-textures, trans33/66)
    kClip = 1u << 5,         ///< collision only (clip, playerclip, monsterclip)
    kUnlit = 1u << 6,        ///< no lightmap (warped, fullbright, TEX_SPECIAL)
    kAlphaTest = 1u << 7,    ///< cut-out ('{' textures, alpha-tested shaders)
};

struct Material {
    std::string name;        ///< texture / shader / material name as stored in the map
    uint32_t flags = 0;      ///< MaterialFlag bits
    uint32_t width = 0;      ///< texture size the UVs are normalised by (0 when unknown: UVs in texels)
    uint32_t height = 0;
    int32_t texture = -1;    ///< index into Map::textures when the map embeds it
    /// The texture's mean colour (linear 0-1) when the map stores it (Source texdata reflectivity).
    std::optional<Vec3> reflectivity;
};

/// An embedded texture, decoded to RGBA8 (mip level 0).
struct Texture {
    std::string name;
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgba;
};

enum class SurfaceKind : uint8_t { polygon, mesh, patch, displacement, billboard };

/// A kind's bit in BuildOptions::kinds.
constexpr uint32_t kind_bit(SurfaceKind kind) noexcept { return 1u << unsigned(kind); }

struct Vertex {
    Vec3 position;
    Vec3 normal;
    Vec2 uv;                                  ///< texture coordinates, normalised by the material size
    Vec2 lightmap_uv;                         ///< into the surface's lightmap image, then its atlas page
    std::array<uint8_t, 4> color{255, 255, 255, 255};  ///< vertex colour (displacement alpha, Q3 colours)
};

struct Plane {
    Vec3 normal;
    float dist = 0;
};

struct Surface {
    SurfaceKind kind = SurfaceKind::polygon;
    uint32_t material = 0;          ///< index into Map::materials
    int64_t face = -1;              ///< record index in the format's face / surface lump
    std::vector<Vertex> vertices;
    std::vector<uint32_t> indices;  ///< triangles, three per; empty for billboards
    std::optional<Plane> plane;     ///< the face's plane for planar surfaces
    int32_t lightmap = -1;          ///< index into Map::lightmap_images, then the atlas rectangle
    std::array<uint8_t, 4> styles{255, 255, 255, 255};  ///< light styles (255 = unused slot)
};

struct Model {
    uint32_t index = 0;       ///< 0 is the world
    Vec3 origin;              ///< where its entity puts it ("origin" key), zero for the world
    int32_t entity = -1;      ///< index into Map::entities of the entity using "*index", or -1
    std::vector<Surface> surfaces;
};

/// One surface's (or, for Quake 3, one page's) lightmap: RGB8 per style slot.
struct LightmapImage {
    uint32_t width = 0, height = 0;
    std::vector<std::vector<uint8_t>> styles;  ///< [slot] -> width*height*3 bytes
};

/// A packed page of lightmaps for one light style: 0 is the normal lighting;
/// other numbers are the map's animated or switchable lights (Quake: 1-11
/// animated, 32-62 switchable by entities; Source and GoldSrc alike). All
/// pages of a map share one size and layout: a surface's rectangle is at the
/// same place in every page and holds the samples of its slot with that style,
/// or black when the surface does not use the style.
struct LightmapAtlas {
    uint32_t style = 0;
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgb;
};

/// A Source static prop, kept as a placeholder (model path + transform).
struct PropPlacement {
    std::string model;
    Vec3 origin;
    Vec3 angles;  ///< pitch, yaw, roll in degrees
    int32_t skin = 0;
};

/// Quake 3 maps lit by q3map2 -external: the lightmaps lump is empty and the
/// faces name pages that the engines load from the game folders as
/// maps/<map name>/lm_NNNN.tga (or .jpg / .png), NNNN the page number.
struct ExternalLightmaps {
    std::string folder;  ///< "maps/<map name>", the BSP file's name without its extension
    struct Use {
        uint32_t model;    ///< Model::index
        uint32_t surface;  ///< index in that model's surfaces
        uint32_t page;     ///< the face's lightmapNum
    };
    std::vector<Use> uses;        ///< every surface left unlit for want of its page
    int64_t diagnostic = -1;      ///< the builder's warning about them in Map::diagnostics
    bool empty() const noexcept { return uses.empty(); }
};

/// A sky the map itself holds, as the engine draws it over sky surfaces.
/// Quake 1 / BSP2: the two layers of the sky texture (GLQuake's R_InitSky):
/// `back` the right half, opaque; `front` the left half drawn over it, its
/// palette index 0 clear (alpha 0, coloured the back layer's mean so that
/// filtering leaves no fringe). Both are seen through sky_layer_uv().
struct SkyLayers {
    Texture front, back;
};

/// Where a view direction meets the Quake 1 sky layers, in texture repeats
/// (u along world x, v along world y), at time 0 when neither layer has
/// scrolled: GLQuake's EmitSkyPolys (WinQuake's D_Sky_uv_To_st alike), a
/// sphere flattened three times along z, 6 x 63 texels of a 128-texel layer
/// from the centre to the horizon.
inline Vec2 sky_layer_uv(Vec3 dir) {
    const double x = dir.x, y = dir.y, z = 3.0 * dir.z;
    const double len = std::sqrt(x * x + y * y + z * z);
    if (!(len > 0) || !std::isfinite(len)) return {0, 0};
    const double k = 6.0 * 63.0 / len / 128.0;
    return {float(x * k), float(y * k)};
}

/// A sky box: six images around the viewer, in Quake 2's suffix order rt,
/// bk, lf, ft, up, dn. Quake 2 (worldspawn "sky", env/<sky><suffix>),
/// Quake 3 (a sky shader's skyParms far box, <box>_<suffix>), GoldSrc
/// (worldspawn "skyname", gfx/env/<name><suffix>) and Source (worldspawn
/// "skyname", materials/skybox/<name><suffix>) share its layout (R_DrawSkyBox's
/// st_to_vec), which sky_box_at() follows. Found on a search path, not in
/// the map: see textures::resolve().
struct SkyBox {
    std::string name;               ///< as the map names it ("unit1_", "env/space1", ...)
    std::array<Texture, 6> faces;   ///< rt, bk, lf, ft, up, dn
};

/// Where a view direction meets a sky box: the face (index into
/// SkyBox::faces) and its texture coordinates (0..1, rows from the top).
struct SkyBoxPoint {
    int face = 4;
    float u = 0.5f, v = 0.5f;
};

/// R_DrawSkyBox's layout (Quake 2's st_to_vec, skytexorder and MakeSkyVec):
/// the face the direction's largest component points at; on it, s and t
/// (-1..1) become u = (s + 1) / 2 and v = 1 - (t + 1) / 2.
inline SkyBoxPoint sky_box_at(Vec3 d) {
    const float ax = std::fabs(d.x), ay = std::fabs(d.y), az = std::fabs(d.z);
    float s = 0, t = 0;
    int face = 4;
    if (!(ax > 0 || ay > 0 || az > 0)) return {};  // zero or not a number: the middle of the up face
    if (ax >= ay && ax >= az) {
        face = d.x > 0 ? 0 : 2;  // +x: rt (s along -y); -x: lf (s along +y); t along +z
        s = (d.x > 0 ? -d.y : d.y) / ax;
        t = d.z / ax;
    } else if (ay >= az) {
        face = d.y > 0 ? 1 : 3;  // +y: bk (s along +x); -y: ft (s along -x); t along +z
        s = (d.y > 0 ? d.x : -d.x) / ay;
        t = d.z / ay;
    } else if (d.z > 0) {
        face = 4;  // up: s along -y, t along -x
        s = -d.y / az;
        t = -d.x / az;
    } else {
        face = 5;  // dn: s along -y, t along +x
        s = -d.y / az;
        t = d.x / az;
    }
    return {face, (s + 1) * 0.5f, 1 - (t + 1) * 0.5f};
}

/// A blend factor of a Quake 3 shader stage (blendFunc), as OpenGL's.
enum class BlendFactor : uint8_t {
    zero, one, src_color, one_minus_src_color, dst_color, one_minus_dst_color,
    src_alpha, one_minus_src_alpha, dst_alpha, one_minus_dst_alpha
};

/// Quake 3 cloud layers: the stages of a sky shader, drawn over its box
/// (or over black without one) on a dome `height` units up (skyParms'
/// cloud height), each blended as its blendFunc says (the first one with
/// none hides what is under it).
struct SkyClouds {
    struct Layer {
        Texture image;
        float scale_s = 1, scale_t = 1;   ///< tcMod scale
        BlendFactor src = BlendFactor::one, dst = BlendFactor::zero;
    };
    float height = 512;
    std::vector<Layer> layers;
};

/// Where a view direction meets the cloud dome, as texture coordinates
/// before tcMods: ioquake3's R_InitSkyTexCoords, a sphere of the world
/// radius 4096 centred that far below the eye, raised by `height`; s and t
/// are the arc cosines of the hit point's direction from that centre along
/// x and y.
inline Vec2 sky_cloud_st(Vec3 dir, float height) {
    constexpr double kRadius = 4096;
    const double x = dir.x, y = dir.y, z = dir.z, h = height;
    const double vv = x * x + y * y + z * z;
    if (!(vv > 0) || !std::isfinite(vv)) return {float(std::acos(0.0)), float(std::acos(0.0))};
    const double p = (-z * kRadius + std::sqrt(z * z * kRadius * kRadius + vv * (2 * kRadius * h + h * h))) / vv;
    const double px = x * p, py = y * p, pz = z * p + kRadius;
    const double len = std::sqrt(px * px + py * py + pz * pz);
    if (!(len > 0)) return {float(std::acos(0.0)), float(std::acos(0.0))};
    return {float(std::acos(std::clamp(px / len, -1.0, 1.0))), float(std::acos(std::clamp(py / len, -1.0, 1.0)))};
}

struct Map {
    Format format = Format::quake1;
    std::vector<Material> materials;
    std::vector<Texture> textures;
    std::vector<Model> models;
    std::vector<LightmapImage> lightmap_images;  ///< before packing; emptied by pack_lightmaps()
    std::vector<LightmapAtlas> lightmaps;        ///< after packing, one per light style in use, by style number
    /// Lump the lightmaps were decoded from when a format has a choice (Source:
    /// "lighting", or "lighting_hdr" when the LDR lump is empty); empty otherwise.
    std::string lightmap_source;
    std::vector<Entity> entities;
    std::vector<PropPlacement> props;
    /// What the builder skipped and why (a lightmap past the end of its lump,
    /// an undecodable texture, ...): the rest of the model is still usable.
    std::vector<Diagnostic> diagnostics;
    /// Lightmap pages kept outside the map (Quake 3); textures::resolve()
    /// loads them from its search path, lights the surfaces and packs them.
    ExternalLightmaps external_lightmaps;
    /// The sky's own layers when the map holds them (Quake 1 / BSP2 with an
    /// embedded "sky*" texture and BuildOptions::textures).
    std::optional<SkyLayers> sky_layers;
    /// The sky box, when textures::resolve() found its six images.
    std::optional<SkyBox> sky_box;
    /// Quake 3: the sky shader's cloud layers, when textures::resolve() found their images.
    std::optional<SkyClouds> sky_clouds;
};

struct BuildOptions {
    int patch_level = -1;       ///< Quake 3 bezier subdivisions per patch segment; -1 = adaptive
    bool lightmaps = true;      ///< decode and pack lightmaps
    bool textures = true;       ///< decode embedded textures
    bool all_models = true;     ///< false: the world only
    /// The kinds of surface to build, a bit per SurfaceKind (kind_bit()); all
    /// by default. Quake 3 and Source tell a face's kind from its record
    /// (surfaceType; dispinfo) and neither build nor check the faces of other
    /// kinds, as the engines' collision reads only patches / displacements;
    /// the other families build every face and leave the others out.
    uint32_t kinds = ~0u;
    bool hdr_lightmaps = false; ///< Source: the HDR lighting lump when it has data (default: LDR when present)
    /// Quake 1 / BSP2: coloured light from a `.lit` file ("QLIT" version 1),
    /// preferred over BSPX RGBLIGHTING as QuakeSpasm-Spiked and FTE do.
    bool lit_file = true;
    /// The .lit file to use; empty: FILE.lit beside Bsp::file_name().
    std::filesystem::path lit_path;
};

/// The BSPX lighting options that `options` asks for.
bspx::LightingOptions lighting_options(const BuildOptions& options);

/// Builds the model of any supported map. Throws Error for broken references
/// that make geometry impossible (with file, lump and offset).
Map build(const Bsp& bsp, const BuildOptions& options = {});

/// Bytes the lightmap pages of one map may take together (every page is the
/// size of the whole atlas). One page gets at most this, and at most 16 times
/// the luxels of the images it packs plus 1 Mi luxels: an atlas of
/// pathological shapes larger than that gets no page at all.
inline constexpr uint64_t kMaxLightmapPageBytes = uint64_t(512) << 20;

/// Packs Map::lightmap_images into one atlas per light style and rewrites
/// every vertex's lightmap_uv into atlas coordinates (0..1). Called by build().
/// Pages that would pass `max_page_bytes` in total are left out with a
/// diagnostic (a hostile map naming hundreds of styles); when one page alone
/// would, there are none and no surface keeps its lightmap.
void pack_lightmaps(Map& map, uint64_t max_page_bytes = kMaxLightmapPageBytes);

/// Every light style's page added up (saturating at 255): the map with all
/// its lights on at their normal brightness, in the shared layout. What a
/// viewer without light styles should show. Empty when there are no pages.
LightmapAtlas combined_lightmap(const Map& map);

/// Box-filtered mip levels of an RGBA texture: level 0 (a copy) down to 1x1,
/// each texel the rounded mean of the 2x2 above it (odd sides clamp at the edge).
std::vector<Texture> mip_chain(const Texture& t);

/// Triangle area helpers for tests and exporters.
double triangle_area(Vec3 a, Vec3 b, Vec3 c);
double surface_area(const Surface& surface);

}  // namespace bspkit::model
