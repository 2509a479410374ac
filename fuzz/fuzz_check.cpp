// `bspkit check`: every cross-reference walk of every format.
#include "fuzz_common.hpp"

#include <bspkit/check.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (auto bsp = bspkit::fuzz::open(data, size)) bspkit::fuzz::guarded([&] { (void)bspkit::check(*bsp); });
    return 0;
}
