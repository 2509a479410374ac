// The texture search path: finds, per format, the files the game would load
// for each material the map does not embed (see include/bspkit/textures.hpp).
#include <bspkit/ascii.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake1_textures.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/zip.hpp>

#include "../core/pixels.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <type_traits>

namespace bspkit::textures {

namespace {

namespace fs = std::filesystem;

/// RGBA bytes decoded at most in one resolve() (a hostile set of archives
/// must not make the process allocate without bound).
constexpr uint64_t kMaxDecodedBytes = uint64_t(1) << 30;

std::string slashes(std::string s) {
    std::replace(s.begin(), s.end(), '\\', '/');
    return s;
}

/// Loose files and archives below the search folders, with case-insensitive
/// lookups (map material names rarely match the case of the files on disk).
class Files {
public:
    explicit Files(std::vector<Diagnostic>& diagnostics) : diagnostics_(diagnostics) {}

    /// `dir/relative`, matched one component at a time ignoring case.
    std::optional<fs::path> loose(const fs::path& dir, std::string_view relative) {
        fs::path at = dir;
        std::string rel = slashes(std::string(relative));
        size_t start = 0;
        while (start < rel.size()) {
            size_t slash = rel.find('/', start);
            if (slash == std::string::npos) slash = rel.size();
            const std::string part = rel.substr(start, slash - start);
            start = slash + 1;
            if (part.empty() || part == ".") continue;
            if (part == "..") return std::nullopt;  // never above the search folder
            const auto& listing = list(at);
            const auto it = listing.find(ascii_lower(part));
            if (it == listing.end()) return std::nullopt;
            at /= it->second;
        }
        std::error_code ec;
        if (!fs::is_regular_file(at, ec)) return std::nullopt;
        return at;
    }

    /// The sub-folder `name` of `dir`, matched ignoring case.
    std::optional<fs::path> folder(const fs::path& dir, const std::string& name) {
        const auto& listing = list(dir);
        const auto it = listing.find(ascii_lower(name));
        std::error_code ec;
        if (it == listing.end() || !fs::is_directory(dir / it->second, ec)) return std::nullopt;
        return dir / it->second;
    }

    /// Files of `dir` whose lower-case name ends with `suffix`, sorted by name.
    std::vector<fs::path> with_suffix(const fs::path& dir, std::string_view suffix) {
        std::vector<fs::path> out;
        for (const auto& [key, name] : list(dir))
            if (key.size() >= suffix.size() && key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
                std::error_code ec;
                if (fs::is_regular_file(dir / name, ec)) out.push_back(dir / name);
            }
        return out;  // std::map order: sorted by lower-case name
    }

    const zip::Archive* zip(const fs::path& path) { return opened(zips_, path); }
    const Pak* pak(const fs::path& path) { return opened(paks_, path); }
    const Vpk* vpk(const fs::path& path) { return opened(vpks_, path); }

private:
    const std::map<std::string, std::string>& list(const fs::path& dir) {
        auto [it, added] = listings_.try_emplace(dir.string());
        if (added) {
            std::error_code ec;
            for (fs::directory_iterator d(dir, ec), end; !ec && d != end; d.increment(ec))
                it->second.emplace(ascii_lower(d->path().filename().string()), d->path().filename().string());
        }
        return it->second;
    }

    /// The archive at `path`, opened once; nullptr (and a warning) when it cannot be read.
    template <class Archive>
    const Archive* opened(std::map<std::string, std::unique_ptr<Archive>>& cache, const fs::path& path) {
        auto [it, added] = cache.try_emplace(path.string());
        if (added) {
            try {
                it->second = std::make_unique<Archive>(Archive::open(path));
                if constexpr (std::is_same_v<Archive, zip::Archive>)
                    for (const Diagnostic& d : it->second->diagnostics()) diagnostics_.push_back(d);
            } catch (const Error& e) {
                diagnostics_.push_back({Severity::warning, "", -1, std::string(e.what()) + " (archive not searched)"});
            }
        }
        return it->second.get();
    }

