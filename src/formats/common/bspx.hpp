// Private: ericw-tools' BSPX extension lumps, appended after the last lump of
// Quake 1 / Quake 2 files ("BSPX", int count, {char name[24]; int ofs, len}).
#pragma once

#include <bspkit/bsp.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace bspkit::checks {

struct BspxLump {
    std::string name;
    ByteSpan data;  ///< clipped to the file
};

inline std::vector<BspxLump> find_bspx(const Bsp& bsp) {
    const ByteSpan file = bsp.file_bytes();
    uint64_t end = bsp.layout().header_size();
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const LumpEntry& e = bsp.entry(i);
        if (e.offset > 0 && e.length > 0) end = std::max<uint64_t>(end, uint64_t(e.offset) + uint64_t(e.length));
    }
    end = (end + 3) & ~uint64_t(3);
    std::vector<BspxLump> out;
    if (end + 8 > file.size() || std::string_view(reinterpret_cast<const char*>(file.data() + end), 4) != "BSPX")
        return out;
    const int32_t count = load<int32_t>(file.data() + end + 4);
    const uint64_t dir = end + 8;
    for (int64_t k = 0; k < count && dir + uint64_t(k + 1) * 32 <= file.size(); ++k) {
        const uint8_t* p = file.data() + dir + k * 32;
        BspxLump l;
        l.name.assign(reinterpret_cast<const char*>(p), size_t(std::find(p, p + 24, uint8_t(0)) - p));
        const int64_t ofs = load<int32_t>(p + 24), len = load<int32_t>(p + 28);
        if (ofs >= 0 && len >= 0 && uint64_t(ofs) <= file.size())
            l.data = file.subspan(size_t(ofs), size_t(std::min<uint64_t>(uint64_t(len), file.size() - uint64_t(ofs))));
        out.push_back(std::move(l));
    }
    return out;
}

}  // namespace bspkit::checks
