// Quake 2 visibility: dvis_t {numclusters, bitofs[][2]}, run-length rows,
// PVS and PHS (PAS) stored; leaves name their cluster.
#include "formats/common/visibility_builder.hpp"

#include <bspkit/formats/quake2.hpp>

#include <algorithm>

namespace bspkit::quake2 {

void read_visibility(const Bsp& bsp, VisibilityBuilder& b) {
    const Map map(bsp);
    b.set_lump(bsp, Map::LUMP_VISIBILITY);
    b.read_dvis(bsp.byte_order());
    b.set_leaf_clusters(map.leafs());
}


std::vector<LeafFace> read_leaf_faces(const Bsp& bsp) {
    const Map map(bsp);
    return leaf_face_pairs(map.leafs(), map.leaffaces(), &dleaf_t::firstleafface, &dleaf_t::numleaffaces,
                           &dleafface_t::face, map.faces().size());
}

}  // namespace bspkit::quake2
