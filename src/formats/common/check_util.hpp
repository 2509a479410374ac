// Private helpers for the per-format checks: reference and range tests that
// word their findings the same way everywhere, a cap on repeated findings
// (a hostile file with a million broken records gives a bounded report) and
// a work budget for loops that are not linear in the file size.
#pragma once

#include <bspkit/check.hpp>

#include "core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace bspkit::checks {

/// A float for a message, as printf's %g (not std::to_chars: WebAssembly's libc++ has no float one).
inline std::string float_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

class Checker {
public:
    /// At most `per_kind` findings per (severity, lump, field); the rest are counted.
    explicit Checker(CheckReport& report, size_t per_kind = 32) : report_(report), per_kind_(per_kind) {}
    Checker(const Checker&) = delete;
    ~Checker() { finish(); }

    void error(std::string_view lump, int64_t record, std::string_view field, std::string message) {
        add(Severity::error, lump, record, field, std::move(message));
    }
    void warning(std::string_view lump, int64_t record, std::string_view field, std::string message) {
        add(Severity::warning, lump, record, field, std::move(message));
    }
    void info(std::string_view lump, int64_t record, std::string_view field, std::string message) {
        add(Severity::info, lump, record, field, std::move(message));
    }

    /// `value` must index one of `count` records of `target` (or be -1 when
    /// `allow_none`). Returns whether it does. The test is inline (it runs
    /// for every field of every record); the finding is made out of line.
    bool index(std::string_view lump, int64_t record, std::string_view field, int64_t value, size_t count,
               std::string_view target, bool allow_none = false) {
        if ((allow_none && value == -1) || (value >= 0 && uint64_t(value) < count)) [[likely]]
            return true;
        index_error(lump, record, field, value, count, target);
        return false;
    }

    /// [first, first + num) must lie inside the `count` records of `target`.
    bool range(std::string_view lump, int64_t record, std::string_view first_field, int64_t first,
               std::string_view num_field, int64_t num, size_t count, std::string_view target) {
        if (first >= 0 && num >= 0 && uint64_t(first) + uint64_t(num) <= count) [[likely]]
            return true;
        if (num == 0 && first >= 0 && uint64_t(first) <= count) return true;
        range_error(lump, record, first_field, first, num_field, num, count, target);
        return false;
    }

    /// Engine limit: a warning when `count` exceeds `limit`.
    void limit(std::string_view lump, size_t count, size_t limit, std::string_view name, std::string_view engine) {
        if (count <= limit) return;
        warning(lump, -1, "",
                std::to_string(count) + " exceeds " + std::string(name) + " (" + std::to_string(limit) + ") of " +
                    std::string(engine) + ": needs an engine with raised limits");
    }

    /// Non-finite floats are errors. The test is inline (every vertex and
    /// plane of a map is asked); the finding is made out of line.
    template <size_t N>
    bool finite(std::string_view lump, int64_t record, std::string_view field, const float (&v)[N]) {
        bool all = true;
        for (size_t i = 0; i < N; ++i) all &= std::isfinite(v[i]);
        if (all) [[likely]]
            return true;
        finite_error(lump, record, field);
        return false;
    }
    bool finite(std::string_view lump, int64_t record, std::string_view field, float v) {
        const float a[1] = {v};
        return finite(lump, record, field, a);
    }

    /// A plane's normal: finite (else finite()'s error) and a unit vector.
    /// Every compiler writes unit normals (all corpus maps' planes are within
    /// 1e-6 of length 1); one much longer or shorter is a damaged record:
    /// distances to it are scaled, and near the largest float they overflow
    /// for every point (a trace through it cannot end). Within 1% passes.
    bool unit_normal(std::string_view lump, int64_t record, std::string_view field, const float (&n)[3]) {
        if (!finite(lump, record, field, n)) return false;
        const double length2 = double(n[0]) * n[0] + double(n[1]) * n[1] + double(n[2]) * n[2];
        if (length2 > 0.98 && length2 < 1.02) [[likely]]
            return true;
        normal_error(lump, record, field, n, std::sqrt(length2));
        return false;
    }

    /// Spends `units` of the work budget; false once it is used up (then the
    /// caller skips the remaining optional work and one warning says so).
    bool spend(uint64_t units, std::string_view lump) {
        if (budget_ >= units) {
            budget_ -= units;
            return true;
        }
        if (!budget_exhausted_) {
            budget_exhausted_ = true;
            warning(lump, -1, "", "check stopped early: the work budget for this file is used up (hostile counts?)");
        }
        budget_ = 0;
        return false;
    }
    void set_budget(uint64_t units) { budget_ = units; }

