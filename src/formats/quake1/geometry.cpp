// Geometry, lightmaps and textures of Quake 1 (BSP 29), BSP2 / 2PSB and
// GoldSrc (BSP 30) maps for the engine-neutral model.
//
// Per model (models lump: firstface / numfaces) one Surface per face:
//   - corners: faces -> surfedges -> edges -> vertexes (a negative surfedge
//     walks its edge from v[1]); repeated corners and corners on the line
//     through their neighbours are dropped, the rest fan-triangulated (or
//     ear-clipped when the loop is concave). The winding is kept as stored:
//     clockwise seen from the front (the side the surface normal points to),
//     as Quake draws it.
//   - plane and normals: the face's plane, flipped when `side` != 0.
//   - texture UVs: u = (dot(p, vecs[0].xyz) + vecs[0].w) / width, v the same
//     with vecs[1] / height, width / height from the miptex header (also for
//     textures kept in WADs, whose headers are in the map). A face whose
//     miptex is missing (dataofs -1) gets a nameless material of size 0 and
//     UVs in texels.
//   - lightmap (faces with a style, lightofs >= 0 and no TEX_SPECIAL): the
//     16-texel luxel rule, floor(min / 16) .. ceil(max / 16) + 1 samples per
//     axis over the face's texture coordinates (double precision, as the
//     compile tools); styles x width x height samples of 1 byte (Quake, BSP2:
//     grey, expanded to RGB) or 3 (GoldSrc) from lightofs; lightmap UVs at
//     luxel centres: (s / 16 - floor(min / 16) + 0.5) / width. A lightmap
//     running past the lighting lump is skipped with a diagnostic. With
//     ericw-tools' BSPX lumps (luxel_lightmaps.hpp: FaceLightmaps): RGB
//     samples from a .lit beside the map or RGBLIGHTING, LMSHIFT's luxel
//     size, DECOUPLED_LM's sizes, offsets and UV rows, LMOFFSET, LMSTYLE(16).
// Broken references that leave no geometry (plane, texinfo, surfedge, edge,
// vertex or face ranges out of range) throw Error naming the record.
#include "../../model/builders.hpp"
#include "../../model/polygon.hpp"
#include "../common/indexed_pixels.hpp"
#include "../common/luxel_lightmaps.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake1_textures.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <string>
#include <string_view>

namespace bspkit::quake1 {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

/// Material flags of a Quake / GoldSrc texture name (engines and compile
/// tools decide by name) and its texinfo flags.
uint32_t material_flags(std::string_view name, bool special, bool goldsrc) {
    using namespace model;
    const std::string n = ascii_lower(name);
    uint32_t f = 0;
    if (starts_with(n, "sky")) f |= kSky | kUnlit;
    if (starts_with(n, "*") || (goldsrc && starts_with(n, "!"))) f |= kWater | kUnlit;
    if (starts_with(n, "{")) f |= kAlphaTest;
    if (starts_with(n, "trigger") || n == "aaatrigger") f |= kTrigger;
    if (starts_with(n, "clip")) f |= kClip;
    static constexpr std::string_view kToolNames[] = {"skip",      "hint",      "hintskip", "origin",      "null",
                                                   "nodraw",    "bevel",     "solidhint", "splitface", "boundingbox",
                                                   "clipbevel", "bevelbrush"};
    for (std::string_view t : kToolNames)
        if (n == t) f |= kNodraw;
    if (special) f |= kUnlit;
    return f;
}

/// A texture coordinate as the compile tools compute it (double precision).
double tex_coord(const float p[3], const float v[4]) {
    return double(p[0]) * v[0] + double(p[1]) * v[1] + double(p[2]) * v[2] + double(v[3]);
}

template <class Types>
class Builder {
public:
    Builder(const Map& q, const Tables<Types>& t, const model::BuildOptions& options, model::Map& out)
        : q_(q), t_(t), options_(options), out_(out), file_(q.bsp().file_name()) {}

    void run() {
        lighting_ = q_.lighting();
        directory_ = q_.miptex();
        if (options_.textures) {
            DecodedTextures decoded = decode_textures(q_);
            out_.textures = std::move(decoded.textures);
            out_.sky_layers = std::move(decoded.sky);
            texture_of_miptex_ = std::move(decoded.by_miptex);
            for (Diagnostic& d : decoded.diagnostics) out_.diagnostics.push_back(std::move(d));
        }
        // Work budgets: a real map uses each surfedge and each lighting byte
        // once; hostile models sharing face ranges must not multiply the work.
        corner_budget_ = 4 * uint64_t(t_.surfedges.size()) + (uint64_t(1) << 20);
        if (options_.lightmaps) {
            bspx::Lighting ext = bspx::read_lighting(q_.bsp(), t_.faces.size(), lighting_.size(), q_.goldsrc(),
                                                     model::lighting_options(options_));
            for (Diagnostic& d : ext.diagnostics) out_.diagnostics.push_back(std::move(d));
            ext.diagnostics.clear();
            out_.lightmap_source = ext.rgb_source;
            lightmaps_.emplace(lighting_, q_.lightmap_sample_bytes(), std::move(ext));
        }
        for (size_t m = 0; m < t_.models.size(); ++m) build_model(m);
    }

private:
    int64_t record_offset(std::string_view lump, size_t index, size_t size) const {
        return int64_t(q_.bsp().entry(q_.lump(lump)).offset) + int64_t(index * size);
    }

