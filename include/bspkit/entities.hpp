// The entity lump of every format: an ordered list of entities, each an
// ordered list of key/value pairs (duplicate keys and their order kept).
//
//   bspkit::EntityLump ents = bspkit::read_entities(bsp);    // throws Error
//   ents.entities[0].set("message", "hello");
//   bspkit::write_entities(bsp, ents);                       // bsp.replace(...)
//   bsp.save("out.bsp");
//
// Parsing follows the engines' tokenizers (Quake COM_Parse, Quake 3
// COM_ParseExt, Source MapEntity_ParseToken): whitespace is any byte up to
// ' ' (so CR, LF, tabs), "//" starts a comment outside quotes, a quoted string
// runs to the next '"' with no escape sequences (a backslash is an ordinary
// byte: "wad" "\quake\id1\" is common), may span lines, and a NUL byte ends
// the text. Unquoted words are accepted as tokens, as the engines do.
//
// Writing: an entity list equal to what was parsed gives back the original
// bytes; any other list is written in the compiler form
//   {\n"key" "value"\n}\n ... followed by the original's trailing NUL(s)
// (with "\r\n" instead of "\n" when the original used CRLF).
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit {

/// One "key" "value" pair, as raw bytes (no encoding assumed).
struct KeyValue {
    std::string key;
    std::string value;
    bool operator==(const KeyValue&) const = default;
};

struct Entity {
    std::vector<KeyValue> pairs;
    /// Absolute file offset of the opening '{' when parsed (-1 otherwise; for
    /// an LZMA lump, the lump's offset plus the position in the decoded text).
    /// Not part of equality.
    int64_t offset = -1;

    /// Value of the first pair with this key.
    std::optional<std::string_view> find(std::string_view key) const noexcept;
    /// Value of the first pair with this key, or `fallback`.
    std::string_view get(std::string_view key, std::string_view fallback = {}) const noexcept;
    /// Values of every pair with this key, in order.
    std::vector<std::string_view> get_all(std::string_view key) const;
    /// Sets the first pair with this key, or appends a pair.
    void set(std::string_view key, std::string value);
    /// Removes every pair with this key; returns how many.
    size_t erase(std::string_view key);

    bool operator==(const Entity& other) const noexcept { return pairs == other.pairs; }
};

/// A parsed entity lump that remembers what it was parsed from.
class EntityLump {
public:
    std::vector<Entity> entities;

    /// Parses entity text. `where` names the file and lump for errors; its
    /// offset is the absolute file offset of `text[0]` (-1: report positions
    /// within `text`). `decoded` marks text that was LZMA-decoded (positions
    /// are then also given as bytes of the decoded lump). Throws Error naming
    /// the byte where the text goes wrong.
    static EntityLump parse(ByteSpan text, Location where = {"", "entities", -1}, bool decoded = false);
    static EntityLump parse(std::string_view text, Location where = {"", "entities", -1});

    /// True when `entities` differs from what was parsed (always true for a
    /// list that was not parsed and is not empty).
    bool modified() const;
    /// The lump bytes: the original bytes when unmodified, else canonical().
    Bytes serialize() const;
    /// The compiler form of `entities`, whatever was parsed. Throws Error
    /// when a key or value holds a '"' or NUL byte, which the lump cannot hold.
    Bytes canonical() const;

    /// Trailing NUL bytes written after the text (that of the original; 1 for a new lump).
    size_t trailing_nuls() const noexcept { return trailing_nuls_; }
    /// True when the original used "\r\n" line ends.
    bool crlf() const noexcept { return crlf_; }

private:
    std::string original_;  ///< the parsed bytes (std::string: the parser relies on the NUL after them)
    bool was_parsed_ = false;
    size_t trailing_nuls_ = 1;
    bool crlf_ = false;
};

/// The entity lump of `bsp` (found by name: Blue Shift keeps it at index 1),
/// decoded and parsed. Throws Error when the format has none or it is malformed.
EntityLump read_entities(const Bsp& bsp);

/// Stores `lump` as the entity lump of `bsp` (bsp.replace) unless its bytes
/// equal the current ones, so an unchanged list leaves the file identical
/// (compressed lumps are not re-encoded). Returns true when replaced.
bool write_entities(Bsp& bsp, const EntityLump& lump);

/// Index of the entity lump of `bsp`; throws Error when the format has none.
size_t entity_lump_index(const Bsp& bsp);

/// The N of a brush entity's model value "*N" ('*' then decimal digits only),
/// nullopt for anything else ("", "*", "*-1", "*3x", "models/door.mdl").
std::optional<uint64_t> brush_model_number(std::string_view value);

// --- JSON-safe text -------------------------------------------------------
// Entity text is raw bytes (Quake uses bytes 128-255 for "gold" characters).
// To pass through JSON losslessly, bytes that are not valid UTF-8 are mapped
// to the private-use code points U+EF80..U+EFFF (byte 0x80..0xFF); a real
// U+EF80..U+EFFF in the input is mapped byte by byte the same way, so the
// mapping is a bijection and valid UTF-8 text passes unchanged.

/// Raw bytes -> valid UTF-8.
std::string bytes_to_utf8(std::string_view raw);
/// UTF-8 (as produced by bytes_to_utf8 or typed by a user) -> raw bytes.
std::string utf8_to_bytes(std::string_view utf8);

}  // namespace bspkit
