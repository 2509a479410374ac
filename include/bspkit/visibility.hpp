// Potentially visible (PVS) and audible (PAS) sets of every supported family.
//
//   const bspkit::Visibility vis = bspkit::Visibility::of(bsp);   // reads headers only
//   bspkit::Bytes row = vis.pvs(3);        // bit c of the row: cluster c visible
//   auto c = vis.cluster_of_leaf(17);      // which row a leaf uses
//
// Rows are numbered by "cluster":
//   - Quake 2 and Source: the clusters of the vis lump (dvis_t, run-length rows,
//     PVS and PAS stored);
//   - Quake 3: the clusters of visdata (numVecs rows of sizeVecs bytes, raw);
//   - Quake 1, BSP2, GoldSrc: the leaves with visibility, leaf 0 excluded:
//     cluster c is leaf c + 1, rows run-length encoded at dleaf_t.visofs, one
//     bit per leaf 1..models[0].visleafs;
//   - Nightfire: leaf c + 1 as well, rows raw at Leaf.VisibilityOffset, their
//     size from the lowest nonzero offset.
// Where the file stores no PAS (all but Quake 2 / Source) it is computed as
// the union of the PVS rows of every visible cluster (QuakeWorld's PHS rule).
//
// Decompression never reads past its row or the lump and never writes past
// the cluster count; a row outside the lump is an Error naming the lump.
#pragma once

#include <bspkit/bsp.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace bspkit {

/// How one row decompressed.
enum class RowStatus : uint8_t {
    ok,
    overrun,    ///< a zero run went past the end of the row (clipped)
    truncated,  ///< the lump ended before the row was complete (rest left zero)
    outside,    ///< the row's offset is outside the lump
};

/// Decompresses one Quake run-length row (0x00 N = N zero bytes) starting at
/// `offset` of `lump` into `out` (first zeroed). Reads stay inside `lump`,
/// writes inside `out`. `consumed` = compressed bytes read. A final zero run
/// may reach `padding` bytes past the row without counting as an overrun
/// (Quake and Half-Life vis tools pad rows to 64 bits).
struct RleResult {
    RowStatus status = RowStatus::ok;
    size_t consumed = 0;
};
RleResult decompress_rle_row(ByteSpan lump, size_t offset, std::span<uint8_t> out, size_t padding = 0) noexcept;

/// Compresses a row the way the vis tools do (for writers and tests).
Bytes compress_rle_row(std::span<const uint8_t> row);

/// Decompressed row bytes one call may read over many rows (Visibility::pas()
/// computed from the PVS, the `vis` summary). Real maps stay far below: Quake 2
/// and Source at their 65536-cluster limit read 2^29 for every row, a BSP2 map
/// would need some 370,000 leaves to reach it. The cost grows with the square
/// of the clusters a file names: the summary of a 3.3 MB Quake 2 file naming
/// 400,000 clusters ran past 20 s, and ten times the clusters take a hundred
/// times as long.
inline constexpr uint64_t kMaxRowBytesRead = uint64_t(1) << 34;

class Visibility {
public:
    enum class Encoding : uint8_t {
        none,            ///< no visibility data: everything visible
        quake_leaf_rle,  ///< Quake 1 / BSP2 / GoldSrc
        cluster_rle,     ///< Quake 2 / Source dvis_t
        cluster_raw,     ///< Quake 3 visdata
        nightfire_leaf,  ///< Nightfire raw per-leaf rows
    };

    /// Reads the vis header and the leaf -> cluster table. Throws Error for a
    /// header that does not fit the lump (huge counts are refused before any
    /// allocation).
    static Visibility of(const Bsp& bsp);

    Encoding encoding() const noexcept { return encoding_; }
    /// True when cluster c is leaf c + 1 (Quake 1, GoldSrc, Nightfire).
    bool leaf_based() const noexcept {
        return encoding_ == Encoding::quake_leaf_rle || encoding_ == Encoding::nightfire_leaf;
    }
    /// Number of rows (and bits per row).
    size_t clusters() const noexcept { return clusters_; }
    /// Bytes of a decompressed row: (clusters + 7) / 8.
    size_t row_bytes() const noexcept { return (clusters_ + 7) / 8; }
    /// True when the file stores PAS rows (Quake 2, Source).
    bool pas_stored() const noexcept { return encoding_ == Encoding::cluster_rle; }
    /// Quake 3: bytes per stored row (sizeVecs); Nightfire: the deduced row size.
    size_t stored_row_bytes() const noexcept { return stored_row_bytes_; }

