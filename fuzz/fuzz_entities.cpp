// libFuzzer target: bspkit::fuzz::entities (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::entities(data, size);
    return 0;
}
