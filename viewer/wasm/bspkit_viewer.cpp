// The browser viewer's WebAssembly module (issue 14): bspkit's library behind
// six functions, through embind (viewer_post.js wraps them; nothing throws):
//   open(name, Uint8Array, progress?, companions?) -> {format, version, lumps, bytes, models, faces, clusters,
//       hasVis, textures: {searched, found, lightmapPages, missing: [{material, problem?}], warnings: [line],
//       materials, untextured (materials without a texture, after the search)}}
//       (progress(stage, fraction) while parsing and building; companions: [{path, bytes}], the files a
//       user gave with the map: WADs, pk3 / vpk / pak archives, loose textures, the map's .lit)
//   scene({sky, tools, lighting: "baked"|"none"}) -> {glb, summary: {models, primitives, vertices,
//       triangles, materials, images, ...}, ranges: [{mesh, primitive, face[], first[], count[]}],
//       faceBound, lightmap: {width, height, pixels} | null}
//   locate(x, y, z) -> {leaf, cluster, area, contents: [flag names], visible: Uint8Array per face
//       (1 = in the PVS of the point's cluster) | null (no usable PVS: draw everything)}
//   entities() -> [{index, classname, model, origin | null, keyvalues}]
//   check() -> [{severity, lump, record, field, offset, message, line (as `bspkit check` prints it),
//       position | null (where the finding is), view | null (an open point to look from)}]
//   close()
// and every failure is {error: LINE}. Only the library's public headers are
// used; every result is what the command line computes for the same file:
//   open   = Bsp::parse + require_complete_lumps + model::build, as `bspkit export` (open_for_geometry),
//            with companions textures::resolve over them as `bspkit export --wad DIR --game-dir DIR`
//            (write_companions() says which folders)
//   scene  = exporter::build_gltf + encode_glb, the bytes `bspkit export FILE -o x.glb` writes
//   locate = query::World::leaf_at (`bspkit leaf`) + the PVS rows by ClusterFaces (`bspkit render`'s culling)
//   entities = read_entities (`bspkit entities`), check = check + check_text (`bspkit check`)
// Errors never escape: bspkit::Error becomes {error: e.what()}, the line the
// CLI prints on stderr. The JS wrappers in viewer_post.js make the optional
// arguments optional and catch anything left (a non-array argument).
#include <bspkit/ascii.hpp>
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/engine_light.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>
#include <bspkit/export.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/format.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/visibility.hpp>

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <vector>

using emscripten::val;

