#include "selection.hpp"

#include "lighting.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/error.hpp>
#include <bspkit/glob.hpp>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <string>
#include <cmath>
#include <unordered_map>

namespace bspkit::exporter {

std::optional<FileFormat> format_for_path(const std::filesystem::path& path) {
    const std::string ext = ascii_lower(path.extension().string());
    if (ext == ".glb") return FileFormat::glb;
    if (ext == ".gltf") return FileFormat::gltf;
    if (ext == ".obj") return FileFormat::obj;
    return std::nullopt;
}

std::string safe_name(std::string_view name) {
    std::string out;
    out.reserve(std::min<size_t>(name.size(), 64));
    for (char c : name) {
        if (out.size() == 64) break;
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-' || c == '+';
        out.push_back(ok ? c : c == '*' ? '#' : '_');
    }
    return out.empty() ? "unnamed" : out;
}

std::array<double, 4> angles_to_quaternion(const model::Vec3& angles) {
    // R = Rz(yaw) * Ry(pitch) * Rx(roll) (Source AngleMatrix), as quaternions q = qz * qy * qx.
    constexpr double kHalfDegree = 3.14159265358979323846 / 360.0;
    const double p = double(detail::finite(angles.x)) * kHalfDegree, y = double(detail::finite(angles.y)) * kHalfDegree,
                 r = double(detail::finite(angles.z)) * kHalfDegree;
    const double sp = std::sin(p), cp = std::cos(p), sy = std::sin(y), cy = std::cos(y), sr = std::sin(r),
                 cr = std::cos(r);
    // qz = (0, 0, sy, cy), qy = (0, sp, 0, cp), qx = (sr, 0, 0, cr)
    const double x = cy * cp * sr - sy * sp * cr;
    const double yy = cy * sp * cr + sy * cp * sr;
    const double z = sy * cp * cr - cy * sp * sr;
    const double w = cy * cp * cr + sy * sp * sr;
    return {x, yy, z, w};
}

namespace detail {
namespace {

Error model_error(std::string detail) { return Error({"", "model", -1}, std::move(detail)); }

bool white(const model::Vertex& v) noexcept {
    return v.color[0] == 255 && v.color[1] == 255 && v.color[2] == 255 && v.color[3] == 255;
}

}  // namespace

void validate(const model::Map& map) {
    for (size_t t = 0; t < map.textures.size(); ++t) {
        const model::Texture& tex = map.textures[t];
        if (uint64_t(tex.width) * tex.height * 4 != tex.rgba.size() || tex.width == 0 || tex.height == 0)
            throw model_error("texture " + std::to_string(t) + " (" + tex.name + ") is " + std::to_string(tex.width) +
                              "x" + std::to_string(tex.height) + " with " + std::to_string(tex.rgba.size()) +
                              " bytes of RGBA");
    }
    for (size_t m = 0; m < map.materials.size(); ++m) {
        const int32_t t = map.materials[m].texture;
        if (t < -1 || (t >= 0 && size_t(t) >= map.textures.size()))
            throw model_error("material " + std::to_string(m) + " names texture " + std::to_string(t) + " of " +
                              std::to_string(map.textures.size()));
    }
    for (const model::LightmapAtlas& atlas : map.lightmaps)
        if (uint64_t(atlas.width) * atlas.height * 3 != atlas.rgb.size())
            throw model_error("lightmap atlas of style " + std::to_string(atlas.style) + " is " +
                              std::to_string(atlas.width) + "x" + std::to_string(atlas.height) + " with " +
                              std::to_string(atlas.rgb.size()) + " bytes of RGB");
    for (const model::Model& m : map.models) {
        for (size_t i = 0; i < m.surfaces.size(); ++i) {
            const model::Surface& s = m.surfaces[i];
            const auto where = [&] { return "model " + std::to_string(m.index) + " surface " + std::to_string(i); };
            if (s.material >= map.materials.size())
                throw model_error(where() + " uses material " + std::to_string(s.material) + " of " +
                                  std::to_string(map.materials.size()));
            if (s.indices.size() % 3 != 0)
                throw model_error(where() + " has " + std::to_string(s.indices.size()) + " indices (not triangles)");
            if (s.vertices.size() > UINT32_MAX) throw model_error(where() + " has too many vertices");
            for (const uint32_t index : s.indices)
                if (index >= s.vertices.size())
                    throw model_error(where() + " index " + std::to_string(index) + " is out of range (" +
                                      std::to_string(s.vertices.size()) + " vertices)");
        }
    }
}

Selection select(const model::Map& map, const Options& options, bool lightmaps) {
    validate(map);
    Selection out;
    if (lightmaps && options.lighting != Lighting::none && !map.lightmaps.empty()) {
        auto combined = std::make_shared<model::LightmapAtlas>(model::combined_lightmap(map));
        shade_lightmap(map.format, options.lighting == Lighting::baked, options.exposure, *combined);
        if (combined->width && combined->height) out.lightmap = std::move(combined);
    }
    uint32_t skip_flags = model::kNodraw;
    if (!options.sky) skip_flags |= model::kSky;
    if (!options.tool_surfaces) skip_flags |= model::kTrigger | model::kClip;
    for (const model::Model& m : map.models) {
        bool skip = !options.all_models && m.index != 0;
        if (!skip && m.entity >= 0 && size_t(m.entity) < map.entities.size() && !options.skip_classes.empty()) {
            const std::string_view classname = map.entities[size_t(m.entity)].get("classname");
            for (const std::string& pattern : options.skip_classes)
                if (glob_match(pattern, classname, true)) skip = true;
        }
        if (skip) {
            ++out.skipped_models;
            continue;
        }
        SelectedModel selected;
        selected.model = &m;
        std::unordered_map<uint64_t, size_t> group_of;
        for (uint32_t i = 0; i < m.surfaces.size(); ++i) {
            const model::Surface& s = m.surfaces[i];
            if (map.materials[s.material].flags & skip_flags) {
                ++out.skipped_surfaces;
                continue;
            }
            if (s.indices.empty()) continue;  // billboards: nothing to draw as triangles
            const bool lit = out.lightmap && s.lightmap >= 0;
            const uint64_t key = uint64_t(s.material) * 2 + (lit ? 1 : 0);
            auto [it, added] = group_of.try_emplace(key, selected.groups.size());
            if (added) selected.groups.push_back(Group{s.material, lit, false, {}, 0, 0});
            Group& g = selected.groups[it->second];
            g.surfaces.push_back(i);
            g.vertices += s.vertices.size();
            g.indices += s.indices.size();
            if (!g.colored)
                for (const model::Vertex& v : s.vertices)
                    if (!white(v)) {
                        g.colored = true;
                        break;
                    }
            out.vertices += s.vertices.size();
            out.triangles += s.indices.size() / 3;
        }
        for (Group& g : selected.groups)
            if (g.lit && options.lighting == Lighting::baked) g.colored = false;  // see "Lighting" in export.hpp
        for (const Group& g : selected.groups)
            if (g.vertices > UINT32_MAX)
                throw model_error("model " + std::to_string(m.index) + " has more than 2^32 vertices of one material");
        out.models.push_back(std::move(selected));
    }
    return out;
}

bool needs_flip(const model::Surface& s, uint32_t a, uint32_t b, uint32_t c) noexcept {
    const model::Vertex &va = s.vertices[a], &vb = s.vertices[b], &vc = s.vertices[c];
    const model::Vec3 n = model::cross(vb.position - va.position, vc.position - va.position);
    return model::dot(n, va.normal + vb.normal + vc.normal) < 0;
}

model::Vec3 NormalFixer::operator()(const model::Vertex& v) {
    const model::Vec3 n = finite(v.normal);
    const double len = model::length(n);
    if (len > 1e-6) return n * float(1.0 / len);
    if (!fallback_) {
        model::Vec3 f{0, 0, 1};
        bool found = false;
        if (surface_.plane) {
            const model::Vec3 p = finite(surface_.plane->normal);
            if (model::length(p) > 1e-6) {
                f = model::normalized(p);
                found = true;
            }
        }
        for (size_t i = 0; !found && i + 2 < surface_.indices.size(); i += 3) {
            const model::Vec3 a = surface_.vertices[surface_.indices[i]].position,
                              b = surface_.vertices[surface_.indices[i + 1]].position,
                              c = surface_.vertices[surface_.indices[i + 2]].position;
            const model::Vec3 t = finite(model::cross(b - a, c - a));
            if (model::length(t) > 1e-9) {
                f = model::normalized(t);
                found = true;
            }
        }
        fallback_ = f;
    }
    return *fallback_;
}

std::vector<std::string> flag_names(uint32_t flags) {
    static constexpr std::pair<uint32_t, const char*> kNames[] = {
        {model::kSky, "sky"},     {model::kNodraw, "nodraw"},           {model::kTrigger, "trigger"},
        {model::kWater, "water"}, {model::kTranslucent, "translucent"}, {model::kClip, "clip"},
        {model::kUnlit, "unlit"}, {model::kAlphaTest, "alphatest"},
    };
    std::vector<std::string> out;
    for (const auto& [bit, name] : kNames)
        if (flags & bit) out.emplace_back(name);
    return out;
}

void make_output_dir(const std::filesystem::path& file) {
    const std::filesystem::path dir = file.parent_path();
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error({dir.string(), "", -1}, "cannot create the output directory: " + ec.message());
}

std::string uri_of(std::string_view name) {
    std::string out;
    for (const char c : name) out += c == '#' ? std::string("%23") : std::string(1, c);
    return out;
}

std::string UniqueNames::operator()(std::string_view name) {
    const std::string base = safe_name(name);
    std::string candidate = base;
    for (int n = 2; used_.count(candidate); ++n) candidate = base + "_" + std::to_string(n);
    used_.insert(candidate);
    return candidate;
}

}  // namespace detail

namespace {

/// std::from_chars for a float (general format, no leading '+' or spaces).
/// Emscripten 3.1.6's libc++ has no floating-point from_chars: there the same
/// grammar is matched by hand and the digits converted by strtof (both round
/// correctly, so the value is the same).
std::from_chars_result float_from_chars(const char* first, const char* last, float& value) {
#if defined(__cpp_lib_to_chars)
    return std::from_chars(first, last, value);
#else
    const char* p = first;
    if (p < last && *p == '-') ++p;
    const auto word = [&](const char* w) {
        const char* q = p;
        for (; *w; ++w, ++q)
            if (q >= last || (*q | 0x20) != *w) return static_cast<const char*>(nullptr);
        return q;
    };
    const char* end = nullptr;
    if (const char* q = word("infinity")) end = q;
    else if (const char* q2 = word("inf")) end = q2;
    else if (const char* q3 = word("nan")) {
        end = q3;
        if (end < last && *end == '(') {
            const char* r = end + 1;
            while (r < last && (std::isalnum(static_cast<unsigned char>(*r)) || *r == '_')) ++r;
            if (r < last && *r == ')') end = r + 1;
        }
    } else {
        const char* q = p;
        size_t digits = 0;
        while (q < last && *q >= '0' && *q <= '9') ++q, ++digits;
        if (q < last && *q == '.') {
            ++q;
            while (q < last && *q >= '0' && *q <= '9') ++q, ++digits;
        }
        if (!digits) return {first, std::errc::invalid_argument};
        end = q;
        if (q < last && (*q == 'e' || *q == 'E')) {
            ++q;
            if (q < last && (*q == '+' || *q == '-')) ++q;
            const char* exp = q;
            while (q < last && *q >= '0' && *q <= '9') ++q;
            if (q > exp) end = q;
        }
    }
    const std::string text(first, end);
    errno = 0;
    const float v = std::strtof(text.c_str(), nullptr);
    if (errno == ERANGE) return {end, std::errc::result_out_of_range};
    value = v;
    return {end, std::errc()};
#endif
}

}  // namespace

std::optional<model::Vec3> parse_vec3(std::string_view text) {
    float v[3];
    const char* p = text.data();
    const char* end = text.data() + text.size();
    for (float& x : v) {
        while (p < end && (*p == ' ' || *p == '\t')) ++p;
        if (p < end && *p == '+') ++p;
        const auto [next, ec] = float_from_chars(p, end, x);
        if (ec != std::errc() || !std::isfinite(x)) return std::nullopt;
        p = next;
    }
    return model::Vec3{v[0], v[1], v[2]};
}

}  // namespace bspkit::exporter
