#include "lighting.hpp"

#include "../core/large_buffer.hpp"
#include "../core/parallel.hpp"
#include "../core/shelf_pack.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bspkit::exporter::detail {
namespace {

using bspkit::detail::parallel_for;

/// A texture's mip level (model::mip_chain).
using Level = model::Texture;

/// floor(v), without a libm call where the integer conversion is exact (the
/// build targets plain x86-64: no SSE4.1 rounding instruction).
inline double floor_fast(double v) {
    if (!(std::fabs(v) < 4.0e15)) return std::floor(v);
    const double t = double(int64_t(v));  // truncated toward zero
    return t > v ? t - 1 : t;
}

/// std::lround(v) clamped to 0..255, for v >= 0 (half away from zero, as lround).
inline uint8_t round_to_byte(double v) {
    if (!(v >= 0 && v < 256)) return uint8_t(std::clamp(std::lround(v), 0L, 255L));
    const int r = int(v);  // v - r is exact below 2^52
    return uint8_t(std::min(255, r + (v - r >= 0.5)));
}

/// tap() for n texels; wraps (textures) or clamps (atlas).
inline Tap tap(double v, uint32_t n, bool wrap) {
    v -= 0.5;
    const double f = floor_fast(v);
    Tap t{0, 0, v - f};
    if (wrap) {
        // f is integer-valued (a floor); its remainder in integers where it
        // fits exactly (fmod gives the same value, ten times slower), by mask
        // for power-of-two sizes, by a 32-bit remainder where both fit (a
        // 64-bit division is several times slower); f + 1 lands on the next texel.
        if (std::fabs(f) < 9.0e15) {
            const int64_t iv = int64_t(f);
            if ((n & (n - 1)) == 0) {
                t.i0 = uint32_t(iv & int64_t(n - 1));
            } else if (iv >= INT32_MIN && iv <= INT32_MAX && n <= uint32_t(INT32_MAX)) {
                const int32_t m = int32_t(iv) % int32_t(n);
                t.i0 = uint32_t(m < 0 ? m + int32_t(n) : m);
            } else {
                const int64_t m = iv % int64_t(n);
                t.i0 = uint32_t(m < 0 ? m + int64_t(n) : m);
            }
            t.i1 = t.i0 + 1 == n ? 0 : t.i0 + 1;
            return t;
        }
        const auto wrapped = [n](double u) {
            const double m = std::fmod(u, double(n));
            return uint32_t(m < 0 ? m + n : m) % n;
        };
        t.i0 = wrapped(f);
        t.i1 = wrapped(f + 1);
        return t;
    }
    t.i0 = uint32_t(std::clamp(f, 0.0, double(n - 1)));
    t.i1 = uint32_t(std::clamp(f + 1, 0.0, double(n - 1)));
    return t;
}

/// The bilinear blend of `data` (w texels wide, `Channels` per texel) at the
/// taps of both axes.
template <int Channels>
std::array<double, Channels> blend(const uint8_t* data, uint32_t w, const Tap& x, const Tap& y) {
    std::array<double, Channels> out{};
    const uint8_t* r0 = data + size_t(y.i0) * w * Channels;
    const uint8_t* r1 = data + size_t(y.i1) * w * Channels;
    const double ax = x.a, ay = y.a;
    for (int c = 0; c < Channels; ++c) {
        const double a = r0[size_t(x.i0) * Channels + size_t(c)], b = r0[size_t(x.i1) * Channels + size_t(c)];
        const double d = r1[size_t(x.i0) * Channels + size_t(c)], e = r1[size_t(x.i1) * Channels + size_t(c)];
        out[size_t(c)] = (a * (1 - ax) + b * ax) * (1 - ay) + (d * (1 - ax) + e * ax) * ay;
    }
    return out;
}

double finite_or_zero(double v) { return std::isfinite(v) ? v : 0.0; }

/// Fills uncovered texels next to covered ones with their covered
/// neighbours' mean, `rings` times (mask: 0 empty, 1 covered).
void dilate(model::Texture& img, std::vector<uint8_t>& mask, int rings) {
    const int h = int(img.height);
    constexpr int kRows = 64;
    const size_t chunks = size_t((h + kRows - 1) / kRows);
    for (int ring = 0; ring < rings; ++ring) {
        // A ring reads covered texels and writes uncovered ones: row chunks
        // are independent; the mask is updated after the ring.
        std::vector<std::vector<size_t>> filled_in(chunks);
        parallel_for(chunks, 0, [&](size_t chunk) {
          // Filled locally, handed over at the end: the chunks' vectors lie side by
          // side in filled_in, and each push_back's write of its end ping-ponged
          // that cache line between the cores (a quarter of a ring).
          std::vector<size_t> filled;
          // The pixels and the mask through plain pointers: a byte written through
          // img.rgba could be any object's, so its data pointer was read again after each.
          uint8_t* const rgba = img.rgba.data();
          const uint8_t* const covered = mask.data();
          // The sizes as this call's own values (captured by reference, they were read
          // again after every byte stored, which may alias them).
          const int w = int(img.width), h = int(img.height);
          if (w <= 0 || h <= 0) return;
          // near[x]: a covered texel in column x of rows y-1..y+1; a texel with none
          // in columns x-1..x+1 has no covered neighbour and is passed over at once
          // (most of a baked texture's empty area, which the full test below visited).
          // Eight texels at a time (the mask holds 0 and 1 only): the candidates are
          // the bytes of (near[x - 1] | near[x] | near[x + 1]) & ~mask, their low
          // bits; a word with none is passed over whole, in the same order as texel
          // by texel. `near` has room for a word read at the last texel.
          std::vector<uint8_t> near(size_t(w) + 2 + 8, 0);
          std::vector<uint8_t> row_copy(size_t(w) + 8, 1);
          const auto word = [](const uint8_t* p) {  // byte k of the word: p[k]
              static_assert(std::endian::native == std::endian::little);
              uint64_t v;
              std::memcpy(&v, p, 8);
              return v;
          };
          for (int y = int(chunk) * kRows; y < std::min(h, int(chunk + 1) * kRows); ++y) {
            const uint8_t* above = covered + size_t(std::max(y - 1, 0)) * size_t(w);
            const uint8_t* row = covered + size_t(y) * size_t(w);
            const uint8_t* below = covered + size_t(std::min(y + 1, h - 1)) * size_t(w);
            uint8_t* const near_row = near.data() + 1;
            for (int x = 0; x < w; ++x) near_row[x] = uint8_t(above[x] | row[x] | below[x]);
            std::copy_n(row, size_t(w), row_copy.begin());  // padded with 1s: no candidate past the row
            for (int x0 = 0; x0 < w; x0 += 8) {
              uint64_t candidates = (word(&near[size_t(x0)]) | word(&near[size_t(x0) + 1]) | word(&near[size_t(x0) + 2])) &
                                    ~word(&row_copy[size_t(x0)]) & 0x0101010101010101ull;
              for (; candidates; candidates &= candidates - 1) {
                const int x = x0 + std::countr_zero(candidates) / 8;
                const size_t i = size_t(y) * size_t(w) + size_t(x);
                unsigned s0 = 0, s1 = 0, s2 = 0, s3 = 0, n = 0;  // in registers (an array lived on the stack)
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int nx = x + dx, ny = y + dy;
                        if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
                        const size_t j = size_t(ny) * size_t(w) + size_t(nx);
                        if (covered[j] != 1) continue;
                        const uint8_t* texel = rgba + j * 4;
                        s0 += texel[0];
                        s1 += texel[1];
                        s2 += texel[2];
                        s3 += texel[3];
                        ++n;
                    }
                if (!n) continue;
                // (sum + n / 2) / n as a multiply: exact for n <= 8 and sums <= 8 * 255
                // (every pair checked), where four divisions took a good part of a ring.
                const uint32_t inverse = (1u << 16) / n + 1;
                uint8_t* out = rgba + i * 4;
                out[0] = uint8_t(((s0 + n / 2) * inverse) >> 16);
                out[1] = uint8_t(((s1 + n / 2) * inverse) >> 16);
                out[2] = uint8_t(((s2 + n / 2) * inverse) >> 16);
                out[3] = uint8_t(((s3 + n / 2) * inverse) >> 16);
                filled.push_back(i);
              }
            }
          }
          filled_in[chunk] = std::move(filled);
        });
        bool any = false;
        for (const auto& filled : filled_in) {
            any = any || !filled.empty();
            for (const size_t i : filled) mask[i] = 1;
        }
        if (!any) break;
    }
}

}  // namespace

