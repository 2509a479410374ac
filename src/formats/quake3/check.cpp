// `bspkit check` for Quake 3 (IBSP 46) and RTCW (IBSP 47): every
// cross-reference of qfiles.h, meshvert ranges, patch sizes (odd width and
// height >= 3, numVerts = width x height), lightmap pages, fogs, the light
// grid size, visdata rows, and the qfiles.h limits.
#include <bspkit/formats/quake3.hpp>
#include <bspkit/visibility.hpp>

#include "formats/common/check_util.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace bspkit::quake3 {
namespace {

using checks::Checker;

/// The worldspawn "gridsize" key (the first entity), if present.
std::optional<std::array<float, 3>> worldspawn_gridsize(ByteSpan entities) {
    const std::string_view text(reinterpret_cast<const char*>(entities.data()), entities.size());
    const size_t open = text.find('{');
    if (open == std::string_view::npos) return std::nullopt;
    const size_t close = text.find('}', open);
    const std::string_view first = text.substr(open, close == std::string_view::npos ? text.npos : close - open);
    const size_t key = first.find("\"gridsize\"");
    if (key == std::string_view::npos) return std::nullopt;
    const size_t q1 = first.find('"', key + 10);
    const size_t q2 = q1 == std::string_view::npos ? q1 : first.find('"', q1 + 1);
    if (q2 == std::string_view::npos) return std::nullopt;
    const std::string value(first.substr(q1 + 1, q2 - q1 - 1));
    std::array<float, 3> g{};
    if (std::sscanf(value.c_str(), "%f %f %f", &g[0], &g[1], &g[2]) != 3) return std::nullopt;
    return g;
}

class Quake3Check {
public:
    Quake3Check(const Map& map, Checker& c) : map_(map), c_(c) {}

    void run() {
        shaders_ = map_.shaders();
        planes_ = map_.planes();
        nodes_ = map_.nodes();
        leafs_ = map_.leafs();
        leafsurfaces_ = map_.leafsurfaces();
        leafbrushes_ = map_.leafbrushes();
        models_ = map_.models();
        brushes_ = map_.brushes();
        brushsides_ = map_.brushsides();
        verts_ = map_.vertexes();
        meshverts_ = map_.meshverts();
        fogs_ = map_.fogs();
        surfaces_ = map_.surfaces();
        lightmaps_ = map_.bsp().decoded(Map::LUMP_LIGHTMAPS).size() / sizeof(dlightmap_t);
        simple();
        nodes();
        leafs();
        models();
        brushes();
        surfaces();
        lightgrid();
        visibility();
        limits();
    }

private:
    void simple() {
        for (size_t i = 0; i < shaders_.size(); ++i)
            if (std::find(shaders_[i].shader, shaders_[i].shader + 64, '\0') == shaders_[i].shader + 64)
                c_.warning("textures", i, "shader", "shader name is not NUL-terminated within its 64 bytes");
        for (size_t i = 0; i < planes_.size(); ++i) {
            c_.unit_normal("planes", i, "normal", planes_[i].normal);
            c_.finite("planes", i, "dist", planes_[i].dist);
        }
        for (size_t i = 0; i < verts_.size(); ++i) c_.finite("vertexes", i, "xyz", verts_[i].xyz);
        for (size_t i = 0; i < fogs_.size(); ++i) {
            if (fogs_[i].brushNum == -1) {  // q3map2's global fog (worldspawn _fog / sky fogParms)
                c_.warning("effects", i, "brushNum",
                           "brushNum -1 is q3map2's global fog: id's Quake 3 refuses it (\"fog brushNumber out of "
                           "range\"), DarkPlaces accepts it");
                continue;
            }
            if (!c_.index("effects", i, "brushNum", fogs_[i].brushNum, brushes_.size(), "brushes")) continue;
            const dbrush_t& b = brushes_[size_t(fogs_[i].brushNum)];
            if (fogs_[i].visibleSide != -1 && (fogs_[i].visibleSide < 0 || fogs_[i].visibleSide >= b.numSides))
                c_.error("effects", i, "visibleSide",
                         "visibleSide " + std::to_string(fogs_[i].visibleSide) + " is not a side of brush " +
                             std::to_string(fogs_[i].brushNum) + " (" + std::to_string(b.numSides) + " sides)");
        }
    }

