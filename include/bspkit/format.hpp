// The declarative description of every BSP format and version bspkit reads:
// one table per format (lump index -> name, record size per version), in the
// style of ericw-tools' bspversion_t. A new version is a table entry.
#pragma once

#include <array>
#include <bspkit/bytes.hpp>
#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace bspkit {

/// Format ids as printed in all output.
enum class Format : uint8_t { quake1, bsp2, goldsrc, quake2, quake3, nightfire, source };

std::string_view format_id(Format format) noexcept;
std::optional<Format> parse_format_id(std::string_view id) noexcept;

/// How one lump directory entry is laid out on disk.
enum class DirectoryLayout : uint8_t {
    offset_length,  ///< {int fileofs, filelen} — Quake, GoldSrc, Nightfire
    source,         ///< {int fileofs, filelen, version; char fourCC[4]}
    source_l4d2,    ///< {int version, fileofs, filelen; char fourCC[4]} — Left 4 Dead 2
};

/// Record size of a lump under a condition: the first rule that matches wins.
/// `lump_version` < 0 matches any per-lump version (Source only has those).
/// A rule's `bytes` value meaning "no fixed record size under this condition".
inline constexpr uint32_t kVariableUnderRule = UINT32_MAX;

struct SizeRule {
    int min_map_version = 0;
    int max_map_version = INT_MAX;
    int lump_version = -1;
    uint32_t bytes = 0;  ///< 0 marks an unused rule slot; kVariableUnderRule = variable
};

/// One lump of a format: its name as in the specs and its record size
/// (0 for lumps of variable layout: text, bit vectors, nested directories).
struct LumpDef {
    std::string_view name;
    uint32_t record_size = 0;
    std::array<SizeRule, 3> rules{};  ///< version-specific sizes, checked before record_size
};

/// A format variant: header shape plus its lump table.
struct FormatLayout {
    Format format;
    std::string_view variant;      ///< "" for the plain format, else e.g. "bshift", "2PSB", "l4d2"
    std::string_view description;  ///< human name, e.g. "Quake 2 (IBSP 38)"
    uint32_t magic;                ///< little-endian fourCC of the ident field, 0 when none
    bool has_version;              ///< an int version field follows the magic (or stands alone)
    DirectoryLayout directory;
    bool has_revision;             ///< Source: int mapRevision after the directory
    std::span<const LumpDef> lumps;

    uint32_t directory_offset() const noexcept { return (magic ? 4u : 0u) + (has_version ? 4u : 0u); }
    uint32_t entry_size() const noexcept { return directory == DirectoryLayout::offset_length ? 8u : 16u; }
    uint32_t header_size() const noexcept {
        return directory_offset() + entry_size() * uint32_t(lumps.size()) + (has_revision ? 4u : 0u);
    }
    /// Record size of lump `index` for a map version and per-lump version; 0 = variable.
    uint32_t record_size(size_t index, int map_version, int lump_version) const noexcept;
    /// Index of the lump with this name (case-insensitive), if any.
    std::optional<size_t> find_lump(std::string_view name) const noexcept;
};

/// Well-known Source lump indices used by the container layer.
namespace source_lump {
inline constexpr size_t entities = 0;
inline constexpr size_t game_lump = 35;
inline constexpr size_t pakfile = 40;
inline constexpr size_t xzip_pakfile = 57;
}  // namespace source_lump

/// All layouts bspkit reads, one per format variant.
namespace layouts {
const FormatLayout& quake1();
const FormatLayout& bsp2();
const FormatLayout& bsp2_2psb();
const FormatLayout& goldsrc();
const FormatLayout& goldsrc_bshift();
const FormatLayout& quake2();
const FormatLayout& quake3();
const FormatLayout& nightfire();
const FormatLayout& source();
const FormatLayout& source_l4d2();
}  // namespace layouts

}  // namespace bspkit