RowSpans::RowSpans(const double (&px)[3], const double (&py)[3], double det, int x0, int x1, int y0, int y1)
    : px0_(px[0]), py0_(py[0]), det_abs_(std::fabs(det)), sign_(det > 0 ? 1.0 : -1.0) {
    a1_ = py[2] - py[0];
    b1_ = px[2] - px[0];
    a2_ = py[1] - py[0];
    b2_ = px[1] - px[0];
    const double t_max = std::max(std::fabs(x0 + 0.5 - px0_), std::fabs(x1 + 0.5 - px0_));
    const double ey_max = std::max(std::fabs(y0 + 0.5 - py0_), std::fabs(y1 + 0.5 - py0_));
    size_ = (std::fabs(a1_) + std::fabs(a2_)) * t_max + (std::fabs(b1_) + std::fabs(b2_)) * ey_max + det_abs_;
    t_max_ = t_max;
    min_slope_ = 1e-6 * size_;
}

void RowSpans::narrow(double cy, int& xa, int& xb) const {
    const double ey = cy - py0_, floor_gamma = kBakeEdge * det_abs_;
    double lo = xa, hi = xb;
    const auto half_line = [&](double alpha, double gamma) {
        if (!(std::fabs(alpha) >= min_slope_)) {
            // Too flat for a bound on t (or not a number): the whole row is out
            // when even the box's farthest column is short of gamma by far more
            // than the rounding (which is below 1e-14 S).
            if (std::fabs(alpha) * t_max_ < gamma - 1e-9 * size_) lo = hi + 1;
            return;
        }
        const double x = gamma / alpha + px0_ - 0.5;   // the column whose centre is at t = gamma / alpha
        if (!std::isfinite(x)) return;
        if (alpha > 0) lo = std::max(lo, std::floor(x) - 1);
        else hi = std::min(hi, std::ceil(x) + 1);
    };
    half_line(sign_ * a1_, floor_gamma + sign_ * b1_ * ey);
    half_line(-sign_ * a2_, floor_gamma - sign_ * b2_ * ey);
    half_line(-sign_ * (a1_ - a2_), floor_gamma - det_abs_ - sign_ * (b1_ - b2_) * ey);
    if (lo > hi) {
        xb = xa - 1;
        return;
    }
    xa = int(lo);  // within the original [xa, xb]: exact
    xb = int(hi);
}

