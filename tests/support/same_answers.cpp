#include "same_answers.hpp"

#include "same_asset.hpp"

#include <bspkit/decompile.hpp>
#include <bspkit/mapfile.hpp>

#include <gtest/gtest.h>

#include <random>

namespace bspkit::test {
namespace {

exporter::GltfAsset gltf_of(const model::Map& map) { return exporter::build_gltf(map, {}, true); }

render::Frame thumbnail(const Bsp& bsp, const model::Map& map) {
    render::Options options;
    options.width = 96;
    options.height = 64;
    options.threads = 1;
    const render::Scene scene = render::Scene::prepare(map, bsp, options);
    return render::render(scene, render::thumbnail_camera(scene), options);
}

void expect_same_trace(const query::TraceResult& a, const query::TraceResult& b, const std::string& what) {
    EXPECT_EQ(a.fraction, b.fraction) << what;
    EXPECT_EQ(a.startsolid, b.startsolid) << what;
    EXPECT_EQ(a.allsolid, b.allsolid) << what;
    EXPECT_EQ(a.end, b.end) << what;
    EXPECT_EQ(a.normal, b.normal) << what;
    EXPECT_EQ(a.dist, b.dist) << what;
    EXPECT_EQ(a.contents.raw, b.contents.raw) << what;
    EXPECT_EQ(a.surface_flags, b.surface_flags) << what;
    EXPECT_EQ(a.inopen, b.inopen) << what;
    EXPECT_EQ(a.inwater, b.inwater) << what;
    EXPECT_EQ(a.model, b.model) << what;
    EXPECT_EQ(a.brush, b.brush) << what;
    EXPECT_EQ(a.triangle, b.triangle) << what;
}

}  // namespace

std::multiset<FindingKey> comparable_findings(const CheckReport& report) {
    std::multiset<FindingKey> out;
    for (const Finding& f : report.findings) {
        if (f.record < 0 && (f.message.find("4-byte aligned") != std::string::npos ||
                             f.message.find("exceeds MAX_MAP_") != std::string::npos))
            continue;
        out.insert({f.severity, f.lump, f.record, f.field, f.message});
    }
    return out;
}

std::vector<query::Vec3> surface_points(const model::Map& map, size_t count) {
    std::vector<query::Vec3> all;
    for (const model::Model& m : map.models)
        for (const model::Surface& s : m.surfaces)
            for (const model::Vertex& v : s.vertices) all.push_back(v.position + m.origin);
    if (all.size() <= count) return all;
    std::vector<query::Vec3> out;
    for (size_t i = 0; i < count; ++i) out.push_back(all[i * all.size() / count]);
    return out;
}

Answers::Answers(const Bsp& bsp)
    : findings(comparable_findings(check(bsp))), model(model::build(bsp)), gltf(gltf_of(model)),
      frame(thumbnail(bsp, model)), decompiled(mapfile::write(decompile::decompile(bsp).map)),
      world(query::World::prepare(bsp)) {}

void expect_same_answers(const Answers& original, const Bsp& copy, std::span<const query::Vec3> near,
                         bool compare_findings) {
    if (compare_findings) {
        EXPECT_EQ(comparable_findings(check(copy)), original.findings);
    }
    model::Map copy_model = model::build(copy);
    copy_model.format = original.model.format;  // the glb names it (extras.format); all else must match
    expect_same_asset(gltf_of(copy_model), original.gltf, "the glb");
    EXPECT_TRUE(thumbnail(copy, copy_model).rgba == original.frame.rgba) << "the rendered thumbnail differs";
    EXPECT_EQ(mapfile::write(decompile::decompile(copy).map), original.decompiled);

    const query::World& a = original.world;
    const query::World b = query::World::prepare(copy);
    ASSERT_FALSE(near.empty());
    std::mt19937 rng(11);
    std::uniform_int_distribution<size_t> pick(0, near.size() - 1);
    std::uniform_real_distribution<float> jitter(-16, 16);
    const auto point = [&] {
        const query::Vec3 v = near[pick(rng)];
        return query::Vec3{v.x + jitter(rng), v.y + jitter(rng), v.z + jitter(rng)};
    };
    size_t solid = 0;
    for (int i = 0; i < 300; ++i) {
        const query::Vec3 p = point();
        const auto la = a.leaf_at(p), lb = b.leaf_at(p);
        EXPECT_EQ(la.leaf, lb.leaf) << i;
        EXPECT_EQ(la.cluster, lb.cluster) << i;
        EXPECT_EQ(la.area, lb.area) << i;
        EXPECT_EQ(la.contents.raw, lb.contents.raw) << i;
        solid += a.contents(p).solid();
    }
    EXPECT_GT(solid, 0u) << "no point was in solid: the leaf test tells nothing";
    std::vector<std::pair<std::string, query::TraceOptions>> kinds;
    for (const query::HullInfo& hull : a.hulls()) {
        if (!hull.available) continue;
        query::TraceOptions o;
        o.hull = hull.index;
        kinds.push_back({"hull " + std::to_string(hull.index), o});
    }
    if (kinds.empty()) kinds = {{"line", {}}, {"player box", a.player()}};
    size_t hits = 0;
    for (auto& [name, o] : kinds) {
        o.models = true;
        for (int i = 0; i < 200; ++i) {
            const query::Vec3 s = point(), e = point();
            const auto ta = a.trace(s, e, o);
            expect_same_trace(ta, b.trace(s, e, o), name + " ray " + std::to_string(i));
            hits += ta.hit();
        }
    }
    EXPECT_GT(hits, 0u) << "no trace hit anything: the trace test tells nothing";
    for (int i = 0; i < 100; ++i) {
        const query::Vec3 s = point(), e = point();
        EXPECT_EQ(a.visible(s, e).visible(), b.visible(s, e).visible()) << i;
    }
}

}  // namespace bspkit::test