    void nodes() {
        for (size_t i = 0; i < nodes_.size(); ++i) {
            const dnode_t& n = nodes_[i];
            c_.index("nodes", i, "planeNum", n.planeNum, planes_.size(), "planes");
            for (int k = 0; k < 2; ++k) {
                if (n.children[k] >= 0)
                    c_.index("nodes", i, "children", n.children[k], nodes_.size(), "nodes");
                else
                    c_.index("nodes", i, "children", -1 - int64_t(n.children[k]), leafs_.size(), "leafs");
            }
        }
        // One parent per node: the tree from node 0 (the world's root).
        const int64_t root[] = {0};
        check_node_trees(c_, nodes_.size(), root, "children",
                         [&](size_t n, int k) -> int64_t { return nodes_[n].children[k]; });
    }

    void leafs() {
        for (size_t i = 0; i < leafs_.size(); ++i) {
            const dleaf_t& l = leafs_[i];
            c_.range("leafs", i, "firstLeafSurface", l.firstLeafSurface, "numLeafSurfaces", l.numLeafSurfaces,
                     leafsurfaces_.size(), "leaffaces");
            c_.range("leafs", i, "firstLeafBrush", l.firstLeafBrush, "numLeafBrushes", l.numLeafBrushes,
                     leafbrushes_.size(), "leafbrushes");
            if (l.area < -1) c_.error("leafs", i, "area", "area " + std::to_string(l.area) + " is negative");
        }
        for (size_t i = 0; i < leafsurfaces_.size(); ++i)
            c_.index("leaffaces", i, "surface", leafsurfaces_[i].surface, surfaces_.size(), "faces");
        for (size_t i = 0; i < leafbrushes_.size(); ++i)
            c_.index("leafbrushes", i, "brush", leafbrushes_[i].brush, brushes_.size(), "brushes");
    }

    void models() {
        if (models_.empty()) {
            c_.error("models", -1, "", "no models: model 0 (the world) is required");
            return;
        }
        for (size_t i = 0; i < models_.size(); ++i) {
            const dmodel_t& m = models_[i];
            c_.finite("models", i, "mins", m.mins);
            c_.finite("models", i, "maxs", m.maxs);
            c_.range("models", i, "firstSurface", m.firstSurface, "numSurfaces", m.numSurfaces, surfaces_.size(),
                     "faces");
            c_.range("models", i, "firstBrush", m.firstBrush, "numBrushes", m.numBrushes, brushes_.size(), "brushes");
        }
    }

    void brushes() {
        for (size_t i = 0; i < brushes_.size(); ++i) {
            c_.range("brushes", i, "firstSide", brushes_[i].firstSide, "numSides", brushes_[i].numSides,
                     brushsides_.size(), "brushsides");
            c_.index("brushes", i, "shaderNum", brushes_[i].shaderNum, shaders_.size(), "textures");
        }
        for (size_t i = 0; i < brushsides_.size(); ++i) {
            c_.index("brushsides", i, "planeNum", brushsides_[i].planeNum, planes_.size(), "planes");
            c_.index("brushsides", i, "shaderNum", brushsides_[i].shaderNum, shaders_.size(), "textures");
        }
    }

