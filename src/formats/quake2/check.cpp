// `bspkit check` for Quake 2 (IBSP 38): every cross-reference of qfiles.h,
// lightmap sizes by the 16-texel luxel rule (3 bytes per sample), the PVS /
// PHS rows of the vis lump, areas and area portals, and the qfiles.h limits.
#include <bspkit/formats/quake2.hpp>
#include <bspkit/visibility.hpp>

#include <bspkit/bspx.hpp>
#include "formats/common/check_util.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

namespace bspkit::quake2 {
namespace {

using checks::Checker;

class Quake2Check {
public:
    Quake2Check(const Map& map, Checker& c) : map_(map), c_(&c) {}

    void run() {
        planes_ = map_.planes();
        vertices_ = map_.vertices();
        nodes_ = map_.nodes();
        texinfo_ = map_.texinfo();
        faces_ = map_.faces();
        leafs_ = map_.leafs();
        leaffaces_ = map_.leaffaces();
        leafbrushes_ = map_.leafbrushes();
        edges_ = map_.edges();
        surfedges_ = map_.surfedges();
        models_ = map_.models();
        brushes_ = map_.brushes();
        brushsides_ = map_.brushsides();
        areas_ = map_.areas();
        areaportals_ = map_.areaportals();
        lighting_ = map_.lighting();
        // Two groups of steps that share no state, on two threads on maps of a few MB
        // (checks::run_beside): the geometry and faces on this checker, the tree, brushes,
        // areas and visibility on a copy of this check with a checker of its own, taken in
        // after it. Only the faces spend the work budget. The copy is made while the check
        // holds views only: before the BSPX lighting (per-face vectors the tree steps do not
        // read) and before the first group fills surfedge_ok_.
        Quake2Check tree = *this;
        ext_ = bspx::read_lighting(map_.bsp(), faces_.size(), lighting_.size(), true);
        for (const Diagnostic& d : ext_.diagnostics) c_->warning(d.lump, -1, "", d.message);
        checks::run_beside(
            *c_, map_.bsp().file_bytes().size(),
            [&] {
                geometry();
                texinfo();
                faces();
            },
            [&](Checker& other) {
                tree.c_ = &other;
                tree.nodes();
                tree.leafs();
                tree.models();
                tree.brushes();
                tree.areas();
                tree.visibility();
            });
        limits();
    }

private:
    void geometry() {
        for (size_t i = 0; i < planes_.size(); ++i) {
            c_->unit_normal("planes", i, "normal", planes_[i].normal);
            c_->finite("planes", i, "dist", planes_[i].dist);
            if (planes_[i].type < 0 || planes_[i].type > 5)
                c_->warning("planes", i, "type",
                           "type " + std::to_string(planes_[i].type) + " is not 0-5 (PLANE_X .. PLANE_ANYZ)");
        }
        for (size_t i = 0; i < vertices_.size(); ++i) c_->finite("vertices", i, "point", vertices_[i].point);
        for (size_t i = 0; i < edges_.size(); ++i)
            for (int k = 0; k < 2; ++k) c_->index("edges", i, "v", edges_[i].v[k], vertices_.size(), "vertices");
        surfedge_ok_.assign(surfedges_.size(), 0);
        for (size_t i = 0; i < surfedges_.size(); ++i) {
            const int64_t e = surfedges_[i].edge, mag = std::llabs(e);
            if (mag >= int64_t(edges_.size())) {
                c_->error("surfedges", i, "edge",
                         "edge " + std::to_string(e) + " is out of range: edges has " + std::to_string(edges_.size()) +
                             " records");
                continue;
            }
            const dedge_t& ed = edges_[size_t(mag)];
            surfedge_ok_[i] = ed.v[0] < vertices_.size() && ed.v[1] < vertices_.size();
        }
    }

