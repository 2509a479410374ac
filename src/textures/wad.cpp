// WAD2 (Quake) and WAD3 (GoldSrc) texture archives, and miptex decoding.
// Header {"WAD2"|"WAD3", numlumps, infotableofs}, then numlumps 32-byte
// entries at infotableofs; a miptex entry (type 'D' in WAD2, 'C' in WAD3) is
// a 40-byte miptex header and four mip levels (WAD3: then uint16 count and
// count RGB triplets).
#include "records.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/zip.hpp>

#include <algorithm>
#include <cctype>

namespace bspkit::textures {

namespace {

constexpr uint8_t kWad2Miptex = 0x44, kWad3Miptex = 0x43;

}  // namespace

model::Texture decode_miptex(ByteSpan data, bool own_palette, const std::array<uint8_t, 768>& palette,
                             const std::string& name) {
    const miptex_t m = record_at<miptex_t>(data, 0, name, "miptex header");
    auto fail = [&](int64_t at, const std::string& why) { throw Error({name, "", at}, why); };
    if (m.width == 0 || m.height == 0 || m.width > kMaxSide || m.height > kMaxSide)
        fail(16, "miptex size " + std::to_string(m.width) + " x " + std::to_string(m.height) + " is not 1.." +
                     std::to_string(kMaxSide));
    const uint64_t pixels = uint64_t(m.width) * m.height;
    if (m.offsets[0] == 0) fail(24, "miptex has no pixels (offset 0: it names a texture kept elsewhere)");
    if (uint64_t(m.offsets[0]) + pixels > data.size())
        fail(24, "mip level 0 (" + std::to_string(pixels) + " bytes at offset " + std::to_string(m.offsets[0]) +
                     ") runs past the end of the " + std::to_string(data.size()) + "-byte miptex");
    const uint8_t* colours = palette.data();
    if (own_palette) {
        const uint64_t end = uint64_t(m.offsets[3]) + uint64_t(m.width >> 3) * (m.height >> 3);
        if (end + 2 > data.size()) fail(36, "the palette after mip level 3 lies past the end of the miptex");
        const uint16_t count = load<uint16_t>(data.data() + end);
        if (count < 256 || end + 2 + uint64_t(count) * 3 > data.size())
            fail(int64_t(end), "palette of " + std::to_string(count) +
                                   " colours (256 needed) does not fit in the miptex");
        colours = data.data() + end + 2;
    }
    model::Texture tex;
    tex.name = field_name(m.name);
    if (tex.name.empty()) tex.name = name;
    tex.width = m.width;
    tex.height = m.height;
    tex.rgba.resize(pixels * 4);
    indexed_to_rgba(data.data() + m.offsets[0], pixels, colours, !tex.name.empty() && tex.name[0] == '{',
                    tex.rgba.data());
    return tex;
}

Wad Wad::open(const std::filesystem::path& path) { return parse(read_file(path), path.string()); }

Wad Wad::parse(Bytes bytes, std::string name) {
    Wad wad;
    wad.name_ = std::move(name);
    wad.bytes_ = std::move(bytes);
    const ByteSpan data = wad.bytes_;
    const auto header = record_at<wadheader_t>(data, 0, wad.name_, "WAD header");
    const std::string id(header.identification, 4);
    if (id != "WAD2" && id != "WAD3")
        throw Error({wad.name_, "", 0}, "not a WAD2 or WAD3 file (identification \"" + zip::printable(id) + "\")");
    wad.wad3_ = id == "WAD3";
    if (header.numlumps < 0 || header.infotableofs < 0 ||
        uint64_t(header.infotableofs) + uint64_t(header.numlumps) * sizeof(wadlumpinfo_t) > data.size())
        throw Error({wad.name_, "", 4}, std::to_string(header.numlumps) + " directory entries at offset " +
                                            std::to_string(header.infotableofs) + " run past the end of the " +
                                            std::to_string(data.size()) + "-byte file");
    wad.entries_.reserve(size_t(header.numlumps));
    for (int32_t i = 0; i < header.numlumps; ++i) {
        const uint64_t at = uint64_t(header.infotableofs) + uint64_t(i) * sizeof(wadlumpinfo_t);
        const auto info = record_at<wadlumpinfo_t>(data, at, wad.name_, "WAD directory entry");
        WadEntry e;
        e.name = field_name(info.name);
        e.offset = uint32_t(std::max(0, info.filepos));
        e.disk_size = uint32_t(std::max(0, info.disksize));
        e.size = uint32_t(std::max(0, info.size));
        e.type = info.type;
        e.compression = info.compression;
        if (info.filepos < 0 || info.disksize < 0 || uint64_t(e.offset) + e.disk_size > data.size())
            throw Error({wad.name_, "", int64_t(at)},
                        "entry " + std::to_string(i) + " \"" + e.name + "\": " + std::to_string(info.disksize) +
                            " bytes at offset " + std::to_string(info.filepos) + " run past the end of the " +
                            std::to_string(data.size()) + "-byte file");
        wad.entries_.push_back(std::move(e));
    }
    return wad;
}

std::optional<size_t> Wad::find(std::string_view texture) const {
    for (size_t i = 0; i < entries_.size(); ++i) {
        const WadEntry& e = entries_[i];
        if ((e.type == kWad2Miptex || e.type == kWad3Miptex) && ascii_iequals(e.name, texture)) return i;
    }
    return std::nullopt;
}

model::Texture Wad::decode(size_t index, const std::array<uint8_t, 768>& palette) const {
    const WadEntry& e = entries_.at(index);
    if (e.compression != 0)
        throw Error({name_, "", int64_t(e.offset)}, "entry \"" + e.name + "\" is compressed (method " +
                                                        std::to_string(e.compression) + "), which no engine reads");
    try {
        model::Texture t = decode_miptex(ByteSpan(bytes_).subspan(e.offset, e.disk_size), e.type == kWad3Miptex,
                                         palette, e.name);
        t.name = e.name;
        return t;
    } catch (const Error& error) {
        // Offsets inside the entry become file offsets.
        const int64_t at = error.where().offset >= 0 ? int64_t(e.offset) + error.where().offset : int64_t(e.offset);
        throw Error({name_, "", at}, "entry \"" + e.name + "\": " + error.detail());
    }
}

}  // namespace bspkit::textures
