// Whether a brush model's entity blocks traces when the map starts: the
// rules the games' spawn functions apply (SOLID_BSP against SOLID_NOT /
// SOLID_TRIGGER; Source's FSOLID_NOT_SOLID), by classname, spawnflags and
// keys. The engines' traces skip entities that are not solid, so
// TraceOptions::models skips their models. Facts from the games' code
// (id's QuakeC and game DLLs, the Half-Life / Counter-Strike SDKs, the Source
// SDK); each rule is a comment in solidity.cpp.
#pragma once

#include <bspkit/entities.hpp>
#include <bspkit/format.hpp>

namespace bspkit::query::detail {

/// False when the game spawns `entity` (the first entity naming a brush
/// model) not solid; true otherwise, unknown classnames included.
bool solid_at_spawn(Format format, const Entity& entity);

}  // namespace bspkit::query::detail