    void surfaces() {
        const bool v47 = map_.bsp().version().value_or(46) == 47;
        const int last_type = v47 ? MST_FOLIAGE : MST_FLARE;
        c_.set_budget(2 * uint64_t(meshverts_.size()) + (uint64_t(1) << 22));
        for (size_t i = 0; i < surfaces_.size(); ++i) {
            const dsurface_t& s = surfaces_[i];
            c_.index("faces", i, "shaderNum", s.shaderNum, shaders_.size(), "textures");
            c_.index("faces", i, "fogNum", s.fogNum, fogs_.size(), "effects", true);
            const bool verts_ok =
                c_.range("faces", i, "firstVert", s.firstVert, "numVerts", s.numVerts, verts_.size(), "vertexes");
            const bool index_ok = c_.range("faces", i, "firstIndex", s.firstIndex, "numIndexes", s.numIndexes,
                                           meshverts_.size(), "meshverts");
            if (s.surfaceType < MST_PLANAR || s.surfaceType > last_type) {
                c_.error("faces", i, "surfaceType",
                         "surfaceType " + std::to_string(s.surfaceType) + " is not 1-" + std::to_string(last_type) +
                             " (planar, patch, triangle soup, flare" + (v47 ? ", foliage)" : ")"));
                continue;
            }
            if (s.surfaceType == MST_PATCH) {
                const bool odd = s.patchWidth >= 3 && s.patchHeight >= 3 && (s.patchWidth & 1) && (s.patchHeight & 1);
                if (!odd)
                    c_.error("faces", i, "patchWidth",
                             "patch of " + std::to_string(s.patchWidth) + " x " + std::to_string(s.patchHeight) +
                                 " control points: width and height must be odd and at least 3");
                else if (int64_t(s.patchWidth) * s.patchHeight != s.numVerts)
                    c_.error("faces", i, "numVerts",
                             "numVerts " + std::to_string(s.numVerts) + " is not patchWidth x patchHeight = " +
                                 std::to_string(int64_t(s.patchWidth) * s.patchHeight));
            }
            if (s.surfaceType == MST_PLANAR || s.surfaceType == MST_TRIANGLE_SOUP ||
                (v47 && s.surfaceType == MST_FOLIAGE)) {
                if (s.numIndexes % 3)
                    c_.error("faces", i, "numIndexes",
                             "numIndexes " + std::to_string(s.numIndexes) + " is not a multiple of 3 (triangles)");
                if (verts_ok && index_ok && s.numIndexes > 0 && c_.spend(uint64_t(s.numIndexes), "meshverts")) {
                    for (int32_t k = 0; k < s.numIndexes; ++k) {
                        const int32_t v = meshverts_[size_t(s.firstIndex + k)].offset;
                        if (v < 0 || v >= s.numVerts) {
                            c_.error("meshverts", int64_t(s.firstIndex) + k, "offset",
                                     "offset " + std::to_string(v) + " of face " + std::to_string(i) +
                                         " is outside its " + std::to_string(s.numVerts) + " vertexes");
                            break;
                        }
                    }
                }
            }
            // Lightmaps: >= 0 is a page of the lightmaps lump (when the map
            // stores them; q3map2 -external writes them as images instead).
            if (s.lightmapNum >= 0 && lightmaps_ > 0) {
                if (!c_.index("faces", i, "lightmapNum", s.lightmapNum, lightmaps_, "lightmaps")) continue;
                if (s.lightmapX < 0 || s.lightmapY < 0 || s.lightmapWidth < 0 || s.lightmapHeight < 0 ||
                    int64_t(s.lightmapX) + s.lightmapWidth > LIGHTMAP_WIDTH ||
                    int64_t(s.lightmapY) + s.lightmapHeight > LIGHTMAP_HEIGHT)
                    c_.error("faces", i, "lightmapX",
                             "lightmap rectangle " + std::to_string(s.lightmapX) + "," + std::to_string(s.lightmapY) +
                                 " + " + std::to_string(s.lightmapWidth) + " x " + std::to_string(s.lightmapHeight) +
                                 " leaves the 128 x 128 page");
            }
        }
    }

    void lightgrid() {
        const size_t points = map_.lightgrid().size();
        if (points == 0 || models_.empty()) return;
        std::array<float, 3> size = {64, 64, 128};
        if (const auto g = worldspawn_gridsize(map_.entities())) size = *g;
        uint64_t expected = 1;
        for (int a = 0; a < 3; ++a) {
            if (!(size[a] > 0) || !std::isfinite(models_[0].mins[a]) || !std::isfinite(models_[0].maxs[a])) return;
            const double origin = size[a] * std::ceil(models_[0].mins[a] / size[a]);
            const double top = size[a] * std::floor(models_[0].maxs[a] / size[a]);
            const double n = (top - origin) / size[a] + 1;
            if (!(n >= 1 && n < 1e6)) return;
            expected *= uint64_t(n);
        }
        if (expected != points)
            c_.warning("lightvols", -1, "",
                       std::to_string(points) + " grid points, but the world bounds and gridsize " +
                           std::to_string(int(size[0])) + " " + std::to_string(int(size[1])) + " " +
                           std::to_string(int(size[2])) + " give " + std::to_string(expected) +
                           " (the engine ignores a mismatched light grid)");
    }

