#include "bench_support.hpp"

#include <bspkit/file_io.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace bspkit::bench {

std::filesystem::path corpus(const std::string& relpath) {
    const char* env = std::getenv("BSPKIT_CORPUS");
    const std::filesystem::path path = std::filesystem::path(env ? env : BSPKIT_CORPUS_DIR) / relpath;
    if (!std::filesystem::exists(path)) {
        std::fprintf(stderr, "benchmark input missing: %s\n", path.string().c_str());
        std::exit(1);
    }
    return path;
}

double plain_read_seconds(const std::filesystem::path& path) {
    // Best of several runs, as the timed loops are also warm-cache.
    double best = 1e30;
    for (int run = 0; run < 15; ++run) {
        const auto t0 = std::chrono::steady_clock::now();
        const Bytes data = read_file(path);
        benchmark::DoNotOptimize(data.data());
        const auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
    }
    return best;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void report_ratio(benchmark::State& state, const std::filesystem::path& path, double floor_seconds,
                  double loop_seconds) {
    const double size = double(std::filesystem::file_size(path));
    const double per_iteration = loop_seconds / double(std::max<int64_t>(1, int64_t(state.iterations())));
    state.SetBytesProcessed(int64_t(size) * int64_t(state.iterations()));
    state.counters["read_ms"] = floor_seconds * 1e3;
    state.counters["ratio_to_read"] = per_iteration / floor_seconds;
}

}  // namespace bspkit::bench
