// Bounds-checked zip reading (see include/bspkit/zip.hpp): every offset and
// size from the archive is checked against its bytes before use; decoding
// is bounded by the sizes in the central directory.
#include <bspkit/zip.hpp>

#include <bspkit/file_io.hpp>
#include <bspkit/lzma.hpp>

#include <lzma.h>
#include <zlib.h>

#include <algorithm>

namespace bspkit::zip {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50, kDescriptorSig = 0x08074b50;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22;

uint16_t u16(ByteSpan b, size_t at) { return load<uint16_t>(b.data() + at); }
uint32_t u32(ByteSpan b, size_t at) { return load<uint32_t>(b.data() + at); }

/// Raw deflate (no zlib header) into exactly `size` bytes.
Bytes inflate_raw(ByteSpan in, uint32_t size, std::string& error) {
    Bytes out(size);
    z_stream s{};
    if (inflateInit2(&s, -MAX_WBITS) != Z_OK) {
        error = "zlib cannot start inflating";
        return {};
    }
    s.next_in = const_cast<Bytef*>(in.data());
    s.avail_in = uInt(in.size());
    s.next_out = out.data();
    s.avail_out = uInt(out.size());
    const int rc = inflate(&s, Z_FINISH);
    const uint64_t produced = s.total_out;
    const std::string message = s.msg ? std::string(" (") + s.msg + ")" : std::string();
    inflateEnd(&s);
    if (rc == Z_STREAM_END && produced == size) return out;
    if (rc == Z_STREAM_END || (rc == Z_BUF_ERROR && s.avail_out == 0 && size > 0))
        error = "deflate data decodes to " + std::string(rc == Z_STREAM_END ? "" : "more than ") +
                std::to_string(produced) + " bytes, the directory says " + std::to_string(size);
    else
        error = "deflate data is corrupt or truncated after " + std::to_string(produced) + " bytes" + message;
    return {};
}

/// Bytes of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no
/// overlong forms, no surrogates, nothing above U+10FFFF) of two bytes or
/// more, or 0 when none starts there. C1 controls (U+0080-U+009F; a terminal
/// may take U+009B as CSI) count as none.
size_t utf8_sequence(std::string_view s) {
    const auto byte = [&](size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
    const unsigned b0 = byte(0);
    const auto tail = [&](size_t i) { return (byte(i) & 0xC0u) == 0x80u; };
    if (b0 >= 0xC2 && b0 <= 0xDF) return tail(1) && !(b0 == 0xC2 && byte(1) <= 0x9F) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        const unsigned b1 = byte(1);
        const bool ok = b0 == 0xE0 ? b1 >= 0xA0 && b1 <= 0xBF : b0 == 0xED ? b1 >= 0x80 && b1 <= 0x9F : tail(1);
        return ok && tail(2) ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        const unsigned b1 = byte(1);
        const bool ok = b0 == 0xF0 ? b1 >= 0x90 && b1 <= 0xBF : b0 == 0xF4 ? b1 >= 0x80 && b1 <= 0x8F : tail(1);
        return ok && tail(2) && tail(3) ? 4 : 0;
    }
    return 0;
}

}  // namespace

std::string printable(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const auto u = static_cast<unsigned char>(s[i]);
        if (u >= 32 && u < 127) {
            out += s[i++];
            continue;
        }
        if (const size_t n = u >= 0x80 ? utf8_sequence(s.substr(i)) : 0) {
            out.append(s.substr(i, n));
            i += n;
            continue;
        }
        static const char* hex = "0123456789abcdef";
        out += "\\x";
        out += hex[u >> 4];
        out += hex[u & 15];
        ++i;
    }
    return out;
}

std::string engine_name(std::string_view name) {
    std::string out(name);
    for (char& c : out) {
        if (c == '\\') c = '/';
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    }
    return out;
}

uint32_t crc32_of(ByteSpan data) { return lzma_crc32(data.data(), data.size(), 0); }

std::string Entry::method_name() const {
    switch (method) {
        case kStored: return "stored";
        case kDeflated: return "deflate";
        case 12: return "bzip2";
        case kLzma: return "lzma";
        case 93: return "zstd";
        case 95: return "xz";
        default: return "method " + std::to_string(method);
    }
}

