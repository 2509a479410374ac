#include "builders.hpp"

#include <cstdio>

namespace bspkit::model {
namespace {

std::optional<Vec3> parse_vec3(std::string_view text) {
    Vec3 v;
    if (std::sscanf(std::string(text).c_str(), "%f %f %f", &v.x, &v.y, &v.z) != 3) return std::nullopt;
    return v;
}

// Brush entities name their model "*N"; their "origin" places it.
void place_models(Map& map) {
    for (size_t e = 0; e < map.entities.size(); ++e) {
        const auto model = map.entities[e].find("model");
        const auto index = model ? brush_model_number(*model) : std::nullopt;
        if (!index) continue;
        for (Model& m : map.models) {
            if (m.index != *index || m.entity >= 0) continue;
            m.entity = int32_t(e);
            if (auto origin = map.entities[e].find("origin"))
                if (auto v = parse_vec3(*origin)) m.origin = *v;
        }
    }
}

}  // namespace

bspx::LightingOptions lighting_options(const BuildOptions& options) {
    bspx::LightingOptions out;
    out.lit_file = options.lit_file;
    if (!options.lit_path.empty()) out.lit = options.lit_path;
    return out;
}

Map build(const Bsp& bsp, const BuildOptions& options) {
    Map map;
    map.format = bsp.format();
    map.entities = read_entities(bsp).entities;
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: quake1::build_model(bsp, options, map); break;
        case Format::quake2: quake2::build_model(bsp, options, map); break;
        case Format::quake3: quake3::build_model(bsp, options, map); break;
        case Format::nightfire: nightfire::build_model(bsp, options, map); break;
        case Format::source: source::build_model(bsp, options, map); break;
    }
    if (!options.all_models)
        std::erase_if(map.models, [](const Model& m) { return m.index != 0; });
    if (options.kinds != ~0u)  // the families that cannot skip faces unread built them all
        for (Model& m : map.models)
            std::erase_if(m.surfaces, [&](const Surface& s) { return !(options.kinds & kind_bit(s.kind)); });
    place_models(map);
    if (options.lightmaps) pack_lightmaps(map);
    return map;
}

double triangle_area(Vec3 a, Vec3 b, Vec3 c) { return 0.5 * length(cross(b - a, c - a)); }

double surface_area(const Surface& s) {
    double area = 0;
    for (size_t i = 0; i + 2 < s.indices.size(); i += 3)
        area += triangle_area(s.vertices[s.indices[i]].position, s.vertices[s.indices[i + 1]].position,
                              s.vertices[s.indices[i + 2]].position);
    return area;
}

}  // namespace bspkit::model
