// check and the verbs agree on damaged maps: copies of every corpus map with
// bytes of one lump changed (a run of random bytes, flipped bits, a 16- or
// 32-bit field set to an extreme), each checked; where check finds no error,
// the geometry build (what export, render and the viewer run), the
// decompiler, the collision world with a few traces (leaf, trace, visible)
// and a small render must not refuse the copy either. Where check reports an
// error the verbs may refuse it, with an Error, never a crash. Each mismatch
// this found at random was a defect on one side: a Source primitive index
// past its face (check passed it), inside-out Quake 1 model bounds (decompile
// refused them), an empty Source texture name (the build refused it), an
// empty Source leaf-brush range past the end (the collision world refused
// it), plane normals near the largest float (check passed them, a trace
// could not end); and a damaged leaf face list made the renderer fill 256 MB.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>

#include "corpus.hpp"
#include "entry_points.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace bspkit {
namespace {

using test::CorpusFile;

/// One damaged copy: lump `lump` changed as `kind` says, at offsets drawn from `rng`.
Bytes damage(const Bytes& original, const LumpEntry& e, int kind, std::mt19937& rng) {
    Bytes b = original;
    const size_t at = size_t(e.offset), n = size_t(e.length);
    auto pick = [&](size_t below) { return size_t(std::uniform_int_distribution<size_t>(0, below - 1)(rng)); };
    switch (kind) {
        case 0: {  // a run of random bytes
            const size_t from = pick(n), len = std::min(n - from, 1 + pick(64));
            for (size_t i = 0; i < len; ++i) b[at + from + i] = uint8_t(rng());
            break;
        }
        case 1:  // eight flipped bits
            for (int i = 0; i < 8; ++i) b[at + pick(n)] ^= uint8_t(1u << pick(8));
            break;
        case 2: {  // a 16-bit field
            static constexpr uint16_t kValues[] = {0xffff, 0x8000, 0x7fff, 1000};
            const size_t where = pick(n - 1) & ~size_t(1);
            const uint16_t v = kValues[pick(4)];
            b[at + where] = uint8_t(v);
            b[at + where + 1] = uint8_t(v >> 8);
            break;
        }
        default: {  // a 32-bit field
            static constexpr uint32_t kValues[] = {0xffffffffu, 0x7fffffffu, 0x80000000u, 65535u, 100000u};
            const size_t where = pick(n - 3) & ~size_t(3);
            const uint32_t v = kValues[pick(5)];
            for (int i = 0; i < 4; ++i) b[at + where + size_t(i)] = uint8_t(v >> (8 * i));
            break;
        }
    }
    return b;
}

/// What the query verbs (leaf, trace, visible) run on a map: the collision
/// world, and from the middle of the world's drawn bounds (without a built
/// map, of a 2048-unit box at the origin) a point query, line traces to the
/// box's faces and corners, and a visible() test.
void query_the_world(const Bsp& bsp, const model::Map* map) {
    const query::World world = query::World::prepare(bsp);
    model::Vec3 lo{-1024, -1024, -1024}, hi{1024, 1024, 1024};
    if (map)
        if (const auto bounds = fuzz::drawn_bounds(*map)) std::tie(lo, hi) = *bounds;
    const model::Vec3 mid = (lo + hi) * 0.5f;
    (void)world.leaf_at(mid);
    (void)world.contents(mid);
    for (const model::Vec3 to : {model::Vec3{lo.x, mid.y, mid.z}, model::Vec3{hi.x, mid.y, mid.z},
                                 model::Vec3{mid.x, lo.y, mid.z}, model::Vec3{mid.x, hi.y, mid.z}, lo, hi})
        (void)world.trace(mid, to);
    (void)world.visible(mid, hi);
}

/// What render runs: the scene and a small thumbnail.
void render_a_thumbnail(const Bsp& bsp, const model::Map& map) {
    render::Options options;
    options.width = 32;
    options.height = 24;
    options.threads = 1;
    const render::Scene scene = render::Scene::prepare(map, bsp, options);
    (void)render::render(scene, render::thumbnail_camera(scene), options);
}

TEST(DamageConsistencyCorpus, WhatCheckPassesTheVerbsTake) {
    // BSPKIT_DAMAGE_COPIES: more copies per map for a deeper search (default 16);
    // BSPKIT_DAMAGE_SEED: other copies (default 0); BSPKIT_DAMAGE_ALL: the maps over 5 MB too.
    const char* env = std::getenv("BSPKIT_DAMAGE_COPIES");
    const int kCopies = env ? std::max(1, std::atoi(env)) : 16;
    const char* seed_env = std::getenv("BSPKIT_DAMAGE_SEED");
    const uint32_t seed = seed_env ? uint32_t(std::strtoul(seed_env, nullptr, 10)) : 0;
    size_t maps = 0, copies = 0, clean = 0;
    for (const CorpusFile& f : test::corpus_files()) {
        if (!test::expected_format(f) || f.size > (std::getenv("BSPKIT_DAMAGE_ALL") ? SIZE_MAX : 5'000'000)) continue;  // the big ones cost time, not coverage
        const Bytes original = test::read_corpus(f);
        const Bsp bsp = Bsp::parse(original, f.relpath);
        std::vector<size_t> lumps;
        for (size_t i = 0; i < bsp.lump_count(); ++i)
            if (bsp.entry(i).length >= 8 && !bsp.compressed(i)) lumps.push_back(i);
        if (lumps.empty()) continue;
        std::mt19937 rng(uint32_t(std::hash<std::string>{}(f.relpath)) ^ seed);
        for (int k = 0; k < kCopies; ++k) {
            const size_t lump = lumps[size_t(rng() % lumps.size())];
            const int kind = int(rng() % 4);
            Bytes bytes = damage(original, bsp.entry(lump), kind, rng);
            SCOPED_TRACE(f.relpath + ": copy " + std::to_string(k) + ", lump " + std::string(bsp.lump_name(lump)) +
                         ", damage " + std::to_string(kind));
            ++copies;
            std::optional<Bsp> damaged;
            try {
                damaged.emplace(Bsp::parse(std::move(bytes), f.relpath));
            } catch (const Error&) {
                continue;  // the container refused it: every verb does
            }
            // A copy check finds errors in may be refused (with an Error: a crash fails,
            // and the sanitizer build runs this too); a clean one must be taken.
            const bool clean_copy = check(*damaged).errors() == 0;
            clean += clean_copy;
            bool refused = false;
            std::optional<model::Map> built;
            for (const auto& [name, verb] : std::initializer_list<std::pair<const char*, std::function<void()>>>{
                     {"build", [&] { built.emplace(model::build(*damaged)); }},
                     {"decompile", [&] { (void)decompile::decompile(*damaged); }},
                     {"query", [&] { query_the_world(*damaged, built ? &*built : nullptr); }},
                     {"render", [&] { if (built) render_a_thumbnail(*damaged, *built); }}}) {
                try {
                    verb();
                } catch (const Error& e) {
                    if (!clean_copy) continue;
                    ADD_FAILURE() << "check found no error, " << name << " refused the copy: " << e.what();
                    refused = true;
                }
            }
            if (refused) {  // kept for a look (bspkit check / export / decompile on it), in the working directory
                const std::filesystem::path kept = std::filesystem::absolute(
                    "damage_consistency_" + test::test_name(f.relpath) + "_" + std::to_string(k) + ".bsp");
                write_file_atomic(kept, damaged->file_bytes());
                ADD_FAILURE() << "the copy: " << kept.string();
            }
        }
        ++maps;
    }
    EXPECT_GE(maps, 30u);
    EXPECT_GE(clean, copies / 4) << "most damage should leave some copies check finds clean";
}

}  // namespace
}  // namespace bspkit