    void texinfo() {
        for (size_t i = 0; i < texinfo_.size(); ++i) {
            const texinfo_t& t = texinfo_[i];
            c_->finite("texinfo", i, "vecs", t.vecs[0]);
            c_->finite("texinfo", i, "vecs", t.vecs[1]);
            c_->index("texinfo", i, "nexttexinfo", t.nexttexinfo, texinfo_.size(), "texinfo", true);
            if (std::find(t.texture, t.texture + 32, '\0') == t.texture + 32)
                c_->warning("texinfo", i, "texture", "texture name is not NUL-terminated within its 32 bytes");
        }
        // Animation chains: the engine counts frames by following nexttexinfo
        // until it returns to the start, so a chain that runs into a loop not
        // containing its start hangs it. Linear walk over the functional graph.
        enum : uint8_t { unknown, on_path, ends, cycle, bad };
        std::vector<uint8_t> state(texinfo_.size(), unknown);
        std::vector<size_t> path;
        for (size_t i = 0; i < texinfo_.size(); ++i) {
            if (state[i] != unknown) continue;
            path.clear();
            int64_t at = int64_t(i);
            uint8_t verdict = ends;
            while (true) {
                if (at < 0 || size_t(at) >= texinfo_.size()) break;  // -1 or reported above
                const size_t u = size_t(at);
                if (state[u] == on_path) {  // a loop: its members are fine, the lead-in is not
                    bool in_loop = false;
                    for (size_t p : path) {
                        if (p == u) in_loop = true;
                        state[p] = in_loop ? cycle : bad;
                    }
                    path.clear();
                    verdict = bad;
                    break;
                }
                if (state[u] != unknown) {
                    verdict = state[u] == ends ? ends : bad;
                    break;
                }
                state[u] = on_path;
                path.push_back(u);
                at = texinfo_[u].nexttexinfo;
            }
            for (size_t p : path) state[p] = verdict;
        }
        for (size_t i = 0; i < texinfo_.size(); ++i)
            if (state[i] == bad)
                c_->error("texinfo", i, "nexttexinfo",
                         "the animation chain from here runs into a loop that does not contain it (the engine hangs)");
    }

    void faces() {
        const size_t n = faces_.size();
        const bool lmshift = !ext_.lmshift.empty();
        const bool decoupled = !ext_.decoupled.empty();
        c_->set_budget(4 * uint64_t(surfedges_.size()) + (uint64_t(1) << 22));
        for (size_t i = 0; i < n; ++i) {
            const dface_t& f = faces_[i];
            c_->index("faces", i, "planenum", f.planenum, planes_.size(), "planes");
            if (f.side != 0 && f.side != 1)
                c_->warning("faces", i, "side", "side " + std::to_string(f.side) + " is not 0 or 1");
            const bool tex_ok = c_->index("faces", i, "texinfo", f.texinfo, texinfo_.size(), "texinfo");
            const bool edges_ok =
                c_->range("faces", i, "firstedge", f.firstedge, "numedges", f.numedges, surfedges_.size(), "surfedges");
            if (f.numedges >= 0 && f.numedges < 3)
                c_->error("faces", i, "numedges", "numedges " + std::to_string(f.numedges) + ": a face needs 3 edges");
            const int styles = checks::style_count(f.styles);
            // BSPX: DECOUPLED_LM or LMOFFSET give the offset in place of lightofs.
            const int64_t lightofs = decoupled                ? ext_.decoupled[i].offset
                                     : !ext_.lmoffset.empty() ? ext_.lmoffset[i]
                                                              : f.lightofs;
            if (lightofs == -1 || styles == 0) continue;
            if (lightofs < 0 || size_t(lightofs) >= lighting_.size()) {
                c_->error("faces", i, "lightofs",
                         "lightofs " + std::to_string(lightofs) + " is outside the " +
                             std::to_string(lighting_.size()) + "-byte lighting lump");
                continue;
            }
            if (!tex_ok || !edges_ok || f.numedges < 3) continue;
            const texinfo_t& ti = texinfo_[size_t(f.texinfo)];
            if (ti.flags & (SURF_SKY | SURF_WARP)) continue;  // never lightmapped
            uint64_t samples = 0;
            if (decoupled) {
                samples = uint64_t(ext_.decoupled[i].lmwidth) * ext_.decoupled[i].lmheight;
            } else {
                if (!c_->spend(uint64_t(f.numedges), "faces")) continue;
                checks::LuxelExtents ext;
                bool ok = true;
                for (int64_t k = 0; k < f.numedges && ok; ++k) {
                    const size_t se = size_t(f.firstedge + k);
                    ok = surfedge_ok_[se];
                    if (!ok) break;
                    const int64_t e = surfedges_[se].edge;
                    const dedge_t& ed = edges_[size_t(std::llabs(e))];
                    ext.add(vertices_[e < 0 ? ed.v[1] : ed.v[0]].point, ti.vecs);
                }
                if (!ok) continue;
                const double scale = lmshift ? double(1u << std::min<uint8_t>(ext_.lmshift[i], 15)) : 16.0;
                int size[2];
                if (!ext.size(size, scale)) {
                    c_->error("faces", i, "texinfo", "texture coordinates of the face are not finite or too large");
                    continue;
                }
                samples = uint64_t(size[0]) * uint64_t(size[1]);
            }
            const uint64_t need = samples * uint64_t(styles) * 3;
            if (uint64_t(lightofs) + need > lighting_.size())
                c_->error("faces", i, "lightofs",
                         "lightmap of " + std::to_string(samples) + " samples x " + std::to_string(styles) +
                             " styles x 3 bytes at lightofs " + std::to_string(lightofs) + " runs past the " +
                             std::to_string(lighting_.size()) + "-byte lighting lump");
        }
    }

