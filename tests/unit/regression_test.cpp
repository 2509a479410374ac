// Replays every input in tests/regressions/ (crashes found by fuzzing)
// through every fuzz entry point (fuzz/entry_points.hpp: open and save,
// check, entities, props, pak, vis, geometry and export), so a finding of
// any target stays fixed, under the normal and the sanitizer builds. Each
// entry point may only report bspkit::Error, and that in one line.
#include "entry_points.hpp"

#include <bspkit/file_io.hpp>

#include "samples.hpp"

#include <gtest/gtest.h>

#include <filesystem>

TEST(Regressions, FuzzFindingsStayFixed) {
    const std::filesystem::path dir = std::filesystem::path(BSPKIT_SOURCE_DIR) / "tests" / "regressions";
    ASSERT_TRUE(std::filesystem::is_directory(dir));
    size_t replayed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
        ++replayed;
        const bspkit::Bytes bytes = bspkit::read_file(entry.path());
        for (const auto& point : bspkit::fuzz::kEntryPoints) {
            SCOPED_TRACE(entry.path().filename().string() + " through " + std::string(point.name));
            EXPECT_NO_THROW(point.run(bytes.data(), bytes.size()));
        }
        try {
            (void)bspkit::Bsp::parse(bytes, entry.path().string());
        } catch (const bspkit::Error& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
    }
    RecordProperty("replayed", int(replayed));
}

// The entry points themselves run on the generated samples, so the list the
// fuzz targets and this test share is exercised even while no regression
// input is checked in.
TEST(Regressions, EveryEntryPointRunsOnTheSamples) {
    for (const auto& sample : bspkit::samples::all())
        for (const auto& point : bspkit::fuzz::kEntryPoints) {
            SCOPED_TRACE(sample.name + " through " + std::string(point.name));
            EXPECT_NO_THROW(point.run(sample.bytes.data(), sample.bytes.size()));
        }
}
