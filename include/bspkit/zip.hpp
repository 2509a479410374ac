// A bounds-checked zip reader shared by the Source pakfile (lump 40) and the
// Quake 3 .pk3 archives of the texture search path.
//
//   auto zip = bspkit::zip::Archive::open("pak0.pk3");         // throws Error
//   if (auto i = zip.find("scripts/base.shader")) Bytes text = zip.extract(*i);
//
// Structures (APPNOTE.TXT): local file header "PK\3\4" (30 bytes + name +
// extra, then the data), central directory records "PK\1\2" (46 bytes + name
// + extra + comment), end of central directory "PK\5\6" (22 bytes + comment).
// Methods decoded: stored (0), deflate (8, zlib's raw inflate) and LZMA (14,
// liblzma, as bspzip -repack writes it). Everything is read through our own
// walk of the central directory: real pakfiles break zip rules that other
// readers enforce (Xbox 360 maps declare central-directory extra fields whose
// bytes are not there), and this reader keeps libzip (and the libcrypto it
// loads) out of the library and the command line.
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace bspkit::zip {

/// Compression methods.
inline constexpr uint16_t kStored = 0;
inline constexpr uint16_t kDeflated = 8;
inline constexpr uint16_t kLzma = 14;

/// One archive member as recorded in the central directory.
struct Entry {
    std::string name;            ///< as stored (may hold backslashes: "maps\x.nav")
    uint16_t method = kStored;
    uint16_t flags = 0;          ///< general purpose bits (bit 0 encrypted, bit 1 LZMA end marker, bit 3 descriptor)
    uint16_t dos_time = 0, dos_date = 0;
    uint32_t crc32 = 0;
    uint32_t compressed_size = 0;
    uint32_t size = 0;           ///< uncompressed
    int64_t header_offset = -1;  ///< local header, relative to the archive start (-1: added, not saved yet)
    int64_t data_offset = -1;    ///< first data byte, relative to the archive start

    bool directory() const noexcept { return !name.empty() && (name.back() == '/' || name.back() == '\\'); }
    /// "stored", "lzma", "deflate", ... or "method N".
    std::string method_name() const;
};

/// Where an entry's bytes are in the archive (for writers that copy them).
struct Extent {
    size_t central_begin = 0, central_size = 0;  ///< central record as present (extra left out when absent)
    size_t record_begin = 0, record_end = 0;     ///< local header .. end of data, descriptor and padding
};

class Archive {
public:
    /// Parses zip bytes; `where` names file and lump, its offset is the
    /// absolute file offset of byte 0 (-1: offsets within the archive).
    /// Empty bytes are an empty archive. Throws Error for a malformed one.
    static Archive parse(Bytes bytes, Location where = {"", "zip", -1});
    /// The same over bytes it does not copy: `owner` keeps them alive (a
    /// mapped file, say) for as long as the archive or a copy of it lives.
    static Archive parse(ByteSpan bytes, std::shared_ptr<const void> owner, Location where = {"", "zip", -1});
    /// Reads and parses a zip file (.pk3, .zip).
    static Archive open(const std::filesystem::path& path);

    const std::vector<Entry>& entries() const noexcept { return entries_; }
    const std::vector<Extent>& extents() const noexcept { return extents_; }
    ByteSpan bytes() const noexcept { return bytes_; }
    /// The end record's comment.
    const std::string& comment() const noexcept { return comment_; }
    /// Bytes after the last central record inside the directory's declared size.
    ByteSpan directory_padding() const noexcept;
    /// Oddities that did not stop reading.
    const std::vector<Diagnostic>& diagnostics() const noexcept { return diagnostics_; }
    /// Location for messages about archive byte `offset` (-1: none).
    Location at(int64_t offset) const;
    const Location& where() const noexcept { return where_; }

    /// Index of the entry named `name`: exact match first, then the engine's
    /// rule (case-insensitive, '\' = '/').
    std::optional<size_t> find(std::string_view name) const;

    /// Decoded contents (CRC-checked) of an entry of this archive. Throws
    /// Error naming the entry and its offset when it cannot be decoded.
    Bytes extract(const Entry& entry) const;
    Bytes extract(size_t index) const;

private:
    Location where_;
    ByteSpan bytes_;
    std::shared_ptr<const void> owner_;  ///< keeps bytes_ alive
    std::vector<Entry> entries_;
    std::vector<Extent> extents_;
    std::string comment_;
    size_t padding_begin_ = 0, padding_end_ = 0;
    std::vector<Diagnostic> diagnostics_;
    std::unordered_map<std::string, size_t> by_engine_name_;
};

/// The engine's view of a name: ASCII lower case, '\' as '/'.
std::string engine_name(std::string_view name);
/// `s` for messages and terminals: control and DEL bytes, C1 controls, and
/// bytes of no well-formed UTF-8 sequence (Latin-1 text, Quake's high-bit
/// characters, damage) as \xNN; ASCII and other UTF-8 as they are.
std::string printable(std::string_view s);
/// CRC-32 (zip, gzip) of `data`.
uint32_t crc32_of(ByteSpan data);

}  // namespace bspkit::zip
