// Static props ('sprp'), detail props ('dprp') and detail prop lighting
// ('dplt' / 'dplh'): decoding into neutral structs and encoding back.
#include <bspkit/formats/source_props.hpp>

#include <algorithm>
#include <cstring>

namespace bspkit::source {
namespace {

// Which optional field groups a variant stores, in on-disk order after the
// 56-byte v4 part.
enum : uint32_t {
    kFadeScale = 1u << 0,   // float ForcedFadeScale
    kDxLevels = 1u << 1,    // uint16 Min/MaxDXLevel
    kIntFlags = 1u << 2,    // uint32 Flags + uint16 lightmap res x/y (byte after Solid unused)
    kCpuGpu = 1u << 3,      // 4 x uint8
    kDiffuse = 1u << 4,     // color32
    kX360 = 1u << 5,        // bool, padded to 4
    kFlagsEx = 1u << 6,     // uint32
    kScale1 = 1u << 7,      // float UniformScale
    kScale3 = 1u << 8,      // Vector scale
};

uint32_t fields_of(StaticPropVariant v) noexcept {
    using V = StaticPropVariant;
    switch (v) {
        case V::v4: return 0;
        case V::v5: return kFadeScale;
        case V::v6: return kFadeScale | kDxLevels;
        case V::v7_l4d: return kFadeScale | kDxLevels | kDiffuse;
        case V::v7_2013:
        case V::v10_2013: return kFadeScale | kDxLevels | kIntFlags;
        case V::v8: return kFadeScale | kCpuGpu | kDiffuse;
        case V::v9: return kFadeScale | kCpuGpu | kDiffuse | kX360;
        case V::v10_csgo: return kFadeScale | kCpuGpu | kDiffuse | kX360 | kFlagsEx;
        case V::v11_lite: return kFadeScale | kDxLevels | kIntFlags | kDiffuse;
        case V::v11_bm: return kFadeScale | kDxLevels | kIntFlags | kDiffuse | kFlagsEx;
        case V::v11_csgo:
        case V::v12: return kFadeScale | kCpuGpu | kDiffuse | kX360 | kFlagsEx | kScale1;
        case V::v13: return kFadeScale | kCpuGpu | kDiffuse | kX360 | kFlagsEx | kScale3;
        case V::unknown: return 0;
    }
    return 0;
}

constexpr uint32_t kV4Size = 56;

uint32_t size_of_fields(uint32_t f) noexcept {
    uint32_t n = kV4Size;
    if (f & kFadeScale) n += 4;
    if (f & kDxLevels) n += 4;
    if (f & kIntFlags) n += 8;
    if (f & kCpuGpu) n += 4;
    if (f & kDiffuse) n += 4;
    if (f & kX360) n += 4;
    if (f & kFlagsEx) n += 4;
    if (f & kScale1) n += 4;
    if (f & kScale3) n += 12;
    return n;
}

Location advance(const Location& where, size_t by) {
    Location w = where;
    if (w.offset >= 0) w.offset += int64_t(by);
    return w;
}

/// Little cursor over a byte span that throws Error when it runs out.
struct Reader {
    ByteSpan data;
    ByteOrder order;
    const Location& where;
    size_t at = 0;

