// Row decoding shared by every family, the dvis_t header of Quake 2 and
// Source, and Source's leaf -> cluster table (from source::dleaf_t).
#include "visibility_builder.hpp"

#include <bspkit/formats/source.hpp>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace bspkit {

RleResult decompress_rle_row(ByteSpan lump, size_t offset, std::span<uint8_t> out, size_t padding) noexcept {
    std::fill(out.begin(), out.end(), uint8_t(0));
    RleResult r;
    if (offset > lump.size()) {
        r.status = RowStatus::outside;
        return r;
    }
    size_t in = offset, o = 0;
    const size_t n = out.size();
    while (o < n) {
        // Literal bytes up to the next zero (or the end of the row / lump), copied at once.
        const size_t avail = std::min(n - o, lump.size() - in);
        const auto* start = lump.data() + in;
        const auto* zero = avail ? static_cast<const uint8_t*>(std::memchr(start, 0, avail)) : nullptr;
        const size_t literal = zero ? size_t(zero - start) : avail;
        if (literal) std::memcpy(out.data() + o, start, literal);
        o += literal;
        in += literal;
        if (o >= n) break;
        if (in >= lump.size()) {  // the lump ended inside the row
            r.status = RowStatus::truncated;
            break;
        }
        // A zero byte: the next byte counts zero bytes (already zero in `out`).
        if (++in >= lump.size()) {
            r.status = RowStatus::truncated;
            break;
        }
        const size_t run = lump[in++];
        if (run > n - o) {
            if (run > n - o + padding) r.status = RowStatus::overrun;
            o = n;
            break;
        }
        o += run;
    }
    r.consumed = in - offset;
    return r;
}

Bytes compress_rle_row(std::span<const uint8_t> row) {
    Bytes out;
    for (size_t i = 0; i < row.size(); ++i) {
        out.push_back(row[i]);
        if (row[i]) continue;
        size_t rep = 1;
        while (i + 1 < row.size() && row[i + 1] == 0 && rep < 255) {
            ++i;
            ++rep;
        }
        out.push_back(uint8_t(rep));
    }
    return out;
}

void VisibilityBuilder::read_dvis(ByteOrder order) {
    const ByteSpan l = lump();
    if (l.empty()) {
        set_encoding(Visibility::Encoding::none);
        return;
    }
    if (l.size() < 4) fail(0, "visibility lump of " + std::to_string(l.size()) + " bytes has no dvis_t header");
    const int32_t n = load<int32_t>(l.data(), order);
    if (n < 0) fail(0, "dvis_t numclusters is negative (" + std::to_string(n) + ")");
    if (uint64_t(n) * 8 + 4 > l.size())
        fail(0, "dvis_t numclusters " + std::to_string(n) + " needs " + std::to_string(uint64_t(n) * 8 + 4) +
                    " header bytes, the lump has " + std::to_string(l.size()));
    set_encoding(Visibility::Encoding::cluster_rle);
    set_clusters(size_t(n));
    pvs_offset().resize(size_t(n));
    pas_offset().resize(size_t(n));
    for (size_t c = 0; c < size_t(n); ++c) {
        pvs_offset()[c] = load<int32_t>(l.data() + 4 + c * 8, order);
        pas_offset()[c] = load<int32_t>(l.data() + 8 + c * 8, order);
    }
}

void read_source_visibility(const Bsp& bsp, VisibilityBuilder& b) {
    const source::Map map(bsp);
    b.set_lump(bsp, *bsp.find_lump("visibility"));
    b.read_dvis(bsp.byte_order());
    // dleaf_t.cluster of every leaf version (version 0 leaves come normalised).
    b.set_leaf_clusters(map.leafs());
}

std::vector<LeafFace> read_source_leaf_faces(const Bsp& bsp) {
    const source::Map map(bsp);
    return leaf_face_pairs(map.leafs(), map.leaffaces(), &source::dleaf_t::firstleafface,
                           &source::dleaf_t::numleaffaces, &source::dleafface_t::face, map.world_faces().size());
}

