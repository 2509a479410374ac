// Source (VBSP 17-23, big-endian PSBV, L4D2 lump order) geometry for the
// engine-neutral model: one surface per face of every dmodel_t, displacements
// tessellated like the engine does (normals smoothed within each one and across
// the seams where displacements meet), lightmaps decoded from ColorRGBExp32
// and static props from the 'sprp' game lump.
//
// Conventions:
//   * Triangles wind counter-clockwise seen from the front: cross(b - a, c - a)
//     points along the surface's plane normal. Source stores face windings
//     clockwise (like Quake), so they are reversed here.
//   * The plane is dplanes[planenum] as stored. Source writes each face's own
//     plane (the odd plane of a pair for back faces) and `side` is just
//     planenum & 1: on every corpus map both hold, every face winds
//     clockwise around its stored normal and the vrad vertex normals point
//     along it. Flipping by `side` would turn half the faces inside out.
//   * Faces with primitives (dprimitive_t, numPrims > 0) use the primitive's
//     triangle list over the face's corners, as the engine does (vbsp emits
//     them to triangulate faces with T-junction vertices); other faces are
//     fan-triangulated. Triangles whose area seen along the plane normal is
//     below kMinTriangleArea (collinear T-junction runs, also when welding
//     moved a corner slightly off the plane) and repeats of an earlier
//     triangle of the same face (faces that walk back over their corners)
//     are dropped. Faces that collapsed to a line keep an empty surface.
//   * Lightmap texels: linear = c * 2^exponent / 255 (the engine's
//     TexLightToLinear), then screen gamma linear^(1/2.2), clamped to 0..1
//     and scaled to 0..255. This is what the engine shows with its default
//     overbright of 2 (it stores half that value and doubles it in the
//     shader), except that values above 1.0 saturate. Bumpmapped faces
//     (SURF_BUMPLIGHT) store four lightmaps per style; the first, the flat
//     (non-directional) one, is used. lightofs is a byte offset and need not
//     be aligned: CS:GO-branch maps store extra bytes per luxel after each
//     face's samples (ar_monastery one, env_gunfire_test four), so there only
//     the first style's position is certain; further styles are read at the
//     standard stride (every corpus CS:GO face has one style).
//   * Lighting comes from the LDR lump when it has data, else from the HDR
//     lump (Left 4 Dead 2, CS:GO, consoles); BuildOptions::hdr_lightmaps
//     prefers the HDR lump when both have data. HDR offsets come from
//     faces_hdr when that lump pairs with faces (else vrad wrote both lumps
//     with the same layout); Map::lightmap_source names the lump used.
#include "../../model/builders.hpp"
#include "../../core/parallel.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <array>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace bspkit::source {
namespace {

using model::Vec2;
using model::Vec3;

/// Triangles of planar faces whose area seen along the face normal is
/// smaller than this (square units) are dropped.
constexpr double kMinTriangleArea = 1e-3;

/// texinfo_t::flags bits not named in source.hpp.
constexpr uint32_t SURF_WARP = 0x8, SURF_TRANS = 0x10, SURF_TRIGGER = 0x40, SURF_HINT = 0x100, SURF_SKIP = 0x200;

Vec3 vec(const Vector& v) { return {v.x, v.y, v.z}; }

double dot4(const float (&axis)[4], Vec3 p) { return double(axis[0]) * p.x + double(axis[1]) * p.y + double(axis[2]) * p.z + axis[3]; }

/// MaterialFlag bits from texinfo flags and the material name. Names patched
/// by cubemap building ("maps/<map>/<material>_X_Y_Z") keep their folder, so
/// the "tools/" test looks past a "maps/<map>/" prefix.
uint32_t material_flags(uint32_t surf, std::string_view name) {
    uint32_t flags = 0;
    if (surf & (SURF_SKY | SURF_SKY2D)) flags |= model::kSky;
    if (surf & (SURF_NODRAW | SURF_HINT | SURF_SKIP)) flags |= model::kNodraw;
    if (surf & SURF_TRANS) flags |= model::kTranslucent;
    if (surf & SURF_WARP) flags |= model::kWater;
    if (surf & SURF_TRIGGER) flags |= model::kTrigger;
    if (surf & SURF_NOLIGHT) flags |= model::kUnlit;
    std::string n = ascii_lower(name);
    if (n.starts_with("maps/")) {
        const size_t slash = n.find('/', 5);
        if (slash != std::string::npos) n = n.substr(slash + 1);
    }
    if (!n.starts_with("tools/")) return flags;
    const std::string_view t = std::string_view(n).substr(6);
    auto has = [&](std::string_view part) { return t.find(part) != std::string_view::npos; };
    if (t.starts_with("toolsskybox") || t.starts_with("toolsskyfog")) {
        flags |= model::kSky;
    } else if (has("clip") || t.starts_with("toolsinvisible")) {
        flags |= model::kClip | model::kNodraw;
    } else if (has("trigger")) {
        flags |= model::kTrigger | model::kNodraw;
    } else if (t.starts_with("toolsnodraw") || t.starts_with("toolsskip") || t.starts_with("toolshint") ||
               t.starts_with("toolsorigin") || t.starts_with("toolsareaportal") || t.starts_with("toolsoccluder") ||
               t.starts_with("toolsblock") || t.starts_with("toolsfog")) {
        flags |= model::kNodraw;
    }
    return flags;
}

/// One ColorRGBExp32 sample to 8 bits per channel (see the file comment). The
/// 256 answers of an exponent are worked out the first time a map uses it (a
/// map uses a few dozen; a pow() per channel of every sample was a tenth of a
/// Source export). (v 2^e / 255)^(1/2.2) is worked out as (v / 255)^(1/2.2),
/// a table made once, times (2^e)^(1/2.2): one pow() per exponent instead of
/// 256 (half a millisecond of a process). The bytes are the same for every
/// exponent and value: all 65,536 pairs were compared with the direct form.
std::array<uint8_t, 3> to_rgb8(const ColorRGBExp32& c) {
    struct Rows {
        std::array<std::array<uint8_t, 256>, 256> value;
        std::array<bool, 256> filled{};
        std::array<double, 256> base;  ///< (v / 255)^(1/2.2)
    };
    thread_local std::unique_ptr<Rows> rows;
    if (!rows) {
        rows = std::make_unique<Rows>();
        for (int v = 0; v < 256; ++v) rows->base[size_t(v)] = std::pow(v / 255.0, 1.0 / 2.2);
    }
    const size_t e = uint8_t(c.exponent);
    std::array<uint8_t, 256>& row = rows->value[e];
    if (!rows->filled[e]) {
        const double scale = std::pow(std::ldexp(1.0, c.exponent), 1.0 / 2.2);
        for (int v = 0; v < 256; ++v) {
            const double shown = std::min(1.0, rows->base[size_t(v)] * scale);
            row[size_t(v)] = uint8_t(std::lround(shown * 255.0));
        }
        rows->filled[e] = true;
    }
    return {row[c.r], row[c.g], row[c.b]};
}

class Builder {
    using TriangleKey = std::array<std::array<float, 3>, 3>;  ///< a triangle's corners, sorted
    /// build_face()'s working vectors, one set per thread (their capacity kept
    /// from face to face).
    struct Scratch {
        std::vector<uint32_t> corner, prim_index;
        std::vector<std::array<uint32_t, 3>> tris;
        std::vector<TriangleKey> seen;
    };

public:
    Builder(const Bsp& bsp, const model::BuildOptions& options, model::Map& out)
        : bsp_(bsp), m_(bsp), options_(options), out_(out) {}

