// `check` over every non-Source corpus file bspkit reads: each file checks
// clean, or each of its findings is a real defect listed here with the
// reason (every listing was investigated against the file's bytes). The list
// is exact both ways: an unlisted finding fails, and so does a listed one
// that is no longer found.
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/nightfire.hpp>
#include <bspkit/formats/quake1.hpp>
#include <bspkit/formats/quake2.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/query.hpp>

#include "corpus.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bspkit/visibility.hpp>

#include <algorithm>
#include <cstring>
#include <random>

using namespace bspkit;
using namespace bspkit::test;

namespace {

struct Known {
    std::string file;
    Severity severity;
    std::string lump;
    int64_t record;
    std::string field;
    std::string message;  ///< a part of the message
    std::string reason;   ///< why this is a real property of the file
};

std::vector<Known> known_findings() {
    std::vector<Known> k;
    // pd_change_dest: every lump after the odd-length entities lump starts at
    // an odd offset (11527, 51187, ...): the tool that wrote it packs lumps
    // without id's 4-byte padding. x86 engines read it; strict-alignment CPUs fault.
    for (const char* lump : {"planes", "textures", "vertexes", "visibility", "nodes", "texinfo", "faces", "lighting",
                             "clipnodes", "leafs", "marksurfaces", "edges", "surfedges", "models"})
        k.push_back({"q1_v29/pd_change_dest.bsp", Severity::warning, lump, -1, "", "not 4-byte aligned",
                     "lumps packed without 4-byte alignment"});
    k.push_back({"q1_v29/pd_change_dest.bsp", Severity::warning, "lighting", -1, "", "1816588 exceeds MAX_MAP_LIGHTING",
                 "1.8 MB of lightmaps: a progs_dump map for engines with raised limits (Quakespasm class), over "
                 "id's 1 MB"});
    // bevytb_example_early: compiled without its WAD; the miptex directory
    // entries the texinfo use are -1 (textures absent from the file).
    for (const auto& [record, miptex] : std::vector<std::pair<int, int>>{{0, 2}, {1, 1}, {2, 3}, {3, 1}, {4, 1}, {5, 2}, {6, 2}, {7, 1}})
        k.push_back({"q1_bsp2/bevytb_example_early.bsp", Severity::warning, "texinfo", record, "miptex",
                     "miptex " + std::to_string(miptex) + " is missing", "compiled without its textures (dataofs -1)"});
    // postretro_test: built with qbsp -notex (MANIFEST), so no texture is in the file.
    for (int record = 0; record < 3; ++record)
        k.push_back({"q1_bsp2/postretro_test.bsp", Severity::warning, "texinfo", record, "miptex",
                     "miptex 1 is missing", "qbsp -notex: textures left out"});
    // The ericw-tools maps with a BSPX BRUSHLIST: an info finding says which
    // hulls FTE builds from it (bevytb_example_q1_lit has no clipnodes at
    // all: qbsp -wrbrushes -noclip, so its models' headnode[1..3] are 0 and
    // refer to nothing; that is not an error there).
    k.push_back({"q1_bsp2/bevytb_example_q1_lit.bsp", Severity::info, "bspx:BRUSHLIST", -1, "",
                 "no clipnodes: engines without BRUSHLIST", "hulls 1+ come from BRUSHLIST"});
    // Its four miptex headers have offsets 0: textures left out of the file
    // for engines that load them by name (FTE; bevy_trenchbroom), not vanilla Quake.
    for (int record = 0; record < 4; ++record)
        k.push_back({"q1_bsp2/bevytb_example_q1_lit.bsp", Severity::warning, "textures", record, "offsets",
                     "has no pixels (offsets[0] = 0)", "external textures, loaded by name"});
    k.push_back({"q1_bsp2/postretro_test.bsp", Severity::info, "bspx:BRUSHLIST", -1, "",
                 "engines that read BRUSHLIST (FTE) build hulls 1 and 2", "BRUSHLIST beside the clipnode hulls"});
    // svencoop_q2dm1: face 688 spans s -192..336 (texinfo 110: s = x, scale 1):
    // 528 texels, 33 luxels; Sven Co-op's engine raised Half-Life's 256 limit.
    k.push_back({"hl1_v30/svencoop_q2dm1.bsp", Severity::warning, "faces", 688, "texinfo", "spans 528 texels",
                 "Sven Co-op map with surface extents over Half-Life's limit"});
    // q2_base1: the retail file's directory declares the entities lump 6 bytes
    // longer than the file (corpus README).
    k.push_back({"q2_v38/q2_base1.bsp", Severity::warning, "entities", -1, "", "runs 6 bytes past the end of the file",
                 "entities lump declared 6 bytes past EOF"});
    // nexuiz_ons-reborn: fog 0 has brushNum -1, q3map2's global fog (its
    // worldspawn sets _fog); id's renderer drops the map with "fog brushNumber
    // out of range", DarkPlaces (Nexuiz's engine) implements it.
    k.push_back({"q3_v46/nexuiz_ons-reborn.bsp", Severity::warning, "effects", 0, "brushNum", "global fog",
                 "q3map2 global fog, not loadable by id's Quake 3"});
    k.push_back({"q3_v46/nexuiz_ons-reborn.bsp", Severity::warning, "brushsides", -1, "", "182913 exceeds MAX_MAP_BRUSHSIDES",
                 "a DarkPlaces map over Quake 3's 131072 brush sides"});
    return k;
}

bool matches(const Known& k, const std::string& file, const Finding& f) {
    return k.file == file && k.severity == f.severity && k.lump == f.lump && k.record == f.record &&
           k.field == f.field && f.message.find(k.message) != std::string::npos;
}

std::vector<std::string> quake_family_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files()) {
        const auto fmt = expected_format(f);
        if (fmt && *fmt != "source") out.push_back(f.relpath);
    }
    return out;
}

