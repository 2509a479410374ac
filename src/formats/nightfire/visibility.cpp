// Nightfire visibility (seed 003): raw rows per leaf at Leaf.VisibilityOffset,
// bit n = leaf n + 1, leaf 0 ignored, brush-model leaves at -1; the row size
// is the lowest nonzero offset (rows may be padded).
#include "formats/common/visibility_builder.hpp"

#include <bspkit/formats/nightfire.hpp>

#include <algorithm>

namespace bspkit::nightfire {

void read_visibility(const Bsp& bsp, VisibilityBuilder& b) {
    const Map map(bsp);
    b.set_lump(bsp, Map::Visibility);
    const auto leaves = map.leaves();
    const auto models = map.models();
    const size_t numleaves = leaves.size();
    const size_t world = models.empty() ? (numleaves ? numleaves - 1 : 0) : models[0].LeavesCount;
    const size_t clusters = numleaves == 0 ? 0 : std::min(world, numleaves - 1);
    b.set_clusters(clusters);
    b.leaf_cluster().assign(numleaves, -1);
    if (b.lump().empty()) {
        b.set_encoding(Visibility::Encoding::none);
        for (size_t leaf = 1; leaf <= clusters; ++leaf) b.leaf_cluster()[leaf] = int32_t(leaf - 1);
        return;
    }
    int64_t lowest = 0;
    for (size_t leaf = 1; leaf <= clusters; ++leaf) {
        const int32_t ofs = leaves[leaf].VisibilityOffset;
        if (ofs > 0 && (lowest == 0 || ofs < lowest)) lowest = ofs;
    }
    const size_t minimal = (clusters + 7) / 8;
    const size_t row = lowest > 0 ? size_t(lowest) : minimal;
    if (row < minimal)
        b.fail(lowest, "rows of " + std::to_string(row) + " bytes (the lowest nonzero Leaf.VisibilityOffset) cannot hold " +
                           std::to_string(clusters) + " leaves");
    b.set_encoding(Visibility::Encoding::nightfire_leaf);
    b.set_stored_row_bytes(row);
    b.pvs_offset().resize(clusters);
    for (size_t c = 0; c < clusters; ++c) {
        b.pvs_offset()[c] = leaves[c + 1].VisibilityOffset;
        if (leaves[c + 1].VisibilityOffset >= 0) b.leaf_cluster()[c + 1] = int32_t(c);
    }
}


std::vector<LeafFace> read_leaf_faces(const Bsp& bsp) {
    const Map map(bsp);
    return leaf_face_pairs(map.leaves(), map.leaf_surfaces(), &Leaf::LeafSurfacesIndex, &Leaf::LeafSurfacesCount,
                           &LeafSurface::SurfaceIndex, map.surfaces().size());
}

}  // namespace bspkit::nightfire
