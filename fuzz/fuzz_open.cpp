// libFuzzer target: bspkit::fuzz::open_and_save (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::open_and_save(data, size);
    return 0;
}
