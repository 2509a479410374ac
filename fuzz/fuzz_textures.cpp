// libFuzzer target: bspkit::fuzz::texture_files (see entry_points.hpp).
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::texture_files(data, size);
    return 0;
}
