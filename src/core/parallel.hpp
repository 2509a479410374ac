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
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#define BSPKIT_WORKER_PTHREAD 1
#include <pthread.h>
#else
#define BSPKIT_WORKER_PTHREAD 0
#endif

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

/// A thread for work beside the calling one, started where it can run at once.
///
/// Linux puts a new thread on its creator's CPU and leaves it waiting there
/// while the creator runs, until the load balancer moves it: measured here
/// (2 cores), a quarter of the first threads of a process waited 1.5-3 ms to
/// start, while the creator did the other half of the work alone. A
/// WorkerThread is therefore created allowed only on the other CPUs the
/// process may use (the kernel places it there before it runs), and widens
/// its affinity back to all of them as it starts, so the scheduler may move it
/// later as it likes. With one CPU allowed (or off Linux) it is a plain
/// thread. `work` must not throw (as with std::thread, std::terminate).
class WorkerThread {
public:
    /// Throws std::system_error when the system will not start a thread.
    explicit WorkerThread(std::function<void()> work);
    WorkerThread(WorkerThread&& other) noexcept;
    WorkerThread& operator=(WorkerThread&& other) noexcept;  ///< joins this one first
    WorkerThread(const WorkerThread&) = delete;
    ~WorkerThread() { join(); }
    void join();

private:
#if BSPKIT_WORKER_PTHREAD
    pthread_t id_{};
    bool joinable_ = false;
#else
    std::thread thread_;
#endif
};

/// A value computed beside the calling thread, as by std::async, on a
/// WorkerThread (started where it can run at once). get() waits for it and
/// throws what the work threw; destroying (or assigning over) it waits for the
/// work too. Where no thread starts (WebAssembly, a system out of threads)
/// the work runs in get(), on the calling thread: the same result.
template <class T>
class Background {
public:
    Background() = default;
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, Background>)
    explicit Background(F&& work) : state_(std::make_unique<State>(std::forward<F>(work))) {
#ifndef __EMSCRIPTEN__
        try {
            thread_.emplace([state = state_.get()] { state->task(); });
        } catch (const std::system_error&) {
        }
#endif
    }
    Background(Background&&) noexcept = default;
    Background& operator=(Background&& other) noexcept {
        thread_.reset();  // joins
        state_ = std::move(other.state_);
        thread_ = std::move(other.thread_);
        return *this;
    }
    bool valid() const noexcept { return state_ && state_->result.valid(); }
    T get() {
        if (thread_) thread_->join();
        else if (state_->task.valid()) state_->task();
        return state_->result.get();
    }

private:
    struct State {
        template <class F>
        explicit State(F&& work) : task(std::forward<F>(work)), result(task.get_future()) {}
        std::packaged_task<T()> task;
        std::future<T> result;
    };
    std::unique_ptr<State> state_;
    std::optional<WorkerThread> thread_;  ///< after state_: destroyed (joined) first
};

/// Runs work() on the calling thread and on thread_count(threads) - 1 more,
/// and returns when every call has returned. A thread the system will not
/// start (a limit on threads or memory) is not an error: the calls that did
/// start share the work, so `work` must take its share from a common counter.
/// `work` must not throw.
template <class Work>
void run_on_threads(unsigned threads, const Work& work) {
    threads = thread_count(threads);
    std::vector<WorkerThread> pool;
    try {
        pool.reserve(threads - 1);
        for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&work] { work(); });
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
