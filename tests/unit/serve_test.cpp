// bspkit serve: a real server process on 127.0.0.1 (port 0 = any free port),
// asked over HTTP with cpp-httplib's client. The maps are the project's own
// samples in a temporary directory; the site is a stand-in index.html (the
// viewer's own pages are tested by the browser test).
#include "catalog.hpp"
#include "run.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <samples.hpp>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace bspkit;
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

/// `bspkit serve ARGS --port 0` running in the background; its first stdout line is the URL.
class Server {
public:
    explicit Server(std::vector<std::string> args) {
        int out[2];
        if (::pipe(out) != 0) throw std::runtime_error("pipe");
        args.insert(args.begin(), {BSPKIT_CLI_PATH, "serve"});
        args.insert(args.end(), {"--port", "0"});
        pid_ = ::fork();
        if (pid_ == 0) {
            ::dup2(out[1], 1);
            ::close(out[0]);
            ::close(out[1]);
            std::vector<char*> argv;
            for (auto& s : args) argv.push_back(s.data());
            argv.push_back(nullptr);
            ::execv(argv[0], argv.data());
            ::_exit(127);
        }
        ::close(out[1]);
        // Read the URL line, 60 s at most (a server that never prints is a failure, not a hang).
        pollfd p{out[0], POLLIN, 0};
        char c;
        while (::poll(&p, 1, 60000) == 1 && ::read(out[0], &c, 1) == 1 && c != '\n') url_.push_back(c);
        ::close(out[0]);
    }
    ~Server() {
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            ::waitpid(pid_, nullptr, 0);
        }
    }
    const std::string& url() const { return url_; }
    int port() const {
        const size_t colon = url_.rfind(':'), slash = url_.find('/', colon);
        return colon == std::string::npos ? -1 : std::stoi(url_.substr(colon + 1, slash - colon - 1));
    }

private:
    pid_t pid_ = -1;
    std::string url_;
};

struct ServeFixture : ::testing::Test {
    void SetUp() override {
        root = fs::path(test::temp_dir("serve"));
        maps = root / "maps";
        site = root / "site";
        for (const auto& s : samples::all()) {
            const fs::path dir = maps / (s.format + (s.version ? std::to_string(*s.version) : std::string()));
            fs::create_directories(dir);
            write_file_atomic(dir / s.name, s.bytes);
        }
        write_text(maps / "notes.txt", "not a map\n");
        write_text(root / "secret.bsp", "outside the served directory\n");
        write_text(site / "index.html", "<!doctype html><title>viewer stand-in</title>\n");
        write_text(site / "js" / "main.js", "export const x = 1;\n");
        fs::create_symlink(root / "secret.bsp", site / "escape.html");
    }
    fs::path root, maps, site;
};

std::string body_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_F(ServeFixture, ServesTheSiteAndEveryListedMapByteForByte) {
    Server server({maps.string(), "--site", site.string()});
    ASSERT_EQ(server.url().rfind("http://127.0.0.1:", 0), 0u) << "no URL printed: '" << server.url() << "'";
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(30, 0);

    auto index = client.Get("/");
    ASSERT_TRUE(index);
    EXPECT_EQ(index->status, 200);
    EXPECT_EQ(index->body, body_of(site / "index.html"));
    EXPECT_NE(index->get_header_value("Content-Type").find("text/html"), std::string::npos);
    auto js = client.Get("/js/main.js");
    ASSERT_TRUE(js);
    EXPECT_EQ(js->status, 200);
    EXPECT_NE(js->get_header_value("Content-Type").find("javascript"), std::string::npos);

    auto list = client.Get("/maps/index.json");
    ASSERT_TRUE(list);
    ASSERT_EQ(list->status, 200);
    const auto j = nlohmann::json::parse(list->body);
    const auto catalog = serve::MapCatalog::of(maps);
    ASSERT_EQ(j["maps"].size(), samples::all().size());  // every sample, and not notes.txt
    ASSERT_EQ(j["maps"].size(), catalog.maps.size());
    for (size_t i = 0; i < catalog.maps.size(); ++i) {
        const auto& entry = j["maps"][i];
        EXPECT_EQ(entry["path"], catalog.maps[i].url_path);
        auto map = client.Get(("/" + entry["url"].get<std::string>()).c_str());
        ASSERT_TRUE(map);
        EXPECT_EQ(map->status, 200);
        EXPECT_EQ(map->body, body_of(catalog.maps[i].file)) << entry["path"];
        EXPECT_EQ(uint64_t(map->body.size()), entry["size"].get<uint64_t>());
    }
}

