// Binned surface-area-heuristic build of query::detail::Bvh.
#include "query/bvh.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bspkit::query::detail {
namespace {

constexpr uint32_t kLeafItems = 1;   ///< at most this many items end a split at once
constexpr uint32_t kMaxLeafItems = 4;  ///< a leaf may keep this many when no split pays
constexpr int kBins = 16;
constexpr int kSahDepth = 32;        ///< below this depth, median splits bound the depth

/// The binary tree the surface-area build makes, folded into WideNode afterwards.
struct BvhNode {
    float lo[3], hi[3];
    uint32_t index;  ///< leaf: first of Bvh::items; inner: the right child (the left one is this node + 1)
    uint16_t count;  ///< items in a leaf (at least one), 0 for an inner node
};

struct Builder {
    std::span<const Aabb> boxes;
    std::vector<uint32_t> order;  ///< indices into boxes
    std::vector<float> centre;    ///< 3 per box
    std::vector<BvhNode>& out;  ///< the binary tree being built

    static void grow(Aabb& a, const Aabb& b) {
        for (int k = 0; k < 3; ++k) {
            a.lo[k] = std::min(a.lo[k], b.lo[k]);
            a.hi[k] = std::max(a.hi[k], b.hi[k]);
        }
    }
    static Aabb empty_box() {
        constexpr float big = std::numeric_limits<float>::max();
        return {{big, big, big}, {-big, -big, -big}};
    }
    static float area(const Aabb& a) {
        const float x = a.hi[0] - a.lo[0], y = a.hi[1] - a.lo[1], z = a.hi[2] - a.lo[2];
        return x < 0 ? 0 : x * y + y * z + z * x;
    }

    void make_leaf(uint32_t node, uint32_t first, uint32_t count) {
        out[node].index = first;
        out[node].count = uint16_t(count);
    }