namespace bspkit {
namespace {

// An empty range references nothing wherever it starts (vbsp and vrad leave
// such starts past the end; Source's check accepts them): a model with no
// faces whose firstface lies far past the faces builds like any other. The
// build refused it ("faces 4194481 + 0 run past the 205 records of faces":
// found by the test above with 400 copies a map).
TEST(DamageConsistencyCorpus, SourceModelWithNoFacesStartsAnywhere) {
    size_t maps = 0;
    for (const CorpusFile& f : test::corpus_files()) {
        if (test::expected_format(f) != std::optional<std::string>("source")) continue;
        SCOPED_TRACE(f.relpath);
        Bsp bsp = Bsp::parse(test::read_corpus(f), f.relpath);
        const source::Map m(bsp);
        if (m.models().size() < 2 || bsp.compressed(source::lump::models)) continue;
        const size_t errors_before = check(bsp).errors();
        std::vector<source::dmodel_t> models(m.models().begin(), m.models().end());
        models.back().firstface = 0x7fffffff;
        models.back().numfaces = 0;
        bsp.replace(source::lump::models, encode_records<source::dmodel_t>(models, bsp.byte_order()));
        EXPECT_EQ(check(bsp).errors(), errors_before);
        const model::Map built = model::build(bsp);
        EXPECT_TRUE(built.models.back().surfaces.empty());
        ++maps;
    }
    EXPECT_GE(maps, 5u);
}

}  // namespace
}  // namespace bspkit

