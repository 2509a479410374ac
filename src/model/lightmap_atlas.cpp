// Packs every surface's lightmap into one atlas page per light style (shelf
// packing, tallest first, one luxel of border copied from the edge so
// bilinear filtering does not bleed) and moves lightmap UVs into the atlas.
// Every page has the same layout; a surface's slot k goes to the page of the
// style its styles[k] names.
#include <bspkit/model.hpp>

#include "../core/large_buffer.hpp"
#include "../core/shelf_pack.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <string>

namespace bspkit::model {
namespace {

struct Rect {
    uint32_t x = 0, y = 0;
};

constexpr uint32_t kBorder = 1;
/// The tallest page a skyline packing may make (GPUs take textures up to
/// 16384 a side).
constexpr uint32_t kMaxTallSide = 16384;
/// Skyline segments the packings of one atlas may look at (about 0.1 s).
constexpr uint64_t kSkylineBudget = uint64_t(1) << 27;

/// Places images of the given sizes bottom-left on a skyline of `width`
/// (each at the lowest place its width fits, leftmost of equals); returns the
/// height used. Unlike shelves, small images stack beside a tall one instead
/// of leaving its shelf's height empty above them. 0 when an image is wider
/// than `width`, when the packing grows past kMaxTallSide, or when the
/// segments looked at use up `budget`, shared by every width tried (a hostile
/// map's hundreds of thousands of lightmaps on a skyline of thousands of
/// segments would take minutes).
uint32_t skyline_pack(const std::vector<LightmapImage>& images, const std::vector<size_t>& order, uint32_t width,
                      std::vector<Rect>& out, uint64_t& budget) {
    struct Segment {
        uint32_t x, y, w;  ///< [x, x + w) of the skyline is at height y
    };
    std::vector<Segment> sky{{0, 0, width}};
    uint32_t top = 0;
    for (size_t i : order) {
        const uint32_t w = images[i].width + 2 * kBorder, h = images[i].height + 2 * kBorder;
        if (w > width) return 0;
        size_t best = sky.size();
        uint32_t best_y = UINT32_MAX;
        for (size_t a = 0; a < sky.size() && sky[a].x + w <= width; ++a) {
            uint32_t y = 0;
            for (size_t b = a; b < sky.size() && sky[b].x < sky[a].x + w; ++b) {
                y = std::max(y, sky[b].y);
                if (budget-- == 0) return 0;
            }
            if (y < best_y) {
                best_y = y;
                best = a;
            }
        }
        if (best_y + uint64_t(h) > kMaxTallSide) return 0;  // taller than a page may be (and no overflow)
        const uint32_t x = sky[best].x, end = x + w;
        out[i] = {x + kBorder, best_y + kBorder};
        top = std::max(top, best_y + h);
        // The new segment replaces what [x, end) covered; a segment reaching past end keeps its rest.
        size_t b = best;
        while (b < sky.size() && sky[b].x + sky[b].w <= end) ++b;
        if (b < sky.size() && sky[b].x < end) {
            sky[b].w -= end - sky[b].x;
            sky[b].x = end;
        }
        sky.erase(sky.begin() + std::ptrdiff_t(best), sky.begin() + std::ptrdiff_t(b));
        sky.insert(sky.begin() + std::ptrdiff_t(best), Segment{x, best_y + h, w});
        // Neighbours at the same height become one segment.
        for (size_t k = best > 0 ? best - 1 : 0; k + 1 < sky.size() && k <= best + 1;) {
            if (sky[k].y == sky[k + 1].y) {
                sky[k].w += sky[k + 1].w;
                sky.erase(sky.begin() + std::ptrdiff_t(k) + 1);
            } else {
                ++k;
            }
        }
    }
    return top;
}

/// Copies slot `slot` of `image` (at least 1 x 1) to `at`, with its edge
/// luxels repeated kBorder times around it: a row at a time, the border
/// luxels one by one.
void blit(const LightmapImage& image, size_t slot, Rect at, LightmapAtlas& atlas) {
    const auto& src = image.styles[slot];
    const int64_t w = image.width, h = image.height;
    const auto copy_luxel = [](const uint8_t* from, uint8_t* to) {
        to[0] = from[0];
        to[1] = from[1];
        to[2] = from[2];
    };
    for (int64_t y = -int64_t(kBorder); y < h + int64_t(kBorder); ++y) {
        const uint8_t* row = src.data() + std::clamp<int64_t>(y, 0, h - 1) * w * 3;
        uint8_t* dst = atlas.rgb.data() + ((int64_t(at.y) + y) * atlas.width + int64_t(at.x)) * 3;  // luxel x = 0
        for (int64_t x = 1; x <= int64_t(kBorder); ++x) {
            copy_luxel(row, dst - x * 3);
            copy_luxel(row + (w - 1) * 3, dst + (w - 1 + x) * 3);
        }
        std::copy_n(row, size_t(w) * 3, dst);
    }
}

}  // namespace

void pack_lightmaps(Map& map, uint64_t max_page_bytes) {
    auto& images = map.lightmap_images;
    if (images.empty()) return;
    uint64_t area = 0;
    uint32_t widest = 1;
    for (const auto& img : images) {
        area += uint64_t(img.width + 2 * kBorder) * (img.height + 2 * kBorder);
        widest = std::max(widest, img.width + 2 * kBorder);
    }
    std::vector<size_t> order(images.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return images[a].height > images[b].height; });
    // Smallest power-of-two width (64 at least) whose shelf packing of the
    // images and their borders is no taller than it is wide.
    std::vector<bspkit::detail::ShelfSize> sizes(images.size());
    for (size_t i = 0; i < images.size(); ++i)
        sizes[i] = {images[i].width + 2 * kBorder, images[i].height + 2 * kBorder};
    std::vector<bspkit::detail::ShelfPlace> places(images.size());
    const bspkit::detail::ShelfPacking shelves =
        bspkit::detail::shelf_pack_square(sizes, order, 64, uint64_t(1) << 31, places);
    uint32_t width = uint32_t(shelves.width);
    uint32_t height = uint32_t(std::min<uint64_t>(shelves.height, UINT32_MAX));
    std::vector<Rect> placed(images.size());
    for (size_t i = 0; i < images.size(); ++i) placed[i] = {places[i].x + kBorder, places[i].y + kBorder};
    // A very tall lightmap (a damaged face 4605 luxels long) makes the square
    // shelf packing many times the images' luxels: 8192 x 4882 for 2.7 M, the
    // small images leaving the tall one's shelf empty above them. Then every
    // power-of-two width from the widest image's up is packed on a skyline
    // (taller than wide, small images stacked beside the tall one) and the
    // packing with the fewest luxels is kept: 256 x 10745 there. The corpus
    // maps' square packings are at most 2.4 times their luxels: not redone.
    if (uint64_t(width) * height > 4 * area) {
        std::vector<Rect> trial(images.size());
        uint64_t budget = kSkylineBudget;
        uint32_t w = 1;
        while (w < widest) w *= 2;
        for (; w <= width && budget > 0; w *= 2) {
            const uint32_t h = skyline_pack(images, order, w, trial, budget);
            if (h && uint64_t(w) * h < uint64_t(width) * height) {
                width = w;
                height = h;
                placed = trial;
            }
        }
    }
    height = std::max<uint32_t>(height, 1);

