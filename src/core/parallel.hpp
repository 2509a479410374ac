// Runs job(i) for i in [0, n) on up to `threads` threads that take indices from
// an atomic counter (both cores stay busy whatever an index costs). Shared by
// the renderer's bands and the exporter's bake. Without threads (the
// WebAssembly viewer is built without them) the jobs run in order on the
// calling thread. `job` must not throw.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace bspkit::detail {

/// threads == 0: one per hardware thread.
template <class F>
void parallel_for(size_t n, unsigned threads, const F& job) {
#ifdef __EMSCRIPTEN__
    threads = 1;
#else
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
#endif
    threads = unsigned(std::min<size_t>(threads, n));
    if (threads <= 1) {
        for (size_t i = 0; i < n; ++i) job(i);
        return;
    }
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t i; (i = next.fetch_add(1)) < n;) job(i);
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace bspkit::detail