    void build(uint32_t node, uint32_t first, uint32_t count, int depth) {
        Aabb bounds = empty_box(), cbounds = empty_box();
        for (uint32_t i = first; i < first + count; ++i) {
            const uint32_t b = order[i];
            grow(bounds, boxes[b]);
            const Aabb c{{centre[b * 3], centre[b * 3 + 1], centre[b * 3 + 2]},
                         {centre[b * 3], centre[b * 3 + 1], centre[b * 3 + 2]}};
            grow(cbounds, c);
        }
        BvhNode& n = out[node];
        std::copy(bounds.lo, bounds.lo + 3, n.lo);
        std::copy(bounds.hi, bounds.hi + 3, n.hi);
        if (count <= kLeafItems) return make_leaf(node, first, count);
        int axis = 0;
        for (int k = 1; k < 3; ++k)
            if (cbounds.hi[k] - cbounds.lo[k] > cbounds.hi[axis] - cbounds.lo[axis]) axis = k;
        const float extent = cbounds.hi[axis] - cbounds.lo[axis];
        uint32_t mid = first + count / 2;  // median unless the surface areas say better
        bool split_found = false;
        if (extent > 0 && depth < kSahDepth) {
            Aabb bin_box[kBins];
            uint32_t bin_count[kBins] = {};
            for (auto& b : bin_box) b = empty_box();
            const float scale = kBins / extent;
            auto bin_of = [&](uint32_t b) {  // centres are finite (see Bvh::build), the product may not be
                const float f = (centre[b * 3 + size_t(axis)] - cbounds.lo[axis]) * scale;
                return f > 0 ? int(std::min(f, float(kBins - 1))) : 0;
            };
            for (uint32_t i = first; i < first + count; ++i) {
                const int k = bin_of(order[i]);
                ++bin_count[k];
                grow(bin_box[k], boxes[order[i]]);
            }
            float right_area[kBins];
            uint32_t right_count[kBins];
            Aabb acc = empty_box();
            uint32_t cnt = 0;
            for (int k = kBins - 1; k > 0; --k) {
                grow(acc, bin_box[k]);
                cnt += bin_count[k];
                right_area[k] = area(acc);
                right_count[k] = cnt;
            }
            acc = empty_box();
            cnt = 0;
            float best = float(count) * area(bounds);  // cost of a leaf (a split must beat it)
            int best_k = -1;
            for (int k = 1; k < kBins; ++k) {
                grow(acc, bin_box[k - 1]);
                cnt += bin_count[k - 1];
                if (cnt == 0 || right_count[k] == 0) continue;
                const float cost = float(cnt) * area(acc) + float(right_count[k]) * right_area[k];
                if (cost < best) {
                    best = cost;
                    best_k = k;
                }
            }
            if (best_k < 0 && count <= kMaxLeafItems) return make_leaf(node, first, count);
            if (best_k > 0) {
                auto it = std::partition(order.begin() + first, order.begin() + first + count,
                                         [&](uint32_t b) { return bin_of(b) < best_k; });
                mid = uint32_t(it - order.begin());
                split_found = mid > first && mid < first + count;
            }
        }
        if (!split_found) {
            mid = first + count / 2;
            std::nth_element(order.begin() + first, order.begin() + mid, order.begin() + first + count,
                             [&](uint32_t x, uint32_t y) { return centre[x * 3 + size_t(axis)] < centre[y * 3 + size_t(axis)]; });
        }
        out[node].count = 0;
        out.push_back({});  // the left child follows its parent
        build(node + 1, first, mid - first, depth + 1);
        const uint32_t right = uint32_t(out.size());
        out[node].index = right;
        out.push_back({});
        build(right, mid, first + count - mid, depth + 1);
    }
};

float area_of(const BvhNode& n) {
    const float x = n.hi[0] - n.lo[0], y = n.hi[1] - n.lo[1], z = n.hi[2] - n.lo[2];
    return x * y + y * z + z * x;
}

/// One WideNode whose children are the binary node `n` unfolded: while a
/// slot is free, the inner node of largest surface among them is replaced by
/// its two children (so an inner `n` gives up to kBvhWidth of its descendants,
/// a leaf `n`, the root of a one-leaf tree, stays the only child). Returns its index.
uint32_t fold(const std::vector<BvhNode>& bin, uint32_t n, std::vector<WideNode>& out) {
    uint32_t kids[kBvhWidth] = {n};
    int count = 1;
    while (count < kBvhWidth) {
        int open = -1;
        for (int k = 0; k < count; ++k)
            if (bin[kids[k]].count == 0 && (open < 0 || area_of(bin[kids[k]]) > area_of(bin[kids[open]]))) open = k;
        if (open < 0) break;
        const uint32_t inner = kids[open];
        kids[open] = inner + 1;
        kids[count++] = bin[inner].index;
    }
    const auto at = uint32_t(out.size());
    out.emplace_back();
    WideNode folded{};
    constexpr float big = std::numeric_limits<float>::max();
    for (int k = 0; k < kBvhWidth; ++k)
        for (int a = 0; a < 3; ++a) {
            folded.lo[a][k] = big;  // unused slots: masked out by `used`
            folded.hi[a][k] = -big;
        }
    for (int k = 0; k < count; ++k) {
        const BvhNode& child = bin[kids[k]];
        for (int a = 0; a < 3; ++a) {
            folded.lo[a][k] = child.lo[a];
            folded.hi[a][k] = child.hi[a];
        }
        folded.count[k] = child.count;
        folded.ref[k] = child.count ? child.index : fold(bin, kids[k], out);
        folded.used = uint8_t(folded.used | 1u << k);
    }
    out[at] = folded;
    return at;
}

}  // namespace

Bvh Bvh::build(std::span<const Aabb> boxes, std::span<const uint32_t> ids) {
    Bvh bvh;
    if (boxes.empty()) return bvh;
    std::vector<BvhNode> binary;
    Builder b{boxes, {}, {}, binary};
    b.order.resize(boxes.size());
    b.centre.resize(boxes.size() * 3);
    for (size_t i = 0; i < boxes.size(); ++i) {
        b.order[i] = uint32_t(i);
        for (int k = 0; k < 3; ++k) {
            // A hostile file's NaN or infinite corner must not reach the binning
            // (int(NaN) is undefined) or nth_element (NaN breaks its ordering).
            const float c = boxes[i].lo[k] * 0.5f + boxes[i].hi[k] * 0.5f;
            b.centre[i * 3 + size_t(k)] = std::isfinite(c) ? c : 0.0f;
        }
    }
    binary.reserve(2 * boxes.size());
    binary.push_back({});
    b.build(0, 0, uint32_t(boxes.size()), 0);
    bvh.nodes.reserve(binary.size() / 2 + 1);
    fold(binary, 0, bvh.nodes);
    bvh.items.resize(boxes.size());
    for (size_t i = 0; i < boxes.size(); ++i) bvh.items[i] = ids[b.order[i]];
    return bvh;
}

}  // namespace bspkit::query::detail
