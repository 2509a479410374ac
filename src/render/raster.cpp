// The rasterizer of render::render: triangles set up in view space (near
// plane clipped, back faces culled), binned into bands of rows; each band,
// on whichever thread takes it, draws its opaque triangles into a depth +
// triangle-id buffer (alpha test on the way), shades each covered pixel once
// (perspective-correct attributes, bilinear texture at the mip level of the
// pixel's footprint, bilinear lightmap), then blends the translucent
// triangles back to front.
#include "scene_impl.hpp"

#include "../core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numbers>

namespace bspkit::render {
namespace {

constexpr int kBand = 16;  ///< rows per band
constexpr int kAttrs = 7;  ///< u, v, lightmap u, v, vertex light r, g, b

/// Attribute a at pixel centre (x, y): (a0 + ax * (x - x0) + ay * (y - y0)).
struct Plane {
    float a0, ax, ay;
    float at(float dx, float dy) const { return a0 + ax * dx + ay * dy; }
};

struct SetupTri {
    float x0, y0;            ///< vertex 0 on screen (reference of the planes)
    float ex[3], ey[3], ec[3];  ///< edge functions: inside when ex*x + ey*y + ec >= 0 (all three)
    int minx, maxx, miny, maxy;
    Plane key;               ///< 1/z (perspective) or -z (orthographic): larger is nearer
    Plane attr[kAttrs];      ///< perspective: attribute / z
    uint32_t draw;
    float lod_base;          ///< log2(texels per pixel at z = 1)
    float sort_depth;        ///< translucent order: larger is farther
    uint32_t order;          ///< index of the source triangle (ties)
};

struct ClipVert {
    float x, y, z;  ///< view space: right, up, forward
    float a[kAttrs];
};

float fast_log2(float v) {
    // Exponent + a quadratic of the mantissa: within 0.01, enough for a mip level.
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    const float e = float(int((bits >> 23) & 0xff) - 128);
    bits = (bits & 0x007fffffu) | 0x3f800000u;
    float m;
    std::memcpy(&m, &bits, 4);
    return e + (-0.34484843f * m + 2.02466578f) * m - 0.67487759f + 1.0f;
}

struct Sample {
    float r, g, b, a;
};

/// floor() without a libm call (x86-64's baseline has no SSE4.1 round
/// instruction); |v| stays far below 2^31 here (callers clamp or wrap after).
inline float fast_floor(float v) {
    if (!(std::fabs(v) < 1e9f)) return std::isfinite(v) ? v : 0.0f;
    const float t = float(int32_t(v));
    return t > v ? t - 1.0f : t;
}

/// Texel index i of a side of n texels, repeating: a mask for power-of-two
/// sizes (nearly every game texture), a division otherwise.
inline uint32_t wrap_texel(int64_t i, uint32_t n) {
    if ((n & (n - 1)) == 0) return uint32_t(uint64_t(i) & (n - 1));
    const int64_t m = i % int64_t(n);
    return uint32_t(m < 0 ? m + n : m);
}

/// The four texels (byte offsets into RGBA) and weights of a bilinear sample
/// of a w x h texture at (u, v) in [0,1) repeats.
struct Bilinear {
    size_t p00, p10, p01, p11;
    float ax, ay;
};

inline Bilinear bilinear_taps(uint32_t w, uint32_t h, float u, float v) {
    const float x = u * float(w) - 0.5f, y = v * float(h) - 0.5f;
    const float flx = fast_floor(x), fly = fast_floor(y);
    const int64_t ix = int64_t(flx), iy = int64_t(fly);
    const uint32_t x0 = wrap_texel(ix, w), x1 = wrap_texel(ix + 1, w), y0 = wrap_texel(iy, h), y1 = wrap_texel(iy + 1, h);
    return {(size_t(y0) * w + x0) * 4, (size_t(y0) * w + x1) * 4, (size_t(y1) * w + x0) * 4, (size_t(y1) * w + x1) * 4,
            x - flx, y - fly};
}

inline Sample blend_taps(const uint8_t* rgba, const Bilinear& b) {
    const uint8_t *p00 = rgba + b.p00, *p10 = rgba + b.p10, *p01 = rgba + b.p01, *p11 = rgba + b.p11;
    float out[4];
    for (int c = 0; c < 4; ++c) {
        const float top = float(p00[c]) + (float(p10[c]) - float(p00[c])) * b.ax;
        const float bottom = float(p01[c]) + (float(p11[c]) - float(p01[c])) * b.ax;
        out[c] = top + (bottom - top) * b.ay;
    }
    return {out[0], out[1], out[2], out[3]};
}

/// Bilinear (or nearest) sample of an RGBA level at texture coordinates (u, v) in [0,1) repeats.
Sample sample_texture(const model::Texture& l, float u, float v, bool bilinear) {
    if (!bilinear) {
        const float fx = u * float(l.width), fy = v * float(l.height);
        const uint8_t* p = &l.rgba[(size_t(wrap_texel(int64_t(fast_floor(fy)), l.height)) * l.width +
                                    wrap_texel(int64_t(fast_floor(fx)), l.width)) * 4];
        return {float(p[0]), float(p[1]), float(p[2]), float(p[3])};
    }
    return blend_taps(l.rgba.data(), bilinear_taps(l.width, l.height, u, v));
}

/// Bilinear (or nearest) sample of the RGB atlas at (u, v) in [0,1], clamped.
std::array<float, 3> sample_light(const model::LightmapAtlas& l, float u, float v, bool bilinear) {
    const float fx = u * float(l.width), fy = v * float(l.height);
    const auto clampi = [](float f, uint32_t n) { return uint32_t(std::clamp(f, 0.0f, float(n - 1))); };
    if (!bilinear) {
        const uint8_t* p = &l.rgb[(size_t(clampi(fast_floor(fy), l.height)) * l.width + clampi(fast_floor(fx), l.width)) * 3];
        return {float(p[0]), float(p[1]), float(p[2])};
    }
    const float x = fx - 0.5f, y = fy - 0.5f;
    const float flx = fast_floor(x), fly = fast_floor(y);
    const float ax = std::clamp(x - flx, 0.0f, 1.0f), ay = std::clamp(y - fly, 0.0f, 1.0f);
    const uint32_t x0 = clampi(flx, l.width), x1 = clampi(flx + 1, l.width), y0 = clampi(fly, l.height), y1 = clampi(fly + 1, l.height);
    const uint8_t* p00 = &l.rgb[(size_t(y0) * l.width + x0) * 3];
    const uint8_t* p10 = &l.rgb[(size_t(y0) * l.width + x1) * 3];
    const uint8_t* p01 = &l.rgb[(size_t(y1) * l.width + x0) * 3];
    const uint8_t* p11 = &l.rgb[(size_t(y1) * l.width + x1) * 3];
    std::array<float, 3> out{};
    for (int c = 0; c < 3; ++c) {
        const float top = float(p00[c]) + (float(p10[c]) - float(p00[c])) * ax;
        const float bottom = float(p01[c]) + (float(p11[c]) - float(p01[c])) * ax;
        out[size_t(c)] = top + (bottom - top) * ay;
    }
    return out;
}

using bspkit::detail::parallel_for;

class Renderer {
public:
    Renderer(const Scene::Impl& s, const Camera& cam, const Options& o) : s_(s), cam_(cam), o_(o) {
        cam.basis(fwd_, right_, up_);
        w_ = int(o.width);
        h_ = int(o.height);
        persp_ = !cam.orthographic;
        const double fov = std::clamp(double(cam.fov), 1.0, 179.0) * std::numbers::pi / 180.0;
        focal_ = persp_ ? float(double(w_) / 2 / std::tan(fov / 2)) : float(double(w_) / std::max(1e-3f, cam.ortho_width));
        near_ = std::max(1e-3f, cam.near_plane);
        threads_ = bspkit::detail::thread_count(o.threads);
        light_ = o.engine_light && !o.lightmap_only ? &s.light_engine : &s.light_raw;
    }

