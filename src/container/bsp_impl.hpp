// Internal state of bspkit::Bsp, shared by the reader and the writer.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/lzma.hpp>
#include <bspkit/once.hpp>

#include "core/file_view.hpp"

#include <deque>
#include <memory>

namespace bspkit {

/// Bytes that may be LZMA-compressed and may be replaced; decoded on first use.
struct Blob {
    ByteSpan stored;                      ///< as in the file (clipped to its end)
    std::optional<lzma::Header> lzma;     ///< set when `stored` is an LZMA lump
    std::optional<Bytes> replacement;     ///< decoded bytes given by the user

    struct Cache {
        OnceFlag once;
        Bytes bytes;
    };
    mutable std::unique_ptr<Cache> cache = std::make_unique<Cache>();

    bool compressed() const noexcept { return !replacement && lzma.has_value(); }
    size_t decoded_length() const noexcept {
        if (replacement) return replacement->size();
        return lzma ? lzma->actual_size : stored.size();
    }
    /// Decoded bytes; throws Error at `where` (offset = stored start in file).
    ByteSpan decoded(const Location& where) const;
};

struct GameLumpState {
    GameLump entry;
    Blob blob;
};

struct Bsp::Impl {
    std::string name;
    ByteSpan file;                         ///< the whole input (a mapping, or bytes given to parse())
    std::shared_ptr<const void> file_owner;  ///< keeps `file` alive
    std::optional<FileOrigin> origin;        ///< where `file` was mapped from (saves copy from it)
    Detection detection;
    const FormatLayout* layout = nullptr;
    ByteOrder order = ByteOrder::little;
    int32_t revision = 0;
    std::vector<LumpEntry> entries;  ///< as read
    std::vector<Blob> lumps;
    std::vector<Diagnostic> diagnostics;

    // Source game lumps (lump 35).
    std::vector<GameLump> game_lump_entries;  ///< public view, without the terminator
    std::vector<GameLumpState> game_lumps;
    bool game_lumps_relative = false;
    bool game_lumps_terminated = false;   ///< an empty last entry closes the directory
    bool game_lumps_edited = false;
    std::vector<std::shared_ptr<const Bytes>> game_lump_storage;  ///< bytes behind replaced game lumps
    mutable std::unique_ptr<Blob::Cache> game_lump_cache = std::make_unique<Blob::Cache>();

    /// Reads the header and directory of `file` (kept alive by `owner`).
    static Bsp from_detected(ByteSpan file, std::shared_ptr<const void> owner, std::string name, Detection detection);

    bool is_source() const noexcept { return layout->format == Format::source; }
    bool has_game_lumps() const noexcept { return is_source() && lumps.size() > source_lump::game_lump; }
    int map_version() const noexcept { return detection.version.value_or(0); }
    Location where(size_t lump, int64_t offset) const;

    /// Parses a game lump directory found in `data`, which sits at file offset `base`.
    void parse_game_lumps(ByteSpan data, int64_t base);
    /// Builds lump 35 for a lump placed at `base`, with each game lump's
    /// payload chosen by `compression`.
    Bytes build_game_lump(int64_t base, Compression compression) const;
    /// The payload a lump or game lump gets when saved with `compression`: a
    /// view of the input, of a replacement or of decoded bytes when those are
    /// the payload, otherwise new bytes kept alive in `keep`.
    ByteSpan payload(const Blob& blob, const Location& where, Compression compression, bool may_compress,
                     std::deque<Bytes>& keep) const;
    /// The file as it would be saved, as pieces written one after the other.
    struct Pieces {
        std::vector<ByteSpan> spans;
        std::deque<Bytes> owned;
        uint64_t size = 0;
        void add(ByteSpan s);
        void zeros(uint64_t n);
    };
    Pieces lay_out(const SaveOptions& options) const;
};

inline uint32_t align4(uint64_t n) { return uint32_t((n + 3) & ~uint64_t(3)); }

}  // namespace bspkit
