// Source static and detail props (game lumps 'sprp', 'dprp', 'dplt').
#include "fuzz_common.hpp"

#include <bspkit/formats/source_props.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bsp = bspkit::fuzz::open(data, size);
    if (!bsp || bsp->format() != bspkit::Format::source) return 0;
    bspkit::fuzz::guarded([&] {
        if (auto props = bspkit::source::read_static_props(*bsp)) {
            bspkit::source::write_static_props(*bsp, *props);
            (void)bsp->serialize();
        }
    });
    return 0;
}