    void run(Frame& f) {
        f.width = o_.width;
        f.height = o_.height;
        f.stats = {};
        const size_t n = size_t(w_) * size_t(h_);
        // Every pixel of these is written by its band (no clearing here).
        f.rgba.resize(n * 4);
        f.depth.resize(n);
        f.face.resize(n);
        f.scratch_key.resize(n);
        f.scratch_id.resize(n);
        key_ = f.scratch_key.data();
        id_ = f.scratch_id.data();
        select(f.stats);
        setup();
        f.stats.triangles = opaque_.size() + translucent_.size();
        const size_t bands = size_t((h_ + kBand - 1) / kBand);
        std::atomic<size_t> covered{0};
        parallel_for(bands, threads_, [&](size_t b) { covered += band(int(b), f); });
        f.stats.pixels_covered = covered;
    }

private:
    const Scene::Impl& s_;
    const Camera& cam_;
    const Options& o_;
    Vec3 fwd_, right_, up_;
    int w_ = 0, h_ = 0;
    bool persp_ = true;
    float focal_ = 1, near_ = 1;
    unsigned threads_ = 1;
    const model::LightmapAtlas* light_ = nullptr;
    std::vector<uint8_t> drawn_;            ///< per draw
    std::vector<SetupTri> opaque_, translucent_;
    std::vector<std::vector<uint32_t>> opaque_bins_, translucent_bins_;
    float* key_ = nullptr;     ///< Frame::scratch_key
    uint32_t* id_ = nullptr;   ///< Frame::scratch_id

