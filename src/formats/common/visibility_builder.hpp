// Private: how the per-format readers fill a bspkit::Visibility.
#pragma once

#include <bspkit/visibility.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

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

/// One (leaf, face) entry of a leaf's face list.
struct LeafFace {
    uint32_t leaf, face;
};

/// The (leaf, face) pairs of every leaf's [first, first + count) range of
/// `list`, clamped to the list (hostile ranges read nothing past it). Entries
/// naming a face past the map's `faces` are left out: they name nothing (check
/// reports them), and the renderer sizes its per-face tables by the largest
/// face listed (a damaged entry naming face 268435921 made it fill 256 MB).
template <class Leafs, class List, class Leaf, class Item, class First, class Count, class Face>
std::vector<LeafFace> leaf_face_pairs(const Leafs& leafs, const List& list, First Leaf::*first, Count Leaf::*count,
                                      Face Item::*face, size_t faces) {
    std::vector<LeafFace> out;
    for (size_t l = 0; l < leafs.size(); ++l) {
        const int64_t f = int64_t(leafs[l].*first), n = int64_t(leafs[l].*count);
        if (f < 0 || n <= 0 || uint64_t(f) >= list.size()) continue;
        const size_t end = size_t(std::min<int64_t>(f + n, int64_t(list.size())));
        for (size_t i = size_t(f); i < end; ++i) {
            const int64_t face_index = int64_t(list[i].*face);
            if (face_index >= 0 && uint64_t(face_index) < faces && face_index <= INT32_MAX)
                out.push_back({uint32_t(l), uint32_t(face_index)});
        }
    }
    return out;
}

// Per-format readers, each in its format's folder.
namespace quake1 { std::vector<LeafFace> read_leaf_faces(const Bsp& bsp); }
namespace quake2 { std::vector<LeafFace> read_leaf_faces(const Bsp& bsp); }
namespace quake3 { std::vector<LeafFace> read_leaf_faces(const Bsp& bsp); }
namespace nightfire { std::vector<LeafFace> read_leaf_faces(const Bsp& bsp); }
std::vector<LeafFace> read_source_leaf_faces(const Bsp& bsp);

namespace quake1 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace quake2 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace quake3 { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
namespace nightfire { void read_visibility(const Bsp& bsp, VisibilityBuilder& b); }
/// Source: the vis lump is dvis_t; leaf clusters from dleaf_t.cluster.
void read_source_visibility(const Bsp& bsp, VisibilityBuilder& b);

}  // namespace bspkit
