// Typed contents of BSPX lumps: BRUSHLIST, and the per-face lighting lumps
// with the .lit file beside the map (include/bspkit/bspx.hpp).
#include <bspkit/bspx.hpp>
#include <bspkit/file_io.hpp>

#include <algorithm>
#include <cstring>
#include <system_error>

namespace bspkit::bspx {

BrushList decode_brushlist(const Bsp& bsp, const Lump& lump) {
    const std::string name = lump_name(lump.name);
    auto fail = [&](uint64_t at, const std::string& detail) -> void {
        throw Error({bsp.file_name(), name, lump.offset + int64_t(at)}, detail);
    };
    if (lump.truncated()) fail(0, "the lump runs past the end of the file: brushes not decoded");
    const ByteSpan d = lump.data;
    BrushList out;
    uint64_t at = 0;
    // A model header needs 16 bytes, a brush 28: the counts are checked
    // against the bytes left, so a hostile count allocates nothing.
    while (at < d.size()) {
        if (d.size() - at < sizeof(bspx_brushlist_model_t))
            fail(at, std::to_string(d.size() - at) + " bytes left after model " + std::to_string(out.models.size()) +
                         ": a model header needs 16");
        BrushListModel m;
        m.offset = lump.offset + int64_t(at);
        std::memcpy(&m.header, d.data() + at, sizeof m.header);
        if (m.header.numbrushes < 0 || m.header.numplanes < 0)
            fail(at, "model " + std::to_string(m.header.modelnum) + ": numbrushes " +
                         std::to_string(m.header.numbrushes) + " / numplanes " + std::to_string(m.header.numplanes) +
                         " is negative");
        at += sizeof(bspx_brushlist_model_t);
        if (uint64_t(m.header.numbrushes) * sizeof(bspx_brushlist_brush_t) > d.size() - at)
            fail(at - sizeof(bspx_brushlist_model_t),
                 "model " + std::to_string(m.header.modelnum) + ": " + std::to_string(m.header.numbrushes) +
                     " brushes need at least " +
                     std::to_string(uint64_t(m.header.numbrushes) * sizeof(bspx_brushlist_brush_t)) +
                     " bytes, the lump has " + std::to_string(d.size() - at) + " left");
        m.brushes.resize(size_t(m.header.numbrushes));
        for (BrushListBrush& b : m.brushes) {
            if (d.size() - at < sizeof(bspx_brushlist_brush_t))
                fail(at, "brush record cut short: 28 bytes needed, " + std::to_string(d.size() - at) + " left");
            b.offset = lump.offset + int64_t(at);
            std::memcpy(&b.header, d.data() + at, sizeof b.header);
            at += sizeof(bspx_brushlist_brush_t);
            const uint64_t plane_bytes = uint64_t(b.header.numplanes) * sizeof(bspx_brushlist_plane_t);
            if (plane_bytes > d.size() - at)
                fail(at - sizeof(bspx_brushlist_brush_t),
                     "brush of model " + std::to_string(m.header.modelnum) + ": " +
                         std::to_string(b.header.numplanes) + " planes need " + std::to_string(plane_bytes) +
                         " bytes, the lump has " + std::to_string(d.size() - at) + " left");
            b.planes = decode_records<bspx_brushlist_plane_t>(d.subspan(size_t(at), size_t(plane_bytes)),
                                                             ByteOrder::little);
            at += plane_bytes;
        }
        out.models.push_back(std::move(m));
    }
    return out;
}

std::filesystem::path lit_path(const Bsp& bsp) {
    std::filesystem::path p(bsp.file_name());
    return p.replace_extension(".lit");
}

namespace {

/// A per-face lump decoded when its length fits the map, else a diagnostic.
template <class T>
std::vector<T> per_face(const Bsp& bsp, const Directory& dir, std::string_view name, size_t faces, size_t per,
                        Lighting& out) {
    const Lump* l = dir.find(name);
    if (!l) return {};
    try {
        return decode_exact<T>(bsp, *l, faces * per);
    } catch (const Error& e) {
        out.diagnostics.push_back({Severity::warning, e.where().lump, e.where().offset, e.detail() + ": ignored"});
        return {};
    }
}

void read_lit(const Bsp& bsp, size_t mono_bytes, const LightingOptions& options, Lighting& out) {
    const std::filesystem::path path = options.lit ? *options.lit : lit_path(bsp);
    std::error_code ec;
    if (!options.lit && !std::filesystem::is_regular_file(path, ec)) return;
    const std::string shown = path.string();
    Bytes bytes;
    try {
        bytes = read_file(path);
    } catch (const Error& e) {
        out.diagnostics.push_back({Severity::warning, ".lit", -1, shown + ": " + e.detail() + ": not used"});
        return;
    }
    auto reject = [&](int64_t offset, const std::string& why) {
        out.diagnostics.push_back({Severity::warning, ".lit", offset, shown + ": " + why + ": not used"});
    };
    if (bytes.size() < 8 || std::memcmp(bytes.data(), "QLIT", 4) != 0) return reject(0, "no \"QLIT\" header");
    const int32_t version = load<int32_t>(bytes.data() + 4);
    if (version != 1) return reject(4, "version " + std::to_string(version) + " (only 1, RGB bytes, is read)");
    if (bytes.size() - 8 != uint64_t(mono_bytes) * 3)
        return reject(8, std::to_string(bytes.size() - 8) + " bytes of samples, the map's lighting lump needs " +
                             std::to_string(uint64_t(mono_bytes) * 3) + " (3 per byte of its " +
                             std::to_string(mono_bytes) + ")");
    out.lit_storage.assign(bytes.begin() + 8, bytes.end());
    out.rgb = out.lit_storage;
    out.rgb_source = shown;
}

}  // namespace

Lighting read_lighting(const Bsp& bsp, size_t face_count, size_t mono_bytes, bool rgb_native,
                       const LightingOptions& options) {
    Lighting out;
    const Directory dir = read(bsp);
    if (!rgb_native) {
        // QuakeSpasm-Spiked and FTE: a valid .lit first, then RGBLIGHTING.
        if (options.lit_file) read_lit(bsp, mono_bytes, options, out);
        if (out.rgb.empty())
            if (const Lump* l = dir.find("RGBLIGHTING"); l && !l->data.empty()) {
                out.rgb = l->data;
                out.rgb_source = lump_name(l->name);
            }
    }
    if (const Lump* l = dir.find("LIGHTINGDIR")) out.direction = l->data;
    out.lmshift = per_face<uint8_t>(bsp, dir, "LMSHIFT", face_count, 1, out);
    out.decoupled = per_face<bspx_decoupled_lm_t>(bsp, dir, "DECOUPLED_LM", face_count, 1, out);
    out.lmoffset = per_face<int32_t>(bsp, dir, "LMOFFSET", face_count, 1, out);
    // LMSTYLE16 wins over LMSTYLE; either holds a whole number of styles per face.
    for (const char* name : {"LMSTYLE16", "LMSTYLE"}) {
        const Lump* l = dir.find(name);
        if (!l || !out.styles.empty() || face_count == 0) continue;
        const bool wide = std::string_view(name) == "LMSTYLE16";
        const size_t unit = wide ? 2 : 1;
        const size_t per = l->data.size() / (unit * face_count);
        if (per == 0 || per * unit * face_count != l->data.size() || l->truncated()) {
            out.diagnostics.push_back({Severity::warning, lump_name(name), l->offset,
                                       std::to_string(l->length) + " bytes is not a whole number of styles for " +
                                           std::to_string(face_count) + " faces: ignored"});
            continue;
        }
        out.styles_per_face = per;
        out.styles.resize(per * face_count);
        for (size_t i = 0; i < out.styles.size(); ++i) {
            if (wide) {
                out.styles[i] = load<uint16_t>(l->data.data() + i * 2);
            } else {
                const uint8_t s = l->data[i];
                out.styles[i] = s == 255 ? kNoStyle16 : s;
            }
        }
    }
    return out;
}

}  // namespace bspkit::bspx
