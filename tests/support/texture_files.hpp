// Texture files written by the tests themselves, field by field from the
// format descriptions (independent of src/textures): WAD2 / WAD3 miptex,
// Quake 2 WAL and PCX palettes, VTF (DXT blocks encoded here with known
// colours, uncompressed formats), VPK v1 / v2 and zip (.pk3: stored and
// deflated entries, deflate by zlib).
#pragma once

#include <bspkit/bytes.hpp>

#include <zlib.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace bspkit::test {

inline void put_name(Bytes& out, std::string_view name, size_t field) {
    const size_t at = out.size();
    out.resize(at + field, 0);
    std::memcpy(out.data() + at, name.data(), std::min(name.size(), field));
}

inline void write_bytes(const std::filesystem::path& path, const Bytes& b) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

/// A palette where index i is (i, 255 - i, i / 2).
inline std::array<uint8_t, 768> ramp_palette() {
    std::array<uint8_t, 768> p{};
    for (int i = 0; i < 256; ++i) {
        p[size_t(i) * 3] = uint8_t(i);
        p[size_t(i) * 3 + 1] = uint8_t(255 - i);
        p[size_t(i) * 3 + 2] = uint8_t(i / 2);
    }
    return p;
}

/// Palette index of pixel (x, y) in the test images.
inline uint8_t test_index(uint32_t x, uint32_t y) { return uint8_t(x * 16 + y); }

/// Four mip offsets, the first at `first`.
inline void mip_offsets(Bytes& out, uint32_t first, uint32_t w, uint32_t h) {
    for (int level = 0; level < 4; ++level) {
        append<uint32_t>(out, first);
        first += (w >> level) * (h >> level);
    }
}

/// Four mip levels: test_index pixels at level 0, zeros below.
inline void mip_levels(Bytes& out, uint32_t w, uint32_t h) {
    for (int level = 0; level < 4; ++level)
        for (uint32_t y = 0; y < (h >> level); ++y)
            for (uint32_t x = 0; x < (w >> level); ++x) out.push_back(level == 0 ? test_index(x, y) : 0);
}

/// A miptex: 40-byte header, 4 levels of test_index pixels; with `palette`
/// (WAD3 / GoldSrc) a uint16 256 and the palette after them.
inline Bytes make_miptex(std::string_view name, uint32_t w, uint32_t h, const std::array<uint8_t, 768>* palette) {
    Bytes out;
    put_name(out, name, 16);
    append<uint32_t>(out, w);
    append<uint32_t>(out, h);
    mip_offsets(out, 40, w, h);
    mip_levels(out, w, h);
    if (palette) {
        append<uint16_t>(out, 256);
        out.insert(out.end(), palette->begin(), palette->end());
        append<uint16_t>(out, 0);
    }
    return out;
}

struct WadLump {
    std::string name;
    Bytes data;
    uint8_t type;
};

inline Bytes make_wad(bool wad3, const std::vector<WadLump>& lumps) {
    Bytes out;
    out.insert(out.end(), {'W', 'A', 'D', uint8_t(wad3 ? '3' : '2')});
    append<int32_t>(out, int32_t(lumps.size()));
    append<int32_t>(out, 0);  // patched below
    std::vector<uint32_t> at;
    for (const WadLump& l : lumps) {
        at.push_back(uint32_t(out.size()));
        out.insert(out.end(), l.data.begin(), l.data.end());
    }
    store<int32_t>(out.data() + 8, int32_t(out.size()));
    for (size_t i = 0; i < lumps.size(); ++i) {
        append<int32_t>(out, int32_t(at[i]));
        append<int32_t>(out, int32_t(lumps[i].data.size()));
        append<int32_t>(out, int32_t(lumps[i].data.size()));
        out.push_back(lumps[i].type);
        out.push_back(0);
        out.push_back(0);
        out.push_back(0);
        put_name(out, lumps[i].name, 16);
    }
    return out;
}

/// Quake 2 .wal: 100-byte header, 4 levels of test_index pixels.
inline Bytes make_wal(std::string_view name, uint32_t w, uint32_t h) {
    Bytes out;
    put_name(out, name, 32);
    append<uint32_t>(out, w);
    append<uint32_t>(out, h);
    mip_offsets(out, 100, w, h);
    put_name(out, "", 32);
    append<int32_t>(out, 0);
    append<int32_t>(out, 0);
    append<int32_t>(out, 0);
    mip_levels(out, w, h);
    return out;
}

