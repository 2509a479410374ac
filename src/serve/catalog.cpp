#include "catalog.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/error.hpp>
#include <bspkit/survey.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>

namespace bspkit::serve {
namespace fs = std::filesystem;

MapCatalog MapCatalog::of(const fs::path& root) {
    MapCatalog catalog;
    catalog.root = root;
    std::error_code ec;
    catalog.single_file = !fs::is_directory(root, ec);
    if (catalog.single_file && !fs::is_regular_file(root, ec))
        throw Error({root.string(), "", -1}, "no such map file or directory");
    for (const fs::path& file : survey::find_maps({root})) {
        MapEntry entry;
        entry.file = file;
        entry.url_path = catalog.single_file ? file.filename().generic_string()
                                             : file.lexically_relative(root).generic_string();
        entry.size = fs::file_size(file, ec);
        if (ec || entry.url_path.empty() || entry.url_path.starts_with("..")) continue;
        catalog.maps.push_back(std::move(entry));
    }
    return catalog;
}

const MapEntry* MapCatalog::find(std::string_view path) const {
    const auto it = std::lower_bound(maps.begin(), maps.end(), path,
                                     [](const MapEntry& e, std::string_view p) { return e.url_path < p; });
    return it != maps.end() && it->url_path == path ? &*it : nullptr;
}

std::string MapCatalog::index_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const MapEntry& m : maps)
        list.push_back({{"path", m.url_path}, {"url", "maps/" + url_encode_path(m.url_path)}, {"size", m.size}});
    return nlohmann::json{{"root", root.string()}, {"maps", list}}.dump();
}

std::optional<fs::path> find_site(const fs::path& exe_dir, const std::optional<fs::path>& override) {
    std::vector<fs::path> candidates;
    if (override) {
        candidates.push_back(*override);
    } else {
        if (const char* env = std::getenv("BSPKIT_VIEWER_DIR"); env && *env) candidates.emplace_back(env);
        candidates.push_back(exe_dir / ".." / "viewer" / "site");
        candidates.push_back(exe_dir / ".." / "share" / "bspkit" / "viewer");
    }
    for (const fs::path& dir : candidates) {
        std::error_code ec;
        if (fs::is_regular_file(dir / "index.html", ec)) return fs::weakly_canonical(dir, ec);
    }
    return std::nullopt;
}

std::optional<fs::path> site_file(const fs::path& site, std::string_view path) {
    if (path.empty() || path.back() == '/') return site_file(site, std::string(path) + "index.html");
    // The HTTP library percent-decodes the path: a NUL ("%00") would cut the
    // name short at the file system ("index.html\0.png" opens index.html).
    if (path.find('\0') != std::string_view::npos) return std::nullopt;
    const fs::path relative = fs::path(std::string(path)).lexically_normal();
    if (relative.is_absolute() || relative.empty()) return std::nullopt;
    for (const fs::path& part : relative)
        if (part == ".." || part == ".") return std::nullopt;
    std::error_code ec;
    const fs::path file = fs::weakly_canonical(site / relative, ec);
    if (ec || !fs::is_regular_file(file, ec)) return std::nullopt;
    // Symlinks followed: the file must still be inside the site.
    const fs::path inside = file.lexically_relative(site);
    if (inside.empty() || *inside.begin() == "..") return std::nullopt;
    return file;
}

std::string_view content_type(const fs::path& file) {
    const std::string ext = ascii_lower(file.extension().string());
    if (ext == ".html") return "text/html; charset=utf-8";
    if (ext == ".js" || ext == ".mjs") return "text/javascript; charset=utf-8";
    if (ext == ".css") return "text/css; charset=utf-8";
    if (ext == ".json") return "application/json";
    if (ext == ".wasm") return "application/wasm";
    if (ext == ".png") return "image/png";
    if (ext == ".svg") return "image/svg+xml";
    if (ext == ".glb") return "model/gltf-binary";
    return "application/octet-stream";
}

std::string url_encode_path(std::string_view path) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : path) {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~' || c == '/') {
            out.push_back(char(c));
        } else {
            out.push_back('%');
            out.push_back(digits[c >> 4]);
            out.push_back(digits[c & 15]);
        }
    }
    return out;
}

}  // namespace bspkit::serve
