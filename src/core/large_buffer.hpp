// Large byte buffers (a baked texture, lightmap atlas pages: tens of MB)
// whose memory the kernel may back with 2 MiB pages where it offers them on
// request (Linux transparent huge pages in "madvise" mode): the buffer is
// reserved, advised, and only then filled, so its first touch takes one
// fault per 2 MiB instead of one per 4 KiB. On pd_change_dest's export that
// was a quarter of its 40,000 page faults. Elsewhere (other systems,
// WebAssembly, huge pages off) it is a plain assign.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace bspkit::detail {

/// v becomes n bytes of `fill` (its old contents dropped), advised for huge
/// pages first when n is at least 4 MiB.
inline void assign_large(std::vector<uint8_t>& v, size_t n, uint8_t fill) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr size_t kHuge = size_t(2) << 20;
    if (n >= 2 * kHuge) {
        std::vector<uint8_t>().swap(v);  // a fresh, untouched allocation below (glibc maps it)
        v.reserve(n);
        const auto start = reinterpret_cast<uintptr_t>(v.data());
        const uintptr_t first = (start + kHuge - 1) & ~uintptr_t(kHuge - 1);
        const uintptr_t last = (start + n) & ~uintptr_t(kHuge - 1);
        if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);  // advice only
    }
#endif
    v.assign(n, fill);
}

}  // namespace bspkit::detail
