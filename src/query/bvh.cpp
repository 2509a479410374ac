// Binned surface-area-heuristic build of query::detail::Bvh.
#include "query/bvh.hpp"

#include "core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

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

/// A box with its centre and its place in the input, moved as the build
/// partitions: every pass over a node's items reads them in memory order
/// (through an index array, the passes of a 2-million-triangle build were
/// cache misses).
struct Item {
    Aabb box;
    float centre[3];
    uint32_t index;  ///< into the boxes / ids given to Bvh::build
};

/// A subtree left for later: its node, its items and its depth.
struct Subtree {
    uint32_t node, first, count;
    int depth;
};

/// Items from which a subtree is built on a thread of its own.
constexpr uint32_t kParallelItems = 16384;

struct Builder {
    std::vector<Item> items;
    /// The binary tree: a subtree over n items owns the 2n - 1 slots from its
    /// node on (n leaves at most), its left child's subtree first, so every
    /// node's place follows from the split alone, whichever thread builds it.
    /// Left uninitialised (new[] of a trivial type): the slots no node takes
    /// are never read, and their pages never touched.
    std::unique_ptr<BvhNode[]> out;

    static Aabb empty_box() {
        constexpr float big = std::numeric_limits<float>::max();
        return {{big, big, big}, {-big, -big, -big}};
    }
    static float area(const Aabb& a) {
        const float x = a.hi[0] - a.lo[0], y = a.hi[1] - a.lo[1], z = a.hi[2] - a.lo[2];
        return x < 0 ? 0 : x * y + y * z + z * x;
    }

    /// The bounds of items' boxes, or (centre_bounds_of) of their centres: in
    /// locals, which the compiler keeps in registers (grow() on an Aabb stored
    /// its six floats back to memory after every item).
    static Aabb bounds_of(const Item* it, uint32_t count) {
        constexpr float big = std::numeric_limits<float>::max();
        float lx = big, ly = big, lz = big, hx = -big, hy = -big, hz = -big;
        for (uint32_t i = 0; i < count; ++i) {
            const Aabb& b = it[i].box;
            lx = std::min(lx, b.lo[0]), ly = std::min(ly, b.lo[1]), lz = std::min(lz, b.lo[2]);
            hx = std::max(hx, b.hi[0]), hy = std::max(hy, b.hi[1]), hz = std::max(hz, b.hi[2]);
        }
        return {{lx, ly, lz}, {hx, hy, hz}};
    }
    static Aabb centre_bounds_of(const Item* it, uint32_t count) {
        constexpr float big = std::numeric_limits<float>::max();
        float lx = big, ly = big, lz = big, hx = -big, hy = -big, hz = -big;
        for (uint32_t i = 0; i < count; ++i) {
            const float* c = it[i].centre;
            lx = std::min(lx, c[0]), ly = std::min(ly, c[1]), lz = std::min(lz, c[2]);
            hx = std::max(hx, c[0]), hy = std::max(hy, c[1]), hz = std::max(hz, c[2]);
        }
        return {{lx, ly, lz}, {hx, hy, hz}};
    }

    void make_leaf(uint32_t node, uint32_t first, uint32_t count) {
        out[node].index = first;
        out[node].count = uint16_t(count);
    }

