// One map's survey record (issue 13): what a study of thousands of maps wants
// to know about each file, small enough for one JSON line per map.
//
//   const bspkit::survey::Record r = bspkit::survey::survey_file("map.bsp");   // never throws Error
//   std::string line = bspkit::survey::to_json_line(r);                        // one line, no '\n'
//
// Used by `bspkit survey DIR -o OUT.jsonl` (src/cli/cmd_survey.cpp) and by the
// Python module (bspkit.survey_one, and bspkit.survey on a Dask cluster), so
// the three give the same table. A file that cannot be opened or read is a
// record with `error` set (and what was learnt before the error), never a
// thrown exception: a survey of a whole archive must not stop at one bad map.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::survey {

/// Check findings with the same severity, lump and message, counted.
struct FindingGroup {
    std::string severity;  ///< "error", "warning", "info"
    std::string lump;
    std::string message;
    uint64_t count = 0;
};

struct Record {
    std::string file;                   ///< the path as given
    uint64_t size = 0;                  ///< bytes (0 when unreadable)
    std::string error;                  ///< the one-line error when the map could not be read; empty otherwise
    std::string format, variant;        ///< format id ("source"), variant ("l4d2", "2PSB", "")
    std::optional<int32_t> version;
    int32_t revision = 0;
    bool big_endian = false;
    /// Record counts per lump (fixed-size lumps), by lump name; bytes of variable lumps go in lump_bytes.
    std::map<std::string, uint64_t> lump_records, lump_bytes;
    uint64_t errors = 0, warnings = 0, infos = 0;  ///< check findings
    std::vector<FindingGroup> findings;            ///< in order of first appearance
    uint64_t entities = 0;
    std::map<std::string, uint64_t> entity_classes;  ///< classname -> count (raw bytes as UTF-8)
    std::vector<std::string> textures;               ///< material names, sorted, unique (UTF-8)
    uint64_t models = 0, surfaces = 0, triangles = 0;
    /// Bounds of the world model's vertices (absent when it has none).
    std::optional<std::array<float, 3>> mins, maxs;
};

/// Surveys one file (opens it, checks it, parses its entities, builds its
/// geometry without lightmaps or textures). Never throws bspkit::Error.
Record survey_file(const std::filesystem::path& path);

/// The record as one JSON object on one line (keys in a fixed order; no
/// trailing newline). Fields that do not apply are null or absent as documented
/// in README.md.
std::string to_json_line(const Record& record);

/// survey_file() of every map, on `threads` threads (0: one per core; a count
/// the system cannot start is cut to the threads it did), records in the
/// order of `maps`. `done` (may be empty) gets the number of maps finished so
/// far after each one, one call at a time, from whichever thread finished it.
std::vector<Record> survey_files(const std::vector<std::filesystem::path>& maps, unsigned threads,
                                 const std::function<void(size_t done)>& done = {});
/// Every *.bsp file (extension case-insensitive) under `roots` (a file is taken
/// as it is), sorted by path: the order of `bspkit survey`'s table.
std::vector<std::filesystem::path> find_maps(const std::vector<std::filesystem::path>& roots);

}  // namespace bspkit::survey
