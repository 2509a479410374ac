// Wavefront OBJ + MTL writer. Speed matters (maps of a million vertices):
// numbers are formatted with std::to_chars (integers, the common case for
// BSP coordinates, take a shorter path) into large buffers, the work split
// in two halves formatted on two threads (OBJ indices are global, so each
// half knows its first vertex number in advance), textures encoded to PNG on
// a third while the text is formatted, and the result written in a few big
// write() calls to a temporary file renamed over the target.
#include "images.hpp"
#include "lighting.hpp"
#include "selection.hpp"

#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>
#include <bspkit/export.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/format.hpp>
#include <bspkit/version.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <random>
#include <span>
#include <unistd.h>

namespace bspkit::exporter {
namespace {

using model::Vec3;

/// Appends text to a growing buffer without per-call checks: callers reserve
/// room for a line first (every line here is shorter than kLine bytes). The
/// storage is not zero-filled and is sized from an estimate up front, so the
/// text is written once, not copied on growth.
class Text {
public:
    static constexpr size_t kLine = 256;

    explicit Text(size_t estimate = 0) { grow(estimate + kLine); }

    void reserve_line() {
        if (capacity_ - used_ < kLine) grow(capacity_ * 2);
    }
    char* cursor() noexcept { return data_.get() + used_; }
    void advance_to(char* p) noexcept { used_ = size_t(p - data_.get()); }
    void append(std::string_view s) {
        if (capacity_ - used_ < s.size() + kLine) grow(std::max(capacity_ * 2, used_ + s.size() + kLine));
        std::memcpy(data_.get() + used_, s.data(), s.size());
        used_ += s.size();
    }
    std::string_view view() const noexcept { return {data_.get(), used_}; }

private:
    void grow(size_t capacity) {
        auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
        if (used_) std::memcpy(bigger.get(), data_.get(), used_);
        data_ = std::move(bigger);
        capacity_ = capacity;
    }

