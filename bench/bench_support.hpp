// Shared helpers for the benchmarks: corpus paths and the plain-read floor.
#pragma once

#include <bspkit/bytes.hpp>

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

namespace bspkit::bench {

/// A corpus file by relative path ("q2_v38/q2_base1.bsp"); exits with a
/// message when it is missing (a benchmark never runs on nothing).
std::filesystem::path corpus(const std::string& relpath);

/// Seconds per plain read of `path` (fopen + fread into memory), the floor
/// every benchmark's ratio is measured against, timed in the same run.
double plain_read_seconds(const std::filesystem::path& path);

/// Sets counters "ratio_to_read" (time per iteration / plain read time) and
/// "MB/s" on `state`, given the elapsed seconds of the timed loop.
void report_ratio(benchmark::State& state, const std::filesystem::path& path, double floor_seconds);

}  // namespace bspkit::bench
