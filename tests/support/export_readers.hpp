// Independent readers of what the exporters write, for tests: a .glb / .gltf
// parser that returns accessor data, and an OBJ line counter that checks
// face indices. Written from the glTF 2.0 and OBJ specifications, not from
// the exporter's code.
#pragma once

#include <bspkit/bytes.hpp>
#include <bspkit/file_io.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::test {

struct GltfFile {
    nlohmann::json doc;
    Bytes bin;                     ///< buffer 0
    std::filesystem::path dir;     ///< for external files of a .gltf

    static GltfFile parse_glb(ByteSpan glb) {
        const auto u32 = [&](size_t at) {
            if (at + 4 > glb.size()) throw std::runtime_error("glb truncated");
            return load<uint32_t>(glb.data() + at);
        };
        if (u32(0) != 0x46546C67) throw std::runtime_error("not a glb: bad magic");
        if (u32(4) != 2) throw std::runtime_error("glb version is not 2");
        if (u32(8) != glb.size()) throw std::runtime_error("glb length field does not match the file size");
        GltfFile f;
        size_t at = 12;
        bool first = true;
        while (at < glb.size()) {
            const uint32_t length = u32(at), type = u32(at + 4);
            if (length % 4 != 0) throw std::runtime_error("glb chunk length not a multiple of 4");
            if (at + 8 + length > glb.size()) throw std::runtime_error("glb chunk overruns the file");
            const auto* data = glb.data() + at + 8;
            if (first && type != 0x4E4F534A) throw std::runtime_error("first glb chunk is not JSON");
            if (type == 0x4E4F534A) f.doc = nlohmann::json::parse(data, data + length);
            if (type == 0x004E4942) f.bin.assign(data, data + length);
            at += 8 + length;
            first = false;
        }
        return f;
    }

    static GltfFile read(const std::filesystem::path& path) {
        const Bytes bytes = read_file(path);
        if (path.extension() == ".glb") {
            GltfFile f = parse_glb(bytes);
            f.dir = path.parent_path();
            return f;
        }
        GltfFile f;
        f.dir = path.parent_path();
        f.doc = nlohmann::json::parse(bytes.begin(), bytes.end());
        if (f.doc.contains("buffers")) f.bin = read_file(f.dir / f.doc["buffers"][0]["uri"].get<std::string>());
        return f;
    }

    /// The bytes of an image (from its buffer view or its file).
    Bytes image_bytes(size_t image) const {
        const auto& img = doc["images"][image];
        if (img.contains("uri")) return read_file(dir / img["uri"].get<std::string>());
        const auto& view = doc["bufferViews"][img["bufferView"].get<size_t>()];
        const size_t off = view.value("byteOffset", size_t(0)), len = view["byteLength"].get<size_t>();
        if (off + len > bin.size()) throw std::runtime_error("image view overruns the buffer");
        return Bytes(bin.begin() + long(off), bin.begin() + long(off + len));
    }

    static size_t components(const std::string& type) {
        if (type == "SCALAR") return 1;
        if (type == "VEC2") return 2;
        if (type == "VEC3") return 3;
        if (type == "VEC4") return 4;
        throw std::runtime_error("unexpected accessor type " + type);
    }

    /// Accessor elements as doubles (floats as stored, integers as values,
    /// normalized bytes as 0..255), `components` per element.
    std::vector<double> accessor(size_t index) const {
        const auto& acc = doc["accessors"][index];
        const auto& view = doc["bufferViews"][acc["bufferView"].get<size_t>()];
        const size_t n = components(acc["type"].get<std::string>());
        const int component = acc["componentType"].get<int>();
        const size_t size = component == 5126 || component == 5125 ? 4 : component == 5123 ? 2 : 1;
        const size_t stride = view.contains("byteStride") ? view["byteStride"].get<size_t>() : n * size;
        const size_t base = view.value("byteOffset", size_t(0)) + acc.value("byteOffset", size_t(0));
        const size_t count = acc["count"].get<size_t>();
        std::vector<double> out;
        out.reserve(count * n);
        for (size_t i = 0; i < count; ++i)
            for (size_t c = 0; c < n; ++c) {
                const size_t at = base + i * stride + c * size;
                if (at + size > bin.size()) throw std::runtime_error("accessor overruns the buffer");
                const uint8_t* p = bin.data() + at;
                if (component == 5126) out.push_back(load<float>(p));
                else if (component == 5125) out.push_back(load<uint32_t>(p));
                else if (component == 5123) out.push_back(load<uint16_t>(p));
                else out.push_back(*p);
            }
        return out;
    }
};