    std::vector<Diagnostic>& diagnostics_;
    std::map<std::string, std::map<std::string, std::string>> listings_;
    std::map<std::string, std::unique_ptr<zip::Archive>> zips_;
    std::map<std::string, std::unique_ptr<Vpk>> vpks_;
    std::map<std::string, std::unique_ptr<Pak>> paks_;
};

/// What one material's search produced.
struct Lookup {
    std::optional<model::Texture> texture;
    std::vector<std::string> searched;
    std::string problem;
    bool without_image = false;  ///< a Quake 3 shader the engine draws no image for (Resolved::without_image)
};

/// A file's bytes by relative path in one place of the search path.
struct Place {
    std::string label;  ///< printed before the relative path
    std::function<std::optional<Bytes>(const std::string&)> read;
};

/// Quake 3 external lightmap page `page` of `folder` ("maps/<map>"), no
/// extension: <folder>/lm_NNNN, as q3map2 -external names it.
std::string lightmap_page_name(const std::string& folder, uint32_t page) {
    char number[16];
    std::snprintf(number, sizeof number, "%04u", page);
    return folder + "/lm_" + number;
}

class Resolver {
public:
    Resolver(const Bsp& bsp, const model::Map& map, const SearchPath& path, Resolved& out)
        : bsp_(bsp), map_(map), path_(path), out_(out), files_(out.diagnostics) {}

    Lookup find(const std::string& material) {
        switch (map_.format) {
            case Format::quake1:
            case Format::bsp2:
            case Format::goldsrc: return find_wad(material);
            case Format::quake2: return find_quake2(material);
            case Format::quake3: return find_quake3(material);
            case Format::source: return find_source(material);
            default: {
                Lookup l;
                l.problem = std::string("no texture search rule for ") + std::string(format_id(map_.format)) + " maps";
                return l;
            }
        }
    }

    /// Quake 3 (q3map2 -external): lightmap page `page` as R_FindLightmap
    /// loads it, <folder>/lm_NNNN.tga (R_FindImageFile also tries .jpg and
    /// .png), loose files first, then the *.pk3 archives.
    Lookup find_lightmap_page(const std::string& folder, uint32_t page) {
        Lookup l;
        const std::string stem = zip::engine_name(lightmap_page_name(folder, page));
        const std::vector<std::string> candidates = {stem + ".tga", stem + ".jpg", stem + ".png"};
        if (const auto f = first(game_places(".pk3", true), candidates, l))
            decode_into(l, *f, [](const Bytes& b, const std::string& n) { return decode_image(b, n); });
        return l;
    }

private:
    // --- places ------------------------------------------------------------

    /// Loose files, then the archives (`archive_suffix`) of every game folder.
    /// Quake 2 (".pak") also searches *.pk3 after its PACK files, as its
    /// modern engines (Yamagi, Q2PRO, KEX) do.
    const std::vector<Place>& game_places(std::string_view archive_suffix, bool newest_archive_first) {
        auto [it, added] = places_.try_emplace(std::string(archive_suffix));
        if (!added) return it->second;
        std::vector<Place>& places = it->second;
        if (map_.format == Format::source) add_pakfile(places);
        for (const fs::path& dir : path_.game_dirs) {
            places.push_back({dir.string() + "/", [this, dir](const std::string& rel) -> std::optional<Bytes> {
                                  if (const auto p = files_.loose(dir, rel)) return read_file(*p);
                                  return std::nullopt;
                              }});
            std::vector<fs::path> archives = files_.with_suffix(dir, archive_suffix);
            if (newest_archive_first) std::reverse(archives.begin(), archives.end());
            if (archive_suffix == ".pak") {  // pak9.pak before pak0.pak: later packs override earlier ones
                for (const fs::path& a : archives)
                    if (const Pak* p = files_.pak(a))
                        places.push_back({a.string() + ":", [p](const std::string& rel) { return p->read(rel); }});
                archives = files_.with_suffix(dir, ".pk3");
                if (newest_archive_first) std::reverse(archives.begin(), archives.end());
            }
            for (const fs::path& a : archives) {
                if (archive_suffix == ".pk3" || archive_suffix == ".pak") {
                    if (const zip::Archive* z = files_.zip(a))
                        places.push_back({a.string() + ":", [z](const std::string& rel) -> std::optional<Bytes> {
                                              if (const auto i = z->find(rel)) return z->extract(*i);
                                              return std::nullopt;
                                          }});
                } else if (const Vpk* v = files_.vpk(a)) {
                    places.push_back({a.string() + ":", [v](const std::string& rel) { return v->read(rel); }});
                }
            }
        }
        return places;
    }

