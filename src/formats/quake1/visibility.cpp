// Quake 1 / BSP2 / GoldSrc visibility: one run-length row per leaf at
// dleaf_t.visofs, bit n = leaf n + 1, models[0].visleafs bits per row.
#include "formats/common/visibility_builder.hpp"

#include <bspkit/formats/quake1.hpp>

#include <algorithm>
#include <type_traits>

namespace bspkit::quake1 {

void read_visibility(const Bsp& bsp, VisibilityBuilder& b) {
    const Map map(bsp);
    b.set_lump(bsp, map.lump("visibility"));
    const auto models = map.models();
    map.visit([&](const auto& t) {
        const size_t numleafs = t.leafs.size();
        const int64_t visleafs = models.empty() ? 0 : models[0].visleafs;
        // A hostile visleafs is clamped to the leaves that exist (check reports it).
        const size_t clusters = numleafs == 0 ? 0 : size_t(std::clamp<int64_t>(visleafs, 0, int64_t(numleafs - 1)));
        b.set_clusters(clusters);
        b.set_encoding(b.lump().empty() ? Visibility::Encoding::none : Visibility::Encoding::quake_leaf_rle);
        b.pvs_offset().resize(clusters);
        for (size_t c = 0; c < clusters; ++c) b.pvs_offset()[c] = t.leafs[c + 1].visofs;
        b.leaf_cluster().assign(numleafs, -1);
        for (size_t leaf = 1; leaf <= clusters; ++leaf) b.leaf_cluster()[leaf] = int32_t(leaf - 1);
    });
}


std::vector<LeafFace> read_leaf_faces(const Bsp& bsp) {
    const Map map(bsp);
    std::vector<LeafFace> out;
    map.visit([&](const auto& t) {
        using Leaf = std::remove_cvref_t<decltype(t.leafs[0])>;
        using Mark = std::remove_cvref_t<decltype(t.marksurfaces[0])>;
        out = leaf_face_pairs(t.leafs, t.marksurfaces, &Leaf::firstmarksurface, &Leaf::nummarksurfaces, &Mark::face,
                              t.faces.size());
    });
    return out;
}

}  // namespace bspkit::quake1