namespace bspkit {
namespace {

// Every compiler writes planes with unit normals (every corpus map's are
// within 1e-6 of length 1). One scaled (here twice as long) is a damaged
// record, an error of check in every family: near the largest float, traces
// through such planes cannot end (their distances overflow), which check let
// pass ("0 errors") on a GoldSrc copy while trace refused it (found by
// WhatCheckPassesTheVerbsTake with BSPKIT_DAMAGE_SEED=21); Source's check
// read no plane values at all.
TEST(DamageConsistencyCorpus, APlaneNormalThatIsNotAUnitVectorIsAnError) {
    std::set<Format> families;
    for (const CorpusFile& f : test::corpus_files()) {
        if (!test::expected_format(f)) continue;
        SCOPED_TRACE(f.relpath);
        Bsp bsp = Bsp::parse(test::read_corpus(f), f.relpath);
        const std::optional<size_t> planes = bsp.find_lump("planes");
        ASSERT_TRUE(planes);
        const ByteSpan decoded = bsp.decoded(*planes);
        const uint32_t size = bsp.record_size(*planes);
        ASSERT_GE(size, 16u);
        if (decoded.size() < 2 * size) continue;
        const size_t record = decoded.size() / size / 2;
        const auto has_error = [&](const CheckReport& r) {
            return std::any_of(r.findings.begin(), r.findings.end(), [&](const Finding& x) {
                return x.severity == Severity::error && x.lump == "planes" && x.record == int64_t(record) &&
                       (x.field == "normal" || x.field == "Normal") && x.message.find("has length 2, not 1") != std::string::npos;
            });
        };
        ASSERT_FALSE(has_error(check(bsp)));
        Bytes bytes(decoded.begin(), decoded.end());
        for (size_t k = 0; k < 3; ++k) {  // the normal's three floats, in the file's byte order
            uint8_t* p = &bytes[record * size + 4 * k];
            uint32_t u;
            std::memcpy(&u, p, 4);
            if (bsp.byte_order() == ByteOrder::big) u = byteswap(u);
            float v;
            std::memcpy(&v, &u, 4);
            v *= 2;
            std::memcpy(&u, &v, 4);
            if (bsp.byte_order() == ByteOrder::big) u = byteswap(u);
            std::memcpy(p, &u, 4);
        }
        bsp.replace(*planes, std::move(bytes));
        const CheckReport report = check(bsp);
        EXPECT_TRUE(has_error(report)) << report.findings.size() << " findings";
        families.insert(bsp.format());
    }
    EXPECT_GE(families.size(), 7u);  // Quake 1, BSP2, GoldSrc, Quake 2, Quake 3, Nightfire, Source
}

}  // namespace
}  // namespace bspkit
