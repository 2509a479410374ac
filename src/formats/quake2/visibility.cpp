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
    const auto leafs = map.leafs();
    b.leaf_cluster().resize(leafs.size());
    int32_t most = -1;
    for (size_t i = 0; i < leafs.size(); ++i) {
        b.leaf_cluster()[i] = leafs[i].cluster;
        most = std::max<int32_t>(most, leafs[i].cluster);
    }
    if (b.vis.encoding() == Visibility::Encoding::none) b.set_clusters(size_t(most + 1));
}

}  // namespace bspkit::quake2