    void run() {
        decode_ahead();
        choose_face_lumps();
        index_vertex_normals();
        const auto models = m_.models();
        const size_t n_models = options_.all_models ? models.size() : std::min<size_t>(models.size(), 1);
        out_.models.reserve(n_models);
        for (size_t mi = 0; mi < n_models; ++mi) build_model(mi, models[mi]);
        read_props();
    }

private:
    // --- errors --------------------------------------------------------------

    [[noreturn]] void fail(size_t lump, int64_t record, const std::string& detail) const {
        const LumpLayout layout = m_.layout_of(lump);
        int64_t offset = bsp_.entry(lump).offset;
        if (record >= 0 && layout.size > 0) offset += record * int64_t(layout.size);
        throw Error({bsp_.file_name(), std::string(bsp_.lump_name(lump)), offset}, detail);
    }

    std::string face_name(size_t fi) const { return std::string(bsp_.lump_name(face_lump_)) + " record " + std::to_string(fi); }

    // --- setup ---------------------------------------------------------------

    /// The lighting lump choose_face_lumps() takes lightmaps from: the LDR
    /// lump when it has data (unless hdr_lightmaps), else the HDR lump; none
    /// when neither has data or lightmaps are not wanted. Decodes nothing.
    std::optional<size_t> light_lump() const {
        if (!options_.lightmaps) return std::nullopt;
        const bool has_ldr = bsp_.decoded_length(lump::lighting) > 0;
        const bool has_hdr = bsp_.decoded_length(lump::lighting_hdr) > 0;
        if (has_ldr && !(options_.hdr_lightmaps && has_hdr)) return lump::lighting;
        if (has_hdr) return lump::lighting_hdr;
        return std::nullopt;
    }

    /// The LZMA-compressed lumps (console maps, some PC maps) this build reads,
    /// decoded on every core first instead of one after another as the build
    /// asks for them: on x360_shack, the HDR lighting alone is 246 KB of the
    /// 0.4 MB decoded, and liblzma was over half of the export's time.
    void decode_ahead() const {
        std::vector<size_t> lumps{lump::entities,  lump::planes,   lump::texdata,    lump::vertexes,
                                  lump::texinfo,   lump::faces,    lump::edges,      lump::surfedges,
                                  lump::models,    lump::dispinfo, lump::disp_verts, lump::vertnormals,
                                  lump::vertnormalindices, lump::primitives, lump::primindices,
                                  lump::texdata_string_data, lump::texdata_string_table};
        const std::optional<size_t> light = light_lump();
        if (light) lumps.push_back(*light);
        if (bsp_.decoded_length(lump::faces) == 0 || light == lump::lighting_hdr) lumps.push_back(lump::faces_hdr);
        bsp_.decode_ahead(lumps);
    }