class QuakeCheckCorpus : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(QuakeCheckCorpus, ChecksCleanOrOnlyListedDefects) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    ASSERT_EQ(std::string(format_id(bsp.format())), *expected_format(file));
    const CheckReport report = check(bsp);
    const auto known = known_findings();
    std::vector<bool> used(known.size(), false);
    for (const Finding& f : report.findings) {
        bool listed = false;
        for (size_t i = 0; i < known.size(); ++i)
            if (matches(known[i], file.relpath, f)) {
                listed = used[i] = true;
                break;
            }
        EXPECT_TRUE(listed) << "unexpected finding: lump " << f.lump << " record " << f.record << " field " << f.field
                            << ": " << (f.severity == Severity::error ? "error: " : "warning: ") << f.message;
    }
    for (size_t i = 0; i < known.size(); ++i) {
        if (known[i].file != file.relpath) continue;
        EXPECT_TRUE(used[i]) << "listed finding no longer reported: lump " << known[i].lump << " record "
                             << known[i].record << " field " << known[i].field << " (" << known[i].reason << ")";
    }
    EXPECT_EQ(report.errors(), 0u);
}

// The lightmap rules decide to the byte: on every map with lighting the last
// lightmap ends exactly at the end of the lump, and none starts outside it.
TEST_P(QuakeCheckCorpus, LightmapRuleAccountsForTheWholeLightingLump) {
    const CorpusFile& file = corpus_file(GetParam());
    const Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    size_t lighting = 0, end = 0, lit = 0;
    switch (bsp.format()) {
        case Format::quake1:
        case Format::bsp2:
        case Format::goldsrc: {
            const quake1::Map map(bsp);
            lighting = map.lighting().size();
            const size_t n = map.visit([](const auto& t) { return t.faces.size(); });
            for (size_t f = 0; f < n; ++f)
                if (const auto lm = quake1::face_lightmap(map, f)) {
                    ++lit;
                    end = std::max(end, size_t(lm->lightofs) + lm->bytes);
                }
            break;
        }
        case Format::quake2: {
            const quake2::Map map(bsp);
            lighting = map.lighting().size();
            for (size_t f = 0; f < map.faces().size(); ++f)
                if (const auto lm = quake2::face_lightmap(map, f)) {
                    ++lit;
                    end = std::max(end, size_t(lm->lightofs) + lm->bytes);
                }
            break;
        }
        case Format::nightfire: {
            const nightfire::Map map(bsp);
            lighting = map.lighting().size();
            for (size_t s = 0; s < map.surfaces().size(); ++s)
                if (const auto lm = nightfire::surface_lightmap(map, s)) {
                    ++lit;
                    end = std::max(end, size_t(lm->offset) + lm->bytes);
                }
            break;
        }
        case Format::quake3: {  // pages of 128 x 128 RGB, every face rectangle inside its page
            const quake3::Map map(bsp);
            EXPECT_EQ(bsp.decoded(quake3::Map::LUMP_LIGHTMAPS).size() % sizeof(quake3::dlightmap_t), 0u);
            for (const auto& s : map.surfaces())
                if (s.lightmapNum >= 0 && !map.lightmaps().empty()) {
                    ++lit;
                    EXPECT_LT(size_t(s.lightmapNum), map.lightmaps().size());
                    EXPECT_LE(s.lightmapX + s.lightmapWidth, quake3::LIGHTMAP_WIDTH);
                    EXPECT_LE(s.lightmapY + s.lightmapHeight, quake3::LIGHTMAP_HEIGHT);
                }
            return;
        }
        case Format::source: FAIL() << "not a Quake-family file";
    }
    if (lighting == 0) {
        EXPECT_EQ(lit, 0u);
        return;
    }
    EXPECT_GT(lit, 0u);
    // svencoop_q2dm1's lighting lump ends with 25296 zero bytes that no face
    // uses (its lightmaps run contiguously from 0 to 395574, the lump has
    // 420870): slack left by Sven Co-op's compiler, harmless.
    const size_t slack = file.relpath == "hl1_v30/svencoop_q2dm1.bsp" ? 25296 : 0;
    EXPECT_EQ(end + slack, lighting) << lit << " lit faces";
    if (slack && end + slack == lighting) {
        const ByteSpan all = bsp.decoded(*bsp.find_lump("lighting"));
        EXPECT_TRUE(std::all_of(all.begin() + end, all.end(), [](uint8_t b) { return b == 0; }));
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, QuakeCheckCorpus, ::testing::ValuesIn(quake_family_paths()),
                         [](const auto& info) { return test_name(info.param); });

TEST(QuakeCheckCorpusCli, JsonReportsForEveryFamily) {
    for (const std::string path : {"q1_v29/q1_mp_lobby.bsp", "q1_bsp2/rmq_mp_lobby.bsp", "hl1_v30/hl_boxmap.bsp",
                                   "q2_v38/q2_base1.bsp", "q3_v46/q3_mp_lobby.bsp", "q3_ibsp47/rtcw_testroom.bsp",
                                   "nightfire_v42/nf_weapon_accuracy_nf.bsp"}) {
        const CorpusFile& f = corpus_file(path);
        (void)read_corpus(f);  // fails when absent
        const auto r = run_cli({"check", f.path.string(), "--json"});
        EXPECT_EQ(r.exit_code, 0) << path << ": " << r.out << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["format"], *expected_format(f)) << path;
        EXPECT_EQ(j["errors"], 0) << path;
        EXPECT_EQ(j["warnings"], j["findings"].size()) << path;
        const auto text = run_cli({"check", f.path.string()});
        EXPECT_EQ(text.exit_code, 0);
        EXPECT_NE(text.out.find(": " + *expected_format(f) + " ("), std::string::npos) << text.out;
    }
    const CorpusFile& base1_file = corpus_file("q2_v38/q2_base1.bsp");
    const auto base1 = run_cli({"check", base1_file.path.string()});
    const int32_t entities_at = Bsp::parse(read_corpus(base1_file), base1_file.relpath).entry(0).offset;
    EXPECT_NE(base1.out.find("lump entities at offset " + std::to_string(entities_at) +
                             ": warning: runs 6 bytes past the end of the file"),
              std::string::npos)
        << base1.out;
    EXPECT_NE(base1.out.find("0 errors, 1 warning"), std::string::npos) << base1.out;
}

