// Entity lump parsing and writing (the raw input is also tried as entity text).
#include "fuzz_common.hpp"

#include <bspkit/entities.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (auto bsp = bspkit::fuzz::open(data, size)) {
        bspkit::fuzz::guarded([&] {
            const bspkit::EntityLump lump = bspkit::read_entities(*bsp);
            bspkit::write_entities(*bsp, lump);
            (void)bsp->serialize();
        });
    }
    return 0;
}