Location Archive::at(int64_t offset) const {
    Location l = where_;
    if (offset < 0)
        l.offset = -1;
    else
        l.offset = (where_.offset >= 0 ? where_.offset : 0) + offset;
    return l;
}

ByteSpan Archive::directory_padding() const noexcept {
    return bytes_.subspan(padding_begin_, padding_end_ - padding_begin_);
}

Archive Archive::open(const std::filesystem::path& path) {
    return parse(read_file(path), {path.string(), "", 0});
}

Archive Archive::parse(Bytes bytes, Location where) {
    auto owned = std::make_shared<const Bytes>(std::move(bytes));
    const ByteSpan view = *owned;
    return parse(view, std::move(owned), std::move(where));
}

Archive Archive::parse(ByteSpan bytes, std::shared_ptr<const void> owner, Location where) {
    Archive zip;
    zip.where_ = std::move(where);
    zip.bytes_ = bytes;
    zip.owner_ = std::move(owner);
    const ByteSpan z = zip.bytes_;
    const size_t size = z.size();
    const std::string what = zip.where_.lump.empty() ? "zip archive" : zip.where_.lump;
    if (size == 0) return zip;  // an empty archive
    if (size < kEndSize)
        throw Error(zip.at(0), what + " of " + std::to_string(size) +
                                   " bytes is too small for a zip end-of-central-directory record (22 bytes)");

    // End of central directory: the last "PK\5\6" whose record fits.
    std::optional<size_t> end;
    const size_t lowest = size - kEndSize > 0xFFFF ? size - kEndSize - 0xFFFF : 0;
    for (size_t p = size - kEndSize + 1; p-- > lowest;) {
        if (u32(z, p) == kEndSig) {
            end = p;
            break;
        }
    }
    if (!end)
        throw Error(zip.at(int64_t(size - kEndSize)),
                    "no zip end-of-central-directory record (PK\\5\\6) in the last " +
                        std::to_string(size - lowest) + " bytes");
    const size_t e = *end;
    const uint16_t disk = u16(z, e + 4), cd_disk = u16(z, e + 6), count_disk = u16(z, e + 8), count = u16(z, e + 10);
    const uint32_t cd_size = u32(z, e + 12), cd_offset = u32(z, e + 16);
    const uint16_t comment_length = u16(z, e + 20);
    auto warn = [&](int64_t offset, std::string message) {
        zip.diagnostics_.push_back({Severity::warning, zip.where_.lump, zip.at(offset).offset, std::move(message)});
    };
    if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu)
        throw Error(zip.at(int64_t(e)), "zip64 archives are not supported");
    if (disk != 0 || cd_disk != 0)
        throw Error(zip.at(int64_t(e + 4)), "multi-disk zip archive (disk " + std::to_string(disk) + ")");
    if (count_disk != count)
        warn(int64_t(e + 8), "end record gives " + std::to_string(count_disk) + " entries on this disk, " +
                                 std::to_string(count) + " in total");
    const size_t comment_end = std::min<size_t>(size, e + kEndSize + comment_length);
    zip.comment_.assign(reinterpret_cast<const char*>(z.data() + e + kEndSize), comment_end - (e + kEndSize));
    if (e + kEndSize + comment_length != size)
        warn(int64_t(e + 20), "zip comment of " + std::to_string(comment_length) + " bytes " +
                                  (e + kEndSize + comment_length > size
                                       ? "runs past the end of the archive"
                                       : "leaves " + std::to_string(size - comment_end) + " bytes after the end record"));

    // Offsets are relative to the archive start; an archive with bytes in
    // front of it (or offsets counted from elsewhere) is shifted as a whole.
    const int64_t delta = int64_t(e) - (int64_t(cd_offset) + int64_t(cd_size));
    const int64_t cd_start = int64_t(cd_offset) + delta;
    if (cd_start < 0)
        throw Error(zip.at(int64_t(e + 12)), "central directory of " + std::to_string(cd_size) +
                                                 " bytes does not fit before the end record at offset " +
                                                 std::to_string(zip.at(int64_t(e)).offset));
    if (delta != 0)
        warn(int64_t(e + 16), "central directory offset " + std::to_string(cd_offset) + " is off by " +
                                  std::to_string(delta) + " bytes; all offsets shifted to match");
    const size_t cd_end = e;
    bool reported_missing_extra = false;
    size_t p = size_t(cd_start);
    zip.entries_.reserve(count);
    zip.extents_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const std::string which = "central directory entry " + std::to_string(i);
        if (p + kCentralSize > cd_end)
            throw Error(zip.at(int64_t(p)), which + " (46 bytes) runs past the central directory, which ends at offset " +
                                                std::to_string(zip.at(int64_t(cd_end)).offset) + "; the end record lists " +
                                                std::to_string(count) + " entries");
        if (u32(z, p) != kCentralSig)
            throw Error(zip.at(int64_t(p)), which + ": no central directory signature (PK\\1\\2)");
        Entry entry;
        entry.flags = u16(z, p + 8);
        entry.method = u16(z, p + 10);
        entry.dos_time = u16(z, p + 12);
        entry.dos_date = u16(z, p + 14);
        entry.crc32 = u32(z, p + 16);
        entry.compressed_size = u32(z, p + 20);
        entry.size = u32(z, p + 24);
        const size_t name_length = u16(z, p + 28), extra_length = u16(z, p + 30), comment_len = u16(z, p + 32);
        const uint32_t local = u32(z, p + 42);
        if (p + kCentralSize + name_length > cd_end)
            throw Error(zip.at(int64_t(p + 28)), which + ": name of " + std::to_string(name_length) +
                                                     " bytes runs past the central directory");
        entry.name.assign(reinterpret_cast<const char*>(z.data() + p + kCentralSize), name_length);
        // Xbox 360 pakfiles declare the local extra field's length in the
        // central record too, without its bytes: accept the record without them.
        const bool last = i + 1 == count;
        auto fits = [&](size_t next) {
            if (next > cd_end) return false;
            return last || (next + 4 <= cd_end && u32(z, next) == kCentralSig);
        };
        const size_t full = kCentralSize + name_length + extra_length + comment_len;
        const size_t without_extra = kCentralSize + name_length + comment_len;
        size_t record = full;
        if (!fits(p + full)) {
            if (extra_length > 0 && fits(p + without_extra)) {
                record = without_extra;
                if (!reported_missing_extra)
                    warn(int64_t(p + 30), "central directory records declare extra fields whose bytes are absent "
                                          "(Xbox 360 pakfile layout); read without them");
                reported_missing_extra = true;
            } else {
                throw Error(zip.at(int64_t(p)), which + " (\"" + printable(entry.name) + "\", " + std::to_string(full) +
                                                    " bytes) runs past the central directory or is not followed by "
                                                    "the next entry");
            }
        }
        // The local header and the data it introduces.
        const int64_t lh = int64_t(local) + delta;
        const std::string named = "entry \"" + printable(entry.name) + "\"";
        if (lh < 0 || uint64_t(lh) + kLocalSize > size)
            throw Error(zip.at(int64_t(p + 42)), named + ": local header offset " + std::to_string(local) +
                                                     " lies outside the " + std::to_string(size) + "-byte archive");
        if (u32(z, size_t(lh)) != kLocalSig)
            throw Error(zip.at(lh), named + ": no local file header signature (PK\\3\\4) where the central "
                                            "directory points");
        const uint64_t data = uint64_t(lh) + kLocalSize + u16(z, size_t(lh) + 26) + u16(z, size_t(lh) + 28);
        if (data + entry.compressed_size > size)
            throw Error(zip.at(lh), named + ": " + std::to_string(entry.compressed_size) + " bytes of data at offset " +
                                        std::to_string(zip.at(int64_t(data)).offset) + " run past the end of the " +
                                        std::to_string(size) + "-byte archive");
        entry.header_offset = lh;
        entry.data_offset = int64_t(data);
        Extent extent;
        extent.central_begin = p;
        extent.central_size = record;
        extent.record_begin = size_t(lh);
        extent.record_end = size_t(data + entry.compressed_size);
        if (entry.flags & 8u) {  // data descriptor, with or without its signature
            const size_t d = extent.record_end;
            const size_t length = (d + 4 <= size && u32(z, d) == kDescriptorSig) ? 16 : 12;
            extent.record_end = std::min(size, d + length);
        }
        zip.by_engine_name_.try_emplace(engine_name(entry.name), zip.entries_.size());
        zip.entries_.push_back(std::move(entry));
        zip.extents_.push_back(extent);
        p += record;
    }
    zip.padding_begin_ = zip.padding_end_ = p;
    if (p < cd_end) zip.padding_end_ = cd_end;
    // Padding after a record (Xbox 360 pakfiles align the central directory
    // to 2048 bytes) travels with it, so an unchanged record keeps its layout.
    std::vector<size_t> order(zip.extents_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return zip.extents_[x].record_begin < zip.extents_[y].record_begin; });
    for (size_t k = 0; k < order.size(); ++k) {
        Extent& extent = zip.extents_[order[k]];
        const size_t next = k + 1 < order.size() ? zip.extents_[order[k + 1]].record_begin : size_t(cd_start);
        if (next > extent.record_end && next <= size_t(cd_start)) extent.record_end = next;
    }
    return zip;
}

