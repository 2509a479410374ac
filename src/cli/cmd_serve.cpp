// bspkit serve DIR|FILE [--port N] [--site DIR]: serves the browser viewer and
// the maps on 127.0.0.1. The HTTP server is the companion program bspkit-serve
// (src/serve/): it links cpp-httplib, whose Debian build loads libssl and
// libcrypto, which no other verb should pay for at start-up. This verb checks
// its arguments like every verb (--help, exit 2 on usage) and then replaces
// itself with that program.
#include "common.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace bspkit::cli {
namespace {
namespace fs = std::filesystem;

/// bspkit-serve beside this program (a build tree, bin/ of an install) or in
/// ../libexec/bspkit/ (an install that keeps helpers out of PATH).
std::optional<fs::path> find_server() {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    for (const fs::path& candidate : {self.parent_path() / "bspkit-serve",
                                      self.parent_path() / ".." / "libexec" / "bspkit" / "bspkit-serve"})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    return std::nullopt;
}

void add_serve(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "serve", "Serve the browser viewer and maps on http://127.0.0.1:PORT/ for local use (Ctrl-C stops).\n"
                 "DIR: every *.bsp under it (listed at /maps/index.json); FILE: that map, opened at once.\n"
                 "Prints the URL to open on stdout.");
    struct Args {
        std::string root, site;
        int port = 8080;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("DIR|FILE", a->root, "A directory of maps or one map file")->required();
    cmd->add_option("--port", a->port, "TCP port on 127.0.0.1 (default 8080; 0: any free port)")
        ->check(CLI::Range(0, 65535));
    cmd->add_option("--site", a->site, "The viewer's directory (default: build/viewer/site beside the build, "
                                       "or share/bspkit/viewer of an install; `make viewer` builds it)");
    cmd->footer("Exit status: 1 when DIR|FILE cannot be read, the viewer is not built or the port is taken; 2 usage.");
    cmd->callback([&action, a] {
        action = [a] {
            const auto server = find_server();
            if (!server) {
                fmt::print(stderr, "bspkit serve: the server program bspkit-serve is not installed beside bspkit\n");
                return kExitBadInput;
            }
            std::vector<std::string> args{server->string(), a->root, "--port", std::to_string(a->port)};
            if (!a->site.empty()) args.insert(args.end(), {"--site", a->site});
            if (verbose()) args.push_back("--verbose");
            std::vector<char*> argv;
            for (std::string& s : args) argv.push_back(s.data());
            argv.push_back(nullptr);
            std::fflush(stdout);
            ::execv(server->c_str(), argv.data());
            fmt::print(stderr, "bspkit serve: cannot start {}: {}\n", server->string(), std::strerror(errno));
            return kExitBadInput;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("serve", add_serve);

}  // namespace bspkit::cli
