// decompile on maps the tests generate: the compiled room map (Quake 1, no
// brush lump) against its own design's solid test, every generated sample
// of every format (a map or an Error, never a crash), and entity text an
// editor map cannot hold (a quoted value spanning lines).
#include <bspkit/decompile.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/formats/quake1.hpp>

#include "room_map.hpp"
#include "samples.hpp"

#include <gtest/gtest.h>

#include <random>

namespace bspkit {
namespace {

using mapfile::Vec3d;

bool inside(const mapfile::Brush& b, const Vec3d& p) {
    for (const auto& s : b.sides) {
        const auto pl = mapfile::plane_from_points(s.points);
        if (pl.normal[0] * p[0] + pl.normal[1] * p[1] + pl.normal[2] * p[2] - pl.dist > 0) return false;
    }
    return true;
}

TEST(Decompile, RoomMapSolidsMatchTheDesign) {
    const samples::RoomDesign design = samples::room_design();
    const Bsp bsp = Bsp::parse(samples::compile_room_map(design), "rooms.bsp");
    const decompile::Result r = decompile::decompile(bsp);
    ASSERT_EQ(r.map.dialect, mapfile::Dialect::quake);
    ASSERT_GE(r.map.entities.size(), 2u);
    // The door is a brush entity with its own brushes.
    bool door = false;
    for (const auto& e : r.map.entities)
        if (e.get("classname") == "func_door") door = !e.brushes.empty();
    EXPECT_TRUE(door);
    std::vector<const mapfile::Brush*> solids;
    for (const auto& o : r.origins)
        if (o.entity == 0 && o.contents == quake1::CONTENTS_SOLID) solids.push_back(&r.map.entities[0].brushes[o.brush]);
    ASSERT_FALSE(solids.empty());
    // Points of the design's grid (away from cell boundaries by a quarter cell): solid exactly where designed.
    const auto& q = quake1::Map(bsp).models()[0];
    std::mt19937 rng(7);
    size_t checked = 0, solid = 0;
    for (int n = 0; n < 20000; ++n) {
        Vec3d p;
        for (size_t k = 0; k < 3; ++k) p[k] = std::uniform_real_distribution<double>(q.mins[k], q.maxs[k])(rng);
        bool near_boundary = false;
        for (size_t k = 0; k < 3; ++k) {
            const double f = (p[k] - design.origin[k]) / design.cell;
            near_boundary |= std::abs(f - std::round(f)) < 0.25;
        }
        if (near_boundary) continue;
        const bool want = design.solid({float(p[0]), float(p[1]), float(p[2])});
        bool got = false;
        for (const auto* b : solids) got = got || inside(*b, p);
        EXPECT_EQ(got, want) << p[0] << " " << p[1] << " " << p[2];
        ++checked;
        solid += want;
    }
    EXPECT_GT(checked, 1000u);
    EXPECT_GT(solid, 0u);
    EXPECT_TRUE(mapfile::read(mapfile::write(r.map), "rooms.map") == r.map);
}

TEST(Decompile, EverySampleGivesAMapOrAnError) {
    for (const auto& s : samples::all()) {
        try {
            const Bsp bsp = Bsp::parse(s.bytes, s.name);
            const auto r = decompile::decompile(bsp);
            const auto text = mapfile::write(r.map);
            EXPECT_TRUE(mapfile::read(text, s.name, r.map.dialect) == r.map) << s.name;
        } catch (const Error& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << s.name;
        }
    }
}

TEST(Decompile, EntityTextAnEditorMapCannotHoldIsCleaned) {
    Bsp bsp = Bsp::parse(samples::compile_room_map(samples::room_design()), "rooms.bsp");
    EntityLump ents = read_entities(bsp);
    ents.entities[0].set("message", "two\nlines\r\nthree");
    write_entities(bsp, ents);
    const auto r = decompile::decompile(bsp);
    EXPECT_EQ(r.map.entities[0].get("message"), "two lines  three");
    EXPECT_NO_THROW((void)mapfile::write(r.map));
}

}  // namespace
}  // namespace bspkit
