// Typed view of Quake 2 maps.
#include <bspkit/formats/quake2.hpp>

namespace bspkit::quake2 {

Map::Map(const Bsp& bsp) : bsp_(&bsp) {
    if (bsp.format() != Format::quake2)
        throw Error({bsp.file_name(), "header", 0}, std::string(format_id(bsp.format())) + " is not a Quake 2 map");
}

ByteSpan Map::entities() const { return bsp_->decoded(LUMP_ENTITIES); }
ByteSpan Map::visibility() const { return bsp_->decoded(LUMP_VISIBILITY); }
ByteSpan Map::lighting() const { return bsp_->decoded(LUMP_LIGHTING); }
ByteSpan Map::pop() const { return bsp_->decoded(LUMP_POP); }

std::span<const dplane_t> Map::planes() const { return planes_.get(*bsp_, LUMP_PLANES); }
std::span<const dvertex_t> Map::vertices() const { return vertices_.get(*bsp_, LUMP_VERTEXES); }
std::span<const dnode_t> Map::nodes() const { return nodes_.get(*bsp_, LUMP_NODES); }
std::span<const texinfo_t> Map::texinfo() const { return texinfo_.get(*bsp_, LUMP_TEXINFO); }
std::span<const dface_t> Map::faces() const { return faces_.get(*bsp_, LUMP_FACES); }
std::span<const dleaf_t> Map::leafs() const { return leafs_.get(*bsp_, LUMP_LEAFS); }
std::span<const dleafface_t> Map::leaffaces() const { return leaffaces_.get(*bsp_, LUMP_LEAFFACES); }
std::span<const dleafbrush_t> Map::leafbrushes() const { return leafbrushes_.get(*bsp_, LUMP_LEAFBRUSHES); }
std::span<const dedge_t> Map::edges() const { return edges_.get(*bsp_, LUMP_EDGES); }
std::span<const dsurfedge_t> Map::surfedges() const { return surfedges_.get(*bsp_, LUMP_SURFEDGES); }
std::span<const dmodel_t> Map::models() const { return models_.get(*bsp_, LUMP_MODELS); }
std::span<const dbrush_t> Map::brushes() const { return brushes_.get(*bsp_, LUMP_BRUSHES); }
std::span<const dbrushside_t> Map::brushsides() const { return brushsides_.get(*bsp_, LUMP_BRUSHSIDES); }
std::span<const darea_t> Map::areas() const { return areas_.get(*bsp_, LUMP_AREAS); }
std::span<const dareaportal_t> Map::areaportals() const { return areaportals_.get(*bsp_, LUMP_AREAPORTALS); }

}  // namespace bspkit::quake2

#include "formats/common/check_util.hpp"

namespace bspkit::quake2 {

std::optional<FaceLightmap> face_lightmap(const Map& map, size_t face) {
    const auto faces = map.faces();
    if (face >= faces.size()) return std::nullopt;
    const dface_t& f = faces[face];
    FaceLightmap out;
    out.styles = checks::style_count(f.styles);
    out.lightofs = f.lightofs;
    if (f.lightofs < 0 || out.styles == 0) return std::nullopt;
    const auto texinfo = map.texinfo();
    const auto surfedges = map.surfedges();
    const auto edges = map.edges();
    const auto vertices = map.vertices();
    if (f.texinfo < 0 || size_t(f.texinfo) >= texinfo.size()) return std::nullopt;
    const texinfo_t& ti = texinfo[size_t(f.texinfo)];
    if (ti.flags & (SURF_SKY | SURF_WARP)) return std::nullopt;
    if (f.firstedge < 0 || f.numedges < 3 || uint64_t(f.firstedge) + uint64_t(f.numedges) > surfedges.size())
        return std::nullopt;
    checks::LuxelExtents ext;
    for (int64_t k = 0; k < f.numedges; ++k) {
        const int64_t e = surfedges[size_t(f.firstedge + k)].edge;
        const uint64_t mag = uint64_t(e < 0 ? -e : e);
        if (mag >= edges.size()) return std::nullopt;
        const uint64_t v = e < 0 ? edges[mag].v[1] : edges[mag].v[0];
        if (v >= vertices.size()) return std::nullopt;
        ext.add(vertices[v].point, ti.vecs);
    }
    int size[2];
    if (!ext.size(size)) return std::nullopt;
    out.width = size[0];
    out.height = size[1];
    out.bytes = size_t(out.width) * size_t(out.height) * size_t(out.styles) * 3;
    return out;
}

}  // namespace bspkit::quake2
