// Typed view of Quake 3 / RTCW maps.
#include <bspkit/formats/quake3.hpp>

namespace bspkit::quake3 {

Map::Map(const Bsp& bsp) : bsp_(&bsp) {
    if (bsp.format() != Format::quake3)
        throw Error({bsp.file_name(), "header", 0}, std::string(format_id(bsp.format())) + " is not a Quake 3 map");
}

ByteSpan Map::entities() const { return bsp_->decoded(LUMP_ENTITIES); }
ByteSpan Map::visdata() const { return bsp_->decoded(LUMP_VISIBILITY); }

std::optional<dvisdata_t> Map::visdata_header() const {
    const ByteSpan v = visdata();
    if (v.size() < sizeof(dvisdata_t)) return std::nullopt;
    return dvisdata_t{load<int32_t>(v.data(), bsp_->byte_order()), load<int32_t>(v.data() + 4, bsp_->byte_order())};
}

std::span<const dshader_t> Map::shaders() const { return shaders_.get(*bsp_, LUMP_SHADERS); }
std::span<const dplane_t> Map::planes() const { return planes_.get(*bsp_, LUMP_PLANES); }
std::span<const dnode_t> Map::nodes() const { return nodes_.get(*bsp_, LUMP_NODES); }
std::span<const dleaf_t> Map::leafs() const { return leafs_.get(*bsp_, LUMP_LEAFS); }
std::span<const dleafsurface_t> Map::leafsurfaces() const { return leafsurfaces_.get(*bsp_, LUMP_LEAFSURFACES); }
std::span<const dleafbrush_t> Map::leafbrushes() const { return leafbrushes_.get(*bsp_, LUMP_LEAFBRUSHES); }
std::span<const dmodel_t> Map::models() const { return models_.get(*bsp_, LUMP_MODELS); }
std::span<const dbrush_t> Map::brushes() const { return brushes_.get(*bsp_, LUMP_BRUSHES); }
std::span<const dbrushside_t> Map::brushsides() const { return brushsides_.get(*bsp_, LUMP_BRUSHSIDES); }
std::span<const drawVert_t> Map::vertexes() const { return vertexes_.get(*bsp_, LUMP_DRAWVERTS); }
std::span<const dmeshvert_t> Map::meshverts() const { return meshverts_.get(*bsp_, LUMP_DRAWINDEXES); }
std::span<const dfog_t> Map::fogs() const { return fogs_.get(*bsp_, LUMP_FOGS); }
std::span<const dsurface_t> Map::surfaces() const { return surfaces_.get(*bsp_, LUMP_SURFACES); }
std::span<const dlightmap_t> Map::lightmaps() const { return lightmaps_.get(*bsp_, LUMP_LIGHTMAPS); }
std::span<const dlightgrid_t> Map::lightgrid() const { return lightgrid_.get(*bsp_, LUMP_LIGHTGRID); }

}  // namespace bspkit::quake3
