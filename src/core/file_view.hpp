// Private to the library: the input file as a memory mapping, and writing a
// file from several pieces (the container's reader and writer use these).
#pragma once

#include <bspkit/bytes.hpp>

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace bspkit {

/// The bytes of a whole file and what keeps them alive: a read-only memory
/// mapping for regular files (pages are read only when touched), the file read
/// into memory otherwise (pipes, character devices, empty files).
/// Where a mapped file came from: enough to find the same file again when a
/// save copies its unchanged ranges kernel-side (copy_file_range).
struct FileOrigin {
    std::string path;
    const uint8_t* base = nullptr;  ///< the mapping's first byte (file offset 0)
    uint64_t size = 0;
    uint64_t device = 0, inode = 0;
    int64_t mtime_sec = 0, mtime_nsec = 0;
};

struct FileView {
    ByteSpan bytes;
    std::shared_ptr<const void> owner;
    std::optional<FileOrigin> origin;  ///< set for a mapping
};

/// Maps (or reads) a whole file; throws Error (lump "") when it cannot.
/// bspkit only ever replaces files by rename, so a mapping never sees its own
/// saves; another program truncating the file in place while it is open is
/// outside what a mapping can guard against (as for any mmap reader).
FileView map_file(const std::filesystem::path& path);

/// Wraps bytes already in memory as a FileView that owns them.
FileView own_bytes(Bytes bytes);

/// write_file_atomic() for a file made of several pieces written one after
/// the other with gather writes (no copy into one buffer). Pieces that lie in
/// `origin`'s mapping are copied from its file by the kernel (copy_file_range,
/// as cp does: no page faults on the mapping, no copy through user memory)
/// when that file is still the one mapped (same device, inode, size and
/// modification time); otherwise, or where the kernel refuses, they are
/// written from the mapping. The bytes written are the same either way.
void write_file_atomic(const std::filesystem::path& path, std::span<const ByteSpan> pieces,
                       const FileOrigin* origin = nullptr);

}  // namespace bspkit