// A control byte in the map's own text (here an ESC in worldspawn's
// classname) is quoted by a finding: the text report shows it as \x1b, not
// the byte itself (a hostile map must not drive the terminal); --json keeps it.
TEST(QuakeCheckCorpusCli, ControlBytesOfTheMapAreNotPrinted) {
    const CorpusFile& f = corpus_file("q3_v46/oa_ctf2.bsp");
    Bytes bytes = read_corpus(f);
    const Bsp probe = Bsp::parse(read_corpus(f), f.relpath);
    const size_t at = size_t(probe.entry(0).offset);
    const std::string text(reinterpret_cast<const char*>(bytes.data() + at), size_t(probe.entry(0).length));
    const size_t world = text.find("\"worldspawn\"");
    ASSERT_NE(world, std::string::npos);
    bytes[at + world + 1] = 0x1b;
    const std::string path = temp_dir("check_control") + "/esc.bsp";
    write_file_atomic(path, bytes);
    const auto r = run_cli({"check", path});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("\"\\x1borldspawn\""), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos);
    const auto j = run_cli({"check", path, "--json"});
    EXPECT_NE(j.out.find("\\u001borldspawn"), std::string::npos) << j.out;
}

// Bit-flipped copies of the small real maps: check, visibility and the
// lightmap helpers give findings or bspkit::Error, never a crash (run under
// -DBSPKIT_SANITIZE=ON to catch any out-of-bounds read).
TEST(QuakeCheckCorpusHostile, BitFlippedRealMapsNeverCrash) {
    std::mt19937 rng(99);
    size_t files = 0;
    for (const auto& f : corpus_files()) {
        const auto fmt = expected_format(f);
        if (!fmt || *fmt == "source" || f.size > 200000) continue;
        ++files;
        const Bytes original = read_corpus(f);
        for (int round = 0; round < 150; ++round) {
            Bytes file = original;
            for (int k = 0, n = 1 + int(rng() % 8); k < n; ++k) {
                const size_t at = rng() % file.size();
                if (rng() % 2 && at + 4 <= file.size())
                    store<int32_t>(file.data() + at, int32_t(rng()));
                else
                    file[at] ^= uint8_t(1u << (rng() % 8));
            }
            try {
                const Bsp bsp = Bsp::parse(file, f.relpath);
                (void)check(bsp);
                const Visibility vis = Visibility::of(bsp);
                for (size_t c = 0; c < vis.clusters() && c < 32; ++c) {
                    Bytes row(vis.row_bytes());
                    (void)vis.pvs_into(c, row);
                }
            } catch (const Error&) {
            }
        }
    }
    EXPECT_GE(files, 8u);
}

