// Quake 3 (IBSP 46) and Return to Castle Wolfenstein (IBSP 47) geometry for
// the engine-neutral model (seed 004: faces, meshverts, lightmaps).
//
// Per model (models lump: firstSurface / numSurfaces), each face becomes one
// Surface:
//   1 polygon (MST_PLANAR), 3 mesh (MST_TRIANGLE_SOUP) and RTCW's 5 foliage
//     (its base mesh): the face's vertexes and the triangles of its meshverts
//     (offsets from firstVert). Polygons with a unit normal (lightmapVecs[2])
//     get that plane through their first vertex (q3map2 terrain "polygons"
//     store none and are not flat).
//   2 patch: biquadratic Bezier tessellation of the control grid, see
//     geometry.hpp for the layout and the level rules (crack-free).
//   4 billboard (flare): one vertex at lightmapOrigin, normal lightmapVecs[2],
//     colour lightmapVecs[0], no triangles.
// Triangles of (near) zero area and repeats of a triangle within a surface
// (same three positions, same winding) are dropped.
//
// Materials are the shaders lump (surfaceFlags / contentFlags mapped onto
// MaterialFlag); texture UVs are stored normalised per vertex, so material
// width / height stay 0. Lightmaps: every 128 x 128 page of the lightmaps
// lump is one LightmapImage (style 0: Quake 3 has no light styles) and a
// face with lightmapNum naming a page points to it; its drawVert lightmap
// coordinates are already inside the page. lightmapNum < 0 (vertex lit,
// LIGHTMAP_BY_VERTEX ...) and pages not in the file (q3map2 -external) give
// no lightmap; the latter are counted in one Map::diagnostics warning.
//
// Broken references the geometry needs (models -> faces, faces -> textures,
// vertexes, meshverts, patch sizes, meshvert offsets) throw Error before
// anything is allocated for them, and budgets bound what overlapping faces
// or huge patches could make the build allocate.
#include "geometry.hpp"

#include "../../model/builders.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/quake3.hpp>

#include "../../core/parallel.hpp"

