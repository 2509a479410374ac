// Pictures of a map without a game: a CPU rasterizer over the neutral model
// (perspective-correct, depth-buffered, bilinear texture and lightmap
// sampling, alpha test, translucent surfaces blended back to front), with the
// map's PVS deciding which world faces are drawn.
//
//   const bspkit::Bsp bsp = bspkit::Bsp::open("map.bsp");
//   bspkit::model::Map map = bspkit::model::build(bsp);
//   const bspkit::render::Scene scene = bspkit::render::Scene::prepare(map, bsp);
//   bspkit::render::Camera cam = bspkit::render::spawn_camera(scene).value();
//   bspkit::render::Frame f = bspkit::render::render(scene, cam, {});
//   bspkit::write_png("out.png", f.width, f.height, 4, f.rgba);
//
// What is drawn: every surface of every model whose material is not nodraw /
// trigger / clip, brush models at their entity's origin, the texture (embedded
// or resolved on the search path before prepare(); else a flat colour: Source
// texdata reflectivity, or a stable colour per material name) times the
// combined lightmap of all light styles as the engine shows it
// (bspkit/engine_light.hpp), sky surfaces as the map's sky (Quake 1 / BSP2:
// its own two layers, model::SkyLayers; the others: the sky box and Quake 3's
// cloud layers, when textures::resolve() found them, model::SkyBox and
// model::SkyClouds) else one colour, Source static props
// as boxes (32 x 32 x 64 units around the placement: the prop's own bounds are
// in its .mdl, not in the map). Opaque surfaces are culled when they face
// away, as the engines do; translucent and alpha-tested ones are two-sided.
//
// PVS: the camera's leaf gives its cluster; world faces that the clusters of
// its PVS row list (bspkit::ClusterFaces) are drawn, the others culled. Faces
// no cluster lists (brush models, Source displacements) are always drawn; a
// camera outside the world (no cluster) draws everything.
//
// Work is split into bands of rows shared by `threads` std::threads; every
// pixel is written by one band in a fixed triangle order, so the image does
// not depend on the number of threads.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/model.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::render {

using model::Vec3;

struct Camera {
    bool orthographic = false;
    Vec3 position;
    /// Degrees, the Quake convention: yaw about +Z from +X, positive pitch
    /// looks down, roll about the view direction.
    float pitch = 0, yaw = 0, roll = 0;
    float fov = 90;                 ///< horizontal field of view in degrees (perspective)
    float ortho_width = 0;          ///< world units across the image (orthographic; height from the aspect)
    float near_plane = 1;           ///< perspective: nearer geometry is clipped

    /// The unit vectors of the view (Quake's AngleVectors).
    void basis(Vec3& forward, Vec3& right, Vec3& up) const;
};

struct Options {
    uint32_t width = 1920, height = 1080;
    bool pvs = true;               ///< cull world faces outside the camera cluster's PVS
    unsigned threads = 0;          ///< 0 = hardware concurrency
    bool textures = true;          ///< false: the flat colour of each material
    bool lightmaps = true;         ///< false: textures fullbright
    bool lightmap_only = false;    ///< the light alone (white textures), e.g. to check lightmap UVs
    bool engine_light = true;      ///< the engine's overbright rule; false: raw luxels
    double exposure = 0;           ///< light x 2^exposure
    bool props = true;             ///< Source static props as boxes
    bool brush_models = true;      ///< brush entities (doors, platforms) at their origins
    bool translucent = true;       ///< translucent surfaces (false: only what the depth buffer holds shows)
    bool bilinear = true;          ///< false: nearest texel / luxel
    std::array<uint8_t, 4> background{0, 0, 0, 255};
    std::array<uint8_t, 3> sky{110, 150, 205};  ///< sky surfaces without the map's sky (or with sky_images off)
    /// Sky surfaces show the map's sky along each pixel's view direction, as
    /// the engine draws it (Quake 1 layers at time 0, a sky box), with
    /// textures on; an orthographic view looks one way: one colour.
    bool sky_images = true;
    /// Overview: surfaces lying entirely above this height are not drawn, nor sky.
    std::optional<float> clip_above;
    bool hide_sky = false;
    /// Overview: colours darkened with height below `top` (to 45% at `bottom`).
    std::optional<std::pair<float, float>> shade_heights;  ///< {bottom, top}
};