std::optional<size_t> Archive::find(std::string_view name) const {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].name == name) return i;
    if (const auto it = by_engine_name_.find(engine_name(name)); it != by_engine_name_.end()) return it->second;
    return std::nullopt;
}

Bytes Archive::extract(size_t index) const {
    if (index >= entries_.size())
        throw Error(at(-1), "no entry #" + std::to_string(index) + " (the archive has " +
                                std::to_string(entries_.size()) + ")");
    return extract(entries_[index]);
}

Bytes Archive::extract(const Entry& e) const {
    const std::string named = "entry \"" + printable(e.name) + "\"";
    if (e.data_offset < 0 || uint64_t(e.data_offset) + e.compressed_size > bytes_.size())
        throw Error(at(e.header_offset), named + " is not in this archive's bytes");
    if (e.flags & 1u) throw Error(at(e.header_offset), named + " is encrypted");
    const ByteSpan stored = bytes_.subspan(size_t(e.data_offset), e.compressed_size);
    Bytes out;
    switch (e.method) {
        case kStored:
            if (e.compressed_size != e.size)
                throw Error(at(e.header_offset), named + " is stored but its sizes differ (" +
                                                     std::to_string(e.compressed_size) + " stored, " +
                                                     std::to_string(e.size) + " uncompressed)");
            out.assign(stored.begin(), stored.end());
            break;
        case kLzma: {
            // {uint8 major, minor; uint16 properties size (5); properties[5]} then an LZMA1 stream,
            // with an end marker when flag bit 1 is set. Decoded as a Source LZMA lump.
            if (stored.size() < 9 || u16(stored, 2) != 5)
                throw Error(at(e.data_offset), named + ": LZMA entry without the 9-byte LZMA properties header");
            Bytes lump(lzma::header_size + stored.size() - 9);
            store<uint32_t>(lump.data(), lzma::magic);
            store<uint32_t>(lump.data() + 4, e.size);
            store<uint32_t>(lump.data() + 8, uint32_t(stored.size() - 9));
            std::copy(stored.begin() + 4, stored.end(), lump.begin() + 12);
            std::string error;
            uint64_t error_at = 0;
            auto decoded = lzma::decode(lump, error, error_at);
            if (!decoded) {
                const int64_t in_entry = error_at >= 12 ? int64_t(error_at) - 12 + 4 : 0;
                throw Error(at(e.data_offset + in_entry), named + ": " + error);
            }
            out = std::move(*decoded);
            break;
        }
        case kDeflated: {
            // Deflate expands at most ~1032:1: a larger claim is a hostile size.
            if (uint64_t(e.size) > uint64_t(e.compressed_size) * 1100 + 65536)
                throw Error(at(e.header_offset), named + " claims " + std::to_string(e.size) + " bytes from " +
                                                     std::to_string(e.compressed_size) + " compressed bytes");
            std::string error;
            out = inflate_raw(stored, e.size, error);
            if (!error.empty()) throw Error(at(e.data_offset), named + ": " + error);
            break;
        }
        default:
            throw Error(at(e.header_offset), named + " uses " + e.method_name() +
                                                 ", which bspkit does not decode (stored, deflate and lzma only)");
    }
    if (out.size() != e.size)
        throw Error(at(e.header_offset), named + " decodes to " + std::to_string(out.size()) + " bytes, the directory says " +
                                             std::to_string(e.size));
    const uint32_t crc = crc32_of(out);
    if (crc != e.crc32)
        throw Error(at(e.data_offset), named + ": CRC-32 " + std::to_string(crc) + " of the data does not match " +
                                           std::to_string(e.crc32) + " in the directory");
    return out;
}

}  // namespace bspkit::zip