    /// Takes what `other` found, as if its steps had run on this checker after
    /// the ones already run here: its findings in order through the same cap,
    /// then the ones its own cap held back, counted (they were past the cap
    /// there, so they are here). For steps run beside the others on another
    /// thread, each with a Checker of its own: the report is the same as when
    /// they run one after the other. `other` is left empty.
    void absorb(Checker& other) {
        for (Finding& f : other.report_.findings)
            add(f.severity, f.lump, f.record, f.field, std::move(f.message));
        other.report_.findings.clear();
        for (const auto& [key, count] : other.suppressed_) {
            seen_[key] += count;
            suppressed_[key] += count;
        }
        other.suppressed_.clear();
        other.seen_.clear();
        other.last_.reset();
        last_.reset();  // its `suppressed` may be end() while the kind is now there
    }

    void finish() {
        for (const auto& [key, count] : suppressed_) {
            if (!count) continue;
            const auto& [severity, lump, field] = key;
            report_.findings.push_back({severity, lump, -1, field,
                                        std::to_string(count) + " more findings like the ones above were not listed"});
        }
        suppressed_.clear();
        last_.reset();
    }

private:
    [[gnu::cold, gnu::noinline]] void finite_error(std::string_view lump, int64_t record, std::string_view field) {
        if (!admit(Severity::error, lump, field)) return;
        push(Severity::error, lump, record, field, std::string(field) + " holds a non-finite value");
    }

    [[gnu::cold, gnu::noinline]] void normal_error(std::string_view lump, int64_t record, std::string_view field,
                                                   const float (&n)[3], double length) {
        if (!admit(Severity::error, lump, field)) return;
        push(Severity::error, lump, record, field,
             std::string(field) + " (" + float_text(n[0]) + " " + float_text(n[1]) + " " + float_text(n[2]) +
                 ") has length " + float_text(length) + ", not 1: a plane's normal is a unit vector");
    }

    [[gnu::cold, gnu::noinline]] void index_error(std::string_view lump, int64_t record, std::string_view field,
                                                  int64_t value, size_t count, std::string_view target) {
        if (!admit(Severity::error, lump, field)) return;
        push(Severity::error, lump, record, field,
              std::string(field) + " " + std::to_string(value) + " is out of range: " + std::string(target) + " has " +
                  std::to_string(count) + " records");
    }

    [[gnu::cold, gnu::noinline]] void range_error(std::string_view lump, int64_t record, std::string_view first_field,
                                                  int64_t first, std::string_view num_field, int64_t num, size_t count,
                                                  std::string_view target) {
        // Blame the count when the start is fine and the count runs over.
        const bool blame_num = num < 0 || (first >= 0 && uint64_t(first) <= count);
        const std::string_view blamed = blame_num ? num_field : first_field;
        if (!admit(Severity::error, lump, blamed)) return;
        std::string msg;
        if (num < 0)
            msg = std::string(num_field) + " " + std::to_string(num) + " is negative";
        else if (first < 0)
            msg = std::string(first_field) + " " + std::to_string(first) + " is negative";
        else
            msg = std::string(first_field) + " " + std::to_string(first) + " + " + std::string(num_field) + " " +
                  std::to_string(num) + " = " + std::to_string(first + num) + " runs past the " +
                  std::to_string(count) + " records of " + std::string(target);
        push(Severity::error, lump, record, blamed, std::move(msg));
    }

    void add(Severity s, std::string_view lump, int64_t record, std::string_view field, std::string message) {
        if (admit(s, lump, field)) push(s, lump, record, field, std::move(message));
    }

    /// Counts a finding of this kind; false (and counted as not listed) once
    /// the kind is over its cap, so a caller can skip composing the message:
    /// a hostile file's hundreds of thousands of broken references then cost
    /// a lookup each, without allocating. Findings of one kind come in runs:
    /// the last kind's entries are kept at hand (last_).
    bool admit(Severity s, std::string_view lump, std::string_view field) {
        const KeyView key{s, lump, field};
        if (!last_ || KeyLess::view(last_->seen->first) != key) {
            auto it = seen_.find(key);
            if (it == seen_.end()) it = seen_.emplace(Key{s, std::string(lump), std::string(field)}, 0).first;
            last_ = Last{it, suppressed_.end()};
        }
        if (last_->seen->second++ < per_kind_) return true;
        if (last_->suppressed == suppressed_.end()) {
            last_->suppressed = suppressed_.find(key);
            if (last_->suppressed == suppressed_.end())
                last_->suppressed = suppressed_.emplace(last_->seen->first, 0).first;
        }
        ++last_->suppressed->second;
        return false;
    }
    void push(Severity s, std::string_view lump, int64_t record, std::string_view field, std::string message) {
        report_.findings.push_back({s, std::string(lump), record, std::string(field), std::move(message)});
    }

