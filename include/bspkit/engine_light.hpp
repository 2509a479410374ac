// How each family's engine shows a lightmap luxel ("overbright"): the one
// rule the exporters (baked glTF) and the renderer share.
//
//   bspkit::model::LightmapAtlas light = bspkit::model::combined_lightmap(map);
//   bspkit::model::shade_lightmap(map.format, true, 0.0, light);   // as the engine shows it
#pragma once

#include <bspkit/model.hpp>

#include <array>
#include <cstdint>

namespace bspkit::model {

/// One luxel (RGB8) as the family's engine shows it (0-255 scale, may pass
/// 255 before clamping): Quake 1 / BSP2 / Quake 2 x2, Quake 3 x4 with the hue
/// kept, GoldSrc / Nightfire through the GL engine's light gamma table,
/// Source unchanged (the model already holds what it shows).
std::array<double, 3> engine_light(Format format, const uint8_t* rgb);

/// The factor the engine multiplies a mid-grey luxel by (2 for Quake 1 / 2,
/// 4 for Quake 3, 1 for Source; GoldSrc / Nightfire: the curve at 128).
double engine_light_scale(Format format);

/// Rewrites `atlas` as the engine shows its light (when `engine`) times
/// 2^exposure, clamped to 255.
void shade_lightmap(Format format, bool engine, double exposure, LightmapAtlas& atlas);

}  // namespace bspkit::model
