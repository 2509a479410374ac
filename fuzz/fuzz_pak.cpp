// Pakfile (zip) listing and entry decoding; the input is also tried as a bare zip.
#include "fuzz_common.hpp"

#include <bspkit/formats/source_pakfile.hpp>

namespace {
void exercise(const bspkit::source::Pakfile& pak) {
    for (size_t i = 0; i < pak.entries().size() && i < 64; ++i)
        bspkit::fuzz::guarded([&] { (void)pak.extract(i); });
    (void)pak.serialize();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    bspkit::fuzz::guarded([&] { exercise(bspkit::source::Pakfile::parse(bspkit::ByteSpan(data, size))); });
    if (auto bsp = bspkit::fuzz::open(data, size))
        bspkit::fuzz::guarded([&] { exercise(bspkit::source::Pakfile::read(*bsp)); });
    return 0;
}