/// A Quake / Quake 2 PACK archive (qfiles.h dpackheader_t, dpackfile_t): the
/// files' bytes after the 12-byte header, then the directory of 64-byte
/// entries (56-byte name, filepos, filelen), in the order given.
struct PackEntry {
    std::string name;
    Bytes data;
};
inline Bytes make_pack(const std::vector<PackEntry>& entries) {
    Bytes out;
    out.insert(out.end(), {'P', 'A', 'C', 'K'});
    append<int32_t>(out, 0);  // dirofs, set below
    append<int32_t>(out, int32_t(entries.size() * 64));
    std::vector<int32_t> pos;
    for (const PackEntry& e : entries) {
        pos.push_back(int32_t(out.size()));
        out.insert(out.end(), e.data.begin(), e.data.end());
    }
    const auto dirofs = int32_t(out.size());
    std::memcpy(out.data() + 4, &dirofs, 4);
    for (size_t k = 0; k < entries.size(); ++k) {
        put_name(out, entries[k].name, 56);
        append<int32_t>(out, pos[k]);
        append<int32_t>(out, int32_t(entries[k].data.size()));
    }
    return out;
}

/// A PCX with a 1 x 1 image and a trailing 256-colour palette.
inline Bytes make_pcx(const std::array<uint8_t, 768>& palette) {
    Bytes out(128, 0);
    out[0] = 0x0A;
    out[1] = 5;
    out[2] = 1;
    out[3] = 8;
    out.push_back(0xC1);  // run of 1
    out.push_back(0);
    out.push_back(0x0C);
    out.insert(out.end(), palette.begin(), palette.end());
    return out;
}

/// RGB565 of 8-bit colours.
inline uint16_t rgb565(uint8_t r, uint8_t g, uint8_t b) { return uint16_t((r >> 3) << 11 | (g >> 2) << 5 | (b >> 3)); }

/// DXT1 data for a w x h image: every block has colour 0 `c0` and colour 1
/// `c1`; rows y < 2 of each block use colour 0, the others colour 1.
inline Bytes dxt1_blocks(uint32_t w, uint32_t h, uint16_t c0, uint16_t c1) {
    Bytes out;
    for (uint32_t b = 0; b < ((w + 3) / 4) * ((h + 3) / 4); ++b) {
        append<uint16_t>(out, c0);
        append<uint16_t>(out, c1);
        append<uint32_t>(out, 0x55550000u);  // rows 0-1: index 0, rows 2-3: index 1
    }
    return out;
}

/// DXT5: alpha 255 (index 0) for columns x < 2 of each block, 0 (index 1)
/// for the others; colours as dxt1_blocks.
inline Bytes dxt5_blocks(uint32_t w, uint32_t h, uint16_t c0, uint16_t c1) {
    Bytes out;
    uint64_t bits = 0;
    for (int i = 0; i < 16; ++i)
        if (i % 4 >= 2) bits |= uint64_t(1) << (3 * i);
    for (uint32_t b = 0; b < ((w + 3) / 4) * ((h + 3) / 4); ++b) {
        out.push_back(255);
        out.push_back(0);
        for (int k = 0; k < 6; ++k) out.push_back(uint8_t(bits >> (8 * k)));
        append<uint16_t>(out, c0);
        append<uint16_t>(out, c1);
        append<uint32_t>(out, 0x55550000u);
    }
    return out;
}

/// A VTF of version 7.`minor` holding `levels` (smallest mip first, as on disk).
inline Bytes make_vtf(uint32_t minor, uint32_t format, uint16_t w, uint16_t h, uint8_t mips, const Bytes& levels,
                      uint32_t flags = 0, uint16_t frames = 1) {
    Bytes out = {'V', 'T', 'F', 0};
    append<uint32_t>(out, 7);
    append<uint32_t>(out, minor);
    const uint32_t header = minor >= 3 ? 80 + 2 * 8 : minor == 2 ? 80 : 64;  // 7.2 pads its 65 bytes to 80
    append<uint32_t>(out, header);
    append<uint16_t>(out, w);
    append<uint16_t>(out, h);
    append<uint32_t>(out, flags);
    append<uint16_t>(out, frames);
    append<uint16_t>(out, 0);
    out.resize(out.size() + 4 + 12 + 4, 0);
    append<float>(out, 1.0f);
    append<uint32_t>(out, format);
    out.push_back(mips);
    append<uint32_t>(out, 0xFFFFFFFFu);  // no low-resolution image
    out.push_back(0);
    out.push_back(0);
    if (minor >= 2) append<uint16_t>(out, 1);  // depth
    if (minor >= 3) {
        out.resize(68, 0);
        append<uint32_t>(out, 2);
        out.resize(80, 0);
        out.insert(out.end(), {0x01, 0, 0, 0});  // low-res: none, offset 0
        append<uint32_t>(out, 0);
        out.insert(out.end(), {0x30, 0, 0, 0});
        append<uint32_t>(out, header);
    }
    out.resize(header, 0);
    out.insert(out.end(), levels.begin(), levels.end());
    return out;
}

