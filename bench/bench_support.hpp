// Shared helpers for the benchmarks: corpus paths and the plain-read floor.
#pragma once

#include <bspkit/bytes.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace bspkit::bench {

/// A corpus file by relative path ("q2_v38/q2_base1.bsp"); exits with a
/// message when it is missing (a benchmark never runs on nothing).
std::filesystem::path corpus(const std::string& relpath);

/// Seconds per plain read of `path` (fopen + fread into memory), the floor
/// every benchmark's ratio is measured against, timed in the same run.
double plain_read_seconds(const std::filesystem::path& path);

/// Wall-clock seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start);

/// Sets counters "ratio_to_read" (wall time per iteration / plain read time),
/// "read_ms" and bytes/second on `state`, given the wall seconds of the loop.
void report_ratio(benchmark::State& state, const std::filesystem::path& path, double floor_seconds,
                  double loop_seconds);

}  // namespace bspkit::bench
