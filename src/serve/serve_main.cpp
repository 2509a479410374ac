// bspkit-serve: the HTTP server behind `bspkit serve DIR|FILE [--port N]`.
//
// A program of its own because the HTTP library (Debian's cpp-httplib, built
// with OpenSSL, zlib and brotli) loads libssl / libcrypto: linked into `bspkit`
// it would be loaded at every start of every verb (issue 9: start-up). The
// `serve` verb checks its arguments and execs this program from beside itself.
//
// Serves on 127.0.0.1 only (local use):
//   /                    the viewer (index.html of the site directory)
//   /<file>              the viewer's static files (js, wasm, three.js)
//   /maps/index.json     {"root", "maps": [{"path", "url", "size", "companions": [url]}]} the maps
//                        offered, each with the files the viewer fetches with it (a GoldSrc map's WADs
//                        named by its "wad" / "_wad" key, a Quake 1 map's .lit; serving a directory only)
//   /maps/<path>         a map's or a companion's bytes, only for a path listed in index.json
// Prints the URL to open on stdout (with ?map=... when serving one file), a
// line per request on stderr with --verbose, and runs until interrupted.
#include "catalog.hpp"

#include <bspkit/error.hpp>

#include <CLI/CLI.hpp>
#include <httplib.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace bspkit::serve;

namespace {

fs::path exe_dir(const char* argv0) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) self = fs::absolute(argv0, ec);
    return self.parent_path();
}

/// Streams a file in 1 MB pieces (maps can be hundreds of MB).
void send_file(httplib::Response& res, const fs::path& file, std::string_view type) {
    std::error_code ec;
    const uint64_t size = fs::file_size(file, ec);
    auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
    if (ec || !*in) {
        res.status = 404;
        return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_content_provider(size_t(size), std::string(type),
                             [in](size_t offset, size_t length, httplib::DataSink& sink) {
                                 std::vector<char> buffer(std::min<size_t>(length, size_t(1) << 20));
                                 in->seekg(std::streamoff(offset));
                                 in->read(buffer.data(), std::streamsize(buffer.size()));
                                 const std::streamsize got = in->gcount();
                                 if (got <= 0) return false;
                                 return sink.write(buffer.data(), size_t(got));
                             });
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"bspkit-serve: serves the bspkit viewer and maps on 127.0.0.1 (run as `bspkit serve`)"};
    std::string root, site_override;
    int port = 8080;
    bool verbose = false;
    app.add_option("DIR|FILE", root, "A directory of maps (searched recursively for *.bsp) or one map file")->required();
    app.add_option("--port", port, "TCP port on 127.0.0.1 (0: any free port)")->check(CLI::Range(0, 65535));
    app.add_option("--site", site_override, "The viewer's directory (default: found beside the program)");
    app.add_flag("--verbose", verbose, "Print a line per request on stderr");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? 0 : 2;
    }

    MapCatalog catalog;
    try {
        catalog = MapCatalog::of(root);
    } catch (const bspkit::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    const auto site = find_site(exe_dir(argv[0]), site_override.empty() ? std::nullopt
                                                                        : std::optional<fs::path>(site_override));
    if (!site) {
        std::fprintf(stderr, "bspkit serve: the viewer is not built (no index.html %s): run `make viewer`%s\n",
                     site_override.empty() ? "beside the program or in $BSPKIT_VIEWER_DIR" : "in --site",
                     site_override.empty() ? " or give --site DIR" : "");
        return 1;
    }

    httplib::Server server;
    server.Get(R"(/maps/(.*))", [&catalog](const httplib::Request& req, httplib::Response& res) {
        const std::string path = req.matches[1];
        if (path == "index.json" || path.empty()) {
            res.set_header("Cache-Control", "no-cache");
            res.set_content(catalog.index_json(), "application/json");
            return;
        }
        const MapEntry* map = catalog.find(path);  // a map or a companion file
        if (!map) {
            res.status = 404;
            res.set_content("no such map\n", "text/plain");
            return;
        }
        send_file(res, map->file, "application/octet-stream");
    });
    server.Get(R"(/(.*))", [&site](const httplib::Request& req, httplib::Response& res) {
        const auto file = site_file(*site, std::string_view(req.matches[1].str()));
        if (!file) {
            res.status = 404;
            res.set_content("not found\n", "text/plain");
            return;
        }
        send_file(res, *file, content_type(*file));
    });
    if (verbose)
        server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
            std::fprintf(stderr, "bspkit serve: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
        });

    const int bound = port == 0 ? server.bind_to_any_port("127.0.0.1") : (server.bind_to_port("127.0.0.1", port) ? port : -1);
    if (bound <= 0) {
        std::fprintf(stderr, "bspkit serve: cannot listen on 127.0.0.1:%d (in use? try --port 0)\n", port);
        return 1;
    }
    std::string url = "http://127.0.0.1:" + std::to_string(bound) + "/";
    if (catalog.single_file && !catalog.maps.empty()) url += "?map=maps/" + url_encode_path(catalog.maps[0].url_path);
    std::printf("%s\n", url.c_str());
    std::fflush(stdout);
    std::fprintf(stderr, "bspkit serve: %zu map%s from %s, the viewer from %s; open %s (Ctrl-C stops)\n",
                 catalog.maps.size(), catalog.maps.size() == 1 ? "" : "s", catalog.root.string().c_str(),
                 site->string().c_str(), url.c_str());
    return server.listen_after_bind() ? 0 : 1;
}
