// `bspkit check` for Quake 1 (BSP 29), BSP2 / 2PSB and GoldSrc: every
// cross-reference of bspfile.h, the miptex directory, lightmap sizes by the
// 16-texel luxel rule (1 byte per sample Quake, 3 GoldSrc), visibility rows,
// and the engine limits (warnings).
#include <bspkit/bspx.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/visibility.hpp>

#include "formats/common/check_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace bspkit::quake1 {
namespace {

using checks::Checker;
using checks::float_text;

template <class Types>
class Quake1Check {
public:
    Quake1Check(const Map& map, const Tables<Types>& t, Checker& c) : map_(map), t_(t), c_(c) {}

    void run() {
        const Bsp& bsp = map_.bsp();
        textures_ = map_.miptex();
        lighting_ = map_.lighting();
        ext_ = bspx::read_lighting(bsp, t_.faces.size(), lighting_.size(), map_.goldsrc());
        for (const Diagnostic& d : ext_.diagnostics) c_.warning(d.lump, -1, "", d.message);
        // Two groups of steps that share no state, on two threads on maps of a few MB
        // (checks::run_beside): the geometry on this checker, the tree, collision and
        // visibility on one of their own, taken in after it. Only the faces spend the
        // work budget.
        checks::run_beside(
            c_, bsp.file_bytes().size(),
            [&] {
                planes();
                vertexes();
                miptex();
                texinfo();
                edges();
                surfedges();
                faces();
                marksurfaces();
            },
            [&](Checker& other) {
                Quake1Check tree(map_, t_, other);
                tree.nodes();
                tree.clipnodes();
                tree.leafs();
                tree.brushlist();
                tree.models();
                tree.visibility();
            });
        limits();
    }

private:
    static constexpr bool k32 = !std::is_same_v<Types, Bsp29Types>;

    void planes() {
        for (size_t i = 0; i < t_.planes.size(); ++i) {
            const dplane_t& p = t_.planes[i];
            c_.unit_normal("planes", i, "normal", p.normal);
            c_.finite("planes", i, "dist", p.dist);
            if (p.type < 0 || p.type > 5)
                c_.warning("planes", i, "type", "type " + std::to_string(p.type) + " is not 0-5 (PLANE_X .. PLANE_ANYZ)");
        }
    }

    void vertexes() {
        for (size_t i = 0; i < t_.vertexes.size(); ++i) c_.finite("vertexes", i, "point", t_.vertexes[i].point);
    }