    void add_pakfile(std::vector<Place>& places) {
        try {
            pak_ = std::make_shared<source::Pakfile>(source::Pakfile::read(bsp_));
        } catch (const Error& e) {
            out_.diagnostics.push_back({Severity::warning, "pakfile", e.where().offset,
                                        "the pakfile cannot be read, so it is not searched: " + e.detail()});
            return;
        }
        auto pak = pak_;
        places.push_back({"pakfile:", [pak](const std::string& rel) -> std::optional<Bytes> {
                              if (const auto i = pak->find(rel)) return pak->extract(*i);
                              return std::nullopt;
                          }});
    }

    /// The first of `candidates` in `places` (places outer, candidates inner
    /// when `place_first`); every try is recorded in `l.searched`. A file that
    /// exists but cannot be read is recorded as the problem and the search goes on.
    std::optional<std::pair<Bytes, std::string>> first(const std::vector<Place>& places,
                                                       const std::vector<std::string>& candidates, Lookup& l) {
        for (const Place& place : places) {
            for (const std::string& c : candidates) {
                const std::string where = place.label + c;
                l.searched.push_back(where);
                try {
                    if (auto bytes = place.read(c)) return std::make_pair(std::move(*bytes), where);
                } catch (const Error& e) {
                    if (l.problem.empty()) l.problem = e.what();
                }
            }
        }
        return std::nullopt;
    }

    template <class Decode>
    bool decode_into(Lookup& l, const std::pair<Bytes, std::string>& file, Decode decode) {
        try {
            l.texture = decode(file.first, file.second);
            l.problem.clear();
            return true;
        } catch (const Error& e) {
            l.problem = e.what();
            return false;
        }
    }

    // --- Quake 1 / GoldSrc: WADs -------------------------------------------

    const std::vector<std::pair<std::string, std::shared_ptr<Wad>>>& wads() {
        if (wads_ready_) return wads_;
        wads_ready_ = true;
        std::set<std::string> seen;
        auto add = [&](const fs::path& p) {
            std::error_code ec;
            const fs::path canonical = fs::weakly_canonical(p, ec);
            const std::string key = ec ? p.string() : canonical.string();
            if (!seen.insert(key).second) return;
            try {
                wads_.emplace_back(p.string(), std::make_shared<Wad>(Wad::open(p)));
            } catch (const Error& e) {
                out_.diagnostics.push_back({Severity::warning, "", -1, std::string(e.what()) + " (WAD not searched)"});
            }
        };
        std::vector<fs::path> dirs;
        std::error_code ec;
        for (const fs::path& w : path_.wads) {
            if (fs::is_directory(w, ec))
                dirs.push_back(w);
            else
                add(w);
        }
        if (path_.map_wad_key && !map_.entities.empty()) {
            std::vector<fs::path> key_dirs = dirs;
            key_dirs.insert(key_dirs.end(), path_.game_dirs.begin(), path_.game_dirs.end());
            key_dirs.push_back(fs::path(bsp_.file_name()).parent_path());
            for (const auto& [k, value] : map_.entities[0].pairs) {
                if (!is_wad_key(k)) continue;
                for (const WadKeyEntry& w : wad_key_entries(value)) {
                    bool found = false;
                    for (const fs::path& d : key_dirs)
                        if (const auto p = files_.loose(d.empty() ? fs::path(".") : d, w.file)) {
                            add(*p);
                            found = true;
                            break;
                        }
                    if (!found)
                        wad_key_missing_.push_back("wad key \"" + w.written + "\" (no " + w.file +
                                                   " in the --wad and game folders)");
                }
            }
        }
        for (const fs::path& d : dirs)
            for (const fs::path& p : files_.with_suffix(d, ".wad")) add(p);
        return wads_;
    }

    Lookup find_wad(const std::string& material) {
        Lookup l;
        const auto palette = path_.quake_palette ? *path_.quake_palette : quake1::quake_palette();
        for (const auto& [label, wad] : wads()) {
            l.searched.push_back(label);
            if (const auto i = wad->find(material)) {
                try {
                    l.texture = wad->decode(*i, palette);
                    l.problem.clear();
                    return l;
                } catch (const Error& e) {
                    if (l.problem.empty()) l.problem = e.what();
                }
            }
        }
        l.searched.insert(l.searched.end(), wad_key_missing_.begin(), wad_key_missing_.end());
        return l;
    }