/// The texture's colour times the light, over 255, as a product: a division
/// (two a texel) took a tenth of the bake. It is within an ulp of the
/// quotient, and the byte rounds at a half, which a product of two bytes over
/// 255 never is (2 c l = 255 (2 k + 1) has no integer solution); blended
/// values come within an ulp of a half only by chance (every corpus map's
/// baked glb came out byte-identical).
constexpr double kInv255 = 1.0 / 255.0;

void shade_texel_scalar(const uint8_t* light, uint32_t light_w, const Tap& lx, const Tap& ly,
                        const model::Texture* level, const Tap& tx, const Tap& ty, uint8_t* o) {
    const auto l = blend<3>(light, light_w, lx, ly);
    std::array<double, 4> c{255, 255, 255, 255};
    if (level) c = blend<4>(level->rgba.data(), level->width, tx, ty);
    for (int ch = 0; ch < 3; ++ch) o[ch] = round_to_byte(c[size_t(ch)] * l[size_t(ch)] * kInv255);
    o[3] = round_to_byte(c[3]);
}

namespace {
/// shade_texel(), inlined into bake()'s texel loop.
[[gnu::always_inline]] inline void shade_texel_inline(const uint8_t* light, uint32_t light_w, const Tap& lx,
                                                      const Tap& ly, const model::Texture* level, const Tap& tx,
                                                      const Tap& ty, uint8_t* o) {
#if defined(__SSE2__)
    // Two channels per register, each lane the same operations in the same
    // order as blend() and the scalar path below: the same bytes.
    const __m128i zero = _mm_setzero_si128();
    const auto widen = [&](uint32_t bytes, __m128d& lo, __m128d& hi) {  // four bytes as doubles
        const __m128i v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(int(bytes)), zero), zero);
        lo = _mm_cvtepi32_pd(v);
        hi = _mm_cvtepi32_pd(_mm_shuffle_epi32(v, _MM_SHUFFLE(3, 2, 3, 2)));
    };
    const auto blend2 = [](__m128d a, __m128d b, __m128d d, __m128d e, __m128d ax, __m128d ay) {
        const __m128d one = _mm_set1_pd(1.0), ax1 = _mm_sub_pd(one, ax), ay1 = _mm_sub_pd(one, ay);
        return _mm_add_pd(_mm_mul_pd(_mm_add_pd(_mm_mul_pd(a, ax1), _mm_mul_pd(b, ax)), ay1),
                          _mm_mul_pd(_mm_add_pd(_mm_mul_pd(d, ax1), _mm_mul_pd(e, ax)), ay));
    };
    // The bilinear blend of an image's texels (3 or 4 bytes each) at taps x, y:
    // channels 0-1 in `lo`, 2-3 in `hi` (channel 3 of a 3-channel image is 0, unused).
    const auto sample = [&](const uint8_t* data, uint32_t w, size_t channels, const Tap& x, const Tap& y, __m128d& lo,
                            __m128d& hi) {
        const auto texel = [&](const uint8_t* row, uint32_t i) {  // its bytes in one word
            const uint8_t* p = row + size_t(i) * channels;
            if (channels == 4) {
                uint32_t v;
                std::memcpy(&v, p, 4);
                return v;
            }
            return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16;  // no read past the last texel
        };
        const uint8_t* r0 = data + size_t(y.i0) * w * channels;
        const uint8_t* r1 = data + size_t(y.i1) * w * channels;
        __m128d a_lo, a_hi, b_lo, b_hi, d_lo, d_hi, e_lo, e_hi;
        widen(texel(r0, x.i0), a_lo, a_hi);
        widen(texel(r0, x.i1), b_lo, b_hi);
        widen(texel(r1, x.i0), d_lo, d_hi);
        widen(texel(r1, x.i1), e_lo, e_hi);
        const __m128d ax = _mm_set1_pd(x.a), ay = _mm_set1_pd(y.a);
        lo = blend2(a_lo, b_lo, d_lo, e_lo, ax, ay);
        hi = blend2(a_hi, b_hi, d_hi, e_hi, ax, ay);
    };
    __m128d l01, l2x;
    sample(light, light_w, 3, lx, ly, l01, l2x);
    __m128d c01 = _mm_set1_pd(255), c23 = c01;
    if (level) sample(level->rgba.data(), level->width, 4, tx, ty, c01, c23);
    const __m128d inv255 = _mm_set1_pd(kInv255);
    const __m128d v01 = _mm_mul_pd(_mm_mul_pd(c01, l01), inv255);
    const __m128d v23 = _mm_shuffle_pd(_mm_mul_pd(_mm_mul_pd(c23, l2x), inv255), c23, 0b10);  // alpha: the texture's
    // round_to_byte() of the four: within 0..256 a truncation plus one where
    // the remainder is at least a half; elsewhere (NaN from wild texture
    // coordinates) round_to_byte() itself.
    const __m128d lo = _mm_setzero_pd(), hi = _mm_set1_pd(256.0);
    const int in_range = _mm_movemask_pd(_mm_and_pd(_mm_cmpge_pd(v01, lo), _mm_cmplt_pd(v01, hi))) &
                         _mm_movemask_pd(_mm_and_pd(_mm_cmpge_pd(v23, lo), _mm_cmplt_pd(v23, hi)));
    if (in_range != 3) {
        double v[4];
        _mm_storeu_pd(v, v01);
        _mm_storeu_pd(v + 2, v23);
        for (int ch = 0; ch < 4; ++ch) o[ch] = round_to_byte(v[ch]);
        return;
    }
    const auto round2 = [](__m128d v) {  // two int32 in the low lanes
        const __m128i r = _mm_cvttpd_epi32(v);
        const __m128d up = _mm_cmpge_pd(_mm_sub_pd(v, _mm_cvtepi32_pd(r)), _mm_set1_pd(0.5));
        return _mm_sub_epi32(r, _mm_shuffle_epi32(_mm_castpd_si128(up), _MM_SHUFFLE(3, 3, 2, 0)));
    };
    const __m128i r = _mm_unpacklo_epi64(round2(v01), round2(v23));  // four int32, 0..255
    const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(r, r), zero);
    const uint32_t packed = uint32_t(_mm_cvtsi128_si32(bytes));
    std::memcpy(o, &packed, 4);