    void miptex() {
        const ByteSpan lump = map_.textures();
        if (textures_.truncated)
            c_.error("textures", -1, "nummiptex",
                     "nummiptex " + std::to_string(textures_.nummiptex) + " needs " +
                         std::to_string(4 + 4 * int64_t(textures_.nummiptex)) + " bytes of directory, the lump has " +
                         std::to_string(lump.size()));
        if (textures_.nummiptex < 0)
            c_.error("textures", -1, "nummiptex", "nummiptex " + std::to_string(textures_.nummiptex) + " is negative");
        for (size_t i = 0; i < textures_.entries.size(); ++i) {
            const Miptex& m = textures_.entries[i];
            if (m.dataofs == -1) continue;  // missing texture: engines substitute a checkerboard
            if (!m.header_ok) {
                c_.error("textures", i, "dataofs",
                         "dataofs " + std::to_string(m.dataofs) + " leaves no room for a 40-byte miptex_t in the " +
                             std::to_string(lump.size()) + "-byte lump");
                continue;
            }
            const uint8_t* name = lump.data() + m.dataofs;
            if (std::find(name, name + 16, uint8_t(0)) == name + 16)
                c_.warning("textures", i, "name", "name is not NUL-terminated within its 16 bytes");
            if (m.width == 0 || m.height == 0 || (m.width & 15) || (m.height & 15)) {
                c_.error("textures", i, "width",
                         "texture '" + m.name + "' is " + std::to_string(m.width) + " x " + std::to_string(m.height) +
                             ": engines refuse textures that are not a nonzero multiple of 16");
                continue;
            }
            if (!m.embedded) {
                if (!map_.goldsrc())
                    c_.warning("textures", i, "offsets",
                               "texture '" + m.name + "' has no pixels (offsets[0] = 0): Quake needs embedded textures");
                continue;
            }
            const uint64_t room = lump.size() - uint64_t(m.dataofs);
            uint64_t end = 0;
            for (int k = 0; k < 4; ++k) {
                const uint64_t mip_end = uint64_t(m.offsets[k]) + (uint64_t(m.width) >> k) * (uint64_t(m.height) >> k);
                end = std::max(end, mip_end);
                if (mip_end > room) {
                    c_.error("textures", i, "offsets",
                             "mip level " + std::to_string(k) + " of '" + m.name + "' (offset " +
                                 std::to_string(m.offsets[k]) + ", " + std::to_string(m.width >> k) + " x " +
                                 std::to_string(m.height >> k) + ") runs past the end of the lump");
                    end = room + 1;
                    break;
                }
            }
            if (map_.goldsrc() && end <= room) {
                // GoldSrc: uint16 colour count and the palette follow the last mip level.
                if (end + 2 > room) {
                    c_.error("textures", i, "offsets", "palette of '" + m.name + "' lies past the end of the lump");
                } else {
                    const uint16_t colours = load<uint16_t>(lump.data() + m.dataofs + end, map_.bsp().byte_order());
                    if (end + 2 + uint64_t(colours) * 3 > room)
                        c_.error("textures", i, "offsets",
                                 "palette of '" + m.name + "' (" + std::to_string(colours) +
                                     " colours) runs past the end of the lump");
                }
            }
        }
    }

    void texinfo() {
        for (size_t i = 0; i < t_.texinfo.size(); ++i) {
            const texinfo_t& ti = t_.texinfo[i];
            c_.finite("texinfo", i, "vecs", ti.vecs[0]);
            c_.finite("texinfo", i, "vecs", ti.vecs[1]);
            if (!c_.index("texinfo", i, "miptex", ti.miptex, textures_.entries.size(), "textures")) continue;
            if (textures_.entries[size_t(ti.miptex)].dataofs == -1)
                c_.warning("texinfo", i, "miptex",
                           "miptex " + std::to_string(ti.miptex) + " is missing from the textures lump (dataofs -1)");
        }
    }

    void edges() {
        for (size_t i = 0; i < t_.edges.size(); ++i)
            for (int k = 0; k < 2; ++k)
                c_.index("edges", i, "v", t_.edges[i].v[k], t_.vertexes.size(), "vertexes");
    }

    void surfedges() {
        surfedge_ok_.assign(t_.surfedges.size(), 0);
        for (size_t i = 0; i < t_.surfedges.size(); ++i) {
            const int64_t e = t_.surfedges[i].edge;
            const int64_t mag = std::llabs(e);
            if (mag >= int64_t(t_.edges.size())) {
                c_.error("surfedges", i, "edge",
                         "edge " + std::to_string(e) + " is out of range: edges has " +
                             std::to_string(t_.edges.size()) + " records");
                continue;
            }
            const auto& edge = t_.edges[size_t(mag)];
            surfedge_ok_[i] = edge.v[0] < t_.vertexes.size() && edge.v[1] < t_.vertexes.size();
        }
    }

    /// First vertex of surfedge i (walking direction included).
    const dvertex_t& surfedge_vertex(size_t i) const {
        const int64_t e = t_.surfedges[i].edge;
        const auto& edge = t_.edges[size_t(std::llabs(e))];
        return t_.vertexes[e < 0 ? edge.v[1] : edge.v[0]];
    }