    /// The faces models index (faces, or faces_hdr in HDR-only console maps)
    /// and where lightmaps come from: the LDR lump when it has data (unless
    /// hdr_lightmaps), else the HDR lump, whose offsets live in faces_hdr when
    /// that lump pairs with faces.
    void choose_face_lumps() {
        faces_ = m_.world_faces();
        face_lump_ = m_.world_face_lump();
        const std::optional<size_t> light = light_lump();
        if (!light) return;
        light_lump_ = *light;
        light_ = bsp_.decoded(light_lump_);
        if (light_lump_ == lump::lighting_hdr && m_.faces_hdr().size() == faces_.size()) {
            light_faces_ = m_.faces_hdr();
            light_face_lump_ = lump::faces_hdr;
        } else {
            light_faces_ = faces_;
            light_face_lump_ = face_lump_;
        }
        out_.lightmap_source = std::string(bsp_.lump_name(light_lump_));
    }

    /// vrad writes one vertex normal index per face corner, faces in order.
    /// When the count does not match (`bspkit check` reports it) the plane
    /// normals are used instead.
    void index_vertex_normals() {
        const auto vni = m_.vertnormalindices();
        if (vni.empty() || m_.vertnormals().empty()) return;
        std::vector<uint32_t> first(faces_.size());
        uint64_t at = 0;
        for (size_t i = 0; i < faces_.size(); ++i) {
            first[i] = uint32_t(std::min<uint64_t>(at, UINT32_MAX));
            at += uint64_t(std::max<int>(0, faces_[i].numedges));
        }
        if (at != vni.size()) return;
        vn_first_ = std::move(first);
    }

    // --- materials -----------------------------------------------------------

    uint32_t material(int32_t texinfo_index, size_t fi) {
        const auto texinfo = m_.texinfo();
        if (texinfo_index < -1 || (texinfo_index >= 0 && size_t(texinfo_index) >= texinfo.size()))
            fail(face_lump_, int64_t(fi),
                 face_name(fi) + ": texinfo " + std::to_string(texinfo_index) + " is outside the " +
                     std::to_string(texinfo.size()) + " records of texinfo");
        if (material_of_texinfo_.empty()) material_of_texinfo_.assign(texinfo.size() + 1, -1);
        int64_t& cached = material_of_texinfo_[size_t(texinfo_index + 1)];
        if (cached >= 0) return uint32_t(cached);
        model::Material mat;
        if (texinfo_index < 0) {
            mat.flags = model::kNodraw;  // no texture information: nothing to draw
        } else {
            const texinfo_t& ti = texinfo[size_t(texinfo_index)];
            if (ti.texdata >= 0) {
                const auto texdata = m_.texdata();
                if (size_t(ti.texdata) >= texdata.size())
                    fail(lump::texinfo, texinfo_index,
                         "texinfo " + std::to_string(texinfo_index) + ": texdata " + std::to_string(ti.texdata) +
                             " is outside the " + std::to_string(texdata.size()) + " records of texdata");
                const dtexdata_t& td = texdata[size_t(ti.texdata)];
                const std::optional<std::string_view> name = m_.texture_name(size_t(ti.texdata));
                if (!name)
                    fail(lump::texdata, ti.texdata,
                         "texdata " + std::to_string(ti.texdata) + ": nameStringTableID " +
                             std::to_string(td.nameStringTableID) + " does not lead to a terminated name");
                mat.name = std::string(*name);
                mat.width = uint32_t(std::max(0, td.width));
                mat.height = uint32_t(std::max(0, td.height));
                mat.reflectivity = Vec3{td.reflectivity.x, td.reflectivity.y, td.reflectivity.z};
            }
            mat.flags = material_flags(uint32_t(ti.flags), mat.name);
        }
        const auto key = std::make_tuple(mat.name, mat.flags, mat.width, mat.height);
        auto [it, added] = material_index_.try_emplace(key, uint32_t(out_.materials.size()));
        if (added) out_.materials.push_back(std::move(mat));
        cached = it->second;
        return it->second;
    }

    // --- faces ---------------------------------------------------------------

    /// Faces a model needs before its faces are built on every core (fewer
    /// are built on the calling thread: starting threads would cost more).
    static constexpr size_t kParallelFaces = 256;
    static constexpr size_t kChunk = 64;  ///< faces a thread takes at a time

