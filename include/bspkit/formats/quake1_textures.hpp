// Embedded textures of Quake 1 / BSP2 / 2PSB / GoldSrc maps, decoded to RGBA.
//
//   const bspkit::quake1::Map map(bsp);
//   auto decoded = bspkit::quake1::decode_textures(map);                 // Quake palette
//   auto custom  = bspkit::quake1::decode_textures(map, bspkit::quake1::load_palette("palette.lmp"));
//
// Quake (BSP 29, BSP2) textures index the game's palette (gfx/palette.lmp);
// GoldSrc textures carry their own 256-colour palette after the last mip
// level (uint16 count, then count RGB triplets). Textures whose name starts
// with '{' are cut-outs: index 255 is transparent (RGBA 0, 0, 0, 0). Textures
// kept in external WADs (offsets[0] == 0) have no pixels here: they are
// referenced by name only (Material::texture stays -1).
#pragma once

#include <bspkit/formats/quake1.hpp>
#include <bspkit/model.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace bspkit::quake1 {

inline constexpr size_t kPaletteBytes = 768;
using Palette = std::array<uint8_t, kPaletteBytes>;  ///< 256 x RGB

/// The standard Quake palette (id1 gfx/palette.lmp).
const Palette& quake_palette();

/// A palette.lmp's bytes (exactly 768); throws Error naming `name` otherwise.
Palette parse_palette(ByteSpan bytes, const std::string& name);
/// Reads a palette.lmp; throws Error when it cannot be read or is not 768 bytes.
Palette load_palette(const std::filesystem::path& path);

/// Largest texture side decoded (engines stop far below; a hostile header
/// could otherwise ask for gigabytes).
inline constexpr uint32_t kMaxTextureSide = 4096;

struct DecodedTextures {
    std::vector<model::Texture> textures;  ///< embedded textures that decoded, in directory order
    std::vector<int32_t> by_miptex;        ///< miptex index -> index into textures, -1 when none
    std::vector<Diagnostic> diagnostics;   ///< textures that could not be decoded, and why
    /// Quake 1 / BSP2: the layers of the last embedded texture named "sky*"
    /// (GLQuake loads each in turn: the last one is the sky), when its width
    /// is even; GoldSrc draws a sky box instead.
    std::optional<model::SkyLayers> sky;
};

/// Decodes mip level 0 of every embedded texture. Never reads outside the
/// textures lump; a texture whose pixels or palette run past it is skipped
/// with a diagnostic. `palette` is used for Quake / BSP2 maps only.
DecodedTextures decode_textures(const Map& map, const Palette& palette = quake_palette());

}  // namespace bspkit::quake1