    void faces() {
        // RGB from a .lit or RGBLIGHTING replaces the grey lump (3 bytes per sample at 3 x offset).
        const bool rgb = !ext_.rgb.empty();
        const ByteSpan samples_lump = rgb ? ext_.rgb : lighting_;
        const std::string lump_desc = rgb ? ext_.rgb_source : "lighting lump";
        const int bps = rgb ? 3 : map_.lightmap_sample_bytes();
        const size_t nface = t_.faces.size();
        const bool lmshift = !ext_.lmshift.empty();
        const bool decoupled = !ext_.decoupled.empty();
        c_.set_budget(4 * uint64_t(t_.surfedges.size()) + (uint64_t(1) << 22));
        // BSPX: DECOUPLED_LM or LMOFFSET give the offset in place of lightofs.
        const bool own = decoupled || !ext_.lmoffset.empty();
        const std::string_view ofs_lump = decoupled ? "bspx:DECOUPLED_LM" : own ? "bspx:LMOFFSET" : "faces";
        const std::string_view ofs_field = own ? "offset" : "lightofs";
        for (size_t i = 0; i < nface; ++i) {
            const auto& f = t_.faces[i];
            c_.index("faces", i, "planenum", f.planenum, t_.planes.size(), "planes");
            if (f.side != 0 && f.side != 1)
                c_.warning("faces", i, "side", "side " + std::to_string(f.side) + " is not 0 or 1");
            const bool tex_ok = c_.index("faces", i, "texinfo", f.texinfo, t_.texinfo.size(), "texinfo");
            const bool edges_ok = c_.range("faces", i, "firstedge", f.firstedge, "numedges", f.numedges,
                                           t_.surfedges.size(), "surfedges");
            if (f.numedges < 3 && f.numedges >= 0)
                c_.error("faces", i, "numedges", "numedges " + std::to_string(f.numedges) + ": a face needs 3 edges");
            // Lightmap.
            const int styles = checks::style_count(f.styles);
            const int64_t lightofs = decoupled ? ext_.decoupled[i].offset : own ? ext_.lmoffset[i] : f.lightofs;
            if (lightofs == -1 || styles == 0) continue;
            const uint64_t byte_ofs = uint64_t(lightofs) * (rgb ? 3 : 1);
            if (lightofs < 0 || byte_ofs >= samples_lump.size()) {
                c_.error(ofs_lump, i, ofs_field,
                         std::string(ofs_field) + " " + std::to_string(lightofs) + " is outside the " +
                             std::to_string(samples_lump.size()) + "-byte " + lump_desc);
                continue;
            }
            if (!tex_ok || !edges_ok || f.numedges < 3) continue;
            const texinfo_t& ti = t_.texinfo[size_t(f.texinfo)];
            if (ti.flags & TEX_SPECIAL) continue;  // sky, water: engines ignore their lightmaps
            uint64_t samples = 0;
            int extents[2] = {0, 0};
            if (decoupled) {
                samples = uint64_t(ext_.decoupled[i].lmwidth) * ext_.decoupled[i].lmheight;
            } else {
                if (!c_.spend(uint64_t(f.numedges), "faces")) continue;
                checks::LuxelExtents ext;
                bool ok = true;
                for (int64_t k = 0; k < f.numedges && ok; ++k) {
                    const size_t se = size_t(f.firstedge + k);
                    ok = surfedge_ok_[se];
                    if (ok) ext.add(surfedge_vertex(se).point, ti.vecs);
                }
                if (!ok) continue;  // the broken surfedge is reported on its own
                const double scale = lmshift ? double(1u << std::min<uint8_t>(ext_.lmshift[i], 15)) : 16.0;
                int size[2];
                if (!ext.size_and_extents(size, extents, scale)) {
                    c_.error("faces", i, "texinfo", "texture coordinates of the face are not finite or too large");
                    continue;
                }
                samples = uint64_t(size[0]) * uint64_t(size[1]);
                if (!lmshift && std::max(extents[0], extents[1]) > max_extent_) {
                    max_extent_ = std::max(extents[0], extents[1]);
                    max_extent_face_ = int64_t(i);
                }
            }
            const uint64_t need = samples * uint64_t(styles) * uint64_t(bps);
            if (byte_ofs + need > samples_lump.size())
                c_.error(ofs_lump, i, ofs_field,
                         "lightmap of " + std::to_string(samples) + " samples x " + std::to_string(styles) +
                             " styles x " + std::to_string(bps) + " bytes at " + std::string(ofs_field) + " " +
                             std::to_string(lightofs) + " runs past the " + std::to_string(samples_lump.size()) +
                             "-byte " + lump_desc);
        }
    }