#include <algorithm>
#include <filesystem>
#include <array>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::quake3 {
namespace {

using model::Vec2;
using model::Vec3;
using model::Vertex;

// surfaceflags.h (RTCW keeps these bits).
constexpr uint32_t SURF_SKY = 0x4, SURF_NODRAW = 0x80, SURF_HINT = 0x100, SURF_SKIP = 0x200, SURF_NOLIGHTMAP = 0x400,
                   SURF_ALPHASHADOW = 0x10000;
constexpr uint32_t CONTENTS_LAVA = 0x8, CONTENTS_SLIME = 0x10, CONTENTS_WATER = 0x20, CONTENTS_PLAYERCLIP = 0x10000,
                   CONTENTS_MONSTERCLIP = 0x20000,
                   CONTENTS_BOTCLIP = 0x400000,  // Quake 3 only (RTCW: CONTENTS_DONOTENTER_LARGE)
                   CONTENTS_ORIGIN = 0x1000000, CONTENTS_TRANSLUCENT = 0x20000000, CONTENTS_TRIGGER = 0x40000000;

std::string shader_name(const dshader_t& s) {
    const char* end = std::find(s.shader, s.shader + sizeof s.shader, '\0');
    return std::string(s.shader, end);
}

uint32_t material_flags(std::string_view name, uint32_t surface, uint32_t contents, bool rtcw) {
    using namespace model;
    uint32_t f = 0;
    if (surface & SURF_SKY) f |= kSky;
    if ((surface & (SURF_NODRAW | SURF_HINT | SURF_SKIP)) || (contents & CONTENTS_ORIGIN)) f |= kNodraw;
    if (contents & CONTENTS_TRIGGER) f |= kTrigger;
    if (contents & (CONTENTS_WATER | CONTENTS_LAVA | CONTENTS_SLIME)) f |= kWater;
    if (contents & CONTENTS_TRANSLUCENT) f |= kTranslucent;
    if (contents & (CONTENTS_PLAYERCLIP | CONTENTS_MONSTERCLIP | (rtcw ? 0u : CONTENTS_BOTCLIP))) f |= kClip;
    if (surface & SURF_NOLIGHTMAP) f |= kUnlit;
    if (surface & SURF_ALPHASHADOW) f |= kAlphaTest;
    // Tool shaders of maps compiled without their shader scripts keep default
    // bits; the common tool names say what they are.
    const std::string lower = ascii_lower(name);
    constexpr std::string_view common = "textures/common/";
    if (lower.starts_with(common)) {
        const std::string_view tool = std::string_view(lower).substr(common.size());
        if (tool == "trigger") f |= kTrigger | kNodraw;
        else if (tool.find("clip") != std::string_view::npos) f |= kClip | kNodraw;
        else if (tool == "hint" || tool == "skip" || tool == "nodraw" || tool == "origin" || tool == "caulk")
            f |= kNodraw;
    }
    return f;
}

// ---------------------------------------------------------------------------
// Bezier evaluation. Every attribute of a drawVert is interpolated as
// (w0 a + w2 c) + w1 b with weights computed symmetrically in t and 1 - t,
// so a curve evaluated from its other end gives the same bits, and the
// weights at the ends are exactly (1, 0, 0) / (0, 0, 1): corners and shared
// edges come out bit-identical in every patch that has them.

constexpr int kAttrs = 14;  // xyz 0-2, normal 3-5, st 6-7, lightmap 8-9, colour 10-13
using Attr = std::array<float, kAttrs>;

struct Weights {
    float b[3];  ///< Bernstein basis at t = i / L
    float d[3];  ///< its derivative
};

const std::vector<Weights>& basis(int level) {
    static const auto table = [] {
        std::array<std::vector<Weights>, kMaxPatchLevel + 1> t;
        for (int L = 1; L <= kMaxPatchLevel; ++L) {
            for (int i = 0; i <= L; ++i) {
                const double u = double(i) / L, s = double(L - i) / L;
                t[size_t(L)].push_back({{float(s * s), float(2 * (u * s)), float(u * u)},
                                        {float(-2 * s), float(2 * (s - u)), float(2 * u)}});
            }
        }
        return t;
    }();
    return table[size_t(level)];
}

/// Interpolation (weights summing to 1).
inline float sym(const float w[3], float a, float b, float c) {
    if (a == b && b == c) return a;  // a collapsed curve is its point at every level
    return (w[0] * a + w[2] * c) + w[1] * b;
}

/// Derivative (weights summing to 0, but not in float arithmetic: a collapsed curve is exactly still).
inline float sym_d(const float w[3], float a, float b, float c) {
    if (a == b && b == c) return 0.0f;
    return (w[0] * a + w[2] * c) + w[1] * b;
}

inline void sym_attr(const float w[3], const Attr& a, const Attr& b, const Attr& c, Attr& out) {
    for (int k = 0; k < kAttrs; ++k) out[size_t(k)] = sym(w, a[size_t(k)], b[size_t(k)], c[size_t(k)]);
}

/// Derivative of the position.
inline Vec3 sym_pos_d(const float w[3], const Attr& a, const Attr& b, const Attr& c) {
    return {sym_d(w, a[0], b[0], c[0]), sym_d(w, a[1], b[1], c[1]), sym_d(w, a[2], b[2], c[2])};
}

/// Interpolation of derivatives.
inline Vec3 sym_vec(const float w[3], Vec3 a, Vec3 b, Vec3 c) {
    return {sym(w, a.x, b.x, c.x), sym(w, a.y, b.y, c.y), sym(w, a.z, b.z, c.z)};
}

Attr to_attr(const drawVert_t& v) {
    return {v.xyz[0],      v.xyz[1],      v.xyz[2],      v.normal[0],   v.normal[1],
            v.normal[2],   v.st[0],       v.st[1],       v.lightmap[0], v.lightmap[1],
            float(v.color[0]), float(v.color[1]), float(v.color[2]), float(v.color[3])};
}

inline uint8_t to_byte(float f) { return !(f > 0) ? 0 : f >= 255 ? 255 : uint8_t(std::lround(f)); }

// ---------------------------------------------------------------------------
// Triangle filtering: degenerate triangles and repeats within a surface.

/// Bits of a coordinate with -0 folded onto +0 (they are the same position).
inline uint32_t bits(float f) { return bspkit::bit_cast<uint32_t>(f == 0.0f ? 0.0f : f); }

struct TriKey {
    uint64_t hash;
    uint32_t tri;
};

class TriangleFilter {
public:
    /// Appends the triangle unless it is degenerate (or its area is not a number).
    static void add(const std::vector<Vertex>& v, std::vector<uint32_t>& out, uint32_t a, uint32_t b, uint32_t c) {
        if (!(model::triangle_area(v[a].position, v[b].position, v[c].position) > kDegenerateArea)) return;
        out.insert(out.end(), {a, b, c});
    }

