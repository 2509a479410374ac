// Geometry, lightmaps and textures of Quake 1 / BSP2 / 2PSB / GoldSrc,
// Quake 2 and Nightfire on small maps the tests build from typed records
// (quake_test_maps.hpp: a 128-unit box room, 1 texel per unit, 9 x 9 luxels
// per face), plus hostile variants of them and the CLI verbs.
#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/model.hpp>

#include "model/builders.hpp"
#include "model/polygon.hpp"
#include "quake_test_maps.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <png.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <random>
#include <set>

namespace bspkit {
namespace {

using namespace testmaps;

struct Variant {
    const char* name;
    const FormatLayout& (*layout)();
    std::optional<int32_t> version;
    bool goldsrc;
};

const Variant kVariants[] = {
    {"quake1", &layouts::quake1, 29, false},
    {"goldsrc", &layouts::goldsrc, 30, true},
    {"bsp2", &layouts::bsp2, std::nullopt, false},
    {"2psb", &layouts::bsp2_2psb, std::nullopt, false},
};

/// Runs fn.template operator()<Types>(variant) for each Quake 1 variant.
template <class Fn>
void each_variant(Fn&& fn) {
    for (const Variant& v : kVariants) {
        SCOPED_TRACE(v.name);
        const std::string_view n = v.name;
        if (n == "bsp2")
            fn.template operator()<quake1::Bsp2Types>(v);
        else if (n == "2psb")
            fn.template operator()<quake1::Bsp2RmqTypes>(v);
        else
            fn.template operator()<quake1::Bsp29Types>(v);
    }
}

template <class Types>
Bsp q1_bsp(const Variant& v, const std::function<void(Quake1Map<Types>&)>& edit = {}) {
    Quake1Map<Types> m(v.goldsrc);
    if (edit) edit(m);
    return Bsp::parse(m.build(v.layout(), v.version), std::string(v.name) + ".bsp");
}

/// Builds without packing, so the per-surface lightmap images stay.
model::Map unpacked(const Bsp& bsp, model::BuildOptions options = {}) {
    model::Map map;
    map.format = bsp.format();
    switch (bsp.format()) {
        case Format::quake2: quake2::build_model(bsp, options, map); break;
        case Format::nightfire: nightfire::build_model(bsp, options, map); break;
        default: quake1::build_model(bsp, options, map); break;
    }
    return map;
}

/// Decodes a PNG with libpng itself (not bspkit's reader).
struct Png {
    uint32_t width = 0, height = 0;
    Bytes rgba;
};
Png libpng_decode(const Bytes& file) {
    png_image img{};
    img.version = PNG_IMAGE_VERSION;
    Png out;
    if (!png_image_begin_read_from_memory(&img, file.data(), file.size())) return out;
    img.format = PNG_FORMAT_RGBA;
    out.rgba.resize(PNG_IMAGE_SIZE(img));
    if (!png_image_finish_read(&img, nullptr, out.rgba.data(), 0, nullptr)) {
        png_image_free(&img);
        return {};
    }
    out.width = img.width;
    out.height = img.height;
    return out;
}

double total_area(const model::Model& m) {
    double a = 0;
    for (const auto& s : m.surfaces) a += model::surface_area(s);
    return a;
}

/// The facts every box-room build must show, whatever the format.
void expect_box(const model::Map& map, bool uv_normalised_by_16) {
    ASSERT_EQ(map.models.size(), 1u);
    const model::Model& world = map.models[0];
    ASSERT_EQ(world.surfaces.size(), 6u);
    EXPECT_NEAR(total_area(world), 6 * 128.0 * 128.0, 1e-3);
    const auto box = box_faces();
    for (size_t f = 0; f < 6; ++f) {
        const model::Surface& s = world.surfaces[f];
        EXPECT_EQ(s.face, int64_t(f));
        EXPECT_EQ(s.indices.size(), 6u);  // a quad: two triangles
        ASSERT_TRUE(s.plane);
        EXPECT_EQ(s.plane->normal, (model::Vec3{box[f].normal[0], box[f].normal[1], box[f].normal[2]}));
        for (const model::Vertex& v : s.vertices) {
            EXPECT_NEAR(model::dot(v.position, s.plane->normal), s.plane->dist, 1e-4);
            EXPECT_EQ(v.normal, s.plane->normal);
            const float p[3] = {v.position.x, v.position.y, v.position.z};
            const double u = p[0] * box[f].s[0] + p[1] * box[f].s[1] + p[2] * box[f].s[2] + box[f].s[3];
            const double w = p[0] * box[f].t[0] + p[1] * box[f].t[1] + p[2] * box[f].t[2] + box[f].t[3];
            const double scale = uv_normalised_by_16 ? 16.0 : 1.0;  // the Quake 1 test texture is 16 x 16
            EXPECT_NEAR(v.uv.x, u / scale, 1e-5);
            EXPECT_NEAR(v.uv.y, w / scale, 1e-5);
            // Luxel centres of a 9 x 9 image: corners at 0.5 / 9 and 8.5 / 9.
            EXPECT_TRUE(std::abs(v.lightmap_uv.x - 0.5f / 9) < 1e-5 || std::abs(v.lightmap_uv.x - 8.5f / 9) < 1e-5)
                << v.lightmap_uv.x;
            EXPECT_TRUE(std::abs(v.lightmap_uv.y - 0.5f / 9) < 1e-5 || std::abs(v.lightmap_uv.y - 8.5f / 9) < 1e-5)
                << v.lightmap_uv.y;
        }
        ASSERT_GE(s.lightmap, 0);
        const model::LightmapImage& img = map.lightmap_images[size_t(s.lightmap)];
        EXPECT_EQ(img.width, 9u);
        EXPECT_EQ(img.height, 9u);
        ASSERT_EQ(img.styles.size(), 1u);
        ASSERT_EQ(img.styles[0].size(), 9u * 9u * 3u);
        for (uint8_t b : img.styles[0]) ASSERT_EQ(b, 0x80);
    }
    EXPECT_TRUE(map.diagnostics.empty());
}

// ---------------------------------------------------------------------------

TEST(QuakeGeometry, Quake1FamilyBoxRoom) {
    each_variant([]<class Types>(const Variant& v) {
        const Bsp bsp = q1_bsp<Types>(v);
        const model::Map map = unpacked(bsp);
        expect_box(map, true);
        ASSERT_EQ(map.materials.size(), 1u);
        EXPECT_EQ(map.materials[0].name, "bspkit_grey");
        EXPECT_EQ(map.materials[0].width, 16u);
        EXPECT_EQ(map.materials[0].flags, 0u);
        ASSERT_EQ(map.textures.size(), 1u);
        EXPECT_EQ(map.materials[0].texture, 0);
        const model::Texture& t = map.textures[0];
        ASSERT_EQ(t.rgba.size(), 16u * 16u * 4u);
        // Every pixel is index 7: Quake palette colour 7 is (107, 107, 107);
        // the GoldSrc test palette is 0x40 everywhere.
        const uint8_t expect = v.goldsrc ? 0x40 : 107;
        EXPECT_EQ(t.rgba[0], expect);
        EXPECT_EQ(t.rgba[1], expect);
        EXPECT_EQ(t.rgba[2], expect);
        EXPECT_EQ(t.rgba[3], 255);
    });
}

TEST(QuakeGeometry, Quake2BoxRoomUvsInTexels) {
    const Bsp bsp = Bsp::parse(Quake2Map().build(), "q2.bsp");
    const model::Map map = unpacked(bsp);
    expect_box(map, false);
    ASSERT_EQ(map.materials.size(), 1u);
    EXPECT_EQ(map.materials[0].name, "e1u1/floor1_1");
    EXPECT_EQ(map.materials[0].width, 0u);  // the WAL is not in the map
    EXPECT_TRUE(map.textures.empty());
}

TEST(QuakeGeometry, NightfireBoxRoom) {
    const Bsp bsp = Bsp::parse(NightfireMap().build(), "nf.bsp");
    const model::Map map = unpacked(bsp);
    expect_box(map, false);
    ASSERT_EQ(map.materials.size(), 1u);
    EXPECT_EQ(map.materials[0].name, "generic/concrete");
}

TEST(QuakeGeometry, BuildPacksLightmapsIntoOneAtlasPerLightStyle) {
    each_variant([]<class Types>(const Variant& v) {
        const Bsp bsp = q1_bsp<Types>(v, [](Quake1Map<Types>& m) {
            // Face 0 gets a second style: its 81 samples follow the first style's.
            m.faces[0].styles[1] = 5;
            const int bps = m.goldsrc ? 3 : 1;
            for (size_t f = 1; f < m.faces.size(); ++f) m.faces[f].lightofs += kSamplesPerFace * bps;
            m.lighting.resize(m.lighting.size() + size_t(kSamplesPerFace * bps), 0x10);
        });
        const model::Map map = model::build(bsp);
        EXPECT_TRUE(map.lightmap_images.empty());
        ASSERT_EQ(map.lightmaps.size(), 2u);  // styles 0 and 5
        EXPECT_EQ(map.lightmaps[0].style, 0u);
        EXPECT_EQ(map.lightmaps[1].style, 5u);
        for (const auto& s : map.models[0].surfaces)
            for (const auto& vert : s.vertices) {
                EXPECT_GT(vert.lightmap_uv.x, 0.0f);
                EXPECT_LT(vert.lightmap_uv.x, 1.0f);
                EXPECT_GT(vert.lightmap_uv.y, 0.0f);
                EXPECT_LT(vert.lightmap_uv.y, 1.0f);
            }
        // Face 0's image (all 0x80 in slot 0) sits where its luxel centres say.
        const auto& s0 = map.models[0].surfaces[0];
        const auto& atlas = map.lightmaps[0];
        const auto& vert = s0.vertices[0];
        const size_t x = size_t(vert.lightmap_uv.x * float(atlas.width));
        const size_t y = size_t(vert.lightmap_uv.y * float(atlas.height));
        EXPECT_EQ(atlas.rgb[(y * atlas.width + x) * 3], 0x80);
        // Style 5's page: face 0's second slot at the same place, black where
        // the other faces (style 0 only) are.
        const auto& page5 = map.lightmaps[1];
        const size_t at = (y * atlas.width + x) * 3;
        const auto& s1 = map.models[0].surfaces[1];
        const size_t at1 = (size_t(s1.vertices[0].lightmap_uv.y * float(atlas.height)) * atlas.width +
                            size_t(s1.vertices[0].lightmap_uv.x * float(atlas.width))) * 3;
        EXPECT_EQ(page5.rgb[at1], 0);
        EXPECT_NE(atlas.rgb[at1], 0);
        // The combined page adds the styles up, saturating.
        const model::LightmapAtlas all = model::combined_lightmap(map);
        ASSERT_EQ(all.rgb.size(), atlas.rgb.size());
        EXPECT_EQ(all.rgb[at], std::min(255, atlas.rgb[at] + page5.rgb[at]));
        EXPECT_EQ(all.rgb[at1], atlas.rgb[at1]);
        for (size_t i = 0; i < all.rgb.size(); ++i)
            ASSERT_EQ(all.rgb[i], std::min(255, int(atlas.rgb[i]) + int(page5.rgb[i]))) << "byte " << i;
    });
}

// Every page is as large as the atlas, so the pages of a map naming many
// styles are capped in bytes: the first pages are built, the rest skipped
// with a diagnostic naming how many.
TEST(QuakeGeometry, LightmapPagesAreCappedInBytes) {
    model::Map map;
    model::Model world;
    for (int f = 0; f < 10; ++f) {
        model::LightmapImage img;
        img.width = img.height = 4;
        model::Surface s;
        for (int k = 0; k < 4; ++k) {
            img.styles.emplace_back(4 * 4 * 3, uint8_t(10 * f + k));
            s.styles[size_t(k)] = uint8_t(4 * f + k);  // 40 distinct styles
        }
        s.lightmap = int32_t(map.lightmap_images.size());
        s.vertices.resize(3);
        map.lightmap_images.push_back(std::move(img));
        world.surfaces.push_back(std::move(s));
    }
    map.models.push_back(world);
    model::Map all = map;
    model::pack_lightmaps(all);
    ASSERT_EQ(all.lightmaps.size(), 40u);
    EXPECT_TRUE(all.diagnostics.empty());
    const uint64_t page = uint64_t(all.lightmaps[0].width) * all.lightmaps[0].height * 3;
    model::pack_lightmaps(map, 5 * page);
    ASSERT_EQ(map.lightmaps.size(), 5u);
    for (uint32_t k = 0; k < 5; ++k) EXPECT_EQ(map.lightmaps[k].style, k);
    ASSERT_EQ(map.diagnostics.size(), 1u);
    EXPECT_NE(map.diagnostics[0].message.find("35 light styles"), std::string::npos) << map.diagnostics[0].message;
}

// A lightmap 65536 luxels long and another as tall hold little data but would
// need an atlas of 131072 x 65538 luxels (25 GB): no page is built, the
// surfaces lose their lightmaps, and a diagnostic says why (a fuzzed GoldSrc
// map made `bspkit export` allocate 8.8 GB before this). 4096 luxels each way
// need 8192 x 4098 (100 MB, under the 512 MB for all pages): refused too, as
// over 16 times the images' own luxels.
TEST(QuakeGeometry, LightmapAtlasOfPathologicalShapesIsNotBuilt) {
    const auto map_of = [](std::vector<std::pair<uint32_t, uint32_t>> sizes) {
        model::Map map;
        model::Model world;
        for (const auto& [w, h] : sizes) {
            model::LightmapImage img;
            img.width = w, img.height = h;
            img.styles.emplace_back(size_t(w) * h * 3, uint8_t(100));
            model::Surface s;
            s.styles = {0, 255, 255, 255};
            s.lightmap = int32_t(map.lightmap_images.size());
            s.vertices.resize(3);
            map.lightmap_images.push_back(std::move(img));
            world.surfaces.push_back(std::move(s));
        }
        map.models.push_back(world);
        return map;
    };
    model::Map kept = map_of({{4, 4}, {17, 300}, {300, 17}});
    model::pack_lightmaps(kept);
    ASSERT_EQ(kept.lightmaps.size(), 1u);
    EXPECT_TRUE(kept.diagnostics.empty());

    for (const uint32_t side : {65536u, 4096u}) {
        SCOPED_TRACE(side);
        model::Map map = map_of({{side, 1}, {1, side}, {4, 4}});
        model::pack_lightmaps(map);
        EXPECT_TRUE(map.lightmaps.empty());
        EXPECT_TRUE(map.lightmap_images.empty());
        for (const model::Surface& s : map.models[0].surfaces) EXPECT_EQ(s.lightmap, -1);
        ASSERT_EQ(map.diagnostics.size(), 1u);
        EXPECT_NE(map.diagnostics[0].message.find("lightmaps not packed"), std::string::npos)
            << map.diagnostics[0].message;
    }
}

// One very tall lightmap among many small ones (a damaged pd_change_dest face
// 4605 luxels long, which check only warns about): the square shelf packing
// was 8192 x 4882 luxels for 2.7 M luxels of images, and `export` peaked at
// 576 MB. The skyline packing of a narrower width stacks the small ones beside
// the tall one: within 2 times the images' luxels here. Each image keeps its
// own luxels (no two overlap) and its surfaces' UVs point at them.
TEST(QuakeGeometry, TallLightmapPacksOnANarrowSkyline) {
    model::Map map;
    model::Model world;
    std::vector<std::pair<uint32_t, uint32_t>> sizes(9024, {17, 17});
    sizes.insert(sizes.begin() + 4000, {23, 4605});
    const auto colour = [](size_t i) { return std::array<uint8_t, 3>{uint8_t(i), uint8_t(i >> 8), 200}; };
    uint64_t luxels = 0;
    for (const auto& [w, h] : sizes) {
        model::LightmapImage img;
        img.width = w, img.height = h;
        const auto c = colour(map.lightmap_images.size());
        img.styles.emplace_back();
        for (size_t k = 0; k < size_t(w) * h; ++k) img.styles[0].insert(img.styles[0].end(), c.begin(), c.end());
        luxels += uint64_t(w + 2) * (h + 2);
        model::Surface s;
        s.styles = {0, 255, 255, 255};
        s.lightmap = int32_t(map.lightmap_images.size());
        s.vertices.resize(2);  // at the centres of the image's first luxel and of its last row's first
        s.vertices[0].lightmap_uv = {0.5f / float(w), 0.5f / float(h)};
        s.vertices[1].lightmap_uv = {0.5f / float(w), (float(h) - 0.5f) / float(h)};
        map.lightmap_images.push_back(std::move(img));
        world.surfaces.push_back(std::move(s));
    }
    map.models.push_back(world);
    model::pack_lightmaps(map);
    ASSERT_EQ(map.lightmaps.size(), 1u);
    EXPECT_TRUE(map.diagnostics.empty());
    const model::LightmapAtlas& page = map.lightmaps[0];
    EXPECT_GE(page.height, 4607u);
    EXPECT_LE(uint64_t(page.width) * page.height, 2 * luxels) << page.width << " x " << page.height;
    const auto& surfaces = map.models[0].surfaces;
    for (size_t i = 0; i < surfaces.size(); ++i) {
        ASSERT_EQ(surfaces[i].lightmap, int32_t(i));
        for (const model::Vertex& v : surfaces[i].vertices) {
            const auto x = size_t(v.lightmap_uv.x * float(page.width)), y = size_t(v.lightmap_uv.y * float(page.height));
            ASSERT_LT(x, page.width);
            ASSERT_LT(y, page.height);
            const uint8_t* at = &page.rgb[(y * page.width + x) * 3];
            const auto c = colour(i);
            ASSERT_TRUE(at[0] == c[0] && at[1] == c[1] && at[2] == c[2]) << "image " << i << " at " << x << ", " << y;
        }
    }
}

TEST(QuakeGeometry, MaterialFlagsFromNamesAndTexinfo) {
    struct Case {
        const char* name;
        bool special;
        uint32_t flags;
    };
    using namespace model;
    const Case cases[] = {
        {"sky4", true, kSky | kUnlit},         {"*water1", true, kWater | kUnlit},
        {"{fence", false, kAlphaTest},         {"trigger", false, kTrigger},
        {"clip", false, kClip},                {"skip", false, kNodraw},
        {"hint", false, kNodraw},              {"origin", false, kNodraw},
        {"tech04_1", false, 0},                {"tech04_1", true, kUnlit},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const Bsp bsp = q1_bsp<quake1::Bsp29Types>(kVariants[0], [&](Quake1Map<quake1::Bsp29Types>& m) {
            std::memset(m.textures.data() + 8, 0, 16);
            std::memcpy(m.textures.data() + 8, c.name, std::strlen(c.name));
            for (auto& ti : m.texinfo) ti.flags = c.special ? quake1::TEX_SPECIAL : 0;
        });
        const model::Map map = unpacked(bsp);
        ASSERT_EQ(map.materials.size(), 1u);
        EXPECT_EQ(map.materials[0].name, c.name);
        EXPECT_EQ(map.materials[0].flags, c.flags);
        // TEX_SPECIAL faces have no lightmap.
        EXPECT_EQ(map.models[0].surfaces[0].lightmap >= 0, !c.special);
    }
    // GoldSrc: "aaatrigger" and '!' liquids.
    const Bsp gs = q1_bsp<quake1::Bsp29Types>(kVariants[1], [](Quake1Map<quake1::Bsp29Types>& m) {
        std::memset(m.textures.data() + 8, 0, 16);
        std::memcpy(m.textures.data() + 8, "aaatrigger", 10);
    });
    EXPECT_EQ(unpacked(gs).materials[0].flags, uint32_t(model::kTrigger));
}

TEST(QuakeGeometry, Quake2FlagsFromSurfAndContents) {
    Quake2Map m;
    m.texinfo[0].flags = quake2::SURF_SKY;
    m.texinfo[1].flags = quake2::SURF_WARP;
    m.texinfo[2].flags = quake2::SURF_TRANS33;
    m.texinfo[3].flags = quake2::SURF_NODRAW;
    m.brushes[0].contents = 32;  // CONTENTS_WATER: every texinfo of the box's sides (all use texinfo 0)
    const model::Map map = unpacked(Bsp::parse(m.build(), "q2.bsp"));
    const auto& s = map.models[0].surfaces;
    using namespace model;
    EXPECT_EQ(map.materials[s[0].material].flags, kSky | kUnlit | kWater);
    EXPECT_EQ(map.materials[s[1].material].flags, kWater | kUnlit);
    EXPECT_EQ(map.materials[s[2].material].flags, uint32_t(kTranslucent));
    EXPECT_EQ(map.materials[s[3].material].flags, uint32_t(kNodraw));
    EXPECT_EQ(s[0].lightmap, -1);  // sky and warped faces are unlit
    EXPECT_EQ(s[1].lightmap, -1);
    EXPECT_GE(s[2].lightmap, 0);
}

// Brushes that each claim every brush side (a fuzzed map: 10 s of the
// fuzzer's time) stop being read once they claim the sides more than twice
// over plus 1 Mi, with a warning; the first brushes' contents still count.
TEST(QuakeGeometry, Quake2BrushesClaimingEverySideAreBounded) {
    Quake2Map m;
    m.brushes[0].contents = 32;  // CONTENTS_WATER
    const quake2::dbrush_t all{0, int32_t(m.brushsides.size()), 1};
    m.brushes.resize(m.brushes.size() + (size_t(1) << 20) / m.brushsides.size() + 10, all);
    const model::Map map = unpacked(Bsp::parse(m.build(), "q2.bsp"));
    EXPECT_EQ(map.materials[map.models[0].surfaces[0].material].flags & model::kWater, uint32_t(model::kWater));
    size_t warnings = 0;
    for (const Diagnostic& d : map.diagnostics)
        warnings += d.message.find("claim the brush sides more than twice over") != std::string::npos;
    EXPECT_EQ(warnings, 1u);
}

TEST(QuakeGeometry, CollinearAndRepeatedCornersMakeNoDegenerateTriangles) {
    // Face 0 walks its quad with a repeated corner and an edge midpoint added.
    each_variant([]<class Types>(const Variant& v) {
        const Bsp bsp = q1_bsp<Types>(v, [](Quake1Map<Types>& m) {
            using V = std::remove_reference_t<decltype(m.edges[0].v[0])>;
            const auto box = box_faces();
            const auto a = corner(box[0].corners[0]), b = corner(box[0].corners[1]);
            m.vertexes.push_back({{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2}});
            const V mid = V(m.vertexes.size() - 1);
            std::vector<std::pair<V, V>> loop = {{V(box[0].corners[0]), mid},
                                                 {mid, V(box[0].corners[1])},
                                                 {V(box[0].corners[1]), V(box[0].corners[1])},  // zero length
                                                 {V(box[0].corners[1]), V(box[0].corners[2])},
                                                 {V(box[0].corners[2]), V(box[0].corners[3])},
                                                 {V(box[0].corners[3]), V(box[0].corners[0])}};
            m.faces[0].firstedge = int32_t(m.surfedges.size());
            m.faces[0].numedges = decltype(m.faces[0].numedges)(loop.size());
            for (const auto& [x, y] : loop) {
                typename Types::edge e{};
                e.v[0] = x;
                e.v[1] = y;
                m.surfedges.push_back({int32_t(m.edges.size())});
                m.edges.push_back(e);
            }
        });
        const model::Map map = unpacked(bsp);
        const auto& s = map.models[0].surfaces[0];
        EXPECT_EQ(s.vertices.size(), 4u);
        EXPECT_EQ(s.indices.size(), 6u);
        EXPECT_NEAR(model::surface_area(s), 128.0 * 128.0, 1e-3);
        for (size_t i = 0; i < s.indices.size(); i += 3)
            EXPECT_GT(model::triangle_area(s.vertices[s.indices[i]].position, s.vertices[s.indices[i + 1]].position,
                                           s.vertices[s.indices[i + 2]].position),
                      1.0);
    });
}

TEST(QuakeGeometry, CleanPolygonDropsOnlyWhatAddsNoArea) {
    using model::Vec3;
    const std::vector<Vec3> square = {{0, 0, 0}, {5, 0, 0}, {10, 0, 0}, {10, 0, 0}, {10, 10, 0}, {0, 10, 0}};
    std::vector<Vec3> kept;
    for (uint32_t i : model::clean_polygon(square)) kept.push_back(square[i]);
    EXPECT_EQ(kept, (std::vector<Vec3>{{0, 0, 0}, {10, 0, 0}, {10, 10, 0}, {0, 10, 0}}));
    const std::vector<Vec3> line = {{0, 0, 0}, {5, 0, 0}, {10, 0, 0}};
    EXPECT_TRUE(model::clean_polygon(line).empty());
    const std::vector<Vec3> point = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
    EXPECT_TRUE(model::clean_polygon(point).empty());
    // 100000 corners along the sides of a square: four corners left.
    std::vector<Vec3> dense;
    for (int side = 0; side < 4; ++side)
        for (int i = 0; i < 25000; ++i) {
            const float t = float(i) * (1000.0f / 25000);
            const Vec3 p[4] = {{t, 0, 0}, {1000, t, 0}, {1000 - t, 1000, 0}, {0, 1000 - t, 0}};
            dense.push_back(p[side]);
        }
    kept.clear();
    for (uint32_t i : model::clean_polygon(dense)) kept.push_back(dense[i]);
    EXPECT_EQ(kept, (std::vector<Vec3>{{0, 0, 0}, {1000, 0, 0}, {1000, 1000, 0}, {0, 1000, 0}}));
    // A corner 0.5 units off the line is a real corner.
    const std::vector<Vec3> kink = {{0, 0, 0}, {5, 0.5f, 0}, {10, 0, 0}, {5, 10, 0}};
    EXPECT_EQ(model::clean_polygon(kink).size(), 4u);
}

/// Sum of the triangles' areas and whether all of them turn like `normal`
/// says (counter-clockwise about it).
std::pair<double, bool> triangles_of(const std::vector<model::Vec3>& loop, const std::vector<uint32_t>& idx,
                                     model::Vec3 normal) {
    double area = 0;
    bool same_turn = true;
    for (size_t i = 0; i < idx.size(); i += 3) {
        const model::Vec3 n = model::cross(loop[idx[i + 1]] - loop[idx[i]], loop[idx[i + 2]] - loop[idx[i]]);
        area += 0.5 * model::length(n);
        same_turn = same_turn && model::dot(n, normal) > 0;
    }
    return {area, same_turn};
}

TEST(QuakeGeometry, ConcaveLoopsAreEarClipped) {
    using model::Vec3;
    // mission64_titlemap face 58 (plane x = -1020): a concave 10-corner loop, area 8599.
    const std::vector<Vec3> face58 = {{-1020, 90, 363}, {-1020, 31, 363}, {-1020, 43, 343}, {-1020, 43, 169},
                                      {-1020, 38, 159}, {-1020, 90, 159}, {-1020, 84, 169}, {-1020, 84, 249},
                                      {-1020, 84, 269}, {-1020, 84, 343}};
    std::vector<Vec3> kept;
    for (uint32_t i : model::clean_polygon(face58)) kept.push_back(face58[i]);
    EXPECT_EQ(kept.size(), 8u);  // (84, 249) and (84, 269) lie on the line from (84, 169) to (84, 343)
    model::EarClipBudget budget;
    std::vector<uint32_t> idx;
    model::triangulate_polygon(kept, 0, idx, budget);
    EXPECT_EQ(idx.size(), 3 * (kept.size() - 2));
    const auto [area, same_turn] = triangles_of(kept, idx, {1, 0, 0});  // the loop turns about +x
    EXPECT_NEAR(area, 8599.0, 1e-3);
    EXPECT_TRUE(same_turn);
    // A comb of 300 teeth (1203 corners): ear clipping stays fast and exact.
    std::vector<Vec3> comb;
    for (int t = 0; t < 300; ++t) {
        comb.push_back({float(2 * t), 0, 0});
        comb.push_back({float(2 * t), 10, 0});
        comb.push_back({float(2 * t + 1), 10, 0});
        comb.push_back({float(2 * t + 1), 1, 0});
    }
    comb.push_back({600, 1, 0});
    comb.push_back({600, -1, 0});
    comb.push_back({0, -1, 0});
    std::reverse(comb.begin(), comb.end());  // counter-clockwise seen from +z
    {
        std::vector<Vec3> cleaned;
        for (uint32_t i : model::clean_polygon(comb)) cleaned.push_back(comb[i]);
        EXPECT_EQ(cleaned.size(), comb.size() - 1);  // (0, 0) lies on the side from (0, -1) to (0, 10)
        comb = cleaned;
    }
    idx.clear();
    model::triangulate_polygon(comb, 0, idx, budget);
    const auto [comb_area, comb_turn] = triangles_of(comb, idx, {0, 0, 1});
    double expected = 0;
    {
        // Shoelace in the xy plane.
        for (size_t i = 0; i < comb.size(); ++i) {
            const Vec3 a = comb[i], b = comb[(i + 1) % comb.size()];
            expected += 0.5 * (double(a.x) * b.y - double(b.x) * a.y);
        }
        expected = std::abs(expected);
    }
    EXPECT_NEAR(comb_area, expected, 1e-3);
    EXPECT_TRUE(comb_turn);
    EXPECT_EQ(idx.size(), 3 * (comb.size() - 2));
    // With the budget spent, concave loops are fanned (bounded time), still
    // one triangle per corner but two, covering the loop's vector area.
    model::EarClipBudget empty{0};
    idx.clear();
    model::triangulate_polygon(kept, 0, idx, empty);
    EXPECT_EQ(idx.size(), 3 * (kept.size() - 2));
    // Combs of 1203 corners share one budget: it runs out after a bounded
    // number of ear clips, and from then on every loop is fanned (linear work),
    // however many follow.
    model::EarClipBudget shared;
    int clipped = 0;
    while (shared.remaining > 0 && clipped < 100000) {
        idx.clear();
        model::triangulate_polygon(comb, 0, idx, shared);
        ++clipped;
    }
    EXPECT_EQ(shared.remaining, 0u);
    EXPECT_LT(clipped, 100000);
    std::vector<uint32_t> fanned;
    model::EarClipBudget none{0};
    model::triangulate_polygon(comb, 0, fanned, none);
    idx.clear();
    model::triangulate_polygon(comb, 0, idx, shared);
    EXPECT_EQ(idx, fanned);
}

// ---- textures ---------------------------------------------------------------

TEST(QuakeGeometry, QuakePaletteHasThePublishedColours) {
    const quake1::Palette& p = quake1::quake_palette();
    // Quake Wiki "Quake palette": 0 black, 15 #ebebeb, 16 #0f0b07, 31 #8f6f23, 254 white, 255 (159, 91, 83).
    EXPECT_EQ((std::array<int, 3>{p[0], p[1], p[2]}), (std::array<int, 3>{0, 0, 0}));
    EXPECT_EQ((std::array<int, 3>{p[45], p[46], p[47]}), (std::array<int, 3>{0xeb, 0xeb, 0xeb}));
    EXPECT_EQ((std::array<int, 3>{p[48], p[49], p[50]}), (std::array<int, 3>{0x0f, 0x0b, 0x07}));
    EXPECT_EQ((std::array<int, 3>{p[93], p[94], p[95]}), (std::array<int, 3>{0x8f, 0x6f, 0x23}));
    EXPECT_EQ((std::array<int, 3>{p[762], p[763], p[764]}), (std::array<int, 3>{255, 255, 255}));
    EXPECT_EQ((std::array<int, 3>{p[765], p[766], p[767]}), (std::array<int, 3>{159, 91, 83}));
    EXPECT_THROW(quake1::parse_palette(Bytes(767, 0), "short.lmp"), Error);
    EXPECT_THROW(quake1::parse_palette(Bytes(769, 0), "long.lmp"), Error);
    Bytes grey(768);
    for (size_t i = 0; i < grey.size(); ++i) grey[i] = uint8_t(i / 3);
    EXPECT_EQ(quake1::parse_palette(grey, "grey.lmp")[300], 100);
}

TEST(QuakeGeometry, CustomPaletteAndCutoutIndex255) {
    const Bsp bsp = q1_bsp<quake1::Bsp29Types>(kVariants[0], [](Quake1Map<quake1::Bsp29Types>& m) {
        std::memcpy(m.textures.data() + 8, "{fence\0", 7);
        m.textures[8 + 40 + 1] = 255;  // pixel (1, 0) of mip 0
    });
    const quake1::Map q(bsp);
    quake1::Palette grey{};
    for (size_t i = 0; i < grey.size(); ++i) grey[i] = uint8_t(i / 3);
    const auto decoded = quake1::decode_textures(q, grey);
    ASSERT_EQ(decoded.textures.size(), 1u);
    const auto& t = decoded.textures[0];
    EXPECT_EQ(t.name, "{fence");
    EXPECT_EQ(t.rgba[0], 7);  // index 7 in the grey palette
    EXPECT_EQ(t.rgba[3], 255);
    EXPECT_EQ((std::array<int, 4>{t.rgba[4], t.rgba[5], t.rgba[6], t.rgba[7]}), (std::array<int, 4>{0, 0, 0, 0}));
    const model::Map map = unpacked(bsp);
    EXPECT_EQ(map.materials[0].flags, uint32_t(model::kAlphaTest));
}

TEST(QuakeGeometry, BrokenTexturesAreSkippedWithADiagnostic) {
    // Mip 0 past the end of the lump.
    const Bsp past = q1_bsp<quake1::Bsp29Types>(kVariants[0], [](Quake1Map<quake1::Bsp29Types>& m) {
        store<uint32_t>(m.textures.data() + 8 + 24, 100000);
    });
    model::Map map = unpacked(past);
    EXPECT_TRUE(map.textures.empty());
    EXPECT_EQ(map.materials[0].texture, -1);
    EXPECT_EQ(map.materials[0].name, "bspkit_grey");  // still named, sized
    ASSERT_EQ(map.diagnostics.size(), 1u);
    EXPECT_EQ(map.diagnostics[0].lump, "textures");
    // GoldSrc palette cut off.
    const Bsp gs = q1_bsp<quake1::Bsp29Types>(kVariants[1], [](Quake1Map<quake1::Bsp29Types>& m) {
        m.textures.resize(m.textures.size() - 700);
    });
    map = unpacked(gs);
    EXPECT_TRUE(map.textures.empty());
    ASSERT_FALSE(map.diagnostics.empty());
    EXPECT_NE(map.diagnostics[0].message.find("palette"), std::string::npos);
    // A huge declared size is refused before any allocation.
    const Bsp huge = q1_bsp<quake1::Bsp29Types>(kVariants[0], [](Quake1Map<quake1::Bsp29Types>& m) {
        store<uint32_t>(m.textures.data() + 8 + 16, 0x40000000);
    });
    map = unpacked(huge);
    EXPECT_TRUE(map.textures.empty());
    EXPECT_FALSE(map.diagnostics.empty());
    // A directory pointing 100000 entries at one texture decodes it a bounded number of times.
    const Bsp many = q1_bsp<quake1::Bsp29Types>(kVariants[0], [](Quake1Map<quake1::Bsp29Types>& m) {
        Bytes t;
        append<int32_t>(t, 100000);
        const int32_t data = 4 + 4 * 100000;
        for (int i = 0; i < 100000; ++i) append<int32_t>(t, data);
        t.insert(t.end(), m.textures.begin() + 8, m.textures.end());
        m.textures = t;
    });
    const auto decoded = quake1::decode_textures(quake1::Map(many));
    EXPECT_LT(decoded.textures.size(), 100000u);
    EXPECT_FALSE(decoded.diagnostics.empty());
}

// ---- hostile input -------------------------------------------------------------

TEST(QuakeGeometry, LightmapPastTheLumpIsADiagnosticNotACrash) {
    each_variant([]<class Types>(const Variant& v) {
        const Bsp bsp = q1_bsp<Types>(v, [](Quake1Map<Types>& m) { m.lighting.resize(m.lighting.size() - 1); });
        const model::Map map = unpacked(bsp);
        const auto& s = map.models[0].surfaces;
        ASSERT_EQ(s.size(), 6u);
        for (size_t f = 0; f < 5; ++f) EXPECT_GE(s[f].lightmap, 0);
        EXPECT_EQ(s[5].lightmap, -1);
        ASSERT_EQ(map.diagnostics.size(), 1u);
        EXPECT_EQ(map.diagnostics[0].lump, "faces");
        EXPECT_NE(map.diagnostics[0].message.find("runs past"), std::string::npos);
    });
    Quake2Map q2;
    q2.faces[2].lightofs = int32_t(q2.lighting.size());
    EXPECT_EQ(unpacked(Bsp::parse(q2.build(), "q2.bsp")).diagnostics.size(), 1u);
    NightfireMap nf;
    nf.surfaces[3].LightingOffset = int32_t(nf.lighting.size()) - 5;
    EXPECT_EQ(unpacked(Bsp::parse(nf.build(), "nf.bsp")).diagnostics.size(), 1u);
}

TEST(QuakeGeometry, BrokenReferencesThrowNamingTheRecord) {
    each_variant([]<class Types>(const Variant& v) {
        const std::vector<std::pair<const char*, std::function<void(Quake1Map<Types>&)>>> edits = {
            {"faces", [](Quake1Map<Types>& m) { m.faces[2].planenum = 999; }},
            {"faces", [](Quake1Map<Types>& m) { m.faces[2].texinfo = 99; }},
            {"faces", [](Quake1Map<Types>& m) { m.faces[2].firstedge = 1000; }},
            {"surfedges", [](Quake1Map<Types>& m) { m.surfedges[5].edge = -5000; }},
            {"edges", [](Quake1Map<Types>& m) { m.edges[3].v[1] = 60000; m.surfedges[2].edge = -3; }},
            {"models", [](Quake1Map<Types>& m) { m.models[0].numfaces = 7; }},
        };
        for (const auto& [lump, edit] : edits) {
            const Bsp bsp = q1_bsp<Types>(v, edit);
            try {
                unpacked(bsp);
                ADD_FAILURE() << "no Error for a broken " << lump << " reference";
            } catch (const Error& e) {
                EXPECT_EQ(e.where().lump, lump) << e.what();
                EXPECT_GT(e.where().offset, 0);
            }
        }
    });
    Quake2Map q2;
    q2.faces[1].planenum = 500;
    EXPECT_THROW(unpacked(Bsp::parse(q2.build(), "q2.bsp")), Error);
    NightfireMap nf;
    nf.draw_indices[4].TriangleCorner = 4;  // outside the surface's 4 vertices
    EXPECT_THROW(unpacked(Bsp::parse(nf.build(), "nf.bsp")), Error);
    NightfireMap nf2;
    nf2.surfaces[0].DrawIndicesCount = 5;
    EXPECT_THROW(unpacked(Bsp::parse(nf2.build(), "nf.bsp")), Error);
}

TEST(QuakeGeometry, ModelsSharingFacesHitTheWorkBudgetNotAHang) {
    // 100000 models all claiming every face of a map whose faces claim every
    // surfedge: without a budget this would build 600000 surfaces.
    Quake1Map<quake1::Bsp2Types> m(false);
    m.models.resize(100000, m.models[0]);
    const Bsp bsp = Bsp::parse(m.build(layouts::bsp2(), std::nullopt), "many.bsp");
    EXPECT_THROW(unpacked(bsp), Error);
}

TEST(QuakeGeometry, BitFlippedMapsGiveAnErrorOrAModel) {
    std::mt19937 rng(1234);
    std::vector<std::pair<std::string, Bytes>> files = {
        {"q1.bsp", Quake1Map<quake1::Bsp29Types>(false).build(layouts::quake1(), 29)},
        {"gs.bsp", Quake1Map<quake1::Bsp29Types>(true).build(layouts::goldsrc(), 30)},
        {"b2.bsp", Quake1Map<quake1::Bsp2Types>(false).build(layouts::bsp2(), std::nullopt)},
        {"q2.bsp", Quake2Map().build()},
        {"nf.bsp", NightfireMap().build()},
    };
    size_t built = 0, refused = 0;
    for (const auto& [name, clean] : files) {
        for (int round = 0; round < 300; ++round) {
            Bytes b = clean;
            for (int k = 0; k < 8; ++k) b[rng() % b.size()] ^= uint8_t(1u << (rng() % 8));
            try {
                const Bsp bsp = Bsp::parse(std::move(b), name);
                const model::Map map = model::build(bsp);
                for (const auto& mdl : map.models)
                    for (const auto& s : mdl.surfaces)
                        for (uint32_t i : s.indices) ASSERT_LT(i, s.vertices.size());
                ++built;
            } catch (const Error&) {
                ++refused;
            }
        }
    }
    EXPECT_GT(built, 0u);
    EXPECT_GT(refused, 0u);
    RecordProperty("built", int(built));
    RecordProperty("refused", int(refused));
}

// ---- CLI -----------------------------------------------------------------------

TEST(QuakeGeometry, CliLightmapsAndTextures) {
    const std::string dir = test::temp_dir("qgeo_cli");
    const auto q1 = std::filesystem::path(dir) / "box.bsp";
    write_file_atomic(q1, Quake1Map<quake1::Bsp29Types>(false).build(layouts::quake1(), 29));
    // A texture name that tries to leave the output directory.
    Quake1Map<quake1::Bsp29Types> evil(false);
    std::memcpy(evil.textures.data() + 8, "../../../evil\0", 14);
    const auto evil_path = std::filesystem::path(dir) / "evil.bsp";
    write_file_atomic(evil_path, evil.build(layouts::quake1(), 29));

    auto r = test::run_cli({"lightmaps", q1.string(), "-o", dir + "/lm"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/lm/lightmap_style0.png"));
    r = test::run_cli({"lightmaps", q1.string()});  // no -o
    EXPECT_EQ(r.exit_code, 2);
    r = test::run_cli({"lightmaps", dir + "/missing.bsp", "-o", dir + "/lm2"});
    EXPECT_EQ(r.exit_code, 1);
    r = test::run_cli({"lightmaps", "--help"});
    EXPECT_EQ(r.exit_code, 0);

    r = test::run_cli({"textures", q1.string(), "-o", dir + "/tex", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/tex/bspkit_grey.png"));
    EXPECT_NE(r.out.find("\"bspkit_grey\""), std::string::npos);
    r = test::run_cli({"textures", evil_path.string(), "-o", dir + "/evil"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(dir + "/evil/_________evil.png"));
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(dir).parent_path() / "evil.png"));
    // --palette: a wrong-sized file is bad input, a good one changes the colours.
    write_file_atomic(dir + "/bad.lmp", Bytes(100, 1));
    r = test::run_cli({"textures", q1.string(), "-o", dir + "/tex2", "--palette", dir + "/bad.lmp"});
    EXPECT_EQ(r.exit_code, 1);
    write_file_atomic(dir + "/red.lmp", [] {
        Bytes p(768, 0);
        for (size_t i = 0; i < 768; i += 3) p[i] = 200;
        return p;
    }());
    r = test::run_cli({"textures", q1.string(), "-o", dir + "/tex3", "--palette", dir + "/red.lmp"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const Png png = libpng_decode(read_file(dir + "/tex3/bspkit_grey.png"));
    ASSERT_EQ(png.rgba.size(), 16u * 16u * 4u);
    EXPECT_EQ((std::array<int, 4>{png.rgba[0], png.rgba[1], png.rgba[2], png.rgba[3]}),
              (std::array<int, 4>{200, 0, 0, 255}));
    r = test::run_cli({"textures", q1.string()});
    EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace bspkit
