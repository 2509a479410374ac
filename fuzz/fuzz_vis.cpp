// Visibility: PVS and PAS decompression of every cluster (bounded).
#include "fuzz_common.hpp"

#include <bspkit/visibility.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bsp = bspkit::fuzz::open(data, size);
    if (!bsp) return 0;
    bspkit::fuzz::guarded([&] {
        const bspkit::Visibility vis = bspkit::Visibility::of(*bsp);
        bspkit::Bytes row(vis.row_bytes());
        for (size_t c = 0; c < vis.clusters() && c < 4096; ++c) {
            (void)vis.pvs_into(c, row);
            bspkit::fuzz::guarded([&] { (void)vis.pas(c); });
        }
        for (size_t l = 0; l < vis.leaf_count() && l < 4096; ++l) (void)vis.cluster_of_leaf(l);
    });
    return 0;
}