namespace {

using bspkit::model::Vec3;

/// The files given with the map, written under kCompanions (MEMFS, emptied
/// at every open), and what the build and the texture search take from them.
struct Companions {
    std::optional<bspkit::textures::SearchPath> search;  ///< none without files: no search, as export without --wad
    std::filesystem::path lit;                           ///< the map's .lit (Quake 1), when given
    std::vector<std::string> notes;                      ///< files not used, and why
};

/// The open map and what was derived from it.
struct Session {
    Companions companions;
    std::optional<bspkit::textures::Resolved> resolved;  ///< the search for `map`
    std::optional<bspkit::Bsp> bsp;           ///< kept when parsing worked, even if the model failed
    std::optional<bspkit::model::Map> map;    ///< as `bspkit export` builds it (lightmaps + textures)
    std::optional<bspkit::model::Map> unlit;  ///< built without lightmaps for lighting "none" (as --lighting none)
    std::string model_error;                  ///< why the model could not be built (scene / locate return it)
    std::optional<bspkit::query::World> world;
    std::optional<bspkit::Visibility> vis;
    std::optional<bspkit::ClusterFaces> cluster_faces;
    std::vector<uint8_t> listed;              ///< per face: some cluster lists it
    uint32_t face_bound = 0;                  ///< one past the highest face id of any surface
    val progress = val::null();
};

std::unique_ptr<Session> g_session;

val error_value(const std::string& line) {
    val out = val::object();
    out.set("error", line);
    return out;
}

/// Runs `body`, turning what it throws into {error} (the CLI's wording).
template <class F>
val guarded(F&& body) {
    try {
        return body();
    } catch (const bspkit::Error& e) {
        return error_value(e.what());
    } catch (const std::bad_alloc&) {
        return error_value("bspkit: out of memory");
    } catch (const std::exception& e) {
        return error_value(std::string("bspkit: ") + e.what());
    }
}

/// A JS copy of bytes (the module's memory may move when it grows).
val bytes_value(const uint8_t* data, size_t size) {
    return val(emscripten::typed_memory_view(size, data)).call<val>("slice");
}
template <class T>
val typed_copy(const std::vector<T>& v) {
    return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}

val vec3_value(Vec3 v) {
    val a = val::array();
    a.call<void>("push", double(v.x));
    a.call<void>("push", double(v.y));
    a.call<void>("push", double(v.z));
    return a;
}

void report(const char* stage, double fraction) {
    if (g_session && g_session->progress.typeOf().as<std::string>() == "function") g_session->progress(std::string(stage), fraction);
}

bspkit::model::BuildOptions export_build_options(bool lightmaps, const Companions& companions) {
    bspkit::model::BuildOptions build;  // `bspkit export` defaults: every model, textures, adaptive patches
    build.lightmaps = lightmaps;
    build.textures = true;
    build.all_models = true;
    build.patch_level = -1;
    build.hdr_lightmaps = false;
    // No FILE.lit beside an in-memory map: the one given with it, if any.
    build.lit_file = !companions.lit.empty();
    build.lit_path = companions.lit;
    return build;
}

const std::filesystem::path kCompanions = "/companions";

/// A companion's path under kCompanions: its components without empty and
/// "." ones ('\\' counts as '/'; a leading '/', as in a dropped folder's
/// entries, is dropped). None when a component is ".." (it would leave the
/// folder) or nothing is left.
std::optional<std::filesystem::path> companion_path(const std::string& given) {
    std::filesystem::path out;
    std::string part;
    const auto take = [&]() -> bool {
        if (part == "..") return false;
        if (!part.empty() && part != ".") out /= part;
        part.clear();
        return true;
    };
    for (const char c : given) {
        if (c == '/' || c == '\\') {
            if (!take()) return std::nullopt;
        } else if (c == '\0') {
            return std::nullopt;
        } else {
            part += c;
        }
    }
    if (!take() || out.empty()) return std::nullopt;
    return out;
}

/// Writes the companion files under kCompanions and says where to search:
/// WADs in every folder holding one (the map's "wad" key names them, as in
/// `--wad DIR`); game folders (as `--game-dir`): kCompanions itself, every
/// folder holding an archive (pk3, pk4, vpk, pak, zip) and every folder above
/// a game's own folders (textures, materials, maps, pics, scripts, env, gfx),
/// in path order. The map's .lit is FILE.lit by the map's name.
Companions write_companions(const val& list, const std::string& map_name) {
    Companions out;
    std::error_code ec;
    std::filesystem::remove_all(kCompanions, ec);
    if (list.isUndefined() || list.isNull()) return out;
    const size_t n = list["length"].as<size_t>();
    if (n == 0) return out;
    std::set<std::filesystem::path> wad_dirs, game_dirs{kCompanions};
    const std::string lit_name = bspkit::ascii_lower(std::filesystem::path(map_name).stem().string()) + ".lit";
    static const std::set<std::string> kArchives{".pk3", ".pk4", ".vpk", ".pak", ".zip"};
    static const std::set<std::string> kGameFolders{"textures", "materials", "maps", "pics", "scripts", "env", "gfx"};
    for (size_t i = 0; i < n; ++i) {
        const val item = list[i];
        const std::string shown = item["path"].isString() ? item["path"].as<std::string>() : std::string("(no path)");
        const std::optional<std::filesystem::path> rel = companion_path(shown);
        if (!rel) {
            out.notes.push_back(shown + ": not used: its path leaves the folder or names no file");
            continue;
        }
        const std::filesystem::path file = kCompanions / *rel;
        std::filesystem::create_directories(file.parent_path(), ec);
        try {
            bspkit::write_file_atomic(file, emscripten::convertJSArrayToNumberVector<uint8_t>(item["bytes"]));
        } catch (const std::exception& e) {  // a path that is also a folder's, memory
            out.notes.push_back(shown + ": not used: " + e.what());
            continue;
        }
        const std::string ext = bspkit::ascii_lower(rel->extension().string());
        if (ext == ".wad") wad_dirs.insert(file.parent_path());
        if (kArchives.count(ext)) game_dirs.insert(file.parent_path());
        std::filesystem::path above = kCompanions;
        for (const auto& part : rel->parent_path()) {
            if (kGameFolders.count(bspkit::ascii_lower(part.string()))) {
                game_dirs.insert(above);
                break;
            }
            above /= part;
        }
        if (ext == ".lit") {
            if (bspkit::ascii_lower(rel->filename().string()) == lit_name && out.lit.empty()) out.lit = file;
            else out.notes.push_back(shown + ": not used: the map's coloured light would be " + lit_name);
        }
    }
    bspkit::textures::SearchPath search;
    search.wads.assign(wad_dirs.begin(), wad_dirs.end());
    search.game_dirs.assign(game_dirs.begin(), game_dirs.end());
    out.search = std::move(search);
    return out;
}

/// textures::resolve() over the companions, when there are any.
std::optional<bspkit::textures::Resolved> resolve_companions(const Session& s, bspkit::model::Map& map) {
    if (!s.companions.search) return std::nullopt;
    return bspkit::textures::resolve(map, *s.bsp, *s.companions.search);
}

val textures_value(const Session& s) {
    val out = val::object();
    out.set("searched", bool(s.resolved));
    out.set("found", double(s.resolved ? s.resolved->found : 0));
    out.set("lightmapPages", double(s.resolved ? s.resolved->lightmap_pages : 0));
    val missing = val::array(), warnings = val::array();
    if (s.resolved) {
        // Files named as the page gave them: the folder under kCompanions left out.
        const std::string folder = kCompanions.string() + "/";
        const auto shown = [&](std::string text) {
            for (size_t at; (at = text.find(folder)) != std::string::npos;) text.erase(at, folder.size());
            return text;
        };
        for (const auto& m : s.resolved->missing) {
            val o = val::object();
            o.set("material", m.material);
            if (!m.problem.empty()) o.set("problem", shown(m.problem));
            missing.call<void>("push", o);
        }
        for (const auto& d : s.resolved->diagnostics)
            warnings.call<void>("push", shown(d.lump.empty() ? d.message : d.lump + ": " + d.message));
    }
    for (const std::string& note : s.companions.notes) warnings.call<void>("push", note);
    out.set("missing", missing);
    out.set("warnings", warnings);
    size_t untextured = 0;
    for (const auto& m : s.map->materials) untextured += m.texture < 0;
    out.set("materials", double(s.map->materials.size()));
    out.set("untextured", double(untextured));
    return out;
}

val open_map(std::string name, val bytes, val progress, val companions) {
    g_session = std::make_unique<Session>();
    g_session->progress = progress;
    return guarded([&] {
        Session& s = *g_session;
        report("parsing", 0);
        s.companions = write_companions(companions, name);
        std::vector<uint8_t> data = emscripten::convertJSArrayToNumberVector<uint8_t>(bytes);
        const size_t size = data.size();
        s.bsp.emplace(bspkit::Bsp::parse(std::move(data), name));
        const bspkit::Bsp& bsp = *s.bsp;
        report("parsing", 1);
        try {
            bspkit::require_complete_lumps(bsp);
            report("model", 0);
            s.map.emplace(bspkit::model::build(bsp, export_build_options(true, s.companions)));
            s.resolved = resolve_companions(s, *s.map);
        } catch (const bspkit::Error& e) {
            s.model_error = e.what();
            throw;
        }
        report("model", 1);
        size_t faces = 0;
        for (const auto& m : s.map->models)
            for (const auto& surface : m.surfaces) {
                ++faces;
                if (surface.face >= 0 && surface.face < int64_t(UINT32_MAX))
                    s.face_bound = std::max(s.face_bound, uint32_t(surface.face) + 1);
            }
        // The tree and the PVS only cull and locate: without them (no usable
        // tree or vis data) locate() says "draw everything", as bspkit render does.
        try {
            s.world.emplace(bspkit::query::World::prepare(bsp));
            s.vis.emplace(bspkit::Visibility::of(bsp));
            s.cluster_faces.emplace(bspkit::ClusterFaces::of(bsp, *s.vis));
            s.listed = s.cluster_faces->listed();
            s.face_bound = std::max(s.face_bound, s.cluster_faces->face_bound());
        } catch (const bspkit::Error&) {
            s.vis.reset();
            s.cluster_faces.reset();
            s.listed.clear();
        }
        val out = val::object();
        out.set("format", std::string(bspkit::format_id(bsp.format())));
        out.set("version", bsp.version() ? *bsp.version() : 0);
        out.set("lumps", double(bsp.lump_count()));
        out.set("bytes", double(size));
        out.set("models", double(s.map->models.size()));
        out.set("faces", double(faces));
        const size_t clusters = s.vis ? s.vis->clusters() : 0;
        out.set("clusters", double(clusters));
        out.set("hasVis", s.vis && s.vis->encoding() != bspkit::Visibility::Encoding::none && clusters > 0);
        out.set("textures", textures_value(s));
        return out;
    });
}

val scene(val options) {
    return guarded([&]() -> val {
        if (!g_session || !g_session->bsp) return error_value("bspkit: no map is open");
        Session& s = *g_session;
        if (!s.map) return error_value(s.model_error);
        bspkit::exporter::Options o;  // `bspkit export FILE -o x.glb` defaults
        const auto get_bool = [&](const char* key, bool fallback) {
            const val v = options.isUndefined() || options.isNull() ? val::undefined() : options[key];
            return v.isUndefined() || v.isNull() ? fallback : v.as<bool>();
        };
        o.sky = get_bool("sky", true);
        o.tool_surfaces = get_bool("tools", false);
        std::string lighting = "baked";
        if (!options.isUndefined() && !options.isNull() && options["lighting"].typeOf().as<std::string>() == "string")
            lighting = options["lighting"].as<std::string>();
        if (lighting != "baked" && lighting != "none") return error_value("bspkit: lighting must be \"baked\" or \"none\"");
        const bspkit::model::Map* map = &*s.map;
        if (lighting == "none") {
            o.lighting = bspkit::exporter::Lighting::none;
            if (!s.unlit) {  // --lighting none builds the model without lightmaps
                report("model", 0);
                s.unlit.emplace(bspkit::model::build(*s.bsp, export_build_options(false, s.companions)));
                resolve_companions(s, *s.unlit);
                report("model", 1);
            }
            map = &*s.unlit;
        }
        o.progress = [](std::string_view stage, double fraction) {
            // geometry 0..0.5, images and writing after it
            report("scene", stage == "geometry" && fraction >= 0 ? fraction * 0.5 : stage == "writing" ? 0.95 : 0.6);
        };
        report("scene", 0);
        bspkit::exporter::GltfAsset asset = bspkit::exporter::build_gltf(*map, o, true, "map");
        asset.json.shrink_to_fit();
        const bspkit::Bytes glb = bspkit::exporter::encode_glb(asset);
        val out = val::object();
        out.set("glb", bytes_value(glb.data(), glb.size()));
        const auto& sum = asset.summary;
        val summary = val::object();
        summary.set("models", double(sum.models));
        summary.set("primitives", double(sum.primitives));
        summary.set("vertices", double(sum.vertices));
        summary.set("triangles", double(sum.triangles));
        summary.set("materials", double(sum.materials));
        summary.set("images", double(sum.images));
        summary.set("skipped_surfaces", double(sum.skipped_surfaces));
        summary.set("skipped_models", double(sum.skipped_models));
        out.set("summary", summary);
        uint32_t face_bound = 0;
        val ranges = val::array();
        for (const auto& r : asset.ranges) {
            val pr = val::object();
            pr.set("mesh", r.mesh);
            pr.set("primitive", r.primitive);
            pr.set("face", typed_copy(r.face));
            pr.set("first", typed_copy(r.first));
            pr.set("count", typed_copy(r.count));
            ranges.call<void>("push", pr);
            for (const uint32_t f : r.face)
                if (f != bspkit::exporter::PrimitiveRanges::kNoFace) face_bound = std::max(face_bound, f + 1);
        }
        out.set("faceBound", face_bound);
        out.set("ranges", ranges);
        // The combined lightmap as the engine shows it (what TEXCOORD_1 maps).
        bspkit::model::LightmapAtlas light = bspkit::model::combined_lightmap(*map);
        if (light.width && light.height && light.rgb.size() == size_t(light.width) * light.height * 3) {
            bspkit::model::shade_lightmap(map->format, true, 0.0, light);
            std::vector<uint8_t> rgba(size_t(light.width) * light.height * 4);
            for (size_t p = 0, n = size_t(light.width) * light.height; p < n; ++p) {
                rgba[p * 4] = light.rgb[p * 3];
                rgba[p * 4 + 1] = light.rgb[p * 3 + 1];
                rgba[p * 4 + 2] = light.rgb[p * 3 + 2];
                rgba[p * 4 + 3] = 255;
            }
            val lm = val::object();
            lm.set("width", light.width);
            lm.set("height", light.height);
            lm.set("pixels", typed_copy(rgba));
            out.set("lightmap", lm);
        } else {
            out.set("lightmap", val::null());
        }
        report("scene", 1);
        return out;
    });
}

val locate(double x, double y, double z) {
    return guarded([&]() -> val {
        if (!g_session || !g_session->bsp) return error_value("bspkit: no map is open");
        Session& s = *g_session;
        if (!s.map) return error_value(s.model_error);
        val out = val::object();
        bspkit::query::LeafInfo leaf;
        if (s.world) leaf = s.world->leaf_at(Vec3{float(x), float(y), float(z)});
        out.set("leaf", leaf.leaf);
        out.set("cluster", leaf.cluster);
        out.set("area", leaf.area);
        val contents = val::array();
        const std::string names = bspkit::query::content_flag_names(leaf.contents.flags);
        for (size_t start = 0; start <= names.size();) {
            const size_t comma = std::min(names.find(',', start), names.size());
            if (comma > start) contents.call<void>("push", names.substr(start, comma - start));
            start = comma + 1;
        }
        out.set("contents", contents);
        out.set("visible", val::null());
        // As bspkit render culls: the camera leaf's cluster row (and the cluster
        // itself); faces no cluster lists (brush models, displacements) are always drawn.
        if (s.world && s.vis && s.cluster_faces && leaf.leaf >= 0 && !leaf.contents.solid() &&
            size_t(leaf.leaf) < s.vis->leaf_count() && s.vis->encoding() != bspkit::Visibility::Encoding::none)
            if (const auto c = s.vis->cluster_of_leaf(size_t(leaf.leaf)); c && *c < s.cluster_faces->clusters()) {
                bspkit::Bytes row(s.vis->row_bytes());
                const bspkit::RowStatus status = s.vis->pvs_into(*c, row);
                if (status == bspkit::RowStatus::ok || status == bspkit::RowStatus::overrun) {
                    std::vector<uint8_t> visible(s.face_bound, 1);
                    for (size_t f = 0; f < s.listed.size() && f < visible.size(); ++f)
                        if (s.listed[f]) visible[f] = 0;
                    s.cluster_faces->mark_visible(*c, row, visible);
                    out.set("visible", typed_copy(visible));
                }
            }
        return out;
    });
}

int32_t brush_model_of(const bspkit::Entity& e) {
    const auto m = e.find("model");
    const auto n = m ? bspkit::brush_model_number(*m) : std::nullopt;
    return n && *n <= uint64_t(INT32_MAX) ? int32_t(*n) : -1;
}

val entities() {
    return guarded([&]() -> val {
        if (!g_session || !g_session->bsp) return error_value("bspkit: no map is open");
        const bspkit::EntityLump lump = bspkit::read_entities(*g_session->bsp);
        val out = val::array();
        for (size_t i = 0; i < lump.entities.size(); ++i) {
            const bspkit::Entity& e = lump.entities[i];
            val ent = val::object();
            ent.set("index", double(i));
            ent.set("classname", bspkit::bytes_to_utf8(e.get("classname")));
            ent.set("model", brush_model_of(e));
            const auto origin = e.find("origin");
            const auto v = origin ? bspkit::exporter::parse_vec3(*origin) : std::nullopt;  // as the export places it
            ent.set("origin", v ? vec3_value(*v) : val::null());
            val pairs = val::array();
            for (const bspkit::KeyValue& kv : e.pairs) {
                val pair = val::array();
                pair.call<void>("push", bspkit::bytes_to_utf8(kv.key));
                pair.call<void>("push", bspkit::bytes_to_utf8(kv.value));
                pairs.call<void>("push", pair);
            }
            ent.set("keyvalues", pairs);
            out.call<void>("push", ent);
        }
        return out;
    });
}

/// Bounds of a set of points, for "where is this record".
struct Box {
    Vec3 lo{std::numeric_limits<float>::max(), std::numeric_limits<float>::max(), std::numeric_limits<float>::max()};
    Vec3 hi{-std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()};
    bool empty = true;
    void add(Vec3 p) {
        lo = {std::min(lo.x, p.x), std::min(lo.y, p.y), std::min(lo.z, p.z)};
        hi = {std::max(hi.x, p.x), std::max(hi.y, p.y), std::max(hi.z, p.z)};
        empty = false;
    }
    Vec3 centre() const { return {(lo.x + hi.x) / 2, (lo.y + hi.y) / 2, (lo.z + hi.z) / 2}; }
};

/// Where a camera can stand to look at `target`: in front of the face (along
/// its normal, either side) or beside the point, in an open leaf, with a clear
/// line to within a few units of the target. None when every try is solid or sky.
std::optional<Vec3> view_point(const Session& s, Vec3 target, std::optional<Vec3> normal) {
    if (!s.world) return std::nullopt;
    std::vector<Vec3> dirs;
    if (normal) dirs.insert(dirs.end(), {*normal, {-normal->x, -normal->y, -normal->z}});
    dirs.insert(dirs.end(), {{0, 0, 1}, {1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, -1}});
    // Half units: brush planes sit on whole units, and a point on one lands in
    // either leaf by a rounding (the page's camera is not bit-identical).
    for (const float d : {128.5f, 64.5f, 256.5f, 32.5f})
        for (const Vec3& dir : dirs) {
            const Vec3 p{target.x + dir.x * d, target.y + dir.y * d, target.z + dir.z * d};
            try {
                // Open at the point and 4 units around it on every axis: not against a wall.
                bool open = true;
                for (int k = 0; k < 7 && open; ++k) {
                    Vec3 q = p;
                    if (k > 0) (k <= 2 ? q.x : k <= 4 ? q.y : q.z) += (k % 2 ? 4.0f : -4.0f);
                    const bspkit::query::LeafInfo leaf = s.world->leaf_at(q);
                    open = leaf.leaf >= 0 && !(leaf.contents.flags & (bspkit::query::kSolid | bspkit::query::kSky));
                }
                if (!open) continue;
                const bspkit::query::TraceResult tr = s.world->trace(p, target);
                if (tr.startsolid || tr.fraction * d < d - 8) continue;  // something stands between
                return p;
            } catch (const bspkit::Error&) {
                return std::nullopt;
            }
        }
    return std::nullopt;
}

val check_map() {
    return guarded([&]() -> val {
        if (!g_session || !g_session->bsp) return error_value("bspkit: no map is open");
        Session& s = *g_session;
        const bspkit::Bsp& bsp = *s.bsp;
        const bspkit::CheckReport report = bspkit::check(bsp);
        const bspkit::CheckText text = bspkit::check_text(bsp.file_name(), bsp, report);
        // Positions: faces by their surfaces' centre, models by their bounds,
        // entities by their origin (or their brush model's bounds).
        std::vector<Box> face_box, model_box;
        std::vector<std::optional<Vec3>> face_normal;
        if (s.map) {
            face_box.resize(s.face_bound);
            face_normal.resize(s.face_bound);
            model_box.resize(s.map->models.size());
            for (size_t mi = 0; mi < s.map->models.size(); ++mi) {
                const auto& m = s.map->models[mi];
                for (const auto& surface : m.surfaces) {
                    if (surface.face >= 0 && size_t(surface.face) < face_normal.size() && !surface.vertices.empty() &&
                        !face_normal[size_t(surface.face)])
                        face_normal[size_t(surface.face)] = surface.vertices[0].normal;
                    for (const auto& v : surface.vertices) {
                        const Vec3 p{v.position.x + m.origin.x, v.position.y + m.origin.y, v.position.z + m.origin.z};
                        model_box[mi].add(p);
                        if (surface.face >= 0 && size_t(surface.face) < face_box.size()) face_box[size_t(surface.face)].add(p);
                    }
                }
            }
        }
        std::optional<bspkit::EntityLump> lump;
        try {
            lump = bspkit::read_entities(bsp);
        } catch (const bspkit::Error&) {
        }
        val out = val::array();
        size_t views = 0;
        for (size_t i = 0; i < report.findings.size(); ++i) {
            const bspkit::Finding& f = report.findings[i];
            val o = val::object();
            o.set("severity", std::string(bspkit::severity_word(f.severity)));
            o.set("lump", f.lump);
            o.set("record", double(f.record));
            o.set("field", f.field);
            o.set("offset", double(f.offset));
            o.set("message", f.message);
            o.set("line", text.lines[text.line_of_finding[i]]);
            std::optional<Vec3> position, normal;
            if (f.record >= 0) {
                const size_t r = size_t(f.record);
                if ((f.lump == "faces" || f.lump == "surfaces") && r < face_box.size() && !face_box[r].empty) {
                    position = face_box[r].centre();
                    normal = face_normal[r];
                } else if (f.lump == "models" && r < model_box.size() && !model_box[r].empty)
                    position = model_box[r].centre();
                else if (f.lump == "entities" && lump && r < lump->entities.size()) {
                    const bspkit::Entity& e = lump->entities[r];
                    if (const auto origin = e.find("origin")) position = bspkit::exporter::parse_vec3(*origin);
                    const int32_t bm = brush_model_of(e);
                    if (!position && bm >= 0 && size_t(bm) < model_box.size() && !model_box[size_t(bm)].empty)
                        position = model_box[size_t(bm)].centre();
                }
            }
            o.set("position", position ? vec3_value(*position) : val::null());
            // Up to 256 leaf / trace queries each: the first kViewPoints positioned findings get a view
            // point (a damaged map can have a finding per face); the page flies to the others' position.
            constexpr size_t kViewPoints = 1000;
            const std::optional<Vec3> view =
                position && views++ < kViewPoints ? view_point(s, *position, normal) : std::nullopt;
            o.set("view", view ? vec3_value(*view) : val::null());  // where the camera looks from
            out.call<void>("push", o);
        }
        return out;
    });
}

val close_map() {
    g_session.reset();
    return val::undefined();
}

}  // namespace

EMSCRIPTEN_BINDINGS(bspkit_viewer) {
    emscripten::function("_bspkitOpen", &open_map);
    emscripten::function("_bspkitScene", &scene);
    emscripten::function("_bspkitLocate", &locate);
    emscripten::function("_bspkitEntities", &entities);
    emscripten::function("_bspkitCheck", &check_map);
    emscripten::function("_bspkitClose", &close_map);
}