    /// Which draws this frame uses (PVS, options).
    void select(Stats& st) {
        drawn_.assign(s_.draws.size(), 0);
        std::vector<uint8_t> visible;
        bool cull = false;
        st.clusters = s_.vis.clusters();
        st.clusters_visible = st.clusters;
        if (s_.world) {
            const query::LeafInfo leaf = s_.world->leaf_at(cam_.position);
            st.camera_leaf = leaf.leaf;
            if (o_.pvs && !cam_.orthographic && leaf.leaf >= 0 && size_t(leaf.leaf) < s_.vis.leaf_count())
                if (const auto c = s_.vis.cluster_of_leaf(size_t(leaf.leaf)); c && *c < s_.cluster_faces.clusters()) {
                    Bytes row(s_.vis.row_bytes());
                    const RowStatus status = s_.vis.pvs_into(*c, row);
                    if (status == RowStatus::ok || status == RowStatus::overrun) {
                        cull = true;
                        st.camera_cluster = int64_t(*c);
                        st.clusters_visible = 0;
                        visible.assign(s_.listed.size(), 0);
                        st.clusters_visible = s_.cluster_faces.mark_visible(*c, row, visible);
                    }
                }
        }
        for (size_t d = 0; d < s_.draws.size(); ++d) {
            const Draw& dr = s_.draws[d];
            const MaterialInfo& m = s_.materials[dr.material];
            if (dr.brush_model && !o_.brush_models) continue;
            if (dr.prop && !o_.props) continue;
            if (m.sky && o_.hide_sky) continue;
            if (m.translucent && !o_.translucent) continue;
            if (dr.world) {
                const bool listed = dr.face >= 0 && size_t(dr.face) < s_.listed.size() && s_.listed[size_t(dr.face)];
                if (cull && listed && !visible[size_t(dr.face)]) {
                    ++st.faces_culled;
                    continue;
                }
                ++st.faces_drawn;
            } else {
                ++st.surfaces_other;
            }
            drawn_[d] = 1;
        }
    }

    ClipVert to_view(const Tri& t, int k) const {
        ClipVert v;
        const Vec3 d = t.p[k] - cam_.position;
        v.x = float(model::dot(d, right_));
        v.y = float(model::dot(d, up_));
        v.z = float(model::dot(d, fwd_));
        v.a[0] = t.uv[k][0];
        v.a[1] = t.uv[k][1];
        v.a[2] = t.luv[k][0];
        v.a[3] = t.luv[k][1];
        v.a[4] = t.rgb[k][0];
        v.a[5] = t.rgb[k][1];
        v.a[6] = t.rgb[k][2];
        return v;
    }

    /// Sets up one source triangle (clipped into up to two) into `out`.
    void setup_one(uint32_t index, std::vector<SetupTri>& out) const {
        const Tri& t = s_.tris[index];
        const Draw& d = s_.draws[t.draw];
        const MaterialInfo& m = s_.materials[d.material];
        if (o_.clip_above && t.p[0].z > *o_.clip_above && t.p[1].z > *o_.clip_above && t.p[2].z > *o_.clip_above) return;
        if (!m.two_sided) {
            const double facing = persp_ ? model::dot(t.normal, t.p[0] - cam_.position) : model::dot(t.normal, fwd_);
            if (facing >= 0) return;
        }
        ClipVert in[3] = {to_view(t, 0), to_view(t, 1), to_view(t, 2)};
        ClipVert poly[4];
        int count = 0;
        if (persp_) {
            for (int i = 0; i < 3; ++i) {
                const ClipVert& a = in[i];
                const ClipVert& b = in[(i + 1) % 3];
                const bool ain = a.z >= near_, bin = b.z >= near_;
                if (ain) poly[count++] = a;
                if (ain != bin) {
                    const float f = (near_ - a.z) / (b.z - a.z);
                    ClipVert c;
                    c.x = a.x + (b.x - a.x) * f;
                    c.y = a.y + (b.y - a.y) * f;
                    c.z = near_;
                    for (int k = 0; k < kAttrs; ++k) c.a[k] = a.a[k] + (b.a[k] - a.a[k]) * f;
                    poly[count++] = c;
                }
            }
        } else {
            std::copy(in, in + 3, poly);
            count = 3;
        }
        for (int i = 1; i + 1 < count; ++i) emit(poly[0], poly[i], poly[i + 1], t, d, index, out);
    }