    void visibility() {
        Visibility vis;
        try {
            vis = Visibility::of(map_.bsp());
        } catch (const Error& e) {
            c_.error("visdata", -1, "numVecs", e.detail());
            return;
        }
        if (vis.encoding() == Visibility::Encoding::none) return;
        for (size_t i = 0; i < leafs_.size(); ++i)
            c_.index("leafs", i, "cluster", leafs_[i].cluster, vis.clusters(), "visdata clusters", true);
    }

    void limits() {
        const char* engine = "Quake 3's qfiles.h";
        c_.limit("models", models_.size(), MAX_MAP_MODELS, "MAX_MAP_MODELS", engine);
        c_.limit("brushes", brushes_.size(), MAX_MAP_BRUSHES, "MAX_MAP_BRUSHES", engine);
        c_.limit("entities", map_.entities().size(), MAX_MAP_ENTSTRING, "MAX_MAP_ENTSTRING bytes", engine);
        c_.limit("textures", shaders_.size(), MAX_MAP_SHADERS, "MAX_MAP_SHADERS", engine);
        c_.limit("effects", fogs_.size(), MAX_MAP_FOGS, "MAX_MAP_FOGS", engine);
        c_.limit("planes", planes_.size(), MAX_MAP_PLANES, "MAX_MAP_PLANES", engine);
        c_.limit("nodes", nodes_.size(), MAX_MAP_NODES, "MAX_MAP_NODES", engine);
        c_.limit("brushsides", brushsides_.size(), MAX_MAP_BRUSHSIDES, "MAX_MAP_BRUSHSIDES", engine);
        c_.limit("leafs", leafs_.size(), MAX_MAP_LEAFS, "MAX_MAP_LEAFS", engine);
        c_.limit("leaffaces", leafsurfaces_.size(), MAX_MAP_LEAFFACES, "MAX_MAP_LEAFFACES", engine);
        c_.limit("leafbrushes", leafbrushes_.size(), MAX_MAP_LEAFBRUSHES, "MAX_MAP_LEAFBRUSHES", engine);
        c_.limit("lightmaps", map_.bsp().decoded(Map::LUMP_LIGHTMAPS).size(), MAX_MAP_LIGHTING,
                 "MAX_MAP_LIGHTING bytes", engine);
        c_.limit("lightvols", map_.lightgrid().size() * 8, MAX_MAP_LIGHTGRID, "MAX_MAP_LIGHTGRID bytes", engine);
        c_.limit("visdata", map_.visdata().size(), MAX_MAP_VISIBILITY, "MAX_MAP_VISIBILITY bytes", engine);
        c_.limit("faces", surfaces_.size(), MAX_MAP_DRAW_SURFS, "MAX_MAP_DRAW_SURFS", engine);
        c_.limit("vertexes", verts_.size(), MAX_MAP_DRAW_VERTS, "MAX_MAP_DRAW_VERTS", engine);
        c_.limit("meshverts", meshverts_.size(), MAX_MAP_DRAW_INDEXES, "MAX_MAP_DRAW_INDEXES", engine);
    }

    const Map& map_;
    Checker& c_;
    std::span<const dshader_t> shaders_;
    std::span<const dplane_t> planes_;
    std::span<const dnode_t> nodes_;
    std::span<const dleaf_t> leafs_;
    std::span<const dleafsurface_t> leafsurfaces_;
    std::span<const dleafbrush_t> leafbrushes_;
    std::span<const dmodel_t> models_;
    std::span<const dbrush_t> brushes_;
    std::span<const dbrushside_t> brushsides_;
    std::span<const drawVert_t> verts_;
    std::span<const dmeshvert_t> meshverts_;
    std::span<const dfog_t> fogs_;
    std::span<const dsurface_t> surfaces_;
    size_t lightmaps_ = 0;
};

}  // namespace

void check(const Bsp& bsp, CheckReport& report) {
    Checker c(report);
    const Map map(bsp);
    Quake3Check(map, c).run();
}

}  // namespace bspkit::quake3