    // --- Quake 2: WAL + colormap.pcx, or images ------------------------------

    std::optional<std::array<uint8_t, 768>> quake2_palette(Lookup& l) {
        if (!palette_tried_) {
            palette_tried_ = true;
            Lookup probe;
            if (const auto f = first(game_places(".pak", true), {"pics/colormap.pcx"}, probe)) {
                try {
                    palette_ = pcx_palette(f->first, f->second);
                } catch (const Error& e) {
                    palette_problem_ = e.what();
                }
            } else {
                palette_problem_ = "no pics/colormap.pcx in the game folders for the WAL palette";
            }
        }
        if (!palette_) l.problem = palette_problem_;
        return palette_;
    }

    Lookup find_quake2(const std::string& material) {
        Lookup l;
        const auto& places = game_places(".pak", true);
        const std::string base = "textures/" + zip::engine_name(material);
        if (const auto f = first(places, {base + ".wal"}, l)) {
            if (const auto palette = quake2_palette(l))
                if (decode_into(l, *f, [&](const Bytes& b, const std::string& n) { return decode_wal(b, *palette, n); }))
                    return l;
        }
        const std::string wal_problem = l.problem;
        if (const auto f = first(places, {base + ".tga", base + ".png", base + ".jpg"}, l))
            if (decode_into(l, *f, [](const Bytes& b, const std::string& n) { return decode_image(b, n); })) return l;
        if (l.problem.empty()) l.problem = wal_problem;
        return l;
    }

    // --- Quake 3: shaders, then images ----------------------------------------

    const std::map<std::string, ShaderImage>& shaders() {
        if (shaders_ready_) return shaders_;
        shaders_ready_ = true;
        auto take = [&](const Bytes& text) {
            for (const ShaderImage& s : parse_shaders(std::string_view(reinterpret_cast<const char*>(text.data()), text.size())))
                shaders_.try_emplace(s.shader, s);
        };
        for (const fs::path& dir : path_.game_dirs) {
            // Loose scripts/*.shader, then those in the archives (newest first).
            if (const auto scripts = files_.folder(dir, "scripts")) {
                for (const fs::path& s : files_.with_suffix(*scripts, ".shader")) {
                    try {
                        take(read_file(s));
                    } catch (const Error& e) {
                        out_.diagnostics.push_back({Severity::warning, "", -1, e.what()});
                    }
                }
            }
            std::vector<fs::path> pk3s = files_.with_suffix(dir, ".pk3");
            std::reverse(pk3s.begin(), pk3s.end());
            for (const fs::path& a : pk3s) {
                const zip::Archive* z = files_.zip(a);
                if (!z) continue;
                for (const zip::Entry& e : z->entries()) {
                    const std::string n = zip::engine_name(e.name);
                    if (n.rfind("scripts/", 0) != 0 || n.size() < 7 || n.compare(n.size() - 7, 7, ".shader") != 0) continue;
                    try {
                        take(z->extract(e));
                    } catch (const Error& err) {
                        out_.diagnostics.push_back({Severity::warning, "", -1, err.what()});
                    }
                }
            }
        }
        return shaders_;
    }

    Lookup find_quake3(const std::string& material) {
        Lookup l;
        std::string image = zip::engine_name(material);
        if (const auto it = shaders().find(image); it != shaders().end()) {
            l.without_image = it->second.nodraw || it->second.image.empty();
            if (it->second.image.empty()) return l;  // nothing to look for
            image = zip::engine_name(it->second.image);
        }
        if (const auto f = first(game_places(".pk3", true), quake3_image_names(image), l))
            decode_into(l, *f, [](const Bytes& b, const std::string& n) { return decode_image(b, n); });
        return l;
    }

    /// The files a Quake 3 image name (engine_name form) is looked for as: the
    /// name when it has an extension, then, without its extension, .tga, .jpg
    /// and .png (the engine drops the extension and tries .tga then .jpg;
    /// ioquake3 adds .png).
    static std::vector<std::string> quake3_image_names(const std::string& image) {
        const size_t dot = image.rfind('.');
        const size_t slash = image.rfind('/');
        std::string stem = image;
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) stem = image.substr(0, dot);
        std::vector<std::string> candidates;
        if (stem != image) candidates.push_back(image);
        for (const char* ext : {".tga", ".jpg", ".png"})
            if (stem + ext != image) candidates.push_back(stem + ext);
        return candidates;
    }

