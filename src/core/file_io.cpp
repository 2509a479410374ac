#include <bspkit/error.hpp>
#include <bspkit/file_io.hpp>

#include "core/file_view.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

namespace bspkit {
namespace {

[[noreturn]] void fail(const std::string& name, int64_t offset, const std::string& what, int err) {
    throw Error({name, "", offset}, what + ": " + std::strerror(err));
}

/// Reads from `fd` until end of file (for files that cannot be mapped).
Bytes read_all(int fd, const std::string& name, size_t size_hint) {
    Bytes data(std::max<size_t>(size_hint, 1u << 16));
    size_t at = 0;
    for (;;) {
        if (at == data.size()) data.resize(at + std::max<size_t>(1u << 16, at / 2));
        const ssize_t n = ::read(fd, data.data() + at, data.size() - at);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            fail(name, int64_t(at), "read error", err);
        }
        if (n == 0) break;
        at += size_t(n);
    }
    data.resize(at);
    return data;
}

/// Directories and devices are refused by name before reading (a directory
/// "reads" as an error or garbage, /dev/zero never ends); pipes are read.
void refuse_unreadable(int fd, const std::string& name, const struct stat& st) {
    const char* what = S_ISDIR(st.st_mode)                         ? "is a directory"
                       : !S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) ? "is not a regular file"
                                                                     : nullptr;
    if (!what) return;
    ::close(fd);
    throw Error({name, "", -1}, what);
}

struct Mapping {
    void* address = nullptr;
    size_t size = 0;
    Mapping(void* a, size_t n) : address(a), size(n) {}
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() { ::munmap(address, size); }
};

}  // namespace

Bytes read_file(const std::filesystem::path& path) {
    const std::string name = path.string();
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(name, -1, "cannot open", errno);
    struct stat st {};
    const bool known = ::fstat(fd, &st) == 0;
    if (known) refuse_unreadable(fd, name, st);
    const size_t hint = (known && S_ISREG(st.st_mode)) ? size_t(st.st_size) + 1 : 0;
    Bytes data = read_all(fd, name, hint);
    ::close(fd);
    return data;
}

FileView own_bytes(Bytes bytes) {
    auto owner = std::make_shared<const Bytes>(std::move(bytes));
    const ByteSpan view(*owner);
    return {view, std::move(owner), std::nullopt};
}

FileView map_file(const std::filesystem::path& path) {
    const std::string name = path.string();
    const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(name, -1, "cannot open", errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int err = errno;
        ::close(fd);
        fail(name, -1, "cannot stat", err);
    }
    refuse_unreadable(fd, name, st);
    if (!S_ISREG(st.st_mode) || st.st_size == 0) {  // pipes, devices, and files whose size stat does not know
        Bytes data = read_all(fd, name, 0);
        ::close(fd);
        return own_bytes(std::move(data));
    }
    const size_t size = size_t(st.st_size);
    void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (address == MAP_FAILED) {  // e.g. a file system without mmap: read it instead
        Bytes data = read_all(fd, name, size + 1);
        ::close(fd);
        return own_bytes(std::move(data));
    }
    ::close(fd);
    auto owner = std::make_shared<const Mapping>(address, size);
    FileOrigin origin{name,
                      static_cast<const uint8_t*>(address),
                      uint64_t(size),
                      uint64_t(st.st_dev),
                      uint64_t(st.st_ino),
                      int64_t(st.st_mtim.tv_sec),
                      int64_t(st.st_mtim.tv_nsec)};
    return {ByteSpan(static_cast<const uint8_t*>(address), size), std::move(owner), std::move(origin)};
}

void write_file_atomic(const std::filesystem::path& path, ByteSpan data) {
    const ByteSpan pieces[] = {data};
    write_file_atomic(path, std::span<const ByteSpan>(pieces));
}