    [[noreturn]] void fail(std::string_view lump, size_t index, size_t size, const std::string& detail) const {
        throw Error({file_, std::string(lump), record_offset(lump, index, size)}, detail);
    }

    void build_model(size_t m) {
        const dmodel_t& rec = t_.models[m];
        if (rec.firstface < 0 || rec.numfaces < 0 || uint64_t(rec.firstface) + uint64_t(rec.numfaces) > t_.faces.size())
            fail("models", m, sizeof(dmodel_t),
                 "model " + std::to_string(m) + ": firstface " + std::to_string(rec.firstface) + " + numfaces " +
                     std::to_string(rec.numfaces) + " runs past the " + std::to_string(t_.faces.size()) +
                     " records of faces");
        model::Model out;
        out.index = uint32_t(m);
        out.surfaces.reserve(size_t(rec.numfaces));
        for (int64_t k = 0; k < rec.numfaces; ++k) build_face(size_t(rec.firstface + k), out);
        out_.models.push_back(std::move(out));
    }

    uint32_t material(int64_t texinfo) {
        const texinfo_t& ti = t_.texinfo[size_t(texinfo)];
        const bool special = ti.flags & TEX_SPECIAL;
        const auto key = std::pair<int64_t, bool>(ti.miptex, special);
        if (const auto it = materials_.find(key); it != materials_.end()) return it->second;
        model::Material mat;
        const Miptex* mt = nullptr;
        if (ti.miptex >= 0 && size_t(ti.miptex) < directory_.entries.size() &&
            directory_.entries[size_t(ti.miptex)].header_ok)
            mt = &directory_.entries[size_t(ti.miptex)];
        if (mt) {
            mat.name = mt->name;
            mat.width = mt->width;
            mat.height = mt->height;
            if (size_t(ti.miptex) < texture_of_miptex_.size()) mat.texture = texture_of_miptex_[size_t(ti.miptex)];
        } else if (ti.miptex < 0 || size_t(ti.miptex) >= directory_.entries.size() ||
                   directory_.entries[size_t(ti.miptex)].dataofs != -1) {
            out_.diagnostics.push_back({Severity::warning, "texinfo",
                                        record_offset("texinfo", size_t(texinfo), sizeof(texinfo_t)),
                                        "texinfo " + std::to_string(texinfo) + ": miptex " + std::to_string(ti.miptex) +
                                            " has no usable texture header: nameless material, UVs in texels"});
        }
        mat.flags = material_flags(mat.name, special, q_.goldsrc());
        const uint32_t index = uint32_t(out_.materials.size());
        out_.materials.push_back(std::move(mat));
        materials_.emplace(key, index);
        return index;
    }