    void emit(const ClipVert& a, const ClipVert& b, const ClipVert& c, const Tri& t, const Draw& d, uint32_t index,
              std::vector<SetupTri>& out) const {
        const ClipVert* v[3] = {&a, &b, &c};
        double sx[3], sy[3], key[3];
        for (int k = 0; k < 3; ++k) {
            if (persp_) {
                const double iz = 1.0 / v[k]->z;
                sx[k] = w_ * 0.5 + v[k]->x * focal_ * iz;
                sy[k] = h_ * 0.5 - v[k]->y * focal_ * iz;
                key[k] = iz;
            } else {
                sx[k] = w_ * 0.5 + v[k]->x * focal_;
                sy[k] = h_ * 0.5 - v[k]->y * focal_;
                key[k] = -v[k]->z;
            }
            if (!std::isfinite(sx[k]) || !std::isfinite(sy[k]) || std::fabs(sx[k]) > 1e7 || std::fabs(sy[k]) > 1e7) return;
        }
        double area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
        if (!(std::fabs(area) > 1e-9)) return;
        const double minx = std::min({sx[0], sx[1], sx[2]}), maxx = std::max({sx[0], sx[1], sx[2]});
        const double miny = std::min({sy[0], sy[1], sy[2]}), maxy = std::max({sy[0], sy[1], sy[2]});
        SetupTri st;
        // Pixels whose centre (x + 0.5) lies in [min, max].
        st.minx = std::max(0, int(std::ceil(minx - 0.5)));
        st.maxx = std::min(w_ - 1, int(std::floor(maxx - 0.5)));
        st.miny = std::max(0, int(std::ceil(miny - 0.5)));
        st.maxy = std::min(h_ - 1, int(std::floor(maxy - 0.5)));
        if (st.minx > st.maxx || st.miny > st.maxy) return;
        st.x0 = float(sx[0]);
        st.y0 = float(sy[0]);
        // Edge i from vertex i to i+1; with positive area, inside is on the left.
        const double sign = area > 0 ? 1.0 : -1.0;
        for (int i = 0; i < 3; ++i) {
            const int j = (i + 1) % 3;
            const double ex = -(sy[j] - sy[i]) * sign, ey = (sx[j] - sx[i]) * sign;
            st.ex[i] = float(ex);
            st.ey[i] = float(ey);
            st.ec[i] = float(-(ex * sx[i] + ey * sy[i]));
        }
        // Plane of a value over the screen from its three vertex values.
        const auto plane = [&](double q0, double q1, double q2) {
            const double dx1 = sx[1] - sx[0], dy1 = sy[1] - sy[0], dx2 = sx[2] - sx[0], dy2 = sy[2] - sy[0];
            const double dq1 = q1 - q0, dq2 = q2 - q0;
            return Plane{float(q0), float((dq1 * dy2 - dq2 * dy1) / area), float((dq2 * dx1 - dq1 * dx2) / area)};
        };
        st.key = plane(key[0], key[1], key[2]);
        for (int k = 0; k < kAttrs; ++k) {
            const double m = persp_ ? 1.0 : 0.0;
            const auto q = [&](int i) { return double(v[i]->a[k]) * (m ? key[i] : 1.0); };
            st.attr[k] = plane(q(0), q(1), q(2));
        }
        st.draw = t.draw;
        st.order = index;
        const float density = d.texel_density > 0 ? d.texel_density : 1.0f;
        st.lod_base = fast_log2(density / focal_);
        st.sort_depth = float(std::max({v[0]->z, v[1]->z, v[2]->z}) + std::min({v[0]->z, v[1]->z, v[2]->z}));
        out.push_back(st);
    }