    void marksurfaces() {
        for (size_t i = 0; i < t_.marksurfaces.size(); ++i)
            c_.index("marksurfaces", i, "face", t_.marksurfaces[i].face, t_.faces.size(), "faces");
    }

    /// Decodes a node child (quake1::tree_child()): {is_leaf, index}.
    template <class Child>
    std::pair<bool, int64_t> node_child(Child child) const {
        const int64_t c = tree_child(child, t_.nodes.size());
        if (c >= 0) return {false, c};
        return {true, -1 - c};
    }

    void nodes() {
        for (size_t i = 0; i < t_.nodes.size(); ++i) {
            const auto& n = t_.nodes[i];
            c_.index("nodes", i, "planenum", n.planenum, t_.planes.size(), "planes");
            c_.range("nodes", i, "firstface", n.firstface, "numfaces", n.numfaces, t_.faces.size(), "faces");
            for (int k = 0; k < 2; ++k) {
                const auto [leaf, index] = node_child(n.children[k]);
                if (leaf)
                    c_.index("nodes", i, "children", index, t_.leafs.size(), "leafs");
                else
                    c_.index("nodes", i, "children", index, t_.nodes.size(), "nodes");
            }
        }
    }

    void clipnodes() {
        const size_t n = t_.clipnodes.size();
        for (size_t i = 0; i < n; ++i) {
            const auto& cn = t_.clipnodes[i];
            c_.index("clipnodes", i, "planenum", cn.planenum, t_.planes.size(), "planes");
            for (int k = 0; k < 2; ++k) clip_child("clipnodes", i, "children", tree_child(cn.children[k], n));
        }
    }

    /// `child` (as tree_child() reads a clipnode's; a model's headnode as stored)
    /// must name a clipnode or a contents value.
    void clip_child(std::string_view lump, int64_t record, std::string_view field, int64_t child) {
        const size_t n = t_.clipnodes.size();
        if (child >= 0) {
            c_.index(lump, record, field, child, n, "clipnodes");
        } else if (child < kLowestContents) {
            c_.error(lump, record, field,
                     std::string(field) + " " + std::to_string(child) +
                         " is neither a clipnode nor a contents value (CONTENTS_EMPTY -1 .. -15)");
        }
    }

    void leafs() {
        const ByteSpan vis = map_.visibility();
        for (size_t i = 0; i < t_.leafs.size(); ++i) {
            const auto& l = t_.leafs[i];
            if (l.contents > -1 || l.contents < kLowestContents)
                c_.warning("leafs", i, "contents", "contents " + std::to_string(l.contents) + " is not a CONTENTS_* value");
            c_.range("leafs", i, "firstmarksurface", l.firstmarksurface, "nummarksurfaces", l.nummarksurfaces,
                     t_.marksurfaces.size(), "marksurfaces");
            // Engines never read leaf 0's row (the shared solid leaf).
            if (i > 0 && l.visofs != -1 && (l.visofs < 0 || size_t(l.visofs) >= vis.size()))
                c_.error("leafs", i, "visofs",
                         "visofs " + std::to_string(l.visofs) + " is outside the " + std::to_string(vis.size()) +
                             "-byte visibility lump");
        }
        if (!t_.leafs.empty() && t_.leafs[0].contents != CONTENTS_SOLID)
            c_.warning("leafs", 0, "contents",
                       "leaf 0 has contents " + std::to_string(t_.leafs[0].contents) +
                           ": engines treat leaf 0 as the shared solid leaf (CONTENTS_SOLID -2)");
    }

