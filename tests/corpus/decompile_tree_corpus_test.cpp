// decompile on every Quake 1 / BSP2 / GoldSrc corpus map (no brush lump:
// brushes from BSPX BRUSHLIST or rebuilt from the hull 0 tree): the solid
// volume of the decompiled world equals the BSP's. 100,000 points sampled
// uniformly in the world model's bounds (fixed seed); a point is inside a
// decompiled solid world brush exactly when query::World says hull 0 is
// CONTENTS_SOLID there, for >= 99.9% of the points, and every disagreement
// lies within 1 unit of a decompiled brush's boundary. The written .map reads
// back with bspkit's reader to the same data. Checked with the leaf cells
// merged (default) and one brush per leaf. Maps with BRUSHLIST (the
// compiler's brushes, which leave the void outside the map unfilled while
// hull 0 calls it solid) are held to one direction: no point is inside a
// decompiled solid brush where hull 0 is not solid.
#include <bspkit/decompile.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/query.hpp>

#include "corpus.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace bspkit;
using namespace bspkit::test;
using mapfile::Vec3d;

namespace {

std::vector<CorpusFile> tree_maps() {
    std::vector<CorpusFile> out;
    for (const auto& f : corpus_files()) {
        const auto fmt = expected_format(f);
        if (fmt && (*fmt == "quake1" || *fmt == "bsp2" || *fmt == "goldsrc")) out.push_back(f);
    }
    return out;
}

struct SolidBrush {
    std::vector<mapfile::Plane> planes;
    Vec3d mins{1e30, 1e30, 1e30}, maxs{-1e30, -1e30, -1e30};
    /// Largest signed distance of `p` outside the brush's planes (<= 0: inside).
    double outside(const Vec3d& p) const {
        double worst = -1e30;
        for (const auto& pl : planes)
            worst = std::max(worst, pl.normal[0] * p[0] + pl.normal[1] * p[1] + pl.normal[2] * p[2] - pl.dist);
        return worst;
    }
};

class DecompileTree : public ::testing::TestWithParam<CorpusFile> {};

/// The volume check of one decompiled map; returns its brush count.
size_t check_volume(const CorpusFile& f, const Bsp& bsp, const decompile::Result& r);

TEST_P(DecompileTree, SolidVolumeMatchesHullZero) {
    const CorpusFile& f = GetParam();
    const Bsp bsp = Bsp::parse(read_corpus(f), f.relpath);
    decompile::Options merged, unmerged;
    unmerged.merge = false;
    const size_t a = check_volume(f, bsp, decompile::decompile(bsp, merged));
    const size_t b = check_volume(f, bsp, decompile::decompile(bsp, unmerged));
    EXPECT_LE(a, b) << "merging made more brushes";
}

size_t check_volume(const CorpusFile& f, const Bsp& bsp, const decompile::Result& r) {
    const quake1::Map q(bsp);
    EXPECT_FALSE(q.models().empty());
    if (q.models().empty()) return 0;
    const auto& world_model = q.models()[0];

    // The world's solid brushes, with their bounds from their corners.
    std::vector<SolidBrush> solids;
    for (const auto& o : r.origins) {
        if (o.entity != 0 || o.contents != quake1::CONTENTS_SOLID) continue;
        const auto& b = r.map.entities[0].brushes[o.brush];
        SolidBrush s;
        std::vector<decompile::PlaneD> pd;
        for (const auto& side : b.sides) {
            s.planes.push_back(mapfile::plane_from_points(side.points));
            pd.push_back({s.planes.back().normal, s.planes.back().dist});
        }
        for (const auto& w : decompile::brush_windings(pd))
            for (const auto& v : w)
                for (size_t k = 0; k < 3; ++k) s.mins[k] = std::min(s.mins[k], v[k]), s.maxs[k] = std::max(s.maxs[k], v[k]);
        solids.push_back(std::move(s));
    }
    EXPECT_FALSE(solids.empty()) << f.relpath;
    if (solids.empty()) return 0;

    // A grid over the bounds for the point-in-brush tests.
    Vec3d lo{world_model.mins[0], world_model.mins[1], world_model.mins[2]};
    Vec3d hi{world_model.maxs[0], world_model.maxs[1], world_model.maxs[2]};
    constexpr int G = 32;
    std::vector<std::vector<uint32_t>> grid(G * G * G);
    auto cell_of = [&](double v, size_t k) {
        return std::clamp(int((v - lo[k]) / (hi[k] - lo[k]) * G), 0, G - 1);
    };
    for (uint32_t i = 0; i < solids.size(); ++i) {
        int a[3], b[3];
        for (size_t k = 0; k < 3; ++k) a[k] = cell_of(solids[i].mins[k] - 1, k), b[k] = cell_of(solids[i].maxs[k] + 1, k);
        for (int x = a[0]; x <= b[0]; ++x)
            for (int y = a[1]; y <= b[1]; ++y)
                for (int z = a[2]; z <= b[2]; ++z) grid[size_t((x * G + y) * G + z)].push_back(i);
    }

    const query::World world = query::World::prepare(bsp);
    std::mt19937_64 rng(12345);
    constexpr size_t kSamples = 100'000;
    // BRUSHLIST maps: the compiler's own brushes, which do not fill the void
    // outside the map that hull 0 calls solid: there only "decompiled solid
    // => BSP solid" is asked.
    bool brushlist = false;
    for (const auto& n : r.notes) brushlist |= n.find("BRUSHLIST") != std::string::npos;
    size_t agree = 0, far_disagree = 0, solid_points = 0;
    for (size_t n = 0; n < kSamples; ++n) {
        Vec3d p;
        for (size_t k = 0; k < 3; ++k) p[k] = std::uniform_real_distribution<double>(lo[k], hi[k])(rng);
        const bool bsp_solid = world.contents({float(p[0]), float(p[1]), float(p[2])}).raw == quake1::CONTENTS_SOLID;
        solid_points += bsp_solid;
        double best = 1e30;  // smallest "outside" distance among nearby brushes
        for (uint32_t i : grid[size_t((cell_of(p[0], 0) * G + cell_of(p[1], 1)) * G + cell_of(p[2], 2))])
            best = std::min(best, solids[i].outside(p));
        const bool dec_solid = best <= 0;
        if (dec_solid == bsp_solid || (brushlist && bsp_solid)) {
            ++agree;
        } else if (std::abs(best) > 1) {
            // Inside a brush by more than 1 unit, or more than 1 unit from every brush.
            ++far_disagree;
            if (far_disagree <= 5)
                ADD_FAILURE() << f.relpath << ": point " << p[0] << " " << p[1] << " " << p[2] << " BSP "
                              << (bsp_solid ? "solid" : "not solid") << ", decompiled " << (dec_solid ? "solid" : "not solid")
                              << " (" << best << " from a brush boundary)";
        }
    }
    EXPECT_GE(double(agree) / kSamples, 0.999) << f.relpath << ": " << agree << " of " << kSamples << " agree";
    EXPECT_EQ(far_disagree, 0u) << f.relpath;
    EXPECT_GT(solid_points, 0u);

    const std::string text = mapfile::write(r.map);
    EXPECT_TRUE(mapfile::read(text, f.relpath, r.map.dialect) == r.map) << f.relpath;
    if (q.goldsrc()) EXPECT_EQ(r.map.dialect, mapfile::Dialect::valve220);
    else EXPECT_EQ(r.map.dialect, mapfile::Dialect::quake);
    return r.stats.brushes;
}

INSTANTIATE_TEST_SUITE_P(Corpus, DecompileTree, ::testing::ValuesIn(tree_maps()),
                         [](const auto& info) { return test_name(info.param.relpath); });

}  // namespace