    void setup() {
        // Chunks of triangles set up in parallel, joined in order.
        std::vector<uint32_t> order;
        order.reserve(s_.tris.size());
        for (size_t d = 0; d < s_.draws.size(); ++d)
            if (drawn_[d])
                for (uint32_t i = 0; i < s_.draws[d].count; ++i) order.push_back(s_.draws[d].first + i);
        const size_t chunks = std::max<size_t>(1, std::min<size_t>(64, order.size() / 2048 + 1));
        std::vector<std::vector<SetupTri>> op(chunks), tr(chunks);
        parallel_for(chunks, threads_, [&](size_t c) {
            const size_t a = order.size() * c / chunks, b = order.size() * (c + 1) / chunks;
            // Filled locally, handed over at the end: op and tr hold the chunks'
            // vectors side by side, and growing them in place had the cores write
            // the same cache lines.
            std::vector<SetupTri> tmp, opaque, translucent;
            for (size_t i = a; i < b; ++i) {
                tmp.clear();
                setup_one(order[i], tmp);
                auto& dst = s_.materials[s_.draws[s_.tris[order[i]].draw].material].translucent ? translucent : opaque;
                dst.insert(dst.end(), tmp.begin(), tmp.end());
            }
            op[c] = std::move(opaque);
            tr[c] = std::move(translucent);
        });
        for (auto& v : op) opaque_.insert(opaque_.end(), v.begin(), v.end());
        for (auto& v : tr) translucent_.insert(translucent_.end(), v.begin(), v.end());
        // Back to front; ties by source triangle, then by setup order (stable).
        std::stable_sort(translucent_.begin(), translucent_.end(), [](const SetupTri& x, const SetupTri& y) {
            if (x.sort_depth != y.sort_depth) return x.sort_depth > y.sort_depth;
            return x.order < y.order;
        });
        const size_t bands = size_t((h_ + kBand - 1) / kBand);
        const auto bin = [&](const std::vector<SetupTri>& tris, std::vector<std::vector<uint32_t>>& bins) {
            bins.assign(bands, {});
            for (size_t i = 0; i < tris.size(); ++i)
                for (int b = tris[i].miny / kBand; b <= tris[i].maxy / kBand; ++b) bins[size_t(b)].push_back(uint32_t(i));
        };
        bin(opaque_, opaque_bins_);
        bin(translucent_, translucent_bins_);
    }

    /// Calls fn(x, y, key) for the pixels of `t` inside rows [y0, y1].
    template <class Fn>
    static void raster(const SetupTri& t, int y0, int y1, const Fn& fn) {
        const int ya = std::max(t.miny, y0), yb = std::min(t.maxy, y1);
        for (int y = ya; y <= yb; ++y) {
            const float py = float(y) + 0.5f;
            // Columns where all three edges are >= 0 on this row.
            float lo = float(t.minx), hi = float(t.maxx);
            bool empty = false;
            for (int i = 0; i < 3 && !empty; ++i) {
                const float base = t.ey[i] * py + t.ec[i];  // e(x) = ex * (x + 0.5) + base
                if (t.ex[i] == 0) {
                    if (base < 0) empty = true;
                } else if (t.ex[i] > 0) {
                    lo = std::max(lo, std::ceil(-base / t.ex[i] - 0.5f));
                } else {
                    hi = std::min(hi, std::floor(-base / t.ex[i] - 0.5f));
                }
            }
            if (empty || lo > hi) continue;
            for (int x = int(lo); x <= int(hi); ++x) {
                const float px = float(x) + 0.5f;
                // Exact test at the pixel (the span bounds are rounded).
                bool inside = true;
                for (int i = 0; i < 3; ++i) inside = inside && t.ex[i] * px + t.ey[i] * py + t.ec[i] >= 0;
                if (!inside) continue;
                fn(x, y, t.key.at(px - t.x0, py - t.y0));
            }
        }
    }

    struct Attrs {
        float a[kAttrs];
        float z;  ///< view depth
    };

    Attrs attrs(const SetupTri& t, int x, int y, float key) const {
        Attrs r;
        const float dx = float(x) + 0.5f - t.x0, dy = float(y) + 0.5f - t.y0;
        const float w = persp_ ? 1.0f / key : 1.0f;
        for (int k = 0; k < kAttrs; ++k) r.a[k] = t.attr[k].at(dx, dy) * w;
        r.z = persp_ ? w : -key;
        return r;
    }

