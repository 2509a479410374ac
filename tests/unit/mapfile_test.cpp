// The editor-map model: every dialect written and read back to the same
// data, hand-written files of each dialect parsed, bad text refused with an
// offset, and the texture projections' conversions.
#include <bspkit/mapfile.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace bspkit::mapfile {
namespace {

Side box_side(Vec3d a, Vec3d b, Vec3d c, std::string mat) {
    Side s;
    s.points = {a, b, c};
    s.material = std::move(mat);
    s.axes.u_axis = {1, 0, 0};
    s.axes.v_axis = {0, 0.6, -0.8};
    s.axes.u_shift = 12.5;
    s.axes.v_shift = -0.1;
    s.axes.u_scale = 0.25;
    s.axes.v_scale = 1.0 / 3.0;
    s.standard = {3, -7.25, 90, 0.5, -1};
    s.bp_matrix = {0.0078125, -0.001, 0.5, 0.25, 1.0 / 64, -3};
    s.contents = 1;
    s.flags = 0x200;
    s.value = 7;
    return s;
}

MapFile sample(Dialect d) {
    MapFile m;
    m.dialect = d;
    MapEntity world;
    world.pairs = {{"classname", "worldspawn"}, {"wad", "\\quake\\id1\\gfx.wad"}};
    Brush b;
    b.sides.push_back(box_side({0, 0, 64}, {64, 0, 64}, {64, 64, 64}, "FLOOR_1"));
    b.sides.push_back(box_side({0.1, 1e-7, -3}, {1e20, -5, 2}, {0, 1, 0}, "e1u1/wall"));
    b.sides.push_back(box_side({1, 2, 3}, {4, 5, 6}, {7, 8, 10}, "*04water"));
    b.sides.push_back(box_side({1, 2, 4}, {4, 5, 6}, {7, 8, 10}, "{BLUE"));
    world.brushes.push_back(b);
    world.brushes.push_back(b);
    m.entities.push_back(world);
    MapEntity light;
    light.pairs = {{"classname", "light"}, {"origin", "1 2 3"}, {"classname", "dup"}};
    m.entities.push_back(light);
    if (d == Dialect::quake3 || d == Dialect::quake3_bp) {
        Patch p;
        p.material = "textures/base/pipe";
        p.rows = 3;
        p.columns = 5;
        for (int i = 0; i < 15; ++i) p.points.push_back({double(i), i * 0.5, -i * 1.25, i / 7.0, 1 - i / 3.0});
        m.entities[0].patches.push_back(p);
    }
    if (d == Dialect::vmf) {
        Displacement disp;
        disp.power = 2;
        disp.start_position = {0, 0, 64};
        const int n = disp.vertex_count();
        for (int i = 0; i < n; ++i) {
            disp.normals.push_back({0, 0, i % 2 ? 1.0 : -1.0});
            disp.distances.push_back(i * 0.75);
            disp.offsets.push_back({0, 0, 0});
            disp.offset_normals.push_back({0, 0, 1});
            disp.alphas.push_back(i * 10.0);
        }
        for (int i = 0; i < disp.triangle_count(); ++i) disp.triangle_tags.push_back(i % 3 == 0 ? 9 : 1);
        disp.allowed_verts = {-1, -1, -1, -1, -1, -1, -1, -1, -1, 5};
        m.entities[0].brushes[0].sides[0].displacement = disp;
        m.entities[0].brushes[0].sides[1].lightmap_scale = 32;
        m.entities[0].brushes[0].sides[1].smoothing_groups = 5;
        assign_ids(m);
    }
    return m;
}

/// What a dialect keeps of a side: the other projection and fields are defaults.
MapFile kept_by_dialect(MapFile m) {
    for (auto& e : m.entities)
        for (auto& b : e.brushes)
            for (auto& s : b.sides) {
                if (uses_axes(m.dialect)) s.standard = {};
                else s.axes = {};
                if (m.dialect == Dialect::quake3_bp) s.standard = {};
                else s.bp_matrix = Side{}.bp_matrix;
                if (!uses_surface_flags(m.dialect)) s.contents = s.flags = s.value = 0;
            }
    return m;
}

class MapfileRoundTrip : public ::testing::TestWithParam<Dialect> {};

TEST_P(MapfileRoundTrip, WriteThenReadGivesTheSameData) {
    const MapFile m = kept_by_dialect(sample(GetParam()));
    const std::string text = write(m);
    const MapFile back = read(text, "t", GetParam());
    EXPECT_EQ(back, m) << text;
    // Detected without a hint too (the Quake 2 standard dialect reads as Quake 3 when it has patches; none here).
    EXPECT_EQ(read(text, "t").dialect, GetParam()) << text;
    // Written again: the same text.
    EXPECT_EQ(write(back), text);
}

INSTANTIATE_TEST_SUITE_P(Dialects, MapfileRoundTrip,
                         ::testing::Values(Dialect::quake, Dialect::valve220, Dialect::quake2, Dialect::quake2_standard,
                                           Dialect::quake3, Dialect::quake3_bp, Dialect::vmf),
                         [](const auto& info) {
                             std::string n(dialect_name(info.param));
                             for (auto& c : n)
                                 if (c == '-') c = '_';
                             return n;
                         });

TEST(Mapfile, ReadsHandWrittenFilesOfEachDialect) {
    const MapFile q = read(R"(// Game: Quake
{
"classname" "worldspawn"
{
( -64 -64 -16 ) ( -64 -63 -16 ) ( -64 -64 -15 ) __TB_empty 0 0 0 1 1
( 64 64 16 ) ( 64 64 17 ) ( 64 65 16 ) +0button 5 -3 45 0.5 2 // comment
}
}
{ "classname" "info_player_start" "origin" "0 0 24" }
)");
    ASSERT_EQ(q.entities.size(), 2u);
    EXPECT_EQ(q.dialect, Dialect::quake);
    ASSERT_EQ(q.entities[0].brushes.size(), 1u);
    const Side& s = q.entities[0].brushes[0].sides[1];
    EXPECT_EQ(s.material, "+0button");
    EXPECT_EQ(s.standard.rotation, 45);
    EXPECT_EQ(s.standard.y_scale, 2);
    EXPECT_EQ(q.entities[1].get("origin"), "0 0 24");

    const MapFile q2 = read("{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) ( 0 1 0 ) ( 1 0 0 ) e1u1/floor 0 0 0 1 1 1 16 300\n}\n}\n");
    EXPECT_EQ(q2.dialect, Dialect::quake2_standard);
    EXPECT_EQ(q2.entities[0].brushes[0].sides[0].flags, 16);
    EXPECT_EQ(q2.entities[0].brushes[0].sides[0].value, 300);

    const MapFile vmf = read(R"vmf(versioninfo
{
	"editorversion" "400"
}
world
{
	"id" "1"
	"classname" "worldspawn"
	solid
	{
		"id" "2"
		side
		{
			"id" "3"
			"plane" "(-64 64 64) (64 64 64) (64 -64 64)"
			"material" "DEV/DEV_MEASUREGENERIC01B"
			"uaxis" "[1 0 0 0] 0.25"
			"vaxis" "[0 -1 0 0] 0.25"
			"rotation" "0"
			"lightmapscale" "16"
			"smoothing_groups" "0"
		}
	}
	hidden
	{
		solid
		{
			"id" "9"
		}
	}
}
entity
{
	"id" "4"
	"classname" "info_player_start"
	"origin" "0 0 0"
	editor
	{
		"color" "0 255 0"
	}
}
)vmf");
    EXPECT_EQ(vmf.dialect, Dialect::vmf);
    ASSERT_EQ(vmf.entities.size(), 2u);
    ASSERT_EQ(vmf.entities[0].brushes.size(), 2u);
    EXPECT_EQ(vmf.entities[0].brushes[0].sides[0].axes.u_scale, 0.25);
    EXPECT_EQ(vmf.entities[0].brushes[1].id, 9);
    EXPECT_EQ(vmf.entities[1].id, 4);
    EXPECT_EQ(vmf.entities[1].get("classname"), "info_player_start");
}

TEST(Mapfile, BadTextIsAnErrorWithItsOffset) {
    const char* bad[] = {
        "{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) ( 0 1 0 ) ( 1 0 x ) T 0 0 0 1 1\n}\n}\n",
        "{\n\"classname\" \"worldspawn\"\n{\n( 0 0 0 ) ( 0 1 0 )",
        "{ \"a\" \"unterminated }",
        "{ \"a\" }",
        "world { \"id\" }",
        "world { solid { side { \"plane\" \"(1 2 3)\" } } }",
        "entity { }",
        "{ { patchDef2 { m ( 99999 3 0 0 0 ) ( ) } } }",
    };
    for (const char* text : bad) {
        try {
            (void)read(text, "bad.map");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_EQ(e.where().file, "bad.map");
            EXPECT_GE(e.where().offset, 0) << text;
        }
    }
    std::string deep = "world\n{\n";
    for (int i = 0; i < 100000; ++i) deep += "a {\n";
    EXPECT_THROW((void)read(deep, "deep.vmf"), Error);
}

TEST(Mapfile, WriterRefusesWhatTheFormatCannotHold) {
    MapFile m = sample(Dialect::valve220);
    m.entities[0].brushes[0].sides[0].material = "two words";
    EXPECT_THROW((void)write(m), Error);
    m = sample(Dialect::quake);
    m.entities[0].pairs[0].value = "a\"b";
    EXPECT_THROW((void)write(m), Error);
}

TEST(Mapfile, PlaneFromPointsFollowsQbsp) {
    // Points of a floor seen from above, in the order qbsp reads: normal +z.
    const Plane p = plane_from_points({Vec3d{0, 0, 64}, Vec3d{0, 64, 64}, Vec3d{64, 64, 64}});
    EXPECT_EQ(p.normal, (Vec3d{0, 0, 1}));
    EXPECT_EQ(p.dist, 64);
}

TEST(Mapfile, StandardProjectionInvertsItsVectors) {
    const Vec3d normals[] = {{0, 0, 1}, {0, 0, -1}, {1, 0, 0}, {-0.6, 0.8, 0}, {0, -1, 0}, {0.3, 0.3, 0.906}};
    for (const Vec3d& n : normals)
        for (double rot : {0.0, 15.0, 90.0, 180.0, 233.5})
            for (double sx : {1.0, -0.5, 2.0})
                for (double sy : {1.0, 0.25, -3.0}) {
                    const TextureStandard t{4, -12, rot, sx, sy};
                    const auto vecs = standard_vectors(n, t);
                    const auto again = standard_vectors(n, standard_from_vectors(n, vecs));
                    for (size_t i = 0; i < 2; ++i)
                        for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(again[i][k], vecs[i][k], 1e-9) << rot << " " << sx << " " << sy;
                }
    // The axes form is exact both ways.
    const std::array<std::array<double, 4>, 2> v{{{0.25, 0, -0.125, 3}, {0, 0.5, 0, -8}}};
    const auto back = vectors_from_axes(axes_from_vectors(v));
    for (size_t i = 0; i < 2; ++i)
        for (size_t k = 0; k < 4; ++k) EXPECT_NEAR(back[i][k], v[i][k], 1e-15);
}

}  // namespace
}  // namespace bspkit::mapfile
