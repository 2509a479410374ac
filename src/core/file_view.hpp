// Private to the library: the input file as a memory mapping, and writing a
// file from several pieces (the container's reader and writer use these).
#pragma once

#include <bspkit/bytes.hpp>

#include <filesystem>
#include <memory>
#include <span>

namespace bspkit {

/// The bytes of a whole file and what keeps them alive: a read-only memory
/// mapping for regular files (pages are read only when touched), the file read
/// into memory otherwise (pipes, character devices, empty files).
struct FileView {
    ByteSpan bytes;
    std::shared_ptr<const void> owner;
};

/// Maps (or reads) a whole file; throws Error (lump "") when it cannot.
/// bspkit only ever replaces files by rename, so a mapping never sees its own
/// saves; another program truncating the file in place while it is open is
/// outside what a mapping can guard against (as for any mmap reader).
FileView map_file(const std::filesystem::path& path);

/// Wraps bytes already in memory as a FileView that owns them.
FileView own_bytes(Bytes bytes);

/// write_file_atomic() for a file made of several pieces written one after
/// the other with gather writes (no copy into one buffer).
void write_file_atomic(const std::filesystem::path& path, std::span<const ByteSpan> pieces);

}  // namespace bspkit
