// Source VPK archives (version 1 and 2): a *_dir.vpk holds a header
// (vpkheader_v1_t 12 bytes / vpkheader_v2_t 28 bytes), then a tree of
// null-terminated strings: extension { path { file name, vpkentry_t,
// preload bytes } "" } "" ... "" (a single space stands for an empty path
// or extension). A file's data is its preload bytes followed by entryLength
// bytes at entryOffset: in the _dir file after the tree (archive 0x7fff) or
// in NAME_NNN.vpk beside it.
#include "records.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/zip.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace bspkit::textures {

namespace {

constexpr uint32_t kVpkSignature = 0x55aa1234;
constexpr uint16_t kInDirFile = 0x7fff;

}  // namespace

Vpk Vpk::open(const std::filesystem::path& dir_file) { return parse(read_file(dir_file), dir_file); }

Vpk Vpk::parse(Bytes dir_bytes, std::filesystem::path dir_file) {
    Vpk vpk;
    vpk.path_ = std::move(dir_file);
    vpk.dir_ = std::move(dir_bytes);
    const std::string name = vpk.path_.string();
    const ByteSpan d = vpk.dir_;
    const auto v1 = record_at<vpkheader_v1_t>(d, 0, name, "VPK header");
    if (v1.signature != kVpkSignature) throw Error({name, "", 0}, "not a VPK directory (signature is not 0x55aa1234)");
    size_t header = sizeof(vpkheader_v1_t);
    if (v1.version == 2) {
        record_at<vpkheader_v2_t>(d, 0, name, "VPK 2 header");
        header = sizeof(vpkheader_v2_t);
    } else if (v1.version != 1) {
        throw Error({name, "", 4}, "VPK version " + std::to_string(v1.version) + " (1 and 2 are read)");
    }
    if (uint64_t(header) + v1.treeSize > d.size())
        throw Error({name, "", 8}, "directory tree of " + std::to_string(v1.treeSize) + " bytes runs past the end of the " +
                                       std::to_string(d.size()) + "-byte file");
    const size_t end = header + v1.treeSize;
    vpk.data_start_ = end;
    size_t p = header;
    auto string = [&](std::string& out) {
        const auto* begin = d.data() + p;
        const auto* nul = static_cast<const uint8_t*>(std::memchr(begin, 0, end - p));
        if (!nul) throw Error({name, "", int64_t(p)}, "unterminated name in the directory tree");
        out.assign(reinterpret_cast<const char*>(begin), size_t(nul - begin));
        p += out.size() + 1;
    };
    std::string ext, path, file;
    for (;;) {
        string(ext);
        if (ext.empty()) break;
        for (;;) {
            string(path);
            if (path.empty()) break;
            for (;;) {
                string(file);
                if (file.empty()) break;
                const auto e = record_at<vpkentry_t>(d.first(end), p, name, "VPK file entry");
                if (e.terminator != 0xffff)
                    throw Error({name, "", int64_t(p + 16)}, "file entry \"" + zip::printable(file) +
                                                                 "\" does not end with 0xffff");
                p += sizeof(vpkentry_t);
                if (e.preloadBytes > end - p)
                    throw Error({name, "", int64_t(p)}, std::to_string(e.preloadBytes) + " preload bytes of \"" +
                                                            zip::printable(file) + "\" run past the directory tree");
                File f;
                f.crc = e.crc;
                f.archive = e.archiveIndex;
                f.offset = e.entryOffset;
                f.length = e.entryLength;
                f.preload_at = p;
                f.preload = e.preloadBytes;
                p += e.preloadBytes;
                std::string full = path == " " ? "" : path + "/";
                full += file;
                if (ext != " ") full += "." + ext;
                vpk.files_.emplace_back(zip::engine_name(full), f);
            }
        }
    }
    std::stable_sort(vpk.files_.begin(), vpk.files_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    return vpk;
}

std::optional<Bytes> Vpk::read(std::string_view wanted) const {
    const std::string key = zip::engine_name(wanted);
    const auto it = std::lower_bound(files_.begin(), files_.end(), key,
                                     [](const auto& a, const std::string& k) { return a.first < k; });
    if (it == files_.end() || it->first != key) return std::nullopt;
    const File& f = it->second;
    const std::string name = path_.string();
    Bytes out = read_data(key, f);
    if (const uint32_t crc = zip::crc32_of(out); crc != f.crc)
        throw Error({name, "", int64_t(f.preload_at)}, "\"" + key + "\": CRC-32 " + std::to_string(crc) +
                                                           " of the data does not match " + std::to_string(f.crc) +
                                                           " in the directory");
    return out;
}

Bytes Vpk::read_data(const std::string& key, const File& f) const {
    const std::string name = path_.string();
    Bytes out(dir_.begin() + ptrdiff_t(f.preload_at), dir_.begin() + ptrdiff_t(f.preload_at + f.preload));
    if (f.length == 0) return out;
    if (f.archive == kInDirFile) {
        const uint64_t at = uint64_t(data_start_) + f.offset;
        if (at > dir_.size() || dir_.size() - at < f.length)
            throw Error({name, "", int64_t(std::min<uint64_t>(at, dir_.size()))},
                        "\"" + key + "\": " + std::to_string(f.length) + " bytes at offset " + std::to_string(at) +
                            " run past the end of the directory file");
        out.insert(out.end(), dir_.begin() + ptrdiff_t(at), dir_.begin() + ptrdiff_t(at + f.length));
        return out;
    }
    // NAME_dir.vpk -> NAME_NNN.vpk
    std::string stem = path_.filename().string();
    const size_t cut = stem.rfind("_dir.vpk");
    if (cut == std::string::npos)
        throw Error({name, "", -1}, "\"" + key + "\" is in archive " + std::to_string(f.archive) +
                                        ", but the directory file is not named *_dir.vpk");
    char number[16];
    std::snprintf(number, sizeof number, "_%03u.vpk", unsigned(f.archive));
    const std::filesystem::path archive = path_.parent_path() / (stem.substr(0, cut) + number);
    std::ifstream in(archive, std::ios::binary);
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(archive, ec);
    if (!in || ec) throw Error({archive.string(), "", -1}, "cannot open the VPK archive holding \"" + key + "\"");
    if (uint64_t(f.offset) + f.length > size)
        throw Error({archive.string(), "", int64_t(f.offset)},
                    "\"" + key + "\": " + std::to_string(f.length) + " bytes at offset " + std::to_string(f.offset) +
                        " run past the end of the " + std::to_string(size) + "-byte archive");
    const size_t at = out.size();
    out.resize(at + f.length);
    in.seekg(std::streamoff(f.offset));
    if (!in.read(reinterpret_cast<char*>(out.data() + at), std::streamsize(f.length)))
        throw Error({archive.string(), "", int64_t(f.offset)}, "cannot read \"" + key + "\"");
    return out;
}

}  // namespace bspkit::textures
