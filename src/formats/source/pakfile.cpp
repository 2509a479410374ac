// Source pakfile (lump 40): zip reading, writing and safe extraction.
// Zip structures (APPNOTE.TXT): local file header "PK\3\4" (30 bytes + name
// + extra, then the data), central directory records "PK\1\2" (46 bytes +
// name + extra + comment), end of central directory "PK\5\6" (22 bytes + comment).
#include <bspkit/formats/source_pakfile.hpp>

#include <bspkit/file_io.hpp>
#include <bspkit/glob.hpp>
#include <bspkit/lzma.hpp>

#include <lzma.h>
#include <zip.h>

#include <algorithm>
#include <memory>

namespace bspkit::source {

namespace {

constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50, kDescriptorSig = 0x08074b50;
constexpr size_t kLocalSize = 30, kCentralSize = 46, kEndSize = 22;
constexpr uint16_t kNewEntryDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, as deterministic as bspzip's zeros

uint16_t u16(ByteSpan b, size_t at) { return load<uint16_t>(b.data() + at); }
uint32_t u32(ByteSpan b, size_t at) { return load<uint32_t>(b.data() + at); }

std::string printable(std::string_view s) {
    std::string out;
    for (char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 32 && u != 127) {
            out += c;
        } else {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    return out;
}

/// The engine's view of a name: ASCII lower case, '\' as '/'.
std::string engine_name(std::string_view name) {
    std::string out(name);
    for (char& c : out) {
        if (c == '\\') c = '/';
        if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    }
    return out;
}

uint32_t crc32_of(ByteSpan data) { return lzma_crc32(data.data(), data.size(), 0); }

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }
};

}  // namespace

struct Pakfile::Item {
    // Where an entry that came from the archive lives in it.
    size_t central_begin = 0, central_size = 0;  ///< central record as present (extra left out when absent)
    size_t record_begin = 0, record_end = 0;     ///< local header .. end of data (and descriptor)
    std::optional<Bytes> data;                   ///< contents of an added entry
};

Pakfile::Pakfile() = default;
Pakfile::Pakfile(Pakfile&&) noexcept = default;
Pakfile& Pakfile::operator=(Pakfile&&) noexcept = default;
Pakfile::Pakfile(const Pakfile&) = default;
Pakfile& Pakfile::operator=(const Pakfile&) = default;
Pakfile::~Pakfile() = default;

std::string PakEntry::method_name() const {
    switch (method) {
        case kZipStored: return "stored";
        case kZipDeflated: return "deflate";
        case 12: return "bzip2";
        case kZipLzma: return "lzma";
        case 93: return "zstd";
        case 95: return "xz";
        default: return "method " + std::to_string(method);
    }
}

Location Pakfile::at(int64_t zip_offset) const {
    Location l = where_;
    if (l.lump.empty()) l.lump = "pakfile";
    if (zip_offset < 0)
        l.offset = -1;
    else
        l.offset = (where_.offset >= 0 ? where_.offset : 0) + zip_offset;
    return l;
}

// --- Reading ---------------------------------------------------------------

Pakfile Pakfile::read(const Bsp& bsp) {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", -1},
                    "not a Source map (format " + std::string(format_id(bsp.format())) +
                        "): only Source BSP files have a pakfile lump");
    const auto index = bsp.find_lump("pakfile");
    if (!index) throw Error({bsp.file_name(), "header", -1}, "this Source layout has no pakfile lump");
    return parse(bsp.decoded(*index), {bsp.file_name(), std::string(bsp.lump_name(*index)), bsp.entry(*index).offset});
}