    void build_model(size_t mi, const dmodel_t& md) {
        // An empty range references nothing, wherever it starts (check's rule too).
        if (md.numfaces != 0 &&
            (md.firstface < 0 || md.numfaces < 0 || uint64_t(md.firstface) + uint64_t(md.numfaces) > faces_.size()))
            fail(lump::models, int64_t(mi),
                 "model " + std::to_string(mi) + ": faces " + std::to_string(md.firstface) + " + " +
                     std::to_string(md.numfaces) + " run past the " + std::to_string(faces_.size()) + " records of " +
                     std::string(bsp_.lump_name(face_lump_)));
        model::Model model;
        model.index = uint32_t(mi);
        // The faces of the kinds asked for (options_.kinds), the others unread.
        std::vector<size_t> wanted;
        for (size_t fi = size_t(md.firstface), end = fi + size_t(md.numfaces); fi < end; ++fi)
            if (options_.kinds & model::kind_bit(is_displacement(faces_[fi]) ? model::SurfaceKind::displacement
                                                                             : model::SurfaceKind::polygon))
                wanted.push_back(fi);
        const size_t count = wanted.size();
        // Materials first, in face order (they are numbered as faces first name
        // them), up to the first face whose texinfo is broken: one face after
        // another, the faces before it would have been built, and it fails first.
        std::vector<uint32_t> materials(count);
        size_t built = count;
        std::exception_ptr material_error;
        for (size_t k = 0; k < count; ++k) {
            try {
                materials[k] = material(faces_[wanted[k]].texinfo, wanted[k]);
            } catch (...) {
                material_error = std::current_exception();
                built = k;
                break;
            }
        }
        // Then the faces, in chunks on every core, each with scratch of its own;
        // a face lands in its slot and its lightmap image beside it, so the model
        // is the same whatever the thread count. The first error in face order wins.
        model.surfaces.resize(built);
        std::vector<std::optional<model::LightmapImage>> images(built);
        bspkit::detail::parallel_chunks(built, kChunk, built >= kParallelFaces ? 0u : 1u, [&](size_t begin, size_t end) {
            Scratch scratch;
            for (size_t k = begin; k < end; ++k)
                model.surfaces[k] = build_face(wanted[k], materials[k], scratch, images[k]);
        });
        if (material_error) std::rethrow_exception(material_error);
        for (size_t k = 0; k < built; ++k)
            if (images[k]) {
                model.surfaces[k].lightmap = int32_t(out_.lightmap_images.size());
                out_.lightmap_images.push_back(std::move(*images[k]));
            }
        smooth_displacement_seams(model);
        out_.models.push_back(std::move(model));
    }

    /// Displacements that meet share the positions of their edge vertices
    /// (vbsp sews them); like vbsp's neighbour smoothing, the normal at such a
    /// position becomes the mean over every displacement touching it, so the
    /// shading has no seam. Positions are matched to the nearest 1/8 unit.
    static void smooth_displacement_seams(model::Model& model) {
        const auto key = [](Vec3 p) {
            const auto q = [](float v) { return std::isfinite(v) ? int64_t(std::llround(std::clamp(double(v) * 8, -1e15, 1e15))) : 0; };
            return std::array<int64_t, 3>{q(p.x), q(p.y), q(p.z)};
        };
        const auto on_border = [](size_t k, size_t side) {
            const size_t i = k / side, j = k % side;
            return i == 0 || j == 0 || i + 1 == side || j + 1 == side;
        };
        const auto side_of = [](const model::Surface& s) {
            size_t side = 0;
            while ((side + 1) * (side + 1) <= s.vertices.size()) ++side;
            return side * side == s.vertices.size() ? side : 0;
        };
        // Every border vertex with its position's key, in surface and vertex
        // order; sorted by key (stable: the order within a key stays), each
        // run of one key is one seam position, its normals summed in that order.
        struct Border {
            std::array<int64_t, 3> key;
            uint32_t surface, vertex;
        };
        std::vector<Border> border;
        for (size_t si = 0; si < model.surfaces.size(); ++si) {
            const model::Surface& s = model.surfaces[si];
            const size_t side = s.kind == model::SurfaceKind::displacement ? side_of(s) : 0;
            for (size_t k = 0; side && k < s.vertices.size(); ++k)
                if (on_border(k, side)) border.push_back({key(s.vertices[k].position), uint32_t(si), uint32_t(k)});
        }
        std::stable_sort(border.begin(), border.end(), [](const Border& a, const Border& b) { return a.key < b.key; });
        for (size_t run = 0; run < border.size();) {
            size_t end = run + 1;
            while (end < border.size() && border[end].key == border[run].key) ++end;
            Vec3 sum{};
            for (size_t i = run; i < end; ++i) sum = sum + model.surfaces[border[i].surface].vertices[border[i].vertex].normal;
            if (end - run > 1 && model::length(sum) > 1e-6)
                for (size_t i = run; i < end; ++i)
                    model.surfaces[border[i].surface].vertices[border[i].vertex].normal = model::normalized(sum);
            run = end;
        }
    }

    /// Whether face `f` is built as a displacement (version 17 has no dispinfo).
    bool is_displacement(const dface_t& f) const { return f.dispinfo != -1 && m_.version() > 17; }