    void child(std::string_view lump, int64_t record, int64_t value) {
        if (value >= 0)
            c_->index(lump, record, "children", value, nodes_.size(), "nodes");
        else
            c_->index(lump, record, "children", -1 - value, leafs_.size(), "leafs");
    }

    void nodes() {
        for (size_t i = 0; i < nodes_.size(); ++i) {
            const dnode_t& n = nodes_[i];
            c_->index("nodes", i, "planenum", n.planenum, planes_.size(), "planes");
            c_->range("nodes", i, "firstface", n.firstface, "numfaces", n.numfaces, faces_.size(), "faces");
            for (int k = 0; k < 2; ++k) child("nodes", i, n.children[k]);
        }
    }

    void leafs() {
        for (size_t i = 0; i < leafs_.size(); ++i) {
            const dleaf_t& l = leafs_[i];
            c_->range("leafs", i, "firstleafface", l.firstleafface, "numleaffaces", l.numleaffaces, leaffaces_.size(),
                     "leaffaces");
            c_->range("leafs", i, "firstleafbrush", l.firstleafbrush, "numleafbrushes", l.numleafbrushes,
                     leafbrushes_.size(), "leafbrushes");
            if (!areas_.empty() || l.area != 0) c_->index("leafs", i, "area", l.area, areas_.size(), "areas");
        }
        for (size_t i = 0; i < leaffaces_.size(); ++i)
            c_->index("leaffaces", i, "face", leaffaces_[i].face, faces_.size(), "faces");
        for (size_t i = 0; i < leafbrushes_.size(); ++i)
            c_->index("leafbrushes", i, "brush", leafbrushes_[i].brush, brushes_.size(), "brushes");
    }

