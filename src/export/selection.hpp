// What the exporters share (internal): checking a model::Map before reading
// it, choosing the surfaces and models to export, grouping surfaces into
// primitives per (material, lit), axis conversion, triangle orientation and
// unit normals.
#pragma once

#include <bspkit/export.hpp>
#include <bspkit/model.hpp>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace bspkit::exporter::detail {

/// Throws Error (lump "model") when an index of `map` points outside what it
/// indexes or an image's pixel count does not match its size, so the writers
/// can index without checks.
void validate(const model::Map& map);

/// Surfaces of one model sharing a material and being lit (or not): one glTF
/// primitive, one OBJ usemtl group.
struct Group {
    uint32_t material = 0;
    bool lit = false;
    bool colored = false;               ///< some vertex colour is not opaque white
    std::vector<uint32_t> surfaces;     ///< indices into Model::surfaces
    size_t vertices = 0, indices = 0;
};

struct SelectedModel {
    const model::Model* model = nullptr;
    std::vector<Group> groups;  ///< in order of first use
};

struct Selection {
    std::vector<SelectedModel> models;
    /// Every light style's page summed (model::combined_lightmap), when exported.
    std::shared_ptr<const model::LightmapAtlas> lightmap;
    size_t skipped_surfaces = 0, skipped_models = 0;
    size_t vertices = 0, triangles = 0;
};

/// Applies Options' model and surface rules. `lightmaps`: whether lit
/// groups are told apart (the glTF writer) or not (OBJ).
Selection select(const model::Map& map, const Options& options, bool lightmaps);

/// Map axes (Z-up) to output axes: scale, then (x, y, z) -> (x, z, -y) when y_up.
struct Axes {
    float scale = 1;
    bool y_up = false;
    model::Vec3 point(model::Vec3 p) const noexcept {
        p = p * scale;
        return y_up ? model::Vec3{p.x, p.z, -p.y} : p;
    }
    model::Vec3 direction(model::Vec3 d) const noexcept { return y_up ? model::Vec3{d.x, d.z, -d.y} : d; }
};

/// Replaces NaN / infinities by 0 (a broken file must not break the output).
inline float finite(float v) noexcept { return std::isfinite(v) ? v : 0.0f; }
inline model::Vec3 finite(model::Vec3 v) noexcept { return {finite(v.x), finite(v.y), finite(v.z)}; }

/// True when triangle (a, b, c) of `s` must be written (a, c, b) to wind
/// counter-clockwise about its vertex normals.
bool needs_flip(const model::Surface& s, uint32_t a, uint32_t b, uint32_t c) noexcept;

/// Unit normals of a surface's vertices: the vertex normal when it has a
/// length, else the surface's plane normal, else its first non-degenerate
/// triangle's normal, else +Z.
class NormalFixer {
public:
    explicit NormalFixer(const model::Surface& s) : surface_(s) {}
    model::Vec3 operator()(const model::Vertex& v);

private:
    const model::Surface& surface_;
    std::optional<model::Vec3> fallback_;
};

/// Names of MaterialFlag bits set in `flags` ("sky", "nodraw", ...).
std::vector<std::string> flag_names(uint32_t flags);

/// safe_name() of an output path's stem: the prefix of the files written beside it.
inline std::string safe_file_stem(const std::filesystem::path& path) { return safe_name(path.stem().string()); }

/// Creates the directory an output file goes to when it is missing (Error
/// naming it when that fails).
void make_output_dir(const std::filesystem::path& file);

/// `name` as a relative URI (percent-encodes what safe_name() keeps but a URI
/// path does not: '#').
std::string uri_of(std::string_view name);

/// Unique safe file / material names: safe_name(), then "_2", "_3"... on clashes.
class UniqueNames {
public:
    std::string operator()(std::string_view name);

private:
    std::unordered_set<std::string> used_;
};

}  // namespace bspkit::exporter::detail
