// Geometry and export: model::build of every format (faces, displacements,
// patches, lightmaps, embedded textures), then the glTF asset in memory.
// Images are left out of the asset (PNG encoding only slows the fuzzer; the
// decoders that feed them run in build()).
#include "fuzz_common.hpp"

#include <bspkit/export.hpp>
#include <bspkit/model.hpp>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto bsp = bspkit::fuzz::open(data, size);
    if (!bsp) return 0;
    bspkit::fuzz::guarded([&] {
        bspkit::model::BuildOptions build;
        build.patch_level = 2;  // bounded tessellation; the adaptive level runs in the tests
        const bspkit::model::Map map = bspkit::model::build(*bsp, build);
        bspkit::exporter::Options options;
        options.textures = false;
        options.lightmaps = false;
        (void)bspkit::exporter::build_gltf(map, options, /*binary=*/true);
    });
    return 0;
}
