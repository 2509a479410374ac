// core/parallel.hpp: the worker threads every parallel step runs on.
#include "core/parallel.hpp"

#include <bspkit/parallel.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <string>
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

// The front ends' bspkit::for_each_block(): every block once, on any thread
// count; a throwing block does not stop the others, and the lowest block's
// exception is the one thrown.
TEST(Parallel, ForEachBlockRunsEveryBlockAndThrowsTheLowestFailure) {
    for (unsigned threads : {0u, 1u, 2u, 5u}) {
        std::vector<std::atomic<int>> hits(300);
        bspkit::for_each_block(hits.size(), threads, [&](size_t b) { ++hits[b]; });
        for (size_t b = 0; b < hits.size(); ++b) ASSERT_EQ(hits[b].load(), 1) << "block " << b << ", threads " << threads;
        for (auto& h : hits) h = 0;
        try {
            bspkit::for_each_block(hits.size(), threads, [&](size_t b) {
                ++hits[b];
                if (b % 100 == 37) throw std::runtime_error("block " + std::to_string(b));
            });
            ADD_FAILURE() << "nothing thrown, threads " << threads;
        } catch (const std::runtime_error& e) {
            EXPECT_STREQ(e.what(), "block 37") << "threads " << threads;
        }
        EXPECT_EQ(std::accumulate(hits.begin(), hits.end(), 0, [](int n, const auto& h) { return n + h.load(); }), 300)
            << "threads " << threads;
    }
    bspkit::for_each_block(0, 2, [](size_t) { FAIL() << "no block to run"; });
}

}  // namespace
}  // namespace bspkit::detail