struct Stats {
    int64_t camera_leaf = -1;
    int64_t camera_cluster = -1;   ///< -1: outside the world, or no PVS used
    size_t clusters = 0;           ///< clusters of the map
    size_t clusters_visible = 0;   ///< in the camera cluster's PVS (all when not culling)
    size_t faces_drawn = 0;        ///< world surfaces sent to the rasterizer
    size_t faces_culled = 0;       ///< world surfaces left out by the PVS
    size_t surfaces_other = 0;     ///< brush-model surfaces and prop boxes drawn
    size_t triangles = 0;          ///< triangles set up (after near clipping and back-face culling)
    size_t pixels_covered = 0;     ///< pixels with geometry (sky included)
};

struct Frame {
    uint32_t width = 0, height = 0;
    std::vector<uint8_t> rgba;     ///< rows top to bottom
    /// Distance from the camera along each pixel's ray to the nearest opaque
    /// surface (perspective: Euclidean from the eye; orthographic: from the
    /// image plane); +infinity where nothing was drawn.
    std::vector<float> depth;
    /// model::Surface::face of the nearest opaque surface of the world, -1
    /// where none (nothing, a brush model or a prop).
    std::vector<int32_t> face;
    Stats stats;
    /// The renderer's working memory (nearest depth key and triangle per
    /// pixel), kept so that render_into() on the same Frame allocates nothing.
    std::vector<float> scratch_key;
    std::vector<uint32_t> scratch_id;
};

/// What the renderer keeps of a map between frames: the triangles, shaded
/// lightmap, texture mip chains, the BSP tree for the camera's leaf, the PVS
/// and the face table of each cluster. The Bsp must outlive the Scene; the
/// model::Map is copied from (not referenced).
class Scene {
public:
    static Scene prepare(const model::Map& map, const Bsp& bsp, const Options& light = {});
    Scene(Scene&&) noexcept;
    Scene& operator=(Scene&&) noexcept;
    ~Scene();

    Format format() const noexcept;
    /// Bounds of the world model's drawn surfaces.
    std::pair<Vec3, Vec3> bounds() const noexcept;
    const std::vector<Entity>& entities() const noexcept;
    size_t triangle_count() const noexcept;
    /// Why the Scene works without its tree or PVS (an Error's message), if it does.
    const std::vector<std::string>& warnings() const noexcept;
    /// What sky surfaces show with Options::sky_images: "layers" (Quake 1's
    /// own), "box" (model::Map::sky_box), "clouds" (Quake 3's
    /// model::Map::sky_clouds over black), "box+clouds", or "colour" (Options::sky).
    std::string_view sky() const noexcept;

    struct Impl;
    const Impl& impl() const noexcept { return *impl_; }

private:
    explicit Scene(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

/// Renders one frame.
Frame render(const Scene& scene, const Camera& camera, const Options& options = {});
/// Renders into `frame`, reusing its buffers (every pixel of every buffer is
/// written): frames of a sequence or a batch of thumbnails without the cost
/// of fresh memory (page faults and zeroing were a third of a 1080p frame).
void render_into(const Scene& scene, const Camera& camera, const Options& options, Frame& frame);

/// The eye height above an entity's origin for the family (Quake 22, Quake 3
/// 26, GoldSrc 28, Source 64: where the player's view is).
float eye_height(Format format);

/// The first player start of the map's kind (info_player_start, then the
/// family's deathmatch / team starts), looking along its "angle" / "angles",
/// at eye height. nullopt when the map has none.
std::optional<Camera> spawn_camera(const Scene& scene);
/// The camera of an entity: `which` is an entity index, a targetname or a
/// classname (its first entity). nullopt when none matches or it has no origin.
std::optional<Camera> entity_camera(const Scene& scene, std::string_view which);

/// Overview: orthographic, from above, over the world's bounds fitted to the
/// image's aspect; fills `options` with the overview rules: sky hidden,
/// surfaces entirely above the playable space (the highest player start + 2
/// player heights; the world's top when there are no starts) dropped,
/// textures fullbright (no lightmaps) and shaded by height. Ceilings face down, so from above they are back faces
/// and culled as in the engine.
Camera overview_camera(const Scene& scene, Options& options);

/// A 3/4 view of the world's bounds from outside (35 degrees above, from
/// -X -Y), just far enough for every corner to fit a square 90 degree view.
Camera orbit_camera(const Scene& scene);

/// Thumbnail: from the spawn (without one: the first entity in open space
/// with a cluster; without that, orbit_camera()), the yaw of the 8 directions
/// (45 degrees apart, from the start's own) whose line trace runs longest
/// before hitting the world, pitched 10 degrees down, 90 degree field of view.
Camera thumbnail_camera(const Scene& scene);

}  // namespace bspkit::render
