// Source game lumps with props (public/gamebspfile.h):
//   'sprp' static props: model dictionary (128-char names), leaf list, props;
//   'dprp' detail props: model dictionary, sprite dictionary, detail objects;
//   'dplt' / 'dplh' detail prop lighting (LDR / HDR).
//
// Static prop records changed with almost every game, and some games reuse a
// version number with another layout. The variant is chosen from the game
// lump version AND the entry size (bytes after the prop count / prop count),
// and the map version where two games share both; StaticPropFormat::reason
// says why. Props decode into one neutral struct and encode back into the
// same variant, keeping padding and unknown bytes of every entry:
//
//   auto props = bspkit::source::read_static_props(bsp);   // nullopt: no sprp
//   props->props[0].origin[2] += 16;
//   bspkit::source::write_static_props(bsp, *props);        // replace_game_lump
//   bsp.save("moved.bsp");
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/formats/source.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::source {

/// Game lump ids as the container reports them (GameLump::id).
inline constexpr uint32_t GAMELUMP_STATIC_PROPS = 0x73707270;              // 'sprp'
inline constexpr uint32_t GAMELUMP_DETAIL_PROPS = 0x64707270;              // 'dprp'
inline constexpr uint32_t GAMELUMP_DETAIL_PROP_LIGHTING = 0x64706c74;      // 'dplt'
inline constexpr uint32_t GAMELUMP_DETAIL_PROP_LIGHTING_HDR = 0x64706c68;  // 'dplh'

inline constexpr int STATIC_PROP_NAME_LENGTH = 128;
inline constexpr int DETAIL_NAME_LENGTH = 128;

/// StaticPropLump_t::m_Flags bits.
inline constexpr uint32_t STATIC_PROP_FLAG_FADES = 0x1, STATIC_PROP_USE_LIGHTING_ORIGIN = 0x2,
                          STATIC_PROP_NO_DRAW = 0x4, STATIC_PROP_IGNORE_NORMALS = 0x8, STATIC_PROP_NO_SHADOW = 0x10,
                          STATIC_PROP_SCREEN_SPACE_FADE = 0x20, STATIC_PROP_NO_PER_VERTEX_LIGHTING = 0x40,
                          STATIC_PROP_NO_SELF_SHADOWING = 0x80;

/// Every StaticPropLump_t layout bspkit knows.
enum class StaticPropVariant : uint8_t {
    v4,        ///< 56: HL2 beta, Bloodlines
    v5,        ///< 60: + ForcedFadeScale (HL2)
    v6,        ///< 64: + Min/MaxDXLevel (Source 2006/2007)
    v7_l4d,    ///< 68: v6 + DiffuseModulation (early Left 4 Dead)
    v7_2013,   ///< 72: "v7*": v6 + int Flags + lightmap resolution, the byte after Solid unused (TF2 before v10)
    v8,        ///< 68: v5 + CPU/GPU levels + DiffuseModulation (Left 4 Dead)
    v9,        ///< 72: v8 + DisableX360 (Left 4 Dead 2, Portal 2)
    v10_2013,  ///< 72: the v7* layout under version 10 (Source SDK 2013, TF2)
    v10_csgo,  ///< 76: v9 + FlagsEx (CS:GO before prop scaling, Insurgency)
    v11_lite,  ///< 76: v10_2013 + DiffuseModulation (Black Mesa cu3/cu4)
    v11_bm,    ///< 80: v11_lite + FlagsEx (Black Mesa, version 20 maps)
    v11_csgo,  ///< 80: v10_csgo + UniformScale (CS:GO, version 21 maps)
    v12,       ///< 80: v11_csgo layout, 32-bit leaf list (Strata Source)
    v13,       ///< 88: v10_csgo + non-uniform Scale[3], 32-bit leaf list (Strata Source)
    unknown,   ///< a (version, size) pair not known: the v4 part decoded, the rest kept raw
};

struct StaticPropFormat {
    uint16_t version = 0;      ///< game lump version
    StaticPropVariant variant = StaticPropVariant::unknown;
    uint32_t entry_size = 0;   ///< bytes per prop
    bool wide_leaves = false;  ///< leaf list of uint32 (v12+) instead of uint16
    std::string name;          ///< e.g. "v10 (Source SDK 2013)"
    std::string reason;        ///< how the variant was chosen
};

/// Entry size of a variant (0 for unknown).
uint32_t static_prop_size(StaticPropVariant variant) noexcept;
std::string_view static_prop_variant_name(StaticPropVariant variant) noexcept;

/// One static prop in a variant-neutral form. Fields absent from the
/// variant keep the defaults shown and are not written back.
struct StaticProp {
    std::array<float, 3> origin{};
    std::array<float, 3> angles{};  ///< pitch, yaw, roll
    uint16_t prop_type = 0;         ///< index into the model dictionary
    uint16_t first_leaf = 0;        ///< index into the leaf list
    uint16_t leaf_count = 0;
    uint8_t solid = 0;              ///< SOLID_NONE 0, SOLID_BBOX 2, SOLID_VPHYSICS 6
    uint32_t flags = 0;             ///< STATIC_PROP_* (a byte, or an int in the 2013 layouts)
    int32_t skin = 0;
    float fade_min_dist = 0, fade_max_dist = 0;
    std::array<float, 3> lighting_origin{};
    float forced_fade_scale = 1;                  ///< v5+
    uint16_t min_dx_level = 0, max_dx_level = 0;  ///< v6, v7, 2013 layouts
    uint16_t lightmap_res_x = 0, lightmap_res_y = 0;  ///< 2013 layouts
    uint8_t min_cpu_level = 0, max_cpu_level = 0, min_gpu_level = 0, max_gpu_level = 0;  ///< v8+
    std::array<uint8_t, 4> diffuse_modulation{255, 255, 255, 255};  ///< r, g, b, a (v7+)
    bool disable_x360 = false;                    ///< v9, CS:GO, Strata
    uint32_t flags_ex = 0;                        ///< CS:GO, Black Mesa, Strata
    std::array<float, 3> scale{1, 1, 1};          ///< uniform (v11 CS:GO, v12) or per axis (v13)
    /// The entry as stored: padding and bytes of unknown variants are written
    /// back from here. Empty for new props (zeros are written).
    Bytes stored;
};

struct StaticPropsLump {
    StaticPropFormat format;
    std::vector<std::string> names;  ///< model dictionary
    std::vector<uint32_t> leaves;    ///< leaf list (indices into the leafs lump)
    std::vector<StaticProp> props;
};

/// Chooses the variant for a game lump version, entry size and map version.
StaticPropFormat detect_static_prop_format(uint16_t version, uint32_t entry_size, int map_version, bool have_props);

/// Decodes an 'sprp' game lump. Throws Error at `where` (offset advanced to
/// the failing byte when `where.offset` >= 0) for counts that do not fit,
/// entries smaller than the v4 record or remainders that are not a whole
/// number of entries.
StaticPropsLump decode_static_props(ByteSpan data, uint16_t version, ByteOrder order, int map_version,
                                    const Location& where);
/// Encodes back in `lump.format`'s variant. Throws Error when a field does
/// not fit the variant (e.g. a leaf index above 65535 in a 16-bit leaf list).
Bytes encode_static_props(const StaticPropsLump& lump, ByteOrder order);

/// Index of the first game lump with `id`, if any.
std::optional<size_t> find_game_lump(const Bsp& bsp, uint32_t id);
/// The map's static props, nullopt when it has no 'sprp' game lump.
std::optional<StaticPropsLump> read_static_props(const Bsp& bsp);
/// Replaces the 'sprp' game lump with `props` encoded; throws Error when the
/// map has none. Every other game lump is kept byte for byte.
void write_static_props(Bsp& bsp, const StaticPropsLump& props);

// ---------------------------------------------------------------------------
// Detail props
// ---------------------------------------------------------------------------
struct DetailObjectDictLump_t {
    char m_Name[DETAIL_NAME_LENGTH];
    static constexpr std::string_view kLayout = "128b";
};
BSPKIT_RECORD(DetailObjectDictLump_t, 128);

struct DetailSpriteDictLump_t {
    float m_UL[2];     ///< upper left
    float m_LR[2];     ///< lower right
    float m_TexUL[2];
    float m_TexLR[2];
    static constexpr std::string_view kLayout = "8f";
};
BSPKIT_RECORD(DetailSpriteDictLump_t, 32);

enum DetailPropType_t : uint8_t { DETAIL_PROP_TYPE_MODEL = 0, DETAIL_PROP_TYPE_SPRITE, DETAIL_PROP_TYPE_SHAPE_CROSS, DETAIL_PROP_TYPE_SHAPE_TRI };

struct DetailObjectLump_t {
    Vector m_Origin;
    Vector m_Angles;
    uint16_t m_DetailModel;  ///< model dictionary index, or sprite index for sprite types
    uint16_t m_Leaf;
    ColorRGBExp32 m_Lighting;
    uint32_t m_LightStyles;  ///< index into the dplt/dplh records
    uint8_t m_LightStyleCount;
    uint8_t m_SwayAmount;
    uint8_t m_ShapeAngle;
    uint8_t m_ShapeSize;
    uint8_t m_Orientation;
    uint8_t m_Padding2[3];
    uint8_t m_Type;  ///< DetailPropType_t
    uint8_t m_Padding3[3];
    float m_flScale;
    static constexpr std::string_view kLayout = "6f2h4bi5b3bb3bf";
};
BSPKIT_RECORD(DetailObjectLump_t, 52);

struct DetailPropLightstylesLump_t {
    ColorRGBExp32 m_Lighting;
    uint8_t m_Style;
    static constexpr std::string_view kLayout = "5b";
};
BSPKIT_RECORD(DetailPropLightstylesLump_t, 5);

/// The 'dprp' game lump of version 4 (GAMELUMP_DETAIL_PROPS_VERSION).
/// Older versions are ignored by the engine ("old detail prop file format")
/// and are not decoded.
struct DetailPropsLump {
    uint16_t version = 0;
    std::vector<std::string> models;
    std::vector<DetailSpriteDictLump_t> sprites;
    std::vector<DetailObjectLump_t> objects;
};
inline constexpr uint16_t GAMELUMP_DETAIL_PROPS_VERSION = 4;

/// Decodes 'dprp'; throws Error for version < 4 or counts that do not fit.
DetailPropsLump decode_detail_props(ByteSpan data, uint16_t version, ByteOrder order, const Location& where);

/// The parts of a 'dprp' of version 4 as decode_detail_props finds them (with
/// the same errors): the model dictionary decoded, the sprite dictionary and
/// the objects as the bytes of their records, for readers that walk the
/// objects (often 10,000 and more) without a copy of them (for_each_record).
struct DetailPropsSections {
    std::vector<std::string> models;
    ByteSpan sprites;  ///< DetailSpriteDictLump_t records
    ByteSpan objects;  ///< DetailObjectLump_t records
};
DetailPropsSections detail_props_sections(ByteSpan data, uint16_t version, ByteOrder order, const Location& where);
Bytes encode_detail_props(const DetailPropsLump& lump, ByteOrder order);
/// The map's detail props, nullopt when it has no 'dprp' game lump. A dprp
/// older than version 4 gives its version and empty lists (not decoded).
std::optional<DetailPropsLump> read_detail_props(const Bsp& bsp);

/// Decodes 'dplt' / 'dplh': an int count, then 5-byte records.
std::vector<DetailPropLightstylesLump_t> decode_detail_prop_lighting(ByteSpan data, ByteOrder order,
                                                                     const Location& where);

}  // namespace bspkit::source