    /// The face's corners as dvertex_t indices, in stored (clockwise) order.
    /// (Into the scratch's vector, reused face after face.)
    const std::vector<uint32_t>& corners(size_t fi, const dface_t& f, Scratch& scratch) const {
        const auto surfedges = m_.surfedges();
        const auto edges = m_.edges();
        const size_t n_verts = m_.vertexes().size();
        if (f.numedges < 3)
            fail(face_lump_, int64_t(fi), face_name(fi) + ": numedges " + std::to_string(f.numedges) + " is fewer than 3");
        if (f.firstedge < 0 || uint64_t(f.firstedge) + uint64_t(f.numedges) > surfedges.size())
            fail(face_lump_, int64_t(fi),
                 face_name(fi) + ": surfedges " + std::to_string(f.firstedge) + " + " + std::to_string(f.numedges) +
                     " run past the " + std::to_string(surfedges.size()) + " records of surfedges");
        std::vector<uint32_t>& out = scratch.corner;
        out.resize(size_t(f.numedges));
        for (int k = 0; k < f.numedges; ++k) {
            const int64_t se = surfedges[size_t(f.firstedge) + size_t(k)].edge;
            const uint64_t e = uint64_t(se < 0 ? -se : se);
            if (e >= edges.size())
                fail(lump::surfedges, f.firstedge + k,
                     "surfedge " + std::to_string(f.firstedge + k) + ": edge " + std::to_string(se) + " is outside the " +
                         std::to_string(edges.size()) + " records of edges");
            const uint16_t v = se >= 0 ? edges[e].v[0] : edges[e].v[1];
            if (v >= n_verts)
                fail(lump::edges, int64_t(e),
                     "edge " + std::to_string(e) + ": vertex " + std::to_string(v) + " is outside the " +
                         std::to_string(n_verts) + " records of vertexes");
            out[size_t(k)] = v;
        }
        return out;
    }

    /// Face `fi` with its material already found; its lightmap, if any, into
    /// `image` (build_model() numbers the images in face order). Reads the
    /// builder's tables only: faces are built on several threads at once.
    model::Surface build_face(size_t fi, uint32_t material, Scratch& scratch,
                              std::optional<model::LightmapImage>& image) const {
        const dface_t& f = faces_[fi];
        model::Surface s;
        s.face = int64_t(fi);
        s.material = material;
        const auto planes = m_.planes();
        if (f.planenum >= planes.size())
            fail(face_lump_, int64_t(fi),
                 face_name(fi) + ": planenum " + std::to_string(f.planenum) + " is outside the " +
                     std::to_string(planes.size()) + " records of planes");
        s.plane = model::Plane{vec(planes[f.planenum].normal), planes[f.planenum].dist};
        const std::vector<uint32_t>& corner = corners(fi, f, scratch);
        const texinfo_t* ti = f.texinfo >= 0 ? &m_.texinfo()[size_t(f.texinfo)] : nullptr;
        const model::Material& mat = out_.materials[s.material];

        const dface_t& lf = light_faces_.empty() ? f : light_faces_[fi];
        std::copy_n(lf.styles, MAXLIGHTMAPS, s.styles.begin());
        const bool displacement = is_displacement(f);
        if (displacement)
            build_displacement(fi, f, corner, ti, mat, s);
        else
            build_polygon(fi, f, corner, ti, mat, s, scratch);
        if (!displacement) {
            // Lightmap coordinates: luxel centres inside the face's image.
            const double w = double(lf.LightmapTextureSizeInLuxels[0]) + 1, h = double(lf.LightmapTextureSizeInLuxels[1]) + 1;
            if (ti && w >= 1 && h >= 1)
                for (model::Vertex& v : s.vertices)
                    v.lightmap_uv = {float((dot4(ti->lightmapVecs[0], v.position) - lf.LightmapTextureMinsInLuxels[0] + 0.5) / w),
                                     float((dot4(ti->lightmapVecs[1], v.position) - lf.LightmapTextureMinsInLuxels[1] + 0.5) / h)};
        }
        image = lightmap(fi, lf, ti);
        return s;
    }

    Vec2 texture_uv(const texinfo_t* ti, const model::Material& mat, Vec3 p) const {
        if (!ti) return {};
        const double w = mat.width ? double(mat.width) : 1.0, h = mat.height ? double(mat.height) : 1.0;
        return {float(dot4(ti->textureVecs[0], p) / w), float(dot4(ti->textureVecs[1], p) / h)};
    }

