// The Source pakfile (lump 40): a zip archive of files the map carries
// (cubemaps, patched materials, .nav, radar images, ...).
//
//   auto pak = bspkit::source::Pakfile::read(bsp);        // throws Error
//   for (const auto& e : pak.entries()) ...
//   Bytes vmt = pak.extract(*pak.find("materials/x.vmt"));
//   pak.add("maps/readme.txt", bytes);
//   pak.write_to(bsp);  bsp.save("out.bsp");
//
// The engine reads stored (method 0) and LZMA (method 14, as written by
// bspzip -repack) entries. Reading goes through the project's bounds-checked
// zip reader (bspkit/zip.hpp), because real pakfiles break zip rules that
// libzip enforces (Xbox 360 maps declare central-directory extra fields whose
// bytes are not there). LZMA entries are decoded with liblzma, deflate (which
// the engine cannot read, but tools write) with zlib; bzip2 and others are
// refused by name.
//
// Writing keeps every existing entry's bytes (local header, data, central
// record) as they are, appends new entries stored uncompressed (what the
// engine and bspzip use), and rebuilds the end record with the old comment.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>
#include <bspkit/zip.hpp>

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::source {

/// Zip compression methods seen in pakfiles.
inline constexpr uint16_t kZipStored = zip::kStored;
inline constexpr uint16_t kZipDeflated = zip::kDeflated;
inline constexpr uint16_t kZipLzma = zip::kLzma;

/// One archive member as recorded in the central directory.
using PakEntry = zip::Entry;

class Pakfile {
public:
    /// The pakfile of a Source map (empty lump = empty archive). Throws Error
    /// for other formats ("not a Source map") and for a malformed archive.
    static Pakfile read(const Bsp& bsp);
    /// Parses zip bytes; `where` names file and lump, its offset is the
    /// absolute file offset of `zip[0]` (-1: offsets within the archive).
    static Pakfile parse(ByteSpan zip, Location where = {"", "pakfile", -1});

    const std::vector<PakEntry>& entries() const noexcept { return entries_; }
    /// Index of the entry named `name`: exact match first, then the engine's
    /// rule (case-insensitive, '\' = '/').
    std::optional<size_t> find(std::string_view name) const;
    /// Indices of entries whose name matches a glob ('*', '?'; case-insensitive,
    /// matched against the name with '\' read as '/').
    std::vector<size_t> match(std::string_view pattern) const;

    /// Decoded contents of entry `index` (CRC-checked). Throws Error naming
    /// the entry and its offset when it cannot be decoded.
    Bytes extract(size_t index) const;

    /// Adds a stored entry, replacing one of the same name (engine rule, see
    /// find()). `name` must be a safe relative path (see entry_path()); '\'
    /// is written as '/'. Throws Error otherwise.
    void add(std::string_view name, Bytes data);
    /// Removes entry `index`.
    void remove(size_t index);
    /// Removes every entry matching `pattern`; returns how many.
    size_t remove_matching(std::string_view pattern);

    bool modified() const noexcept { return modified_; }
    /// The archive bytes: the original bytes when unmodified.
    Bytes serialize() const;
    /// Stores serialize() as lump 40 of `bsp` when modified; returns true when replaced.
    bool write_to(Bsp& bsp) const;

    /// The end record's comment (Valve tools write "XZP1 0" padded to 32 bytes).
    const std::string& comment() const noexcept;
    /// Oddities that did not stop reading (Xbox 360 central-directory padding, ...).
    const std::vector<Diagnostic>& diagnostics() const noexcept;
    /// Location for messages about archive byte `zip_offset` (absolute file
    /// offset when the archive came from a file; -1 for none).
    Location at(int64_t zip_offset) const;

    struct Item;  ///< internal per-entry state
    Pakfile();
    Pakfile(Pakfile&&) noexcept;
    Pakfile& operator=(Pakfile&&) noexcept;
    Pakfile(const Pakfile&);
    Pakfile& operator=(const Pakfile&);
    ~Pakfile();

private:
    static Pakfile from_archive(zip::Archive archive);

    zip::Archive archive_;           ///< the archive as read (bytes, comment, directory padding)
    std::vector<PakEntry> entries_;  ///< as edited
    std::vector<Item> items_;
    bool modified_ = false;
};

/// The relative path an entry name would be written to below an extraction
/// directory ('\' read as '/', "." and empty parts dropped), or nullopt with
/// the reason in `why` when it would land outside it: absolute paths, ".."
/// parts, drive letters ("C:"), NUL bytes or an empty name.
std::optional<std::filesystem::path> entry_path(std::string_view name, std::string* why = nullptr);

struct ExtractSummary {
    size_t files = 0;
    size_t directories = 0;
    uint64_t bytes = 0;
};

/// Extracts the entries selected by `patterns` (all when empty; each pattern
/// must match at least one entry) below `dir`. Every selected entry's path is
/// checked first (entry_path(), and no symbolic link on the way below `dir`):
/// if one is unsafe, Error names it and nothing is written.
ExtractSummary extract_to(const Pakfile& pak, const std::filesystem::path& dir,
                          std::span<const std::string> patterns = {});

}  // namespace bspkit::source
