// Quake 3 visibility: visdata {numVecs, sizeVecs} then numVecs raw rows of
// sizeVecs bytes; bit y of row x: cluster y visible from cluster x.
#include "formats/common/visibility_builder.hpp"

#include <bspkit/formats/quake3.hpp>

#include <algorithm>

namespace bspkit::quake3 {

void read_visibility(const Bsp& bsp, VisibilityBuilder& b) {
    const Map map(bsp);
    b.set_lump(bsp, Map::LUMP_VISIBILITY);
    const ByteSpan l = b.lump();
    if (l.empty()) {
        // No visdata: every cluster sees every other.
        b.set_encoding(Visibility::Encoding::none);
        b.set_leaf_clusters(map.leafs());
        return;
    }
    if (l.size() < 8) b.fail(0, "visdata lump of " + std::to_string(l.size()) + " bytes has no header");
    const int32_t num = load<int32_t>(l.data(), bsp.byte_order());
    const int32_t size = load<int32_t>(l.data() + 4, bsp.byte_order());
    if (num < 0 || size < 0)
        b.fail(0, "visdata numVecs " + std::to_string(num) + " / sizeVecs " + std::to_string(size) + " negative");
    if (uint64_t(num) * uint64_t(size) + 8 > l.size())
        b.fail(0, "visdata numVecs " + std::to_string(num) + " x sizeVecs " + std::to_string(size) + " needs " +
                      std::to_string(uint64_t(num) * uint64_t(size) + 8) + " bytes, the lump has " +
                      std::to_string(l.size()));
    if (uint64_t(size) * 8 < uint64_t(num))
        b.fail(4, "visdata sizeVecs " + std::to_string(size) + " is too small for " + std::to_string(num) +
                      " clusters (needs " + std::to_string((uint64_t(num) + 7) / 8) + ")");
    b.set_encoding(Visibility::Encoding::cluster_raw);
    b.set_clusters(size_t(num));
    b.set_stored_row_bytes(size_t(size));
    b.set_header_bytes(8);
    b.set_leaf_clusters(map.leafs());
}


std::vector<LeafFace> read_leaf_faces(const Bsp& bsp) {
    const Map map(bsp);
    return leaf_face_pairs(map.leafs(), map.leafsurfaces(), &dleaf_t::firstLeafSurface, &dleaf_t::numLeafSurfaces,
                           &dleafsurface_t::surface, map.surfaces().size());
}

}  // namespace bspkit::quake3