    /// Drops later repeats of a triangle (same positions, same winding).
    void dedupe(const std::vector<Vertex>& v, std::vector<uint32_t>& idx) {
        const size_t n = idx.size() / 3;
        if (n < 2) return;
        keys_.clear();
        keys_.reserve(n);
        for (size_t t = 0; t < n; ++t) {
            const auto k = canonical(v, idx, t);
            uint64_t h = 1469598103934665603ull;
            for (uint32_t x : k) h = (h ^ x) * 1099511628211ull;
            keys_.push_back({h, uint32_t(t)});
        }
        std::sort(keys_.begin(), keys_.end(),
                  [](const TriKey& a, const TriKey& b) { return a.hash != b.hash ? a.hash < b.hash : a.tri < b.tri; });
        drop_.assign(n, 0);
        bool any = false;
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && keys_[j].hash == keys_[i].hash) ++j;
            for (size_t a = i; a < j; ++a) {
                if (drop_[keys_[a].tri]) continue;
                const auto ka = canonical(v, idx, keys_[a].tri);
                for (size_t b = a + 1; b < j; ++b)
                    if (!drop_[keys_[b].tri] && canonical(v, idx, keys_[b].tri) == ka) drop_[keys_[b].tri] = any = true;
            }
            i = j;
        }
        if (!any) return;
        size_t w = 0;
        for (size_t t = 0; t < n; ++t)
            if (!drop_[t])
                for (int k = 0; k < 3; ++k) idx[w++] = idx[t * 3 + size_t(k)];
        idx.resize(w);
    }

private:
    /// The triangle's positions, rotated so the smallest comes first.
    static std::array<uint32_t, 9> canonical(const std::vector<Vertex>& v, const std::vector<uint32_t>& idx, size_t t) {
        std::array<std::array<uint32_t, 3>, 3> p;
        for (int k = 0; k < 3; ++k) {
            const Vec3& q = v[idx[t * 3 + size_t(k)]].position;
            p[size_t(k)] = {bits(q.x), bits(q.y), bits(q.z)};
        }
        const size_t first = size_t(std::min_element(p.begin(), p.end()) - p.begin());
        std::array<uint32_t, 9> out;
        for (size_t k = 0; k < 3; ++k) std::copy_n(p[(first + k) % 3].begin(), 3, out.begin() + 3 * long(k));
        return out;
    }

    std::vector<TriKey> keys_;
    std::vector<uint8_t> drop_;
};

// ---------------------------------------------------------------------------
// Patch level planning.

struct PatchPlan {
    size_t face = 0;
    int width = 0, height = 0;  ///< control points
    size_t var = 0;             ///< first level variable: (width-1)/2 columns, then (height-1)/2 rows
};

struct EdgeKey {
    std::array<uint32_t, 9> bits;
    uint32_t var;
};

class UnionFind {
public:
    explicit UnionFind(size_t n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), size_t(0)); }
    size_t find(size_t x) {
        while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
        return x;
    }
    void unite(size_t a, size_t b) {
        a = find(a);
        b = find(b);
        if (a != b) parent_[std::max(a, b)] = std::min(a, b);
    }

private:
    std::vector<size_t> parent_;
};

// ---------------------------------------------------------------------------

class Builder {
public:
    Builder(const Bsp& bsp, const model::BuildOptions& options, model::Map& out)
        : bsp_(bsp), view_(bsp), options_(options), out_(out) {}