    void build_polygon(size_t fi, const dface_t& f, const std::vector<uint32_t>& corner, const texinfo_t* ti,
                       const model::Material& mat, model::Surface& s, Scratch& scratch) const {
        const auto verts = m_.vertexes();
        const Vec3 plane_normal = s.plane->normal;
        const auto normals = m_.vertnormals();
        const auto vni = m_.vertnormalindices();
        s.vertices.resize(corner.size());
        for (size_t k = 0; k < corner.size(); ++k) {
            model::Vertex& v = s.vertices[k];
            v.position = vec(verts[corner[k]].point);
            v.normal = plane_normal;
            if (!vn_first_.empty()) {
                const uint16_t n = vni[vn_first_[fi] + k].index;
                if (n < normals.size()) {
                    const Vec3 vn = vec(normals[n]);
                    if (model::length(vn) > 0.5) v.normal = model::normalized(vn);
                }
            }
            v.uv = texture_uv(ti, mat, v.position);
        }

        // Candidate triangles over the corners: the primitive's list or a fan.
        std::vector<std::array<uint32_t, 3>>& tris = scratch.tris;
        tris.clear();
        const int n_prims = f.numPrims & 0x7fff;  // the top bit marks shadows disabled
        if (n_prims > 0 && m_.version() > 17) {
            const auto prims = m_.primitives();
            const auto prim_indices = m_.primindices();
            if (size_t(f.firstPrimID) >= prims.size())
                fail(face_lump_, int64_t(fi),
                     face_name(fi) + ": firstPrimID " + std::to_string(f.firstPrimID) + " is outside the " +
                         std::to_string(prims.size()) + " records of primitives");
            const dprimitive_t& p = prims[f.firstPrimID];
            if (p.indexCount != 0 && uint64_t(p.firstIndex) + p.indexCount > prim_indices.size())
                fail(lump::primitives, f.firstPrimID,
                     "primitive " + std::to_string(f.firstPrimID) + ": indices " + std::to_string(p.firstIndex) + " + " +
                         std::to_string(p.indexCount) + " run past the " + std::to_string(prim_indices.size()) +
                         " records of primindices");
            std::vector<uint32_t>& idx = scratch.prim_index;
            idx.resize(p.indexCount);
            for (size_t k = 0; k < idx.size(); ++k) {
                idx[k] = prim_indices[p.firstIndex + k].index;
                if (idx[k] >= corner.size())
                    fail(lump::primindices, int64_t(p.firstIndex + k),
                         "primitive " + std::to_string(f.firstPrimID) + " of " + face_name(fi) + ": index " +
                             std::to_string(idx[k]) + " is not one of the face's " + std::to_string(corner.size()) +
                             " corners");
            }
            if (p.type == 0) {  // PRIM_TRILIST
                for (size_t k = 0; k + 2 < idx.size(); k += 3) tris.push_back({idx[k], idx[k + 1], idx[k + 2]});
            } else {  // PRIM_TRISTRIP
                for (size_t k = 0; k + 2 < idx.size(); ++k)
                    tris.push_back(k % 2 ? std::array<uint32_t, 3>{idx[k + 1], idx[k], idx[k + 2]}
                                         : std::array<uint32_t, 3>{idx[k], idx[k + 1], idx[k + 2]});
            }
        } else {
            for (uint32_t k = 1; k + 1 < corner.size(); ++k) tris.push_back({0, k, k + 1});
        }

        // Wind counter-clockwise around the plane normal, drop slivers and repeats.
        // Repeats are found by position: faces that walk back over their own
        // corners (collinear slivers) list the same triangle twice, reversed.
        // The keys seen are few (a face's triangles): a linear search of a reused
        // vector, and a set once there are many (hostile primitive lists).
        std::vector<TriangleKey>& seen = scratch.seen;
        seen.clear();
        std::set<TriangleKey> many;
        const auto first_time = [&](const TriangleKey& key) {
            if (!many.empty()) return many.insert(key).second;
            // Equivalence as the set sees it (neither orders before the other).
            const auto same = [&](const TriangleKey& k) { return !(k < key) && !(key < k); };
            if (std::find_if(seen.begin(), seen.end(), same) != seen.end()) return false;
            seen.push_back(key);
            if (seen.size() > 64) many.insert(seen.begin(), seen.end());
            return true;
        };
        s.indices.reserve(tris.size() * 3);
        for (auto t : tris) {
            const Vec3 a = s.vertices[t[0]].position, b = s.vertices[t[1]].position, c = s.vertices[t[2]].position;
            // The area seen along the plane normal: a corner welded slightly
            // off the plane can turn a collinear run into a triangle standing
            // across the face, which is as degenerate as a flat one.
            const double projected = 0.5 * model::dot(model::cross(b - a, c - a), plane_normal);
            if (std::fabs(projected) < kMinTriangleArea) continue;
            if (projected < 0) std::swap(t[1], t[2]);
            TriangleKey key{{{a.x, a.y, a.z}, {b.x, b.y, b.z}, {c.x, c.y, c.z}}};
            std::sort(key.begin(), key.end());
            if (!first_time(key)) continue;
            s.indices.insert(s.indices.end(), t.begin(), t.end());
        }
    }