ClusterFaces ClusterFaces::of(const Bsp& bsp, const Visibility& vis) {
    std::vector<LeafFace> pairs;
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: pairs = quake1::read_leaf_faces(bsp); break;
        case Format::quake2: pairs = quake2::read_leaf_faces(bsp); break;
        case Format::quake3: pairs = quake3::read_leaf_faces(bsp); break;
        case Format::nightfire: pairs = nightfire::read_leaf_faces(bsp); break;
        case Format::source: pairs = read_source_leaf_faces(bsp); break;
    }
    // (cluster, face) pairs, sorted and unique, then offsets per cluster.
    std::vector<std::pair<uint32_t, uint32_t>> cf;
    cf.reserve(pairs.size());
    for (const LeafFace& p : pairs) {
        if (p.leaf >= vis.leaf_count()) continue;
        if (const auto c = vis.cluster_of_leaf(p.leaf)) cf.emplace_back(uint32_t(*c), p.face);
    }
    std::sort(cf.begin(), cf.end());
    cf.erase(std::unique(cf.begin(), cf.end()), cf.end());
    ClusterFaces out;
    out.first_.assign(vis.clusters() + 1, 0);
    out.faces_.reserve(cf.size());
    for (const auto& [c, f] : cf) {
        ++out.first_[c + 1];
        out.faces_.push_back(f);
        out.face_bound_ = std::max(out.face_bound_, f + 1);
    }
    for (size_t c = 0; c < vis.clusters(); ++c) out.first_[c + 1] += out.first_[c];
    return out;
}

std::vector<uint8_t> ClusterFaces::listed() const {
    std::vector<uint8_t> out(face_bound_, 0);
    for (const uint32_t f : faces_) out[f] = 1;
    return out;
}

size_t ClusterFaces::mark_visible(size_t cluster, std::span<const uint8_t> pvs_row, std::span<uint8_t> visible) const {
    size_t count = 0;
    for (size_t v = 0; v < clusters(); ++v) {
        if (v != cluster && !((v >> 3) < pvs_row.size() && (pvs_row[v >> 3] & (1u << (v & 7))))) continue;
        ++count;
        for (const uint32_t face : faces(v)) visible[face] = 1;
    }
    return count;
}

Visibility Visibility::of(const Bsp& bsp) {
    VisibilityBuilder b;
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: quake1::read_visibility(bsp, b); break;
        case Format::quake2: quake2::read_visibility(bsp, b); break;
        case Format::quake3: quake3::read_visibility(bsp, b); break;
        case Format::nightfire: nightfire::read_visibility(bsp, b); break;
        case Format::source: read_source_visibility(bsp, b); break;
    }
    Visibility vis = std::move(b.vis);
    // pvs_rows_distinct_: every cluster has a row of its own, at increasing offsets.
    vis.pvs_rows_distinct_ = vis.encoding_ != Encoding::none;
    std::optional<int64_t> last;
    for (size_t c = 0; c < vis.clusters_ && vis.pvs_rows_distinct_; ++c) {
        const auto ofs = vis.row_offset(c, false);
        vis.pvs_rows_distinct_ = ofs && (!last || *ofs > *last);
        last = ofs;
    }
    // Else pvs_row_first_, where pas() computes the PAS: clusters by row, in order.
    if (!vis.pvs_rows_distinct_ && !vis.pas_stored() && vis.encoding_ != Encoding::none) {
        std::vector<std::pair<std::optional<int64_t>, uint32_t>> by_row(vis.clusters_);
        for (size_t c = 0; c < vis.clusters_; ++c) by_row[c] = {vis.row_offset(c, false), uint32_t(c)};
        std::sort(by_row.begin(), by_row.end());
        vis.pvs_row_first_.resize(vis.clusters_);
        for (size_t i = 0; i < by_row.size(); ++i)
            vis.pvs_row_first_[by_row[i].second] =
                i > 0 && by_row[i].first == by_row[i - 1].first ? vis.pvs_row_first_[by_row[i - 1].second] : by_row[i].second;
    }
    return vis;
}

std::optional<int64_t> Visibility::row_offset(size_t cluster, bool pas) const {
    if (cluster >= clusters_) throw std::out_of_range("cluster " + std::to_string(cluster) + " of " + std::to_string(clusters_));
    switch (encoding_) {
        case Encoding::none: return std::nullopt;
        case Encoding::quake_leaf_rle:
        case Encoding::nightfire_leaf:
        case Encoding::cluster_rle: {
            const auto& table = pas && encoding_ == Encoding::cluster_rle ? pas_offset_ : pvs_offset_;
            if (table[cluster] < 0 && encoding_ == Encoding::quake_leaf_rle) return std::nullopt;
            return table[cluster];
        }
        case Encoding::cluster_raw: return int64_t(header_bytes_ + cluster * stored_row_bytes_);
    }
    return std::nullopt;
}