    // The light style of each image's slots, from the surfaces that use it
    // (Quake 3 pages are shared by many surfaces, all style 0).
    std::vector<std::array<uint8_t, 4>> style_of(images.size(), {255, 255, 255, 255});
    std::vector<uint8_t> known(images.size(), 0);
    for (const Model& m : map.models)
        for (const Surface& s : m.surfaces)
            if (s.lightmap >= 0 && size_t(s.lightmap) < images.size() && !known[size_t(s.lightmap)]) {
                style_of[size_t(s.lightmap)] = s.styles;
                known[size_t(s.lightmap)] = 1;
            }
    std::array<bool, 256> used{};
    for (size_t i = 0; i < images.size(); ++i)
        for (size_t k = 0; k < images[i].styles.size() && k < 4; ++k)
            if (style_of[i][k] != 255) used[style_of[i][k]] = true;

    map.lightmaps.clear();
    const uint64_t page_bytes = uint64_t(width) * height * 3;
    // Hostile shapes (a lightmap 65536 luxels long, another as tall) can spread
    // a few MB of samples over an atlas of gigabytes: no pages then. On the
    // corpus the atlas is at most 2.4 times the images' luxels (borders
    // included; 1.97 on q3_mp_lobby, 1.1-1.3 on most) and at most 2048 x 1155
    // (pd_change_dest).
    const uint64_t one_page_allowed = std::min(max_page_bytes, 3 * (16 * area + (uint64_t(1) << 20)));
    if (page_bytes > one_page_allowed) {
        map.diagnostics.push_back({Severity::warning, "lighting", -1,
                                   "lightmaps not packed: their atlas would be " + std::to_string(width) + " x " +
                                       std::to_string(height) + " luxels (" + std::to_string(page_bytes) +
                                       " bytes), over the " + std::to_string(one_page_allowed) +
                                       " bytes allowed (16 times their own luxels plus 1 Mi, at most " +
                                       std::to_string(max_page_bytes) + ")"});
        for (Model& m : map.models)
            for (Surface& s : m.surfaces) s.lightmap = -1;
        images.clear();
        return;
    }
    size_t skipped = 0;
    for (size_t style = 0; style < 255; ++style) {
        if (!used[style]) continue;
        // Every page is as large as the whole atlas: a hostile map whose faces
        // name hundreds of styles must not multiply memory. Real maps use a
        // few dozen styles at most (engines keep 64 or 256 light styles). The
        // first page always fits: a larger one was refused above.
        if (page_bytes * (map.lightmaps.size() + 1) > max_page_bytes) {
            ++skipped;
            continue;
        }
        LightmapAtlas atlas;
        atlas.style = uint32_t(style);
        atlas.width = width;
        atlas.height = height;
        bspkit::detail::assign_large(atlas.rgb, size_t(width) * height * 3, 0);
        for (size_t i = 0; i < images.size(); ++i) {
            if (!images[i].width || !images[i].height) continue;
            for (size_t k = 0; k < images[i].styles.size() && k < 4; ++k)
                if (style_of[i][k] == style) blit(images[i], k, placed[i], atlas);
        }
        map.lightmaps.push_back(std::move(atlas));
    }
    if (skipped)
        map.diagnostics.push_back({Severity::warning, "lighting", -1,
                                   "lightmap pages of " + std::to_string(skipped) + " light styles were not built: " +
                                       std::to_string(map.lightmaps.size()) + " pages of " + std::to_string(width) +
                                       " x " + std::to_string(height) + " already use the " +
                                       std::to_string(max_page_bytes) + " bytes allowed"});
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

LightmapAtlas combined_lightmap(const Map& map) {
    LightmapAtlas out;
    if (map.lightmaps.empty()) return out;
    out.style = 0;
    out.width = map.lightmaps.front().width;
    out.height = map.lightmaps.front().height;
    bspkit::detail::assign_large(out.rgb, size_t(out.width) * out.height * 3, 0);
    for (const LightmapAtlas& page : map.lightmaps) {
        if (page.width != out.width || page.height != out.height || page.rgb.size() != out.rgb.size()) continue;
        // Through plain pointers: bytes may alias the vectors' own fields, which kept
        // the indexed loop from being vectorised (a saturating add of 16 bytes at once).
        uint8_t* const sum = out.rgb.data();
        const uint8_t* const add = page.rgb.data();
        const size_t n = out.rgb.size();
        for (size_t i = 0; i < n; ++i) {
            const unsigned v = unsigned(sum[i]) + unsigned(add[i]);
            sum[i] = uint8_t(v > 255u ? 255u : v);
        }
    }
    return out;
}

}  // namespace bspkit::model
