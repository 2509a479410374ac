// Work done once, thread-safe: what std::once_flag / std::call_once do,
// without glibc's pthread_once under them.
#pragma once

#include <atomic>
#include <mutex>
#include <utility>

namespace bspkit {

/// `call(fn)` runs fn the first time and returns at once afterwards; threads
/// calling it meanwhile wait for the first. When fn throws, the flag stays
/// unset and the next call runs fn again (as std::call_once does).
///
/// Why not std::call_once: its libstdc++ implementation runs fn inside glibc's
/// pthread_once, and an exception fn throws (a corrupt LZMA lump decoded on
/// first use) unwinds through that C frame, whose personality routine lives
/// in libgcc_s. The command line links libgcc statically (start-up, issue 9:
/// libgcc_s is one shared library less to map and relocate, and its CPU
/// probe at load traps to the hypervisor on virtual machines); with two
/// unwinders met in one exception, the process aborted. Here the exception
/// passes C++ frames only.
class OnceFlag {
public:
    template <class Fn>
    void call(Fn&& fn) {
        if (done_.load(std::memory_order_acquire)) return;
        std::lock_guard lock(mutex_);
        if (done_.load(std::memory_order_relaxed)) return;
        std::forward<Fn>(fn)();
        done_.store(true, std::memory_order_release);
    }

private:
    std::atomic<bool> done_{false};
    std::mutex mutex_;
};

}  // namespace bspkit