RowStatus Visibility::read_row(size_t cluster, bool pas, std::span<uint8_t> out) const {
    const size_t n = row_bytes();
    out = out.first(n);
    const auto ofs = row_offset(cluster, pas);
    if (!ofs) {  // everything visible
        std::fill(out.begin(), out.end(), uint8_t(0xff));
    } else if (*ofs < 0 || uint64_t(*ofs) > lump_.size()) {
        std::fill(out.begin(), out.end(), uint8_t(0));
        return RowStatus::outside;
    } else if (encoding_ == Encoding::quake_leaf_rle || encoding_ == Encoding::cluster_rle) {
        // Quake / Half-Life vis pad rows to 64 bits: zero runs into the padding are fine.
        const size_t padding = encoding_ == Encoding::quake_leaf_rle ? ((clusters_ + 63) & ~size_t(63)) / 8 - n : 0;
        const RleResult r = decompress_rle_row(lump_, size_t(*ofs), out, padding);
        if (r.status == RowStatus::truncated || r.status == RowStatus::outside) return r.status;
        if (r.status == RowStatus::overrun) {
            if (n) out[n - 1] &= uint8_t(0xff >> ((8 - clusters_ % 8) % 8));
            return r.status;
        }
    } else {  // raw rows: Quake 3, Nightfire
        std::fill(out.begin(), out.end(), uint8_t(0));
        const size_t have = std::min(n, lump_.size() - size_t(*ofs));
        std::memcpy(out.data(), lump_.data() + *ofs, have);
        if (have < n) return RowStatus::truncated;
    }
    if (n) out[n - 1] &= uint8_t(0xff >> ((8 - clusters_ % 8) % 8));
    return RowStatus::ok;
}

RowStatus Visibility::row_status(size_t cluster, bool pas) const {
    Bytes row(row_bytes());
    return read_row(cluster, pas, row);
}

void Visibility::throw_row(size_t cluster, bool pas, RowStatus status) const {
    const auto ofs = row_offset(cluster, pas).value_or(0);
    const std::string what = std::string(pas ? "PAS" : "PVS") + " row of cluster " + std::to_string(cluster);
    const std::string detail = status == RowStatus::outside
                                   ? what + " starts at offset " + std::to_string(ofs) + ", outside the " +
                                         std::to_string(lump_.size()) + "-byte lump"
                                   : what + " at offset " + std::to_string(ofs) + " runs past the end of the lump";
    throw Error({file_, lump_name_, lump_file_offset_ + std::max<int64_t>(ofs, 0)}, detail);
}

std::optional<bool> Visibility::pvs_sees(size_t from, size_t to) const {
    if (from >= clusters_ || to >= clusters_)
        throw std::out_of_range("pvs_sees: cluster " + std::to_string(std::max(from, to)) + " of " +
                                std::to_string(clusters_));
    const auto ofs = row_offset(from, false);
    if (!ofs) return true;  // everything visible
    if (*ofs < 0 || uint64_t(*ofs) > lump_.size()) return std::nullopt;
    const size_t target = to >> 3;
    const auto bit = [&](uint8_t b) { return bool((b >> (to & 7)) & 1); };
    size_t in = size_t(*ofs);
    if (encoding_ != Encoding::quake_leaf_rle && encoding_ != Encoding::cluster_rle) {  // raw rows
        if (in + target >= lump_.size()) return std::nullopt;
        return bit(lump_[in + target]);
    }
    // decompress_rle_row()'s walk, stopped at the target byte.
    size_t o = 0;
    for (;;) {
        const size_t before = target - o;  // literal bytes before the target
        const size_t avail = std::min(lump_.size() - in, before + 1);
        const auto* start = lump_.data() + in;
        const auto* zero = avail ? static_cast<const uint8_t*>(std::memchr(start, 0, avail)) : nullptr;
        const size_t literal = zero ? size_t(zero - start) : avail;
        if (literal > before) return bit(start[before]);
        if (!zero) return std::nullopt;  // the lump ends before the target byte
        in += literal + 1;
        o += literal;
        if (in >= lump_.size()) return std::nullopt;
        const size_t run = lump_[in++];
        if (target < o + run) return false;  // in a run of zero bytes
        o += run;
    }
}

