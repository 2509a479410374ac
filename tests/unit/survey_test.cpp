// bspkit::survey on maps the project generates: the record of the compiled room map, rows with
// "error" (never an exception) for unreadable files, and find_maps' order.
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/survey.hpp>

#include "room_map.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace bspkit;

namespace {

fs::path temp_dir(const std::string& name) {
    const fs::path dir = fs::temp_directory_path() / ("bspkit_survey_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

}  // namespace

TEST(Survey, RoomMapRecord) {
    const fs::path dir = temp_dir("room");
    const Bytes bytes = samples::compile_room_map(samples::room_design());
    write_file_atomic(dir / "rooms.bsp", bytes);
    const survey::Record r = survey::survey_file(dir / "rooms.bsp");
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_EQ(r.format, "quake1");
    EXPECT_EQ(r.version, 29);
    EXPECT_EQ(r.size, bytes.size());
    EXPECT_EQ(r.errors, 0u);
    const Bsp bsp = Bsp::parse(Bytes(bytes), "rooms.bsp");
    const EntityLump ents = read_entities(bsp);
    EXPECT_EQ(r.entities, ents.entities.size());
    EXPECT_EQ(r.entity_classes.at("light"), 3u);
    EXPECT_EQ(r.entity_classes.at("func_door"), 1u);
    EXPECT_EQ(r.lump_records.at("faces"), bsp.record_count(*bsp.find_lump("faces")).value());
    EXPECT_EQ(r.textures.size(), 4u);
    ASSERT_TRUE(r.mins && r.maxs);
    for (int k = 0; k < 3; ++k) EXPECT_LT((*r.mins)[k], (*r.maxs)[k]);
    EXPECT_GT(r.triangles, 0u);

    const auto j = nlohmann::json::parse(survey::to_json_line(r));
    EXPECT_EQ(j["format"], "quake1");
    EXPECT_TRUE(j["error"].is_null());
    EXPECT_EQ(j["entity_classes"]["light"], 3);
    fs::remove_all(dir);
}

// Bounds are map data (floats): each is printed as its shortest text, which a JSON reader's
// double brings back to the same float (the one float pair whose shortest text it would not,
// +-7.038531e-26, as its exact value).
TEST(Survey, BoundsAreEachFloatsShortestText) {
    survey::Record r;
    r.file = "bounds.bsp";
    r.mins = std::array<float, 3>{-741.71f, 0.1f, 7.038531e-26f};
    r.maxs = std::array<float, 3>{3800.0f, -0.0f, 1e-40f};
    const std::string line = survey::to_json_line(r);
    EXPECT_NE(line.find("\"mins\":[-741.71,0.1,7.038530691851209e-26]"), std::string::npos) << line;
    EXPECT_NE(line.find("\"maxs\":[3800.0,-0.0,1e-40]"), std::string::npos) << line;
    const auto j = nlohmann::json::parse(line);
    for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(float(j["mins"][k].get<double>()), (*r.mins)[size_t(k)]) << k;
        EXPECT_EQ(float(j["maxs"][k].get<double>()), (*r.maxs)[size_t(k)]) << k;
    }
}

TEST(Survey, UnreadableFilesAreRowsWithAnError) {
    const fs::path dir = temp_dir("bad");
    { std::ofstream(dir / "junk.bsp") << "definitely not a map"; }
    fs::create_directories(dir / "sub.bsp");
    const fs::path truncated = dir / "sub.bsp" / "short.BSP";
    const Bytes room = samples::compile_room_map(samples::room_design());
    write_file_atomic(truncated, ByteSpan(room).first(40));
    { std::ofstream(dir / "notes.txt") << "x"; }

    const auto maps = survey::find_maps({dir});
    ASSERT_EQ(maps.size(), 2u);  // the directory named *.bsp is searched, not surveyed; notes.txt is not a map
    EXPECT_EQ(maps[0], dir / "junk.bsp");
    EXPECT_EQ(maps[1], truncated);
    for (const auto& p : maps) {
        const survey::Record r = survey::survey_file(p);
        EXPECT_FALSE(r.error.empty()) << p;
        EXPECT_NE(r.error.find(p.string()), std::string::npos) << r.error;
        EXPECT_FALSE(nlohmann::json::parse(survey::to_json_line(r))["error"].is_null());
    }
    const survey::Record missing = survey::survey_file(dir / "missing.bsp");
    EXPECT_FALSE(missing.error.empty());
    const survey::Record directory = survey::survey_file(dir / "sub.bsp");
    EXPECT_NE(directory.error.find("directory"), std::string::npos) << directory.error;
    EXPECT_THROW(survey::find_maps({dir / "missing"}), Error);
    fs::remove_all(dir);
}

// survey_files: the records of survey_file, in the order given, on any thread
// count (a huge one is cut down), with one progress call per map counting up.
TEST(Survey, ManyFilesOnThreadsKeepTheirOrder) {
    const fs::path dir = temp_dir("many");
    const Bytes room = samples::compile_room_map(samples::room_design());
    std::vector<fs::path> maps;
    for (int i = 0; i < 6; ++i) {
        maps.push_back(dir / ("m" + std::to_string(i) + ".bsp"));
        if (i == 3) std::ofstream(maps.back()) << "not a map";
        else write_file_atomic(maps.back(), i == 4 ? ByteSpan(room).first(100) : ByteSpan(room));
    }
    std::vector<std::string> want;
    for (const auto& p : maps) want.push_back(survey::to_json_line(survey::survey_file(p)));
    for (const unsigned threads : {1u, 3u, 1000000u}) {
        std::vector<size_t> counts;
        const auto records = survey::survey_files(maps, threads, [&](size_t k) { counts.push_back(k); });
        ASSERT_EQ(records.size(), maps.size());
        for (size_t i = 0; i < maps.size(); ++i) EXPECT_EQ(survey::to_json_line(records[i]), want[i]) << threads;
        EXPECT_EQ(counts, (std::vector<size_t>{1, 2, 3, 4, 5, 6})) << threads;
    }
    EXPECT_FALSE(survey::survey_files(maps, 2)[3].error.empty());
    EXPECT_TRUE(survey::survey_files({}, 0).empty());
    fs::remove_all(dir);
}
