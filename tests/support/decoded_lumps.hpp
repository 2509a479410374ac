// Every lump of a map decoded (LZMA undone), for comparing two maps lump by
// lump. The Source game lump directory is blanked, because the offsets inside
// it depend on where the lump is placed; its game lumps are compared one by
// one, appended after the lumps.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/format.hpp>

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace bspkit::test {

/// Decoded lumps in index order, then decoded game lumps; lumps in `blank`
/// (e.g. the one a test replaced) are left empty.
inline std::vector<Bytes> decoded_lumps(const Bsp& bsp, std::initializer_list<size_t> blank = {}) {
    std::vector<Bytes> out;
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const bool blanked = std::find(blank.begin(), blank.end(), i) != blank.end() ||
                             (bsp.format() == Format::source && i == source_lump::game_lump);
        if (blanked) {
            out.emplace_back();
            continue;
        }
        const ByteSpan d = bsp.decoded(i);
        out.emplace_back(d.begin(), d.end());
    }
    for (size_t k = 0; k < bsp.game_lumps().size(); ++k) {
        const ByteSpan d = bsp.game_lump_decoded(k);
        out.emplace_back(d.begin(), d.end());
    }
    return out;
}

}  // namespace bspkit::test