namespace {

/// One field of a record: its byte offset and width (all these formats are little-endian).
struct Field {
    std::string name;
    size_t offset;
    size_t width;
};

/// Where to inject defects into a family's face records: an index field and
/// the lump it indexes, and a first/count pair and the lump it ranges over.
struct FaceFields {
    std::string faces;
    size_t record_size;
    Field index;
    std::string index_target;
    Field first, count;
    std::string range_target;
};

#define BSPKIT_FIELD(type, member) Field{#member, offsetof(type, member), sizeof(type::member)}

FaceFields face_fields(Format format) {
    switch (format) {
        case Format::quake1:
        case Format::goldsrc:
            return {"faces", sizeof(quake1::dface_t), BSPKIT_FIELD(quake1::dface_t, planenum), "planes",
                    BSPKIT_FIELD(quake1::dface_t, firstedge), BSPKIT_FIELD(quake1::dface_t, numedges), "surfedges"};
        case Format::bsp2:
            return {"faces", sizeof(quake1::bsp2_dface_t), BSPKIT_FIELD(quake1::bsp2_dface_t, planenum), "planes",
                    BSPKIT_FIELD(quake1::bsp2_dface_t, firstedge), BSPKIT_FIELD(quake1::bsp2_dface_t, numedges),
                    "surfedges"};
        case Format::quake2:
            return {"faces", sizeof(quake2::dface_t), BSPKIT_FIELD(quake2::dface_t, planenum), "planes",
                    BSPKIT_FIELD(quake2::dface_t, firstedge), BSPKIT_FIELD(quake2::dface_t, numedges), "surfedges"};
        case Format::quake3:
            return {"faces", sizeof(quake3::dsurface_t), BSPKIT_FIELD(quake3::dsurface_t, shaderNum), "textures",
                    BSPKIT_FIELD(quake3::dsurface_t, firstVert), BSPKIT_FIELD(quake3::dsurface_t, numVerts), "vertexes"};
        case Format::nightfire:
            return {"surfaces", sizeof(nightfire::Surface), BSPKIT_FIELD(nightfire::Surface, PlaneIndex), "planes",
                    BSPKIT_FIELD(nightfire::Surface, VerticesIndex), BSPKIT_FIELD(nightfire::Surface, VerticesCount),
                    "vertices"};
        default:
            throw std::logic_error("not a Quake-family format");
    }
}

#undef BSPKIT_FIELD

void put(Bytes& bytes, size_t at, const Field& f, int64_t value) {
    ASSERT_LE(at + f.offset + f.width, bytes.size());
    for (size_t i = 0; i < f.width; ++i) bytes[at + f.offset + i] = uint8_t(uint64_t(value) >> (8 * i));
}

}  // namespace

