// Work shared among threads, for the front ends (the command line's
// `trace --rays`): the library's own rule (src/core/parallel.hpp) behind a
// plain function, so that a front end's threads start as the library's do
// (on another CPU at once) without its private header.
#pragma once

#include <cstddef>
#include <functional>

namespace bspkit {

/// job(b) for every b in [0, blocks), on up to `threads` threads (this one
/// included; 0: one per hardware thread), each taking the next block.
/// `job` may throw: once every block has run, the exception of the lowest
/// block that threw is thrown again. A thread the system will not start is
/// not an error: the others do its share.
void for_each_block(size_t blocks, unsigned threads, const std::function<void(size_t)>& job);

}  // namespace bspkit
