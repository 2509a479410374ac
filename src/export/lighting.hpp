// How the exporters light a map (internal): the engine's light scale
// ("overbright") and the exposure applied to the combined lightmap, and the
// baked texture (texture x light rasterised into the lightmap atlas layout).
// See "Lighting" and "Engine light" in bspkit/export.hpp.
#pragma once

#include "selection.hpp"

#include <bspkit/engine_light.hpp>
#include <bspkit/model.hpp>

#include <cstdint>

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

struct Baked {
    model::Texture image;               ///< RGBA, in the atlas layout at `texels_per_luxel`
    uint32_t texels_per_luxel = 1;
};

/// The baked texture of every lit group of `selection` (see export.hpp),
/// from the shaded atlas `light`.
Baked bake(const model::Map& map, const Selection& selection, const model::LightmapAtlas& light,
           const Options& options);

}  // namespace bspkit::exporter::detail
