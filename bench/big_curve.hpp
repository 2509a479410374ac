// The size-vs-time curve of `bspkit-bigmap --curve` (big_curve.cpp).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace bigmap {

struct CurveFile {
    std::string format;  ///< "bsp2" or "source": one table per format
    std::filesystem::path path;
};

/// Times whole `bspkit` processes (info, check, repack, export .glb with and
/// without lightmaps) on each
/// file beside its floor (cat FILE, cp FILE OUT), interleaved, medians of
/// `runs`; prints one table per format and the per-MB cost from the smallest
/// to the largest file. `only` limits the verbs (empty: all). Returns the exit code.
int run_curve(const std::vector<CurveFile>& files, int runs, const std::set<std::string>& only);

}  // namespace bigmap