    /// Builds the subtree of `count` items from `first` at `node`. With
    /// `later`, subtrees of up to `grain` items are listed there instead, for
    /// build_all().
    void build(uint32_t node, uint32_t first, uint32_t count, int depth, std::vector<Subtree>* later = nullptr,
               uint32_t grain = 0) {
        if (later && count <= grain) {
            later->push_back({node, first, count, depth});
            return;
        }
        Item* const it = items.data() + first;
        const Aabb bounds = bounds_of(it, count), cbounds = centre_bounds_of(it, count);
        BvhNode& n = out[node];
        std::copy(bounds.lo, bounds.lo + 3, n.lo);
        std::copy(bounds.hi, bounds.hi + 3, n.hi);
        if (count <= kLeafItems) return make_leaf(node, first, count);
        int axis = 0;
        for (int k = 1; k < 3; ++k)
            if (cbounds.hi[k] - cbounds.lo[k] > cbounds.hi[axis] - cbounds.lo[axis]) axis = k;
        const float extent = cbounds.hi[axis] - cbounds.lo[axis];
        uint32_t mid = count / 2;  // median unless the surface areas say better
        bool split_found = false;
        if (extent > 0 && depth < kSahDepth) {
            Aabb bin_box[kBins];
            uint32_t bin_count[kBins] = {};
            for (auto& b : bin_box) b = empty_box();
            const float scale = kBins / extent;
            const float lo = cbounds.lo[axis];
            auto bin_of = [&](const Item& item) {  // centres are finite (see Bvh::build), the product may not be
                const float f = (item.centre[axis] - lo) * scale;
                return f > 0 ? int(std::min(f, float(kBins - 1))) : 0;
            };
            for (uint32_t i = 0; i < count; ++i) {
                const int k = bin_of(it[i]);
                ++bin_count[k];
                grow(bin_box[k], it[i].box);
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
                Item* const split = std::partition(it, it + count, [&](const Item& item) { return bin_of(item) < best_k; });
                mid = uint32_t(split - it);
                split_found = mid > 0 && mid < count;
            }
        }
        if (!split_found) {
            mid = count / 2;
            std::nth_element(it, it + mid, it + count,
                             [&](const Item& x, const Item& y) { return x.centre[axis] < y.centre[axis]; });
        }
        const uint32_t right = node + 2 * mid;  // after the left subtree's 2 mid - 1 slots
        out[node].count = 0;
        out[node].index = right;
        build(node + 1, first, mid, depth + 1, later, grain);
        build(right, first + mid, count - mid, depth + 1, later, grain);
    }

    /// The whole tree: its top on this thread down to subtrees small enough to
    /// share out, then those on every core. Each writes only its own slots and
    /// items, and the splits do not depend on the order they run in, so the
    /// tree is the same whatever the thread count.
    void build_all() {
        const auto n = uint32_t(items.size());
        const unsigned threads = bspkit::detail::thread_count(0);
        if (threads <= 1 || n < 2 * kParallelItems) return build(0, 0, n, 0);
        std::vector<Subtree> later;
        build(0, 0, n, 0, &later, std::max(kParallelItems, n / (8 * threads)));
        // Largest first, so the last one to finish is a small one.
        std::sort(later.begin(), later.end(), [](const Subtree& a, const Subtree& b) { return a.count > b.count; });
        bspkit::detail::parallel_for(later.size(), threads, [&](size_t i) {
            const Subtree& t = later[i];
            build(t.node, t.first, t.count, t.depth);
        });
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
uint32_t fold(const BvhNode* bin, uint32_t n, std::vector<WideNode>& out) {
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
    Builder b;
    b.items.resize(boxes.size());
    for (size_t i = 0; i < boxes.size(); ++i) {
        Item& item = b.items[i];
        item.box = boxes[i];
        item.index = uint32_t(i);
        for (int k = 0; k < 3; ++k) {
            // A hostile file's NaN or infinite corner must not reach the binning
            // (int(NaN) is undefined) or nth_element (NaN breaks its ordering).
            const float c = boxes[i].lo[k] * 0.5f + boxes[i].hi[k] * 0.5f;
            item.centre[k] = std::isfinite(c) ? c : 0.0f;
        }
    }
    b.out.reset(new BvhNode[2 * boxes.size() - 1]);
    b.build_all();
    bvh.nodes.reserve(boxes.size() / 2 + 1);
    fold(b.out.get(), 0, bvh.nodes);
    bvh.items.resize(boxes.size());
    for (size_t i = 0; i < boxes.size(); ++i) bvh.items[i] = ids[b.items[i].index];
    return bvh;
}

}  // namespace bspkit::query::detail
