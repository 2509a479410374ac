// libFuzzer target: bspkit::fuzz::queries (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::queries(data, size);
    return 0;
}
