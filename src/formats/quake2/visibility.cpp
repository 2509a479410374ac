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

}  // namespace bspkit::quake2
