// libFuzzer target: bspkit::fuzz::geometry_and_export (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::geometry_and_export(data, size);
    return 0;
}