// Copies of every real map with two injected defects in its face records:
// an index out of range (a face on a plane / shader past the end) and a count
// too large (a face whose edges / vertices run past the end of their lump).
// check must report both as errors naming the lump, the record and the field.
TEST_P(QuakeCheckCorpus, InjectedDefectsInTheRealMapAreNamed) {
    const CorpusFile& file = corpus_file(GetParam());
    Bsp bsp = Bsp::parse(read_corpus(file), file.relpath);
    const FaceFields ff = face_fields(bsp.format());
    const size_t faces = *bsp.find_lump(ff.faces);
    Bytes records(bsp.decoded(faces).begin(), bsp.decoded(faces).end());
    const size_t n = records.size() / ff.record_size;
    ASSERT_GE(n, 2u) << file.relpath;
    const size_t bad_index = n / 2, bad_count = n / 2 + 1;
    const int64_t index_targets = int64_t(*bsp.record_count(*bsp.find_lump(ff.index_target)));
    const int64_t range_targets = int64_t(*bsp.record_count(*bsp.find_lump(ff.range_target)));
    put(records, bad_index * ff.record_size, ff.index, index_targets);
    put(records, bad_count * ff.record_size, ff.first, range_targets - 1);
    put(records, bad_count * ff.record_size, ff.count, 3);
    bsp.replace(faces, records);

    const CheckReport r = check(bsp);
    auto found = [&](size_t record, const std::string& field) {
        for (const Finding& x : r.findings)
            if (x.severity == Severity::error && x.lump == ff.faces && x.record == int64_t(record) && x.field == field)
                return true;
        return false;
    };
    EXPECT_TRUE(found(bad_index, ff.index.name)) << file.relpath << ": " << ff.index.name << " of record " << bad_index;
    EXPECT_TRUE(found(bad_count, ff.count.name)) << file.relpath << ": " << ff.count.name << " of record " << bad_count;
    EXPECT_FALSE(r.ok());
}

