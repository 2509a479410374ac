// WorkerThread: a thread started on another CPU than its creator's (see
// parallel.hpp for why).
#include "core/parallel.hpp"

#include <bspkit/parallel.hpp>

#include <memory>
#include <utility>

#if BSPKIT_WORKER_PTHREAD
#include <sched.h>
#endif

namespace bspkit::detail {

#if BSPKIT_WORKER_PTHREAD

namespace {

struct Start {
    std::function<void()> work;
    cpu_set_t allowed;  ///< the process's CPUs, restored as the thread starts
    bool restore = false;
};

void* run_worker(void* arg) {
    const std::unique_ptr<Start> start(static_cast<Start*>(arg));
    if (start->restore) pthread_setaffinity_np(pthread_self(), sizeof start->allowed, &start->allowed);
    start->work();
    return nullptr;
}

/// An attribute placing the thread off `cpu` when other CPUs are allowed.
struct Placement {
    pthread_attr_t attr;
    bool placed = false;
    explicit Placement(Start& start) {
        pthread_attr_init(&attr);
        const int cpu = sched_getcpu();
        if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof start.allowed, &start.allowed) != 0) return;
        cpu_set_t others = start.allowed;
        CPU_CLR(cpu, &others);
        if (CPU_COUNT(&others) == 0) return;
        placed = pthread_attr_setaffinity_np(&attr, sizeof others, &others) == 0;
        start.restore = placed;
    }
    ~Placement() { pthread_attr_destroy(&attr); }
};

}  // namespace

WorkerThread::WorkerThread(std::function<void()> work) {
    auto start = std::make_unique<Start>();
    start->work = std::move(work);
    Placement placement(*start);
    int err = pthread_create(&id_, &placement.attr, run_worker, start.get());
    if (err != 0 && placement.placed) {  // an affinity the system refuses: start it plainly
        start->restore = false;
        err = pthread_create(&id_, nullptr, run_worker, start.get());
    }
    if (err != 0) throw std::system_error(err, std::generic_category(), "cannot start a thread");
    start.release();  // run_worker owns it
    joinable_ = true;
}

WorkerThread::WorkerThread(WorkerThread&& other) noexcept : id_(other.id_), joinable_(other.joinable_) {
    other.joinable_ = false;
}

WorkerThread& WorkerThread::operator=(WorkerThread&& other) noexcept {
    if (this != &other) {
        join();
        id_ = other.id_;
        joinable_ = std::exchange(other.joinable_, false);
    }
    return *this;
}

void WorkerThread::join() {
    if (!joinable_) return;
    pthread_join(id_, nullptr);
    joinable_ = false;
}

#else

WorkerThread::WorkerThread(std::function<void()> work) : thread_(std::move(work)) {}
WorkerThread::WorkerThread(WorkerThread&& other) noexcept : thread_(std::move(other.thread_)) {}
WorkerThread& WorkerThread::operator=(WorkerThread&& other) noexcept {
    if (this != &other) {
        join();
        thread_ = std::move(other.thread_);
    }
    return *this;
}
void WorkerThread::join() {
    if (thread_.joinable()) thread_.join();
}

#endif

}  // namespace bspkit::detail

namespace bspkit {

void for_each_block(size_t blocks, unsigned threads, const std::function<void(size_t)>& job) {
    detail::parallel_chunks(blocks, 1, threads, [&](size_t b, size_t) { job(b); });
}

}  // namespace bspkit
