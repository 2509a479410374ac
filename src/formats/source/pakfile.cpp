// Source pakfile (lump 40): zip reading, writing and safe extraction.
// Zip structures (APPNOTE.TXT): local file header "PK\3\4" (30 bytes + name
// + extra, then the data), central directory records "PK\1\2" (46 bytes +
// name + extra + comment), end of central directory "PK\5\6" (22 bytes + comment).
#include <bspkit/formats/source_pakfile.hpp>

#include <bspkit/file_io.hpp>
#include <bspkit/glob.hpp>
#include <bspkit/zip.hpp>


#include <algorithm>
#include <memory>
#include <optional>

namespace bspkit::source {

namespace {

constexpr uint16_t kNewEntryDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, as deterministic as bspzip's zeros
constexpr uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;

using zip::printable;

}  // namespace

struct Pakfile::Item {
    zip::Extent extent;           ///< where an entry that came from the archive lives in it
    std::optional<Bytes> data;    ///< contents of an added entry
};

Pakfile::Pakfile() = default;
Pakfile::Pakfile(Pakfile&&) noexcept = default;
Pakfile& Pakfile::operator=(Pakfile&&) noexcept = default;
Pakfile::Pakfile(const Pakfile&) = default;
Pakfile& Pakfile::operator=(const Pakfile&) = default;
Pakfile::~Pakfile() = default;

Location Pakfile::at(int64_t zip_offset) const { return archive_.at(zip_offset); }

// --- Reading ---------------------------------------------------------------

Pakfile Pakfile::read(const Bsp& bsp) {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", -1},
                    "not a Source map (format " + std::string(format_id(bsp.format())) +
                        "): only Source BSP files have a pakfile lump");
    const auto index = bsp.find_lump("pakfile");
    if (!index) throw Error({bsp.file_name(), "header", -1}, "this Source layout has no pakfile lump");
    Location where{bsp.file_name(), std::string(bsp.lump_name(*index)), bsp.entry(*index).offset};
    if (bsp.compressed(*index) || bsp.replaced(*index)) return parse(bsp.decoded(*index), std::move(where));
    // As stored in the file: the archive views the file's bytes (no copy of a pakfile of megabytes).
    return from_archive(zip::Archive::parse(bsp.stored(*index), bsp.file_owner(), std::move(where)));
}

Pakfile Pakfile::parse(ByteSpan zip, Location where) {
    if (where.lump.empty()) where.lump = "pakfile";
    return from_archive(zip::Archive::parse(Bytes(zip.begin(), zip.end()), std::move(where)));
}

Pakfile Pakfile::from_archive(zip::Archive archive) {
    Pakfile pak;
    pak.archive_ = std::move(archive);
    pak.entries_ = pak.archive_.entries();
    pak.items_.reserve(pak.entries_.size());
    for (const zip::Extent& extent : pak.archive_.extents()) pak.items_.push_back({extent, std::nullopt});
    return pak;
}

const std::string& Pakfile::comment() const noexcept { return archive_.comment(); }
const std::vector<Diagnostic>& Pakfile::diagnostics() const noexcept { return archive_.diagnostics(); }

std::optional<size_t> Pakfile::find(std::string_view name) const {
    for (size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].name == name) return i;
    const std::string wanted = zip::engine_name(name);
    for (size_t i = 0; i < entries_.size(); ++i)
        if (zip::engine_name(entries_[i].name) == wanted) return i;
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
    const Item& item = items_[index];
    if (item.data) return *item.data;
    return archive_.extract(entries_[index]);
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
    entry.crc32 = zip::crc32_of(data);
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
    if (!modified_) return Bytes(archive_.bytes().begin(), archive_.bytes().end());
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
            const ByteSpan z = archive_.bytes();
            out.insert(out.end(), z.begin() + ptrdiff_t(item.extent.record_begin), z.begin() + ptrdiff_t(item.extent.record_end));
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
            const ByteSpan z = archive_.bytes();
            out.insert(out.end(), z.begin() + ptrdiff_t(item.extent.central_begin),
                       z.begin() + ptrdiff_t(item.extent.central_begin + item.extent.central_size));
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
    out.insert(out.end(), archive_.directory_padding().begin(), archive_.directory_padding().end());
    const size_t cd_size = out.size() - cd_start;
    append<uint32_t>(out, kEndSig);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, 0);
    append<uint16_t>(out, uint16_t(entries_.size()));
    append<uint16_t>(out, uint16_t(entries_.size()));
    append<uint32_t>(out, uint32_t(cd_size));
    append<uint32_t>(out, uint32_t(cd_start));
    const std::string_view comment = std::string_view(archive_.comment()).substr(0, 0xFFFF);
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
