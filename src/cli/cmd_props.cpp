// bspkit props FILE [--json]: the static props and detail props of a Source map.
#include "common.hpp"

#include <bspkit/formats/source_props.hpp>

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace bspkit::cli {
namespace {

using source::StaticProp;
using source::StaticPropsLump;
using source::StaticPropVariant;

std::string_view model_of(const StaticPropsLump& lump, const StaticProp& p) {
    return p.prop_type < lump.names.size() ? std::string_view(lump.names[p.prop_type]) : std::string_view("<out of range>");
}

/// The leaf indices of a prop (empty when its range leaves the leaf list).
std::vector<uint32_t> leaves_of(const StaticPropsLump& lump, const StaticProp& p) {
    if (size_t(p.first_leaf) + p.leaf_count > lump.leaves.size()) return {};
    return {lump.leaves.begin() + p.first_leaf, lump.leaves.begin() + p.first_leaf + p.leaf_count};
}

std::string solid_name(uint8_t solid) {
    switch (solid) {
        case 0: return "none";
        case 1: return "bsp";
        case 2: return "bbox";
        case 3: return "obb";
        case 4: return "obb_yaw";
        case 5: return "custom";
        case 6: return "vphysics";
        default: return std::to_string(solid);
    }
}

nlohmann::json props_json(const Bsp& bsp, const std::optional<StaticPropsLump>& lump) {
    nlohmann::json j;
    j["file"] = bsp.file_name();
    if (!lump) {
        j["static_props"] = nullptr;
        j["props"] = nlohmann::json::array();
        return j;
    }
    const auto& f = lump->format;
    j["static_props"] = {{"version", f.version},
                         {"variant", f.name},
                         {"entry_size", f.entry_size},
                         {"reason", f.reason},
                         {"models", lump->names},
                         {"leaf_count", lump->leaves.size()}};
    auto& props = j["props"] = nlohmann::json::array();
    const auto v = f.variant;
    for (size_t i = 0; i < lump->props.size(); ++i) {
        const StaticProp& p = lump->props[i];
        nlohmann::json e = {{"index", i},
                            {"model", model_of(*lump, p)},
                            {"model_index", p.prop_type},
                            {"origin", p.origin},
                            {"angles", p.angles},
                            {"skin", p.skin},
                            {"solid", p.solid},
                            {"flags", p.flags},
                            {"fade_min", p.fade_min_dist},
                            {"fade_max", p.fade_max_dist},
                            {"first_leaf", p.first_leaf},
                            {"leaf_count", p.leaf_count},
                            {"leaves", leaves_of(*lump, p)},
                            {"lighting_origin", p.lighting_origin}};
        if (v != StaticPropVariant::v4 && v != StaticPropVariant::unknown) e["forced_fade_scale"] = p.forced_fade_scale;
        if (v == StaticPropVariant::v6 || v == StaticPropVariant::v7_l4d || v == StaticPropVariant::v7_2013 ||
            v == StaticPropVariant::v10_2013 || v == StaticPropVariant::v11_lite || v == StaticPropVariant::v11_bm)
            e["dx_level"] = {p.min_dx_level, p.max_dx_level};
        if (v == StaticPropVariant::v7_2013 || v == StaticPropVariant::v10_2013 || v == StaticPropVariant::v11_lite ||
            v == StaticPropVariant::v11_bm)
            e["lightmap_resolution"] = {p.lightmap_res_x, p.lightmap_res_y};
        if (v == StaticPropVariant::v8 || v == StaticPropVariant::v9 || v == StaticPropVariant::v10_csgo ||
            v == StaticPropVariant::v11_csgo || v == StaticPropVariant::v12 || v == StaticPropVariant::v13) {
            e["cpu_level"] = {p.min_cpu_level, p.max_cpu_level};
            e["gpu_level"] = {p.min_gpu_level, p.max_gpu_level};
            e["disable_x360"] = v != StaticPropVariant::v8 ? nlohmann::json(p.disable_x360) : nlohmann::json(nullptr);
        }
        if (v != StaticPropVariant::v4 && v != StaticPropVariant::v5 && v != StaticPropVariant::v6 &&
            v != StaticPropVariant::v7_2013 && v != StaticPropVariant::v10_2013 && v != StaticPropVariant::unknown)
            e["diffuse_modulation"] = p.diffuse_modulation;
        if (v == StaticPropVariant::v10_csgo || v == StaticPropVariant::v11_csgo || v == StaticPropVariant::v11_bm ||
            v == StaticPropVariant::v12 || v == StaticPropVariant::v13)
            e["flags_ex"] = p.flags_ex;
        if (v == StaticPropVariant::v11_csgo || v == StaticPropVariant::v12 || v == StaticPropVariant::v13) e["scale"] = p.scale;
        props.push_back(std::move(e));
    }
    return j;
}

const char* detail_type_name(uint8_t type) {
    switch (type) {
        case source::DETAIL_PROP_TYPE_MODEL: return "model";
        case source::DETAIL_PROP_TYPE_SPRITE: return "sprite";
        case source::DETAIL_PROP_TYPE_SHAPE_CROSS: return "shape_cross";
        case source::DETAIL_PROP_TYPE_SHAPE_TRI: return "shape_tri";
        default: return "unknown";
    }
}

/// Objects per DetailPropType_t (the last slot counts unknown types).
std::array<size_t, 5> detail_type_counts(const source::DetailPropsLump& d) {
    std::array<size_t, 5> n{};
    for (const auto& o : d.objects) ++n[std::min<size_t>(o.m_Type, 4)];
    return n;
}

nlohmann::json detail_json(const std::optional<source::DetailPropsLump>& d) {
    if (!d) return nullptr;
    nlohmann::json j = {{"version", d->version},
                        {"decoded", d->version >= source::GAMELUMP_DETAIL_PROPS_VERSION},
                        {"models", d->models},
                        {"sprite_count", d->sprites.size()},
                        {"object_count", d->objects.size()}};
    auto& objects = j["objects"] = nlohmann::json::array();
    for (const auto& o : d->objects)
        objects.push_back({{"type", detail_type_name(o.m_Type)},
                           {"origin", {o.m_Origin.x, o.m_Origin.y, o.m_Origin.z}},
                           {"angles", {o.m_Angles.x, o.m_Angles.y, o.m_Angles.z}},
                           {"index", o.m_DetailModel},
                           {"leaf", o.m_Leaf},
                           {"scale", o.m_flScale},
                           {"sway", o.m_SwayAmount},
                           {"light_styles", {o.m_LightStyles, o.m_LightStyleCount}}});
    return j;
}

void print_detail_text(const std::optional<source::DetailPropsLump>& d) {
    if (!d) {
        fmt::print("\ndprp:     none (no detail props)\n");
        return;
    }
    if (d->version < source::GAMELUMP_DETAIL_PROPS_VERSION) {
        fmt::print("\ndprp:     version {}: the old format the engine ignores (not decoded)\n", d->version);
        return;
    }
    const auto n = detail_type_counts(*d);
    fmt::print("\ndprp:     version {}: {} models, {} sprites, {} objects ({} model, {} sprite, {} shape_cross, "
               "{} shape_tri{})\n",
               d->version, d->models.size(), d->sprites.size(), d->objects.size(), n[0], n[1], n[2], n[3],
               n[4] ? fmt::format(", {} of unknown type", n[4]) : std::string());
    for (size_t i = 0; i < d->models.size(); ++i) fmt::print("{:>5}  {}\n", i, d->models[i]);
}

std::string join_leaves(const std::vector<uint32_t>& leaves) {
    std::string s;
    for (size_t i = 0; i < leaves.size(); ++i) {
        if (i) s += ',';
        s += std::to_string(leaves[i]);
    }
    return s.empty() ? "-" : s;
}

void print_text(const Bsp& bsp, const std::optional<StaticPropsLump>& lump) {
    if (!lump) {
        fmt::print("{}: no static prop game lump (sprp)\n", bsp.file_name());
        return;
    }
    const auto& f = lump->format;
    fmt::print("file:     {}\n", bsp.file_name());
    fmt::print("sprp:     version {}, {} ({}-byte entries)\n", f.version, f.name, f.entry_size);
    fmt::print("variant:  {}\n", f.reason);
    fmt::print("models:   {}    leaf list: {} entries    props: {}\n\n", lump->names.size(), lump->leaves.size(),
               lump->props.size());
    if (lump->props.empty()) return;
    fmt::print("{:>5}  {:<40} {:>28} {:>24} {:>4} {:<8} {:>5} {:>15}  {}\n", "index", "model", "origin", "angles", "skin",
               "solid", "flags", "fade min/max", "leaves");
    for (size_t i = 0; i < lump->props.size(); ++i) {
        const StaticProp& p = lump->props[i];
        fmt::print("{:>5}  {:<40} {:>28} {:>24} {:>4} {:<8} {:>#5x} {:>15}  {}\n", i, model_of(*lump, p),
                   fmt::format("{:.2f} {:.2f} {:.2f}", p.origin[0], p.origin[1], p.origin[2]),
                   fmt::format("{:.1f} {:.1f} {:.1f}", p.angles[0], p.angles[1], p.angles[2]), p.skin,
                   solid_name(p.solid), p.flags, fmt::format("{:g}/{:g}", p.fade_min_dist, p.fade_max_dist),
                   join_leaves(leaves_of(*lump, p)));
    }
}

void add_props(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("props", "List the static props (game lump 'sprp') and detail props ('dprp') of a Source map");
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_flag("--json", *json, "Print machine-readable JSON");
    cmd->callback([&action, file, json] {
        action = [file, json] {
            const Bsp bsp = open_reporting(*file);
            if (bsp.format() != Format::source)
                throw Error({bsp.file_name(), "header", 0},
                            "static props exist only in Source maps; this is " + std::string(bsp.layout().description));
            const auto lump = source::read_static_props(bsp);
            const auto detail = source::read_detail_props(bsp);
            if (*json) {
                nlohmann::json j = props_json(bsp, lump);
                j["detail_props"] = detail_json(detail);
                fmt::print("{}\n", json_text(j));
            } else {
                print_text(bsp, lump);
                print_detail_text(detail);
            }
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("props", add_props);

}  // namespace bspkit::cli