    void build_face(size_t f, model::Model& out) {
        using FaceT = typename Types::face;
        const FaceT& face = t_.faces[f];
        if (face.planenum < 0 || size_t(face.planenum) >= t_.planes.size())
            fail("faces", f, sizeof(FaceT),
                 "face " + std::to_string(f) + ": planenum " + std::to_string(face.planenum) + " is out of range (" +
                     std::to_string(t_.planes.size()) + " planes)");
        if (face.texinfo < 0 || size_t(face.texinfo) >= t_.texinfo.size())
            fail("faces", f, sizeof(FaceT),
                 "face " + std::to_string(f) + ": texinfo " + std::to_string(face.texinfo) + " is out of range (" +
                     std::to_string(t_.texinfo.size()) + " texinfo)");
        if (face.firstedge < 0 || face.numedges < 0 ||
            uint64_t(face.firstedge) + uint64_t(face.numedges) > t_.surfedges.size())
            fail("faces", f, sizeof(FaceT),
                 "face " + std::to_string(f) + ": firstedge " + std::to_string(face.firstedge) + " + numedges " +
                     std::to_string(face.numedges) + " runs past the " + std::to_string(t_.surfedges.size()) +
                     " surfedges");
        if (uint64_t(face.numedges) > corner_budget_)
            fail("faces", f, sizeof(FaceT), "the faces of the models use the surfedges more than 4 times over "
                                            "(hostile face ranges): geometry not built");
        corner_budget_ -= uint64_t(face.numedges);

        // The corner loop, as stored.
        // The face's corners in the builder's own vectors, reused face after face.
        std::vector<model::Vec3>& loop = loop_;
        std::vector<const float*>& points = points_;
        loop.clear();
        points.clear();
        for (int64_t k = 0; k < int64_t(face.numedges); ++k) {
            const size_t se = size_t(face.firstedge + k);
            const int64_t e = t_.surfedges[se].edge;
            const uint64_t mag = uint64_t(e < 0 ? -e : e);
            if (mag >= t_.edges.size())
                fail("surfedges", se, sizeof(dsurfedge_t),
                     "surfedge " + std::to_string(se) + " (face " + std::to_string(f) + "): edge " + std::to_string(e) +
                         " is out of range (" + std::to_string(t_.edges.size()) + " edges)");
            const auto& edge = t_.edges[size_t(mag)];
            const uint64_t v = e < 0 ? edge.v[1] : edge.v[0];
            if (v >= t_.vertexes.size())
                fail("edges", size_t(mag), sizeof(typename Types::edge),
                     "edge " + std::to_string(mag) + " (face " + std::to_string(f) + "): vertex " + std::to_string(v) +
                         " is out of range (" + std::to_string(t_.vertexes.size()) + " vertexes)");
            const float* p = t_.vertexes[size_t(v)].point;
            points.push_back(p);
            loop.push_back({p[0], p[1], p[2]});
        }
        std::vector<uint32_t>& keep = keep_;
        model::clean_polygon(loop, keep);
        if (keep.empty()) return;  // no area: nothing to draw

        const dplane_t& plane = t_.planes[size_t(face.planenum)];
        const texinfo_t& ti = t_.texinfo[size_t(face.texinfo)];
        model::Surface s;
        s.face = int64_t(f);
        s.material = material(face.texinfo);
        const model::Material& mat = out_.materials[s.material];
        const bool flip = face.side != 0;
        s.plane = model::Plane{{plane.normal[0], plane.normal[1], plane.normal[2]}, plane.dist};
        if (flip) s.plane = model::Plane{s.plane->normal * -1.0f, -plane.dist};
        std::copy(face.styles, face.styles + 4, s.styles.begin());
        const double width = mat.width ? double(mat.width) : 1.0, height = mat.height ? double(mat.height) : 1.0;
        s.vertices.reserve(keep.size());
        for (uint32_t k : keep) {
            model::Vertex v;
            v.position = loop[k];
            v.normal = s.plane->normal;
            v.uv = {float(tex_coord(points[k], ti.vecs[0]) / width), float(tex_coord(points[k], ti.vecs[1]) / height)};
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

    template <class FaceT>
    void lightmap(size_t f, const FaceT& face, const texinfo_t& ti, const std::vector<const float*>& points,
                  const std::vector<uint32_t>& keep, model::Surface& s) {
        if (ti.flags & TEX_SPECIAL) return;
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
        out_.diagnostics.push_back({Severity::warning, "faces", record_offset("faces", f, sizeof(typename Types::face)),
                                    "face " + std::to_string(f) + ": " + message});
    }

    const Map& q_;
    const Tables<Types>& t_;
    const model::BuildOptions& options_;
    model::Map& out_;
    std::string file_;
    ByteSpan lighting_;
    MiptexDirectory directory_;
    std::vector<int32_t> texture_of_miptex_;
    std::map<std::pair<int64_t, bool>, uint32_t> materials_;
    uint64_t corner_budget_ = 0;
    model::EarClipBudget ear_budget_;
    // build_face()'s working vectors (their capacity kept from face to face).
    std::vector<model::Vec3> loop_, kept_;
    std::vector<const float*> points_;
    std::vector<uint32_t> keep_;
    std::optional<luxels::FaceLightmaps> lightmaps_;
};

/// GLQuake's R_InitSky over a width x height sky texture's indices: the
/// right half the opaque back layer, the left half the front one, index 0
/// clear there (the back layer's mean colour, alpha 0).
model::SkyLayers sky_layers(const uint8_t* indices, uint32_t width, uint32_t height, const uint8_t* colours,
                            const std::string& name) {
    const uint32_t half = width / 2;
    model::SkyLayers sky;
    sky.front = {name + " (front)", half, height, std::vector<uint8_t>(size_t(half) * height * 4)};
    sky.back = {name + " (back)", half, height, std::vector<uint8_t>(size_t(half) * height * 4)};
    for (uint32_t y = 0; y < height; ++y)
        indexed_to_rgba(indices + size_t(y) * width + half, half, colours, false, &sky.back.rgba[size_t(y) * half * 4]);
    uint64_t sum[3] = {0, 0, 0};
    for (size_t i = 0; i < sky.back.rgba.size(); i += 4)
        for (size_t c = 0; c < 3; ++c) sum[c] += sky.back.rgba[i + c];
    const uint64_t n = std::max<uint64_t>(1, uint64_t(half) * height);
    const uint8_t mean[4] = {uint8_t(sum[0] / n), uint8_t(sum[1] / n), uint8_t(sum[2] / n), 0};
    for (uint32_t y = 0; y < height; ++y) {
        const uint8_t* row = indices + size_t(y) * width;
        uint8_t* out = &sky.front.rgba[size_t(y) * half * 4];
        indexed_to_rgba(row, half, colours, false, out);
        for (uint32_t x = 0; x < half; ++x)
            if (row[x] == 0) std::copy(mean, mean + 4, out + size_t(x) * 4);
    }
    return sky;
}

}  // namespace

DecodedTextures decode_textures(const Map& map, const Palette& palette) {
    DecodedTextures out;
    const ByteSpan lump = map.textures();
    const MiptexDirectory dir = map.miptex();
    const std::string file = map.bsp().file_name();
    const int64_t lump_offset = map.bsp().entry(map.lump("textures")).offset;
    const bool goldsrc = map.goldsrc();
    out.by_miptex.assign(dir.entries.size(), -1);
    // Pixels decoded at most: a directory pointing many entries at one big
    // texture must not make gigabytes of RGBA.
    uint64_t budget = 4 * uint64_t(lump.size()) + (uint64_t(1) << 20);
    auto skip = [&](size_t i, const Miptex& m, const std::string& why) {
        out.diagnostics.push_back({Severity::warning, "textures", lump_offset + (m.dataofs >= 0 ? m.dataofs : 0),
                                   "texture " + std::to_string(i) + " '" + m.name + "' not decoded: " + why});
    };
    for (size_t i = 0; i < dir.entries.size(); ++i) {
        const Miptex& m = dir.entries[i];
        if (!m.header_ok || !m.embedded) continue;  // missing or in a WAD: referenced by name only
        if (m.width == 0 || m.height == 0 || m.width > kMaxTextureSide || m.height > kMaxTextureSide) {
            skip(i, m, "size " + std::to_string(m.width) + " x " + std::to_string(m.height) + " is not 1.." +
                           std::to_string(kMaxTextureSide));
            continue;
        }
        const uint64_t room = lump.size() - uint64_t(m.dataofs);
        const uint64_t pixels = uint64_t(m.width) * m.height;
        if (uint64_t(m.offsets[0]) + pixels > room) {
            skip(i, m, "mip level 0 (offset " + std::to_string(m.offsets[0]) + ") runs past the end of the lump");
            continue;
        }
        if (pixels > budget) {
            skip(i, m, "the directory decodes more pixels than the lump can hold (hostile offsets)");
            continue;
        }
        budget -= pixels;
        const uint8_t* base = lump.data() + m.dataofs;
        const uint8_t* colours = palette.data();
        if (goldsrc) {
            // uint16 count + RGB triplets after the last mip level.
            const uint64_t end = uint64_t(m.offsets[3]) + uint64_t(m.width >> 3) * (m.height >> 3);
            if (end + 2 > room) {
                skip(i, m, "its palette lies past the end of the lump");
                continue;
            }
            const uint16_t count = load<uint16_t>(base + end, map.bsp().byte_order());
            if (end + 2 + uint64_t(count) * 3 > room || count == 0) {
                skip(i, m, "its palette of " + std::to_string(count) + " colours runs past the end of the lump");
                continue;
            }
            if (count < 256) {
                skip(i, m, "its palette has " + std::to_string(count) + " colours, 256 are needed");
                continue;
            }
            colours = base + end + 2;
        }
        const bool cutout = !m.name.empty() && m.name[0] == '{';
        model::Texture tex;
        tex.name = m.name;
        tex.width = m.width;
        tex.height = m.height;
        tex.rgba.resize(pixels * 4);
        indexed_to_rgba(base + m.offsets[0], pixels, colours, cutout, tex.rgba.data());
        if (!goldsrc && ascii_lower(m.name).starts_with("sky") && m.width % 2 == 0)
            out.sky = sky_layers(base + m.offsets[0], m.width, m.height, colours, m.name);
        out.by_miptex[i] = int32_t(out.textures.size());
        out.textures.push_back(std::move(tex));
    }
    return out;
}

void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map) {
    const Map q(bsp);
    q.visit([&](const auto& tables) {
        using T = std::decay_t<decltype(tables)>;
        if constexpr (std::is_same_v<T, Tables<Bsp29Types>>) Builder<Bsp29Types>(q, tables, options, map).run();
        else if constexpr (std::is_same_v<T, Tables<Bsp2Types>>) Builder<Bsp2Types>(q, tables, options, map).run();
        else Builder<Bsp2RmqTypes>(q, tables, options, map).run();
    });
}

}  // namespace bspkit::quake1