    void need(size_t n, const std::string& what) const {
        if (data.size() - at < n)
            throw Error(advance(where, at), what + " needs " + std::to_string(n) + " bytes, " +
                                                std::to_string(data.size() - at) + " remain");
    }
    int32_t count(const std::string& what, uint64_t record) {
        need(4, what + " count");
        const int32_t n = load<int32_t>(data.data() + at, order);
        if (n < 0) throw Error(advance(where, at), what + " count " + std::to_string(n) + " is negative");
        at += 4;
        if (uint64_t(n) * record > data.size() - at)
            throw Error(advance(where, at - 4), what + " count " + std::to_string(n) + " needs " +
                                                    std::to_string(uint64_t(n) * record) + " bytes, " +
                                                    std::to_string(data.size() - at) + " remain");
        return n;
    }
};

std::string read_name(const uint8_t* p, size_t n) {
    const auto* end = std::find(p, p + n, uint8_t(0));
    return std::string(reinterpret_cast<const char*>(p), size_t(end - p));
}

void write_name(Bytes& out, const std::string& name, size_t n, const std::string& what) {
    if (name.size() >= n)
        throw Error({"", "game_lump", -1}, what + " \"" + name + "\" is longer than " + std::to_string(n - 1) + " characters");
    const size_t at = out.size();
    out.resize(at + n, 0);
    std::memcpy(out.data() + at, name.data(), name.size());
}

}  // namespace

uint32_t static_prop_size(StaticPropVariant variant) noexcept {
    return variant == StaticPropVariant::unknown ? 0 : size_of_fields(fields_of(variant));
}

std::string_view static_prop_variant_name(StaticPropVariant variant) noexcept {
    using V = StaticPropVariant;
    switch (variant) {
        case V::v4: return "v4";
        case V::v5: return "v5";
        case V::v6: return "v6";
        case V::v7_l4d: return "v7 (Left 4 Dead)";
        case V::v7_2013: return "v7* (Source 2013 layout)";
        case V::v8: return "v8";
        case V::v9: return "v9";
        case V::v10_2013: return "v10 (Source SDK 2013)";
        case V::v10_csgo: return "v10 (CS:GO)";
        case V::v11_lite: return "v11 (Black Mesa, lite)";
        case V::v11_bm: return "v11 (Black Mesa)";
        case V::v11_csgo: return "v11 (CS:GO)";
        case V::v12: return "v12 (Strata)";
        case V::v13: return "v13 (Strata)";
        case V::unknown: return "unknown";
    }
    return "unknown";
}

StaticPropFormat detect_static_prop_format(uint16_t version, uint32_t entry_size, int map_version, bool have_props) {
    using V = StaticPropVariant;
    StaticPropFormat f;
    f.version = version;
    f.wide_leaves = version >= 12;
    // Candidates per version, first = default when there are no props to measure.
    struct Candidate {
        V variant;
        const char* why;
    };
    std::vector<Candidate> candidates;
    switch (version) {
        case 4: candidates = {{V::v4, "the only version 4 layout"}}; break;
        case 5: candidates = {{V::v5, "the only version 5 layout"}}; break;
        case 6: candidates = {{V::v6, "the only version 6 layout"}}; break;
        case 7:
            candidates = {{V::v7_l4d, "68-byte version 7 is the Left 4 Dead layout (v6 + DiffuseModulation)"},
                          {V::v7_2013, "72-byte version 7 is the Source 2013 'v7*' layout (int Flags + lightmap size)"}};
            break;
        case 8: candidates = {{V::v8, "the only version 8 layout"}}; break;
        case 9: candidates = {{V::v9, "the only version 9 layout"}}; break;
        case 10:
            candidates = {{V::v10_2013, "72-byte version 10 is the Source SDK 2013 layout"},
                          {V::v10_csgo, "76-byte version 10 is the CS:GO layout (v9 + FlagsEx)"}};
            if (map_version >= 21) std::swap(candidates[0], candidates[1]);
            break;
        case 11:
            candidates = {{V::v11_lite, "76-byte version 11 is Black Mesa's older layout (v10 2013 + DiffuseModulation)"}};
            if (map_version >= 21)
                candidates.insert(candidates.begin(),
                                  {V::v11_csgo, "80-byte version 11 in a version 21 map is the CS:GO layout (+ UniformScale)"});
            else
                candidates.insert(candidates.begin(),
                                  {V::v11_bm, "80-byte version 11 in a version 20 map is Black Mesa's layout (+ FlagsEx)"});
            break;
        case 12: candidates = {{V::v12, "version 12: CS:GO v11 entries with a 32-bit leaf list (Strata)"}}; break;
        case 13: candidates = {{V::v13, "version 13: per-axis scale, 32-bit leaf list (Strata)"}}; break;
        default: break;
    }
    if (!have_props) {
        if (candidates.empty()) {
            f.variant = V::unknown;
            f.name = "unknown";
            f.reason = "no props; version " + std::to_string(version) + " is not known";
            return f;
        }
        f.variant = candidates.front().variant;
        f.entry_size = static_prop_size(f.variant);
        f.name = std::string(static_prop_variant_name(f.variant));
        f.reason = "no props to measure: the usual layout of version " + std::to_string(version) +
                   (version == 10 || version == 11 ? " for a version " + std::to_string(map_version) + " map" : "");
        return f;
    }
    for (const Candidate& c : candidates) {
        if (static_prop_size(c.variant) != entry_size) continue;
        f.variant = c.variant;
        f.entry_size = entry_size;
        f.name = std::string(static_prop_variant_name(c.variant));
        f.reason = "version " + std::to_string(version) + ", " + std::to_string(entry_size) + "-byte entries: " + c.why;
        return f;
    }
    f.variant = V::unknown;
    f.entry_size = entry_size;
    f.name = "unknown";
    f.reason = "version " + std::to_string(version) + " with " + std::to_string(entry_size) +
               "-byte entries matches no known layout: decoded the common 56-byte v4 part, the other " +
               std::to_string(entry_size >= kV4Size ? entry_size - kV4Size : 0) + " bytes of each entry are kept as stored";
    return f;
}

StaticPropsLump decode_static_props(ByteSpan data, uint16_t version, ByteOrder order, int map_version,
                                    const Location& where) {
    StaticPropsLump out;
    Reader r{data, order, where};
    const int32_t n_names = r.count("static prop dictionary", STATIC_PROP_NAME_LENGTH);
    out.names.reserve(size_t(n_names));
    for (int32_t i = 0; i < n_names; ++i, r.at += STATIC_PROP_NAME_LENGTH)
        out.names.push_back(read_name(data.data() + r.at, STATIC_PROP_NAME_LENGTH));
    const size_t leaf_size = version >= 12 ? 4 : 2;
    const int32_t n_leaves = r.count("static prop leaf list", leaf_size);
    out.leaves.resize(size_t(n_leaves));
    for (size_t i = 0; i < size_t(n_leaves); ++i, r.at += leaf_size)
        out.leaves[i] = leaf_size == 4 ? load<uint32_t>(data.data() + r.at, order) : load<uint16_t>(data.data() + r.at, order);
    r.need(4, "static prop count");
    const int32_t n_props = load<int32_t>(data.data() + r.at, order);
    if (n_props < 0) throw Error(advance(where, r.at), "static prop count " + std::to_string(n_props) + " is negative");
    r.at += 4;
    const size_t remaining = data.size() - r.at;
    if (n_props == 0) {
        out.format = detect_static_prop_format(version, 0, map_version, false);
        return out;
    }
    if (remaining % size_t(n_props) != 0)
        throw Error(advance(where, r.at), std::to_string(remaining) + " bytes after the static prop count are not a whole number of " +
                                              std::to_string(n_props) + " entries");
    const size_t entry = remaining / size_t(n_props);
    if (entry < kV4Size)
        throw Error(advance(where, r.at), std::to_string(n_props) + " static props in " + std::to_string(remaining) +
                                              " bytes: " + std::to_string(entry) + "-byte entries are smaller than the 56-byte v4 record");
    out.format = detect_static_prop_format(version, uint32_t(std::min<size_t>(entry, UINT32_MAX)), map_version, true);
    const uint32_t fields = fields_of(out.format.variant);
    out.props.resize(size_t(n_props));
    for (size_t i = 0; i < size_t(n_props); ++i) {
        const uint8_t* p = data.data() + r.at + i * entry;
        StaticProp& s = out.props[i];
        s.stored.assign(p, p + entry);
        auto f32 = [&](size_t at) { return load<float>(p + at, order); };
        for (int k = 0; k < 3; ++k) {
            s.origin[size_t(k)] = f32(size_t(4 * k));
            s.angles[size_t(k)] = f32(size_t(12 + 4 * k));
            s.lighting_origin[size_t(k)] = f32(size_t(44 + 4 * k));
        }
        s.prop_type = load<uint16_t>(p + 24, order);
        s.first_leaf = load<uint16_t>(p + 26, order);
        s.leaf_count = load<uint16_t>(p + 28, order);
        s.solid = p[30];
        s.flags = (fields & kIntFlags) ? 0 : p[31];
        s.skin = load<int32_t>(p + 32, order);
        s.fade_min_dist = f32(36);
        s.fade_max_dist = f32(40);
        size_t at = kV4Size;
        if (fields & kFadeScale) s.forced_fade_scale = f32(at), at += 4;
        if (fields & kDxLevels) {
            s.min_dx_level = load<uint16_t>(p + at, order);
            s.max_dx_level = load<uint16_t>(p + at + 2, order);
            at += 4;
        }
        if (fields & kIntFlags) {
            s.flags = load<uint32_t>(p + at, order);
            s.lightmap_res_x = load<uint16_t>(p + at + 4, order);
            s.lightmap_res_y = load<uint16_t>(p + at + 6, order);
            at += 8;
        }
        if (fields & kCpuGpu) {
            s.min_cpu_level = p[at], s.max_cpu_level = p[at + 1], s.min_gpu_level = p[at + 2], s.max_gpu_level = p[at + 3];
            at += 4;
        }
        if (fields & kDiffuse) std::copy_n(p + at, 4, s.diffuse_modulation.begin()), at += 4;
        if (fields & kX360) s.disable_x360 = p[at] != 0, at += 4;
        if (fields & kFlagsEx) s.flags_ex = load<uint32_t>(p + at, order), at += 4;
        if (fields & kScale1) {
            const float k = f32(at);
            s.scale = {k, k, k};
            at += 4;
        }
        if (fields & kScale3) {
            s.scale = {f32(at), f32(at + 4), f32(at + 8)};
            at += 12;
        }
    }
    return out;
}

Bytes encode_static_props(const StaticPropsLump& lump, ByteOrder order) {
    const StaticPropFormat& f = lump.format;
    const bool wide = f.version >= 12;
    Bytes out;
    append<int32_t>(out, int32_t(lump.names.size()), order);
    for (const std::string& name : lump.names) write_name(out, name, STATIC_PROP_NAME_LENGTH, "static prop model name");
    append<int32_t>(out, int32_t(lump.leaves.size()), order);
    for (uint32_t leaf : lump.leaves) {
        if (wide) {
            append<uint32_t>(out, leaf, order);
        } else {
            if (leaf > 0xffff)
                throw Error({"", "game_lump sprp", -1},
                            "leaf " + std::to_string(leaf) + " does not fit the 16-bit leaf list of version " + std::to_string(f.version));
            append<uint16_t>(out, uint16_t(leaf), order);
        }
    }
    append<int32_t>(out, int32_t(lump.props.size()), order);
    if (lump.props.empty()) return out;
    uint32_t entry = f.entry_size;
    if (f.variant != StaticPropVariant::unknown) entry = static_prop_size(f.variant);
    if (entry < kV4Size)
        throw Error({"", "game_lump sprp", -1}, "static prop entry size " + std::to_string(entry) + " is below the 56-byte v4 record");
    const uint32_t fields = fields_of(f.variant);
    for (const StaticProp& s : lump.props) {
        const size_t base = out.size();
        out.resize(base + entry, 0);
        uint8_t* p = out.data() + base;
        if (s.stored.size() == entry) std::memcpy(p, s.stored.data(), entry);
        auto f32 = [&](size_t at, float v) { store<float>(p + at, v, order); };
        for (int k = 0; k < 3; ++k) {
            f32(size_t(4 * k), s.origin[size_t(k)]);
            f32(size_t(12 + 4 * k), s.angles[size_t(k)]);
            f32(size_t(44 + 4 * k), s.lighting_origin[size_t(k)]);
        }
        store<uint16_t>(p + 24, s.prop_type, order);
        store<uint16_t>(p + 26, s.first_leaf, order);
        store<uint16_t>(p + 28, s.leaf_count, order);
        p[30] = s.solid;
        if (!(fields & kIntFlags)) {
            if (s.flags > 0xff)
                throw Error({"", "game_lump sprp", -1},
                            "static prop flags " + std::to_string(s.flags) + " do not fit the byte of " + f.name);
            p[31] = uint8_t(s.flags);
        }
        store<int32_t>(p + 32, s.skin, order);
        f32(36, s.fade_min_dist);
        f32(40, s.fade_max_dist);
        size_t at = kV4Size;
        if (fields & kFadeScale) f32(at, s.forced_fade_scale), at += 4;
        if (fields & kDxLevels) {
            store<uint16_t>(p + at, s.min_dx_level, order);
            store<uint16_t>(p + at + 2, s.max_dx_level, order);
            at += 4;
        }
        if (fields & kIntFlags) {
            store<uint32_t>(p + at, s.flags, order);
            store<uint16_t>(p + at + 4, s.lightmap_res_x, order);
            store<uint16_t>(p + at + 6, s.lightmap_res_y, order);
            at += 8;
        }
        if (fields & kCpuGpu) {
            p[at] = s.min_cpu_level, p[at + 1] = s.max_cpu_level, p[at + 2] = s.min_gpu_level, p[at + 3] = s.max_gpu_level;
            at += 4;
        }
        if (fields & kDiffuse) std::copy_n(s.diffuse_modulation.begin(), 4, p + at), at += 4;
        if (fields & kX360) {
            // A bool padded to four bytes: keep the stored padding, set the flag byte.
            if ((p[at] != 0) != s.disable_x360) p[at] = s.disable_x360 ? 1 : 0;
            at += 4;
        }
        if (fields & kFlagsEx) store<uint32_t>(p + at, s.flags_ex, order), at += 4;
        if (fields & kScale1) {
            if (s.scale[0] != s.scale[1] || s.scale[0] != s.scale[2])
                throw Error({"", "game_lump sprp", -1}, f.name + " stores one uniform scale; the prop has a per-axis scale");
            f32(at, s.scale[0]);
            at += 4;
        }
        if (fields & kScale3) {
            for (size_t k = 0; k < 3; ++k) f32(at + 4 * k, s.scale[k]);
            at += 12;
        }
    }
    return out;
}

std::optional<size_t> find_game_lump(const Bsp& bsp, uint32_t id) {
    const auto& g = bsp.game_lumps();
    for (size_t k = 0; k < g.size(); ++k)
        if (g[k].id == id) return k;
    return std::nullopt;
}

namespace {
Location game_lump_location(const Bsp& bsp, size_t k) {
    const ByteSpan stored = bsp.game_lump_stored(k);
    Location where{bsp.file_name(), std::string(bsp.lump_name(lump::game_lump)) + " " + bsp.game_lumps()[k].name(), -1};
    // Offsets inside a compressed game lump are not file offsets: only give
    // one for game lumps stored as they are.
    if (!bsp.game_lumps()[k].compressed() && !stored.empty())
        where.offset = int64_t(stored.data() - bsp.file_bytes().data());
    return where;
}
}  // namespace

std::optional<StaticPropsLump> read_static_props(const Bsp& bsp) {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", 0}, "static props exist only in Source maps");
    const auto k = find_game_lump(bsp, GAMELUMP_STATIC_PROPS);
    if (!k) return std::nullopt;
    const GameLump& g = bsp.game_lumps()[*k];
    return decode_static_props(bsp.game_lump_decoded(*k), g.version, bsp.byte_order(), bsp.version().value_or(0),
                               game_lump_location(bsp, *k));
}

std::optional<DetailPropsLump> read_detail_props(const Bsp& bsp) {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", 0}, "detail props exist only in Source maps");
    const auto k = find_game_lump(bsp, GAMELUMP_DETAIL_PROPS);
    if (!k) return std::nullopt;
    const GameLump& g = bsp.game_lumps()[*k];
    if (g.version < GAMELUMP_DETAIL_PROPS_VERSION) return DetailPropsLump{g.version, {}, {}, {}};
    return decode_detail_props(bsp.game_lump_decoded(*k), g.version, bsp.byte_order(), game_lump_location(bsp, *k));
}

void write_static_props(Bsp& bsp, const StaticPropsLump& props) {
    const auto k = find_game_lump(bsp, GAMELUMP_STATIC_PROPS);
    if (!k) throw Error({bsp.file_name(), std::string(bsp.lump_name(lump::game_lump)), -1}, "the map has no sprp game lump");
    if (bsp.game_lumps()[*k].version != props.format.version)
        throw Error({bsp.file_name(), "game_lump sprp", -1},
                    "props are in version " + std::to_string(props.format.version) + ", the game lump is version " +
                        std::to_string(bsp.game_lumps()[*k].version));
    bsp.replace_game_lump(*k, encode_static_props(props, bsp.byte_order()));
}

// ---------------------------------------------------------------------------
// Detail props
// ---------------------------------------------------------------------------

DetailPropsSections detail_props_sections(ByteSpan data, uint16_t version, ByteOrder order, const Location& where) {
    if (version < GAMELUMP_DETAIL_PROPS_VERSION)
        throw Error(where, "detail prop lump version " + std::to_string(version) +
                               " is the old format the engine ignores (needs version 4): not decoded");
    DetailPropsSections out;
    Reader r{data, order, where};
    const int32_t n_models = r.count("detail model dictionary", DETAIL_NAME_LENGTH);
    for (int32_t i = 0; i < n_models; ++i, r.at += DETAIL_NAME_LENGTH)
        out.models.push_back(read_name(data.data() + r.at, DETAIL_NAME_LENGTH));
    const int32_t n_sprites = r.count("detail sprite dictionary", sizeof(DetailSpriteDictLump_t));
    out.sprites = data.subspan(r.at, size_t(n_sprites) * sizeof(DetailSpriteDictLump_t));
    r.at += out.sprites.size();
    const int32_t n_objects = r.count("detail object", sizeof(DetailObjectLump_t));
    out.objects = data.subspan(r.at, size_t(n_objects) * sizeof(DetailObjectLump_t));
    r.at += out.objects.size();
    if (r.at != data.size())
        throw Error(advance(where, r.at), std::to_string(data.size() - r.at) + " bytes follow the detail objects");
    return out;
}

DetailPropsLump decode_detail_props(ByteSpan data, uint16_t version, ByteOrder order, const Location& where) {
    DetailPropsSections sections = detail_props_sections(data, version, order, where);
    DetailPropsLump out;
    out.version = version;
    out.models = std::move(sections.models);
    out.sprites = decode_records<DetailSpriteDictLump_t>(sections.sprites, order);
    out.objects = decode_records<DetailObjectLump_t>(sections.objects, order);
    return out;
}

Bytes encode_detail_props(const DetailPropsLump& lump, ByteOrder order) {
    Bytes out;
    append<int32_t>(out, int32_t(lump.models.size()), order);
    for (const std::string& m : lump.models) write_name(out, m, DETAIL_NAME_LENGTH, "detail model name");
    append<int32_t>(out, int32_t(lump.sprites.size()), order);
    Bytes sprites = encode_records<DetailSpriteDictLump_t>(lump.sprites, order);
    out.insert(out.end(), sprites.begin(), sprites.end());
    append<int32_t>(out, int32_t(lump.objects.size()), order);
    Bytes objects = encode_records<DetailObjectLump_t>(lump.objects, order);
    out.insert(out.end(), objects.begin(), objects.end());
    return out;
}

std::vector<DetailPropLightstylesLump_t> decode_detail_prop_lighting(ByteSpan data, ByteOrder order,
                                                                     const Location& where) {
    Reader r{data, order, where};
    const int32_t n = r.count("detail prop light style", sizeof(DetailPropLightstylesLump_t));
    auto out = decode_records<DetailPropLightstylesLump_t>(data.subspan(r.at, size_t(n) * sizeof(DetailPropLightstylesLump_t)), order);
    r.at += size_t(n) * sizeof(DetailPropLightstylesLump_t);
    if (r.at != data.size())
        throw Error(advance(where, r.at), std::to_string(data.size() - r.at) + " bytes follow the detail prop light styles");
    return out;
}

}  // namespace bspkit::source
