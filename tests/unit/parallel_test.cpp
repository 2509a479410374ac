// core/parallel.hpp: the worker threads every parallel step runs on.
#include "core/parallel.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <vector>

#if BSPKIT_WORKER_PTHREAD
#include <sched.h>
#endif

namespace bspkit::detail {
namespace {

// A worker runs its work once, joins, and can be moved before it is joined.
TEST(Parallel, WorkerThreadRunsItsWorkOnceAndJoins) {
    std::atomic<int> ran{0};
    {
        WorkerThread a([&] { ++ran; });
        WorkerThread b(std::move(a));
        a.join();  // moved from: nothing to join
        b.join();
        EXPECT_EQ(ran.load(), 1);
        b.join();  // a second join does nothing
    }
    std::vector<WorkerThread> many;
    for (int i = 0; i < 8; ++i) many.emplace_back([&] { ++ran; });
    many.clear();  // each joins as it goes
    EXPECT_EQ(ran.load(), 9);
}

#if BSPKIT_WORKER_PTHREAD
// A worker is created off its creator's CPU but runs its work with the
// CPUs its creator may use: the scheduler is free to move it later.
TEST(Parallel, WorkerThreadWorksWithItsCreatorsCpus) {
    cpu_set_t creator;
    ASSERT_EQ(sched_getaffinity(0, sizeof creator, &creator), 0);
    for (int i = 0; i < 20; ++i) {
        cpu_set_t seen;
        CPU_ZERO(&seen);
        WorkerThread w([&] { sched_getaffinity(0, sizeof seen, &seen); });
        w.join();
        EXPECT_TRUE(CPU_EQUAL(&seen, &creator)) << CPU_COUNT(&seen) << " of " << CPU_COUNT(&creator) << " CPUs";
    }
}
#endif

// Background<T>: the work's value or its exception from get(); a result
// never asked for is still waited for; assigning over one waits for it.
TEST(Parallel, BackgroundGivesTheValueOrTheException) {
    Background<int> answer([] { return 42; });
    EXPECT_EQ(answer.get(), 42);
    Background<int> failing([]() -> int { throw std::runtime_error("bad lump"); });
    EXPECT_THROW(failing.get(), std::runtime_error);
    std::atomic<int> ran{0};
    {
        Background<void> unasked([&] { ++ran; });
    }
    EXPECT_EQ(ran.load(), 1);
    std::atomic<bool> go{false};
    Background<void> first([&] { ++ran; });
    first = Background<void>([&] {
        go.wait(false);
        ran += 10;
    });
    EXPECT_EQ(ran.load(), 2);  // the first has finished; the second waits for `go`
    go = true;
    go.notify_all();
    first.get();
    EXPECT_EQ(ran.load(), 12);
}

// parallel_for() gives every index to exactly one call, on any thread count.
TEST(Parallel, ParallelForRunsEveryIndexOnce) {
    for (unsigned threads : {0u, 1u, 2u, 3u, 8u}) {
        std::vector<std::atomic<int>> hits(1000);
        parallel_for(hits.size(), threads, [&](size_t i) { ++hits[i]; });
        for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << ", threads " << threads;
    }
}

}  // namespace
}  // namespace bspkit::detail