Pakfile Pakfile::parse(ByteSpan zip, Location where) {
    Pakfile pak;
    pak.where_ = std::move(where);
    pak.zip_.assign(zip.begin(), zip.end());
    const ByteSpan z = pak.zip_;
    const size_t size = z.size();
    if (size == 0) return pak;  // no pakfile: an empty archive
    if (size < kEndSize)
        throw Error(pak.at(0), "pakfile of " + std::to_string(size) +
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
        throw Error(pak.at(int64_t(size - kEndSize)),
                    "no zip end-of-central-directory record (PK\\5\\6) in the last " +
                        std::to_string(size - lowest) + " bytes");
    const size_t e = *end;
    const uint16_t disk = u16(z, e + 4), cd_disk = u16(z, e + 6), count_disk = u16(z, e + 8), count = u16(z, e + 10);
    const uint32_t cd_size = u32(z, e + 12), cd_offset = u32(z, e + 16);
    const uint16_t comment_length = u16(z, e + 20);
    if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu)
        throw Error(pak.at(int64_t(e)), "zip64 archives are not supported in a pakfile");
    if (disk != 0 || cd_disk != 0)
        throw Error(pak.at(int64_t(e + 4)), "multi-disk zip archive (disk " + std::to_string(disk) + ")");
    if (count_disk != count)
        pak.diagnostics_.push_back({Severity::warning, pak.at(0).lump, pak.at(int64_t(e + 8)).offset,
                                    "end record gives " + std::to_string(count_disk) + " entries on this disk, " +
                                        std::to_string(count) + " in total"});
    const size_t comment_end = std::min<size_t>(size, e + kEndSize + comment_length);
    pak.comment_.assign(reinterpret_cast<const char*>(z.data() + e + kEndSize), comment_end - (e + kEndSize));
    if (e + kEndSize + comment_length != size)
        pak.diagnostics_.push_back(
            {Severity::warning, pak.at(0).lump, pak.at(int64_t(e + 20)).offset,
             "zip comment of " + std::to_string(comment_length) + " bytes " +
                 (e + kEndSize + comment_length > size ? "runs past the end of the lump"
                                                       : "leaves " + std::to_string(size - comment_end) +
                                                             " bytes after the end record")});

    // Offsets are relative to the archive start; an archive with bytes in
    // front of it (or offsets counted from elsewhere) is shifted as a whole.
    const int64_t delta = int64_t(e) - (int64_t(cd_offset) + int64_t(cd_size));
    const int64_t cd_start = int64_t(cd_offset) + delta;
    if (cd_start < 0)
        throw Error(pak.at(int64_t(e + 12)), "central directory of " + std::to_string(cd_size) +
                                                 " bytes does not fit before the end record at offset " +
                                                 std::to_string(pak.at(int64_t(e)).offset));
    if (delta != 0)
        pak.diagnostics_.push_back({Severity::warning, pak.at(0).lump, pak.at(int64_t(e + 16)).offset,
                                    "central directory offset " + std::to_string(cd_offset) + " is off by " +
                                        std::to_string(delta) + " bytes; all offsets shifted to match"});
    const size_t cd_end = e;
    bool reported_missing_extra = false;
    size_t p = size_t(cd_start);
    pak.entries_.reserve(count);
    pak.items_.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const std::string which = "central directory entry " + std::to_string(i);
        if (p + kCentralSize > cd_end)
            throw Error(pak.at(int64_t(p)), which + " (46 bytes) runs past the central directory, which ends at offset " +
                                                std::to_string(pak.at(int64_t(cd_end)).offset) + "; the end record lists " +
                                                std::to_string(count) + " entries");
        if (u32(z, p) != kCentralSig)
            throw Error(pak.at(int64_t(p)), which + ": no central directory signature (PK\\1\\2)");
        PakEntry entry;
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
            throw Error(pak.at(int64_t(p + 28)), which + ": name of " + std::to_string(name_length) +
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
                    pak.diagnostics_.push_back(
                        {Severity::warning, pak.at(0).lump, pak.at(int64_t(p + 30)).offset,
                         "central directory records declare extra fields whose bytes are absent (Xbox 360 "
                         "pakfile layout); read without them"});
                reported_missing_extra = true;
            } else {
                throw Error(pak.at(int64_t(p)), which + " (\"" + printable(entry.name) + "\", " + std::to_string(full) +
                                                    " bytes) runs past the central directory or is not followed by "
                                                    "the next entry");
            }
        }
        // The local header and the data it introduces.
        const int64_t lh = int64_t(local) + delta;
        const std::string named = "entry \"" + printable(entry.name) + "\"";
        if (lh < 0 || uint64_t(lh) + kLocalSize > size)
            throw Error(pak.at(int64_t(p + 42)), named + ": local header offset " + std::to_string(local) +
                                                     " lies outside the " + std::to_string(size) + "-byte archive");
        if (u32(z, size_t(lh)) != kLocalSig)
            throw Error(pak.at(lh), named + ": no local file header signature (PK\\3\\4) where the central "
                                            "directory points");
        const uint64_t data = uint64_t(lh) + kLocalSize + u16(z, size_t(lh) + 26) + u16(z, size_t(lh) + 28);
        if (data + entry.compressed_size > size)
            throw Error(pak.at(lh), named + ": " + std::to_string(entry.compressed_size) + " bytes of data at offset " +
                                        std::to_string(pak.at(int64_t(data)).offset) + " run past the end of the " +
                                        std::to_string(size) + "-byte archive");
        entry.header_offset = lh;
        entry.data_offset = int64_t(data);
        Item item;
        item.central_begin = p;
        item.central_size = record;
        item.record_begin = size_t(lh);
        item.record_end = size_t(data + entry.compressed_size);
        if (entry.flags & 8u) {  // data descriptor, with or without its signature
            const size_t d = item.record_end;
            const size_t length = (d + 4 <= size && u32(z, d) == kDescriptorSig) ? 16 : 12;
            item.record_end = std::min(size, d + length);
        }
        pak.entries_.push_back(std::move(entry));
        pak.items_.push_back(std::move(item));
        p += record;
    }
    if (p < cd_end) pak.directory_padding_.assign(z.begin() + ptrdiff_t(p), z.begin() + ptrdiff_t(cd_end));
    // Padding after a record (Xbox 360 pakfiles align the central directory
    // to 2048 bytes) travels with it, so an unchanged record keeps its layout.
    std::vector<size_t> order(pak.items_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&](size_t x, size_t y) { return pak.items_[x].record_begin < pak.items_[y].record_begin; });
    for (size_t k = 0; k < order.size(); ++k) {
        Item& item = pak.items_[order[k]];
        const size_t next = k + 1 < order.size() ? pak.items_[order[k + 1]].record_begin : size_t(cd_start);
        if (next > item.record_end && next <= size_t(cd_start)) item.record_end = next;
    }
    return pak;
}

