// Runs the Khronos glTF-Validator (tools/gltf-validator/validate.mjs, npm
// package installed by `make deps`) on a file and returns its report. A
// missing node or validator fails the test that asks: it never passes by
// skipping.
#pragma once

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

namespace bspkit::test {

struct GltfValidation {
    bool ran = false;         ///< the validator ran and printed a report
    int exit_code = -1;
    nlohmann::json report;    ///< the validator's report (issues.numErrors, issues.messages, info...)
    std::string errors;       ///< stderr, or why it did not run
    int num_errors() const { return ran ? report["issues"]["numErrors"].get<int>() : -1; }
    /// The messages of severity 0 (errors), one per line, for failure output.
    std::string error_messages() const {
        std::string out;
        if (!ran) return errors;
        for (const auto& m : report["issues"]["messages"])
            if (m["severity"].get<int>() == 0) out += m.dump() + "\n";
        return out;
    }
};

inline std::filesystem::path gltf_validator_script() {
    return std::filesystem::path(BSPKIT_SOURCE_DIR) / "tools" / "gltf-validator" / "validate.mjs";
}

/// Validates `file` (.glb or .gltf; external resources beside it).
inline GltfValidation validate_gltf(const std::filesystem::path& file) {
    GltfValidation v;
    const auto module = std::filesystem::path(BSPKIT_SOURCE_DIR) / "tools" / "gltf-validator" / "node_modules" /
                        "gltf-validator" / "package.json";
    if (!std::filesystem::exists(module)) {
        v.errors = "the glTF validator is not installed: run `make deps` (npm ci in tools/gltf-validator)";
        return v;
    }
    const std::string out_path = file.string() + ".report.json", err_path = file.string() + ".report.err";
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int in = ::open("/dev/null", O_RDONLY);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::dup2(in, 0);
        const std::string script = gltf_validator_script().string(), target = file.string();
        ::execlp("node", "node", script.c_str(), target.c_str(), "--max-issues", "200", "--quiet",
                 static_cast<char*>(nullptr));
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    v.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    const auto slurp = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    const std::string out = slurp(out_path);
    v.errors = slurp(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    if (v.exit_code == 127) {
        v.errors = "cannot run node (is Node.js installed? `make deps`)";
        return v;
    }
    try {
        v.report = nlohmann::json::parse(out);
        v.ran = v.report.contains("issues");
    } catch (const std::exception& e) {
        v.errors += std::string("\nunreadable validator output: ") + e.what() + "\n" + out.substr(0, 2000);
    }
    return v;
}

}  // namespace bspkit::test