    void run() {
        shaders_ = view_.shaders();
        verts_ = view_.vertexes();
        meshverts_ = view_.meshverts();
        surfaces_ = view_.surfaces();
        rtcw_ = bsp_.version().value_or(46) == 47;
        materials();
        if (options_.lightmaps) lightmaps();
        const auto models = view_.models();
        const size_t count = options_.all_models ? models.size() : std::min<size_t>(models.size(), 1);
        validate(models, count);
        plan_levels();
        // Every face of every model, in the models' order; patches numbered in that
        // order (validate() planned them so). The faces are built on every core, in
        // chunks with scratch of their own; each lands in its slot, so the model is
        // the same whatever the thread count.
        struct Job {
            model::Surface* slot;
            size_t face, patch;
            uint32_t model, surface;
        };
        std::vector<Job> jobs;
        size_t patch_number = 0;
        const size_t first_model = out_.models.size();
        out_.models.resize(first_model + count);
        for (size_t m = 0; m < count; ++m) {
            model::Model& model = out_.models[first_model + m];
            model.index = uint32_t(m);
            for (int32_t k = 0; k < models[m].numSurfaces; ++k) {
                const size_t face = size_t(models[m].firstSurface) + size_t(k);
                const bool patch = surfaces_[face].surfaceType == MST_PATCH;
                if (!wanted(surfaces_[face].surfaceType)) continue;
                jobs.push_back({nullptr, face, patch ? patch_number++ : 0, uint32_t(m), uint32_t(model.surfaces.size())});
                model.surfaces.emplace_back();
            }
        }
        for (Job& job : jobs) job.slot = &out_.models[first_model + job.model].surfaces[job.surface];  // sized now
        // The first face's error in the models' order is thrown, as built one by one.
        bspkit::detail::parallel_chunks(jobs.size(), 64, 0, [&](size_t begin, size_t end) {
            Scratch scratch;
            for (size_t j = begin; j < end; ++j) *jobs[j].slot = surface(jobs[j].face, jobs[j].patch, scratch);
        });
        // No pages at all: q3map2 -external wrote them as images beside the map,
        // which textures::resolve() can find (model::ExternalLightmaps).
        const bool external = pages_ == 0;
        for (const Job& job : jobs) {
            const dsurface_t& d = surfaces_[job.face];
            if (d.surfaceType != MST_FLARE && d.lightmapNum >= 0 && size_t(d.lightmapNum) >= pages_ && options_.lightmaps) {
                if (missing_.count++ == 0) missing_.first = job.face;
                if (external && !job.slot->vertices.empty())
                    out_.external_lightmaps.uses.push_back({job.model, job.surface, uint32_t(d.lightmapNum)});
            }
        }
        if (missing_.count > 0) {
            const std::string what =
                external ? "the lightmaps lump is empty (lightmaps kept outside the map, q3map2 -external: maps/" +
                               map_name() + "/lm_NNNN.tga in the game folders, --game-dir)"
                         : "the lightmaps lump has " + str(int64_t(pages_)) + " pages";
            if (!out_.external_lightmaps.empty()) {
                out_.external_lightmaps.folder = "maps/" + map_name();
                out_.external_lightmaps.diagnostic = int64_t(out_.diagnostics.size());
            }
            out_.diagnostics.push_back(
                {Severity::warning, "faces",
                 int64_t(bsp_.entry(Map::LUMP_SURFACES).offset) + int64_t(missing_.first * sizeof(dsurface_t)),
                 str(int64_t(missing_.count)) + " faces (the first: face " + str(int64_t(missing_.first)) +
                     ") name a lightmap page, but " + what + ": built without lightmap"});
        }
    }

private:
    Error error(size_t lump, int64_t record, std::string detail) const {
        const int64_t offset =
            record < 0 ? -1 : int64_t(bsp_.entry(lump).offset) + record * int64_t(bsp_.record_size(lump));
        return Error({bsp_.file_name(), std::string(bsp_.lump_name(lump)), offset}, std::move(detail));
    }

    static std::string str(int64_t v) { return std::to_string(v); }

    /// Whether options_.kinds asks for faces of this surfaceType (with every
    /// kind asked for, all are, so that an unknown type is still an error).
    bool wanted(int32_t type) const {
        if (options_.kinds == ~0u) return true;
        const auto kind = type == MST_PLANAR ? model::SurfaceKind::polygon
                          : type == MST_PATCH ? model::SurfaceKind::patch
                          : type == MST_FLARE ? model::SurfaceKind::billboard
                          : type == MST_TRIANGLE_SOUP || (rtcw_ && type == MST_FOLIAGE) ? model::SurfaceKind::mesh
                                                                                         : std::optional<model::SurfaceKind>{};
        return kind && (options_.kinds & model::kind_bit(*kind));
    }

    /// The map's name as the engines take it: the file's name without its extension.
    std::string map_name() const { return std::filesystem::path(bsp_.file_name()).stem().string(); }

    void materials() {
        out_.materials.reserve(out_.materials.size() + shaders_.size());
        for (const dshader_t& s : shaders_) {
            model::Material m;
            m.name = shader_name(s);
            m.flags = material_flags(m.name, uint32_t(s.surfaceFlags), uint32_t(s.contentFlags), rtcw_);
            out_.materials.push_back(std::move(m));
        }
    }

    void lightmaps() {
        const ByteSpan lump = bsp_.decoded(Map::LUMP_LIGHTMAPS);
        pages_ = lump.size() / sizeof(dlightmap_t);
        first_image_ = out_.lightmap_images.size();
        out_.lightmap_images.reserve(first_image_ + pages_);
        for (size_t p = 0; p < pages_; ++p) {
            model::LightmapImage img;
            img.width = LIGHTMAP_WIDTH;
            img.height = LIGHTMAP_HEIGHT;
            const uint8_t* src = lump.data() + p * sizeof(dlightmap_t);
            img.styles.emplace_back(src, src + sizeof(dlightmap_t));
            out_.lightmap_images.push_back(std::move(img));
        }
    }

