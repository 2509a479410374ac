// Geometry and lightmaps of Quake 2 (IBSP 38) maps for the engine-neutral
// model.
//
// Per model (models lump: firstface / numfaces) one Surface per face:
//   - corners: faces -> surfedges -> edges -> vertexes, repeated and
//     collinear corners dropped, fan-triangulated, or ear-clipped when the
//     loop is concave (some Quake 2 compilers merge coplanar faces into
//     concave loops: mission64_titlemap has them); winding as stored
//     (clockwise seen from the front, as in Quake 1).
//   - plane and normals: the face's plane, flipped when `side` != 0.
//   - texture UVs: Quake 2 texinfo names a WAL texture outside the map, so
//     its size is unknown here: Material::width / height are 0 and the UVs
//     are in texels, u = dot(p, vecs[0].xyz) + vecs[0].w (v likewise).
//     Dividing by the WAL's size gives the usual normalised UVs.
//   - materials: one per (texture name, flags); flags from the texinfo
//     (SURF_SKY sky + unlit, SURF_WARP liquid + unlit, SURF_TRANS33/66
//     translucent, SURF_NODRAW nodraw), from the contents of the brushes whose
//     sides use the texinfo (water / slime / lava liquid, player / monster clip,
//     trigger, origin) and from tool texture names (trigger, clip, skip,
//     hint, origin, nodraw).
//   - lightmap (faces with a style, lightofs >= 0, no SURF_SKY / SURF_WARP):
//     the 16-texel luxel rule of seed 001, ceil(max / 16) - floor(min / 16)
//     + 1 samples per axis, 3 bytes (RGB) per sample and style, lightmap UVs
//     at luxel centres. One running past the lighting lump is skipped with a
//     diagnostic. BSPX LMSHIFT / DECOUPLED_LM / LMOFFSET / LMSTYLE(16) are
//     applied (luxel_lightmaps.hpp: FaceLightmaps).
#include "../../model/builders.hpp"
#include "../../model/polygon.hpp"
#include "../common/luxel_lightmaps.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/quake2.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <string_view>

namespace bspkit::quake2 {
namespace {

// qfiles.h contents bits used for material flags.
constexpr int32_t CONTENTS_LAVA = 8, CONTENTS_SLIME = 16, CONTENTS_WATER = 32, CONTENTS_PLAYERCLIP = 0x10000,
                  CONTENTS_MONSTERCLIP = 0x20000, CONTENTS_ORIGIN = 0x1000000, CONTENTS_TRIGGER = 0x40000000;

std::string texture_name(const texinfo_t& ti) {
    const char* end = std::find(ti.texture, ti.texture + sizeof ti.texture, '\0');
    return std::string(ti.texture, end);
}

uint32_t material_flags(const texinfo_t& ti, std::string_view name, int32_t contents) {
    using namespace model;
    uint32_t f = 0;
    if (ti.flags & SURF_SKY) f |= kSky | kUnlit;
    if (ti.flags & SURF_WARP) f |= kWater | kUnlit;
    if (ti.flags & (SURF_TRANS33 | SURF_TRANS66)) f |= kTranslucent;
    if (ti.flags & SURF_NODRAW) f |= kNodraw;
    if (contents & (CONTENTS_WATER | CONTENTS_SLIME | CONTENTS_LAVA)) f |= kWater;
    if (contents & (CONTENTS_PLAYERCLIP | CONTENTS_MONSTERCLIP)) f |= kClip;
    if (contents & CONTENTS_TRIGGER) f |= kTrigger;
    if (contents & CONTENTS_ORIGIN) f |= kNodraw;
    // Tool textures by the last path component ("e1u1/clip", "common/trigger").
    const std::string base =
        ascii_lower(name.substr(name.find_last_of('/') == std::string_view::npos ? 0 : name.find_last_of('/') + 1));
    if (base == "trigger") f |= kTrigger;
    if (base == "clip" || base == "playerclip" || base == "monsterclip") f |= kClip;
    if (base == "skip" || base == "hint" || base == "origin" || base == "nodraw" || base == "null") f |= kNodraw;
    return f;
}

double tex_coord(const float p[3], const float v[4]) {
    return double(p[0]) * v[0] + double(p[1]) * v[1] + double(p[2]) * v[2] + double(v[3]);
}

class Builder {
public:
    Builder(const Map& q, const model::BuildOptions& options, model::Map& out)
        : q_(q), options_(options), out_(out), file_(q.bsp().file_name()) {}