// Model 0's bounds turned inside out on one axis (mins.y above maxs.y) in
// every Quake 1 family map: an error on the models record. The engines link
// entities by these bounds and build the world's area nodes from model 0's;
// the decompiler refused such a map while check passed it.
TEST(QuakeCheckCorpusModels, InsideOutModelBoundsAreAnError) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        SCOPED_TRACE(f->relpath);
        Bsp bsp = Bsp::parse(read_corpus(*f), f->relpath);
        const size_t models = *bsp.find_lump("models");
        Bytes records(bsp.decoded(models).begin(), bsp.decoded(models).end());
        ASSERT_GE(records.size(), 24u);
        float mins_y, maxs_y;  // dmodel_t: float mins[3], maxs[3] first, in every member of the family
        std::memcpy(&mins_y, records.data() + 4, 4);
        std::memcpy(&maxs_y, records.data() + 16, 4);
        ASSERT_LT(mins_y, maxs_y);
        std::memcpy(records.data() + 4, &maxs_y, 4);
        std::memcpy(records.data() + 16, &mins_y, 4);
        EXPECT_TRUE(check(bsp).ok()) << "clean before";
        bsp.replace(models, records);
        const CheckReport r = check(bsp);
        bool found = false;
        for (const Finding& x : r.findings)
            found |= x.severity == Severity::error && x.lump == "models" && x.record == 0 && x.field == "mins";
        EXPECT_TRUE(found);
        ++maps;
    }
    EXPECT_GE(maps, 10u);
}

// A clip hull that loops (the world's hull 1 head clipnode made its own
// front child) in every Quake 1 family map with clipnodes: an error on that
// clipnode. The engines' hull walks never end on it and the collision world
// refuses it; check found no error ("0 errors" on a damaged pd_debris_wood1
// whose clipnode 0 named itself: DamageConsistencyCorpus, seed 23). The node
// trees had this test; the clip hulls had none.
TEST(QuakeCheckCorpusModels, ClipHullCycleIsAnError) {
    size_t maps = 0;
    for (const CorpusFile* f : quake1_family_files()) {
        SCOPED_TRACE(f->relpath);
        Bsp bsp = Bsp::parse(read_corpus(*f), f->relpath);
        const size_t models = *bsp.find_lump("models"), clipnodes = *bsp.find_lump("clipnodes");
        const ByteSpan model_bytes = bsp.decoded(models);
        ASSERT_GE(model_bytes.size(), 44u);
        int32_t head;  // dmodel_t: mins, maxs, origin (36 bytes), then headnode[4]; headnode[1] is hull 1's
        std::memcpy(&head, model_bytes.data() + 40, 4);
        const uint32_t size = bsp.record_size(clipnodes);  // planenum, then children as int16 (BSP 29) or int32 (BSP2)
        Bytes records(bsp.decoded(clipnodes).begin(), bsp.decoded(clipnodes).end());
        if (head < 0 || (uint64_t(head) + 1) * size > records.size()) continue;  // no clip hulls (a BRUSHLIST map)
        ASSERT_TRUE(size == 8 || size == 12) << size;
        EXPECT_TRUE(check(bsp).ok()) << "clean before";
        if (size == 8) {
            const int16_t self = int16_t(head);
            std::memcpy(records.data() + size_t(head) * size + 4, &self, 2);
        } else {
            std::memcpy(records.data() + size_t(head) * size + 4, &head, 4);
        }
        bsp.replace(clipnodes, records);
        const CheckReport r = check(bsp);
        bool found = false;
        for (const Finding& x : r.findings)
            found |= x.severity == Severity::error && x.lump == "clipnodes" && x.record == head && x.field == "children" &&
                     x.message.find("a cycle") != std::string::npos;
        EXPECT_TRUE(found);
        EXPECT_THROW((void)query::World::prepare(bsp), Error);
        ++maps;
    }
    EXPECT_GE(maps, 10u);
}
