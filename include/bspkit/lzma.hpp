// Source engine LZMA lumps: a 17-byte header {id 'LZMA', actualSize,
// lzmaSize, properties[5]} (sizes always little-endian) and an LZMA1 stream,
// with or without an end marker. Backed by liblzma.
#pragma once

#include <bspkit/bytes.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace bspkit::lzma {

inline constexpr uint32_t header_size = 17;
inline constexpr uint32_t magic = fourcc("LZMA");

struct Header {
    uint32_t actual_size = 0;
    uint32_t lzma_size = 0;
    uint8_t properties[5] = {};
};

/// The header when `data` starts with one (magic matches and it fits).
std::optional<Header> read_header(ByteSpan data) noexcept;

/// Decodes a Source LZMA lump. On failure returns nullopt and sets `error`
/// (with the offset inside `data` where decoding stopped, when known).
std::optional<Bytes> decode(ByteSpan data, std::string& error, uint64_t& error_offset);

/// Encodes `data` as a Source LZMA lump without an end marker (as bspzip does).
Bytes encode(ByteSpan data);

}  // namespace bspkit::lzma
