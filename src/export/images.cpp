#include "images.hpp"

#include "selection.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/png.hpp>

namespace bspkit::exporter::detail {

Bytes texture_png(const model::Texture& t, int compression) {
    bool opaque = true;
    for (size_t i = 3; i < t.rgba.size(); i += 4)
        if (t.rgba[i] != 255) {
            opaque = false;
            break;
        }
    if (!opaque) return encode_png(t.width, t.height, 4, t.rgba, compression);
    return encode_opaque_rgba_png(t.width, t.height, t.rgba, compression);
}

bspkit::detail::Background<std::vector<Image>> encode_images_async(const model::Map& map, std::vector<int32_t> textures,
                                                                   const model::LightmapAtlas* lightmap,
                                                                   std::function<model::Texture()> baked, int compression,
                                                                   std::optional<ImageFiles> files) {
    return bspkit::detail::Background<std::vector<Image>>([&map, textures = std::move(textures), lightmap,
                                                           baked = std::move(baked), compression,
                                                           files = std::move(files)] {
        std::vector<Image> images;
        UniqueNames names;
        names("lightmap");  // reserved for the atlas
        names("baked");     // and the baked texture
        const auto done = [&](Image image) {
            if (files) {
                image.file = files->dir / (files->prefix + image.name + ".png");
                write_file_atomic(image.file, image.png);
                image.png = Bytes();
            }
            images.push_back(std::move(image));
        };
        for (const int32_t t : textures) {
            const model::Texture& tex = map.textures[size_t(t)];
            done(Image{names(tex.name), t, texture_png(tex, compression), {}});
        }
        if (lightmap)
            done(Image{"lightmap", kLightmapImage,
                       encode_png(lightmap->width, lightmap->height, 3, lightmap->rgb, compression), {}});
        if (baked) done(Image{"baked", kBakedImage, texture_png(baked(), compression), {}});
        return images;
    });
}

}  // namespace bspkit::exporter::detail