    /// BSPX BRUSHLIST (FTE's brush collision): records within the lump, model
    /// numbers, planes per brush; and which hulls an engine builds from it.
    void brushlist() {
        const bspx::Directory dir = bspx::read(map_.bsp());
        const bspx::Lump* lump = dir.find("BRUSHLIST");
        if (!lump) return;
        const std::string name = bspx::lump_name(lump->name);
        bspx::BrushList list;
        try {
            list = bspx::decode_brushlist(map_.bsp(), *lump);
        } catch (const Error& e) {
            c_.error(name, -1, "", e.detail() + " (at offset " + std::to_string(e.where().offset) + ")");
            return;
        }
        std::vector<uint8_t> named(t_.models.size(), 0);
        std::string models;
        for (size_t i = 0; i < list.models.size(); ++i) {
            const bspx::BrushListModel& m = list.models[i];
            if (m.header.ver != 1)
                c_.warning(name, int64_t(i), "ver", "ver " + std::to_string(m.header.ver) + " is not 1");
            if (c_.index(name, int64_t(i), "modelnum", m.header.modelnum, t_.models.size(), "models")) {
                if (named[size_t(m.header.modelnum)]++)
                    c_.warning(name, int64_t(i), "modelnum",
                               "model " + std::to_string(m.header.modelnum) + " is listed more than once");
                else
                    models += (models.empty() ? "" : ", ") + std::to_string(m.header.modelnum);
            }
            uint64_t planes = 0;
            for (size_t b = 0; b < m.brushes.size(); ++b) {
                const bspx::BrushListBrush& br = m.brushes[b];
                const std::string which = "brush " + std::to_string(b) + " of model " + std::to_string(m.header.modelnum);
                planes += br.planes.size();
                if (!c_.finite(name, int64_t(i), "mins", br.header.mins) ||
                    !c_.finite(name, int64_t(i), "maxs", br.header.maxs))
                    continue;
                for (int a = 0; a < 3; ++a)
                    if (br.header.mins[a] > br.header.maxs[a]) {
                        c_.error(name, int64_t(i), "mins", which + ": mins exceed maxs (an inside-out brush)");
                        break;
                    }
                const int c = br.header.contents;
                if (!(c <= CONTENTS_EMPTY && c >= CONTENTS_SKY) && c != CONTENTS_CLIP && c != -16)
                    c_.warning(name, int64_t(i), "contents",
                               which + ": contents " + std::to_string(c) +
                                   " is not a CONTENTS_* value BRUSHLIST allows (-1 .. -6, -8 clip, -16 ladder)");
                for (const bspx::bspx_brushlist_plane_t& p : br.planes) {
                    if (!c_.finite(name, int64_t(i), "planes", p.normal) || !c_.finite(name, int64_t(i), "planes", p.dist))
                        break;
                    const double len = std::sqrt(double(p.normal[0]) * p.normal[0] + double(p.normal[1]) * p.normal[1] +
                                                 double(p.normal[2]) * p.normal[2]);
                    if (std::fabs(len - 1.0) > 0.01)
                        c_.warning(name, int64_t(i), "planes",
                                   which + ": a plane normal has length " + std::to_string(len) + ", not 1");
                }
            }
            if (uint64_t(m.header.numplanes) != planes)
                c_.error(name, int64_t(i), "numplanes",
                         "numplanes " + std::to_string(m.header.numplanes) + ", the model's brushes have " +
                             std::to_string(planes));
        }
        hulls_from_brushlist_ = t_.clipnodes.empty();
        const std::string hulls = map_.goldsrc() ? "hulls 1-3" : "hulls 1 and 2 (player, large monsters)";
        c_.info(name, -1, "",
                std::to_string(list.brush_count()) + " brushes for model" + (list.models.size() == 1 ? " " : "s ") +
                    models + ": engines that read BRUSHLIST (FTE) build " + hulls +
                    " and any other box size from them; unlisted models are not solid there" +
                    (hulls_from_brushlist_
                         ? ". The map has no clipnodes: engines without BRUSHLIST have no hulls 1+ to collide with"
                         : ""));
    }

