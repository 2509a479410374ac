// Exporters of the engine-neutral model (bspkit/model.hpp) to glTF 2.0 and
// Wavefront OBJ. They read only model::Map, so every format exports the same
// way once its geometry builder exists.
//
//   const bspkit::model::Map map = bspkit::model::build(bsp);
//   bspkit::exporter::Options options;   // defaults: every model, textures, lightmaps, scale 1
//   bspkit::exporter::write(map, "out.glb", options);    // .glb, .gltf or .obj by extension
//
// What is exported
//   - One glTF node per model (the world and every brush model), placed where
//     its entity puts it (Model::origin); its mesh has one primitive per
//     (material, lit or not) with POSITION (with min/max), NORMAL (unit
//     length), TEXCOORD_0 (texture UVs, top-left origin as stored), TEXCOORD_1
//     (lit primitives only: the lightmap atlas UVs, or the baked texture's
//     with Lighting::baked), COLOR_0 (only when some
//     vertex colour is not opaque white) and UNSIGNED_INT indices. Triangles
//     are wound counter-clockwise about their vertex normals (glTF's front
//     face), whatever winding the builder used.
//   - One node per entity under "entities", named by its classname, with
//     `extras.keyvalues` = [[key, value], ...] in file order, duplicate keys
//     kept (raw bytes mapped to UTF-8 by bytes_to_utf8), `extras.index`, and a
//     translation from its "origin" key when that parses as three numbers.
//   - One placeholder node per static prop under "props" with
//     `extras.model` = the prop's model path, `extras.skin`, `extras.angles`,
//     translation = origin and rotation = the Source angles (pitch about Y,
//     yaw about Z, roll about X, in degrees, R = Rz(yaw) Ry(pitch) Rx(roll),
//     as in Source's AngleMatrix; positive pitch looks down).
//   - Materials: name = the map's material name; baseColorTexture when the map
//     embeds the texture (PNG, in the .glb's binary chunk, or files beside a
//     .gltf); metallic 0 / roughness 1; alphaMode MASK for kAlphaTest, BLEND
//     for kTranslucent; KHR_materials_unlit for kSky and kUnlit materials.
//   - Lighting (Options::lighting), from the pages of every light style added
//     up (model::combined_lightmap: all lights on at normal brightness):
//     * baked (the default): the map looks lit as in its game in any stock
//       viewer with no scene lights. Every material is unlit
//       (KHR_materials_unlit, which three.js and Blender import). Lit
//       primitives use one "baked" RGB(A) texture on TEXCOORD_1 as
//       baseColorTexture: each lit triangle rasterised into the atlas
//       layout at `bake_texels_per_luxel` texels per luxel, every texel the
//       material's texture (sampled at the interpolated TEXCOORD_0, from a box
//       filtered mip level matching the texel's footprint) times the light, as
//       the engine shows it (see "Engine light" below), with the texture's
//       alpha; untextured lit materials (textures the map does not embed) get
//       the light alone in the texture and a flat grey baseColorFactor (sRGB
//       0.5, about the mean of game textures: white would show the overbright
//       light itself, washed out). When no lit material has
//       a texture the baked image is the shaded atlas itself (1 texel per
//       luxel). Uncovered texels next to covered ones are filled from them
//       (two rings) so bilinear filtering does not bleed black. Then each
//       lit surface's texels (and those rings) are packed on shelves, and
//       TEXCOORD_1 follows, when that makes the texture smaller than the
//       atlas layout (maps of small faces: cs16_de_torabora 2.3x); lit
//       surfaces of a black texture (every texel 0, 0, 0, 255), black
//       whatever their light, are not baked then and share one black texel
//       (pd_change_dest's backdrop: 512 x 428 instead of 4096 x 2156). Lit
//       primitives carry no COLOR_0 in this mode (Quake 3 vertex colours are
//       the vertex-lit fallback, not a factor of the lightmap); unlit ones
//       (sky, water, fullbright, vertex-lit) keep their texture and colours.
//       extras.lightmap = {"texture": T, "texCoord": 1, "styles": "all",
//       "baked": true, "texels_per_luxel": K, "scale": S, "exposure": EV}.
//     * separate: the data for people who relight (as before the baked mode):
//       PBR materials, the combined atlas (times 2^exposure only, no engine
//       scale) as one RGB PNG used as `occlusionTexture` with texCoord 1 and
//       named in extras.lightmap = {"texture": T, "texCoord": 1, "styles":
//       "all", "scale": S}; S is the engine's light scale to multiply by.
//     * none: no lightmap, no TEXCOORD_1; PBR materials (sky and unlit ones
//       unlit). The separate pages per style are written by `bspkit lightmaps`.
//   - Engine light ("overbright"), applied to the lightmap before the baked
//     multiplication, per format (each a comment in src/export/lighting.cpp):
//     Quake 1 / BSP2 and Quake 2 x2 (a luxel of 128 is the texture as drawn,
//     the software renderers' colormap brightens up to 2x); GoldSrc and
//     Nightfire the engine's light gamma curve (lightgamma 2.5, brightness
//     1, gamma 2.5); Quake 3 x4 with the hue kept when a channel passes 255
//     (r_mapOverBrightBits 2 without hardware gamma); Source x1 (the model
//     already turned ColorRGBExp32 into display values). Then the exposure:
//     every light value times 2^exposure (EV steps of the displayed value),
//     clamped to 255.
//   - Options::sky false drops kSky surfaces (counted as skipped).
// What is skipped (Options says which are kept)
//   - surfaces whose material has kNodraw (nodraw, skip, hint, caulk, origin);
//   - surfaces whose material has kTrigger or kClip, unless tool_surfaces;
//   - surfaces without triangles (Quake 3 billboards / flares);
//   - brush models whose entity's classname matches a skip_classes glob
//     ("trigger_*", '*' and '?', ASCII case ignored); every model but the
//     world when !all_models.
//   Entities and props are always exported (as nodes) in glTF.
//
// Axes and units
//   BSP maps are Z-up in map units. glTF is Y-up by specification, so the
//   glTF output is always Y-up for viewers: by default the mesh data stays in
//   map coordinates (X, Y, Z as in the file, times `scale`) and the root node
//   "map" carries the rotation (-90 degrees about X) that stands it up; with
//   `y_up` the rotation (x, y, z) -> (x, z, -y) is applied to the data itself
//   and the root node has no transform. OBJ has no nodes: its coordinates are
//   (map coordinates plus the model's origin) times `scale`, Z-up by default,
//   (x, z, -y) with `y_up`. `scale` 0.0254 turns Quake units (inches) into metres.
//
// OBJ specifics
//   With Lighting::baked, lit groups use the baked texture as map_Kd (their vt
//   are TEXCOORD_1's) and unlit groups their own texture; otherwise no lightmap.
//   One `o` group per model with something drawn, one `usemtl` per material; every vertex written
//   as v / vt / vn (vt flipped to OBJ's bottom-left origin: v' = 1 - v);
//   faces as "f a/a/a b/b/b c/c/c". The .mtl beside it names each material
//   (newmtl, sanitised to safe_name() and made unique), with map_Kd (and
//   map_d for alpha-tested ones) pointing at PNG files written beside the
//   .obj. Entities, props and the separate lightmap are not written to OBJ (one UV set, no
//   nodes): use glTF for those.
//
// Files: every file is written to a temporary file in the output's directory
// and renamed (write_file_atomic). Files beside the output are named
// "<stem>.bin", "<stem>.mtl", "<stem>_<name>.png", "<stem>_lightmap.png", "<stem>_baked.png",
// with names sanitised by safe_name(); a missing output directory is created; nothing is written outside the
// output's directory.
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/model.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::exporter {

enum class FileFormat : uint8_t { glb, gltf, obj };

/// How the lightmaps are written (see "Lighting" above).
enum class Lighting : uint8_t { baked, separate, none };

/// The format an output path asks for by its extension (case-insensitive
/// .glb / .gltf / .obj), nullopt for any other.
std::optional<FileFormat> format_for_path(const std::filesystem::path& path);

/// An entity's "origin"-like value, "X Y Z" (spaces or tabs, an optional '+'
/// before each number), as three finite floats: the rule by which the
/// exporters place point entities (the viewer places its boxes by it too);
/// nullopt for anything else. Needs no locale and no floating-point
/// std::from_chars (Emscripten 3.1.6's libc++ has none).
std::optional<model::Vec3> parse_vec3(std::string_view text);

struct Options {
    bool all_models = true;                 ///< false: the world (model 0) only
    std::vector<std::string> skip_classes;  ///< globs on entity classnames whose brush models are skipped
    bool tool_surfaces = false;             ///< keep kTrigger / kClip surfaces
    Lighting lighting = Lighting::baked;    ///< baked: unlit, texture x light; separate: atlas on TEXCOORD_1; none
    double exposure = 0;                    ///< EV: light values times 2^exposure (finite, -16..16)
    uint32_t bake_texels_per_luxel = 0;     ///< baked texture density; 0: up to 4 while it fits bake_max_size
    uint32_t bake_max_size = 4096;          ///< largest side of the baked texture (the density is lowered to fit)
    bool sky = true;                        ///< false: drop kSky surfaces
    bool textures = true;                   ///< embed / write the map's textures
    float scale = 1;                        ///< multiplies every coordinate (> 0)
    bool y_up = false;                      ///< rotate the data itself from Z-up to Y-up
    /// zlib level of the PNGs written. 1 deflates runs only (zlib's Z_RLE, see
    /// encode_png): on lightmaps and baked textures faster than any level and
    /// smaller than levels 1-3; 2-9 search for repeated strings as zlib does.
    int png_compression = 1;
    /// glTF: threads that fill the vertex and index bytes; 0: every core on
    /// models of 65,536 vertices and more, one thread below. The bytes written
    /// are the same whatever the count.
    unsigned threads = 0;
    /// Called while writing with a stage ("geometry", "images", "writing")
    /// and 0..1, or -1 when the stage has no measure (may be empty).
    std::function<void(std::string_view stage, double fraction)> progress;
};

/// What an export wrote.
struct Summary {
    std::vector<std::filesystem::path> files;  ///< every file written, the main output last
    size_t models = 0;                         ///< models with a node / an OBJ group
    size_t primitives = 0;                     ///< glTF primitives / OBJ usemtl groups
    size_t vertices = 0;
    size_t triangles = 0;
    size_t materials = 0;
    size_t images = 0;                         ///< PNG images (textures + lightmap)
    size_t skipped_surfaces = 0;               ///< by the material rules above
    size_t skipped_models = 0;                 ///< by skip_classes / all_models
};

/// Where one glTF primitive's triangles came from: for each model::Surface
/// written into it, in index order, the BSP face (model::Surface::face: the
/// record in the format's face / surface lump; kNoFace when none) and the
/// contiguous range [first, first + count) of the primitive's index accessor
/// holding its triangles (count = 3 x its triangles). The ranges of a
/// primitive cover every index of its accessor exactly once. For viewers that
/// cull or pick by face (the WebAssembly viewer's PVS culling); not written
/// into the file.
struct PrimitiveRanges {
    static constexpr uint32_t kNoFace = 0xFFFFFFFFu;
    uint32_t mesh = 0;       ///< glTF mesh index
    uint32_t primitive = 0;  ///< primitive index in that mesh
    std::vector<uint32_t> face, first, count;  ///< one entry per surface
};

/// A glTF asset in memory: the JSON text, the binary buffer and, for the
/// .gltf form, the external files it names (relative URI -> bytes).
struct GltfAsset {
    std::string json;
    Bytes bin;
    std::vector<std::pair<std::string, Bytes>> files;  ///< .gltf only: "<stem>.bin", images
    Summary summary;
    std::vector<PrimitiveRanges> ranges;  ///< one per glTF primitive, in mesh then primitive order
};

/// Builds the glTF asset of `map`. `binary`: images go into `bin` (for a
/// .glb); otherwise `stem` names the external files (`stem`.bin, images).
/// Throws Error when the model is inconsistent (an index out of range).
GltfAsset build_gltf(const model::Map& map, const Options& options, bool binary, std::string_view stem = "map");

/// The .glb container of an asset built with binary = true.
Bytes encode_glb(const GltfAsset& asset);

/// Writes `map` as .glb or .gltf (by the extension of `path`).
Summary write_gltf(const model::Map& map, const std::filesystem::path& path, const Options& options = {});

/// Writes `map` as `path` (.obj) + "<stem>.mtl" + textures as PNG.
Summary write_obj(const model::Map& map, const std::filesystem::path& path, const Options& options = {});

/// Writes by the extension of `path`; throws std::invalid_argument for an
/// extension other than .glb, .gltf or .obj.
Summary write(const model::Map& map, const std::filesystem::path& path, const Options& options = {});

/// Sanitises a name for a file or an OBJ material: [A-Za-z0-9_+-] kept, '*'
/// becomes '#' (the Quake engines' convention for external texture files:
/// "*water0" -> "#water0", "+0slip" stays), any other byte becomes '_', at
/// most 64 characters, "unnamed" when empty. URIs in .gltf percent-encode '#'.
std::string safe_name(std::string_view name);

/// The rotation of a Source QAngle (pitch, yaw, roll in degrees) as a unit
/// quaternion (x, y, z, w) in Z-up map axes.
std::array<double, 4> angles_to_quaternion(const model::Vec3& angles);

}  // namespace bspkit::exporter