#else
    shade_texel_scalar(light, light_w, lx, ly, level, tx, ty, o);
#endif
}
}  // namespace

void shade_texel(const uint8_t* light, uint32_t light_w, const Tap& lx, const Tap& ly, const model::Texture* level,
                 const Tap& tx, const Tap& ty, uint8_t* o) {
    shade_texel_inline(light, light_w, lx, ly, level, tx, ty, o);
}

double srgb_to_linear(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }

model::Vec2 BakeLayout::uv(size_t model, uint32_t surface, model::Vec2 lightmap_uv) const noexcept {
    if (!packed()) return lightmap_uv;
    // As bake() places the surface's corners: a coordinate that is not a number at 0.
    const Shift s = shift(model, surface);
    if (s.black) return black_uv;
    return {float((finite_or_zero(lightmap_uv.x) * atlas_width + s.x) / width),
            float((finite_or_zero(lightmap_uv.y) * atlas_height + s.y) / height)};
}

namespace {
/// The rings of uncovered texels bake() fills around covered ones.
constexpr int kDilateRings = 2;
}  // namespace

BakeLayout plan_bake(const model::Map& map, const Selection& selection, const model::LightmapAtlas& light,
                     const Options& options) {
    bool textured = false;
    for (const auto& sm : selection.models)
        for (const auto& g : sm.groups)
            textured = textured || (g.lit && options.textures && map.materials[g.material].texture >= 0);
    BakeLayout out;
    if (!textured && options.bake_texels_per_luxel == 0) {
        // Nothing to multiply: the shaded atlas is the baked texture.
        out.light_only = true;
        out.width = out.atlas_width = light.width;
        out.height = out.atlas_height = light.height;
        return out;
    }
    // Materials whose texture is black: their surfaces bake to black (the
    // texture's zero times any light, its alpha 255), the colour bake() leaves
    // where nothing lands.
    std::vector<int8_t> black_texture(map.textures.size(), -1);  // -1: not looked at yet
    const auto black = [&](uint32_t material) {
        const int32_t t = options.textures ? map.materials[material].texture : -1;
        if (t < 0) return false;
        int8_t& b = black_texture[size_t(t)];
        if (b < 0) {
            const std::vector<uint8_t>& rgba = map.textures[size_t(t)].rgba;
            b = !rgba.empty();
            for (size_t p = 0; b && p + 3 < rgba.size(); p += 4)
                b = rgba[p] == 0 && rgba[p + 1] == 0 && rgba[p + 2] == 0 && rgba[p + 3] == 255;
        }
        return b == 1;
    };
    const uint32_t side = std::max(light.width, light.height);
    uint32_t k = options.bake_texels_per_luxel ? std::min(options.bake_texels_per_luxel, 64u) : 4;
    while (k > 1 && uint64_t(side) * k > std::max(options.bake_max_size, 1u)) --k;
    out.texels_per_luxel = k;
    out.width = out.atlas_width = light.width * k;
    out.height = out.atlas_height = light.height * k;
    if (!out.width || !out.height) return out;

    // Each lit surface's box in the scaled atlas: the texels bake() may cover
    // (texel_box() of its corners, clamped to the atlas) and the rings around
    // them, whole even where they pass the atlas's edge (the rings fill them).
    struct Box {
        size_t model;
        uint32_t surface;
        int64_t x0, y0;
    };
    std::vector<Box> boxes;
    std::vector<std::pair<size_t, uint32_t>> black_surfaces;  // (selected model, surface)
    std::vector<bspkit::detail::ShelfSize> sizes;
    uint64_t area = 0;
    const uint64_t atlas_area = uint64_t(out.atlas_width) * out.atlas_height;
    const double aw = out.atlas_width, ah = out.atlas_height;
    for (size_t mi = 0; mi < selection.models.size(); ++mi) {
        const model::Model& m = *selection.models[mi].model;
        for (const auto& g : selection.models[mi].groups) {
            if (!g.lit) continue;
            const bool black_group = black(g.material);
            for (const uint32_t si : g.surfaces) {
                const model::Surface& s = m.surfaces[si];
                if (s.vertices.empty()) continue;
                if (black_group) {
                    black_surfaces.push_back({mi, si});
                    continue;
                }
                double lo_x = aw, hi_x = 0, lo_y = ah, hi_y = 0;
                for (const model::Vertex& v : s.vertices) {
                    const double x = finite_or_zero(v.lightmap_uv.x) * aw, y = finite_or_zero(v.lightmap_uv.y) * ah;
                    lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
                    lo_y = std::min(lo_y, y), hi_y = std::max(hi_y, y);
                }
                const auto clamp = [](double v, double n) { return int64_t(std::clamp(v, 0.0, n - 1)); };
                const int64_t x0 = clamp(std::floor(lo_x), aw) - kDilateRings, x1 = clamp(std::ceil(hi_x), aw) + kDilateRings;
                const int64_t y0 = clamp(std::floor(lo_y), ah) - kDilateRings, y1 = clamp(std::ceil(hi_y), ah) + kDilateRings;
                const uint32_t bw = uint32_t(std::max<int64_t>(x1 - x0 + 1, 1)), bh = uint32_t(std::max<int64_t>(y1 - y0 + 1, 1));
                area += uint64_t(bw) * bh;
                if (area >= atlas_area) return out;  // no smaller than the atlas (a wild surface spans it)
                boxes.push_back({mi, si, x0, y0});
                sizes.push_back({bw, bh});
            }
        }
    }
    if (!black_surfaces.empty()) {  // their texel, in the middle of a box no triangle covers
        const uint32_t side_of_box = 2 * kDilateRings + 1;
        area += uint64_t(side_of_box) * side_of_box;
        if (area >= atlas_area) return out;
        boxes.push_back({selection.models.size(), 0, 0, 0});
        sizes.push_back({side_of_box, side_of_box});
    }
    if (boxes.empty()) return out;
    std::vector<size_t> order(boxes.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return sizes[a].height > sizes[b].height; });
    // The smallest power-of-two width whose shelves are no taller than it is
    // wide (up to twice the atlas's side: wider is refused below).
    std::vector<bspkit::detail::ShelfPlace> places(boxes.size());
    const uint64_t atlas_side = std::max(out.atlas_width, out.atlas_height);
    const uint64_t ph = bspkit::detail::shelf_pack_square(sizes, order, 1, 2 * atlas_side, places).height;
    uint64_t used_w = 0;
    for (size_t i = 0; i < boxes.size(); ++i) used_w = std::max<uint64_t>(used_w, places[i].x + uint64_t(sizes[i].width));
    if (used_w * ph >= atlas_area || std::max(used_w, ph) > atlas_side) return out;
    out.width = uint32_t(used_w);
    out.height = uint32_t(ph);
    out.shifts.resize(selection.models.size());
    for (size_t mi = 0; mi < selection.models.size(); ++mi)
        out.shifts[mi].resize(selection.models[mi].model->surfaces.size());
    for (size_t i = 0; i < boxes.size(); ++i) {
        if (boxes[i].model == selection.models.size()) {  // the black texel's box
            out.black_uv = {float((places[i].x + kDilateRings + 0.5) / out.width),
                            float((places[i].y + kDilateRings + 0.5) / out.height)};
            continue;
        }
        out.shifts[boxes[i].model][boxes[i].surface] = {int32_t(int64_t(places[i].x) - boxes[i].x0),
                                                        int32_t(int64_t(places[i].y) - boxes[i].y0)};
    }
    for (const auto& [mi, si] : black_surfaces) out.shifts[mi][si].black = true;
    return out;
}

