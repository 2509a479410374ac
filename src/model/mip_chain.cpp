// Box-filtered mip levels of a texture (model::mip_chain): the exporters'
// baked texture and the renderer sample the level matching a footprint.
#include <bspkit/model.hpp>

#include <algorithm>

namespace bspkit::model {

std::vector<Texture> mip_chain(const Texture& t) {
    std::vector<Texture> levels;
    levels.push_back({t.name, t.width, t.height, t.rgba});
    while (levels.back().width > 1 || levels.back().height > 1) {
        const Texture& a = levels.back();
        Texture b{t.name, std::max(1u, a.width / 2), std::max(1u, a.height / 2), {}};
        b.rgba.resize(size_t(b.width) * b.height * 4);
        for (uint32_t y = 0; y < b.height; ++y)
            for (uint32_t x = 0; x < b.width; ++x)
                for (int c = 0; c < 4; ++c) {
                    unsigned sum = 0;
                    for (uint32_t dy = 0; dy < 2; ++dy)
                        for (uint32_t dx = 0; dx < 2; ++dx) {
                            const uint32_t sx = std::min(a.width - 1, x * 2 + dx), sy = std::min(a.height - 1, y * 2 + dy);
                            sum += a.rgba[(size_t(sy) * a.width + sx) * 4 + size_t(c)];
                        }
                    b.rgba[(size_t(y) * b.width + x) * 4 + size_t(c)] = uint8_t((sum + 2) / 4);
                }
        levels.push_back(std::move(b));
    }
    return levels;
}

}  // namespace bspkit::model
