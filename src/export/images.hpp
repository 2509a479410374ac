// PNG images the exporters write (internal): the embedded textures their
// materials use and the lightmap atlas, encoded on a second thread while the
// geometry is written.
#pragma once

#include <bspkit/export.hpp>

#include "core/parallel.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::exporter::detail {

inline constexpr int32_t kLightmapImage = -1, kBakedImage = -2;

struct Image {
    std::string name;         ///< safe, unique: "<texture name>", "lightmap" or "baked"
    int32_t texture = -1;     ///< Map::textures index, kLightmapImage or kBakedImage
    Bytes png;                ///< empty once written to a file
    std::filesystem::path file;  ///< where it was written, when it was
};

/// Where encode_images_async writes each image as soon as it is encoded
/// (write_file_atomic to `dir` / (`prefix` + name + ".png")), so file
/// syncing overlaps the geometry work.
struct ImageFiles {
    std::filesystem::path dir;
    std::string prefix;
};

/// RGBA textures whose alpha is all 255 are stored as RGB.
Bytes texture_png(const model::Texture& texture, int compression);

/// Encodes `textures` (indices into map.textures), then the atlas when
/// `lightmap` is set, then the texture `baked` returns when it is set (it
/// runs on the image thread too), on another thread.
bspkit::detail::Background<std::vector<Image>> encode_images_async(const model::Map& map, std::vector<int32_t> textures,
                                                                   const model::LightmapAtlas* lightmap,
                                                                   std::function<model::Texture()> baked, int compression,
                                                                   std::optional<ImageFiles> files = std::nullopt);

}  // namespace bspkit::exporter::detail
