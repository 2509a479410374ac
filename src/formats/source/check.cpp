// Cross-reference checks of Source maps (`bspkit check`): every index from
// one lump into another, lightmap extents, displacement sizes, the BSP tree,
// game lumps and static props. Broken references are errors, MAX_MAP_* limits
// warnings. Work is linear in the lump sizes and findings are capped per
// (lump, field), so hostile files stay cheap.
#include <bspkit/check.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/formats/source_props.hpp>

#include "formats/common/check_util.hpp"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <set>

namespace bspkit::source {
namespace {

constexpr size_t kMaxFindingsPerField = 20;

/// The shared checker (uniform wording, capped findings) plus the map.
class Checker : public checks::Checker {
public:
    Checker(const Bsp& bsp, const Map& map, CheckReport& report)
        : checks::Checker(report, kMaxFindingsPerField), bsp_(bsp), map_(map) {
        for (size_t i = 0; i < bsp.lump_count(); ++i) names_.emplace_back(bsp.lump_name(i));
    }

    /// Lump names made once: the checks name lumps in every record's call.
    const std::string& name(size_t lump) const {
        if (lump < names_.size()) return names_[lump];
        static const std::string none;
        return none;
    }

    /// An empty range references nothing, wherever it starts: vrad leaves
    /// firstAmbientSample past the end for leafs without samples and detail
    /// props without styles store m_LightStyles 0xFFFFFFFF.
    bool range(std::string_view lump, int64_t record, std::string_view first_field, int64_t first,
               std::string_view num_field, int64_t num, size_t count, std::string_view target) {
        if (num == 0) return true;
        return checks::Checker::range(lump, record, first_field, first, num_field, num, count, target);
    }

    /// [first, first + n) where n is implied (not a field): the start is blamed.
    bool implied_range(std::string_view lump, int64_t record, std::string_view first_field, int64_t first,
                       const std::string& what, int64_t n, size_t count, std::string_view target) {
        if (first >= 0 && n >= 0 && uint64_t(first) + uint64_t(n) <= count) return true;
        error(lump, record, first_field,
              std::string(first_field) + " " + std::to_string(first) + " + " + std::to_string(n) + " " + what +
                  " runs past the " + std::to_string(count) + " records of " + std::string(target));
        return false;
    }

    using checks::Checker::limit;
    void limit(size_t lump, size_t count, size_t max, const char* define) {
        checks::Checker::limit(name(lump), count, max, define, "Source (SDK 2013 bspfile.h)");
    }

