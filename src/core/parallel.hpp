// Work shared among threads. run_on_threads() starts the threads and joins
// them; parallel_for() runs job(i) for i in [0, n) on threads that take
// indices from an atomic counter (both cores stay busy whatever an index
// costs): the renderer's bands, the exporter's bake and PNG bands, the glTF
// writer's groups. Without threads (the WebAssembly viewer is built without
// them) the work runs on the calling thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace bspkit::detail {

/// Threads any caller may ask for: more run no faster on the machines we
/// target and only cost their stacks (a count a user passes in, from the
/// command line or Python, is cut to this).
inline constexpr unsigned kMaxThreads = 256;

/// `threads` as run_on_threads() uses it: 0 is one per hardware thread;
/// at most kMaxThreads (1 where there are no threads).
inline unsigned thread_count(unsigned threads) {
#ifdef __EMSCRIPTEN__
    (void)threads;
    return 1;
#else
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    return std::min(threads, kMaxThreads);
#endif
}

/// Runs work() on the calling thread and on thread_count(threads) - 1 more,
/// and returns when every call has returned. A thread the system will not
/// start (a limit on threads or memory) is not an error: the calls that did
/// start share the work, so `work` must take its share from a common counter.
/// `work` must not throw.
template <class Work>
void run_on_threads(unsigned threads, const Work& work) {
    threads = thread_count(threads);
    std::vector<std::thread> pool;
    try {
        pool.reserve(threads - 1);
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    } catch (const std::system_error&) {
    } catch (const std::bad_alloc&) {
    }
    work();
    for (auto& t : pool) t.join();
}

/// threads == 0: one per hardware thread. `job` must not throw.
template <class F>
void parallel_for(size_t n, unsigned threads, const F& job) {
    threads = unsigned(std::min<size_t>(thread_count(threads), n));
    if (threads <= 1) {
        for (size_t i = 0; i < n; ++i) job(i);
        return;
    }
    std::atomic<size_t> next{0};
    run_on_threads(threads, [&] {
        for (size_t i; (i = next.fetch_add(1)) < n;) job(i);
    });
}

/// body(begin, end) for consecutive ranges of `chunk` indices covering [0, n),
/// on parallel_for(). `body` may throw: a range stops at its first exception,
/// and once every range has run, the exception of the lowest range is thrown
/// again. A body that works through its range in order therefore throws what
/// the same loop on one thread would have thrown first.
template <class Body>
void parallel_chunks(size_t n, size_t chunk, unsigned threads, const Body& body) {
    const size_t chunks = (n + chunk - 1) / chunk;
    std::vector<std::exception_ptr> failed(chunks);
    parallel_for(chunks, threads, [&](size_t c) {
        try {
            body(c * chunk, std::min(n, (c + 1) * chunk));
        } catch (...) {
            failed[c] = std::current_exception();
        }
    });
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
}

}  // namespace bspkit::detail