std::optional<size_t> Pakfile::find(std::string_view name) const {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].name == name) return i;
    const std::string wanted = engine_name(name);
    for (size_t i = 0; i < entries_.size(); ++i)
        if (engine_name(entries_[i].name) == wanted) return i;
    return std::nullopt;
}

std::vector<size_t> Pakfile::match(std::string_view pattern) const {
    std::string pat(pattern);
    std::replace(pat.begin(), pat.end(), '\\', '/');
    std::vector<size_t> out;
    for (size_t i = 0; i < entries_.size(); ++i) {
        std::string name = entries_[i].name;
        std::replace(name.begin(), name.end(), '\\', '/');
        if (glob_match(pat, name, true)) out.push_back(i);
    }
    return out;
}

Bytes Pakfile::extract(size_t index) const {
    if (index >= entries_.size())
        throw Error(at(-1), "no entry #" + std::to_string(index) + " (the archive has " +
                                std::to_string(entries_.size()) + ")");
    const PakEntry& e = entries_[index];
    const Item& item = items_[index];
    if (item.data) return *item.data;
    const std::string named = "entry \"" + printable(e.name) + "\"";
    if (e.flags & 1u) throw Error(at(e.header_offset), named + " is encrypted");
    const ByteSpan stored = ByteSpan(zip_).subspan(size_t(e.data_offset), e.compressed_size);
    Bytes out;
    switch (e.method) {
        case kZipStored:
            if (e.compressed_size != e.size)
                throw Error(at(e.header_offset), named + " is stored but its sizes differ (" +
                                                     std::to_string(e.compressed_size) + " stored, " +
                                                     std::to_string(e.size) + " uncompressed)");
            out.assign(stored.begin(), stored.end());
            break;
        case kZipLzma: {
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
        default: {
            // Not readable by the engine; libzip decodes what it supports.
            if (uint64_t(e.size) > uint64_t(e.compressed_size) * 1100 + 65536)
                throw Error(at(e.header_offset), named + " claims " + std::to_string(e.size) + " bytes from " +
                                                     std::to_string(e.compressed_size) + " compressed bytes");
            zip_error_t error;
            zip_error_init(&error);
            zip_source_t* source = zip_source_buffer_create(zip_.data(), zip_.size(), 0, &error);
            std::unique_ptr<zip_t, ZipCloser> archive(source ? zip_open_from_source(source, ZIP_RDONLY, &error) : nullptr);
            if (!archive) {
                if (source) zip_source_free(source);
                const std::string why = zip_error_strerror(&error);
                zip_error_fini(&error);
                throw Error(at(e.header_offset), named + " uses " + e.method_name() +
                                                     ", which the engine cannot read, and libzip cannot open the archive: " + why);
            }
            zip_error_fini(&error);
            const zip_int64_t zi = zip_name_locate(archive.get(), e.name.c_str(), ZIP_FL_ENC_RAW);
            zip_file_t* file = zi < 0 ? nullptr : zip_fopen_index(archive.get(), zip_uint64_t(zi), 0);
            if (!file)
                throw Error(at(e.header_offset), named + ": libzip cannot decode " + e.method_name() + ": " +
                                                     zip_strerror(archive.get()));
            out.resize(e.size);
            const zip_int64_t got = zip_fread(file, out.data(), out.size());
            zip_fclose(file);
            if (got != zip_int64_t(out.size()))
                throw Error(at(e.header_offset), named + ": " + e.method_name() + " data decodes to " +
                                                     std::to_string(got) + " of " + std::to_string(e.size) + " bytes");
            break;
        }
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

// --- Editing ---------------------------------------------------------------

void Pakfile::add(std::string_view name, Bytes data) {
    std::string why;
    if (!entry_path(name, &why) || name.back() == '/' || name.back() == '\\')
        throw Error(at(-1), "cannot add \"" + printable(name) + "\": " +
                                (why.empty() ? "a file name must not end with a slash" : why));
    std::string stored_name(name);
    std::replace(stored_name.begin(), stored_name.end(), '\\', '/');
    if (stored_name.size() > 0xFFFF) throw Error(at(-1), "cannot add an entry with a name of 64 KiB or more");
    if (data.size() > 0xFFFFFFFEu) throw Error(at(-1), "cannot add \"" + printable(name) + "\": 4 GiB or more");
    PakEntry entry;
    entry.name = std::move(stored_name);
    entry.method = kZipStored;
    entry.dos_date = kNewEntryDate;
    entry.crc32 = crc32_of(data);
    entry.size = entry.compressed_size = uint32_t(data.size());
    Item item;
    item.data = std::move(data);
    if (const auto existing = find(entry.name)) {
        entries_[*existing] = std::move(entry);
        items_[*existing] = std::move(item);
    } else {
        entries_.push_back(std::move(entry));
        items_.push_back(std::move(item));
    }
    modified_ = true;
}

void Pakfile::remove(size_t index) {
    if (index >= entries_.size()) throw Error(at(-1), "no entry #" + std::to_string(index));
    entries_.erase(entries_.begin() + ptrdiff_t(index));
    items_.erase(items_.begin() + ptrdiff_t(index));
    modified_ = true;
}

size_t Pakfile::remove_matching(std::string_view pattern) {
    const std::vector<size_t> hits = match(pattern);
    for (auto it = hits.rbegin(); it != hits.rend(); ++it) remove(*it);
    return hits.size();
}

Bytes Pakfile::serialize() const {
    if (!modified_) return zip_;
    if (entries_.size() > 0xFFFE) throw Error(at(-1), "a zip archive without zip64 holds at most 65534 entries");
    Bytes out;
    std::vector<uint32_t> offsets(entries_.size());
    auto check_size = [&] {
        if (out.size() > 0xFFFFFFF0u) throw Error(at(-1), "the pakfile would exceed 4 GiB");
    };
    for (size_t i = 0; i < entries_.size(); ++i) {
        const PakEntry& e = entries_[i];
        const Item& item = items_[i];
        offsets[i] = uint32_t(out.size());
        if (!item.data) {
            out.insert(out.end(), zip_.begin() + ptrdiff_t(item.record_begin), zip_.begin() + ptrdiff_t(item.record_end));
        } else {
            append<uint32_t>(out, kLocalSig);
            append<uint16_t>(out, 10);  // version needed: 1.0 (stored)
            append<uint16_t>(out, 0);   // flags
            append<uint16_t>(out, kZipStored);
            append<uint16_t>(out, e.dos_time);
            append<uint16_t>(out, e.dos_date);
            append<uint32_t>(out, e.crc32);
            append<uint32_t>(out, e.compressed_size);
            append<uint32_t>(out, e.size);
            append<uint16_t>(out, uint16_t(e.name.size()));
            append<uint16_t>(out, 0);  // extra
            out.insert(out.end(), e.name.begin(), e.name.end());
            out.insert(out.end(), item.data->begin(), item.data->end());
        }
        check_size();
    }
    const size_t cd_start = out.size();
    for (size_t i = 0; i < entries_.size(); ++i) {
        const PakEntry& e = entries_[i];
        const Item& item = items_[i];
        if (!item.data) {
            const size_t at_record = out.size();
            out.insert(out.end(), zip_.begin() + ptrdiff_t(item.central_begin),
                       zip_.begin() + ptrdiff_t(item.central_begin + item.central_size));
            store<uint32_t>(out.data() + at_record + 42, offsets[i]);
        } else {
            append<uint32_t>(out, kCentralSig);
            append<uint16_t>(out, 20);  // made by: 2.0, MS-DOS (as bspzip)
            append<uint16_t>(out, 10);  // needed: 1.0
            append<uint16_t>(out, 0);
            append<uint16_t>(out, kZipStored);
            append<uint16_t>(out, e.dos_time);
            append<uint16_t>(out, e.dos_date);
            append<uint32_t>(out, e.crc32);
            append<uint32_t>(out, e.compressed_size);
            append<uint32_t>(out, e.size);
            append<uint16_t>(out, uint16_t(e.name.size()));
            append<uint16_t>(out, 0);  // extra
            append<uint16_t>(out, 0);  // comment
            append<uint16_t>(out, 0);  // disk
            append<uint16_t>(out, 0);  // internal attributes
            append<uint32_t>(out, 0);  // external attributes
            append<uint32_t>(out, offsets[i]);
            out.insert(out.end(), e.name.begin(), e.name.end());
        }
        check_size();
    }
    out.insert(out.end(), directory_padding_.begin(), directory_padding_.end());
    const size_t cd_size = out.size() - cd_start;
    append<uint32_t>(out, kEndSig);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, uint16_t(entries_.size()));
    append<uint16_t>(out, uint16_t(entries_.size()));
    append<uint32_t>(out, uint32_t(cd_size));
    append<uint32_t>(out, uint32_t(cd_start));
    const std::string_view comment = std::string_view(comment_).substr(0, 0xFFFF);
    append<uint16_t>(out, uint16_t(comment.size()));
    out.insert(out.end(), comment.begin(), comment.end());
    check_size();
    return out;
}

bool Pakfile::write_to(Bsp& bsp) const {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", -1}, "not a Source map: only Source BSP files have a pakfile lump");
    if (!modified_) return false;
    const auto index = bsp.find_lump("pakfile");
    if (!index) throw Error({bsp.file_name(), "header", -1}, "this Source layout has no pakfile lump");
    bsp.replace(*index, serialize());
    return true;
}

// --- Extraction ------------------------------------------------------------

std::optional<std::filesystem::path> entry_path(std::string_view name, std::string* why) {
    auto refuse = [&](std::string reason) -> std::optional<std::filesystem::path> {
        if (why) *why = std::move(reason);
        return std::nullopt;
    };
    if (why) why->clear();
    if (name.empty()) return refuse("empty name");
    if (name.find('\0') != std::string_view::npos) return refuse("NUL byte in the name");
    std::string n(name);
    std::replace(n.begin(), n.end(), '\\', '/');
    if (n.front() == '/') return refuse("absolute path");
    if (n.size() >= 2 && n[1] == ':' && ((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z')))
        return refuse("drive letter \"" + n.substr(0, 2) + "\"");
    if (n.find(':') != std::string::npos) return refuse("':' in the name (drive or stream name)");
    std::filesystem::path out;
    size_t start = 0;
    while (start <= n.size()) {
        size_t slash = n.find('/', start);
        if (slash == std::string::npos) slash = n.size();
        const std::string part = n.substr(start, slash - start);
        start = slash + 1;
        if (part.empty() || part == ".") continue;
        if (part == "..") return refuse("\"..\" component");
        out /= part;
    }
    if (out.empty()) return refuse("no file name");
    return out;
}

ExtractSummary extract_to(const Pakfile& pak, const std::filesystem::path& dir, std::span<const std::string> patterns) {
    const Location where = pak.at(-1);
    std::vector<size_t> selected;
    if (patterns.empty()) {
        for (size_t i = 0; i < pak.entries().size(); ++i) selected.push_back(i);
    } else {
        std::vector<bool> chosen(pak.entries().size(), false);
        for (const std::string& pattern : patterns) {
            const auto hits = pak.match(pattern);
            if (hits.empty()) throw Error(where, "pattern \"" + pattern + "\" matches no entry; nothing was extracted");
            for (size_t i : hits) chosen[i] = true;
        }
        for (size_t i = 0; i < chosen.size(); ++i)
            if (chosen[i]) selected.push_back(i);
    }
    // Check every path before writing anything.
    std::vector<std::filesystem::path> targets;
    for (size_t i : selected) {
        const PakEntry& e = pak.entries()[i];
        std::string why;
        const auto rel = entry_path(e.name, &why);
        const Location at = pak.at(e.header_offset);
        if (!rel)
            throw Error(at, "entry \"" + printable(e.name) + "\" would be written outside " + dir.string() + ": " + why +
                                "; nothing was extracted");
        std::filesystem::path walk = dir;
        for (const auto& part : *rel) {
            walk /= part;
            std::error_code ec;
            const auto status = std::filesystem::symlink_status(walk, ec);
            if (!ec && std::filesystem::is_symlink(status))
                throw Error(at, "entry \"" + printable(e.name) + "\" would be written through the symbolic link " +
                                    walk.string() + "; nothing was extracted");
        }
        targets.push_back(dir / *rel);
    }
    ExtractSummary summary;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error({dir.string(), "", -1}, "cannot create the directory: " + ec.message());
    for (size_t k = 0; k < selected.size(); ++k) {
        const PakEntry& e = pak.entries()[selected[k]];
        const std::filesystem::path& target = targets[k];
        if (e.directory()) {
            std::filesystem::create_directories(target, ec);
            if (ec) throw Error({target.string(), "", -1}, "cannot create the directory: " + ec.message());
            ++summary.directories;
            continue;
        }
        const Bytes data = pak.extract(selected[k]);
        std::filesystem::create_directories(target.parent_path(), ec);
        if (ec) throw Error({target.parent_path().string(), "", -1}, "cannot create the directory: " + ec.message());
        write_file_atomic(target, data);
        ++summary.files;
        summary.bytes += data.size();
    }
    return summary;
}

}  // namespace bspkit::source
