// Small maps the project generates itself, for the demo, tests, fuzz seeds
// and benchmarks. No game data is shipped: every byte here is built by code.
#pragma once

#include <bspkit/bsp.hpp>

#include <string>
#include <vector>

namespace bspkit::samples {

/// A generated sample: a file name and its bytes.
struct Sample {
    std::string name;  ///< e.g. "sample_quake2.bsp"
    std::string format;  ///< expected format id
    std::optional<int32_t> version;
    Bytes bytes;
};

/// Builds a file of `layout` whose lumps hold `lumps` (missing ones empty),
/// laid out by bspkit's own writer.
Bytes build(const FormatLayout& layout, std::optional<int32_t> version, const std::vector<Bytes>& lumps,
            ByteOrder order = ByteOrder::little, Compression compression = Compression::keep);

/// One sample of every format and variant bspkit reads: a single box room
/// (planes, vertices and an entity lump), plus Source game lumps and LZMA.
std::vector<Sample> all();

}  // namespace bspkit::samples