    const model::Texture* level(const MaterialInfo& m, const SetupTri& t, float z) const {
        const auto& chain = s_.textures[size_t(m.texture)];
        const float lod = t.lod_base + (persp_ ? fast_log2(std::max(z, 1e-6f)) : 0.0f);
        const int l = lod > 0 && std::isfinite(lod) ? int(lod) : 0;
        return &chain[size_t(std::min<int>(l, int(chain.size()) - 1))];
    }

    /// The view direction through pixel (x, y).
    Vec3 view_direction(int x, int y) const {
        if (!persp_) return fwd_;
        const float rx = (float(x) + 0.5f - float(w_) * 0.5f) / focal_;
        const float ry = (float(y) + 0.5f - float(h_) * 0.5f) / focal_;
        return fwd_ + right_ * rx - up_ * ry;
    }

    /// The map's sky box along view direction `dir`, each face's
    /// texels clamped half a texel inside its edges (as GL_CLAMP with
    /// Quake 2's sky_min / sky_max), so that no face filters in the opposite edge.
    Sample sky_box(Vec3 dir) const {
        const model::SkyBoxPoint p = model::sky_box_at(dir);
        const model::Texture& t = s_.sky_box->faces[size_t(p.face)];
        const float hu = 0.5f / float(t.width), hv = 0.5f / float(t.height);
        return sample_texture(t, std::clamp(p.u, hu, 1 - hu), std::clamp(p.v, hv, 1 - hv), o_.bilinear);
    }

    /// The sky box (black without one) along pixel (x, y)'s view direction,
    /// with Quake 3's cloud layers blended over it in order, each as its
    /// blendFunc says, as RB_StageIteratorSky draws them at time 0.
    Sample sky_images(int x, int y) const {
        const Vec3 dir = view_direction(x, y);
        Sample c = s_.sky_box ? sky_box(dir) : Sample{0, 0, 0, 255};
        c.a = 255;
        if (!s_.sky_clouds) return c;
        const model::Vec2 st = model::sky_cloud_st(dir, s_.sky_clouds->height);
        for (const model::SkyClouds::Layer& l : s_.sky_clouds->layers) {
            const Sample src = sample_texture(l.image, st.x * l.scale_s, st.y * l.scale_t, o_.bilinear);
            c = blend(src, c, l.src, l.dst);
        }
        return c;
    }

    /// src x factor + dst x factor per channel, as OpenGL blends (0-255, clamped).
    static Sample blend(const Sample& src, const Sample& dst, model::BlendFactor fs, model::BlendFactor fd) {
        using F = model::BlendFactor;
        // Quake 3 skies' usual two, opaque then added, without the general factors (11% of a cloudy frame).
        if (fs == F::one && fd == F::zero) return src;
        if (fs == F::one && fd == F::one)
            return {std::min(src.r + dst.r, 255.0f), std::min(src.g + dst.g, 255.0f), std::min(src.b + dst.b, 255.0f),
                    std::min(src.a + dst.a, 255.0f)};
        const auto factor = [&](model::BlendFactor f, float s, float sa, float d, float da) {
            switch (f) {
                case F::zero: return 0.0f;
                case F::one: return 1.0f;
                case F::src_color: return s / 255;
                case F::one_minus_src_color: return 1 - s / 255;
                case F::dst_color: return d / 255;
                case F::one_minus_dst_color: return 1 - d / 255;
                case F::src_alpha: return sa / 255;
                case F::one_minus_src_alpha: return 1 - sa / 255;
                case F::dst_alpha: return da / 255;
                case F::one_minus_dst_alpha: return 1 - da / 255;
            }
            return 1.0f;
        };
        const float s[4] = {src.r, src.g, src.b, src.a}, d[4] = {dst.r, dst.g, dst.b, dst.a};
        float out[4];
        for (int ch = 0; ch < 4; ++ch)
            out[ch] = std::clamp(s[ch] * factor(fs, s[ch], src.a, d[ch], dst.a) + d[ch] * factor(fd, s[ch], src.a, d[ch], dst.a),
                                 0.0f, 255.0f);
        return {out[0], out[1], out[2], out[3]};
    }

