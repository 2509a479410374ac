// Telling a Half-Life map with a v29 header from a Quake map, by content.
#pragma once

#include <bspkit/bytes.hpp>

#include <optional>
#include <string>

namespace bspkit::quake1 {

struct ContentVerdict {
    bool goldsrc = false;
    std::string rule;  ///< which evidence decided, in words
};

/// Inspects the lighting and miptex lumps of a file laid out as Quake 1 /
/// GoldSrc (15 lumps of {offset, length} after an int version). Never reads
/// outside `file`; bounded work for hostile input.
ContentVerdict classify_v29(ByteSpan file);

}  // namespace bspkit::quake1
