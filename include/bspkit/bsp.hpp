// The container layer: header, lump directory, compression and byte order of
// every supported BSP format, and the writer that saves it back.
//
//   auto bsp = bspkit::Bsp::open("map.bsp");       // throws bspkit::Error
//   bspkit::ByteSpan planes = bsp.decoded(1);
//   bsp.replace(0, new_entities);
//   bsp.save("out.bsp");                           // temp file + rename
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>
#include <bspkit/format.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit {

/// One lump directory entry as stored (already in host byte order).
/// `version` and `fourcc` exist in Source files only.
struct LumpEntry {
    int32_t offset = 0;
    int32_t length = 0;
    int32_t version = 0;
    uint32_t fourcc = 0;
};

/// How a file's format was recognised.
struct Detection {
    const FormatLayout* layout = nullptr;
    std::optional<int32_t> version;  ///< absent for BSP2/2PSB, which have no version field
    std::string rule;                ///< which rule decided, in words
};

/// Recognises the format from the header bytes (and, for version 29, from the
/// lump contents). Throws Error for unknown or unsupported formats.
Detection detect(ByteSpan file, std::string_view file_name);

/// One Source game lump (an entry of lump 35's directory).
struct GameLump {
    uint32_t id = 0;        ///< fourCC, e.g. 'sprp' stored as fourcc("sprp")
    uint16_t flags = 0;     ///< bit 0: LZMA-compressed
    uint16_t version = 0;
    int32_t offset = 0;     ///< as stored in the directory
    int32_t length = 0;     ///< as stored: for compressed game lumps the uncompressed size
    bool compressed() const noexcept { return flags & 1u; }
    std::string name() const;  ///< the id as four characters, e.g. "sprp"
};

enum class Compression : uint8_t {
    keep,        ///< compressed lumps stay compressed, others stay as they are
    compress,    ///< LZMA every lump but the pakfile, game lumps one by one (bspzip -repack)
    decompress,  ///< remove all compression
};

struct SaveOptions {
    Compression compression = Compression::keep;
};

class Bsp {
public:
    /// Maps and parses a file: lumps stay views of the mapping until a caller
    /// needs decoded bytes (LZMA). Throws Error naming file, lump and offset.
    static Bsp open(const std::filesystem::path& path);
    /// Parses bytes already in memory; `name` is used in messages.
    static Bsp parse(Bytes file_bytes, std::string name);
    /// A new map of `layout` with every lump empty (for tools that build maps).
    static Bsp create(const FormatLayout& layout, std::optional<int32_t> version, ByteOrder order = ByteOrder::little);

    Bsp(Bsp&&) noexcept;
    Bsp& operator=(Bsp&&) noexcept;
    Bsp(const Bsp&) = delete;
    Bsp& operator=(const Bsp&) = delete;
    ~Bsp();

    const std::string& file_name() const noexcept;
    const FormatLayout& layout() const noexcept;
    Format format() const noexcept { return layout().format; }
    std::optional<int32_t> version() const noexcept;
    /// Source map revision (0 for other formats).
    int32_t revision() const noexcept;
    ByteOrder byte_order() const noexcept;
    const Detection& detection() const noexcept;
    /// Warnings found while reading (lumps past EOF, overlaps, misalignment, ...).
    const std::vector<Diagnostic>& diagnostics() const noexcept;
    /// The raw file as read (a view of the mapping for opened files).
    ByteSpan file_bytes() const noexcept;

    size_t lump_count() const noexcept;
    std::string_view lump_name(size_t index) const;
    /// Lump index from a number ("7") or a name ("faces", case-insensitive).
    std::optional<size_t> find_lump(std::string_view index_or_name) const;
    /// The directory entry as read from the file.
    const LumpEntry& entry(size_t index) const;
    /// The lump's bytes as stored (clipped to the end of the file).
    ByteSpan stored(size_t index) const;
    /// Keeps the file's bytes (its mapping, or the bytes given to parse())
    /// alive: a stored() span stays valid while this is held, even after the
    /// Bsp is gone. Decoded and replaced bytes are not covered.
    std::shared_ptr<const void> file_owner() const noexcept;
    /// The lump's bytes after LZMA decompression (same as stored() when not
    /// compressed; the replacement when replaced). For the Source game lump
    /// with compressed game lumps, an uncompressed game lump is built whose
    /// offsets are those it would have at the lump's current offset.
    ByteSpan decoded(size_t index) const;
    /// Decoded length without decoding (from the LZMA header when compressed).
    size_t decoded_length(size_t index) const;
    bool compressed(size_t index) const;
    /// Decodes the LZMA-compressed lumps among `lumps` (and, with `game_lumps`,
    /// the compressed Source game lumps) on up to `threads` threads (0: one per
    /// core), largest first, so that the decoded() calls that follow find them
    /// ready. Lumps that are not compressed, or already decoded, cost nothing.
    /// Raises no error: a lump that cannot be decoded raises it when decoded()
    /// asks for it, as without this call.
    void decode_ahead(std::span<const size_t> lumps, bool game_lumps = true, unsigned threads = 0) const;
    bool replaced(size_t index) const;
    /// Record size for fixed-size lumps (0 when variable) and the record count.
    uint32_t record_size(size_t index) const;
    std::optional<size_t> record_count(size_t index) const;

    /// Source game lumps (empty for other formats).
    const std::vector<GameLump>& game_lumps() const noexcept;
    ByteSpan game_lump_stored(size_t k) const;
    ByteSpan game_lump_decoded(size_t k) const;
    /// True when game lump offsets are relative to lump 35 (console Portal 2).
    bool game_lump_offsets_relative() const noexcept;

    /// Replaces a lump's decoded contents. For the Source game lump the new
    /// bytes are parsed as a game lump directory laid out at the lump's
    /// original offset (what decoded() returns), so extract+replace is identity.
    void replace(size_t index, Bytes decoded_bytes);
    /// Replaces one game lump's decoded contents (Source).
    void replace_game_lump(size_t k, Bytes decoded_bytes);

    /// The file as it would be saved. Unchanged with Compression::keep gives
    /// the input byte for byte; otherwise lumps are laid out again, 4-byte aligned.
    Bytes serialize(const SaveOptions& options = {}) const;
    /// serialize() written to a temporary file beside `path`, then renamed over it;
    /// lumps that stay as they are go to the file straight from the input, uncopied.
    void save(const std::filesystem::path& path, const SaveOptions& options = {}) const;

    struct Impl;

private:
    explicit Bsp(std::unique_ptr<Impl> impl);
    static Bsp from_detected(Bytes file_bytes, std::string name, Detection detection);
    std::unique_ptr<Impl> impl_;
};

/// For tools that build geometry from a map (`bspkit export`, the viewer):
/// throws Error naming the first lump that runs past the end of the file,
/// "FILE: lump NAME at offset N: truncated: runs B bytes past the end of the
/// file (S bytes); --salvage goes on with the K bytes present" (the CLI's
/// --salvage skips this call). The entity lump is exempt: its text is parsed,
/// and damage there is a syntax error.
void require_complete_lumps(const Bsp& bsp);
/// The same for one lump (the pakfile verbs: a pakfile cut off by the end of
/// the file must not list as an empty archive).
void require_complete_lump(const Bsp& bsp, size_t index);

}  // namespace bspkit