namespace {

/// The origin's file opened again when it is still the file that was mapped; -1 otherwise
/// (and always where the kernel has no copy_file_range).
int reopen_origin(const FileOrigin& origin) {
#if !defined(__linux__) || defined(__EMSCRIPTEN__)
    (void)origin;
    return -1;
#endif
    const int fd = ::open(origin.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || uint64_t(st.st_dev) != origin.device ||
        uint64_t(st.st_ino) != origin.inode || uint64_t(st.st_size) != origin.size ||
        int64_t(st.st_mtim.tv_sec) != origin.mtime_sec || int64_t(st.st_mtim.tv_nsec) != origin.mtime_nsec) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::span<const ByteSpan> pieces, const FileOrigin* origin) {
    const std::string name = path.string();
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    std::random_device rd;
    const std::filesystem::path temp =
        dir / ("." + path.filename().string() + ".tmp" + std::to_string(rd() % 1000000));
    const std::string temp_name = temp.string();
    const int fd = ::open(temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) fail(name, -1, "cannot create temporary file", errno);
    int source = origin ? reopen_origin(*origin) : -1;
    auto give_up = [&](int64_t offset, const std::string& what, int err) {
        if (source >= 0) ::close(source);
        ::close(fd);
        ::unlink(temp_name.c_str());
        fail(name, offset, what, err);
    };
    int64_t done = 0;
    // Gather writes of up to IOV_MAX pieces at a time, resumed after short writes.
    std::vector<iovec> iov;
    iov.reserve(pieces.size());
    auto flush = [&] {
        size_t first = 0;
        while (first < iov.size()) {
            const int count = int(std::min<size_t>(iov.size() - first, IOV_MAX));
            const ssize_t n = ::writev(fd, iov.data() + first, count);
            if (n < 0) {
                if (errno == EINTR) continue;
                give_up(done, "write failed", errno);
            }
            done += n;
            size_t left = size_t(n);
            while (first < iov.size() && left >= iov[first].iov_len) left -= iov[first++].iov_len;
            if (left > 0) {
                iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + left;
                iov[first].iov_len -= left;
            }
        }
        iov.clear();
    };
    // Copies [at, at + length) of the origin's file kernel-side; returns how much it
    // copied (less when the kernel refuses: the rest is then written from the mapping).
    auto copy_from_origin = [&](uint64_t at, uint64_t length) -> uint64_t {
        uint64_t copied = 0;
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
        off_t in = off_t(at);
        while (copied < length) {
            const ssize_t n = ::copy_file_range(source, &in, fd, nullptr, size_t(length - copied), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {  // refused (another file system, no support) or the file shrank: stop copying
                ::close(source);
                source = -1;
                break;
            }
            copied += uint64_t(n);
            done += n;
        }
#else
        (void)at;
        (void)length;
#endif
        return copied;
    };
    // Addresses compared as integers: a piece may belong to any buffer.
    const uintptr_t base = origin ? reinterpret_cast<uintptr_t>(origin->base) : 0;
    const uintptr_t limit = origin ? base + uintptr_t(origin->size) : 0;
    const auto in_origin = [&](ByteSpan p) {
        const uintptr_t at = reinterpret_cast<uintptr_t>(p.data());
        return at >= base && at <= limit && p.size() <= limit - at;
    };
    for (size_t i = 0; i < pieces.size(); ++i) {
        ByteSpan p = pieces[i];
        if (p.empty()) continue;
        if (source < 0 || !in_origin(p)) {
            iov.push_back({const_cast<uint8_t*>(p.data()), p.size()});
            continue;
        }
        // Neighbouring pieces that follow each other in the file go in one copy.
        while (i + 1 < pieces.size() && pieces[i + 1].data() == p.data() + p.size() && in_origin(pieces[i + 1]))
            p = ByteSpan(p.data(), p.size() + pieces[++i].size());
        flush();
        const uint64_t copied = copy_from_origin(uint64_t(reinterpret_cast<uintptr_t>(p.data()) - base), p.size());
        if (copied < p.size()) iov.push_back({const_cast<uint8_t*>(p.data() + copied), size_t(p.size() - copied)});
    }
    flush();
    if (source >= 0) ::close(source);
    if (::fsync(fd) != 0) give_up(-1, "flush failed", errno);
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(temp_name.c_str());
        fail(name, -1, "flush failed", err);
    }
    if (std::rename(temp_name.c_str(), name.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp_name.c_str());
        fail(name, -1, "cannot rename temporary file", err);
    }
}

}  // namespace bspkit
