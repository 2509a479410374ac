// What `bspkit serve` offers: the maps under a directory (or one map file) and
// the viewer's static site. Pure functions over the file system, no sockets,
// so they are tested without a server.
//
// Path safety: a map is served only when its URL path is exactly one of the
// catalogue's entries (built by listing the directory once at start), so no
// request path ("..", "%2e%2e", absolute paths, symlinks added later) can name
// a file the listing did not. Site files are looked up under the site
// directory after rejecting any ".." component, and must resolve (symlinks
// followed) inside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::serve {

struct MapEntry {
    std::string url_path;             ///< relative to /maps/: "q1_v29/e1m1.bsp" ('/' separators, not escaped)
    std::filesystem::path file;       ///< the file on disk
    uint64_t size = 0;
    /// Files the viewer fetches with the map (url_paths of MapCatalog::companions):
    /// a GoldSrc map's WADs named by its worldspawn "wad" (or "_wad") key, a Quake 1 /
    /// BSP2 map's FILE.lit beside it.
    std::vector<std::string> companions;
};

/// The maps under `root` (a directory, searched recursively for *.bsp, or one
/// map file), sorted by path, and in a directory the files maps keep what
/// they hold outside them in (*.wad, *.lit). Throws bspkit::Error when `root`
/// cannot be read.
struct MapCatalog {
    std::filesystem::path root;
    bool single_file = false;
    std::vector<MapEntry> maps;
    std::vector<MapEntry> companions;  ///< *.wad and *.lit under a directory root, sorted by path

    static MapCatalog of(const std::filesystem::path& root);
    /// The map or companion whose url_path equals `path` (already percent-decoded), or null.
    const MapEntry* find(std::string_view path) const;
    /// {"root": ..., "maps": [{"path", "url", "size", "companions": [url]}, ...]} as JSON text.
    std::string index_json() const;
};

/// The WAD file names a GoldSrc worldspawn "wad" key's value lists ("\\half-life\\valve\\halflife.wad;...",
/// split by textures::wad_key_entries as the texture search splits it), each its file name without
/// surrounding spaces, lower case, in key order, without repeats.
std::vector<std::string> wad_key_names(std::string_view key);

/// The viewer's site directory: `override` when given, else the first of
/// $BSPKIT_VIEWER_DIR, <exe dir>/../viewer/site (a build tree: build/test/bspkit
/// next to build/viewer/site), <exe dir>/../share/bspkit/viewer (installed)
/// that holds an index.html; nullopt when none does.
std::optional<std::filesystem::path> find_site(const std::filesystem::path& exe_dir,
                                               const std::optional<std::filesystem::path>& override);

/// The file under `site` that the URL path `path` (percent-decoded by the HTTP
/// library, leading '/' removed; "" means index.html) names, or nullopt (a ".."
/// component, a NUL, a path that leaves the site through a symlink, not a
/// regular file).
std::optional<std::filesystem::path> site_file(const std::filesystem::path& site, std::string_view path);

/// Content type by extension (.html, .js, .mjs, .css, .wasm, .json, .png, .bsp ...).
std::string_view content_type(const std::filesystem::path& file);

/// Percent-encodes a path for a URL (unreserved bytes and '/' kept).
std::string url_encode_path(std::string_view path);

}  // namespace bspkit::serve
