// libFuzzer target: bspkit::fuzz::pak (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::pak(data, size);
    return 0;
}
