// Private: how the per-format readers fill a bspkit::Visibility.
#pragma once

#include <bspkit/visibility.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace bspkit {

struct VisibilityBuilder {
    Visibility vis;

    /// Sets the vis lump (decoded bytes, name and file offset for messages).
    void set_lump(const Bsp& bsp, size_t index) {
        vis.file_ = bsp.file_name();
        vis.lump_name_ = std::string(bsp.lump_name(index));
        vis.lump_file_offset_ = bsp.entry(index).offset;
        vis.lump_ = bsp.decoded(index);
    }
    void set_encoding(Visibility::Encoding e) { vis.encoding_ = e; }
    void set_clusters(size_t n) { vis.clusters_ = n; }
    void set_stored_row_bytes(size_t n) { vis.stored_row_bytes_ = n; }
    void set_header_bytes(size_t n) { vis.header_bytes_ = n; }
    std::vector<int64_t>& pvs_offset() { return vis.pvs_offset_; }
    std::vector<int64_t>& pas_offset() { return vis.pas_offset_; }
    std::vector<int32_t>& leaf_cluster() { return vis.leaf_cluster_; }
    ByteSpan lump() const { return vis.lump_; }

    [[noreturn]] void fail(int64_t offset_in_lump, std::string detail) const {
        throw Error({vis.file_, vis.lump_name_, vis.lump_file_offset_ + offset_in_lump}, std::move(detail));
    }

    /// Records each leaf's cluster. Without vis data (encoding none) every
    /// cluster sees every other, and the count comes from the leafs: the
    /// largest cluster + 1, but never more clusters than leafs, so a hostile
    /// cluster number cannot ask for billions of rows (leafs whose cluster is
    /// out of range then have none).
    template <class Leafs>
    void set_leaf_clusters(const Leafs& leafs) {
        vis.leaf_cluster_.resize(leafs.size());
        int64_t most = -1;
        for (size_t i = 0; i < leafs.size(); ++i) {
            vis.leaf_cluster_[i] = int32_t(leafs[i].cluster);
            most = std::max<int64_t>(most, leafs[i].cluster);
        }
        if (vis.encoding_ == Visibility::Encoding::none) vis.clusters_ = std::min(size_t(most + 1), leafs.size());
    }

    /// Reads a Quake 2 / Source dvis_t header: numclusters, bitofs[n][2].
    void read_dvis(ByteOrder order);
};

// Per-format readers, each in its format's folder.
namespace quake1 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace quake2 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace quake3 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace nightfire { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
/// Source: the vis lump is dvis_t; leaf clusters from dleaf_t.cluster.
void read_source_visibility(const Bsp& bsp, VisibilityBuilder& b);

}  // namespace bspkit