TEST_F(ServeFixture, NothingOutsideTheMapsAndTheSiteIsServed) {
    Server server({maps.string(), "--site", site.string()});
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(30, 0);
    for (const char* path : {"/maps/../secret.bsp", "/maps/%2e%2e/secret.bsp", "/maps/notes.txt", "/../secret.bsp",
                             "/%2e%2e/secret.bsp", "/escape.html", "/maps/%2Fetc%2Fpasswd", "/maps//etc/passwd",
                             "/..%2fsecret.bsp", "/no-such-file.js", "/index.html%00.png", "/maps/%00"}) {
        auto r = client.Get(path);
        ASSERT_TRUE(r) << path;
        EXPECT_TRUE(r->status == 404 || r->status == 400) << path << ": " << r->status;
        EXPECT_EQ(r->body.find("outside the served directory"), std::string::npos) << path;
    }
}

TEST_F(ServeFixture, OneFileIsOfferedAndItsUrlOpensIt) {
    const auto catalog = serve::MapCatalog::of(maps);
    ASSERT_FALSE(catalog.maps.empty());
    const fs::path one = catalog.maps.front().file;
    Server server({one.string(), "--site", site.string()});
    EXPECT_NE(server.url().find("/?map=maps/" + one.filename().string()), std::string::npos) << server.url();
    httplib::Client client("127.0.0.1", server.port());
    auto list = client.Get("/maps/index.json");
    ASSERT_TRUE(list);
    EXPECT_EQ(nlohmann::json::parse(list->body)["maps"].size(), 1u);
    auto map = client.Get(("/maps/" + one.filename().string()).c_str());
    ASSERT_TRUE(map);
    EXPECT_EQ(map->body, body_of(one));
}

TEST_F(ServeFixture, BadArgumentsGiveOneLineAndTheRightExitCode) {
    const auto missing = test::run_cli({"serve", (root / "nope").string(), "--port", "0", "--site", site.string()});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_NE(missing.err.find("nope"), std::string::npos) << missing.err;
    EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;

    const auto no_site = test::run_cli({"serve", maps.string(), "--port", "0", "--site", (root / "empty").string()});
    EXPECT_EQ(no_site.exit_code, 1);
    EXPECT_NE(no_site.err.find("make viewer"), std::string::npos) << no_site.err;

    EXPECT_EQ(test::run_cli({"serve"}).exit_code, 2);
    EXPECT_EQ(test::run_cli({"serve", maps.string(), "--port", "70000"}).exit_code, 2);
    const auto help = test::run_cli({"serve", "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--port"), std::string::npos);
}

TEST(ServeCatalog, UrlPathsAreEncoded) {
    EXPECT_EQ(serve::url_encode_path("q1/e1m1 final#2.bsp"), "q1/e1m1%20final%232.bsp");
}

// A file name that is not UTF-8 (a Latin-1 archive) is listed, and the list is
// JSON: its path as text in bytes_to_utf8's mapping, its URL with the bytes.
TEST_F(ServeFixture, FileNamesThatAreNotUtf8AreListed) {
    const std::string latin1 = "caf\xe9.bsp";
    write_file_atomic(maps / latin1, samples::all().front().bytes);
    const auto catalog = serve::MapCatalog::of(maps);
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(catalog.index_json()));
    ASSERT_EQ(j["maps"].size(), samples::all().size() + 1);
    size_t found = 0;
    for (const auto& entry : j["maps"])
        if (entry["url"] == "maps/caf%E9.bsp") {
            ++found;
            EXPECT_EQ(entry["path"], bytes_to_utf8(latin1));
        }
    EXPECT_EQ(found, 1u);
}

TEST(ServeCatalog, WadKeyNamesAreFileNames) {
    EXPECT_EQ(serve::wad_key_names("\\sierra\\half-life\\valve\\HalfLife.wad;/quiver/valve/decals.wad;; xeno.wad ;"
                                   "c:\\x\\halflife.wad"),
              (std::vector<std::string>{"halflife.wad", "decals.wad", "xeno.wad"}));
    EXPECT_TRUE(serve::wad_key_names("").empty());
}

