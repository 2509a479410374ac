// The games' spawn rules for brush entities that do not block traces (see
// solidity.hpp). Only what the map's own keys decide is modelled: an entity
// a game turns solid later (a trigger-spawned wall, a toggled brush) counts
// as it is when the map starts.
#include "query/solidity.hpp"

#include <bspkit/ascii.hpp>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace bspkit::query::detail {
namespace {

/// The value of `key` (the engines match key names without case; Source
/// writes "Solidity", "StartDisabled") as a whole number, as atoi reads it:
/// leading blanks, a sign, then digits up to the first other character; 0
/// when absent, not a number or out of range.
int64_t number_key(const Entity& e, std::string_view key) {
    for (const KeyValue& kv : e.pairs) {
        if (!ascii_iequals(kv.key, key)) continue;
        std::string_view v = kv.value;
        while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
        if (v.starts_with('+')) v.remove_prefix(1);
        int64_t n = 0;
        if (std::from_chars(v.data(), v.data() + v.size(), n).ec != std::errc{}) return 0;
        return n;
    }
    return 0;
}

bool one_of(std::string_view cls, std::initializer_list<std::string_view> names) {
    for (std::string_view n : names)
        if (cls == n) return true;
    return false;
}

/// Quake 1, BSP2 and GoldSrc maps: Quake's QuakeC, Half-Life's and
/// Counter-Strike's game DLLs (Half-Life maps also come as version 29).
bool quake1_family_solid(Format format, std::string_view cls, const Entity& e) {
    // Counter-Strike's zones and Half-Life's func_friction call InitTrigger
    // (SOLID_TRIGGER); game_* rule brushes spawn SOLID_NOT (CRuleEntity),
    // kept only "for volume testing".
    if (one_of(cls, {"func_buyzone", "func_bomb_target", "func_hostage_rescue", "func_escapezone",
                     "func_vip_safetyzone", "func_friction"}) ||
        cls.starts_with("game_"))
        return false;
    const int64_t flags = number_key(e, "spawnflags");
    // CBaseDoor (func_door, func_water): a skin other than 0 is a contents
    // (water, slime, lava...) and the door SOLID_NOT. Quake's doors have no skin.
    if ((cls == "func_water" || cls == "func_door") && number_key(e, "skin") != 0) return false;
    // func_wall_toggle "Starts Invisible" (SF_WALL_START_OFF 1): TurnOff, SOLID_NOT.
    if (cls == "func_wall_toggle" && (flags & 1)) return false;
    // Half-Life's rotating door "Passable" (SF_DOOR_PASSABLE 8).
    if (cls == "func_door_rotating" && (flags & 8)) return false;
    if (format == Format::goldsrc) {
        // Flags whose bits mean something else in Quake's QuakeC (func_door 8
        // is its gold key), so read only in Half-Life's own format:
        // func_door "Passable" (8), func_rotating "Not Solid" (SF_ROTATING_NOT_SOLID 64).
        if (cls == "func_door" && (flags & 8)) return false;
        if (cls == "func_rotating" && (flags & 64)) return false;
    }
    return true;
}

/// Quake 2's game DLL (g_misc.c). Skill and game-mode bits (256-4096) are
/// cleared before an entity spawns.
bool quake2_solid(std::string_view cls, const Entity& e) {
    const int64_t flags = number_key(e, "spawnflags") & ~int64_t(0x1F00);
    // func_wall with TRIGGER_SPAWN / TOGGLE / START_ON (1 / 2 / 4): absent
    // until used unless START_ON.
    if (cls == "func_wall" && (flags & 7) && !(flags & 4)) return false;
    // func_explosive TRIGGER_SPAWN (1); func_object with any flag.
    if (cls == "func_explosive" && (flags & 1)) return false;
    if (cls == "func_object" && flags != 0) return false;
    return true;
}

/// The Source SDK's server DLL.
bool source_solid(std::string_view cls, const Entity& e) {
    // CS:S zones (CBaseTrigger::InitTrigger: FSOLID_TRIGGER | FSOLID_NOT_SOLID);
    // func_nav_blocker is SOLID_NONE.
    if (one_of(cls, {"func_buyzone", "func_bomb_target", "func_hostage_rescue", "func_nav_blocker"})) return false;
    // func_brush: Solidity 1 (BRUSHSOLID_NEVER) adds FSOLID_NOT_SOLID; a
    // brush that starts disabled is turned off, which does the same unless
    // Solidity is 2 (BRUSHSOLID_ALWAYS).
    if (cls == "func_brush") {
        const int64_t solidity = number_key(e, "Solidity");
        if (solidity == 1) return false;
        if (number_key(e, "StartDisabled") != 0 && solidity != 2) return false;
    }
    const int64_t flags = number_key(e, "spawnflags");
    if (cls == "func_wall_toggle" && (flags & 1)) return false;
    // CBaseDoor (func_door, and func_door_rotating through it) "Passable"
    // (SF_DOOR_PASSABLE 8): FSOLID_NOT_SOLID; func_water is exempt.
    if ((cls == "func_door" || cls == "func_door_rotating") && (flags & 8)) return false;
    return true;
}

}  // namespace

bool solid_at_spawn(Format format, const Entity& entity) {
    // Source's entity factories are looked up without case (a CUtlDict, whose
    // compare is caseless); Quake's and Half-Life's spawn functions by exact
    // name (strcmp, a DLL export), so there "Func_Wall" spawns nothing that
    // bspkit can name, and counts as solid like any unknown classname.
    const std::string lowered = format == Format::source ? ascii_lower(entity.get("classname")) : std::string();
    const std::string_view cls = format == Format::source ? std::string_view(lowered) : entity.get("classname");
    // Every family: triggers are SOLID_TRIGGER (Source: FSOLID_TRIGGER |
    // FSOLID_NOT_SOLID), touched and never traced against; an illusionary
    // wall is SOLID_NOT; a ladder is a volume the player climbs in
    // (Half-Life's CLadder SOLID_NOT; Quake mods' and Nexuiz's triggers).
    if (cls.starts_with("trigger_") || cls == "func_illusionary" || cls == "func_ladder") return false;
    switch (format) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: return quake1_family_solid(format, cls, entity);
        case Format::quake2: return quake2_solid(cls, entity);
        case Format::source: return source_solid(cls, entity);
        case Format::quake3:
        case Format::nightfire: return true;
    }
    return true;
}

}  // namespace bspkit::query::detail