    // --- Source: VMT -> VTF ------------------------------------------------------

    static std::string material_path(std::string name, const char* ext) {
        name = zip::engine_name(name);
        while (!name.empty() && name.front() == '/') name.erase(0, 1);
        if (name.rfind("materials/", 0) == 0) name.erase(0, 10);
        if (name.size() > 4 && name.compare(name.size() - 4, 4, ext) == 0) name.resize(name.size() - 4);
        return "materials/" + name + ext;
    }

    Lookup find_source(const std::string& material) {
        Lookup l;
        const auto& places = game_places("_dir.vpk", false);
        std::string vmt_path = material_path(material, ".vmt");
        std::string texture_name = material;  // a material without a VMT: a VTF of its name
        std::string base;
        for (int depth = 0; base.empty(); ++depth) {  // patch -> include -> ...
            if (depth == 4) {
                l.problem = "patch materials include each other more than 4 deep";
                return l;
            }
            const auto f = first(places, {vmt_path}, l);
            if (!f) break;
            const Vmt vmt = parse_vmt(std::string_view(reinterpret_cast<const char*>(f->first.data()), f->first.size()));
            if (!vmt.base_texture.empty()) {
                base = vmt.base_texture;
            } else if (vmt.shader == "patch" && !vmt.include.empty()) {
                vmt_path = material_path(vmt.include, ".vmt");
                texture_name = vmt.include;
            } else {
                l.problem = f->second + ": material (shader \"" + vmt.shader + "\") has no $basetexture";
                return l;
            }
        }
        const std::string vtf_path = material_path(base.empty() ? texture_name : base, ".vtf");
        if (const auto f = first(places, {vtf_path}, l))
            decode_into(l, *f, [](const Bytes& b, const std::string& n) { return decode_vtf(b, n); });
        return l;
    }

public:
    // --- sky boxes --------------------------------------------------------------

    struct Sky {
        std::optional<model::SkyBox> box;
        std::optional<model::SkyClouds> clouds;
    };

