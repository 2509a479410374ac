// Per-face lightmaps of the Quake family (Quake 1, BSP2, GoldSrc, Quake 2,
// Nightfire): the grid of luxels over a face's lightmap coordinates, and the
// face's samples read from the lighting lump. Shared by the geometry builders;
// each format supplies its own coordinates (Quake: texture coordinate / 16,
// the 16-texel luxel rule; Nightfire: the lightmap projection, in luxels).
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bspkit::luxels {

/// The luxel grid of one face: floor(min) .. ceil(max) + 1 samples per axis,
/// computed in double precision as the compile tools do.
class Grid {
public:
    /// Adds a corner's lightmap coordinates (in luxels).
    void add(double s, double t) {
        mins_[0] = std::min(mins_[0], s), maxs_[0] = std::max(maxs_[0], s);
        mins_[1] = std::min(mins_[1], t), maxs_[1] = std::max(maxs_[1], t);
    }
    /// Fixes the size; false when the coordinates are not finite or the grid
    /// would exceed 65536 samples along an axis (no lightmap then).
    bool finish() {
        for (int a = 0; a < 2; ++a) {
            base_[a] = std::floor(mins_[a]);
            const double n = std::ceil(maxs_[a]) - base_[a] + 1;
            if (!std::isfinite(n) || n < 1 || n > 65536) return false;
            size_[a] = int64_t(n);
        }
        return true;
    }
    int64_t width() const { return size_[0]; }
    int64_t height() const { return size_[1]; }
    uint64_t samples() const { return uint64_t(size_[0]) * uint64_t(size_[1]); }
    /// Lightmap UV of a point at (s, t) luxels: the centre of its luxel, 0..1 over the grid.
    model::Vec2 uv(double s, double t) const {
        return {float((s - base_[0] + 0.5) / double(size_[0])), float((t - base_[1] + 0.5) / double(size_[1]))};
    }

private:
    double mins_[2] = {1e300, 1e300}, maxs_[2] = {-1e300, -1e300};
    double base_[2] = {0, 0};
    int64_t size_[2] = {0, 0};
};

/// Reads faces' lightmaps from a lighting lump. A real map uses each byte of
/// the lump once; the work budget (twice the lump plus 1 MiB) keeps hostile
/// faces that all point at the same bytes from multiplying the work.
class LightingReader {
public:
    explicit LightingReader(ByteSpan lighting)
        : lighting_(lighting), budget_(2 * uint64_t(lighting.size()) + (uint64_t(1) << 20)) {}

    /// The image of `styles` slots of grid-sized samples of `bytes_per_sample`
    /// bytes (1: grey, expanded to RGB; 3: RGB) at byte `offset` of the lump.
    /// nullopt with `why` set when it runs past the lump or the budget is used
    /// up; `why` is empty when that budget reason was already given once.
    std::optional<model::LightmapImage> read(int64_t offset, std::string_view offset_field, const Grid& grid,
                                             int styles, int bytes_per_sample, std::string& why) {
        const uint64_t samples = grid.samples();
        const uint64_t bytes = samples * uint64_t(styles) * uint64_t(bytes_per_sample);
        if (offset < 0 || uint64_t(offset) + bytes > lighting_.size()) {
            why = "lightmap of " + std::to_string(grid.width()) + " x " + std::to_string(grid.height()) +
                  " samples x " + std::to_string(styles) + " styles x " + std::to_string(bytes_per_sample) +
                  " bytes at " + std::string(offset_field) + " " + std::to_string(offset) + " runs past the " +
                  std::to_string(lighting_.size()) + "-byte lighting lump: no lightmap";
            return std::nullopt;
        }
        if (bytes > budget_) {
            why = budget_reported_ ? ""
                                   : "the faces claim the lighting lump more than twice over: lightmaps from here "
                                     "on skipped";
            budget_reported_ = true;
            return std::nullopt;
        }
        budget_ -= bytes;
        model::LightmapImage img;
        img.width = uint32_t(grid.width());
        img.height = uint32_t(grid.height());
        const uint8_t* src = lighting_.data() + offset;
        for (int st = 0; st < styles; ++st) {
            if (bytes_per_sample == 3) {
                img.styles.emplace_back(src, src + samples * 3);
            } else {
                std::vector<uint8_t> rgb(samples * 3);
                for (uint64_t i = 0; i < samples; ++i) rgb[i * 3] = rgb[i * 3 + 1] = rgb[i * 3 + 2] = src[i];
                img.styles.push_back(std::move(rgb));
            }
            src += samples * uint64_t(bytes_per_sample);
        }
        return img;
    }

private:
    ByteSpan lighting_;
    uint64_t budget_;
    bool budget_reported_ = false;
};

}  // namespace bspkit::luxels