    using Key = std::tuple<Severity, std::string, std::string>;
    using KeyView = std::tuple<Severity, std::string_view, std::string_view>;
    /// Orders Keys and looks them up by KeyView (no strings made for a lookup).
    struct KeyLess {
        using is_transparent = void;
        static KeyView view(const Key& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k)}; }
        static const KeyView& view(const KeyView& k) { return k; }
        template <class A, class B>
        bool operator()(const A& a, const B& b) const {
            return view(a) < view(b);
        }
    };
    CheckReport& report_;
    size_t per_kind_;
    std::map<Key, size_t, KeyLess> seen_;
    std::map<Key, size_t, KeyLess> suppressed_;
    struct Last {
        std::map<Key, size_t, KeyLess>::iterator seen, suppressed;
    };
    std::optional<Last> last_;  ///< admit()'s last kind; reset when the maps are cleared
    uint64_t budget_ = uint64_t(1) << 26;
    bool budget_exhausted_ = false;
};

/// Maps from this size on run their check in two groups of steps on two threads
/// (run_beside): below it, starting the second thread costs more than it saves
/// (bevytb_example_q1_lit, 0.3 MB: 0.85 -> 1.2 ms; hl_undertow, 1.0 MB: no gain;
/// q2_base1, 2.0 MB: 2.5 -> 2.2 ms; cs16_de_torabora, 4.2 MB: 4.1 -> 2.9 ms).
inline constexpr size_t kTwoThreadsFrom = size_t(3) << 19;  // 1.5 MiB

/// Runs first() (steps that report to `c`) and second(other) (steps that share
/// no state with them, reporting to `other`, a Checker of their own) side by
/// side when the file has kTwoThreadsFrom bytes or more, else one after the
/// other; then c.absorb(other): the report is the one-thread report of first's
/// steps followed by second's. An exception from either is rethrown, first's
/// before second's, as one thread would meet them.
template <class First, class Second>
void run_beside(Checker& c, size_t file_size, First&& first, Second&& second) {
    CheckReport side_report;
    Checker other(side_report);
    std::exception_ptr failed[2];
    detail::parallel_for(2, file_size >= kTwoThreadsFrom ? 0 : 1, [&](size_t group) {
        try {
            if (group == 0) first();
            else second(other);
        } catch (...) {
            failed[group] = std::current_exception();
        }
    });
    for (const auto& e : failed)
        if (e) std::rethrow_exception(e);
    c.absorb(other);
}

/// Each node has one parent. Walks the node trees from `roots` (the models'
/// head nodes in model order; a root that is not a node index is skipped) and
/// reports a node reached a second time: under "nodes" / `child_field` inside
/// one tree, under "models" / "headnode" when a later model starts inside an
/// earlier model's tree. `child_node(n, k)` is the node index of child k of
/// node n, or -1 when that child is a leaf. Each node is visited once.
template <class Roots, class ChildNode>
void check_node_trees(Checker& c, size_t node_count, const Roots& roots, std::string_view child_field,
                      ChildNode child_node) {
    std::vector<uint8_t> seen(node_count, 0);
    std::vector<size_t> stack;
    size_t model = 0;
    for (const int64_t head : roots) {
        const size_t m = model++;
        if (head < 0 || uint64_t(head) >= node_count) continue;
        if (seen[size_t(head)]) {
            c.error("models", int64_t(m), "headnode",
                    "headnode " + std::to_string(head) + " belongs to the tree of an earlier model");
            continue;
        }
        seen[size_t(head)] = 1;
        stack.push_back(size_t(head));
        while (!stack.empty()) {
            const size_t n = stack.back();
            stack.pop_back();
            for (int k = 0; k < 2; ++k) {
                const int64_t ch = child_node(n, k);
                if (ch < 0 || uint64_t(ch) >= node_count) continue;
                if (seen[size_t(ch)]) {
                    c.error("nodes", int64_t(n), child_field,
                            "node " + std::to_string(ch) + " is reached a second time (a cycle or a shared subtree)");
                    continue;
                }
                seen[size_t(ch)] = 1;
                stack.push_back(size_t(ch));
            }
        }
    }
}