Baked bake(const model::Map& map, const Selection& selection, const model::LightmapAtlas& light,
           const Options& options, const BakeLayout& layout) {
    const auto texture_of = [&](uint32_t material) -> int32_t {
        return options.textures ? map.materials[material].texture : -1;
    };
    Baked out;
    out.texels_per_luxel = layout.texels_per_luxel;
    if (layout.light_only) {
        out.image = {"baked", light.width, light.height, {}};
        const size_t n = size_t(light.width) * light.height;
        bspkit::detail::assign_large(out.image.rgba, n * 4, 255);
        // Byte by byte through plain pointers: a 3-byte copy_n per luxel was a
        // call to memcpy each (librequake: 6% of writing the glb).
        const uint8_t* src = light.rgb.data();
        uint8_t* dst = out.image.rgba.data();
        for (size_t p = 0; p < n; ++p, src += 3, dst += 4) dst[0] = src[0], dst[1] = src[1], dst[2] = src[2];
        return out;
    }
    // Triangles are set up and tested in the scaled atlas (aw x ah), each texel
    // stored at its surface's shift in the baked image (w x h).
    const uint32_t aw = layout.atlas_width, ah = layout.atlas_height;
    const uint32_t w = layout.width, h = layout.height;
    out.image = {"baked", w, h, {}};
    bspkit::detail::assign_large(out.image.rgba, size_t(w) * h * 4, 0);
    for (size_t p = 3; p < out.image.rgba.size(); p += 4) out.image.rgba[p] = 255;  // opaque black where nothing lands
    std::vector<uint8_t> mask;
    bspkit::detail::assign_large(mask, size_t(w) * h, 0);
    std::vector<std::unique_ptr<std::vector<Level>>> mips(map.textures.size());

    // Every lit triangle set up once, in the sequential order; then chunks of
    // rows are filled in parallel, each walking the triangles that reach it in
    // that order (a texel two triangles cover keeps the later one, as before).
    struct Tri {
        double px[3], py[3], tu[3], tv[3], det;
        const Level* level;
        int x0, x1, y0, y1;  ///< in the scaled atlas
        int32_t dx, dy;      ///< the surface's shift
    };
    std::vector<Tri> tris;
    for (size_t mi = 0; mi < selection.models.size(); ++mi) {
        const auto& sm = selection.models[mi];
        for (const auto& g : sm.groups) {
            if (!g.lit) continue;
            const int32_t t = texture_of(g.material);
            const std::vector<Level>* levels = nullptr;
            for (const uint32_t si : g.surfaces) {
                const model::Surface& s = sm.model->surfaces[si];
                const BakeLayout::Shift shift = layout.shift(mi, si);
                if (shift.black) continue;  // black whatever its light: bakes to the image's fill
                if (t >= 0 && !levels) {
                    auto& chain = mips[size_t(t)];
                    if (!chain) chain = std::make_unique<std::vector<Level>>(model::mip_chain(map.textures[size_t(t)]));
                    levels = chain.get();
                }
                for (size_t i = 0; i + 2 < s.indices.size(); i += 3) {
                    const model::Vertex* v[3] = {&s.vertices[s.indices[i]], &s.vertices[s.indices[i + 1]],
                                                 &s.vertices[s.indices[i + 2]]};
                    Tri tri;
                    tri.dx = shift.x;
                    tri.dy = shift.y;
                    double *px = tri.px, *py = tri.py, *tu = tri.tu, *tv = tri.tv;
                    for (int j = 0; j < 3; ++j) {
                        px[j] = finite_or_zero(v[j]->lightmap_uv.x) * aw;
                        py[j] = finite_or_zero(v[j]->lightmap_uv.y) * ah;
                        tu[j] = finite_or_zero(v[j]->uv.x);
                        tv[j] = finite_or_zero(v[j]->uv.y);
                    }
                    const double det = (px[1] - px[0]) * (py[2] - py[0]) - (px[2] - px[0]) * (py[1] - py[0]);
                    if (!(std::fabs(det) > 1e-12)) continue;
                    tri.det = det;
                    // The texture level whose texels match one baked texel (the
                    // affine map's larger derivative, in level-0 texels).
                    tri.level = nullptr;
                    if (levels) {
                        const double tw = (*levels)[0].width, th = (*levels)[0].height;
                        const double e1x = px[1] - px[0], e1y = py[1] - py[0], e2x = px[2] - px[0], e2y = py[2] - py[0];
                        const double t1u = (tu[1] - tu[0]) * tw, t1v = (tv[1] - tv[0]) * th;
                        const double t2u = (tu[2] - tu[0]) * tw, t2v = (tv[2] - tv[0]) * th;
                        const double dudx = (t1u * e2y - t2u * e1y) / det, dvdx = (t1v * e2y - t2v * e1y) / det;
                        const double dudy = (t2u * e1x - t1u * e2x) / det, dvdy = (t2v * e1x - t1v * e2x) / det;
                        const double footprint = std::max(std::hypot(dudx, dvdx), std::hypot(dudy, dvdy));
                        const int n = footprint > 1 && std::isfinite(footprint) ? int(std::floor(std::log2(footprint))) : 0;
                        tri.level = &(*levels)[size_t(std::clamp(n, 0, int(levels->size()) - 1))];
                    }
                    if (!texel_box(tri.px, tri.py, aw, ah, tri.x0, tri.x1, tri.y0, tri.y1)) continue;
                    tris.push_back(tri);
                }
            }
        }
    }
    // The atlas is sampled at each texel's centre / k: its taps depend on the
    // column or the row alone, so they are worked out once per column and row.
    const uint32_t k = layout.texels_per_luxel;
    std::vector<Tap> light_x(aw), light_y(ah);
    for (uint32_t x = 0; x < aw; ++x) light_x[x] = tap((x + 0.5) / k, light.width, false);
    for (uint32_t y = 0; y < ah; ++y) light_y[y] = tap((y + 0.5) / k, light.height, false);
    constexpr int kRows = 32;
    const size_t chunks = (size_t(h) + kRows - 1) / kRows;
    std::vector<std::vector<uint32_t>> in_chunk(chunks);  // triangle indices, in order
    for (size_t i = 0; i < tris.size(); ++i)
        for (int c = (tris[i].y0 + tris[i].dy) / kRows; c <= (tris[i].y1 + tris[i].dy) / kRows; ++c)
            in_chunk[size_t(c)].push_back(uint32_t(i));
    parallel_for(chunks, 0, [&](size_t chunk) {
        const int ylo = int(chunk) * kRows, yhi = std::min(int(h), ylo + kRows);
        // Everything the texel loop reads, in this call's own values: a byte stored
        // through a pointer may alias anything the compiler cannot see is local, so
        // fields reached through references were read again after every texel.
        const uint8_t* const light_rgb = light.rgb.data();
        const uint32_t light_w = light.width;
        const Tap* const taps_x = light_x.data();
        const Tap* const taps_y = light_y.data();
        uint8_t* const image = out.image.rgba.data();
        uint8_t* const covered = mask.data();
        const size_t width = w;
        for (const uint32_t ti : in_chunk[chunk]) {
            const Tri tri = tris[ti];
            const double *tu = tri.tu, *tv = tri.tv;
            const Level* level = tri.level;
            const uint32_t level_w = level ? level->width : 0, level_h = level ? level->height : 0;
            // Rows: only the columns that could be covered (most of a bounding box's texels are not).
            const RowSpans spans(tri.px, tri.py, tri.det, tri.x0, tri.x1, tri.y0, tri.y1);
            const double inv_det = 1.0 / tri.det;
            // Rows of the baked image (y + dy) in this chunk; texels tested and
            // sampled in the scaled atlas (x, y), stored at (x + dx, y + dy).
            for (int y = std::max(tri.y0, ylo - tri.dy); y <= std::min(tri.y1, yhi - 1 - tri.dy); ++y) {
                int xa = tri.x0, xb = tri.x1;
                spans.narrow(y + 0.5, xa, xb);
                for (int x = xa; x <= xb; ++x) {
                    const double cx = x + 0.5, cy = y + 0.5;
                    const Barycentric bc = barycentric(tri.px, tri.py, inv_det, cx, cy);
                    if (!bc.inside()) continue;
                    const double b0 = bc.b0, b1 = bc.b1, b2 = bc.b2;
                    Tap tx{}, ty{};
                    if (level) {
                        const double u = b0 * tu[0] + b1 * tu[1] + b2 * tu[2], vv = b0 * tv[0] + b1 * tv[1] + b2 * tv[2];
                        tx = tap(u * level_w, level_w, true);
                        ty = tap(vv * level_h, level_h, true);
                    }
                    const size_t at = size_t(y + tri.dy) * width + size_t(x + tri.dx);
                    shade_texel_inline(light_rgb, light_w, taps_x[x], taps_y[y], level, tx, ty, image + at * 4);
                    covered[at] = 1;
                }
            }
        }
    });
    dilate(out.image, mask, kDilateRings);
    return out;
}

}  // namespace bspkit::exporter::detail