    /// The map's sky layers along pixel (x, y)'s view direction: the front
    /// layer over the back one, as GLQuake blends them.
    Sample sky_layers(int x, int y) const {
        const model::Vec2 uv = model::sky_layer_uv(view_direction(x, y));
        const model::Texture &front_layer = s_.sky_layers->front, &back_layer = s_.sky_layers->back;
        Sample front, back;
        if (o_.bilinear && front_layer.width == back_layer.width && front_layer.height == back_layer.height) {
            // The layers are the two halves of one texture: the same taps for both.
            const Bilinear taps = bilinear_taps(front_layer.width, front_layer.height, uv.x, uv.y);
            front = blend_taps(front_layer.rgba.data(), taps);
            back = blend_taps(back_layer.rgba.data(), taps);
        } else {
            front = sample_texture(front_layer, uv.x, uv.y, o_.bilinear);
            back = sample_texture(back_layer, uv.x, uv.y, o_.bilinear);
        }
        const float a = std::clamp(front.a / 255.0f, 0.0f, 1.0f);
        return {front.r * a + back.r * (1 - a), front.g * a + back.g * (1 - a), front.b * a + back.b * (1 - a), 255};
    }

    /// The shaded colour (0-255) and opacity of triangle `t` at pixel (x, y).
    Sample shade(const SetupTri& t, const Attrs& at, int x, int y) const {
        const Draw& d = s_.draws[t.draw];
        const MaterialInfo& m = s_.materials[d.material];
        if (m.sky) {
            if (o_.sky_images && o_.textures && !o_.lightmap_only) {
                if (s_.sky_layers) return sky_layers(x, y);
                if (s_.sky_box || s_.sky_clouds) return sky_images(x, y);
            }
            return {float(o_.sky[0]), float(o_.sky[1]), float(o_.sky[2]), 255};
        }
        Sample c{255, 255, 255, 255};
        if (!o_.lightmap_only) {
            if (o_.textures && m.texture >= 0)
                c = sample_texture(*level(m, t, at.z), at.a[0], at.a[1], o_.bilinear);
            else
                c = {m.flat[0], m.flat[1], m.flat[2], 255};
        }
        if (o_.lightmap_only || (o_.lightmaps && !m.unlit)) {
            std::array<float, 3> l{at.a[4], at.a[5], at.a[6]};
            if (d.lightmapped) l = sample_light(*light_, at.a[2], at.a[3], o_.bilinear);
            c.r = c.r * l[0] / 255.0f;
            c.g = c.g * l[1] / 255.0f;
            c.b = c.b * l[2] / 255.0f;
        }
        if (m.translucent && !m.has_alpha) c.a = 128;
        (void)y;
        return c;
    }

    float world_z(int x, int y, float z) const {
        if (persp_) {
            const float rx = (float(x) + 0.5f - float(w_) * 0.5f) / focal_, ry = (float(h_) * 0.5f - float(y) - 0.5f) / focal_;
            return cam_.position.z + z * (fwd_.z + rx * right_.z + ry * up_.z);
        }
        const float rx = (float(x) + 0.5f - float(w_) * 0.5f) / focal_, ry = (float(h_) * 0.5f - float(y) - 0.5f) / focal_;
        return cam_.position.z + z * fwd_.z + rx * right_.z + ry * up_.z;
    }

    void put(Frame& f, size_t i, const Sample& c, int x, int y, float z) const {
        float r = c.r, g = c.g, b = c.b;
        if (o_.shade_heights) {
            const auto [bottom, top] = *o_.shade_heights;
            const float h = top > bottom ? std::clamp((world_z(x, y, z) - bottom) / (top - bottom), 0.0f, 1.0f) : 1.0f;
            const float k = 0.45f + 0.55f * h;
            r *= k;
            g *= k;
            b *= k;
        }
        uint8_t* p = &f.rgba[i * 4];
        p[0] = uint8_t(std::clamp(r + 0.5f, 0.0f, 255.0f));
        p[1] = uint8_t(std::clamp(g + 0.5f, 0.0f, 255.0f));
        p[2] = uint8_t(std::clamp(b + 0.5f, 0.0f, 255.0f));
        p[3] = 255;
    }