/// Line counts of an OBJ file and the check of every face index.
struct ObjCounts {
    size_t v = 0, vt = 0, vn = 0, f = 0, usemtl = 0, o = 0;
    size_t bad_faces = 0;  ///< faces not of 3 corners or with an index out of range / not positive
    std::vector<std::string> materials;  ///< usemtl names in order
    std::vector<double> positions;        ///< x y z of every v line (read as float)
    std::vector<double> uvs;              ///< u v of every vt line (read as float)
    std::vector<std::array<size_t, 3>> faces;  ///< 1-based position indices of every well-formed face

    static ObjCounts parse(std::string_view text) {
        ObjCounts c;
        struct Face { size_t v[3][3]; };
        std::vector<Face> faces;
        size_t at = 0;
        while (at < text.size()) {
            size_t end = text.find('\n', at);
            if (end == std::string_view::npos) end = text.size();
            const std::string_view line = text.substr(at, end - at);
            at = end + 1;
            const auto numbers = [&](size_t skip, std::vector<double>& out) {
                const char* p = line.data() + skip;
                const char* e = line.data() + line.size();
                while (p < e) {
                    while (p < e && *p == ' ') ++p;
                    if (p == e) break;
                    float d = 0;  // written as floats: read as floats (a double reading of "0.1" is not 0.1f)
                    const auto r = std::from_chars(p, e, d);
                    if (r.ec != std::errc()) throw std::runtime_error("bad number in OBJ line: " + std::string(line));
                    out.push_back(d);
                    p = r.ptr;
                }
            };
            if (line.starts_with("v ")) {
                ++c.v;
                numbers(2, c.positions);
            } else if (line.starts_with("vt ")) {
                ++c.vt;
                numbers(3, c.uvs);
            } else if (line.starts_with("vn ")) {
                ++c.vn;
            } else if (line.starts_with("usemtl ")) {
                ++c.usemtl;
                c.materials.emplace_back(line.substr(7));
            } else if (line.starts_with("o ")) {
                ++c.o;
            } else if (line.starts_with("f ")) {
                ++c.f;
                Face face{};
                size_t corners = 0;
                const char* p = line.data() + 2;
                const char* e = line.data() + line.size();
                bool ok = true;
                while (p < e && ok) {
                    while (p < e && *p == ' ') ++p;
                    if (p == e) break;
                    if (corners == 3) { ok = false; break; }
                    for (int k = 0; k < 3; ++k) {
                        long long value = 0;
                        const auto r = std::from_chars(p, e, value);
                        if (r.ec != std::errc() || value <= 0) { ok = false; break; }
                        face.v[corners][k] = size_t(value);
                        p = r.ptr;
                        if (k < 2) {
                            if (p == e || *p != '/') { ok = false; break; }
                            ++p;
                        }
                    }
                    ++corners;
                }
                if (!ok || corners != 3) ++c.bad_faces;
                else faces.push_back(face);
            }
        }
        for (const Face& face : faces) {
            bool ok = true;
            for (const auto& corner : face.v)
                if (corner[0] > c.v || corner[1] > c.vt || corner[2] > c.vn) ok = false;
            if (ok) c.faces.push_back({face.v[0][0], face.v[1][0], face.v[2][0]});
            else ++c.bad_faces;
        }
        return c;
    }
};

/// A triangle as its three corner positions, sorted: equal for the same
/// triangle whatever its winding and first corner.
using TriangleKey = std::array<std::array<double, 3>, 3>;
inline TriangleKey triangle_key(std::array<double, 3> a, std::array<double, 3> b, std::array<double, 3> c) {
    TriangleKey t{a, b, c};
    std::sort(t.begin(), t.end());
    return t;
}

/// Every face of an OBJ as a TriangleKey, sorted.
inline std::vector<TriangleKey> obj_triangles(const ObjCounts& c) {
    std::vector<TriangleKey> out;
    out.reserve(c.faces.size());
    const auto at = [&](size_t i) {
        return std::array<double, 3>{c.positions[(i - 1) * 3], c.positions[(i - 1) * 3 + 1], c.positions[(i - 1) * 3 + 2]};
    };
    for (const auto& f : c.faces) out.push_back(triangle_key(at(f[0]), at(f[1]), at(f[2])));
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace bspkit::test