    std::unique_ptr<char[]> data_;
    size_t capacity_ = 0, used_ = 0;
};

/// Bytes of OBJ text for a run of groups, rounded up: a vertex's v / vt / vn
/// lines rarely pass 100 bytes, a face line 80 (pages never touched cost nothing).
size_t estimate_text(uint64_t vertices, uint64_t triangles) { return size_t(vertices * 112 + triangles * 88 + 4096); }

inline char* put_float(char* p, float v) {
    if (!std::isfinite(v)) v = 0;
    // Whole numbers (most BSP coordinates, axial normals) as integers.
    if (v >= -1e7f && v <= 1e7f) {
        const auto i = int32_t(v);
        if (float(i) == v) return std::to_chars(p, p + 32, i).ptr;  // -0 becomes "0"

    }
    return std::to_chars(p, p + 32, v).ptr;
}

inline char* put_uint(char* p, uint64_t v) { return std::to_chars(p, p + 24, v).ptr; }

/// One unit of formatting work: surfaces [begin, end) of a usemtl group of
/// one model (a group is cut in two where the halves of the work meet).
struct Job {
    size_t selected = 0;  ///< index into Selection::models
    const model::Model* model = nullptr;
    const detail::Group* group = nullptr;
    bool starts_model = false;
    bool starts_group = true;
    std::string_view material;  ///< MTL name
    uint64_t first_vertex = 1;  ///< OBJ index of the job's first vertex
    size_t begin = 0, end = 0;  ///< range of group->surfaces
    uint64_t vertices = 0, indices = 0;
};

void format_group(const Job& job, const detail::Axes& axes, const detail::BakeLayout& bake_layout, Text& out) {
    const model::Model& m = *job.model;
    if (job.starts_model) {
        out.append(m.index == 0 ? "o world\n" : "o model_" + std::to_string(m.index) + "\n");
    }
    if (job.starts_group) {
        out.append("usemtl ");
        out.append(job.material);
        out.append("\n");
    }
    const std::span<const uint32_t> surfaces(job.group->surfaces.data() + job.begin, job.end - job.begin);
    for (const uint32_t si : surfaces) {
        const model::Surface& s = m.surfaces[si];
        detail::NormalFixer fix(s);
        for (const model::Vertex& v : s.vertices) {
            out.reserve_line();
            char* p = out.cursor();
            const Vec3 pos = axes.point(v.position + m.origin);
            const Vec3 n = axes.direction(fix(v));
            *p++ = 'v', *p++ = ' ';
            p = put_float(p, pos.x), *p++ = ' ';
            p = put_float(p, pos.y), *p++ = ' ';
            p = put_float(p, pos.z), *p++ = '\n';
            const model::Vec2 uv = job.group->lit ? bake_layout.uv(job.selected, si, v.lightmap_uv)  // the baked texture's
                                                  : v.uv;
            *p++ = 'v', *p++ = 't', *p++ = ' ';
            p = put_float(p, uv.x), *p++ = ' ';
            p = put_float(p, 1.0f - uv.y), *p++ = '\n';
            *p++ = 'v', *p++ = 'n', *p++ = ' ';
            p = put_float(p, n.x), *p++ = ' ';
            p = put_float(p, n.y), *p++ = ' ';
            p = put_float(p, n.z), *p++ = '\n';
            out.advance_to(p);
        }
    }
    uint64_t base = job.first_vertex;
    for (const uint32_t si : surfaces) {
        const model::Surface& s = m.surfaces[si];
        for (size_t i = 0; i + 2 < s.indices.size(); i += 3) {
            uint32_t a = s.indices[i], b = s.indices[i + 1], c = s.indices[i + 2];
            if (detail::needs_flip(s, a, b, c)) std::swap(b, c);
            out.reserve_line();
            char* p = out.cursor();
            *p++ = 'f';
            for (const uint32_t k : {a, b, c}) {  // "n/n/n": formatted once, copied twice
                *p++ = ' ';
                char* const first = p;
                p = put_uint(p, base + k);
                const size_t digits = size_t(p - first);
                *p++ = '/';
                std::memcpy(p, first, digits);
                p += digits;
                *p++ = '/';
                std::memcpy(p, first, digits);
                p += digits;
            }
            *p++ = '\n';
            out.advance_to(p);
        }
        base += s.vertices.size();
    }
}

/// A file written through a temporary beside it and renamed on commit();
/// the temporary is removed when destroyed uncommitted.
class AtomicFile {
public:
    explicit AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
        std::filesystem::path dir = path_.parent_path();
        if (dir.empty()) dir = ".";
        std::random_device rd;
        // Appended piece by piece: "." + a temporary string sets off GCC 12's -Wrestrict (a false positive).
        std::string name = ".";
        name += path_.filename().string();
        name += ".tmp";
        name += std::to_string(rd() % 1000000);
        temp_ = dir / name;
        fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd_ < 0) throw Error({path_.string(), "", -1}, std::string("cannot create temporary file: ") + std::strerror(errno));
    }
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;
    ~AtomicFile() {
        if (fd_ >= 0) ::close(fd_);
        if (!committed_) ::unlink(temp_.c_str());
    }

    void write(std::string_view data) {
        size_t done = 0;
        while (done < data.size()) {
            const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
            if (n < 0) {
                if (errno == EINTR) continue;
                throw Error({path_.string(), "", int64_t(written_ + done)}, std::string("write failed: ") + std::strerror(errno));
            }
            done += size_t(n);
        }
        written_ += done;
    }

    void commit() {
        const int fd = fd_;
        fd_ = -1;
        if (::fsync(fd) != 0 || ::close(fd) != 0)
            throw Error({path_.string(), "", -1}, std::string("flush failed: ") + std::strerror(errno));
        if (std::rename(temp_.c_str(), path_.c_str()) != 0)
            throw Error({path_.string(), "", -1}, std::string("cannot rename temporary file: ") + std::strerror(errno));
        committed_ = true;
    }

private:
    std::filesystem::path path_, temp_;
    int fd_ = -1;
    bool committed_ = false;
    uint64_t written_ = 0;
};

}  // namespace