    /// Draws rows [b * kBand, ...) and returns how many of its pixels hold geometry.
    size_t band(int b, Frame& f) {
        const int y0 = b * kBand, y1 = std::min(h_, y0 + kBand) - 1;
        const size_t first = size_t(y0) * size_t(w_), last = size_t(y1 + 1) * size_t(w_);
        std::fill(key_ + first, key_ + last, -std::numeric_limits<float>::infinity());
        std::fill(id_ + first, id_ + last, UINT32_MAX);
        size_t covered = 0;
        // 1. Opaque and alpha-tested triangles: nearest key and triangle per pixel.
        for (const uint32_t ti : opaque_bins_[size_t(b)]) {
            const SetupTri& t = opaque_[ti];
            const MaterialInfo& m = s_.materials[s_.draws[t.draw].material];
            const bool test = m.alpha_test && m.texture >= 0 && o_.textures && !o_.lightmap_only;
            raster(t, y0, y1, [&](int x, int y, float key) {
                const size_t i = size_t(y) * size_t(w_) + size_t(x);
                if (!(key > key_[i])) return;
                if (persp_ && !(key > 0)) return;
                if (test) {
                    const Attrs at = attrs(t, x, y, key);
                    if (sample_texture(*level(m, t, at.z), at.a[0], at.a[1], o_.bilinear).a < 128) return;
                }
                key_[i] = key;
                id_[i] = ti;
            });
        }
        // 2. Shade each covered pixel once.
        const float half_w = float(w_) * 0.5f, half_h = float(h_) * 0.5f;
        for (int y = y0; y <= y1; ++y)
            for (int x = 0; x < w_; ++x) {
                const size_t i = size_t(y) * size_t(w_) + size_t(x);
                if (id_[i] == UINT32_MAX) {
                    std::copy(o_.background.begin(), o_.background.end(), &f.rgba[i * 4]);
                    f.depth[i] = std::numeric_limits<float>::infinity();
                    f.face[i] = -1;
                    continue;
                }
                ++covered;
                const SetupTri& t = opaque_[id_[i]];
                const Attrs at = attrs(t, x, y, key_[i]);
                put(f, i, shade(t, at, x, y), x, y, at.z);
                if (persp_) {
                    const float rx = (float(x) + 0.5f - half_w) / focal_, ry = (float(y) + 0.5f - half_h) / focal_;
                    f.depth[i] = at.z * std::sqrt(1 + rx * rx + ry * ry);
                } else {
                    f.depth[i] = at.z;
                }
                const Draw& d = s_.draws[t.draw];
                f.face[i] = d.world ? int32_t(std::clamp<int64_t>(d.face, -1, INT32_MAX)) : -1;
            }
        // 3. Translucent triangles, back to front, over what is nearer than the opaque surface.
        for (const uint32_t ti : translucent_bins_[size_t(b)]) {
            const SetupTri& t = translucent_[ti];
            raster(t, y0, y1, [&](int x, int y, float key) {
                const size_t i = size_t(y) * size_t(w_) + size_t(x);
                if (!(key > key_[i])) return;
                if (persp_ && !(key > 0)) return;
                const Attrs at = attrs(t, x, y, key);
                Sample c = shade(t, at, x, y);
                const float a = std::clamp(c.a / 255.0f, 0.0f, 1.0f);
                if (a <= 0) return;
                uint8_t* p = &f.rgba[i * 4];
                Sample under{float(p[0]), float(p[1]), float(p[2]), 255};
                Sample mixed{c.r * a + under.r * (1 - a), c.g * a + under.g * (1 - a), c.b * a + under.b * (1 - a), 255};
                if (o_.shade_heights) {  // the overview shade was already applied to `under`
                    put(f, i, c, x, y, at.z);
                    mixed = {float(p[0]) * a + under.r * (1 - a), float(p[1]) * a + under.g * (1 - a),
                             float(p[2]) * a + under.b * (1 - a), 255};
                }
                p[0] = uint8_t(std::clamp(mixed.r + 0.5f, 0.0f, 255.0f));
                p[1] = uint8_t(std::clamp(mixed.g + 0.5f, 0.0f, 255.0f));
                p[2] = uint8_t(std::clamp(mixed.b + 0.5f, 0.0f, 255.0f));
                p[3] = 255;
            });
        }
        return covered;
    }
};

}  // namespace

Frame render(const Scene& scene, const Camera& camera, const Options& options) {
    if (options.width == 0 || options.height == 0 || options.width > 16384 || options.height > 16384)
        throw std::invalid_argument("render: image size must be 1-16384 on each side");
    Frame f;
    render_into(scene, camera, options, f);
    return f;
}

void render_into(const Scene& scene, const Camera& camera, const Options& options, Frame& frame) {
    if (options.width == 0 || options.height == 0 || options.width > 16384 || options.height > 16384)
        throw std::invalid_argument("render: image size must be 1-16384 on each side");
    Renderer r(scene.impl(), camera, options);
    r.run(frame);
}

}  // namespace bspkit::render
