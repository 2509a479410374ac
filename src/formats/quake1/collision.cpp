// Quake 1 / BSP2 / 2PSB / GoldSrc collision data for query::World: hull 0
// from nodes + leafs, hulls 1-3 from the clipnodes, with the hull boxes of
// Quake (qbsp's hulls) or Half-Life (standing, large, crouching).
#include "query/collision.hpp"

#include <bspkit/bspx.hpp>
#include <bspkit/formats/quake1.hpp>

#include <cmath>

namespace bspkit::query::detail {

uint32_t quake1_flags(int32_t raw) {
    using namespace quake1;
    switch (raw) {
        case CONTENTS_EMPTY: return 0;
        case CONTENTS_SOLID: return kSolid;
        case CONTENTS_WATER: return kWater;
        case CONTENTS_SLIME: return kSlime;
        case CONTENTS_LAVA: return kLava;
        case CONTENTS_SKY: return kSky;
        case CONTENTS_ORIGIN: return kOrigin;
        case CONTENTS_CLIP: return kClip | kPlayerClip | kMonsterClip;
        case CONTENTS_TRANSLUCENT: return kTranslucent;
        case -16: return kLadder;  // Half-Life CONTENTS_LADDER
        case -19: return kFog;     // Half-Life CONTENTS_FOG
        default: break;
    }
    if (raw <= CONTENTS_CURRENT_0 && raw >= CONTENTS_CURRENT_DOWN) return kWater | kCurrent;
    return 0;
}

namespace {

/// What stops a hull in FTE's brush collision: solid, sky and clip brushes
/// (liquids and the rest are not hulls' business).
uint32_t brushlist_mask_bits(int32_t raw) {
    using namespace quake1;
    return raw == CONTENTS_SOLID || raw == CONTENTS_SKY || raw == CONTENTS_CLIP ? 1u : 0u;
}

/// BSPX BRUSHLIST as brushes: the six axial sides from each brush's bounds,
/// then its stored planes. Returns why not when the lump is absent or broken.
std::string load_brushlist(const Bsp& bsp, Collision& c) {
    const bspx::Directory dir = bspx::read(bsp);
    const bspx::Lump* lump = dir.find("BRUSHLIST");
    if (!lump) return "the map has no clipnodes and no BSPX BRUSHLIST (hulls 1-3 are not in the file)";
    bspx::BrushList list;
    try {
        list = bspx::decode_brushlist(bsp, *lump);
    } catch (const Error& e) {
        return "the map has no clipnodes and its BSPX BRUSHLIST is broken: " + std::string(e.what());
    }
    auto add_plane = [&](float x, float y, float z, float d) {
        const float n[3] = {x, y, z};
        c.planes.push_back({{x, y, z}, d, plane_type(n)});
        return int32_t(c.planes.size() - 1);
    };
    for (const bspx::BrushListModel& m : list.models) {
        if (m.header.modelnum < 0 || size_t(m.header.modelnum) >= c.models.size()) continue;
        Model& model = c.models[size_t(m.header.modelnum)];
        for (const bspx::BrushListBrush& b : m.brushes) {
            const auto& h = b.header;
            Brush brush{uint32_t(c.sides.size()), 0, h.contents};
            for (int a = 0; a < 3; ++a) {
                float n[3] = {0, 0, 0};
                n[a] = 1;
                c.sides.push_back({add_plane(n[0], n[1], n[2], h.maxs[a]), 0, false});
                n[a] = -1;
                c.sides.push_back({add_plane(n[0], n[1], n[2], -h.mins[a]), 0, false});
            }
            for (const auto& p : b.planes) c.sides.push_back({add_plane(p.normal[0], p.normal[1], p.normal[2], p.dist), 0, false});
            brush.num_sides = uint32_t(c.sides.size()) - brush.first_side;
            model.brushes.push_back(uint32_t(c.brushes.size()));
            c.brushes.push_back(brush);
        }
    }
    c.mask_bits_of = brushlist_mask_bits;
    return "";
}

}  // namespace

void build_quake1(const Bsp& bsp, Collision& c) {
    const quake1::Map map(bsp);
    c.kind = Kind::hulls;
    c.flags_of = quake1_flags;
    c.goldsrc_hulls = map.goldsrc();
    for (const auto& p : map.planes()) c.planes.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist, plane_type(p.normal)});
    map.visit([&](const auto& t) {
        Tree& hull0 = c.trees[0];
        hull0.node_lump = "nodes";
        hull0.leaf_lump = "leafs";
        hull0.node_bytes = uint32_t(sizeof(t.nodes[0]));
        for (const auto& n : t.nodes)
            hull0.nodes.push_back({n.planenum, {quake1::tree_child(n.children[0], t.nodes.size()),
                                                quake1::tree_child(n.children[1], t.nodes.size())}});
        for (size_t i = 0; i < t.leafs.size(); ++i) {
            Leaf l;
            l.contents = t.leafs[i].contents;
            if (c.vis) l.cluster = c.vis->cluster_of_leaf(i) ? int32_t(*c.vis->cluster_of_leaf(i)) : -1;
            hull0.leafs.push_back(l);
        }
        Tree& clip = c.trees[1];
        clip.node_lump = "clipnodes";
        clip.leaf_lump = "clipnodes";
        clip.node_bytes = uint32_t(sizeof(t.clipnodes[0]));
        for (const auto& n : t.clipnodes)
            clip.nodes.push_back({n.planenum, {quake1::tree_child(n.children[0], t.clipnodes.size()),
                                               quake1::tree_child(n.children[1], t.clipnodes.size())}});
    });
    // Clip hull leaves are contents values: leaf i holds -(i + 1), so a
    // clipnode child c < 0 is ~leaf with leaf = -c - 1.
    for (int32_t i = 0; i < 19; ++i) c.trees[1].leafs.push_back({-(i + 1), -1, -1, 0, 0});

    const auto models = map.models();
    for (size_t m = 0; m < models.size(); ++m) {
        Model out;
        for (int h = 0; h < 4; ++h) out.root[size_t(h)] = models[m].headnode[h];
        // The bounds traces skip the model by (not the world's: it is always walked);
        // kept infinite when the file's are not numbers or inside out.
        bool bounds_ok = m > 0;
        for (int a = 0; a < 3; ++a)
            bounds_ok = bounds_ok && std::isfinite(models[m].mins[a]) && std::isfinite(models[m].maxs[a]) &&
                        models[m].mins[a] <= models[m].maxs[a];
        if (bounds_ok)
            for (int a = 0; a < 3; ++a) out.lo[a] = models[m].mins[a], out.hi[a] = models[m].maxs[a];
        c.models.push_back(out);
    }
    // Hull boxes: Quake's qbsp builds 1 (player) and 2 (shambler); Half-Life's
    // tools build 1 (standing), 2 (large) and 3 (crouching).
    const bool have_clip = !c.trees[1].nodes.empty();
    c.hulls.push_back({0, {}, {}, true});
    if (c.goldsrc_hulls) {
        c.hulls.push_back({1, {-16, -16, -36}, {16, 16, 36}, have_clip});
        c.hulls.push_back({2, {-32, -32, -32}, {32, 32, 32}, have_clip});
        c.hulls.push_back({3, {-16, -16, -18}, {16, 16, 18}, have_clip});
        c.player_box = {{-16, -16, -36}, {16, 16, 36}};
    } else {
        c.hulls.push_back({1, {-16, -16, -24}, {16, 16, 32}, have_clip});
        c.hulls.push_back({2, {-32, -32, -24}, {32, 32, 64}, have_clip});
        c.hulls.push_back({3, {}, {}, false});  // qbsp leaves hull 3 empty
        c.player_box = {{-16, -16, -24}, {16, 16, 32}};
    }
    if (!have_clip) {
        c.hull_missing = load_brushlist(bsp, c);
        if (c.hull_missing.empty())
            for (HullInfo& h : c.hulls)
                if (h.index > 0 && h.mins != h.maxs) h.available = h.brushlist = true;
    }
    c.mask_solid = c.mask_playersolid = c.mask_opaque = 1;
    c.epsilon = 0.03125f;
}

}  // namespace bspkit::query::detail
