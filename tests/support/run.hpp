// Running the bspkit command line from tests.
#pragma once

#include <string>
#include <vector>

namespace bspkit::test {

struct RunResult {
    int exit_code = -1;
    std::string out;  ///< stdout
    std::string err;  ///< stderr
};

/// Runs the built `bspkit` with `args` (no shell), capturing stdout and stderr.
RunResult run_cli(const std::vector<std::string>& args);

/// Runs `program` (searched in PATH when it has no '/') with `args`, no shell;
/// exit code 127 when it cannot be started.
RunResult run_program(const std::string& program, const std::vector<std::string>& args);

/// A fresh empty directory under the system temp dir, removed at exit.
std::string temp_dir(const std::string& tag);

}  // namespace bspkit::test
