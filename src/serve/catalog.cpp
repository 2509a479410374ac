#include "catalog.hpp"

#include <bspkit/ascii.hpp>
#include <bspkit/bsp.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>
#include <bspkit/format.hpp>
#include <bspkit/survey.hpp>
#include <bspkit/textures.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

namespace bspkit::serve {
namespace fs = std::filesystem;

namespace {

/// The catalogue entry serving `file` at `url_path`; none when that path is
/// empty or leaves the root, or the file's size cannot be read.
std::optional<MapEntry> entry_for(const fs::path& file, std::string url_path) {
    std::error_code ec;
    MapEntry entry;
    entry.file = file;
    entry.url_path = std::move(url_path);
    entry.size = fs::file_size(file, ec);
    if (ec || entry.url_path.empty() || entry.url_path.starts_with("..")) return std::nullopt;
    return entry;
}

/// *.wad and *.lit files under `root`, as catalogue entries sorted by path.
std::vector<MapEntry> companion_files(const fs::path& root) {
    std::vector<MapEntry> out;
    std::error_code ec;
    fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
        std::error_code fec;
        const std::string ext = ascii_lower(it->path().extension().string());
        if ((ext != ".wad" && ext != ".lit") || !it->is_regular_file(fec)) continue;
        if (auto entry = entry_for(it->path(), it->path().lexically_relative(root).generic_string()))
            out.push_back(std::move(*entry));
    }
    std::sort(out.begin(), out.end(), [](const MapEntry& a, const MapEntry& b) { return a.url_path < b.url_path; });
    return out;
}

std::string folder_of(std::string_view url_path) {
    const size_t slash = url_path.rfind('/');
    return slash == std::string_view::npos ? std::string() : std::string(url_path.substr(0, slash + 1));
}

/// The companion files by their lower-case file name ("halflife.wad") and by
/// their lower-case path, looked up once per map.
struct CompanionIndex {
    std::multimap<std::string, const MapEntry*> by_name;
    std::map<std::string, const MapEntry*> by_path;

    explicit CompanionIndex(const std::vector<MapEntry>& files) {
        for (const MapEntry& f : files) {
            by_name.emplace(ascii_lower(fs::path(f.url_path).filename().generic_string()), &f);
            by_path.emplace(ascii_lower(f.url_path), &f);
        }
    }
};

/// What `map` keeps outside it among `files`: a GoldSrc map's WADs by its
/// "wad" and "_wad" keys, the ones textures::resolve() reads (of several files
/// of one name, the one whose folder shares the most with the map's, then the
/// shortest path); a Quake 1 / BSP2 map's .lit of the same path. A map that
/// does not open lists none.
std::vector<std::string> companions_of(const MapEntry& map, const CompanionIndex& files) {
    std::vector<std::string> out;
    try {
        const Bsp bsp = Bsp::open(map.file);
        if (bsp.format() == Format::quake1 || bsp.format() == Format::bsp2) {
            const auto lit = files.by_path.find(ascii_lower(fs::path(map.url_path).replace_extension(".lit").generic_string()));
            if (lit != files.by_path.end()) out.push_back(lit->second->url_path);
            return out;
        }
        if (bsp.format() != Format::goldsrc) return out;
        const EntityLump entities = read_entities(bsp);
        const Entity* world = entities.entities.empty() ? nullptr : &entities.entities.front();
        if (!world) return out;
        std::vector<std::string> names;  // every key resolve() reads, in order, each name once
        for (const auto& [key, value] : world->pairs)
            if (textures::is_wad_key(key))
                for (std::string& name : wad_key_names(value))
                    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
        const std::string folder = folder_of(map.url_path);
        for (const std::string& name : names) {
            const MapEntry* best = nullptr;
            size_t best_shared = 0;
            const auto [first, last] = files.by_name.equal_range(name);
            for (auto it = first; it != last; ++it) {
                const MapEntry& f = *it->second;
                const std::string other = folder_of(f.url_path);
                // Whole folders in common ("a/b/" and "a/bc/" share "a/").
                size_t same = 0;
                while (same < other.size() && same < folder.size() && other[same] == folder[same]) ++same;
                const size_t slash = other.rfind('/', same == 0 ? 0 : same - 1);
                const size_t shared = same == 0 || slash == std::string::npos ? 0 : slash + 1;
                if (!best || shared > best_shared || (shared == best_shared && f.url_path.size() < best->url_path.size())) {
                    best = &f;
                    best_shared = shared;
                }
            }
            if (best) out.push_back(best->url_path);
        }
    } catch (const Error&) {
        // A damaged map is still listed: the viewer shows its error.
    }
    return out;
}

}  // namespace

std::vector<std::string> wad_key_names(std::string_view key) {
    std::vector<std::string> out;
    for (const textures::WadKeyEntry& entry : textures::wad_key_entries(key)) {
        std::string_view file = entry.file;
        while (!file.empty() && file.front() == ' ') file.remove_prefix(1);
        while (!file.empty() && file.back() == ' ') file.remove_suffix(1);
        std::string name = ascii_lower(file);
        if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
    }
    return out;
}

MapCatalog MapCatalog::of(const fs::path& root) {
    MapCatalog catalog;
    catalog.root = root;
    std::error_code ec;
    catalog.single_file = !fs::is_directory(root, ec);
    if (catalog.single_file && !fs::is_regular_file(root, ec))
        throw Error({root.string(), "", -1}, "no such map file or directory");
    for (const fs::path& file : survey::find_maps({root}))
        if (auto entry = entry_for(file, catalog.single_file ? file.filename().generic_string()
                                                              : file.lexically_relative(root).generic_string()))
            catalog.maps.push_back(std::move(*entry));
    // One file named is all that is served: its folder's other files are not.
    if (!catalog.single_file) {
        catalog.companions = companion_files(root);
        const CompanionIndex index(catalog.companions);
        for (MapEntry& map : catalog.maps) map.companions = companions_of(map, index);
    }
    return catalog;
}

const MapEntry* MapCatalog::find(std::string_view path) const {
    for (const std::vector<MapEntry>* list : {&maps, &companions}) {
        const auto it = std::lower_bound(list->begin(), list->end(), path,
                                         [](const MapEntry& e, std::string_view p) { return e.url_path < p; });
        if (it != list->end() && it->url_path == path) return &*it;
    }
    return nullptr;
}

std::string MapCatalog::index_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const MapEntry& m : maps) {
        nlohmann::json companion_urls = nlohmann::json::array();
        for (const std::string& c : m.companions) companion_urls.push_back("maps/" + url_encode_path(c));
        // Names shown as text: a file name that is not UTF-8 (Latin-1 archives) must not
        // make dump() throw and take the whole list with it; "url" holds its bytes.
        list.push_back({{"path", bytes_to_utf8(m.url_path)},
                        {"url", "maps/" + url_encode_path(m.url_path)},
                        {"size", m.size},
                        {"companions", companion_urls}});
    }
    return nlohmann::json{{"root", bytes_to_utf8(root.string())}, {"maps", list}}.dump();
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