    void models() {
        if (t_.models.empty()) {
            c_.error("models", -1, "", "no models: model 0 (the world) is required");
            return;
        }
        for (size_t i = 0; i < t_.models.size(); ++i) {
            const dmodel_t& m = t_.models[i];
            const bool mins_finite = c_.finite("models", i, "mins", m.mins);
            const bool maxs_finite = c_.finite("models", i, "maxs", m.maxs);
            if (mins_finite && maxs_finite)
                for (int a = 0; a < 3; ++a)
                    if (m.mins[a] > m.maxs[a]) {
                        // The engines link an entity by these bounds (SV_LinkEdict) and build the
                        // world's area nodes from model 0's (SV_CreateAreaNode).
                        c_.error("models", int64_t(i), "mins",
                                 "mins exceed maxs on " + std::string(1, "xyz"[a]) + " (" + float_text(m.mins[a]) +
                                     " > " + float_text(m.maxs[a]) + "): the bounds are inside out");
                        break;
                    }
            c_.index("models", i, "headnode", m.headnode[0], t_.nodes.size(), "nodes");
            // Without clipnodes, a BRUSHLIST engine builds hulls 1+ from brushes (see brushlist()).
            if (!hulls_from_brushlist_)
                for (int h = 1; h < MAX_MAP_HULLS; ++h) clip_child("models", i, "headnode", m.headnode[h]);
            c_.range("models", i, "firstface", m.firstface, "numfaces", m.numfaces, t_.faces.size(), "faces");
        }
        const int64_t visleafs = t_.models[0].visleafs;
        if (visleafs < 0 || (t_.leafs.empty() ? visleafs > 0 : visleafs > int64_t(t_.leafs.size()) - 1))
            c_.error("models", 0, "visleafs",
                     "visleafs " + std::to_string(visleafs) + " is out of range: leafs has " +
                         std::to_string(t_.leafs.size()) + " records (leaf 0 excluded)");
        // Each node has one parent: walk every model's tree once.
        std::vector<int64_t> heads;
        for (const dmodel_t& m : t_.models) heads.push_back(m.headnode[0]);
        check_node_trees(c_, t_.nodes.size(), heads, "children", [&](size_t n, int k) -> int64_t {
            const auto [leaf, index] = node_child(t_.nodes[n].children[k]);
            return leaf ? -1 : index;
        });
        // The clip hulls: no cycles (subtrees met twice are walked twice and end).
        if (!hulls_from_brushlist_) {
            std::vector<int64_t> clip_heads;
            for (const dmodel_t& m : t_.models)
                for (int h = 1; h < MAX_MAP_HULLS; ++h) clip_heads.push_back(m.headnode[h]);
            check_node_cycles(c_, "clipnodes", t_.clipnodes.size(), clip_heads, "children",
                              [&](size_t n, int k) -> int64_t {
                                  return tree_child(t_.clipnodes[n].children[k], t_.clipnodes.size());
                              });
        }
    }

    void visibility() {
        Visibility vis;
        try {
            vis = Visibility::of(map_.bsp());
        } catch (const Error& e) {
            c_.error("visibility", -1, "", e.detail());
            return;
        }
        if (vis.encoding() == Visibility::Encoding::none) return;
        for (size_t cl = 0; cl < vis.clusters(); ++cl) {
            if (!checks::vis_budget(c_, "visibility", cl, vis.row_bytes())) break;
            const auto ofs = vis.row_offset(cl);
            if (!ofs || *ofs < 0 || size_t(*ofs) >= vis.lump().size()) continue;  // reported with the leaf
            const RowStatus s = vis.row_status(cl);
            if (s == RowStatus::truncated)
                c_.error("leafs", int64_t(cl + 1), "visofs",
                         "the visibility row at visofs " + std::to_string(*ofs) + " runs past the end of the lump");
            else if (s == RowStatus::overrun)
                c_.warning("leafs", int64_t(cl + 1), "visofs",
                           "the visibility row at visofs " + std::to_string(*ofs) + " has a zero run past its " +
                               std::to_string(vis.row_bytes()) + " bytes");
        }
    }

