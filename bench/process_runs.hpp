// Whole processes timed beside a floor (a trivial program doing the same I/O),
// for process_bench and the size curve of bspkit-bigmap: posix_spawn with
// stdout and stderr to /dev/null, wait4 for the child's CPU time and peak RSS,
// floor and subject interleaved run by run so that load from other processes
// hits both alike, medians.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace bspkit::bench {

struct ProcessSample {
    double seconds = 0;
    double cpu_seconds = 0;  ///< user + system of the child
    double maxrss_mb = 0;
    int exit_code = 0;
};

/// Runs `args` (args[0] a path) and waits for it, its stdout and stderr to
/// /dev/null unless `keep_output`. A child that cannot start or dies by a
/// signal ends the calling program with a line naming `who` and the command.
ProcessSample run_process(const std::vector<std::string>& args, const char* who, bool keep_output = false);

/// "a,b,c" -> {"a", "b", "c"} (empty items dropped), for option values.
std::vector<std::string> split_list(const std::string& list);

double median(std::vector<double> v);

/// Medians of the subject and of its floor: wall and CPU milliseconds, and the subject's peak RSS.
struct ProcessPair {
    double subject_ms = 0, floor_ms = 0;
    double subject_cpu_ms = 0, floor_cpu_ms = 0;
    double rss_mb = 0;
};

/// Whether an exit code is what the command should give (otherwise the program ends, naming it).
using AcceptExit = std::function<bool(int exit_code, const std::vector<std::string>& args)>;

/// Floor and subject `runs` times each, interleaved, after one warm-up of each
/// (which also brings the file into the page cache).
ProcessPair compare_processes(const std::vector<std::string>& floor, const std::vector<std::string>& subject, int runs,
                              const char* who, const AcceptExit& accept);

}  // namespace bspkit::bench
