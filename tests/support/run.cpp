#include "run.hpp"

#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace bspkit::test {
namespace {
std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

std::string temp_dir(const std::string& tag) {
    std::random_device rd;
    auto dir = std::filesystem::temp_directory_path() /
               ("bspkit_test_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(rd() % 100000));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    static std::vector<std::filesystem::path> made;
    static struct Cleanup {
        ~Cleanup() {
            for (auto& d : made) std::filesystem::remove_all(d);
        }
    } cleanup;
    made.push_back(dir);
    return dir.string();
}

RunResult run_cli(const std::vector<std::string>& args) { return run_program(BSPKIT_CLI_PATH, args); }

RunResult run_program(const std::string& program, const std::vector<std::string>& args) {
    static const std::string dir = temp_dir("cli");
    static int counter = 0;
    const std::string out_path = dir + "/out" + std::to_string(counter), err_path = dir + "/err" + std::to_string(counter);
    ++counter;
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int in = ::open("/dev/null", O_RDONLY);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::dup2(in, 0);
        std::vector<char*> argv;
        std::string exe = program;
        argv.push_back(exe.data());
        std::vector<std::string> copy = args;
        for (auto& a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        ::execvp(exe.c_str(), argv.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    return r;
}

}  // namespace bspkit::test
