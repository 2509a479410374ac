// Replays every input in tests/regressions/ (crashes found by fuzzing): each
// must give a bspkit::Error or open cleanly, under the sanitizers too.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/file_io.hpp>

#include <gtest/gtest.h>

#include <filesystem>

TEST(Regressions, FuzzFindingsStayFixed) {
    const std::filesystem::path dir = std::filesystem::path(BSPKIT_SOURCE_DIR) / "tests" / "regressions";
    ASSERT_TRUE(std::filesystem::is_directory(dir));
    size_t replayed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
        ++replayed;
        try {
            const bspkit::Bsp bsp = bspkit::Bsp::open(entry.path());
            for (size_t i = 0; i < bsp.lump_count(); ++i) {
                try {
                    (void)bsp.decoded(i);
                } catch (const bspkit::Error&) {
                }
            }
            (void)bspkit::check(bsp);
            (void)bsp.serialize();
        } catch (const bspkit::Error& e) {
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        }
    }
    RecordProperty("replayed", int(replayed));
}