RowStatus Visibility::pvs_into(size_t cluster, std::span<uint8_t> out) const {
    if (out.size() < row_bytes()) throw std::invalid_argument("pvs_into: buffer smaller than row_bytes()");
    return read_row(cluster, false, out);
}

Bytes Visibility::pvs(size_t cluster) const {
    Bytes row(row_bytes());
    const RowStatus s = read_row(cluster, false, row);
    if (s == RowStatus::outside || s == RowStatus::truncated) throw_row(cluster, false, s);
    return row;
}

Bytes Visibility::pas(size_t cluster) const {
    if (pas_stored()) {
        Bytes row(row_bytes());
        const RowStatus s = read_row(cluster, true, row);
        if (s == RowStatus::outside || s == RowStatus::truncated) throw_row(cluster, true, s);
        return row;
    }
    const Bytes seen = pvs(cluster);
    Bytes out = seen;
    // No visibility data: every row is everything, and so is their union.
    if (encoding_ == Encoding::none) return out;
    const auto visible = [&](size_t v) { return v != cluster && (seen[v >> 3] & (1u << (v & 7))); };
    const auto within_budget = [&](uint64_t rows) {
        if (rows * row_bytes() > kMaxRowBytesRead)
            throw Error({file_, lump_name_, lump_file_offset_},
                        "the PAS of cluster " + std::to_string(cluster) + " would read " + std::to_string(rows) +
                            " different rows of " + std::to_string(row_bytes()) + " bytes, more than " +
                            std::to_string(kMaxRowBytesRead) + " bytes");
    };
    Bytes other(row_bytes());
    // The rows through plain pointers and a size of their own: a byte stored
    // through a captured vector could be its size, read again at every byte.
    uint8_t* const o = out.data();
    const uint8_t* const r = other.data();
    const size_t n = out.size();
    const auto add = [&](size_t v) {
        const RowStatus s = read_row(v, false, other);
        if (s == RowStatus::outside || s == RowStatus::truncated) throw_row(v, false, s);
        for (size_t k = 0; k < n; ++k) o[k] |= r[k];
    };
    if (pvs_rows_distinct_) {  // compiled maps: no row repeats, each is read
        uint64_t rows = 0;  // the visible clusters but this one
        for (const uint8_t b : seen) rows += uint64_t(__builtin_popcount(b));
        within_budget(rows - ((seen[cluster >> 3] >> (cluster & 7)) & 1u));
        for (size_t v = 0; v < clusters_; ++v)
            if (visible(v)) add(v);
        return out;
    }
    // A row is read and added once, by the first visible cluster naming it, however
    // many others do: the same row gives the same bytes and status, and adding it
    // twice changes nothing. (A table pointing every cluster at one row cost
    // clusters x row bytes: 32768 x 4 KiB per call on a fuzzed map.)
    // seen_row[f]: 1 once a visible cluster uses the row of pvs_row_first_ f, 2 once added.
    std::vector<uint8_t> seen_row(clusters_, 0);
    uint64_t rows = 0;
    for (size_t v = 0; v < clusters_; ++v)
        if (visible(v) && !seen_row[pvs_row_first_[v]]) {
            seen_row[pvs_row_first_[v]] = 1;
            ++rows;
        }
    within_budget(rows);
    for (size_t v = 0; v < clusters_; ++v)
        if (visible(v) && seen_row[pvs_row_first_[v]] == 1) {
            seen_row[pvs_row_first_[v]] = 2;
            add(v);
        }
    return out;
}

std::optional<size_t> Visibility::cluster_of_leaf(size_t leaf) const {
    if (leaf >= leaf_cluster_.size()) throw std::out_of_range("leaf " + std::to_string(leaf) + " of " + std::to_string(leaf_cluster_.size()));
    const int32_t c = leaf_cluster_[leaf];
    if (c < 0 || size_t(c) >= clusters_) return std::nullopt;
    return size_t(c);
}

}  // namespace bspkit