Summary write_obj(const model::Map& map, const std::filesystem::path& path, const Options& options) {
    if (format_for_path(path) != FileFormat::obj)
        throw std::invalid_argument("write_obj: " + path.string() + " does not end in .obj");
    if (!(options.scale > 0) || !std::isfinite(options.scale))
        throw std::invalid_argument("export scale must be a positive number");
    const detail::Selection selection = detail::select(map, options, options.lighting == Lighting::baked);
    const detail::Axes axes{options.scale, options.y_up};
    const std::string stem = detail::safe_file_stem(path);
    const std::filesystem::path dir = path.parent_path();
    detail::make_output_dir(path);

    // Materials (lit or not) in order of first use, with unique MTL names; textures to encode.
    std::vector<int32_t> mtl_of(map.materials.size() * 2, -1);  // [material * 2 + lit]
    const auto key = [](const detail::Group& g) { return size_t(g.material) * 2 + (g.lit ? 1 : 0); };
    std::vector<std::pair<uint32_t, bool>> used_materials;
    bool lit = false;
    std::vector<std::string> mtl_names;
    std::vector<int32_t> textures;
    std::vector<bool> texture_used(map.textures.size());
    detail::UniqueNames unique;
    for (const auto& sm : selection.models)
        for (const auto& g : sm.groups) {
            if (mtl_of[key(g)] >= 0) continue;
            mtl_of[key(g)] = int32_t(used_materials.size());
            used_materials.emplace_back(g.material, g.lit);
            mtl_names.push_back(unique(map.materials[g.material].name));
            lit = lit || g.lit;
            const int32_t t = map.materials[g.material].texture;
            if (options.textures && t >= 0 && !g.lit && !texture_used[size_t(t)]) {
                texture_used[size_t(t)] = true;
                textures.push_back(t);
            }
        }
    std::function<model::Texture()> bake;
    detail::BakeLayout bake_layout;  // before the texture: lit vertices' vt are in it
    if (lit) {
        bake_layout = detail::plan_bake(map, selection, *selection.lightmap, options);
        bake = [&] { return detail::bake(map, selection, *selection.lightmap, options, bake_layout).image; };
    }
    auto images = detail::encode_images_async(map, textures, nullptr, std::move(bake), options.png_compression,
                                              detail::ImageFiles{dir, stem + "_"});

    // Jobs, and the vertex number each starts at.
    std::vector<Job> jobs;
    uint64_t next_vertex = 1;
    for (size_t mi = 0; mi < selection.models.size(); ++mi) {
        const auto& sm = selection.models[mi];
        bool first = true;
        for (const auto& g : sm.groups) {
            jobs.push_back(Job{mi, sm.model, &g, first, true, mtl_names[size_t(mtl_of[key(g)])], next_vertex, 0,
                               g.surfaces.size(), g.vertices, g.indices});
            next_vertex += g.vertices;
            first = false;
        }
    }
    // Two halves of about equal vertex counts, formatted in parallel: the job
    // where the halves meet is cut at a surface boundary.
    size_t split = 0;
    uint64_t first_vertices = 0;
    while (split < jobs.size() && (first_vertices + jobs[split].vertices) * 2 <= selection.vertices)
        first_vertices += jobs[split++].vertices;
    if (split < jobs.size()) {
        Job& job = jobs[split];
        const model::Model& m = *job.model;
        Job tail = job;
        uint64_t vertices = 0, indices = 0;
        size_t cut = job.begin;
        while (cut < job.end && (first_vertices + vertices) * 2 < selection.vertices) {
            vertices += m.surfaces[job.group->surfaces[cut]].vertices.size();
            indices += m.surfaces[job.group->surfaces[cut]].indices.size();
            ++cut;
        }
        const bool first_part = cut > job.begin;  // read before insert() moves `job`
        if (cut > job.begin && cut < job.end) {
            job.end = cut;
            job.vertices = vertices;
            job.indices = indices;
            tail.begin = cut;
            tail.starts_model = tail.starts_group = false;
            tail.first_vertex = job.first_vertex + vertices;
            tail.vertices -= vertices;
            tail.indices -= indices;
            jobs.insert(jobs.begin() + long(split) + 1, tail);
        }
        if (first_part) ++split;
    }
    first_vertices = 0;
    uint64_t first_indices = 0, second_vertices = 0, second_indices = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
        (j < split ? first_vertices : second_vertices) += jobs[j].vertices;
        (j < split ? first_indices : second_indices) += jobs[j].indices;
    }
    Text head, first_half(estimate_text(first_vertices, first_indices / 3)),
        second_half(estimate_text(second_vertices, second_indices / 3));
    head.append("# bspkit " + std::string(kVersion) + " export of a " + std::string(format_id(map.format)) +
                " map: " + std::to_string(selection.vertices) + " vertices, " + std::to_string(selection.triangles) +
                " triangles (Z-up map axes" + (options.y_up ? " turned Y-up" : "") + ")\n");
    head.append("mtllib " + stem + ".mtl\n");
    const auto format_range = [&](size_t from, size_t to, Text& out, bool report) {
        for (size_t j = from; j < to; ++j) {
            format_group(jobs[j], axes, bake_layout, out);
            if (report && options.progress) options.progress("geometry", double(j + 1 - from) / double(to - from));
        }
    };
    bspkit::detail::Background<void> second([&] { format_range(split, jobs.size(), second_half, false); });
    format_range(0, split, first_half, true);
    second.get();

    // The material library.
    Text mtl;
    mtl.append("# bspkit " + std::string(kVersion) + " materials\n");
    if (options.progress) options.progress("images", -1);
    std::vector<detail::Image> encoded = images.get();
    std::vector<std::string> texture_file(map.textures.size());
    std::string baked_file;
    Summary summary;
    for (const detail::Image& img : encoded) {
        summary.files.push_back(img.file);
        (img.texture >= 0 ? texture_file[size_t(img.texture)] : baked_file) = img.file.filename().string();
    }
    for (size_t i = 0; i < used_materials.size(); ++i) {
        const model::Material& mat = map.materials[used_materials[i].first];
        mtl.append("\nnewmtl " + mtl_names[i] + "\n");
        std::string comment = bytes_to_utf8(mat.name);
        std::replace_if(comment.begin(), comment.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
        mtl.append("# " + comment + "\n");
        const bool flat = used_materials[i].second && !(options.textures && mat.texture >= 0);
        mtl.append(flat ? "Ka 0 0 0\nKd 0.5 0.5 0.5\nKs 0 0 0\nillum 1\n"  // kUntexturedAlbedo times the baked light
                        : "Ka 0 0 0\nKd 1 1 1\nKs 0 0 0\nillum 1\n");
        if (mat.flags & model::kTranslucent) mtl.append("d 0.5\n");
        static const std::string kNone;
        const std::string& file = used_materials[i].second ? baked_file
                                  : mat.texture >= 0             ? texture_file[size_t(mat.texture)]
                                                                 : kNone;
        if (!file.empty()) {
            mtl.append("map_Kd " + file + "\n");
            if (mat.flags & model::kAlphaTest) mtl.append("map_d " + file + "\n");
        }
    }
    const std::filesystem::path mtl_path = dir / (stem + ".mtl");
    write_file_atomic(mtl_path, ByteSpan(reinterpret_cast<const uint8_t*>(mtl.view().data()), mtl.view().size()));
    summary.files.push_back(mtl_path);

    if (options.progress) options.progress("writing", 0);
    AtomicFile file(path);
    file.write(head.view());
    file.write(first_half.view());
    file.write(second_half.view());
    file.commit();
    if (options.progress) options.progress("writing", 1);
    summary.files.push_back(path);
    summary.models = selection.models.size();
    summary.primitives = jobs.size();
    summary.vertices = selection.vertices;
    summary.triangles = selection.triangles;
    summary.materials = used_materials.size();
    summary.images = encoded.size();
    summary.skipped_surfaces = selection.skipped_surfaces;
    summary.skipped_models = selection.skipped_models;
    return summary;
}

}  // namespace bspkit::exporter