    void models() {
        if (models_.empty()) {
            c_->error("models", -1, "", "no models: model 0 (the world) is required");
            return;
        }
        for (size_t i = 0; i < models_.size(); ++i) {
            const dmodel_t& m = models_[i];
            c_->finite("models", i, "mins", m.mins);
            c_->finite("models", i, "maxs", m.maxs);
            if (m.headnode >= 0)
                c_->index("models", i, "headnode", m.headnode, nodes_.size(), "nodes");
            else
                c_->index("models", i, "headnode", -1 - int64_t(m.headnode), leafs_.size(), "leafs");
            c_->range("models", i, "firstface", m.firstface, "numfaces", m.numfaces, faces_.size(), "faces");
        }
        // Each node has one parent: walk every model's tree once.
        std::vector<int64_t> heads;
        for (const dmodel_t& m : models_) heads.push_back(m.headnode);
        check_node_trees(*c_, nodes_.size(), heads, "children",
                         [&](size_t n, int k) -> int64_t { return nodes_[n].children[k]; });
    }

    void brushes() {
        for (size_t i = 0; i < brushes_.size(); ++i)
            c_->range("brushes", i, "firstside", brushes_[i].firstside, "numsides", brushes_[i].numsides,
                     brushsides_.size(), "brushsides");
        for (size_t i = 0; i < brushsides_.size(); ++i) {
            c_->index("brushsides", i, "planenum", brushsides_[i].planenum, planes_.size(), "planes");
            c_->index("brushsides", i, "texinfo", brushsides_[i].texinfo, texinfo_.size(), "texinfo", true);
        }
    }

    void areas() {
        for (size_t i = 0; i < areas_.size(); ++i)
            c_->range("areas", i, "firstareaportal", areas_[i].firstareaportal, "numareaportals",
                     areas_[i].numareaportals, areaportals_.size(), "areaportals");
        for (size_t i = 0; i < areaportals_.size(); ++i) {
            c_->index("areaportals", i, "otherarea", areaportals_[i].otherarea, areas_.size(), "areas");
            // The engine keeps portalopen[MAX_MAP_AREAPORTALS] indexed by portalnum.
            if (areaportals_[i].portalnum < 0 || size_t(areaportals_[i].portalnum) >= MAX_MAP_AREAPORTALS)
                c_->error("areaportals", i, "portalnum",
                         "portalnum " + std::to_string(areaportals_[i].portalnum) + " is outside 0-" +
                             std::to_string(MAX_MAP_AREAPORTALS - 1) + " (the engine's portalopen[] table)");
        }
    }

    void visibility() {
        Visibility vis;
        try {
            vis = Visibility::of(map_.bsp());
        } catch (const Error& e) {
            c_->error("visibility", -1, "numclusters", e.detail());
            return;
        }
        const bool have = vis.encoding() != Visibility::Encoding::none;
        for (size_t i = 0; i < leafs_.size(); ++i) {
            const int32_t cl = leafs_[i].cluster;
            if (cl == -1) continue;
            if (have)
                c_->index("leafs", i, "cluster", cl, vis.clusters(), "visibility clusters", true);
            else if (cl < -1)
                c_->error("leafs", i, "cluster", "cluster " + std::to_string(cl) + " is negative");
        }
        if (!have) return;
        for (size_t cl = 0; cl < vis.clusters(); ++cl) {
            if (!checks::vis_budget(*c_, "visibility", cl, vis.row_bytes())) break;
            for (const bool pas : {false, true}) {
                const RowStatus s = vis.row_status(cl, pas);
                const int64_t ofs = vis.row_offset(cl, pas).value_or(-1);
                const std::string what = std::string(pas ? "PHS" : "PVS") + " row of cluster " + std::to_string(cl);
                if (s == RowStatus::outside)
                    c_->error("visibility", cl, "bitofs",
                             what + " at offset " + std::to_string(ofs) + " is outside the " +
                                 std::to_string(vis.lump().size()) + "-byte lump");
                else if (s == RowStatus::truncated)
                    c_->error("visibility", cl, "bitofs",
                             what + " at offset " + std::to_string(ofs) + " runs past the end of the lump");
                else if (s == RowStatus::overrun)
                    c_->warning("visibility", cl, "bitofs",
                               what + " at offset " + std::to_string(ofs) + " has a zero run past its " +
                                   std::to_string(vis.row_bytes()) + " bytes");
            }
        }
    }