// A GoldSrc map's WADs (its "wad" key) and a Quake 1 map's .lit are listed with
// it and served; other files are not, and one file named serves nothing beside it.
TEST_F(ServeFixture, MapsComeWithTheFilesThatHoldTheirTextures) {
    const auto sample = [](std::string_view name) {
        for (const auto& s : samples::all())
            if (s.name == name) return s;
        throw std::runtime_error("no sample " + std::string(name));
    };
    Bsp goldsrc = Bsp::parse(sample("sample_goldsrc.bsp").bytes, "g.bsp");
    const std::string entities = "{\n\"classname\" \"worldspawn\"\n\"wad\" \"\\sierra\\half-life\\valve\\halflife.wad;"
                                 "\\x\\DECALS.wad;\\x\\absent.wad\"\n\"_wad\" \"extra.wad;decals.wad\"\n}\n";
    goldsrc.replace(0, Bytes(entities.begin(), entities.end()));
    fs::create_directories(maps / "cstrike" / "maps");
    fs::create_directories(maps / "q1");
    write_file_atomic(maps / "cstrike" / "maps" / "de_x.bsp", goldsrc.serialize());
    write_text(maps / "cstrike" / "halflife.wad", "WAD3 cstrike's");
    write_text(maps / "valve" / "halflife.wad", "WAD3 valve's");  // farther from the map: not chosen
    write_text(maps / "cstrike" / "maps" / "decals.WAD", "WAD3 decals");
    write_text(maps / "cstrike" / "readme.txt", "not served");
    write_text(maps / "extra.wad", "WAD3 named by \"_wad\"");
    write_file_atomic(maps / "q1" / "e1m1.bsp", sample("sample_quake1.bsp").bytes);
    write_text(maps / "q1" / "E1M1.LIT", "QLIT");

    const auto catalog = serve::MapCatalog::of(maps);
    const auto entry = [&](std::string_view path) -> const serve::MapEntry& {
        for (const auto& m : catalog.maps)
            if (m.url_path == path) return m;
        throw std::runtime_error("not listed: " + std::string(path));
    };
    EXPECT_EQ(entry("cstrike/maps/de_x.bsp").companions,
              (std::vector<std::string>{"cstrike/halflife.wad", "cstrike/maps/decals.WAD", "extra.wad"}));
    EXPECT_EQ(entry("q1/e1m1.bsp").companions, (std::vector<std::string>{"q1/E1M1.LIT"}));
    for (const auto& m : catalog.maps) {
        if (m.url_path != "cstrike/maps/de_x.bsp" && m.url_path != "q1/e1m1.bsp") {
            EXPECT_TRUE(m.companions.empty()) << m.url_path;
        }
    }

    Server server({maps.string(), "--site", site.string()});
    httplib::Client client("127.0.0.1", server.port());
    client.set_read_timeout(30, 0);
    auto list = client.Get("/maps/index.json");
    ASSERT_TRUE(list);
    bool seen = false;
    const auto listed = nlohmann::json::parse(list->body);  // (a temporary's member would die before the loop)
    for (const auto& m : listed["maps"])
        if (m["path"] == "cstrike/maps/de_x.bsp") {
            seen = true;
            EXPECT_EQ(m["companions"],
                      nlohmann::json::array({"maps/cstrike/halflife.wad", "maps/cstrike/maps/decals.WAD", "maps/extra.wad"}));
        }
    EXPECT_TRUE(seen) << list->body;
    for (const auto& [path, body] : std::vector<std::pair<std::string, std::string>>{
             {"/maps/cstrike/halflife.wad", "WAD3 cstrike's"}, {"/maps/valve/halflife.wad", "WAD3 valve's"},
             {"/maps/q1/E1M1.LIT", "QLIT"}}) {
        auto r = client.Get(path.c_str());
        ASSERT_TRUE(r) << path;
        EXPECT_EQ(r->status, 200) << path;
        EXPECT_EQ(r->body, body) << path;
    }
    auto txt = client.Get("/maps/cstrike/readme.txt");
    ASSERT_TRUE(txt);
    EXPECT_EQ(txt->status, 404);

    // One file named: nothing beside it is listed or served.
    Server one({(maps / "q1" / "e1m1.bsp").string(), "--site", site.string()});
    httplib::Client one_client("127.0.0.1", one.port());
    auto one_list = one_client.Get("/maps/index.json");
    ASSERT_TRUE(one_list);
    EXPECT_TRUE(nlohmann::json::parse(one_list->body)["maps"][0]["companions"].empty());
    auto lit = one_client.Get("/maps/E1M1.LIT");
    ASSERT_TRUE(lit);
    EXPECT_EQ(lit->status, 404);
}
