// Packs every surface's lightmap into one atlas page per light-style slot
// (shelf packing, tallest first, one luxel of border copied from the edge so
// bilinear filtering does not bleed) and moves lightmap UVs into the atlas.
#include <bspkit/model.hpp>

#include <algorithm>
#include <numeric>

namespace bspkit::model {
namespace {

struct Rect {
    uint32_t x = 0, y = 0;
};

constexpr uint32_t kBorder = 1;

// Places images of the given sizes on shelves of `width`; returns the height used.
uint32_t shelf_pack(const std::vector<LightmapImage>& images, const std::vector<size_t>& order, uint32_t width,
                    std::vector<Rect>& out) {
    uint32_t x = 0, y = 0, shelf = 0;
    for (size_t i : order) {
        const uint32_t w = images[i].width + 2 * kBorder, h = images[i].height + 2 * kBorder;
        if (x + w > width) {
            x = 0;
            y += shelf;
            shelf = 0;
        }
        out[i] = {x + kBorder, y + kBorder};
        x += w;
        shelf = std::max(shelf, h);
    }
    return y + shelf;
}

void blit(const LightmapImage& image, size_t slot, Rect at, LightmapAtlas& atlas) {
    const auto& src = image.styles[slot];
    const int64_t w = image.width, h = image.height;
    for (int64_t y = -int64_t(kBorder); y < h + int64_t(kBorder); ++y) {
        for (int64_t x = -int64_t(kBorder); x < w + int64_t(kBorder); ++x) {
            const int64_t sx = std::clamp<int64_t>(x, 0, w - 1), sy = std::clamp<int64_t>(y, 0, h - 1);
            uint8_t* dst = atlas.rgb.data() + ((int64_t(at.y) + y) * atlas.width + (int64_t(at.x) + x)) * 3;
            std::copy_n(src.data() + (sy * w + sx) * 3, 3, dst);
        }
    }
}

}  // namespace

void pack_lightmaps(Map& map) {
    auto& images = map.lightmap_images;
    if (images.empty()) return;
    size_t slots = 0;
    uint64_t area = 0;
    uint32_t widest = 1;
    for (const auto& img : images) {
        slots = std::max(slots, img.styles.size());
        area += uint64_t(img.width + 2 * kBorder) * (img.height + 2 * kBorder);
        widest = std::max(widest, img.width + 2 * kBorder);
    }
    std::vector<size_t> order(images.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return images[a].height > images[b].height; });
    // Smallest power-of-two width whose packing is no taller than it is wide.
    uint32_t width = 64;
    while (uint64_t(width) * width < area || width < widest) width *= 2;
    std::vector<Rect> placed(images.size());
    uint32_t height = shelf_pack(images, order, width, placed);
    while (height > width) {
        width *= 2;
        height = shelf_pack(images, order, width, placed);
    }
    height = std::max<uint32_t>(height, 1);

    map.lightmaps.clear();
    for (size_t slot = 0; slot < slots; ++slot) {
        LightmapAtlas atlas;
        atlas.slot = uint32_t(slot);
        atlas.width = width;
        atlas.height = height;
        atlas.rgb.assign(size_t(width) * height * 3, 0);
        for (size_t i = 0; i < images.size(); ++i)
            if (slot < images[i].styles.size() && images[i].width && images[i].height) blit(images[i], slot, placed[i], atlas);
        map.lightmaps.push_back(std::move(atlas));
    }
    for (Model& m : map.models) {
        for (Surface& s : m.surfaces) {
            if (s.lightmap < 0 || size_t(s.lightmap) >= images.size()) continue;
            const LightmapImage& img = images[size_t(s.lightmap)];
            const Rect r = placed[size_t(s.lightmap)];
            for (Vertex& v : s.vertices) {
                v.lightmap_uv.x = (float(r.x) + v.lightmap_uv.x * float(img.width)) / float(width);
                v.lightmap_uv.y = (float(r.y) + v.lightmap_uv.y * float(img.height)) / float(height);
            }
        }
    }
    images.clear();
}

}  // namespace bspkit::model