    /// The sky the map names (see model::SkyBox, model::SkyClouds and "Sky
    /// boxes" in bspkit/textures.hpp), its images found and decoded; nothing
    /// when the family has none or the map names none. `missing` says which
    /// image was not found or not usable: a cloud layer's (then no clouds),
    /// or a box face's when no opaque cloud layer would hide the box (then no
    /// box). `budget`: decoded bytes left.
    Sky find_sky(std::optional<Missing>& missing, uint64_t budget) {
        static constexpr const char* kSuffixes[6] = {"rt", "bk", "lf", "ft", "up", "dn"};
        Sky sky;
        // Nowhere to look (WADs alone hold no sky boxes; a Source map's pakfile may).
        if (path_.game_dirs.empty() && map_.format != Format::source) return sky;
        const auto worldspawn = [&](std::string_view key, std::string fallback) {
            if (!map_.entities.empty())
                for (const KeyValue& kv : map_.entities[0].pairs)
                    if (ascii_lower(kv.key) == key && !kv.value.empty()) return kv.value;
            return fallback;
        };
        // A found image counts against the budget; past it, it is a problem instead.
        const auto charge = [&](Lookup& l) {
            if (l.texture && l.texture->rgba.size() > budget) {
                l.problem = "not decoded: the textures of this map already take the budget of " +
                            std::to_string(kMaxDecodedBytes >> 20) + " MiB";
                l.texture.reset();
            }
            if (l.texture) budget -= l.texture->rgba.size();
        };
        // An image as the engine loads it: `candidates` in the family's places.
        const auto load = [&](std::string_view archives, const std::vector<std::string>& candidates) {
            Lookup l;
            if (const auto f = first(game_places(archives, true), candidates, l)) {
                const bool pcx = f->second.size() >= 4 && ascii_lower(f->second.substr(f->second.size() - 4)) == ".pcx";
                decode_into(l, *f, [&](const Bytes& b, const std::string& n) { return pcx ? decode_pcx(b, n) : decode_image(b, n); });
            }
            charge(l);
            return l;
        };
        const auto with_extensions = [](const std::string& stem, std::initializer_list<const char*> extensions) {
            std::vector<std::string> out;
            for (const char* e : extensions) out.push_back(zip::engine_name(stem + e));
            return out;
        };
        model::SkyBox box;
        std::function<Lookup(const char*)> face;
        const ShaderImage* q3 = nullptr;
        switch (map_.format) {
            case Format::quake2:
                box.name = worldspawn("sky", "unit1_");  // the game's default (SP_worldspawn)
                face = [&, stem = "env/" + box.name](const char* suffix) { return load(".pak", with_extensions(stem + suffix, {".tga", ".pcx"})); };
                break;
            case Format::goldsrc:
                box.name = worldspawn("skyname", "desert");  // sv_skyname's default
                face = [&, stem = "gfx/env/" + box.name](const char* suffix) { return load(".pak", with_extensions(stem + suffix, {".tga"})); };
                break;
            case Format::source:
                box.name = worldspawn("skyname", "sky_urb01");  // sv_skyname's default
                face = [&, name = box.name](const char* suffix) {
                    Lookup l = find_source("skybox/" + name + suffix);
                    charge(l);
                    return l;
                };
                break;
            case Format::quake3: {
                // The first sky shader a surface shows that has a far box or cloud layers.
                std::vector<bool> shown(map_.materials.size(), false);
                for (const model::Model& m : map_.models)
                    for (const model::Surface& s : m.surfaces)
                        if (s.material < shown.size()) shown[s.material] = true;
                for (size_t i = 0; i < map_.materials.size() && !q3; ++i) {
                    if (!shown[i] || !(map_.materials[i].flags & model::kSky)) continue;
                    const auto it = shaders().find(zip::engine_name(map_.materials[i].name));
                    if (it != shaders().end() && (!it->second.far_box.empty() || !it->second.stages.empty())) q3 = &it->second;
                }
                if (!q3) return sky;
                box.name = q3->far_box;
                face = [&, stem = q3->far_box + "_"](const char* suffix) {
                    return load(".pk3", with_extensions(stem + suffix, {".tga", ".jpg", ".png"}));
                };
                break;
            }
            default:
                return sky;
        }
        // Quake 3's cloud layers: each stage's image, tried as the engine does.
        bool opaque_clouds = false;
        if (q3 && !q3->stages.empty()) {
            model::SkyClouds clouds;
            clouds.height = q3->cloud_height > 0 ? q3->cloud_height : 512;
            for (const ShaderImage::Stage& st : q3->stages) {
                Lookup l = load(".pk3", quake3_image_names(zip::engine_name(st.image)));
                if (!l.texture) {
                    missing = Missing{"sky clouds " + q3->shader + " (" + st.image + ")", std::move(l.searched), std::move(l.problem)};
                    clouds.layers.clear();
                    break;
                }
                clouds.layers.push_back({std::move(*l.texture), st.scale_s, st.scale_t, st.src, st.dst});
            }
            if (!clouds.layers.empty()) {
                opaque_clouds = clouds.layers[0].src == model::BlendFactor::one && clouds.layers[0].dst == model::BlendFactor::zero;
                sky.clouds = std::move(clouds);
            }
        }
        // An opaque first cloud layer hides the box: it is not loaded (nor
        // missed: ioquake3's default image for a face it lacks is hidden too).
        if (box.name.empty() || opaque_clouds) return sky;
        for (size_t i = 0; i < 6; ++i) {
            Lookup l = face(kSuffixes[i]);
            if (!l.texture) {
                if (!missing)
                    missing = Missing{"sky box " + box.name + " (" + kSuffixes[i] + ")", std::move(l.searched), std::move(l.problem)};
                return sky;
            }
            box.faces[i] = std::move(*l.texture);
        }
        sky.box = std::move(box);
        return sky;
    }

private:
    const Bsp& bsp_;
    const model::Map& map_;
    const SearchPath& path_;
    Resolved& out_;
    Files files_;
    std::map<std::string, std::vector<Place>> places_;
    std::shared_ptr<source::Pakfile> pak_;
    bool wads_ready_ = false;
    std::vector<std::pair<std::string, std::shared_ptr<Wad>>> wads_;
    std::vector<std::string> wad_key_missing_;
    bool palette_tried_ = false;
    std::optional<std::array<uint8_t, 768>> palette_;
    std::string palette_problem_;
    bool shaders_ready_ = false;
    std::map<std::string, ShaderImage> shaders_;
};

/// Distinct external lightmap pages searched for at most.
constexpr size_t kMaxExternalLightmapPages = 4096;

/// Loads the pages of Map::external_lightmaps, lights the surfaces that name
/// them and packs the atlas, when the map holds no lightmap page of its own
/// (q3map2 -external writes them all outside). A page not found is reported
/// like a texture; the builder's warning goes once every page was found.
void attach_external_lightmaps(model::Map& map, Resolver& resolver, Resolved& out, uint64_t& decoded_bytes) {
    model::ExternalLightmaps ext = std::move(map.external_lightmaps);
    map.external_lightmaps = {};  // taken: a second resolve() has nothing to attach
    if (ext.empty() || !map.lightmaps.empty() || !map.lightmap_images.empty()) return;
    std::map<uint32_t, int32_t> image_of;  // page -> Map::lightmap_images index, -1 when not found
    for (const auto& use : ext.uses) image_of.emplace(use.page, -1);
    std::vector<Missing> not_found;
    size_t missing = 0, searched = 0;
    for (auto& [page, image] : image_of) {
        // q3map2 writes tens of pages; a hostile map naming a page per face
        // must not cost a file search each.
        if (searched++ >= kMaxExternalLightmapPages) {
            ++missing;
            continue;
        }
        Lookup l = resolver.find_lightmap_page(ext.folder, page);
        const model::Texture* t = l.texture ? &*l.texture : nullptr;
        if (t && decoded_bytes + t->rgba.size() > kMaxDecodedBytes) {
            l.problem = "not decoded: images of this map already take " + std::to_string(decoded_bytes >> 20) +
                        " MiB (at most " + std::to_string(kMaxDecodedBytes >> 20) + " MiB)";
            t = nullptr;
        }
        if (!t) {
            not_found.push_back({lightmap_page_name(ext.folder, page), std::move(l.searched), std::move(l.problem)});
            ++missing;
            continue;
        }
        decoded_bytes += t->rgba.size();
        model::LightmapImage img;
        img.width = t->width;
        img.height = t->height;
        std::vector<uint8_t> rgb(size_t(t->width) * t->height * 3);
        drop_alpha(t->rgba.data(), size_t(t->width) * t->height, rgb.data());
        img.styles.push_back(std::move(rgb));
        image = int32_t(map.lightmap_images.size());
        map.lightmap_images.push_back(std::move(img));
        ++out.lightmap_pages;
    }
    // A few pages not found are reported one by one, like textures; more
    // (a damaged map naming a page per face) on one line.
    constexpr size_t kListed = 4;
    if (missing <= kListed) {
        for (Missing& m : not_found) out.missing.push_back(std::move(m));
    } else {
        std::string names;
        for (size_t i = 0; i < not_found.size() && i < kListed; ++i) names += not_found[i].material + ", ";
        Missing m{ext.folder + "/lm_NNNN", not_found.empty() ? std::vector<std::string>{} : not_found[0].searched,
                  std::to_string(missing) + " of the " + std::to_string(image_of.size()) +
                      " pages the faces name were not found (" + names + "...)"};
        if (image_of.size() > kMaxExternalLightmapPages)
            m.problem += "; past " + std::to_string(kMaxExternalLightmapPages) + " pages none were searched";
        out.missing.push_back(std::move(m));
    }
    if (map.lightmap_images.empty()) return;
    std::map<uint32_t, model::Model*> model_of;  // Model::index -> the model
    for (model::Model& m : map.models) model_of.emplace(m.index, &m);
    size_t unlit = 0;
    for (const auto& use : ext.uses) {
        const int32_t image = image_of[use.page];
        if (image < 0) {
            ++unlit;
            continue;
        }
        const auto m = model_of.find(use.model);
        if (m == model_of.end() || use.surface >= m->second->surfaces.size()) continue;
        model::Surface& s = m->second->surfaces[use.surface];
        s.lightmap = image;
        s.styles = {0, 255, 255, 255};
    }
    model::pack_lightmaps(map);
    // The builder's warning said every such face was built without lightmap.
    if (ext.diagnostic >= 0 && size_t(ext.diagnostic) < map.diagnostics.size()) {
        if (missing == 0)
            map.diagnostics.erase(map.diagnostics.begin() + ext.diagnostic);
        else
            map.diagnostics[size_t(ext.diagnostic)].message =
                std::to_string(unlit) + " surfaces name lightmap pages not found outside the map (" +
                std::to_string(missing) + " of " + std::to_string(image_of.size()) + " pages, " + ext.folder +
                "/lm_NNNN): built without lightmap";
    }
}

}  // namespace