    /// Visible clusters of `cluster` as a bit vector of row_bytes() bytes.
    /// Throws Error when the row lies outside the lump; std::out_of_range for a bad cluster.
    Bytes pvs(size_t cluster) const;
    /// Audible clusters: stored PAS (Quake 2, Source) or computed from the PVS.
    /// Throws Error when computing it would read more than kMaxRowBytesRead.
    Bytes pas(size_t cluster) const;
    /// pvs() into caller memory (out.size() >= row_bytes()); returns the status
    /// instead of throwing (outside / truncated rows leave `out` zero).
    RowStatus pvs_into(size_t cluster, std::span<uint8_t> out) const;
    /// Whether cluster `to` is in the PVS of cluster `from`, reading `from`'s
    /// row only as far as `to`'s byte (a point-to-point test, as
    /// query::World::visible() asks it, without decoding the whole row).
    /// Nothing when that byte cannot be read: the row starts outside the lump
    /// or the lump ends before it. std::out_of_range for a bad cluster.
    std::optional<bool> pvs_sees(size_t from, size_t to) const;
    /// Status of the stored PVS (pas = false) or PAS row without keeping it.
    RowStatus row_status(size_t cluster, bool pas = false) const;
    /// Byte offset of the stored row inside the vis lump; nullopt when the
    /// row is "everything visible" (no vis data, Quake visofs -1).
    std::optional<int64_t> row_offset(size_t cluster, bool pas = false) const;

    /// The cluster (row) a leaf uses; nullopt when the leaf has none
    /// (Quake leaf 0, cluster -1, brush-model leaves).
    std::optional<size_t> cluster_of_leaf(size_t leaf) const;
    size_t leaf_count() const noexcept { return leaf_cluster_.size(); }

    /// Name of the vis lump in the format table ("visibility", "visdata").
    const std::string& lump_name() const noexcept { return lump_name_; }
    ByteSpan lump() const noexcept { return lump_; }

private:
    Encoding encoding_ = Encoding::none;
    std::string file_;
    std::string lump_name_;
    int64_t lump_file_offset_ = 0;
    ByteSpan lump_;
    size_t clusters_ = 0;
    size_t stored_row_bytes_ = 0;
    size_t header_bytes_ = 0;                 ///< Quake 3: 8
    std::vector<int64_t> pvs_offset_;         ///< per cluster, -1 = everything visible
    std::vector<int64_t> pas_offset_;         ///< Quake 2 / Source
    std::vector<int32_t> leaf_cluster_;       ///< per leaf, -1 = none
    /// Every cluster's PVS row is its own, at offsets increasing with the
    /// cluster (as most compilers write them): pas() then has no repeats to skip.
    bool pvs_rows_distinct_ = false;
    /// Otherwise, for a PAS computed from the PVS: per cluster, the first
    /// cluster whose PVS row is the same (the same offset, or both "everything
    /// visible"), so pas() reads each row once (ericw-tools' vis shares rows:
    /// pd_change_dest's 703 clusters have 54).
    std::vector<uint32_t> pvs_row_first_;

    friend struct VisibilityBuilder;
    void throw_row(size_t cluster, bool pas, RowStatus status) const;
    RowStatus read_row(size_t cluster, bool pas, std::span<uint8_t> out) const;
};


/// Which face records each cluster draws: the faces its leaves list
/// (Quake 1 / BSP2 / GoldSrc marksurfaces, Quake 2 / Source leaffaces,
/// Quake 3 leafsurfaces, Nightfire LeafSurfaces), merged per cluster, sorted
/// and unique. Face numbers are the format's face (Quake 3: surface) record
/// indices, model::Surface::face. A leaf's range is clamped to its list, so a
/// hostile map cannot read past it; leaves without a cluster add nothing.
/// Faces that no cluster lists (brush models, Source displacements) are not
/// in the table: a PVS renderer must draw them always.
class ClusterFaces {
public:
    static ClusterFaces of(const Bsp& bsp, const Visibility& vis);

    size_t clusters() const noexcept { return first_.empty() ? 0 : first_.size() - 1; }
    std::span<const uint32_t> faces(size_t cluster) const {
        return std::span<const uint32_t>(faces_).subspan(first_.at(cluster), first_.at(cluster + 1) - first_[cluster]);
    }
    /// One past the highest face number listed (0 when none).
    uint32_t face_bound() const noexcept { return face_bound_; }
    /// Per face number below face_bound(): 1 where some cluster lists the face.
    std::vector<uint8_t> listed() const;
    /// What a renderer culls by from `cluster` with its PVS row `pvs_row`
    /// (Visibility::pvs_into): sets visible[f] = 1 for every face of `cluster`
    /// and of each cluster the row marks (`visible` has face_bound() entries at
    /// least); returns how many clusters that is.
    size_t mark_visible(size_t cluster, std::span<const uint8_t> pvs_row, std::span<uint8_t> visible) const;

private:
    std::vector<uint32_t> first_;  ///< clusters + 1 offsets into faces_
    std::vector<uint32_t> faces_;
    uint32_t face_bound_ = 0;
};

}  // namespace bspkit
