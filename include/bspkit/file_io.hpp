// Whole-file reading and crash-safe writing.
#pragma once

#include <bspkit/bytes.hpp>

#include <filesystem>

namespace bspkit {

/// Reads a whole file; throws Error (lump "file") when it cannot.
Bytes read_file(const std::filesystem::path& path);

/// Writes `data` to a temporary file in the target's directory, flushes it
/// and renames it over `path`: readers see the old file or the new one, never
/// a half-written one. Throws Error on failure and removes the temporary.
void write_file_atomic(const std::filesystem::path& path, ByteSpan data);

}  // namespace bspkit
