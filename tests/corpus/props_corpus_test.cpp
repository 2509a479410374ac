// Static props of every Source corpus map: they decode, reference valid
// dictionary entries and leaves, re-encode to the same bytes, and survive an
// edit + save + reopen with every other game lump and lump unchanged. Also
// `bspkit props` through the command line.
#include "corpus.hpp"
#include "run.hpp"

#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_props.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <charconv>
#include <string>

namespace bspkit::source {
namespace {

using test::CorpusFile;

std::vector<const CorpusFile*> source_files() {
    std::vector<const CorpusFile*> out;
    for (const CorpusFile& f : test::corpus_files())
        if (test::expected_format(f) == std::optional<std::string>("source")) out.push_back(&f);
    return out;
}

TEST(PropsCorpus, StaticPropsDecodeWithValidReferences) {
    const auto files = source_files();
    ASSERT_GE(files.size(), 12u);
    size_t with_props = 0;
    for (const CorpusFile* f : files) {
        SCOPED_TRACE(f->relpath);
        const Bsp bsp = Bsp::parse(test::read_corpus(*f), f->relpath);
        const auto k = find_game_lump(bsp, GAMELUMP_STATIC_PROPS);
        ASSERT_TRUE(k.has_value()) << "every corpus Source map has an sprp game lump";
        const auto props = read_static_props(bsp);
        ASSERT_TRUE(props.has_value());
        EXPECT_EQ(props->format.version, bsp.game_lumps()[*k].version);
        EXPECT_NE(props->format.variant, StaticPropVariant::unknown) << props->format.reason;
        EXPECT_FALSE(props->format.reason.empty());
        const size_t leafs = bsp.record_count(10).value_or(0);
        for (uint32_t leaf : props->leaves) EXPECT_LT(leaf, leafs);
        for (const StaticProp& p : props->props) {
            EXPECT_LT(p.prop_type, props->names.size());
            EXPECT_LE(size_t(p.first_leaf) + p.leaf_count, props->leaves.size());
            EXPECT_EQ(p.stored.size(), props->format.entry_size);
        }
        for (const std::string& name : props->names) EXPECT_NE(name.find(".mdl"), std::string::npos) << name;
        // Re-encoding gives the stored bytes back.
        const ByteSpan stored = bsp.game_lump_decoded(*k);
        EXPECT_EQ(encode_static_props(*props, bsp.byte_order()), Bytes(stored.begin(), stored.end()));
        with_props += !props->props.empty();
    }
    EXPECT_GE(with_props, 5u);
}

TEST(PropsCorpus, DetailPropsDecodeWhereTheEngineWould) {
    for (const CorpusFile* f : source_files()) {
        SCOPED_TRACE(f->relpath);
        const Bsp bsp = Bsp::parse(test::read_corpus(*f), f->relpath);
        const auto k = find_game_lump(bsp, GAMELUMP_DETAIL_PROPS);
        if (!k) continue;
        const GameLump& g = bsp.game_lumps()[*k];
        const ByteSpan data = bsp.game_lump_decoded(*k);
        if (g.version < GAMELUMP_DETAIL_PROPS_VERSION) {
            EXPECT_THROW(decode_detail_props(data, g.version, bsp.byte_order(), {f->relpath, "dprp", -1}), Error);
            continue;
        }
        const DetailPropsLump d = decode_detail_props(data, g.version, bsp.byte_order(), {f->relpath, "dprp", -1});
        EXPECT_EQ(encode_detail_props(d, bsp.byte_order()), Bytes(data.begin(), data.end()));
        const size_t leafs = bsp.record_count(10).value_or(0);
        for (const DetailObjectLump_t& o : d.objects) {
            EXPECT_LT(o.m_Leaf, leafs);
            EXPECT_LT(o.m_DetailModel, o.m_Type == DETAIL_PROP_TYPE_MODEL ? d.models.size() : d.sprites.size());
        }
    }
    // sdk_vehicles has thousands of sprite detail props.
    const Bsp v19 = Bsp::parse(test::read_corpus(test::corpus_file("src_v19/sdk_vehicles_v19.bsp")), "v19");
    const auto k = find_game_lump(v19, GAMELUMP_DETAIL_PROPS);
    ASSERT_TRUE(k);
    EXPECT_GT(decode_detail_props(v19.game_lump_decoded(*k), v19.game_lumps()[*k].version, v19.byte_order(), {}).objects.size(),
              1000u);
}

/// Every lump but the game lump, and every game lump but sprp, byte for byte.
void expect_rest_unchanged(const Bsp& before, const Bsp& after) {
    ASSERT_EQ(before.lump_count(), after.lump_count());
    for (size_t i = 0; i < before.lump_count(); ++i) {
        if (i == 35) continue;
        const ByteSpan a = before.decoded(i), b = after.decoded(i);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "lump " << i << " changed";
    }
    ASSERT_EQ(before.game_lumps().size(), after.game_lumps().size());
    for (size_t k = 0; k < before.game_lumps().size(); ++k) {
        EXPECT_EQ(before.game_lumps()[k].id, after.game_lumps()[k].id);
        EXPECT_EQ(before.game_lumps()[k].version, after.game_lumps()[k].version);
        if (before.game_lumps()[k].id == GAMELUMP_STATIC_PROPS) continue;
        const ByteSpan a = before.game_lump_decoded(k), b = after.game_lump_decoded(k);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "game lump " << before.game_lumps()[k].name();
        EXPECT_EQ(before.game_lumps()[k].compressed(), after.game_lumps()[k].compressed());
    }
}

TEST(PropsCorpus, MovedPropSurvivesSaveAndReopen) {
    const std::string dir = test::temp_dir("props");
    for (const CorpusFile* f : source_files()) {
        SCOPED_TRACE(f->relpath);
        const Bsp original = Bsp::parse(test::read_corpus(*f), f->relpath);
        Bsp edited = Bsp::parse(test::read_corpus(*f), f->relpath);
        StaticPropsLump props = *read_static_props(edited);
        const bool had_props = !props.props.empty();
        if (had_props) {
            // Move the last prop.
            StaticProp& p = props.props.back();
            p.origin[0] += 16;
            p.origin[1] -= 8;
            p.origin[2] += 32;
            p.angles[1] = 45;
        } else {
            // Nothing to move: add a prop (and its model) instead.
            props.names.push_back("models/bspkit/test_crate.mdl");
            StaticProp p;
            p.prop_type = uint16_t(props.names.size() - 1);
            p.origin = {1, 2, 3};
            p.solid = 6;
            props.props.push_back(p);
        }
        write_static_props(edited, props);
        const std::string out = dir + "/" + test::test_name(f->relpath);
        edited.save(out);

        const Bsp reopened = Bsp::open(out);
        const auto back = read_static_props(reopened);
        ASSERT_TRUE(back);
        EXPECT_EQ(back->format.variant, props.format.variant);
        ASSERT_EQ(back->props.size(), props.props.size());
        EXPECT_EQ(back->props.back().origin, props.props.back().origin);
        EXPECT_EQ(back->names, props.names);
        if (had_props) {
            EXPECT_EQ(back->props.back().angles[1], 45.f);
            const auto before = read_static_props(original);
            for (size_t i = 0; i + 1 < back->props.size(); ++i) EXPECT_EQ(back->props[i].stored, before->props[i].stored);
        }
        expect_rest_unchanged(original, reopened);
        // The saved file's own directory is consistent and the map checks as
        // the original does (clean, or csgo_ar_monastery's unsafe pakfile name:
        // source_check_corpus_test.cpp).
        EXPECT_TRUE(reopened.diagnostics().empty()) << reopened.diagnostics().front().message;
        const CheckReport r = check(reopened);
        const CheckReport was = check(original);
        ASSERT_EQ(r.findings.size(), was.findings.size()) << (r.findings.empty() ? "" : r.findings.front().message);
        for (size_t i = 0; i < r.findings.size(); ++i) {
            EXPECT_EQ(r.findings[i].lump, was.findings[i].lump);
            EXPECT_EQ(r.findings[i].message, was.findings[i].message);
        }
    }
}

TEST(PropsCli, ListsPropsAsTextAndJson) {
    for (const CorpusFile* f : source_files()) {
        SCOPED_TRACE(f->relpath);
        const Bsp bsp = Bsp::parse(test::read_corpus(*f), f->relpath);
        const auto props = read_static_props(bsp);
        const auto text = test::run_cli({"props", f->path.string()});
        EXPECT_EQ(text.exit_code, 0) << text.err;
        EXPECT_NE(text.out.find(props->format.name), std::string::npos) << text.out;
        if (!props->props.empty()) {
            EXPECT_NE(text.out.find(props->names[props->props[0].prop_type]), std::string::npos);
        }

        const auto json = test::run_cli({"props", "--json", f->path.string()});
        ASSERT_EQ(json.exit_code, 0) << json.err;
        const auto j = nlohmann::json::parse(json.out);
        EXPECT_EQ(j["static_props"]["variant"], props->format.name);
        EXPECT_EQ(j["static_props"]["entry_size"], props->format.entry_size);
        EXPECT_EQ(j["static_props"]["models"].size(), props->names.size());
        ASSERT_EQ(j["props"].size(), props->props.size());
        for (size_t i = 0; i < props->props.size(); ++i) {
            const auto& e = j["props"][i];
            const StaticProp& p = props->props[i];
            EXPECT_EQ(e["model"], props->names[p.prop_type]);
            EXPECT_EQ(e["origin"][2].get<float>(), p.origin[2]);
            // Each coordinate is printed as the float's shortest text (vtmb's dome at
            // 219.924, not 219.9239959716797), which a double parse brings back to it.
            for (int k = 0; k < 3; ++k) {
                char buf[32];
                const std::string shortest(buf, std::to_chars(buf, buf + sizeof buf, p.origin[size_t(k)]).ptr);
                EXPECT_EQ(float(e["origin"][k].get<double>()), p.origin[size_t(k)]);
                EXPECT_EQ(e["origin"][k].dump(),
                          shortest.find_first_of(".e") == std::string::npos ? shortest + ".0" : shortest);
            }
            EXPECT_EQ(e["skin"], p.skin);
            EXPECT_EQ(e["solid"], p.solid);
            EXPECT_EQ(e["flags"], p.flags);
            EXPECT_EQ(e["fade_max"].get<float>(), p.fade_max_dist);
            EXPECT_EQ(e["leaves"].size(), p.leaf_count);
        }
    }
}

TEST(PropsCli, ExitCodes) {
    // A map of another family: bad input.
    const auto q2 = test::run_cli({"props", test::corpus_file("q2_v38/q2_mp_lobby.bsp").path.string()});
    EXPECT_EQ(q2.exit_code, 1);
    EXPECT_NE(q2.err.find("Source"), std::string::npos) << q2.err;
    EXPECT_TRUE(q2.out.empty());
    // A missing file: bad input.
    EXPECT_EQ(test::run_cli({"props", test::temp_dir("props_missing") + "/none.bsp"}).exit_code, 1);
    // Usage mistakes.
    EXPECT_EQ(test::run_cli({"props"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"props", "--bogus", "x.bsp"}).exit_code, 2);
    const auto help = test::run_cli({"props", "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--json"), std::string::npos);
    // A broken sprp game lump: bad input naming the game lump.
    const std::string dir = test::temp_dir("props_bad");
    Bsp bsp = Bsp::parse(test::read_corpus(test::corpus_file("src_v20/sdk2013_boxinaroom.bsp")), "box");
    Bytes bad;
    append<int32_t>(bad, 0x7fffffff);
    bsp.replace_game_lump(*find_game_lump(bsp, GAMELUMP_STATIC_PROPS), bad);
    bsp.save(dir + "/bad.bsp");
    const auto r = test::run_cli({"props", dir + "/bad.bsp"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("sprp"), std::string::npos) << r.err;
}

}  // namespace

/// The counts a dprp lump (version 4) declares, read straight from its bytes:
/// int32 model count, 128-byte names, int32 sprite count, 32-byte sprites,
/// int32 object count (independent of decode_detail_props).
static std::array<int32_t, 3> dprp_counts(ByteSpan d, ByteOrder order) {
    std::array<int32_t, 3> n{};
    size_t at = 0;
    const size_t record[3] = {128, 32, 52};
    for (int k = 0; k < 3; ++k) {
        n[size_t(k)] = load<int32_t>(d.data() + at, order);
        at += 4 + size_t(n[size_t(k)]) * record[k];
    }
    EXPECT_EQ(at, d.size()) << "the three lists fill the lump";
    return n;
}

TEST(PropsCli, DetailPropsCountsAreTheLumpsOwn) {
    const CorpusFile& f = test::corpus_file("src_v19/sdk_vehicles_v19.bsp");
    const Bsp bsp = Bsp::parse(test::read_corpus(f), f.relpath);
    const auto k = find_game_lump(bsp, GAMELUMP_DETAIL_PROPS);
    ASSERT_TRUE(k);
    ASSERT_GT(bsp.game_lump_decoded(*k).size(), 500000u);  // the 536 KB dprp
    const auto n = dprp_counts(bsp.game_lump_decoded(*k), bsp.byte_order());
    ASSERT_GT(n[2], 0);

    const auto json = test::run_cli({"props", "--json", f.path.string()});
    ASSERT_EQ(json.exit_code, 0) << json.err;
    const auto j = nlohmann::json::parse(json.out)["detail_props"];
    EXPECT_EQ(j["version"], bsp.game_lumps()[*k].version);
    EXPECT_EQ(j["models"].size(), size_t(n[0]));
    EXPECT_EQ(j["sprite_count"], n[1]);
    EXPECT_EQ(j["object_count"], n[2]);
    ASSERT_EQ(j["objects"].size(), size_t(n[2]));
    size_t by_type[4] = {};
    for (const auto& o : j["objects"]) {
        const std::string type = o["type"];
        for (size_t t = 0; t < 4; ++t) by_type[t] += type == std::array{"model", "sprite", "shape_cross", "shape_tri"}[t];
        EXPECT_LT(o["index"].get<size_t>(), type == "model" ? size_t(n[0]) : size_t(n[1]));
    }

    const auto text = test::run_cli({"props", f.path.string()});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    const auto str = [](auto v) { return std::to_string(v); };
    const std::string summary = "dprp:     version " + str(bsp.game_lumps()[*k].version) + ": " + str(n[0]) +
                                " models, " + str(n[1]) + " sprites, " + str(n[2]) + " objects (" + str(by_type[0]) +
                                " model, " + str(by_type[1]) + " sprite, " + str(by_type[2]) + " shape_cross, " +
                                str(by_type[3]) + " shape_tri)";
    EXPECT_NE(text.out.find(summary), std::string::npos)
        << text.out;
    for (const auto& name : j["models"]) EXPECT_NE(text.out.find(name.get<std::string>()), std::string::npos);
}

TEST(LumpCli, GameLumpsExtractByFourcc) {
    const std::string dir = test::temp_dir("fourcc");
    size_t extracted = 0;
    for (const CorpusFile* f : source_files()) {
        SCOPED_TRACE(f->relpath);
        const Bsp bsp = Bsp::parse(test::read_corpus(*f), f->relpath);
        const auto& games = bsp.game_lumps();
        for (size_t k = 0; k < games.size(); ++k) {
            const std::string id = games[k].name();
            if (id.find('?') != std::string::npos || find_game_lump(bsp, games[k].id) != k) continue;
            SCOPED_TRACE(id);
            const std::string out = dir + "/" + test::test_name(f->relpath) + "_" + std::to_string(k) + ".bin";
            const auto r = test::run_cli({"lump", "extract", f->path.string(), id, "-o", out});
            ASSERT_EQ(r.exit_code, 0) << r.err;
            const ByteSpan want = bsp.game_lump_decoded(k);
            EXPECT_EQ(read_file(out), Bytes(want.begin(), want.end()));
            ++extracted;
        }
        if (!games.empty()) {
            const auto none = test::run_cli({"lump", "extract", f->path.string(), "zzzz", "-o", dir + "/none"});
            EXPECT_EQ(none.exit_code, 2);
            EXPECT_NE(none.err.find("its game lumps are " + games[0].name()), std::string::npos) << none.err;
        }
    }
    EXPECT_GT(extracted, 10u);
}

}  // namespace bspkit::source
