// Container entry point: detect, read the directory, decode every lump and
// game lump, save unchanged and decompressed. Only bspkit::Error may escape
// the library; anything else (crash, sanitizer report, other exception) is a bug.
#include <bspkit/bsp.hpp>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const bspkit::Bsp bsp = bspkit::Bsp::parse(bspkit::Bytes(data, data + size), "fuzz.bsp");
        for (size_t i = 0; i < bsp.lump_count(); ++i) {
            try {
                (void)bsp.decoded(i);
            } catch (const bspkit::Error&) {
            }
        }
        for (size_t k = 0; k < bsp.game_lumps().size(); ++k) {
            try {
                (void)bsp.game_lump_decoded(k);
            } catch (const bspkit::Error&) {
            }
        }
        (void)bsp.serialize();
        if (bsp.format() == bspkit::Format::source) (void)bsp.serialize({bspkit::Compression::decompress});
    } catch (const bspkit::Error&) {
    }
    return 0;
}
