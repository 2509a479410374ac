// Folding repeated messages into one line: shared by `bspkit check`'s text
// (check_text) and the command line's diagnostics.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace bspkit {

/// Groups of item indices 0..count-1, in order of first appearance: items
/// with the same non-empty key(i) form one group; an empty key leaves the
/// item alone.
std::vector<std::vector<size_t>> fold_repeats(size_t count, const std::function<std::string(size_t)>& key);

}  // namespace bspkit
