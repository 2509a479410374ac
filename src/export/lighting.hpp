// How the exporters light a map (internal): the engine's light scale
// ("overbright") and the exposure applied to the combined lightmap, and the
// baked texture (texture x light rasterised into the lightmap atlas layout).
// See "Lighting" and "Engine light" in bspkit/export.hpp.
#pragma once

#include "selection.hpp"

#include <bspkit/engine_light.hpp>
#include <bspkit/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace bspkit::exporter::detail {

/// The flat colour (sRGB, 0-1) of lit materials whose texture is not in the
/// map: about the mean of typical game textures, so that light x colour shows
/// as in game (white would show the overbright light itself, washed out).
inline constexpr double kUntexturedAlbedo = 0.5;

/// An sRGB value (0-1) in linear light, as glTF's baseColorFactor wants it.
double srgb_to_linear(double v);

/// The engine light rules live in the model layer (bspkit/engine_light.hpp).
using model::engine_light_scale;
using model::shade_lightmap;

/// One axis of a bilinear sample at continuous texel coordinate v (texel
/// centres at +0.5): the two texels and the weight of the second.
struct Tap {
    uint32_t i0, i1;
    double a;
};

/// One baked texel into o[0..3]: the texture's colour at taps tx, ty (white
/// without a texture) times the lightmap's at lx, ly (3 channels, light_w
/// wide), over 255, each channel rounded to a byte; alpha the texture's.
/// Two channels per SSE2 instruction where the build has SSE2.
void shade_texel(const uint8_t* light, uint32_t light_w, const Tap& lx, const Tap& ly, const model::Texture* level,
                 const Tap& tx, const Tap& ty, uint8_t* o);
/// shade_texel() a channel at a time (builds without SSE2): the same bytes.
void shade_texel_scalar(const uint8_t* light, uint32_t light_w, const Tap& lx, const Tap& ly,
                        const model::Texture* level, const Tap& tx, const Tap& ty, uint8_t* o);

/// bake()'s texel test: a texel is covered by a triangle (corners px, py in
/// texels, det its doubled signed area) when the barycentric coordinates of
/// its centre are all at least kBakeEdge (a hair below 0: shared edges leave
/// no gaps).
inline constexpr double kBakeEdge = -1e-7;

struct Barycentric {
    double b0, b1, b2;
    bool inside() const noexcept { return !(b0 < kBakeEdge || b1 < kBakeEdge || b2 < kBakeEdge); }
};

/// `inv_det` is 1 / det, worked out once per triangle: two divisions a texel
/// were a good part of the bake (a product by the reciprocal is within an ulp
/// of the quotient, far inside kBakeEdge).
inline Barycentric barycentric(const double (&px)[3], const double (&py)[3], double inv_det, double cx, double cy) {
    const double b1 = ((cx - px[0]) * (py[2] - py[0]) - (px[2] - px[0]) * (cy - py[0])) * inv_det;
    const double b2 = ((px[1] - px[0]) * (cy - py[0]) - (cx - px[0]) * (py[1] - py[0])) * inv_det;
    return {1 - b1 - b2, b1, b2};
}

/// The texels of a w x h image a triangle's bounding box (corners px, py in
/// texels) holds, x0..x1 and y0..y1; false when it holds none (a box outside
/// the image, or a corner not a number). Bounds are clamped as doubles, so
/// corners far outside the image give no out-of-range integer conversion.
inline bool texel_box(const double (&px)[3], const double (&py)[3], uint32_t w, uint32_t h, int& x0, int& x1, int& y0,
                      int& y1) {
    const double lo_x = std::max(0.0, std::floor(std::min({px[0], px[1], px[2]})));
    const double hi_x = std::min(double(w) - 1, std::ceil(std::max({px[0], px[1], px[2]})));
    const double lo_y = std::max(0.0, std::floor(std::min({py[0], py[1], py[2]})));
    const double hi_y = std::min(double(h) - 1, std::ceil(std::max({py[0], py[1], py[2]})));
    if (!(lo_x <= hi_x && lo_y <= hi_y)) return false;
    x0 = int(lo_x);
    x1 = int(hi_x);
    y0 = int(lo_y);
    y1 = int(hi_y);
    return true;
}