    void run() {
        planes_ = q_.planes();
        vertices_ = q_.vertices();
        texinfo_ = q_.texinfo();
        faces_ = q_.faces();
        edges_ = q_.edges();
        surfedges_ = q_.surfedges();
        lighting_ = q_.lighting();
        texinfo_contents();
        corner_budget_ = 4 * uint64_t(surfedges_.size()) + (uint64_t(1) << 20);
        if (options_.lightmaps) {
            bspx::Lighting ext = bspx::read_lighting(q_.bsp(), faces_.size(), lighting_.size(), true);
            for (Diagnostic& d : ext.diagnostics) out_.diagnostics.push_back(std::move(d));
            ext.diagnostics.clear();
            lightmaps_.emplace(lighting_, 3, std::move(ext));
        }
        const auto models = q_.models();
        for (size_t m = 0; m < models.size(); ++m) build_model(m, models[m]);
    }

private:
    /// Contents of the brushes whose sides use each texinfo (OR of all).
    void texinfo_contents() {
        contents_.assign(texinfo_.size(), 0);
        const auto brushes = q_.brushes();
        const auto sides = q_.brushsides();
        // A real map's brushes own disjoint runs of sides; hostile ones naming
        // the whole lump each would make this brushes x sides.
        uint64_t budget = 2 * uint64_t(sides.size()) + (uint64_t(1) << 20);
        for (const dbrush_t& b : brushes) {
            if (b.firstside < 0 || b.numsides < 0 || uint64_t(b.firstside) + uint64_t(b.numsides) > sides.size())
                continue;  // `check` reports it; only flags depend on it
            if (uint64_t(b.numsides) > budget) {
                out_.diagnostics.push_back({Severity::warning, "brushes", -1,
                                            "the brushes claim the brush sides more than twice over: the contents "
                                            "of the rest are left out of the surfaces' flags"});
                break;
            }
            budget -= uint64_t(b.numsides);
            for (int32_t k = 0; k < b.numsides; ++k) {
                const int16_t ti = sides[size_t(b.firstside + k)].texinfo;
                if (ti >= 0 && size_t(ti) < contents_.size()) contents_[size_t(ti)] |= b.contents;
            }
        }
    }

    int64_t record_offset(size_t lump, size_t index, size_t size) const {
        return int64_t(q_.bsp().entry(lump).offset) + int64_t(index * size);
    }

    [[noreturn]] void fail(size_t lump, size_t index, size_t size, const std::string& detail) const {
        throw Error({file_, std::string(q_.bsp().lump_name(lump)), record_offset(lump, index, size)}, detail);
    }

    void build_model(size_t m, const dmodel_t& rec) {
        if (rec.firstface < 0 || rec.numfaces < 0 || uint64_t(rec.firstface) + uint64_t(rec.numfaces) > faces_.size())
            fail(Map::LUMP_MODELS, m, sizeof(dmodel_t),
                 "model " + std::to_string(m) + ": firstface " + std::to_string(rec.firstface) + " + numfaces " +
                     std::to_string(rec.numfaces) + " runs past the " + std::to_string(faces_.size()) +
                     " records of faces");
        model::Model out;
        out.index = uint32_t(m);
        out.surfaces.reserve(size_t(rec.numfaces));
        for (int64_t k = 0; k < rec.numfaces; ++k) build_face(size_t(rec.firstface + k), out);
        out_.models.push_back(std::move(out));
    }

    uint32_t material(size_t texinfo) {
        // Once per texinfo: the name, flags and lookup below cost more than the rest of a face.
        if (material_of_texinfo_.size() != texinfo_.size()) material_of_texinfo_.assign(texinfo_.size(), -1);
        int64_t& known = material_of_texinfo_[texinfo];
        if (known < 0) known = new_material(texinfo);
        return uint32_t(known);
    }

    uint32_t new_material(size_t texinfo) {
        const texinfo_t& ti = texinfo_[texinfo];
        const std::string name = texture_name(ti);
        const uint32_t flags = material_flags(ti, name, contents_[texinfo]);
        const auto key = std::make_pair(name, flags);
        if (const auto it = materials_.find(key); it != materials_.end()) return it->second;
        model::Material mat;
        mat.name = name;
        mat.flags = flags;  // width / height 0: the WAL is not in the map, UVs are in texels
        const uint32_t index = uint32_t(out_.materials.size());
        out_.materials.push_back(std::move(mat));
        materials_.emplace(key, index);
        return index;
    }