bool is_wad_key(std::string_view key) {
    const std::string k = ascii_lower(key);
    return k == "wad" || k == "_wad";
}

std::vector<WadKeyEntry> wad_key_entries(std::string_view value) {
    std::vector<WadKeyEntry> out;
    const std::string list = slashes(std::string(value));
    size_t start = 0;
    while (start <= list.size()) {
        const size_t semi = std::min(list.find(';', start), list.size());
        std::string item = list.substr(start, semi - start);
        start = semi + 1;
        const size_t slash = item.rfind('/');
        std::string file = slash == std::string::npos ? item : item.substr(slash + 1);
        if (!file.empty()) out.push_back({std::move(item), std::move(file)});
    }
    return out;
}

Resolved resolve(model::Map& map, const Bsp& bsp, const SearchPath& path) {
    Resolved out;
    Resolver resolver(bsp, map, path, out);
    std::map<std::string, int32_t> by_name;  // lower-case name -> texture index, or -1 when not found
    std::vector<bool> renormalise(map.materials.size(), false);
    // A Quake 3 map's materials are its shaders lump, brush-side shaders too:
    // only those a surface shows are looked for (other formats list only those).
    std::vector<bool> used(map.materials.size(), map.format != Format::quake3);
    for (const model::Model& m : map.models)
        for (const model::Surface& s : m.surfaces)
            if (s.material < used.size()) used[s.material] = true;
    uint64_t decoded_bytes = 0;
    for (size_t i = 0; i < map.materials.size() && path.textures; ++i) {
        model::Material& mat = map.materials[i];
        if (mat.texture >= 0 || mat.name.empty() || !used[i]) continue;
        const std::string key = ascii_lower(mat.name);
        auto it = by_name.find(key);
        if (it == by_name.end()) {
            Lookup l = resolver.find(mat.name);
            int32_t index = -1;
            // (The texture is reached through a pointer: GCC 12 takes the
            // optional's payload read beside has_value() for uninitialised.)
            model::Texture* found = l.texture ? &*l.texture : nullptr;
            if (found && decoded_bytes + found->rgba.size() > kMaxDecodedBytes) {
                l.problem = "not decoded: textures of this map already take " + std::to_string(decoded_bytes >> 20) +
                            " MiB (at most " + std::to_string(kMaxDecodedBytes >> 20) + " MiB)";
                found = nullptr;
            }
            if (found) {
                decoded_bytes += found->rgba.size();
                found->name = mat.name;
                index = int32_t(map.textures.size());
                map.textures.push_back(std::move(*found));
                ++out.found;
            } else if (l.without_image && l.problem.empty()) {
                ++out.without_image;
            } else {
                out.missing.push_back({mat.name, std::move(l.searched), std::move(l.problem)});
            }
            it = by_name.emplace(key, index).first;
        }
        if (it->second < 0) continue;
        mat.texture = it->second;
        const model::Texture& t = map.textures[size_t(it->second)];
        if (mat.width == 0 || mat.height == 0) {
            // Quake 3 UVs are stored normalised; elsewhere a size of 0 meant texels.
            renormalise[i] = map.format != Format::quake3;
            mat.width = t.width;
            mat.height = t.height;
        }
    }
    if (std::find(renormalise.begin(), renormalise.end(), true) != renormalise.end()) {
        for (model::Model& m : map.models)
            for (model::Surface& s : m.surfaces) {
                if (s.material >= renormalise.size() || !renormalise[s.material]) continue;
                const model::Material& mat = map.materials[s.material];
                const float w = float(mat.width), h = float(mat.height);
                for (model::Vertex& v : s.vertices) v.uv = {v.uv.x / w, v.uv.y / h};
            }
    }
    attach_external_lightmaps(map, resolver, out, decoded_bytes);
    if (path.sky_box && !map.sky_box && !map.sky_clouds) {
        auto sky = resolver.find_sky(out.sky_box_missing, kMaxDecodedBytes - std::min(decoded_bytes, kMaxDecodedBytes));
        map.sky_box = std::move(sky.box);
        map.sky_clouds = std::move(sky.clouds);
    }
    return out;
}

}  // namespace bspkit::textures