    const Bsp& bsp_;
    const Map& map_;

private:
    std::vector<std::string> names_;
};

// --- geometry ---------------------------------------------------------------

void check_planes_and_vertexes(Checker& c) {
    const std::string pl = c.name(lump::planes), vl = c.name(lump::vertexes);
    const auto planes = c.map_.planes();
    for (size_t i = 0; i < planes.size(); ++i) {
        const float normal[3] = {planes[i].normal.x, planes[i].normal.y, planes[i].normal.z};
        c.unit_normal(pl, int64_t(i), "normal", normal);
        c.finite(pl, int64_t(i), "dist", planes[i].dist);
    }
    const auto vertexes = c.map_.vertexes();
    for (size_t i = 0; i < vertexes.size(); ++i) {
        const float point[3] = {vertexes[i].point.x, vertexes[i].point.y, vertexes[i].point.z};
        c.finite(vl, int64_t(i), "point", point);
    }
}

void check_edges(Checker& c) {
    const auto edges = c.map_.edges();
    const size_t verts = c.map_.vertexes().size();
    const std::string lump = c.name(lump::edges), target = c.name(lump::vertexes);
    for (size_t i = 0; i < edges.size(); ++i)
        for (int k = 0; k < 2; ++k) c.index(lump, int64_t(i), k ? "v[1]" : "v[0]", edges[i].v[k], verts, target);
}

void check_surfedges(Checker& c) {
    const auto se = c.map_.surfedges();
    const size_t edges = c.map_.edges().size();
    const std::string lump = c.name(lump::surfedges), target = c.name(lump::edges);
    for (size_t i = 0; i < se.size(); ++i) {
        const int64_t e = se[i].edge;
        if (e == INT32_MIN) {
            c.error(lump, int64_t(i), "edge", "edge -2147483648 has no absolute value");
            continue;
        }
        c.index(lump, int64_t(i), "edge", e < 0 ? -e : e, edges, target);
    }
}

// --- faces and lighting -----------------------------------------------------

/// Bytes of lightmap data a face needs from lightofs on (all styles, all bump vectors).
struct LightmapNeed {
    int styles = 0;
    uint64_t bytes = 0;
};

LightmapNeed lightmap_need(const dface_t& f, std::span<const texinfo_t> texinfo, const uint8_t* styles, int max_styles) {
    LightmapNeed n;
    while (n.styles < max_styles && styles[n.styles] != kNoLightStyle) ++n.styles;
    const uint64_t w = uint64_t(int64_t(f.LightmapTextureSizeInLuxels[0]) + 1);
    const uint64_t h = uint64_t(int64_t(f.LightmapTextureSizeInLuxels[1]) + 1);
    const bool bump = f.texinfo >= 0 && size_t(f.texinfo) < texinfo.size() && (texinfo[size_t(f.texinfo)].flags & SURF_BUMPLIGHT);
    n.bytes = w * h * uint64_t(n.styles) * (bump ? 4 : 1) * 4;
    return n;
}

/// The triangles of a face's primitives join its own corners (primitives
/// with vertCount 0, all vbsp writes: "triangles between face vertices") or
/// the primitive's vertices: an index past them is an error, as it is to
/// every verb that draws the face. The primitives' own index ranges are
/// check_face_side_lumps()'s.
void check_primitive_indices(Checker& c, const std::string& lump, int64_t r, const dface_t& f, int n_prims) {
    const Map& m = c.map_;
    const auto prims = m.primitives();
    const auto indices = m.primindices();
    for (int k = 0; k < n_prims; ++k) {
        const dprimitive_t& p = prims[size_t(f.firstPrimID) + size_t(k)];
        if (size_t(p.firstIndex) + p.indexCount > indices.size()) continue;
        const uint32_t corners = p.vertCount > 0 ? p.vertCount : uint32_t(f.numedges);
        for (uint32_t i = p.firstIndex; i < uint32_t(p.firstIndex) + p.indexCount; ++i)
            if (indices[i].index >= corners) {
                c.error(c.name(lump::primindices), int64_t(i), "index",
                        "index " + std::to_string(indices[i].index) + " of primitive " +
                            std::to_string(f.firstPrimID + k) + " (" + lump + " record " + std::to_string(r) +
                            ") is not one of its " + std::to_string(corners) +
                            (p.vertCount > 0 ? " primitive vertices" : " face corners"));
                break;  // one finding per primitive
            }
    }
}

/// One face lump: planes, edges, texinfo, dispinfo, primitives, original
/// faces, lightmaps in `lighting_lump` (may be none).
void check_face_lump(Checker& c, size_t face_lump, std::span<const dface_t> faces, std::optional<size_t> lighting_lump,
                     bool original, bool lighting_only = false) {
    const std::string lump = c.name(face_lump);
    const Map& m = c.map_;
    const size_t planes = m.planes().size(), surfedges = m.surfedges().size(), dispinfo = m.count(lump::dispinfo);
    const auto texinfo = m.texinfo();
    const size_t prims = m.primitives().size(), origfaces = m.originalfaces().size();
    const size_t light_bytes = lighting_lump ? c.bsp_.decoded_length(*lighting_lump) : 0;
    const std::string light_name = lighting_lump ? c.name(*lighting_lump) : "";
    // v17 faces carry eight styles (dface_t keeps four): count them on the
    // stored records. v17 has no per-style average samples before lightofs.
    const bool v17 = m.version() <= 17;
    const auto faces_v17 = face_lump == lump::faces ? m.faces_v17() : m.originalfaces_v17();
    for (size_t i = 0; i < faces.size(); ++i) {
        const dface_t& f = faces[i];
        const int64_t r = int64_t(i);
        if (!lighting_only) {
            c.index(lump, r, "planenum", f.planenum, planes, c.name(lump::planes));
            if (f.numedges < 3)
                c.error(lump, r, "numedges", "numedges " + std::to_string(f.numedges) + " is fewer than the 3 of a polygon");
            else
                c.range(lump, r, "firstedge", f.firstedge, "numedges", f.numedges, surfedges, c.name(lump::surfedges));
            // vbsp's CompactTexinfos renumbers the texinfo of faces, brush sides,
            // overlays, water data and world lights, but not of original faces:
            // their texinfo indexes the table before compaction.
            if (!original) c.index(lump, r, "texinfo", f.texinfo, texinfo.size(), c.name(lump::texinfo), true);
            if (f.dispinfo != -1 && m.version() > 17) c.index(lump, r, "dispinfo", f.dispinfo, dispinfo, c.name(lump::dispinfo));
            if (!v17) {
                const int n_prims = f.numPrims & 0x7fff;  // the top bit marks shadows disabled
                c.range(lump, r, "firstPrimID", f.firstPrimID, "numPrims", n_prims, prims, c.name(lump::primitives));
                if (!original && f.numedges >= 3 && size_t(f.firstPrimID) + size_t(n_prims) <= prims)
                    check_primitive_indices(c, lump, r, f, n_prims);
            }
            if (!original && origfaces > 0) c.index(lump, r, "origFace", f.origFace, origfaces, c.name(lump::originalfaces), true);
        }
        if (f.lightofs == -1 || !lighting_lump) continue;
        if (f.lightofs < 0) {
            c.error(lump, r, "lightofs", "lightofs " + std::to_string(f.lightofs) + " is negative");
            continue;
        }
        if (f.LightmapTextureSizeInLuxels[0] < 0 || f.LightmapTextureSizeInLuxels[1] < 0) {
            c.error(lump, r, "LightmapTextureSizeInLuxels",
                    "negative lightmap size " + std::to_string(f.LightmapTextureSizeInLuxels[0]) + " x " +
                        std::to_string(f.LightmapTextureSizeInLuxels[1]));
            continue;
        }
        const LightmapNeed need = v17 && i < faces_v17.size() ? lightmap_need(f, texinfo, faces_v17[i].styles, 8)
                                                              : lightmap_need(f, texinfo, f.styles, MAXLIGHTMAPS);
        // One average sample per style precedes the lightmap (v18+).
        if (!v17 && f.lightofs < 4 * need.styles)
            c.error(lump, r, "lightofs",
                    "lightofs " + std::to_string(f.lightofs) + " leaves no room for the " + std::to_string(need.styles) +
                        " per-style average sample(s) stored before the lightmap");
        if (uint64_t(f.lightofs) + need.bytes > light_bytes)
            c.error(lump, r, "lightofs",
                    "lightofs " + std::to_string(f.lightofs) + " + " + std::to_string(need.bytes) + " bytes (" +
                        std::to_string(f.LightmapTextureSizeInLuxels[0] + 1) + " x " +
                        std::to_string(f.LightmapTextureSizeInLuxels[1] + 1) + " luxels, " + std::to_string(need.styles) +
                        " style(s)" + (need.bytes && f.texinfo >= 0 && size_t(f.texinfo) < texinfo.size() &&
                                               (texinfo[size_t(f.texinfo)].flags & SURF_BUMPLIGHT)
                                           ? ", bumpmapped x4"
                                           : "") +
                        ") runs past the end of " + light_name + " (" + std::to_string(light_bytes) + " bytes)");
    }
}

void check_faces(Checker& c) {
    const Map& m = c.map_;
    const bool has_ldr_light = c.bsp_.decoded_length(lump::lighting) > 0;
    const bool has_hdr_light = c.bsp_.decoded_length(lump::lighting_hdr) > 0;
    const bool has_hdr_faces = !m.faces_hdr().empty();
    // faces (7) light from lighting (8); in HDR without faces_hdr the engine
    // pairs them with lighting_hdr (53). faces_hdr (58) light from lump 53.
    std::optional<size_t> ldr_light;
    if (has_ldr_light) ldr_light = lump::lighting;
    else if (has_hdr_light && !has_hdr_faces) ldr_light = lump::lighting_hdr;
    check_face_lump(c, lump::faces, m.faces(), ldr_light, false);
    if (has_ldr_light && has_hdr_light && !has_hdr_faces)
        check_face_lump(c, lump::faces, m.faces(), lump::lighting_hdr, false, true);
    check_face_lump(c, lump::faces_hdr, m.faces_hdr(), has_hdr_light ? std::optional<size_t>(lump::lighting_hdr) : std::nullopt,
                    false);
    check_face_lump(c, lump::originalfaces, m.originalfaces(), std::nullopt, true);
    if (!m.faces().empty() && has_hdr_faces && m.faces().size() != m.faces_hdr().size())
        c.error(c.name(lump::faces_hdr), -1, "",
                std::to_string(m.faces_hdr().size()) + " HDR faces, but " + std::to_string(m.faces().size()) +
                    " faces: nodes, leaffaces and models index both");
    if (m.faces().empty() && !has_hdr_faces && (!m.nodes().empty() || !m.models().empty()))
        c.warning(c.name(lump::faces), -1, "", "the map has nodes or models but no faces");
}

/// The face array nodes, leaffaces, models and overlays index (Map::world_faces) and its lump.
std::pair<size_t, size_t> world_faces(const Checker& c) { return {c.map_.world_face_lump(), c.map_.world_faces().size()}; }

void check_face_side_lumps(Checker& c) {
    const Map& m = c.map_;
    const auto [face_lump, n_faces] = world_faces(c);
    // faceids, face_macro_texture_info: one per face.
    if (!m.faceids().empty() && m.faceids().size() != n_faces)
        c.warning(c.name(lump::faceids), -1, "",
                  std::to_string(m.faceids().size()) + " face ids for " + std::to_string(n_faces) + " faces");
    const auto macro = m.face_macro_texture_info();
    if (!macro.empty() && macro.size() != n_faces)
        c.warning(c.name(lump::face_macro_texture_info), -1, "",
                  std::to_string(macro.size()) + " entries for " + std::to_string(n_faces) + " faces");
    const size_t table = m.texdata_string_table().size();
    for (size_t i = 0; i < macro.size(); ++i)
        if (macro[i].m_MacroTextureNameID != 0xffff)
            c.index(c.name(lump::face_macro_texture_info), int64_t(i), "m_MacroTextureNameID", macro[i].m_MacroTextureNameID,
                    table, c.name(lump::texdata_string_table));
    // vertnormalindices -> vertnormals; faces take numedges of them each, in order.
    const auto vni = m.vertnormalindices();
    const size_t vn = m.vertnormals().size();
    if (!vni.empty()) {
        uint64_t corners = 0;
        for (const dface_t& f : face_lump == lump::faces ? m.faces() : m.faces_hdr()) corners += uint64_t(std::max<int>(0, f.numedges));
        if (corners != vni.size())
            c.error(c.name(lump::vertnormalindices), -1, "",
                    std::to_string(vni.size()) + " vertex normal indices, but the " + std::to_string(n_faces) + " " +
                        c.name(face_lump) + " have " + std::to_string(corners) + " corners (one normal each)");
    }
    for (size_t i = 0; i < vni.size(); ++i)
        c.index(c.name(lump::vertnormalindices), int64_t(i), "index", vni[i].index, vn, c.name(lump::vertnormals));
    // primitives -> primindices / primverts
    const auto prims = m.primitives();
    const size_t pi = m.primindices().size(), pv = m.primverts().size();
    for (size_t i = 0; i < prims.size(); ++i) {
        const dprimitive_t& p = prims[i];
        c.range(c.name(lump::primitives), int64_t(i), "firstIndex", p.firstIndex, "indexCount", p.indexCount, pi,
                c.name(lump::primindices));
        c.range(c.name(lump::primitives), int64_t(i), "firstVert", p.firstVert, "vertCount", p.vertCount, pv,
                c.name(lump::primverts));
    }
}

void check_lightmap_lumps(Checker& c) {
    for (size_t l : {lump::lighting, lump::lighting_hdr}) {
        const size_t n = c.bsp_.decoded_length(l);
        if (n % 4) c.error(c.name(l), -1, "", "length " + std::to_string(n) + " is not a whole number of 4-byte samples");
        if (n > 0x1000000) c.warning(c.name(l), -1, "", std::to_string(n) + " bytes exceed MAX_MAP_LIGHTING (16 MiB)");
    }
}

// --- textures -------------------------------------------------------------

void check_textures(Checker& c) {
    const Map& m = c.map_;
    const auto texinfo = m.texinfo();
    const auto texdata = m.texdata();
    const auto table = m.texdata_string_table();
    const std::string_view data = m.texdata_string_data();
    for (size_t i = 0; i < texinfo.size(); ++i)
        c.index(c.name(lump::texinfo), int64_t(i), "texdata", texinfo[i].texdata, texdata.size(), c.name(lump::texdata), true);
    for (size_t i = 0; i < texdata.size(); ++i)
        c.index(c.name(lump::texdata), int64_t(i), "nameStringTableID", texdata[i].nameStringTableID, table.size(),
                c.name(lump::texdata_string_table));
    for (size_t i = 0; i < table.size(); ++i) {
        const int32_t off = table[i].offset;
        const std::string lump = c.name(lump::texdata_string_table);
        if (off < 0 || size_t(off) >= data.size()) {
            c.error(lump, int64_t(i), "offset",
                    "offset " + std::to_string(off) + " is outside " + c.name(lump::texdata_string_data) + " (" +
                        std::to_string(data.size()) + " bytes)");
            continue;
        }
        const size_t nul = data.find('\0', size_t(off));
        if (nul == std::string_view::npos) {
            c.error(lump, int64_t(i), "offset", "the texture name at offset " + std::to_string(off) + " has no terminating NUL");
            continue;
        }
        if (nul == size_t(off))
            c.warning(lump, int64_t(i), "offset",
                      "the texture name at offset " + std::to_string(off) + " is empty: the engine shows its error material");
        else if (nul - size_t(off) >= size_t(TEXTURE_NAME_LENGTH))
            c.warning(lump, int64_t(i), "offset",
                      "texture name of " + std::to_string(nul - size_t(off)) + " characters exceeds TEXTURE_NAME_LENGTH (128)");
    }
}

// --- tree ---------------------------------------------------------------------

void check_tree(Checker& c) {
    const Map& m = c.map_;
    const auto nodes = m.nodes();
    const auto leafs = m.leafs();
    const auto models = m.models();
    const size_t planes = m.planes().size();
    const auto [face_lump, n_faces] = world_faces(c);
    const std::string nl = c.name(lump::nodes), ll = c.name(lump::leafs);
    for (size_t i = 0; i < nodes.size(); ++i) {
        const dnode_t& n = nodes[i];
        const int64_t r = int64_t(i);
        c.index(nl, r, "planenum", n.planenum, planes, c.name(lump::planes));
        for (int k = 0; k < 2; ++k) {
            const int64_t child = n.children[k];
            const std::string_view field = k ? "children[1]" : "children[0]";
            if (child >= 0) {
                if (c.index(nl, r, field, child, nodes.size(), nl) && size_t(child) == i)
                    c.error(nl, r, field, std::string(field) + " is the node itself");
            } else if (uint64_t(-1 - child) >= leafs.size()) {
                c.error(nl, r, field,
                        std::string(field) + " " + std::to_string(child) + " names leaf " + std::to_string(-1 - child) + ": " + ll +
                            " has " + std::to_string(leafs.size()) + " records");
            }
        }
        c.range(nl, r, "firstface", n.firstface, "numfaces", n.numfaces, n_faces, c.name(face_lump));
    }
    // Each model's tree: no node reached twice (cycle or shared subtree).
    std::vector<int32_t> owner(nodes.size(), -1);
    std::vector<int32_t> stack;
    const std::string ml = c.name(lump::models);
    for (size_t mi = 0; mi < models.size(); ++mi) {
        const dmodel_t& md = models[mi];
        const int64_t r = int64_t(mi);
        c.range(ml, r, "firstface", md.firstface, "numfaces", md.numfaces, n_faces, c.name(face_lump));
        if (!c.index(ml, r, "headnode", md.headnode, nodes.size(), nl)) continue;
        stack.assign(1, md.headnode);
        while (!stack.empty()) {
            const int32_t at = stack.back();
            stack.pop_back();
            if (owner[size_t(at)] != -1) {
                c.error(nl, at, "children",
                        "node " + std::to_string(at) + " is reached twice (from model " + std::to_string(owner[size_t(at)]) +
                            (owner[size_t(at)] == int32_t(mi) ? ": a cycle or shared subtree)" : " and model " + std::to_string(mi) + ")"));
                continue;
            }
            owner[size_t(at)] = int32_t(mi);
            for (int32_t child : nodes[size_t(at)].children)
                if (child >= 0 && size_t(child) < nodes.size()) stack.push_back(child);
        }
    }
}

void check_leafs(Checker& c) {
    const Map& m = c.map_;
    const auto leafs = m.leafs();
    const std::string ll = c.name(lump::leafs);
    const size_t leaffaces = m.leaffaces().size(), leafbrushes = m.leafbrushes().size();
    const size_t areas = m.areas().size(), water = m.leafwaterdata().size();
    std::optional<int32_t> clusters;
    try {
        if (c.bsp_.decoded_length(lump::visibility) > 0) clusters = m.vis().numclusters;
    } catch (const Error&) {
        // reported by check_vis
    }
    for (size_t i = 0; i < leafs.size(); ++i) {
        const dleaf_t& l = leafs[i];
        const int64_t r = int64_t(i);
        c.range(ll, r, "firstleafface", l.firstleafface, "numleaffaces", l.numleaffaces, leaffaces, c.name(lump::leaffaces));
        c.range(ll, r, "firstleafbrush", l.firstleafbrush, "numleafbrushes", l.numleafbrushes, leafbrushes,
                c.name(lump::leafbrushes));
        if (clusters) c.index(ll, r, "cluster", l.cluster, size_t(*clusters), "the visibility lump's numclusters", true);
        else if (l.cluster < -1) c.error(ll, r, "cluster", "cluster " + std::to_string(l.cluster) + " is below -1");
        if (areas > 0) c.index(ll, r, "area", l.area(), areas, c.name(lump::areas));
        c.index(ll, r, "leafWaterDataID", l.leafWaterDataID, water, c.name(lump::leafwaterdata), true);
    }
    const auto [face_lump, n_faces] = world_faces(c);
    const auto lf = m.leaffaces();
    for (size_t i = 0; i < lf.size(); ++i) c.index(c.name(lump::leaffaces), int64_t(i), "face", lf[i].face, n_faces, c.name(face_lump));
    const auto lb = m.leafbrushes();
    const size_t brushes = m.brushes().size();
    for (size_t i = 0; i < lb.size(); ++i) c.index(c.name(lump::leafbrushes), int64_t(i), "brush", lb[i].brush, brushes, c.name(lump::brushes));
    // Per-leaf side lumps.
    const auto dist = m.leafmindisttowater();
    if (!dist.empty() && dist.size() != leafs.size())
        c.warning(c.name(lump::leafmindisttowater), -1, "",
                  std::to_string(dist.size()) + " entries for " + std::to_string(leafs.size()) + " leafs");
    const auto wd = m.leafwaterdata();
    for (size_t i = 0; i < wd.size(); ++i)
        c.index(c.name(lump::leafwaterdata), int64_t(i), "surfaceTexInfoID", wd[i].surfaceTexInfoID, m.texinfo().size(),
                c.name(lump::texinfo), true);
    // Ambient lighting indices (v20+): one per leaf, ranges inside the samples.
    for (bool hdr : {false, true}) {
        const auto index = m.leaf_ambient_index(hdr);
        if (index.empty()) continue;
        const size_t il = hdr ? lump::leaf_ambient_index_hdr : lump::leaf_ambient_index;
        const size_t sl = hdr ? lump::leaf_ambient_lighting_hdr : lump::leaf_ambient_lighting;
        const size_t samples = m.leaf_ambient_lighting(hdr).size();
        if (index.size() != leafs.size())
            c.error(c.name(il), -1, "", std::to_string(index.size()) + " entries for " + std::to_string(leafs.size()) + " leafs");
        for (size_t i = 0; i < index.size(); ++i)
            c.range(c.name(il), int64_t(i), "firstAmbientSample", index[i].firstAmbientSample, "ambientSampleCount",
                    index[i].ambientSampleCount, samples, c.name(sl));
    }
}

// --- brushes, areas -------------------------------------------------------

void check_brushes(Checker& c) {
    const Map& m = c.map_;
    const auto brushes = m.brushes();
    const auto sides = m.brushsides();
    const std::string bl = c.name(lump::brushes), sl = c.name(lump::brushsides);
    for (size_t i = 0; i < brushes.size(); ++i) {
        const dbrush_t& b = brushes[i];
        c.range(bl, int64_t(i), "firstside", b.firstside, "numsides", b.numsides, sides.size(), sl);
        if (b.numsides > MAX_BRUSH_SIDES)
            c.warning(bl, int64_t(i), "numsides", "numsides " + std::to_string(b.numsides) + " exceeds MAX_BRUSH_SIDES (128)");
    }
    const size_t planes = m.planes().size(), texinfo = m.texinfo().size(), dispinfo = m.count(lump::dispinfo);
    for (size_t i = 0; i < sides.size(); ++i) {
        const dbrushside_t& s = sides[i];
        c.index(sl, int64_t(i), "planenum", s.planenum, planes, c.name(lump::planes));
        c.index(sl, int64_t(i), "texinfo", s.texinfo, texinfo, c.name(lump::texinfo), true);
        // vbsp's EmitBrushes never sets dispinfo: 0 is what every compiled
        // map holds, with or without displacements.
        if (m.version() > 17 && s.dispinfo != 0)
            c.index(sl, int64_t(i), "dispinfo", s.dispinfo, dispinfo, c.name(lump::dispinfo), true);
    }
}

void check_areas(Checker& c) {
    const Map& m = c.map_;
    const auto areas = m.areas();
    const auto portals = m.areaportals();
    const std::string al = c.name(lump::areas), pl = c.name(lump::areaportals);
    for (size_t i = 0; i < areas.size(); ++i)
        c.range(al, int64_t(i), "firstareaportal", areas[i].firstareaportal, "numareaportals", areas[i].numareaportals,
                portals.size(), pl);
    const size_t clip = m.clipportalverts().size(), planes = m.planes().size();
    for (size_t i = 0; i < portals.size(); ++i) {
        const dareaportal_t& p = portals[i];
        c.index(pl, int64_t(i), "otherarea", p.otherarea, areas.size(), al);
        c.range(pl, int64_t(i), "m_FirstClipPortalVert", p.m_FirstClipPortalVert, "m_nClipPortalVerts", p.m_nClipPortalVerts,
                clip, c.name(lump::clipportalverts));
        if (p.m_nClipPortalVerts > 0 || p.planenum != 0) c.index(pl, int64_t(i), "planenum", p.planenum, planes, c.name(lump::planes));
    }
}

// --- displacements ------------------------------------------------------------

void check_displacements(Checker& c) {
    const Map& m = c.map_;
    const auto disp = m.dispinfo();
    if (disp.empty()) return;
    const std::string dl = c.name(lump::dispinfo);
    const size_t verts = m.disp_verts().size(), tris = m.disp_tris().size();
    const auto [face_lump, n_faces] = world_faces(c);
    const auto faces = face_lump == lump::faces ? m.faces() : m.faces_hdr();
    const size_t alphas = c.bsp_.decoded_length(lump::disp_lightmap_alphas);
    const size_t samples = c.bsp_.decoded_length(lump::disp_lightmap_sample_positions);
    // Field names of the neighbour checks, made once rather than per displacement.
    std::string edge_field[4][2], corner_field[4], corner_neighbor_field[4][MAX_DISP_CORNER_NEIGHBORS];
    for (int e = 0; e < 4; ++e) {
        for (int s = 0; s < 2; ++s)
            edge_field[e][s] = "EdgeNeighbors[" + std::to_string(e) + "].m_SubNeighbors[" + std::to_string(s) + "].m_iNeighbor";
        corner_field[e] = "CornerNeighbors[" + std::to_string(e) + "]";
        for (int j = 0; j < MAX_DISP_CORNER_NEIGHBORS; ++j)
            corner_neighbor_field[e][j] = corner_field[e] + ".m_Neighbors[" + std::to_string(j) + "]";
    }
    for (size_t i = 0; i < disp.size(); ++i) {
        const ddispinfo_t& d = disp[i];
        const int64_t r = int64_t(i);
        if (d.power < MIN_MAP_DISP_POWER || d.power > MAX_MAP_DISP_POWER) {
            c.error(dl, r, "power", "power " + std::to_string(d.power) + " is outside 2..4");
        } else {
            c.implied_range(dl, r, "DispVertStart", d.DispVertStart, "(2^power+1)^2 vertices", d.vert_count(), verts,
                            c.name(lump::disp_verts));
            if (tris > 0 || m.version() >= 20)
                c.implied_range(dl, r, "DispTriStart", d.DispTriStart, "2*(2^power)^2 triangles", d.tri_count(), tris,
                                c.name(lump::disp_tris));
        }
        if (c.index(dl, r, "MapFace", d.MapFace, n_faces, c.name(face_lump)) && faces[d.MapFace].dispinfo != int16_t(i))
            c.error(dl, r, "MapFace",
                    "MapFace " + std::to_string(d.MapFace) + " has dispinfo " + std::to_string(faces[d.MapFace].dispinfo) +
                        ", not " + std::to_string(i));
        if (alphas > 0 && (d.LightmapAlphaStart < 0 || size_t(d.LightmapAlphaStart) > alphas))
            c.error(dl, r, "LightmapAlphaStart",
                    "LightmapAlphaStart " + std::to_string(d.LightmapAlphaStart) + " is outside " +
                        c.name(lump::disp_lightmap_alphas) + " (" + std::to_string(alphas) + " bytes)");
        if (samples > 0 && (d.LightmapSamplePositionStart < 0 || size_t(d.LightmapSamplePositionStart) > samples))
            c.error(dl, r, "LightmapSamplePositionStart",
                    "LightmapSamplePositionStart " + std::to_string(d.LightmapSamplePositionStart) + " is outside " +
                        c.name(lump::disp_lightmap_sample_positions) + " (" + std::to_string(samples) + " bytes)");
        for (int e = 0; e < 4; ++e)
            for (int s = 0; s < 2; ++s) {
                const uint16_t n = d.EdgeNeighbors[e].m_SubNeighbors[s].m_iNeighbor;
                if (n != 0xffff)
                    c.index(dl, r, edge_field[e][s], n, disp.size(), dl);
            }
        for (int k = 0; k < 4; ++k) {
            const CDispCornerNeighbors& cn = d.CornerNeighbors[k];
            const std::string& field = corner_field[k];
            if (cn.m_nNeighbors > MAX_DISP_CORNER_NEIGHBORS) {
                c.error(dl, r, field + ".m_nNeighbors", "m_nNeighbors " + std::to_string(cn.m_nNeighbors) + " exceeds 4");
                continue;
            }
            for (int j = 0; j < cn.m_nNeighbors; ++j)
                c.index(dl, r, corner_neighbor_field[k][j], cn.m_Neighbors[j], disp.size(), dl);
        }
    }
    // Faces that say they are displacements must be named back.
    for (size_t f = 0; f < faces.size(); ++f) {
        const int16_t d = faces[f].dispinfo;
        if (d >= 0 && size_t(d) < disp.size() && disp[size_t(d)].MapFace != f)
            c.error(c.name(face_lump), int64_t(f), "dispinfo",
                    "dispinfo " + std::to_string(d) + " names MapFace " + std::to_string(disp[size_t(d)].MapFace) +
                        ", not this face");
    }
}

// --- visibility, lights, overlays, occlusion -------------------------------

void check_vis(Checker& c) {
    const ByteSpan vis = c.bsp_.decoded(lump::visibility);
    if (vis.empty()) return;
    const std::string vl = c.name(lump::visibility);
    VisHeader h;
    try {
        h = c.map_.vis();
    } catch (const Error& e) {
        c.error(vl, -1, "numclusters", e.detail());
        return;
    }
    const uint64_t header = 4 + uint64_t(h.numclusters) * 8;
    for (size_t i = 0; i < h.bitofs.size(); ++i)
        for (int k = 0; k < 2; ++k) {
            const int32_t off = h.bitofs[i][size_t(k)];
            if (off < int64_t(header) || uint64_t(off) >= vis.size())
                c.error(vl, int64_t(i), k == 0 ? "bitofs[DVIS_PVS]" : "bitofs[DVIS_PAS]",
                        "offset " + std::to_string(off) + " is outside the bit vectors (bytes " + std::to_string(header) +
                            " to " + std::to_string(vis.size()) + ")");
        }
    if (vis.size() > 0x1000000) c.warning(vl, -1, "", std::to_string(vis.size()) + " bytes exceed MAX_MAP_VISIBILITY (16 MiB)");
}

void check_worldlights(Checker& c) {
    const Map& m = c.map_;
    std::optional<int32_t> clusters;
    try {
        if (c.bsp_.decoded_length(lump::visibility) > 0) clusters = m.vis().numclusters;
    } catch (const Error&) {
    }
    for (bool hdr : {false, true}) {
        const size_t l = hdr ? lump::worldlights_hdr : lump::worldlights;
        const auto lights = m.worldlights(hdr);
        const std::string name = c.name(l);
        for (size_t i = 0; i < lights.size(); ++i) {
            const dworldlight_v1_t& w = lights[i];
            if (w.type < emit_surface || w.type > emit_skyambient)
                c.error(name, int64_t(i), "type", "type " + std::to_string(w.type) + " is not an emittype_t (0..5)");
            if (clusters) c.index(name, int64_t(i), "cluster", w.cluster, size_t(*clusters), "the visibility lump's numclusters", true);
            if (w.type == emit_surface) c.index(name, int64_t(i), "texinfo", w.texinfo, m.texinfo().size(), c.name(lump::texinfo), true);
        }
        c.limit(l, lights.size(), 8192, "MAX_MAP_WORLDLIGHTS");
    }
}

template <class Overlay>
void check_overlay_lump(Checker& c, size_t l, std::span<const Overlay> overlays, int max_faces) {
    const std::string name = c.name(l);
    const auto [face_lump, n_faces] = world_faces(c);
    const size_t texinfo = c.map_.texinfo().size();
    for (size_t i = 0; i < overlays.size(); ++i) {
        const Overlay& o = overlays[i];
        c.index(name, int64_t(i), "nTexInfo", o.nTexInfo, texinfo, c.name(lump::texinfo));
        const int n = o.face_count();
        if (n > max_faces) {
            c.error(name, int64_t(i), "m_nFaceCountAndRenderOrder",
                    "face count " + std::to_string(n) + " exceeds the " + std::to_string(max_faces) + " slots of aFaces");
            continue;
        }
        for (int k = 0; k < n; ++k)
            c.index(name, int64_t(i), "aFaces[" + std::to_string(k) + "]", o.aFaces[k], n_faces, c.name(face_lump));
    }
}

void check_overlays(Checker& c) {
    const Map& m = c.map_;
    const auto overlays = m.overlays();
    check_overlay_lump<doverlay_t>(c, lump::overlays, overlays, OVERLAY_BSP_FACE_COUNT);
    check_overlay_lump<dwateroverlay_t>(c, lump::wateroverlays, m.wateroverlays(), WATEROVERLAY_BSP_FACE_COUNT);
    for (size_t l : {lump::overlay_fades, lump::overlay_system_levels}) {
        const size_t n = m.count(l);
        if (n > 0 && n != overlays.size())
            c.error(c.name(l), -1, "", std::to_string(n) + " entries for " + std::to_string(overlays.size()) + " overlays");
    }
    c.limit(lump::overlays, overlays.size(), 512, "MAX_MAP_OVERLAYS");
}

void check_occlusion(Checker& c) {
    if (c.bsp_.decoded_length(lump::occlusion) == 0) return;
    const std::string ol = c.name(lump::occlusion);
    const Occlusion* occ = nullptr;
    try {
        occ = &c.map_.occlusion();
    } catch (const Error& e) {
        c.error(ol, -1, "", e.detail());
        return;
    }
    const size_t verts = c.map_.vertexes().size(), planes = c.map_.planes().size(), areas = c.map_.areas().size();
    for (size_t i = 0; i < occ->occluders.size(); ++i) {
        const doccluderdata_t& o = occ->occluders[i];
        c.range(ol, int64_t(i), "firstpoly", o.firstpoly, "polycount", o.polycount, occ->polys.size(), "the occluder polygons");
        if (occ->lump_version >= 1 && areas > 0) c.index(ol, int64_t(i), "area", o.area, areas, c.name(lump::areas));
    }
    for (size_t i = 0; i < occ->polys.size(); ++i) {
        const doccluderpolydata_t& p = occ->polys[i];
        c.range(ol, int64_t(i), "firstvertexindex", p.firstvertexindex, "vertexcount", p.vertexcount,
                occ->vertex_indices.size(), "the occluder vertex indices");
        c.index(ol, int64_t(i), "planenum", p.planenum, planes, c.name(lump::planes));
    }
    for (size_t i = 0; i < occ->vertex_indices.size(); ++i)
        c.index(ol, int64_t(i), "vertexIndices", occ->vertex_indices[i], verts, c.name(lump::vertexes));
}

void check_physcollide(Checker& c) {
    if (c.bsp_.decoded_length(lump::physcollide) == 0) return;
    const std::string pl = c.name(lump::physcollide);
    std::vector<PhysModel> models;
    try {
        models = c.map_.physcollide();
    } catch (const Error& e) {
        c.error(pl, -1, "", e.detail());
        return;
    }
    const size_t n = c.map_.models().size();
    for (size_t i = 0; i < models.size(); ++i)
        c.index(pl, int64_t(i), "modelIndex", models[i].header.modelIndex, n, c.name(lump::models));
}

// --- pakfile ------------------------------------------------------------------

/// Entry names that would land outside an extraction directory ("..",
/// absolute paths, drive letters, backslash forms of those) are errors: the
/// engine resolves them against the game's search paths.
void check_pakfile(Checker& c) {
    const auto index = c.bsp_.layout().find_lump("pakfile");
    if (!index || c.bsp_.decoded_length(*index) == 0) return;
    const std::string pl = c.name(*index);
    Pakfile pak;
    try {
        pak = Pakfile::read(c.bsp_);
    } catch (const Error& e) {
        c.error(pl, -1, "", e.detail());
        return;
    }
    const auto& entries = pak.entries();
    for (size_t i = 0; i < entries.size(); ++i) {
        std::string why;
        if (entry_path(entries[i].name, &why)) continue;
        c.error(pl, int64_t(i), "name", "entry \"" + bytes_to_utf8(entries[i].name) + "\" is unsafe: " + why);
    }
}

// --- game lumps ---------------------------------------------------------------

void check_game_lumps(Checker& c) {
    const Bsp& bsp = c.bsp_;
    const auto& games = bsp.game_lumps();
    const std::string gl = c.name(lump::game_lump);
    // Stored extents must not overlap one another.
    struct Extent {
        const uint8_t* begin;
        size_t size;
        size_t k;
    };
    std::vector<Extent> ext;
    for (size_t k = 0; k < games.size(); ++k) {
        const ByteSpan s = bsp.game_lump_stored(k);
        if (!s.empty()) ext.push_back({s.data(), s.size(), k});
    }
    std::sort(ext.begin(), ext.end(), [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
    for (size_t i = 1; i < ext.size(); ++i)
        if (ext[i - 1].begin + ext[i - 1].size > ext[i].begin)
            c.error(gl, int64_t(ext[i].k), "fileofs",
                    "game lump " + games[ext[i].k].name() + " overlaps game lump " + games[ext[i - 1].k].name());

    // Each game lump must lie inside lump 35 (the container reads what is
    // inside and warns; here it is an error naming the directory entry).
    for (size_t k = 0; k < games.size(); ++k) {
        const GameLump& g = games[k];
        const size_t stored = bsp.game_lump_stored(k).size();
        const bool short_read = g.compressed() ? (g.length > 0 && stored == 0) : stored != size_t(std::max(g.length, 0));
        if (short_read)
            c.error(gl, int64_t(k), "fileofs",
                    "game lump " + g.name() + " at fileofs " + std::to_string(g.offset) + " (" +
                        std::to_string(g.length) + " bytes) does not lie inside the game lump; " +
                        std::to_string(stored) + " bytes of it do");
    }

    const size_t n_leafs = c.map_.leafs().size();
    const std::string ll = c.name(lump::leafs);
    for (size_t k = 0; k < games.size(); ++k) {
        const GameLump& g = games[k];
        const std::string name = gl + " " + g.name();
        ByteSpan data;
        try {
            data = bsp.game_lump_decoded(k);
        } catch (const Error& e) {
            c.error(name, -1, "", e.detail());
            continue;
        }
        const Location where{bsp.file_name(), name, -1};
        try {
            if (g.id == GAMELUMP_STATIC_PROPS) {
                const StaticPropsLump sp = decode_static_props(data, g.version, bsp.byte_order(), c.map_.version(), where);
                if (sp.format.variant == StaticPropVariant::unknown)
                    c.warning(name, -1, "", "unknown static prop layout: " + sp.format.reason);
                for (size_t i = 0; i < sp.leaves.size(); ++i) c.index(name, int64_t(i), "leaf", sp.leaves[i], n_leafs, ll);
                for (size_t i = 0; i < sp.props.size(); ++i) {
                    const StaticProp& p = sp.props[i];
                    c.index(name, int64_t(i), "PropType", p.prop_type, sp.names.size(), "the static prop dictionary");
                    c.range(name, int64_t(i), "FirstLeaf", p.first_leaf, "LeafCount", p.leaf_count, sp.leaves.size(),
                            "the static prop leaf list");
                }
            } else if (g.id == GAMELUMP_DETAIL_PROPS) {
                if (g.version < GAMELUMP_DETAIL_PROPS_VERSION) continue;  // old format, ignored by the engine
                // The objects are walked where they lie, not copied (a dprp is often the biggest game lump).
                const DetailPropsSections dp = detail_props_sections(data, g.version, bsp.byte_order(), where);
                const size_t n_sprites = dp.sprites.size() / sizeof(DetailSpriteDictLump_t);
                for_each_record<DetailObjectLump_t>(dp.objects, bsp.byte_order(), [&](const DetailObjectLump_t& o, size_t i) {
                    if (o.m_Type == DETAIL_PROP_TYPE_MODEL)
                        c.index(name, int64_t(i), "m_DetailModel", o.m_DetailModel, dp.models.size(), "the detail model dictionary");
                    else
                        c.index(name, int64_t(i), "m_DetailModel", o.m_DetailModel, n_sprites, "the detail sprite dictionary");
                    c.index(name, int64_t(i), "m_Leaf", o.m_Leaf, n_leafs, ll);
                });
                // Light style ranges against dplt (checked once it is decoded).
                const auto lt = find_game_lump(bsp, GAMELUMP_DETAIL_PROP_LIGHTING);
                if (lt) {
                    const std::string dplt = gl + " dplt";  // once, not per object
                    const auto styles = decode_detail_prop_lighting(bsp.game_lump_decoded(*lt), bsp.byte_order(),
                                                                    {bsp.file_name(), dplt, -1});
                    for_each_record<DetailObjectLump_t>(dp.objects, bsp.byte_order(), [&](const DetailObjectLump_t& o, size_t i) {
                        c.range(name, int64_t(i), "m_LightStyles", o.m_LightStyles, "m_LightStyleCount", o.m_LightStyleCount,
                                styles.size(), dplt);
                    });
                }
            } else if (g.id == GAMELUMP_DETAIL_PROP_LIGHTING || g.id == GAMELUMP_DETAIL_PROP_LIGHTING_HDR) {
                decode_detail_prop_lighting(data, bsp.byte_order(), where);
            }
        } catch (const Error& e) {
            c.error(name, -1, "", e.detail());
        }
    }
}

// --- limits -------------------------------------------------------------------

void check_limits(Checker& c) {
    const Map& m = c.map_;
    struct Limit {
        size_t lump;
        size_t max;
        const char* define;
    };
    static constexpr Limit kLimits[] = {
        {lump::planes, 65536, "MAX_MAP_PLANES"},       {lump::vertexes, 65536, "MAX_MAP_VERTS"},
        {lump::edges, 256000, "MAX_MAP_EDGES"},        {lump::surfedges, 512000, "MAX_MAP_SURFEDGES"},
        {lump::faces, 65536, "MAX_MAP_FACES"},         {lump::faces_hdr, 65536, "MAX_MAP_FACES"},
        {lump::originalfaces, 65536, "MAX_MAP_FACES"}, {lump::texinfo, 12288, "MAX_MAP_TEXINFO"},
        {lump::texdata, 2048, "MAX_MAP_TEXDATA"},      {lump::models, 1024, "MAX_MAP_MODELS"},
        {lump::brushes, 8192, "MAX_MAP_BRUSHES"},      {lump::brushsides, 65536, "MAX_MAP_BRUSHSIDES"},
        {lump::nodes, 65536, "MAX_MAP_NODES"},         {lump::leafs, 65536, "MAX_MAP_LEAFS"},
        {lump::leaffaces, 65536, "MAX_MAP_LEAFFACES"}, {lump::leafbrushes, 65536, "MAX_MAP_LEAFBRUSHES"},
        {lump::dispinfo, 2048, "MAX_MAP_DISPINFO"},    {lump::areas, 256, "MAX_MAP_AREAS"},
        {lump::areaportals, 1024, "MAX_MAP_AREAPORTALS"}, {lump::cubemaps, 1024, "MAX_MAP_CUBEMAPSAMPLES"},
        {lump::leafwaterdata, 32768, "MAX_MAP_LEAFWATERDATA"}, {lump::primitives, 32768, "MAX_MAP_PRIMITIVES"},
        {lump::primverts, 65536, "MAX_MAP_PRIMVERTS"}, {lump::primindices, 65536, "MAX_MAP_PRIMINDICES"},
        {lump::vertnormals, 256000, "MAX_MAP_VERTNORMALS"}, {lump::vertnormalindices, 256000, "MAX_MAP_VERTNORMALINDICES"},
        {lump::wateroverlays, 16384, "MAX_MAP_WATEROVERLAYS"}, {lump::texdata_string_table, 65536, "MAX_MAP_TEXDATA_STRING_TABLE"},
    };
    for (const Limit& l : kLimits) c.limit(l.lump, m.count(l.lump), l.max, l.define);
    const size_t strings = c.bsp_.decoded_length(lump::texdata_string_data);
    if (strings > 256000)
        c.warning(c.name(lump::texdata_string_data), -1, "",
                  std::to_string(strings) + " bytes exceed MAX_MAP_TEXDATA_STRING_DATA (256000)");
    const size_t ents = c.bsp_.decoded_length(lump::entities);
    if (ents > 0x80000)
        c.warning(c.name(lump::entities), -1, "", std::to_string(ents) + " bytes exceed MAX_MAP_ENTSTRING (512 KiB)");
}

}  // namespace

void check(const Bsp& bsp, CheckReport& report) {
    // Every lump decoded on both cores first when compressed (console and bspzip'd maps): LZMA
    // decoding is most of a check's time there. Each must decode, those no step reads included
    // (below): a stream that does not is an error, as it is to the engine and to every other verb.
    std::vector<size_t> read(bsp.lump_count());
    std::iota(read.begin(), read.end(), size_t(0));
    bsp.decode_ahead(read);
    const Map map(bsp);
    Checker c(bsp, map, report);
    using Step = void (*)(Checker&);
    static constexpr Step kSteps[] = {
        check_planes_and_vertexes, check_edges,       check_surfedges, check_faces,      check_face_side_lumps,
        check_lightmap_lumps,      check_textures,    check_tree,      check_leafs,      check_brushes,
        check_areas,               check_displacements, check_vis,     check_worldlights, check_overlays,
        check_occlusion,           check_physcollide, check_pakfile,   check_game_lumps, check_limits,
    };
    std::set<std::pair<std::string, std::string>> undecodable;
    // A lump that cannot be decoded at all (bad LZMA data, ...): said once, however many steps read it.
    const auto undecoded = [&](const Error& e) {
        if (undecodable.insert({e.where().lump, e.detail()}).second)
            c.error(e.where().lump, -1, "",
                    e.where().offset >= 0 ? e.detail() + " (at offset " + std::to_string(e.where().offset) + ")"
                                          : e.detail());
    };
    for (Step step : kSteps) {
        try {
            step(c);
        } catch (const Error& e) {
            undecoded(e);
        }
    }
    // The compressed lumps no step reads: the lighting lumps (only measured), undocumented ones.
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        try {
            if (bsp.compressed(i)) bsp.decoded(i);
        } catch (const Error& e) {
            undecoded(e);
        }
    }
    c.finish();
}

}  // namespace bspkit::source