    /// Every reference the geometry needs, before anything is allocated for it.
    void validate(std::span<const dmodel_t> models, size_t count) {
        // q3map2 shares meshvert runs between faces (one "0 1 2 0 2 3" for
        // every quad), so faces legitimately copy many more meshverts than the
        // lump holds, but never a vertex twice: the budgets allow each vertex
        // twice and 16 meshverts per vertex copied (the corpus: at most 2.3).
        uint64_t copied_verts = 0, copied_indexes = 0;
        const uint64_t vert_budget = 2 * uint64_t(verts_.size()) + 65536;
        const int last_type = rtcw_ ? MST_FOLIAGE : MST_FLARE;
        for (size_t m = 0; m < count; ++m) {
            const dmodel_t& d = models[m];
            if (d.firstSurface < 0 || d.numSurfaces < 0 || int64_t(d.firstSurface) + d.numSurfaces > int64_t(surfaces_.size()))
                throw error(Map::LUMP_MODELS, int64_t(m),
                            "model " + str(int64_t(m)) + ": faces " + str(d.firstSurface) + " + " + str(d.numSurfaces) +
                                " leave the " + str(int64_t(surfaces_.size())) + " faces");
            for (int32_t k = 0; k < d.numSurfaces; ++k) {
                const size_t i = size_t(d.firstSurface) + size_t(k);
                const dsurface_t& s = surfaces_[i];
                const int64_t rec = int64_t(i);
                if (!wanted(s.surfaceType)) continue;  // unread, as CMod_LoadPatches skips all but patches
                if (s.shaderNum < 0 || size_t(s.shaderNum) >= shaders_.size())
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": shaderNum " + str(s.shaderNum) + " is not one of the " +
                                    str(int64_t(shaders_.size())) + " textures");
                if (s.surfaceType < MST_PLANAR || s.surfaceType > last_type)
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": surfaceType " + str(s.surfaceType) + " is not 1-" +
                                    str(last_type));
                if (s.surfaceType == MST_FLARE) continue;
                if (s.firstVert < 0 || s.numVerts < 0 || int64_t(s.firstVert) + s.numVerts > int64_t(verts_.size()))
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": vertexes " + str(s.firstVert) + " + " + str(s.numVerts) +
                                    " leave the " + str(int64_t(verts_.size())) + " vertexes");
                if (s.surfaceType == MST_PATCH) {
                    const bool odd = s.patchWidth >= 3 && s.patchHeight >= 3 && (s.patchWidth & 1) && (s.patchHeight & 1);
                    if (!odd || int64_t(s.patchWidth) * s.patchHeight != s.numVerts)
                        throw error(Map::LUMP_SURFACES, rec,
                                    "face " + str(rec) + ": patch of " + str(s.patchWidth) + " x " + str(s.patchHeight) +
                                        " control points with numVerts " + str(s.numVerts) +
                                        " (width and height odd and >= 3, numVerts = width x height)");
                    patches_.push_back({i, s.patchWidth, s.patchHeight, 0});
                    continue;
                }
                if (s.firstIndex < 0 || s.numIndexes < 0 ||
                    int64_t(s.firstIndex) + s.numIndexes > int64_t(meshverts_.size()))
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": meshverts " + str(s.firstIndex) + " + " + str(s.numIndexes) +
                                    " leave the " + str(int64_t(meshverts_.size())) + " meshverts");
                if (s.numIndexes % 3)
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": numIndexes " + str(s.numIndexes) + " is not a multiple of 3");
                copied_verts += uint64_t(s.numVerts);
                copied_indexes += uint64_t(s.numIndexes);
                if (copied_verts > vert_budget)
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": the faces of the models overlap: more than twice the " +
                                    str(int64_t(verts_.size())) + " vertexes of the map would be copied");
                if (copied_indexes > 16 * copied_verts + 65536)
                    throw error(Map::LUMP_SURFACES, rec,
                                "face " + str(rec) + ": the faces so far name " + str(int64_t(copied_indexes)) +
                                    " meshverts for " + str(int64_t(copied_verts)) + " vertexes (more than 16 each)");
                for (int32_t j = 0; j < s.numIndexes; ++j) {
                    const int32_t o = meshverts_[size_t(s.firstIndex) + size_t(j)].offset;
                    if (o < 0 || o >= s.numVerts)
                        throw error(Map::LUMP_DRAWINDEXES, int64_t(s.firstIndex) + j,
                                    "meshvert " + str(int64_t(s.firstIndex) + j) + " of face " + str(rec) + ": offset " +
                                        str(o) + " is outside its " + str(s.numVerts) + " vertexes");
                }
            }
        }
    }

    const drawVert_t& control(const PatchPlan& p, int i, int j) const {
        return verts_[size_t(surfaces_[p.face].firstVert) + size_t(j) * size_t(p.width) + size_t(i)];
    }

    /// Chooses the segments of every patch column and row (see geometry.hpp).
    void plan_levels() {
        size_t vars = 0;
        for (PatchPlan& p : patches_) {
            p.var = vars;
            vars += size_t((p.width - 1) / 2 + (p.height - 1) / 2);
        }
        levels_.assign(vars, 1);
        if (options_.patch_level >= 0) {
            std::fill(levels_.begin(), levels_.end(), uint8_t(std::clamp(options_.patch_level, 1, kMaxPatchLevel)));
        } else {
            adaptive_levels(vars);
        }
        uint64_t total = 0;
        for (const PatchPlan& p : patches_) {
            total += uint64_t(grid_size(p, true)) * grid_size(p, false);
            if (total > kMaxPatchVertices)
                throw error(Map::LUMP_SURFACES, int64_t(p.face),
                            "face " + str(int64_t(p.face)) + ": the patches would tessellate to more than " +
                                str(int64_t(kMaxPatchVertices)) + " vertexes");
        }
    }

    void adaptive_levels(size_t vars) {
        std::vector<EdgeKey> edges;
        auto pos = [](const drawVert_t& v) { return Vec3{v.xyz[0], v.xyz[1], v.xyz[2]}; };
        auto add_edge = [&](const drawVert_t& a, const drawVert_t& b, const drawVert_t& c, size_t var) {
            std::array<uint32_t, 9> fwd, rev;
            const drawVert_t* pts[3] = {&a, &b, &c};
            for (int k = 0; k < 3; ++k)
                for (int x = 0; x < 3; ++x) {
                    fwd[size_t(3 * k + x)] = bits(pts[k]->xyz[x]);
                    rev[size_t(3 * (2 - k) + x)] = bits(pts[k]->xyz[x]);
                }
            if (std::equal(fwd.begin(), fwd.begin() + 3, fwd.begin() + 3) &&
                std::equal(fwd.begin(), fwd.begin() + 3, fwd.begin() + 6))
                return;  // a collapsed edge is one point at any level
            edges.push_back({std::min(fwd, rev), uint32_t(var)});
        };
        for (const PatchPlan& p : patches_) {
            const int nu = (p.width - 1) / 2, nv = (p.height - 1) / 2;
            for (int c = 0; c < nu; ++c) {  // columns: curves along u
                int level = 1;
                for (int j = 0; j < p.height; ++j) {
                    const Vec3 d = pos(control(p, 2 * c, j)) - pos(control(p, 2 * c + 1, j)) * 2.0f +
                                   pos(control(p, 2 * c + 2, j));
                    level = std::max(level, adaptive_level(model::length(d)));
                    if ((j & 1) == 0)
                        add_edge(control(p, 2 * c, j), control(p, 2 * c + 1, j), control(p, 2 * c + 2, j),
                                 p.var + size_t(c));
                }
                levels_[p.var + size_t(c)] = uint8_t(level);
            }
            for (int r = 0; r < nv; ++r) {  // rows: curves along v
                int level = 1;
                for (int i = 0; i < p.width; ++i) {
                    const Vec3 d = pos(control(p, i, 2 * r)) - pos(control(p, i, 2 * r + 1)) * 2.0f +
                                   pos(control(p, i, 2 * r + 2));
                    level = std::max(level, adaptive_level(model::length(d)));
                    if ((i & 1) == 0)
                        add_edge(control(p, i, 2 * r), control(p, i, 2 * r + 1), control(p, i, 2 * r + 2),
                                 p.var + size_t(nu + r));
                }
                levels_[p.var + size_t(nu + r)] = uint8_t(level);
            }
        }
        // Columns and rows holding the same curve take the largest level of their group.
        std::sort(edges.begin(), edges.end(), [](const EdgeKey& a, const EdgeKey& b) { return a.bits < b.bits; });
        UnionFind groups(vars);
        for (size_t i = 1; i < edges.size(); ++i)
            if (edges[i].bits == edges[i - 1].bits) groups.unite(edges[i].var, edges[i - 1].var);
        std::vector<uint8_t> best(vars, 1);
        for (size_t v = 0; v < vars; ++v) best[groups.find(v)] = std::max(best[groups.find(v)], levels_[v]);
        for (size_t v = 0; v < vars; ++v) levels_[v] = best[groups.find(v)];
    }

    /// Vertices of the patch grid along u (columns) or v (rows).
    uint32_t grid_size(const PatchPlan& p, bool along_u) const {
        const int n = along_u ? (p.width - 1) / 2 : (p.height - 1) / 2;
        const size_t first = p.var + (along_u ? 0 : size_t((p.width - 1) / 2));
        uint32_t size = 1;
        for (int k = 0; k < n; ++k) size += levels_[first + size_t(k)];
        return size;
    }

    /// Per-thread working memory of surface().
    struct Scratch {
        std::vector<Attr> ctrl, q;
        std::vector<Vec3> qd;
        TriangleFilter filter;
    };

    /// Face i as a surface (`patch`: its number among the patches, for patches).
    /// Reads the builder, writes only `scratch` (faces are built on several threads).
    model::Surface surface(size_t i, size_t patch_number, Scratch& scratch) const {
        const dsurface_t& d = surfaces_[i];
        model::Surface s;
        s.face = int64_t(i);
        s.material = uint32_t(d.shaderNum);
        switch (d.surfaceType) {
            case MST_FLARE: billboard(d, s); return s;
            case MST_PATCH: s.kind = model::SurfaceKind::patch; patch(patch_number, s, scratch); break;
            case MST_PLANAR: s.kind = model::SurfaceKind::polygon; triangles(d, s); break;
            default: s.kind = model::SurfaceKind::mesh; triangles(d, s); break;  // soup, RTCW foliage
        }
        if (d.lightmapNum >= 0 && size_t(d.lightmapNum) < pages_) {
            s.lightmap = int32_t(first_image_ + size_t(d.lightmapNum));
            s.styles = {0, 255, 255, 255};
        }
        scratch.filter.dedupe(s.vertices, s.indices);
        return s;
    }

    static void billboard(const dsurface_t& d, model::Surface& s) {
        s.kind = model::SurfaceKind::billboard;
        Vertex v;
        v.position = {d.lightmapOrigin[0], d.lightmapOrigin[1], d.lightmapOrigin[2]};
        v.normal = {d.lightmapVecs[2][0], d.lightmapVecs[2][1], d.lightmapVecs[2][2]};
        for (int k = 0; k < 3; ++k) v.color[size_t(k)] = to_byte(d.lightmapVecs[0][k] * 255.0f);
        s.vertices.push_back(v);
    }

    void triangles(const dsurface_t& d, model::Surface& s) const {
        s.vertices.resize(size_t(d.numVerts));
        for (int32_t k = 0; k < d.numVerts; ++k) {
            const drawVert_t& src = verts_[size_t(d.firstVert) + size_t(k)];
            Vertex& v = s.vertices[size_t(k)];
            v.position = {src.xyz[0], src.xyz[1], src.xyz[2]};
            v.normal = {src.normal[0], src.normal[1], src.normal[2]};
            v.uv = {src.st[0], src.st[1]};
            v.lightmap_uv = {src.lightmap[0], src.lightmap[1]};
            std::memcpy(v.color.data(), src.color, 4);
        }
        s.indices.reserve(size_t(d.numIndexes));
        const dmeshvert_t* mv = meshverts_.data() + d.firstIndex;
        for (int32_t k = 0; k + 2 < d.numIndexes; k += 3)
            TriangleFilter::add(s.vertices, s.indices, uint32_t(mv[k].offset), uint32_t(mv[k + 1].offset),
                                uint32_t(mv[k + 2].offset));
        if (d.surfaceType == MST_PLANAR) {
            const Vec3 n{d.lightmapVecs[2][0], d.lightmapVecs[2][1], d.lightmapVecs[2][2]};
            if (d.numVerts > 0 && std::abs(model::length(n) - 1.0) < 1e-3)
                s.plane = model::Plane{n, float(model::dot(n, s.vertices[0].position))};
        }
    }

    void patch(size_t index, model::Surface& s, Scratch& scratch) const {
        std::vector<Attr>& ctrl = scratch.ctrl;
        std::vector<Attr>& q = scratch.q;
        std::vector<Vec3>& qd = scratch.qd;
        const PatchPlan& p = patches_[index];
        const int w = p.width, nu = (w - 1) / 2, nv = (p.height - 1) / 2;
        const uint8_t* lu = levels_.data() + p.var;
        const uint8_t* lv = lu + nu;
        const uint32_t W = grid_size(p, true), H = grid_size(p, false);
        ctrl.resize(size_t(w) * size_t(p.height));
        for (size_t k = 0; k < ctrl.size(); ++k) ctrl[k] = to_attr(verts_[size_t(surfaces_[p.face].firstVert) + k]);
        q.resize(size_t(w));
        qd.resize(size_t(w));
        s.vertices.resize(size_t(W) * H);
        uint32_t y = 0;
        for (int r = 0; r < nv; ++r) {
            const auto& bv = basis(lv[r]);
            const int rows = r + 1 == nv ? lv[r] + 1 : lv[r];  // a row's last line is the next row's first
            for (int j = 0; j < rows; ++j, ++y) {
                for (int k = 0; k < w; ++k) {  // the control columns at this v, and their v derivative
                    const Attr& a = ctrl[size_t(2 * r) * size_t(w) + size_t(k)];
                    const Attr& b = ctrl[size_t(2 * r + 1) * size_t(w) + size_t(k)];
                    const Attr& c = ctrl[size_t(2 * r + 2) * size_t(w) + size_t(k)];
                    sym_attr(bv[size_t(j)].b, a, b, c, q[size_t(k)]);
                    qd[size_t(k)] = sym_pos_d(bv[size_t(j)].d, a, b, c);
                }
                uint32_t x = 0;
                for (int c = 0; c < nu; ++c) {
                    const auto& bu = basis(lu[c]);
                    const int cols = c + 1 == nu ? lu[c] + 1 : lu[c];
                    const Attr& a = q[size_t(2 * c)];
                    const Attr& b = q[size_t(2 * c + 1)];
                    const Attr& e = q[size_t(2 * c + 2)];
                    for (int i = 0; i < cols; ++i, ++x) {
                        const Weights& wu = bu[size_t(i)];
                        Attr v;
                        sym_attr(wu.b, a, b, e, v);
                        const Vec3 du = sym_pos_d(wu.d, a, b, e);
                        const Vec3 dv = sym_vec(wu.b, qd[size_t(2 * c)], qd[size_t(2 * c + 1)], qd[size_t(2 * c + 2)]);
                        store(v, du, dv, s.vertices[size_t(y) * W + x]);
                    }
                }
            }
        }
        // Quake 3's grid order (tr_surface.c RB_SurfaceGrid): clockwise seen from the normal, like the polygons.
        s.indices.reserve(size_t(W - 1) * (H - 1) * 6);
        for (uint32_t row = 0; row + 1 < H; ++row)
            for (uint32_t col = 0; col + 1 < W; ++col) {
                const uint32_t v2 = row * W + col, v1 = v2 + 1, v3 = v2 + W, v4 = v3 + 1;
                TriangleFilter::add(s.vertices, s.indices, v2, v3, v1);
                TriangleFilter::add(s.vertices, s.indices, v1, v3, v4);
            }
    }

    /// One tessellated vertex: the interpolated attributes, the normal from
    /// the derivatives (the interpolated control normals where they vanish).
    static void store(const Attr& a, Vec3 du, Vec3 dv, Vertex& out) {
        out.position = {a[0], a[1], a[2]};
        const Vec3 n = model::cross(du, dv);
        const double n2 = model::dot(n, n);
        if (n2 > 0 && n2 > 1e-12 * model::dot(du, du) * model::dot(dv, dv))
            out.normal = n * float(1.0 / std::sqrt(n2));
        else
            out.normal = model::normalized({a[3], a[4], a[5]});
        out.uv = {a[6], a[7]};
        out.lightmap_uv = {a[8], a[9]};
        for (size_t k = 0; k < 4; ++k) out.color[k] = to_byte(a[10 + k]);
    }

    const Bsp& bsp_;
    const Map view_;
    const model::BuildOptions& options_;
    model::Map& out_;
    bool rtcw_ = false;
    std::span<const dshader_t> shaders_;
    std::span<const drawVert_t> verts_;
    std::span<const dmeshvert_t> meshverts_;
    std::span<const dsurface_t> surfaces_;
    size_t pages_ = 0, first_image_ = 0;
    std::vector<PatchPlan> patches_;  ///< in the order the models reference them
    std::vector<uint8_t> levels_;  ///< per patch column, then row
    struct {
        size_t count = 0, first = 0;
    } missing_;  ///< faces naming a lightmap page the file does not hold
};

}  // namespace

int adaptive_level(double second_difference) {
    // A quadratic's second derivative is 2 (P0 - 2 P1 + P2); the chords of L
    // equal steps stray at most |P0 - 2 P1 + P2| / (4 L^2) from it.
    if (!(second_difference > 0)) return 1;
    const double l = std::ceil(std::sqrt(second_difference / (4 * kPatchTolerance)));
    return int(std::clamp(l, 1.0, double(kAdaptiveMaxLevel)));
}

void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map) {
    Builder(bsp, options, map).run();
}

}  // namespace bspkit::quake3