/// The columns of each row of a triangle's bounding box (x0..x1, y0..y1)
/// whose texels could pass barycentric().inside(), so that bake() visits
/// few of those that fail.
///
/// Each coordinate is, up to rounding, an affine function of the column's
/// centre: with t = cx - px0 and ey = cy - py0,
///   b1 = (A1 t - B1 ey) / det, b2 = (B2 ey - A2 t) / det,
///   b0 = 1 - b1 - b2 = (det - (A1 - A2) t + (B1 - B2) ey) / det,
/// A1 = py2 - py0, B1 = px2 - px0, A2 = py1 - py0, B2 = px1 - px0; b >= kBakeEdge
/// is a half-line alpha t >= gamma (both times det's sign). The rounding of
/// the test and of these bounds moves a bound by about u S / |alpha|
/// (u = 2^-53, S the size of the terms over the box), so a bound is used
/// only where |alpha| >= 1e-6 S (then by well under a millionth of a texel)
/// and widened by a texel: every texel that passes is kept. A flatter one
/// (an edge along the rows) empties the row only when no column of the box
/// comes within 1e-9 S of it. A bound that is not a number (wild
/// coordinates) is not used.
class RowSpans {
public:
    RowSpans(const double (&px)[3], const double (&py)[3], double det, int x0, int x1, int y0, int y1);
    /// Narrows [xa, xb] (columns) to those of the row whose texel centres
    /// are at cy that could pass; xa > xb when none can.
    void narrow(double cy, int& xa, int& xb) const;

private:
    double px0_, py0_, det_abs_, sign_;
    double a1_ = 0, b1_ = 0, a2_ = 0, b2_ = 0;
    double size_ = 0;       ///< S: the terms' size over the box
    double t_max_ = 0;      ///< the largest |t| of the box's columns
    double min_slope_ = 0;  ///< 1e-6 S
};

/// Where bake() puts each lit surface's texels. The atlas layout scaled by
/// `texels_per_luxel` leaves most of its area empty on maps of small faces:
/// every lightmap's border luxels, the half luxel past each edge of a face,
/// the lightmaps of surfaces not exported (83% of cs16_de_torabora's
/// 4096 x 1848). So each lit surface's box there (the texels its triangles
/// cover and the two rings dilate() fills) is packed on shelves instead, as
/// a whole-texel shift: every texel keeps the value it had in the scaled
/// atlas. The scaled atlas itself is kept (no shifts) when packing would not
/// make it smaller, and when the baked image is the shaded atlas (no texture).
///
/// A surface whose texture is black (every texel (0, 0, 0, 255)) bakes to
/// that same black whatever its light: in a packed layout it gets no box of
/// its own, its TEXCOORD_1 all point at one black texel (`black_uv`), and
/// bake() leaves its triangles out (pd_change_dest: 5.9 of 8.8 M texels
/// were a black backdrop's).
struct BakeLayout {
    uint32_t width = 0, height = 0;              ///< the baked texture
    uint32_t texels_per_luxel = 1;
    uint32_t atlas_width = 0, atlas_height = 0;  ///< the atlas, times texels_per_luxel
    bool light_only = false;  ///< no lit material has a texture: the baked image is the shaded atlas
    /// Texels from a surface's place in the scaled atlas to its place in the
    /// baked texture, [selected model][surface]; empty when not packed.
    struct Shift {
        int32_t x = 0, y = 0;
        bool black = false;  ///< a black surface: not baked, every TEXCOORD_1 at black_uv
    };
    std::vector<std::vector<Shift>> shifts;
    /// The centre of the black texel black surfaces' TEXCOORD_1 point at (in
    /// the middle of an unbaked box as wide as the rings dilate() fills).
    model::Vec2 black_uv{0, 0};

    bool packed() const noexcept { return !shifts.empty(); }
    Shift shift(size_t model, uint32_t surface) const noexcept {
        return packed() && model < shifts.size() && surface < shifts[model].size() ? shifts[model][surface] : Shift{};
    }
    /// A lit vertex's TEXCOORD_1 in the baked texture, from its lightmap_uv
    /// (the atlas's); lightmap_uv itself when not packed.
    model::Vec2 uv(size_t model, uint32_t surface, model::Vec2 lightmap_uv) const noexcept;
};

/// The layout of the baked texture of every lit group of `selection` (see
/// export.hpp), whose lightmap is `light`; cheap (no texel is visited), so
/// the writers know the UVs before the texture is baked.
BakeLayout plan_bake(const model::Map& map, const Selection& selection, const model::LightmapAtlas& light,
                     const Options& options);

struct Baked {
    model::Texture image;               ///< RGBA, `layout`'s width x height
    uint32_t texels_per_luxel = 1;
};

/// The baked texture of every lit group of `selection`, from the shaded atlas
/// `light`, laid out as `layout` (plan_bake() of the same arguments).
Baked bake(const model::Map& map, const Selection& selection, const model::LightmapAtlas& light,
           const Options& options, const BakeLayout& layout);

}  // namespace bspkit::exporter::detail