/// Reports each cycle of node trees that may share subtrees (the Quake 1
/// family's clip hulls: hulls and models whose subtrees meet are walked as
/// the engine walks them, and end): a child that leads back to a node above
/// it, under `lump` / `child_field` of the node holding that child. The
/// engines' point and trace walks never end there. Walks from `roots` (a
/// root that is not a node index is skipped); `child_node(n, k)` as for
/// check_node_trees(). Each node is visited once.
template <class Roots, class ChildNode>
void check_node_cycles(Checker& c, std::string_view lump, size_t node_count, const Roots& roots,
                       std::string_view child_field, ChildNode child_node) {
    // Compilers write each tree parent first, so every child names a later node:
    // then no walk can come back to a node, and one pass over the nodes (in
    // order, no path kept) shows it. Only a tree with a child at or before its
    // parent is walked.
    bool forward = true;
    for (size_t n = 0; n < node_count && forward; ++n)
        for (int k = 0; k < 2; ++k) {
            const int64_t ch = child_node(n, k);
            forward &= ch < 0 || uint64_t(ch) >= node_count || uint64_t(ch) > n;
        }
    if (forward) return;
    // On the path a node's state says which child it looks at next; the path
    // holds node numbers only (4 bytes a level: a hostile chain of every node
    // costs half of an 8-byte clipnode lump).
    enum : uint8_t { unvisited, next_front, next_back, leaving, done };
    std::vector<uint8_t> state(node_count, unvisited);
    std::vector<uint32_t> path;
    for (const int64_t head : roots) {
        if (head < 0 || uint64_t(head) >= node_count || state[size_t(head)] != unvisited) continue;
        state[size_t(head)] = next_front;
        path.push_back(uint32_t(head));
        while (!path.empty()) {
            const size_t n = path.back();
            if (state[n] == leaving) {
                state[n] = done;
                path.pop_back();
                continue;
            }
            const int k = state[n] == next_front ? 0 : 1;
            state[n] = k == 0 ? next_back : leaving;
            const int64_t ch = child_node(n, k);
            if (ch < 0 || uint64_t(ch) >= node_count || state[size_t(ch)] == done) continue;
            if (state[size_t(ch)] != unvisited) {  // on the path: above n, or n itself
                c.error(lump, int64_t(n), child_field,
                        "child " + std::to_string(ch) +
                            " leads back to a node above it (a cycle): the engine's walks of this tree never end");
                continue;
            }
            state[size_t(ch)] = next_front;
            path.push_back(uint32_t(ch));
        }
    }
}

/// Decompressed visibility bytes a check walks at most (a real map needs a
/// few MB; a hostile leaf count could ask for terabytes).
inline constexpr uint64_t kVisCheckBytes = uint64_t(1) << 30;

/// True while rows up to `cluster` stay within kVisCheckBytes; warns once when not.
inline bool vis_budget(Checker& c, std::string_view lump, size_t cluster, size_t row_bytes) {
    if (uint64_t(cluster) * row_bytes <= kVisCheckBytes) return true;
    c.warning(lump, -1, "",
              "visibility rows from cluster " + std::to_string(cluster) + " on were not checked (over " +
                  std::to_string(kVisCheckBytes >> 20) + " MB of decompressed rows)");
    return false;
}

/// Lightmap size by the 16-texel luxel rule of Quake / GoldSrc / Quake 2:
/// extents of the face's texture coordinates, floor(min/16) .. ceil(max/16).
struct LuxelExtents {
    double mins[2] = {1e30, 1e30}, maxs[2] = {-1e30, -1e30};
    void add(const float point[3], const float vecs[2][4]) {
        for (int a = 0; a < 2; ++a) {
            const double v = double(point[0]) * vecs[a][0] + double(point[1]) * vecs[a][1] +
                             double(point[2]) * vecs[a][2] + double(vecs[a][3]);
            mins[a] = std::min(mins[a], v);
            maxs[a] = std::max(maxs[a], v);
        }
    }
    /// Samples along each axis for a luxel of `scale` texels; 0 when unusable.
    bool size(int out[2], double scale = 16, int64_t sanity = 1 << 16) const {
        int extents[2];
        return size_and_extents(out, extents, scale, sanity);
    }
    /// size(), and the extent in texels of both axes (what engines compare
    /// with their limit), from one rounding of each bound.
    bool size_and_extents(int out[2], int extents[2], double scale = 16, int64_t sanity = 1 << 16) const {
        for (int a = 0; a < 2; ++a) {
            if (!(maxs[a] >= mins[a]) || !std::isfinite(mins[a]) || !std::isfinite(maxs[a])) return false;
            const double span = std::ceil(maxs[a] / scale) - std::floor(mins[a] / scale);
            const double n = span + 1;
            if (!(n >= 1) || n > double(sanity)) return false;
            out[a] = int(n);
            extents[a] = int(span * scale);
        }
        return true;
    }
};

/// Number of light styles in use (up to the first 255).
inline int style_count(const uint8_t styles[4]) {
    int n = 0;
    while (n < 4 && styles[n] != 255) ++n;
    return n;
}

}  // namespace bspkit::checks
