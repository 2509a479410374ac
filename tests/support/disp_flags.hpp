// A Source map with Hammer's displacement attributes set: every dispinfo's
// minTess rewritten to DISP_INFO_FLAG_MAGIC | flags (little-endian maps), the
// way vbsp stores them. For the tests of what the attributes change (traces,
// decompiled VMF); the map is edited in memory, nothing is written.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/formats/source.hpp>

#include <filesystem>
#include <stdexcept>

namespace bspkit::test {

inline Bsp with_disp_flags(const std::filesystem::path& path, uint32_t flags) {
    Bsp bsp = Bsp::open(path);
    const ByteSpan stored = bsp.decoded(source::lump::dispinfo);
    Bytes info(stored.begin(), stored.end());
    if (info.empty() || info.size() % sizeof(source::ddispinfo_t) != 0)
        throw std::runtime_error(path.string() + ": no whole dispinfo records to flag");
    const uint32_t value = source::DISP_INFO_FLAG_MAGIC | flags;
    for (size_t at = offsetof(source::ddispinfo_t, minTess); at + 4 <= info.size(); at += sizeof(source::ddispinfo_t))
        for (int k = 0; k < 4; ++k) info[at + size_t(k)] = uint8_t(value >> (8 * k));
    bsp.replace(source::lump::dispinfo, std::move(info));
    return bsp;
}

}  // namespace bspkit::test