    void limits() {
        if constexpr (k32) return;  // BSP2 exists to lift them
        const Limits& L = map_.goldsrc() ? kGoldSrcLimits : kQuakeLimits;
        const std::string engine(L.source);
        c_.limit("models", t_.models.size(), L.models, "MAX_MAP_MODELS", engine);
        c_.limit("planes", t_.planes.size(), L.planes, "MAX_MAP_PLANES", engine);
        c_.limit("nodes", t_.nodes.size(), L.nodes, "MAX_MAP_NODES", engine);
        c_.limit("clipnodes", t_.clipnodes.size(), L.clipnodes, "MAX_MAP_CLIPNODES", engine);
        c_.limit("leafs", t_.leafs.size(), L.leafs, "MAX_MAP_LEAFS", engine);
        c_.limit("vertexes", t_.vertexes.size(), L.vertexes, "MAX_MAP_VERTS", engine);
        c_.limit("faces", t_.faces.size(), L.faces, "MAX_MAP_FACES", engine);
        c_.limit("marksurfaces", t_.marksurfaces.size(), L.marksurfaces, "MAX_MAP_MARKSURFACES", engine);
        c_.limit("texinfo", t_.texinfo.size(), L.texinfo, "MAX_MAP_TEXINFO", engine);
        c_.limit("edges", t_.edges.size(), L.edges, "MAX_MAP_EDGES", engine);
        c_.limit("surfedges", t_.surfedges.size(), L.surfedges, "MAX_MAP_SURFEDGES", engine);
        c_.limit("textures", textures_.entries.size(), L.textures, "MAX_MAP_TEXTURES", engine);
        c_.limit("textures", map_.textures().size(), L.miptex_bytes, "MAX_MAP_MIPTEX bytes", engine);
        c_.limit("lighting", lighting_.size(), L.lighting_bytes, "MAX_MAP_LIGHTING bytes", engine);
        c_.limit("visibility", map_.visibility().size(), L.visibility_bytes, "MAX_MAP_VISIBILITY bytes", engine);
        c_.limit("entities", map_.entities().size(), L.entities_bytes, "MAX_MAP_ENTSTRING bytes", engine);
        if (max_extent_ > L.max_extent)
            c_.warning("faces", max_extent_face_, "texinfo",
                       "the largest lightmapped face spans " + std::to_string(max_extent_) + " texels, over the " +
                           std::to_string(L.max_extent) + " that " + (map_.goldsrc() ? "Half-Life" : "WinQuake") +
                           " accepts (\"Bad surface extents\")");
    }

    const Map& map_;
    const Tables<Types>& t_;
    Checker& c_;
    MiptexDirectory textures_;
    ByteSpan lighting_;
    bspx::Lighting ext_;
    bool hulls_from_brushlist_ = false;
    std::vector<uint8_t> surfedge_ok_;
    int max_extent_ = 0;
    int64_t max_extent_face_ = -1;
};

}  // namespace

void check(const Bsp& bsp, CheckReport& report) {
    Checker c(report);
    const Map map(bsp);
    map.visit([&](const auto& tables) {
        using T = std::decay_t<decltype(tables)>;
        if constexpr (std::is_same_v<T, Tables<Bsp29Types>>) Quake1Check<Bsp29Types>(map, tables, c).run();
        else if constexpr (std::is_same_v<T, Tables<Bsp2Types>>) Quake1Check<Bsp2Types>(map, tables, c).run();
        else Quake1Check<Bsp2RmqTypes>(map, tables, c).run();
    });
}

}  // namespace bspkit::quake1