    void limits() {
        const char* engine = "Quake 2's qfiles.h";
        c_->limit("models", models_.size(), MAX_MAP_MODELS, "MAX_MAP_MODELS", engine);
        c_->limit("brushes", brushes_.size(), MAX_MAP_BRUSHES, "MAX_MAP_BRUSHES", engine);
        c_->limit("entities", map_.entities().size(), MAX_MAP_ENTSTRING, "MAX_MAP_ENTSTRING bytes", engine);
        c_->limit("texinfo", texinfo_.size(), MAX_MAP_TEXINFO, "MAX_MAP_TEXINFO", engine);
        c_->limit("areas", areas_.size(), MAX_MAP_AREAS, "MAX_MAP_AREAS", engine);
        c_->limit("areaportals", areaportals_.size(), MAX_MAP_AREAPORTALS, "MAX_MAP_AREAPORTALS", engine);
        c_->limit("planes", planes_.size(), MAX_MAP_PLANES, "MAX_MAP_PLANES", engine);
        c_->limit("nodes", nodes_.size(), MAX_MAP_NODES, "MAX_MAP_NODES", engine);
        c_->limit("brushsides", brushsides_.size(), MAX_MAP_BRUSHSIDES, "MAX_MAP_BRUSHSIDES", engine);
        c_->limit("leafs", leafs_.size(), MAX_MAP_LEAFS, "MAX_MAP_LEAFS", engine);
        c_->limit("vertices", vertices_.size(), MAX_MAP_VERTS, "MAX_MAP_VERTS", engine);
        c_->limit("faces", faces_.size(), MAX_MAP_FACES, "MAX_MAP_FACES", engine);
        c_->limit("leaffaces", leaffaces_.size(), MAX_MAP_LEAFFACES, "MAX_MAP_LEAFFACES", engine);
        c_->limit("leafbrushes", leafbrushes_.size(), MAX_MAP_LEAFBRUSHES, "MAX_MAP_LEAFBRUSHES", engine);
        c_->limit("edges", edges_.size(), MAX_MAP_EDGES, "MAX_MAP_EDGES", engine);
        c_->limit("surfedges", surfedges_.size(), MAX_MAP_SURFEDGES, "MAX_MAP_SURFEDGES", engine);
        c_->limit("lighting", lighting_.size(), MAX_MAP_LIGHTING, "MAX_MAP_LIGHTING bytes", engine);
        c_->limit("visibility", map_.visibility().size(), MAX_MAP_VISIBILITY, "MAX_MAP_VISIBILITY bytes", engine);
    }

    const Map& map_;
    Checker* c_;  // a pointer: the copy that runs the second group of steps reports elsewhere
    std::span<const dplane_t> planes_;
    std::span<const dvertex_t> vertices_;
    std::span<const dnode_t> nodes_;
    std::span<const texinfo_t> texinfo_;
    std::span<const dface_t> faces_;
    std::span<const dleaf_t> leafs_;
    std::span<const dleafface_t> leaffaces_;
    std::span<const dleafbrush_t> leafbrushes_;
    std::span<const dedge_t> edges_;
    std::span<const dsurfedge_t> surfedges_;
    std::span<const dmodel_t> models_;
    std::span<const dbrush_t> brushes_;
    std::span<const dbrushside_t> brushsides_;
    std::span<const darea_t> areas_;
    std::span<const dareaportal_t> areaportals_;
    ByteSpan lighting_;
    bspx::Lighting ext_;
    std::vector<uint8_t> surfedge_ok_;
};

}  // namespace

void check(const Bsp& bsp, CheckReport& report) {
    Checker c(report);
    const Map map(bsp);
    Quake2Check(map, c).run();
}

}  // namespace bspkit::quake2