    void build_face(size_t f, model::Model& out) {
        const dface_t& face = faces_[f];
        if (face.planenum >= planes_.size())
            fail(Map::LUMP_FACES, f, sizeof(dface_t),
                 "face " + std::to_string(f) + ": planenum " + std::to_string(face.planenum) + " is out of range (" +
                     std::to_string(planes_.size()) + " planes)");
        if (face.texinfo < 0 || size_t(face.texinfo) >= texinfo_.size())
            fail(Map::LUMP_FACES, f, sizeof(dface_t),
                 "face " + std::to_string(f) + ": texinfo " + std::to_string(face.texinfo) + " is out of range (" +
                     std::to_string(texinfo_.size()) + " texinfo)");
        if (face.firstedge < 0 || face.numedges < 0 ||
            uint64_t(face.firstedge) + uint64_t(face.numedges) > surfedges_.size())
            fail(Map::LUMP_FACES, f, sizeof(dface_t),
                 "face " + std::to_string(f) + ": firstedge " + std::to_string(face.firstedge) + " + numedges " +
                     std::to_string(face.numedges) + " runs past the " + std::to_string(surfedges_.size()) +
                     " surfedges");
        if (uint64_t(face.numedges) > corner_budget_)
            fail(Map::LUMP_FACES, f, sizeof(dface_t),
                 "the faces of the models use the surfedges more than 4 times over (hostile face ranges): "
                 "geometry not built");
        corner_budget_ -= uint64_t(face.numedges);

        // The face's corners in the builder's own vectors, reused face after face.
        std::vector<model::Vec3>& loop = loop_;
        std::vector<const float*>& points = points_;
        loop.clear();
        points.clear();
        for (int64_t k = 0; k < face.numedges; ++k) {
            const size_t se = size_t(face.firstedge + k);
            const int64_t e = surfedges_[se].edge;
            const uint64_t mag = uint64_t(e < 0 ? -e : e);
            if (mag >= edges_.size())
                fail(Map::LUMP_SURFEDGES, se, sizeof(dsurfedge_t),
                     "surfedge " + std::to_string(se) + " (face " + std::to_string(f) + "): edge " + std::to_string(e) +
                         " is out of range (" + std::to_string(edges_.size()) + " edges)");
            const dedge_t& edge = edges_[size_t(mag)];
            const uint64_t v = e < 0 ? edge.v[1] : edge.v[0];
            if (v >= vertices_.size())
                fail(Map::LUMP_EDGES, size_t(mag), sizeof(dedge_t),
                     "edge " + std::to_string(mag) + " (face " + std::to_string(f) + "): vertex " + std::to_string(v) +
                         " is out of range (" + std::to_string(vertices_.size()) + " vertices)");
            const float* p = vertices_[size_t(v)].point;
            points.push_back(p);
            loop.push_back({p[0], p[1], p[2]});
        }
        std::vector<uint32_t>& keep = keep_;
        model::clean_polygon(loop, keep);
        if (keep.empty()) return;

        const dplane_t& plane = planes_[face.planenum];
        const texinfo_t& ti = texinfo_[size_t(face.texinfo)];
        model::Surface s;
        s.face = int64_t(f);
        s.material = material(size_t(face.texinfo));
        s.plane = model::Plane{{plane.normal[0], plane.normal[1], plane.normal[2]}, plane.dist};
        if (face.side != 0) s.plane = model::Plane{s.plane->normal * -1.0f, -plane.dist};
        std::copy(face.styles, face.styles + 4, s.styles.begin());
        s.vertices.reserve(keep.size());
        for (uint32_t k : keep) {
            model::Vertex v;
            v.position = loop[k];
            v.normal = s.plane->normal;
            v.uv = {float(tex_coord(points[k], ti.vecs[0])), float(tex_coord(points[k], ti.vecs[1]))};
            s.vertices.push_back(v);
        }
        std::vector<model::Vec3>& kept = kept_;
        kept.clear();
        for (const model::Vertex& v : s.vertices) kept.push_back(v.position);
        model::triangulate_polygon(kept, 0, s.indices, ear_budget_);
        if (s.indices.empty()) return;
        if (options_.lightmaps) lightmap(f, face, ti, points, keep, s);
        out.surfaces.push_back(std::move(s));
    }

    void lightmap(size_t f, const dface_t& face, const texinfo_t& ti, const std::vector<const float*>& points,
                  const std::vector<uint32_t>& keep, model::Surface& s) {
        if (ti.flags & (SURF_SKY | SURF_WARP)) return;
        std::vector<model::Vec2> uvs;
        std::string why;
        auto img = lightmaps_->read({f, ti.vecs, points, face.styles, face.lightofs}, uvs, s.styles, why);
        if (!why.empty()) diagnose_face(f, why);
        if (!img) return;
        for (size_t k = 0; k < keep.size(); ++k) s.vertices[k].lightmap_uv = uvs[keep[k]];
        s.lightmap = int32_t(out_.lightmap_images.size());
        out_.lightmap_images.push_back(std::move(*img));
    }

    void diagnose_face(size_t f, const std::string& message) {
        out_.diagnostics.push_back({Severity::warning, "faces", record_offset(Map::LUMP_FACES, f, sizeof(dface_t)),
                                    "face " + std::to_string(f) + ": " + message});
    }

    const Map& q_;
    const model::BuildOptions& options_;
    model::Map& out_;
    std::string file_;
    std::span<const dplane_t> planes_;
    std::span<const dvertex_t> vertices_;
    std::span<const texinfo_t> texinfo_;
    std::span<const dface_t> faces_;
    std::span<const dedge_t> edges_;
    std::span<const dsurfedge_t> surfedges_;
    ByteSpan lighting_;
    std::vector<int32_t> contents_;
    std::map<std::pair<std::string, uint32_t>, uint32_t> materials_;
    std::vector<int64_t> material_of_texinfo_;  ///< material(): -1 until asked
    uint64_t corner_budget_ = 0;
    model::EarClipBudget ear_budget_;
    // build_face()'s working vectors (their capacity kept from face to face).
    std::vector<model::Vec3> loop_, kept_;
    std::vector<const float*> points_;
    std::vector<uint32_t> keep_;
    std::optional<luxels::FaceLightmaps> lightmaps_;
};

}  // namespace

void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map) {
    const Map q(bsp);
    Builder(q, options, map).run();
}

}  // namespace bspkit::quake2