    void build_displacement(size_t fi, const dface_t& f, const std::vector<uint32_t>& corner, const texinfo_t* ti,
                            const model::Material& mat, model::Surface& s) const {
        s.kind = model::SurfaceKind::displacement;
        const auto dispinfo = m_.dispinfo();
        if (f.dispinfo < 0 || size_t(f.dispinfo) >= dispinfo.size())
            fail(face_lump_, int64_t(fi),
                 face_name(fi) + ": dispinfo " + std::to_string(f.dispinfo) + " is outside the " +
                     std::to_string(dispinfo.size()) + " records of dispinfo");
        const ddispinfo_t& d = dispinfo[size_t(f.dispinfo)];
        if (d.power < MIN_MAP_DISP_POWER || d.power > MAX_MAP_DISP_POWER)
            fail(lump::dispinfo, f.dispinfo,
                 "dispinfo " + std::to_string(f.dispinfo) + ": power " + std::to_string(d.power) + " is outside 2..4");
        if (corner.size() != 4)
            fail(face_lump_, int64_t(fi),
                 face_name(fi) + ": displacement face has " + std::to_string(corner.size()) + " corners, not 4");
        const int n = 1 << d.power, side = n + 1;
        const size_t count = size_t(side) * size_t(side);
        const auto disp_verts = m_.disp_verts();
        if (d.DispVertStart < 0 || uint64_t(d.DispVertStart) + count > disp_verts.size())
            fail(lump::dispinfo, f.dispinfo,
                 "dispinfo " + std::to_string(f.dispinfo) + ": DispVertStart " + std::to_string(d.DispVertStart) + " + " +
                     std::to_string(count) + " vertices run past the " + std::to_string(disp_verts.size()) +
                     " records of disp_verts");

        // The base quad starts at the corner nearest startPosition.
        const auto verts = m_.vertexes();
        std::array<Vec3, 4> base;
        for (size_t k = 0; k < 4; ++k) base[k] = vec(verts[corner[k]].point);
        const Vec3 start = vec(d.startPosition);
        size_t first = 0;
        double best = INFINITY;
        for (size_t k = 0; k < 4; ++k) {
            const Vec3 delta = base[k] - start;
            const double dist = model::dot(delta, delta);
            if (dist < best) {
                best = dist;
                first = k;
            }
        }
        std::array<Vec3, 4> p;
        for (size_t k = 0; k < 4; ++k) p[k] = base[(k + first) % 4];

        // Grid (i, j): i runs from p0 towards p1, j from the p0-p1 edge to the
        // p3-p2 edge; dispvert i * side + j displaces it.
        const dface_t& lf = light_faces_.empty() ? f : light_faces_[fi];
        const double lw = double(lf.LightmapTextureSizeInLuxels[0]), lh = double(lf.LightmapTextureSizeInLuxels[1]);
        s.vertices.resize(count);
        for (int i = 0; i < side; ++i) {
            const float frac_i = float(i) / float(n);
            const Vec3 e0 = p[0] + (p[1] - p[0]) * frac_i;
            const Vec3 e1 = p[3] + (p[2] - p[3]) * frac_i;
            for (int j = 0; j < side; ++j) {
                const float frac_j = float(j) / float(n);
                const size_t at = size_t(i) * size_t(side) + size_t(j);
                const dDispVert& dv = disp_verts[size_t(d.DispVertStart) + at];
                const Vec3 flat = e0 + (e1 - e0) * frac_j;
                model::Vertex& v = s.vertices[at];
                v.position = flat + vec(dv.m_vVector) * dv.m_flDist;
                v.uv = texture_uv(ti, mat, flat);  // the engine maps the flat quad
                if (lw >= 0 && lh >= 0)
                    v.lightmap_uv = {float((frac_j * lw + 0.5) / (lw + 1)), float((frac_i * lh + 0.5) / (lh + 1))};
                const float alpha = std::isfinite(dv.m_flAlpha) ? std::clamp(dv.m_flAlpha, 0.f, 255.f) : 0.f;
                v.color = {255, 255, 255, uint8_t(std::lround(alpha))};
            }
        }

        // The engine's alternating diagonals: even grid indices split
        // bottom-left to top-right, odd ones top-left to bottom-right.
        const uint32_t w = uint32_t(side);
        s.indices.reserve(size_t(n) * size_t(n) * 6);
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const uint32_t at = uint32_t(i) * w + uint32_t(j);
                if (at % 2)
                    s.indices.insert(s.indices.end(), {at, at + w, at + 1, at + 1, at + w, at + w + 1});
                else
                    s.indices.insert(s.indices.end(), {at, at + w, at + w + 1, at, at + w + 1, at + 1});
            }
        // Those wind clockwise around the base quad's front when the corners
        // do (they always do in compiled maps); keep ours counter-clockwise.
        const Vec3 quad_normal = model::cross(p[1] - p[0], p[3] - p[0]);
        if (model::dot(quad_normal, s.plane->normal) < 0)
            for (size_t k = 0; k + 2 < s.indices.size(); k += 3) std::swap(s.indices[k + 1], s.indices[k + 2]);

        // Smooth normals: the mean of the unit normals of the triangles at a vertex.
        std::vector<Vec3> sum(count);
        for (size_t k = 0; k + 2 < s.indices.size(); k += 3) {
            const uint32_t a = s.indices[k], b = s.indices[k + 1], c = s.indices[k + 2];
            const Vec3 tn = model::normalized(
                model::cross(s.vertices[b].position - s.vertices[a].position, s.vertices[c].position - s.vertices[a].position));
            for (uint32_t v : {a, b, c}) sum[v] = sum[v] + tn;
        }
        for (size_t k = 0; k < count; ++k)
            s.vertices[k].normal = model::length(sum[k]) > 1e-6 ? model::normalized(sum[k]) : s.plane->normal;
    }

