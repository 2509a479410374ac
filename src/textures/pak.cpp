// Quake / Quake 2 PACK archives (id's qfiles.h): "PACK", int32 dirofs,
// int32 dirlen, then at dirofs dirlen / 64 entries { char name[56]; int32
// filepos, filelen; }. Quake 2 keeps its textures (textures/*.wal) and the
// palette (pics/colormap.pcx) in baseq2/pak0.pak.
#include "records.hpp"

#include <bspkit/textures.hpp>
#include <bspkit/zip.hpp>

#include <algorithm>
#include <fstream>

namespace bspkit::textures {

namespace {

/// Reads `length` bytes at `offset` of an open stream, or throws naming the file.
Bytes read_at(std::ifstream& in, uint64_t offset, uint64_t length, const std::string& name, const std::string& what) {
    Bytes out(static_cast<size_t>(length));
    in.clear();
    in.seekg(std::streamoff(offset));
    if (!in.read(reinterpret_cast<char*>(out.data()), std::streamsize(length)))
        throw Error({name, "", int64_t(offset)}, "cannot read " + what);
    return out;
}

}  // namespace

Pak Pak::open(const std::filesystem::path& path) {
    Pak pak;
    pak.path_ = path;
    const std::string name = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error({name, "", -1}, "cannot open");
    in.seekg(0, std::ios::end);
    const uint64_t size = uint64_t(std::max<std::streamoff>(in.tellg(), 0));
    if (size < sizeof(dpackheader_t))
        throw Error({name, "", 0}, "PACK header (12 bytes) runs past the end of the " + std::to_string(size) + "-byte file");
    const Bytes head = read_at(in, 0, sizeof(dpackheader_t), name, "the PACK header");
    const auto h = record_at<dpackheader_t>(head, 0, name, "PACK header");
    if (std::memcmp(h.ident, "PACK", 4) != 0) throw Error({name, "", 0}, "not a PACK archive (no \"PACK\" identification)");
    if (h.dirofs < 0 || h.dirlen < 0 || h.dirlen % int32_t(sizeof(dpackfile_t)) != 0 ||
        uint64_t(h.dirofs) + uint64_t(h.dirlen) > size)
        throw Error({name, "", 4}, "directory of " + std::to_string(h.dirlen) + " bytes at offset " +
                                       std::to_string(h.dirofs) + " does not fit the " + std::to_string(size) +
                                       "-byte file in 64-byte entries");
    const Bytes dir = read_at(in, uint64_t(h.dirofs), uint64_t(h.dirlen), name, "the PACK directory");
    const size_t count = dir.size() / sizeof(dpackfile_t);
    pak.files_.reserve(count);
    for (size_t k = 0; k < count; ++k) {
        const auto e = record_at<dpackfile_t>(dir, k * sizeof(dpackfile_t), name, "PACK entry");
        const int64_t at = int64_t(h.dirofs) + int64_t(k * sizeof(dpackfile_t));
        if (e.filepos < 0 || e.filelen < 0 || uint64_t(e.filepos) + uint64_t(e.filelen) > size)
            throw Error({name, "", at}, "entry " + std::to_string(k) + " (\"" + field_name(e.name) + "\"): " +
                                            std::to_string(e.filelen) + " bytes at offset " + std::to_string(e.filepos) +
                                            " run past the end of the " + std::to_string(size) + "-byte file");
        pak.files_.emplace_back(zip::engine_name(field_name(e.name)), File{uint32_t(e.filepos), uint32_t(e.filelen)});
    }
    // Later entries of the same name win, as a later write into the archive would.
    std::stable_sort(pak.files_.begin(), pak.files_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return pak;
}

std::optional<Bytes> Pak::read(std::string_view wanted) const {
    const std::string key = zip::engine_name(wanted);
    auto it = std::upper_bound(files_.begin(), files_.end(), key,
                               [](const std::string& k, const auto& a) { return k < a.first; });
    if (it == files_.begin() || std::prev(it)->first != key) return std::nullopt;
    const File& f = std::prev(it)->second;
    std::ifstream in(path_, std::ios::binary);
    if (!in) throw Error({path_.string(), "", -1}, "cannot open");
    return read_at(in, f.offset, f.length, path_.string(), "\"" + key + "\"");
}

}  // namespace bspkit::textures
