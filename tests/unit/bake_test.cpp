// The baked texture's rasteriser pieces (src/export/lighting.hpp): the rows'
// column spans never leave out a texel the coverage test passes, and the
// SSE2 texel shading gives the bytes of the channel-by-channel one.
#include "export/lighting.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace {

using bspkit::exporter::detail::barycentric;
using bspkit::exporter::detail::RowSpans;
using bspkit::exporter::detail::shade_texel;
using bspkit::exporter::detail::shade_texel_scalar;
using bspkit::exporter::detail::Tap;

struct Triangle {
    double px[3], py[3];
};

// Every texel of each row that barycentric().inside() passes lies in the span
// RowSpans::narrow() gives, on triangles of every shape the atlas can hold
// (and some it cannot: slivers, huge and negative coordinates), and on
// ordinary triangles the span holds at most a few texels more than the row's
// covered ones (the narrowing does its work).
TEST(BakeRowSpans, KeepEveryCoveredTexel) {
    constexpr int kSize = 4096;  // bake()'s largest image side
    std::mt19937_64 rng(20261126);
    std::uniform_real_distribution<double> coord(-20.0, 300.0), unit(0.0, 1.0);
    size_t covered = 0, visited = 0, ordinary_rows = 0;
    for (int n = 0; n < 6000; ++n) {
        Triangle t{};
        const int kind = n % 6;
        for (int i = 0; i < 3; ++i) {
            t.px[i] = coord(rng);
            t.py[i] = coord(rng);
        }
        if (kind == 1) {  // a sliver: the third corner all but on the first edge
            const double s = unit(rng) * 1.5 - 0.25, off = (unit(rng) - 0.5) * 1e-3;
            t.px[2] = t.px[0] + s * (t.px[1] - t.px[0]) + off;
            t.py[2] = t.py[0] + s * (t.py[1] - t.py[0]) - off;
        } else if (kind == 2) {  // two corners a hair apart
            t.px[1] = t.px[0] + (unit(rng) - 0.5) * 1e-6;
            t.py[1] = t.py[0] + (unit(rng) - 0.5) * 1e-6;
        } else if (kind == 3) {  // axis-aligned edges, corners on texel centres and edges
            for (int i = 0; i < 3; ++i) {
                t.px[i] = std::round(t.px[i] * 2) / 2;
                t.py[i] = std::round(t.py[i] * 2) / 2;
            }
            t.px[1] = t.px[0];
            t.py[2] = t.py[0];
        } else if (kind == 4) {  // far outside the image, huge and tiny
            const double scale = std::pow(10.0, 3 + int(unit(rng) * 12));
            for (int i = 0; i < 3; ++i) {
                t.px[i] = (unit(rng) - 0.5) * scale;
                t.py[i] = (unit(rng) - 0.5) * scale;
            }
        }
        const double det = (t.px[1] - t.px[0]) * (t.py[2] - t.py[0]) - (t.px[2] - t.px[0]) * (t.py[1] - t.py[0]);
        if (!(std::fabs(det) > 1e-12)) continue;  // bake() skips these
        int x0, x1, y0, y1;
        if (!bspkit::exporter::detail::texel_box(t.px, t.py, kSize, kSize, x0, x1, y0, y1)) continue;
        const RowSpans spans(t.px, t.py, det, x0, x1, y0, y1);
        // Rows: all of them for boxes of up to 400 rows, else 400 spread over the box.
        const int step = std::max(1, (y1 - y0 + 1) / 400);
        for (int y = y0; y <= y1; y += step) {
            int xa = x0, xb = x1;
            spans.narrow(y + 0.5, xa, xb);
            ASSERT_TRUE(xa > xb || (xa >= x0 && xb <= x1)) << "the span leaves the box, triangle " << n;
            size_t in_row = 0;
            for (int x = x0; x <= x1; ++x) {
                if (!barycentric(t.px, t.py, 1.0 / det, x + 0.5, y + 0.5).inside()) continue;
                ++in_row;
                ASSERT_TRUE(x >= xa && x <= xb)
                    << "triangle " << n << " (kind " << kind << ") row " << y << ": covered texel " << x
                    << " outside the span " << xa << ".." << xb;
            }
            if (kind == 0 || kind == 3) {
                const size_t span = xa > xb ? 0 : size_t(xb - xa + 1);
                EXPECT_LE(span, in_row + 4) << "triangle " << n << " row " << y;
                covered += in_row;
                visited += span;
                ++ordinary_rows;
            }
        }
    }
    EXPECT_GT(ordinary_rows, 10000u);
    // Ordinary triangles cover about half their boxes; the spans add a few texels a row.
    EXPECT_LE(double(visited), double(covered) + 4.0 * double(ordinary_rows));
}

// shade_texel() (two channels per SSE2 instruction) writes the bytes that
// shade_texel_scalar() writes, for any taps, with and without a texture,
// whatever the weights (0, a half, next to 1, not a number).
TEST(BakeShadeTexel, SimdGivesTheScalarBytes) {
    std::mt19937 rng(7);
    const uint32_t lw = 37, lh = 23, tw = 16, th = 8;
    std::vector<uint8_t> light(size_t(lw) * lh * 3);
    for (auto& b : light) b = uint8_t(rng());
    bspkit::model::Texture texture{"t", tw, th, std::vector<uint8_t>(size_t(tw) * th * 4)};
    for (size_t i = 0; i < texture.rgba.size(); ++i) texture.rgba[i] = i % 5 == 0 ? 255 : i % 7 == 0 ? 0 : uint8_t(rng());
    // Weights that make quotients land on integers and halves, and wild ones.
    const double weights[] = {0.0, 0.5, 0.25, 0.125, 1.0 / 3, std::nextafter(1.0, 0.0), 1e-300,
                              std::numeric_limits<double>::quiet_NaN()};
    std::uniform_int_distribution<uint32_t> pick(0, 1u << 30);
    const auto weight = [&] {
        const uint32_t r = pick(rng);
        return r % 3 == 0 ? weights[r % std::size(weights)] : double(r) / double(1u << 30);
    };
    size_t compared = 0;
    for (int n = 0; n < 200000; ++n) {
        const Tap lx{pick(rng) % lw, pick(rng) % lw, weight()}, ly{pick(rng) % lh, pick(rng) % lh, weight()};
        const Tap tx{pick(rng) % tw, pick(rng) % tw, weight()}, ty{pick(rng) % th, pick(rng) % th, weight()};
        const bspkit::model::Texture* level = n % 4 == 0 ? nullptr : &texture;
        uint8_t simd[4] = {1, 2, 3, 4}, scalar[4] = {5, 6, 7, 8};
        shade_texel(light.data(), lw, lx, ly, level, tx, ty, simd);
        shade_texel_scalar(light.data(), lw, lx, ly, level, tx, ty, scalar);
        ASSERT_EQ(std::vector<uint8_t>(simd, simd + 4), std::vector<uint8_t>(scalar, scalar + 4))
            << "texel " << n << " light weights " << lx.a << ", " << ly.a << " texture weights " << tx.a << ", " << ty.a;
        ++compared;
    }
    EXPECT_EQ(compared, 200000u);
}

}  // namespace
