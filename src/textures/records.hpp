// On-disk records of the texture files (WAD2 / WAD3, miptex, WAL, VTF, VPK):
// one plain struct per record, read with load<> from bounds-checked spans.
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>

#include "../formats/common/indexed_pixels.hpp"

#include <cstdint>
#include <cstring>
#include <string>

namespace bspkit::textures {

#pragma pack(push, 1)
struct wadheader_t {
    char identification[4];  // "WAD2" / "WAD3"
    int32_t numlumps;
    int32_t infotableofs;
};
static_assert(sizeof(wadheader_t) == 12);

struct wadlumpinfo_t {
    int32_t filepos;
    int32_t disksize;
    int32_t size;
    uint8_t type;         // 0x44 'D' WAD2 miptex, 0x43 'C' WAD3 miptex
    uint8_t compression;  // 0: none (the only kind ever written)
    uint8_t pad1, pad2;
    char name[16];
};
static_assert(sizeof(wadlumpinfo_t) == 32);

struct miptex_t {
    char name[16];
    uint32_t width, height;
    uint32_t offsets[4];
};
static_assert(sizeof(miptex_t) == 40);

struct miptex_wal_t {  // Quake 2 .wal
    char name[32];
    uint32_t width, height;
    uint32_t offsets[4];
    char animname[32];
    int32_t flags, contents, value;
};
static_assert(sizeof(miptex_wal_t) == 100);

struct vtfheader_t {  // 7.0 part; 7.2 adds depth, 7.3 the resource count
    char signature[4];  // "VTF\0"
    uint32_t version[2];
    uint32_t headerSize;
    uint16_t width, height;
    uint32_t flags;
    uint16_t frames, firstFrame;
    uint8_t padding0[4];
    float reflectivity[3];
    uint8_t padding1[4];
    float bumpmapScale;
    uint32_t highResImageFormat;
    uint8_t mipmapCount;
    uint32_t lowResImageFormat;
    uint8_t lowResImageWidth, lowResImageHeight;
};
static_assert(sizeof(vtfheader_t) == 63);

struct vtfresource_t {
    uint8_t tag[3];
    uint8_t flags;
    uint32_t offset;
};
static_assert(sizeof(vtfresource_t) == 8);

// Quake / Quake 2 PACK archive (id's qfiles.h: dpackheader_t, dpackfile_t).
struct dpackheader_t {
    char ident[4];  // "PACK"
    int32_t dirofs;
    int32_t dirlen;  // 64 bytes per file
};
static_assert(sizeof(dpackheader_t) == 12);

struct dpackfile_t {
    char name[56];
    int32_t filepos, filelen;
};
static_assert(sizeof(dpackfile_t) == 64);

struct vpkheader_v1_t {
    uint32_t signature;  // 0x55aa1234
    uint32_t version;
    uint32_t treeSize;
};
static_assert(sizeof(vpkheader_v1_t) == 12);

struct vpkheader_v2_t {
    uint32_t signature;
    uint32_t version;
    uint32_t treeSize;
    uint32_t fileDataSectionSize;
    uint32_t archiveMD5SectionSize;
    uint32_t otherMD5SectionSize;
    uint32_t signatureSectionSize;
};
static_assert(sizeof(vpkheader_v2_t) == 28);

struct vpkentry_t {
    uint32_t crc;
    uint16_t preloadBytes;
    uint16_t archiveIndex;
    uint32_t entryOffset;
    uint32_t entryLength;
    uint16_t terminator;  // 0xffff
};
static_assert(sizeof(vpkentry_t) == 18);
#pragma pack(pop)

/// A record at `offset` of `data`, or Error naming `name` when it does not fit.
template <class T>
T record_at(ByteSpan data, uint64_t offset, const std::string& name, const char* what) {
    if (offset > data.size() || data.size() - offset < sizeof(T))
        throw Error({name, "", int64_t(std::min<uint64_t>(offset, data.size()))},
                    std::string(what) + " (" + std::to_string(sizeof(T)) + " bytes) runs past the end of the " +
                        std::to_string(data.size()) + "-byte file");
    T value;
    std::memcpy(&value, data.data() + offset, sizeof(T));
    return value;  // little-endian files on little-endian hosts (as the rest of bspkit's Quake readers)
}

/// A fixed-size, possibly unterminated name field.
template <size_t N>
std::string field_name(const char (&s)[N]) {
    return std::string(s, strnlen(s, N));
}

}  // namespace bspkit::textures