    // --- lightmaps -----------------------------------------------------------

    std::optional<model::LightmapImage> lightmap(size_t fi, const dface_t& lf, const texinfo_t* ti) const {
        if (light_.empty() || lf.lightofs == -1) return std::nullopt;
        int styles = 0;
        while (styles < MAXLIGHTMAPS && lf.styles[styles] != kNoLightStyle) ++styles;
        if (styles == 0) return std::nullopt;
        const std::string where = std::string(bsp_.lump_name(light_face_lump_)) + " record " + std::to_string(fi);
        if (lf.lightofs < 0)
            fail(light_face_lump_, int64_t(fi), where + ": lightofs " + std::to_string(lf.lightofs) + " is negative");
        if (lf.LightmapTextureSizeInLuxels[0] < 0 || lf.LightmapTextureSizeInLuxels[1] < 0)
            fail(light_face_lump_, int64_t(fi),
                 where + ": negative lightmap size " + std::to_string(lf.LightmapTextureSizeInLuxels[0]) + " x " +
                     std::to_string(lf.LightmapTextureSizeInLuxels[1]));
        const uint64_t w = uint64_t(lf.LightmapTextureSizeInLuxels[0]) + 1, h = uint64_t(lf.LightmapTextureSizeInLuxels[1]) + 1;
        const uint64_t blocks = ti && (uint32_t(ti->flags) & SURF_BUMPLIGHT) ? 4 : 1;
        const uint64_t first = uint64_t(lf.lightofs), available = light_.size();
        // w, h <= 2^31 each: the luxel count fits; compare before scaling further.
        const uint64_t luxels = w * h;
        if (first > available || luxels > available / 4 || luxels * 4 * blocks * uint64_t(styles) > available - first)
            fail(light_face_lump_, int64_t(fi),
                 where + ": lightofs " + std::to_string(lf.lightofs) + " + " + std::to_string(w) + " x " +
                     std::to_string(h) + " luxels x " + std::to_string(styles) + " style(s)" +
                     (blocks > 1 ? " x 4 bump vectors" : "") + " runs past the end of " +
                     std::string(bsp_.lump_name(light_lump_)) + " (" + std::to_string(available) + " bytes)");
        model::LightmapImage image;
        image.width = uint32_t(w);
        image.height = uint32_t(h);
        image.styles.resize(size_t(styles));
        for (int k = 0; k < styles; ++k) {
            // lightofs is a byte offset: CS:GO-branch maps store extra
            // per-luxel bytes after the samples, so it need not be aligned.
            const uint8_t* at = light_.data() + first + uint64_t(k) * blocks * luxels * 4;
            auto& rgb = image.styles[size_t(k)];
            rgb.resize(size_t(luxels) * 3);
            for (size_t x = 0; x < size_t(luxels); ++x, at += 4) {
                const auto c = to_rgb8(ColorRGBExp32{at[0], at[1], at[2], int8_t(at[3])});
                std::copy(c.begin(), c.end(), rgb.begin() + std::ptrdiff_t(3 * x));
            }
        }
        return image;
    }

    // --- static props --------------------------------------------------------

    void read_props() {
        const auto props = read_static_props(bsp_);
        if (!props) return;
        out_.props.reserve(props->props.size());
        for (size_t i = 0; i < props->props.size(); ++i) {
            const StaticProp& p = props->props[i];
            if (p.prop_type >= props->names.size()) {
                const auto k = find_game_lump(bsp_, GAMELUMP_STATIC_PROPS);
                throw Error({bsp_.file_name(), "game_lump sprp", k ? int64_t(bsp_.game_lumps()[*k].offset) : -1},
                            "static prop " + std::to_string(i) + ": PropType " + std::to_string(p.prop_type) +
                                " is outside the " + std::to_string(props->names.size()) + " names of the dictionary");
            }
            model::PropPlacement placement;
            placement.model = props->names[p.prop_type];
            placement.origin = {p.origin[0], p.origin[1], p.origin[2]};
            placement.angles = {p.angles[0], p.angles[1], p.angles[2]};
            placement.skin = p.skin;
            out_.props.push_back(std::move(placement));
        }
    }

    const Bsp& bsp_;
    const Map m_;
    const model::BuildOptions& options_;
    model::Map& out_;

    std::span<const dface_t> faces_;
    size_t face_lump_ = lump::faces;
    ByteSpan light_;  ///< the lighting lump's bytes (ColorRGBExp32 samples)
    size_t light_lump_ = lump::lighting;
    std::span<const dface_t> light_faces_;
    size_t light_face_lump_ = lump::faces;
    std::vector<uint32_t> vn_first_;
    std::vector<int64_t> material_of_texinfo_;
    std::map<std::tuple<std::string, uint32_t, uint32_t, uint32_t>, uint32_t> material_index_;
};

}  // namespace

void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map) {
    Builder(bsp, options, map).run();
}

}  // namespace bspkit::source
