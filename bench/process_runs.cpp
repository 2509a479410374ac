#include "process_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace bspkit::bench {
namespace {

double to_seconds(const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; }

std::string command_line(const std::vector<std::string>& args) {
    std::string line;
    for (const std::string& a : args) line += (line.empty() ? "" : " ") + a;
    return line;
}

}  // namespace

ProcessSample run_process(const std::vector<std::string>& args, const char* who, bool keep_output) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!keep_output) {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    }
    const auto t0 = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
        std::fprintf(stderr, "%s: cannot run %s\n", who, argv[0]);
        std::exit(1);
    }
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    const auto t1 = std::chrono::steady_clock::now();
    posix_spawn_file_actions_destroy(&actions);
    if (!WIFEXITED(status)) {
        std::fprintf(stderr, "%s: died (status %d): %s\n", who, status, command_line(args).c_str());
        std::exit(1);
    }
    return {std::chrono::duration<double>(t1 - t0).count(), to_seconds(usage.ru_utime) + to_seconds(usage.ru_stime),
            double(usage.ru_maxrss) / 1024.0, WEXITSTATUS(status)};
}

std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> out;
    for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        if (comma > at) out.push_back(list.substr(at, comma - at));
        at = comma + 1;
    }
    return out;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

ProcessPair compare_processes(const std::vector<std::string>& floor, const std::vector<std::string>& subject, int runs,
                              const char* who, const AcceptExit& accept) {
    const auto checked = [&](const std::vector<std::string>& args) {
        const ProcessSample s = run_process(args, who);
        if (!accept(s.exit_code, args)) {
            std::fprintf(stderr, "%s: exit %d: %s\n", who, s.exit_code, command_line(args).c_str());
            std::exit(1);
        }
        return s;
    };
    checked(floor);
    checked(subject);
    std::vector<double> f, s, fc, sc;
    double rss = 0;
    for (int i = 0; i < runs; ++i) {
        const ProcessSample y = checked(floor);
        f.push_back(y.seconds);
        fc.push_back(y.cpu_seconds);
        const ProcessSample x = checked(subject);
        s.push_back(x.seconds);
        sc.push_back(x.cpu_seconds);
        rss = std::max(rss, x.maxrss_mb);
    }
    return {median(s) * 1e3, median(f) * 1e3, median(sc) * 1e3, median(fc) * 1e3, rss};
}

}  // namespace bspkit::bench
