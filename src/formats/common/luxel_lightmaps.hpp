// Per-face lightmaps of the Quake family (Quake 1, BSP2, GoldSrc, Quake 2,
// Nightfire): the grid of luxels over a face's lightmap coordinates, and the
// face's samples read from the lighting lump. Shared by the geometry builders;
// each format supplies its own coordinates (Quake: texture coordinate / 16,
// the 16-texel luxel rule; Nightfire: the lightmap projection, in luxels).
#pragma once

#include <bspkit/bspx.hpp>
#include <bspkit/bytes.hpp>
#include <bspkit/model.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <array>
#include <optional>
#include <span>
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
    /// A grid of explicit size whose sample (i, j) sits at coordinates (i, j)
    /// (BSPX DECOUPLED_LM). False when a side is 0.
    bool fixed(int64_t width, int64_t height) {
        base_[0] = base_[1] = 0;
        size_[0] = width, size_[1] = height;
        return width > 0 && height > 0;
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

/// One face as the Quake-family builders see it.
struct Face {
    size_t index = 0;
    const float (*vecs)[4] = nullptr;          ///< texinfo vecs[2][4]
    std::span<const float* const> points;      ///< the corner loop
    const uint8_t* styles = nullptr;           ///< the face's 4 style bytes
    int64_t lightofs = -1;
};

/// Faces' lightmaps with ericw-tools' BSPX extensions applied, shared by the
/// Quake 1 / BSP2 / GoldSrc and Quake 2 builders:
///   - samples: RGBLIGHTING or a .lit (3 bytes per sample at 3 x offset)
///     instead of a grey lighting lump, else the lump itself;
///   - offset: DECOUPLED_LM's, else LMOFFSET's, else the face's lightofs;
///   - styles: LMSTYLE16 / LMSTYLE, else the face's four;
///   - grid: DECOUPLED_LM's width x height over its world -> lightmap rows,
///     else the luxel rule with 1 << LMSHIFT texels per luxel (16 without).
class FaceLightmaps {
public:
    FaceLightmaps(ByteSpan lighting, int bytes_per_sample, bspx::Lighting ext)
        : ext_(std::move(ext)),
          rgb_(!ext_.rgb.empty()),
          bytes_per_sample_(rgb_ ? 3 : bytes_per_sample),
          reader_(rgb_ ? ext_.rgb : lighting) {}

    const bspx::Lighting& extensions() const { return ext_; }

    /// The face's lightmap and, per corner of `face.points`, its lightmap UV;
    /// nullopt when it has none (`why` set when that is a defect).
    std::optional<model::LightmapImage> read(const Face& face, std::vector<model::Vec2>& uvs,
                                             std::array<uint8_t, 4>& styles_out, std::string& why) {
        const size_t f = face.index;
        // Style slots.
        std::vector<uint16_t> styles;
        if (!ext_.styles.empty()) {
            for (size_t k = 0; k < ext_.styles_per_face && ext_.styles[f * ext_.styles_per_face + k] != bspx::kNoStyle16; ++k)
                styles.push_back(ext_.styles[f * ext_.styles_per_face + k]);
        } else {
            for (int k = 0; k < 4 && face.styles[k] != 255; ++k) styles.push_back(face.styles[k]);
        }
        if (styles.empty()) return std::nullopt;
        const bool decoupled = f < ext_.decoupled.size();
        int64_t offset = face.lightofs;
        if (decoupled)
            offset = ext_.decoupled[f].offset;
        else if (f < ext_.lmoffset.size())
            offset = ext_.lmoffset[f];
        if (offset < 0) return std::nullopt;
        // The grid.
        Grid grid;
        auto coord = [&](const float* p, int axis) -> double {
            const float* v = decoupled ? ext_.decoupled[f].world_to_lm[axis] : face.vecs[axis];
            const double c = double(p[0]) * v[0] + double(p[1]) * v[1] + double(p[2]) * v[2] + double(v[3]);
            return decoupled ? c : c / scale(f);
        };
        if (decoupled) {
            if (!grid.fixed(ext_.decoupled[f].lmwidth, ext_.decoupled[f].lmheight)) return std::nullopt;
        } else {
            for (const float* p : face.points) grid.add(coord(p, 0), coord(p, 1));
            if (!grid.finish()) {
                why = "texture coordinates of the face are not finite or too large: no lightmap";
                return std::nullopt;
            }
        }
        const int64_t byte_offset = rgb_ ? offset * 3 : offset;
        const std::string field = decoupled ? "DECOUPLED_LM offset" : f < ext_.lmoffset.size() ? "LMOFFSET" : "lightofs";
        auto img = reader_.read(byte_offset, rgb_ ? field + " x 3 into " + ext_.rgb_source : field, grid,
                                int(styles.size()), bytes_per_sample_, why);
        if (!img) return std::nullopt;
        // The model keeps four 8-bit style slots: the rest is left out.
        styles_out.fill(255);
        size_t kept = 0;
        for (size_t k = 0; k < styles.size(); ++k) {
            if (kept < 4 && styles[k] < 255) {
                styles_out[kept] = uint8_t(styles[k]);
                if (kept != k) img->styles[kept] = std::move(img->styles[k]);  // no self-move
                ++kept;
            }
        }
        img->styles.resize(kept);
        if (kept < styles.size()) why = "styles beyond four 8-bit slots (LMSTYLE / LMSTYLE16) left out";
        uvs.clear();
        for (const float* p : face.points) uvs.push_back(grid.uv(coord(p, 0), coord(p, 1)));
        return img;
    }

private:
    double scale(size_t f) const {
        return f < ext_.lmshift.size() ? double(uint32_t(1) << std::min<uint8_t>(ext_.lmshift[f], 15)) : 16.0;
    }

    bspx::Lighting ext_;
    bool rgb_;
    int bytes_per_sample_;
    LightingReader reader_;
};

}  // namespace bspkit::luxels