struct ZipFile {
    std::string name;
    Bytes data;
    bool deflate = false;
};

inline Bytes raw_deflate(const Bytes& data) {
    z_stream s{};
    deflateInit2(&s, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    Bytes out(deflateBound(&s, uLong(data.size())));
    s.next_in = const_cast<Bytef*>(data.data());
    s.avail_in = uInt(data.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    deflate(&s, Z_FINISH);
    out.resize(s.total_out);
    deflateEnd(&s);
    return out;
}

inline Bytes make_zip(const std::vector<ZipFile>& files) {
    Bytes out, central;
    for (const ZipFile& f : files) {
        const Bytes payload = f.deflate ? raw_deflate(f.data) : f.data;
        const uint32_t crc = uint32_t(crc32(0, f.data.data(), uInt(f.data.size())));
        const uint32_t at = uint32_t(out.size());
        for (Bytes* b : {&out, &central}) {
            const bool c = b == &central;
            append<uint32_t>(*b, c ? 0x02014b50 : 0x04034b50);
            if (c) append<uint16_t>(*b, 20);
            append<uint16_t>(*b, 20);
            append<uint16_t>(*b, 0);
            append<uint16_t>(*b, f.deflate ? 8 : 0);
            append<uint32_t>(*b, 0);  // time, date
            append<uint32_t>(*b, crc);
            append<uint32_t>(*b, uint32_t(payload.size()));
            append<uint32_t>(*b, uint32_t(f.data.size()));
            append<uint16_t>(*b, uint16_t(f.name.size()));
            append<uint16_t>(*b, 0);
            if (c) {
                append<uint16_t>(*b, 0);
                append<uint16_t>(*b, 0);
                append<uint16_t>(*b, 0);
                append<uint32_t>(*b, 0);
                append<uint32_t>(*b, at);
            }
            b->insert(b->end(), f.name.begin(), f.name.end());
        }
        out.insert(out.end(), payload.begin(), payload.end());
    }
    const uint32_t cd = uint32_t(out.size());
    out.insert(out.end(), central.begin(), central.end());
    append<uint32_t>(out, 0x06054b50);
    append<uint32_t>(out, 0);
    append<uint16_t>(out, uint16_t(files.size()));
    append<uint16_t>(out, uint16_t(files.size()));
    append<uint32_t>(out, uint32_t(central.size()));
    append<uint32_t>(out, cd);
    append<uint16_t>(out, 0);
    return out;
}

struct VpkFile {
    std::string ext, path, name;
    Bytes data;
    uint16_t preload = 0;         ///< bytes of data kept in the directory
    bool in_archive_000 = false;  ///< the rest in NAME_000.vpk, else in the _dir file
};

/// Writes DIR/NAME_dir.vpk (and NAME_000.vpk) of `version`.
inline void make_vpk(const std::filesystem::path& dir, const std::string& name, uint32_t version,
                     const std::vector<VpkFile>& files) {
    Bytes tree, inline_data, archive;
    auto str = [&](const std::string& s) {
        tree.insert(tree.end(), s.begin(), s.end());
        tree.push_back(0);
    };
    for (const VpkFile& f : files) {  // one extension / path per file: simple and valid
        str(f.ext);
        str(f.path);
        str(f.name);
        const Bytes rest(f.data.begin() + f.preload, f.data.end());
        append<uint32_t>(tree, uint32_t(crc32(0, f.data.data(), uInt(f.data.size()))));
        append<uint16_t>(tree, f.preload);
        Bytes& target = f.in_archive_000 ? archive : inline_data;
        append<uint16_t>(tree, f.in_archive_000 ? 0 : 0x7fff);
        append<uint32_t>(tree, uint32_t(target.size()));
        append<uint32_t>(tree, uint32_t(rest.size()));
        append<uint16_t>(tree, 0xffff);
        tree.insert(tree.end(), f.data.begin(), f.data.begin() + f.preload);
        target.insert(target.end(), rest.begin(), rest.end());
        str("");
        str("");
    }
    str("");
    Bytes out;
    append<uint32_t>(out, 0x55aa1234);
    append<uint32_t>(out, version);
    append<uint32_t>(out, uint32_t(tree.size()));
    if (version == 2) {
        append<uint32_t>(out, uint32_t(inline_data.size()));
        append<uint32_t>(out, 0);
        append<uint32_t>(out, 0);
        append<uint32_t>(out, 0);
    }
    out.insert(out.end(), tree.begin(), tree.end());
    out.insert(out.end(), inline_data.begin(), inline_data.end());
    write_bytes(dir / (name + "_dir.vpk"), out);
    if (!archive.empty()) write_bytes(dir / (name + "_000.vpk"), archive);
}

}  // namespace bspkit::test
