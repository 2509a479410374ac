#include <bspkit/error.hpp>
#include <bspkit/file_io.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <random>
#include <unistd.h>

namespace bspkit {

Bytes read_file(const std::filesystem::path& path) {
    const std::string name = path.string();
    // fopen() succeeds on a directory and ftell() then gives LONG_MAX: ask first.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::is_directory(status)) throw Error({name, "", -1}, "is a directory");
    if (!ec && status.type() != std::filesystem::file_type::regular && status.type() != std::filesystem::file_type::fifo)
        throw Error({name, "", -1}, "is not a regular file");
    std::FILE* f = std::fopen(name.c_str(), "rb");
    if (!f) throw Error({name, "", -1}, std::string("cannot open: ") + std::strerror(errno));
    Bytes data;
    if (std::fseek(f, 0, SEEK_END) == 0) {
        const long size = std::ftell(f);
        if (size > 0) data.reserve(size_t(size));
        std::rewind(f);
    }
    uint8_t buffer[1 << 16];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof buffer, f)) > 0) data.insert(data.end(), buffer, buffer + got);
    const bool failed = std::ferror(f);
    std::fclose(f);
    if (failed) throw Error({name, "", int64_t(data.size())}, "read error");
    return data;
}

void write_file_atomic(const std::filesystem::path& path, ByteSpan data) {
    const std::string name = path.string();
    std::filesystem::path dir = path.parent_path();
    if (dir.empty()) dir = ".";
    std::random_device rd;
    const std::filesystem::path temp =
        dir / ("." + path.filename().string() + ".tmp" + std::to_string(rd() % 1000000));
    const std::string temp_name = temp.string();
    const int fd = ::open(temp_name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw Error({name, "", -1}, std::string("cannot create temporary file: ") + std::strerror(errno));
    size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int err = errno;
            ::close(fd);
            ::unlink(temp_name.c_str());
            throw Error({name, "", int64_t(done)}, std::string("write failed: ") + std::strerror(err));
        }
        done += size_t(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        const int err = errno;
        ::unlink(temp_name.c_str());
        throw Error({name, "", -1}, std::string("flush failed: ") + std::strerror(err));
    }
    if (std::rename(temp_name.c_str(), name.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp_name.c_str());
        throw Error({name, "", -1}, std::string("cannot rename temporary file: ") + std::strerror(err));
    }
}

}  // namespace bspkit
