// bspkit::survey: one record per map for archive-wide studies (see survey.hpp).
#include <bspkit/ascii.hpp>
#include <bspkit/survey.hpp>

#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/float_text.hpp>
#include <bspkit/model.hpp>

#include <nlohmann/json.hpp>

#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <mutex>
#include <new>
#include <set>
#include <system_error>
#include <tuple>

namespace bspkit::survey {
namespace {

void read_container(const Bsp& bsp, Record& r) {
    r.size = bsp.file_bytes().size();
    r.format = std::string(format_id(bsp.format()));
    r.variant = std::string(bsp.layout().variant);
    r.version = bsp.version();
    r.revision = bsp.revision();
    r.big_endian = bsp.byte_order() == ByteOrder::big;
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        const std::string name(bsp.lump_name(i));
        if (const auto n = bsp.record_count(i); n && bsp.record_size(i) > 0)
            r.lump_records[name] = *n;
        else
            r.lump_bytes[name] = bsp.entry(i).length > 0 ? uint64_t(bsp.entry(i).length) : 0;
    }
}

void read_check(const Bsp& bsp, Record& r) {
    const CheckReport report = check(bsp);
    r.errors = report.errors();
    r.warnings = report.warnings();
    r.infos = report.infos();
    std::map<std::tuple<std::string, std::string, std::string>, size_t> group_of;
    for (const Finding& f : report.findings) {
        auto key = std::make_tuple(std::string(severity_word(f.severity)), f.lump, f.message);
        const auto [it, fresh] = group_of.try_emplace(key, r.findings.size());
        if (fresh) r.findings.push_back({std::get<0>(key), f.lump, f.message, 0});
        ++r.findings[it->second].count;
    }
}

void read_entities(const Bsp& bsp, Record& r) {
    const EntityLump lump = bspkit::read_entities(bsp);
    r.entities = lump.entities.size();
    for (const Entity& e : lump.entities) ++r.entity_classes[bytes_to_utf8(e.get("classname"))];
}

void read_geometry(const Bsp& bsp, Record& r) {
    model::BuildOptions options;
    options.lightmaps = false;
    options.textures = false;
    const model::Map map = model::build(bsp, options);
    std::set<std::string> names;
    for (const auto& m : map.materials) names.insert(bytes_to_utf8(m.name));
    r.textures.assign(names.begin(), names.end());
    r.models = map.models.size();
    std::array<float, 3> lo{}, hi{};
    bool any = false;
    for (const auto& m : map.models) {
        r.surfaces += m.surfaces.size();
        for (const auto& s : m.surfaces) {
            r.triangles += s.indices.size() / 3;
            if (m.index != 0) continue;
            for (const auto& v : s.vertices) {
                const std::array<float, 3> p{v.position.x, v.position.y, v.position.z};
                for (int k = 0; k < 3; ++k) {
                    lo[k] = any ? std::min(lo[k], p[k]) : p[k];
                    hi[k] = any ? std::max(hi[k], p[k]) : p[k];
                }
                any = true;
            }
        }
    }
    if (any) r.mins = lo, r.maxs = hi;
}

}  // namespace

Record survey_file(const std::filesystem::path& path) {
    Record r;
    r.file = path.string();
    std::error_code ec;
    if (const auto n = std::filesystem::file_size(path, ec); !ec) r.size = n;
    // Each stage is independent of the later ones: a map whose entity lump is
    // broken still has its container facts and check findings in the table.
    try {
        const Bsp bsp = Bsp::open(path);
        read_container(bsp, r);
        read_check(bsp, r);
        read_entities(bsp, r);
        read_geometry(bsp, r);
    } catch (const Error& e) {
        r.error = e.what();
    } catch (const std::bad_alloc&) {
        r.error = r.file + ": out of memory";
    } catch (const std::exception& e) {  // filesystem errors and the like: still a row, not a crash
        r.error = r.file + ": " + e.what();
    }
    return r;
}

std::string to_json_line(const Record& r) {
    using nlohmann::ordered_json;
    ordered_json j;
    j["file"] = r.file;
    j["size"] = r.size;
    j["error"] = r.error.empty() ? ordered_json(nullptr) : ordered_json(r.error);
    j["format"] = r.format.empty() ? ordered_json(nullptr) : ordered_json(r.format);
    j["variant"] = r.variant;
    j["version"] = r.version ? ordered_json(*r.version) : ordered_json(nullptr);
    j["revision"] = r.revision;
    j["big_endian"] = r.big_endian;
    j["lump_records"] = r.lump_records;
    j["lump_bytes"] = r.lump_bytes;
    j["errors"] = r.errors;
    j["warnings"] = r.warnings;
    j["infos"] = r.infos;
    ordered_json findings = ordered_json::array();
    for (const auto& f : r.findings)
        findings.push_back({{"severity", f.severity}, {"lump", f.lump}, {"message", f.message}, {"count", f.count}});
    j["findings"] = findings;
    j["entities"] = r.entities;
    j["entity_classes"] = r.entity_classes;
    j["textures"] = r.textures;
    j["models"] = r.models;
    j["surfaces"] = r.surfaces;
    j["triangles"] = r.triangles;
    // Bounds as each float's shortest text (float_text), as the CLI's JSON prints map data.
    const auto bound = [](const std::optional<std::array<float, 3>>& v) {
        return v ? ordered_json{float_as_json((*v)[0]), float_as_json((*v)[1]), float_as_json((*v)[2])}
                 : ordered_json(nullptr);
    };
    j["mins"] = bound(r.mins);
    j["maxs"] = bound(r.maxs);
    // Messages hold raw bytes of the file now and then (names from a damaged
    // lump): replace invalid UTF-8 rather than throw.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<Record> survey_files(const std::vector<std::filesystem::path>& maps, unsigned threads,
                                 const std::function<void(size_t done)>& done) {
    std::vector<Record> records(maps.size());
    std::atomic<size_t> next{0};
    size_t finished = 0;
    std::mutex report;
    const unsigned count = unsigned(std::min<size_t>(bspkit::detail::thread_count(threads), std::max<size_t>(1, maps.size())));
    bspkit::detail::run_on_threads(count, [&] {
        for (size_t i; (i = next.fetch_add(1)) < maps.size();) {
            records[i] = survey_file(maps[i]);
            std::lock_guard lock(report);
            ++finished;
            if (done) done(finished);
        }
    });
    return records;
}

std::vector<std::filesystem::path> find_maps(const std::vector<std::filesystem::path>& roots) {
    namespace fs = std::filesystem;
    std::vector<fs::path> out;
    auto is_bsp = [](const fs::path& p) {
        const std::string ext = ascii_lower(p.extension().string());
        return ext == ".bsp";
    };
    for (const fs::path& root : roots) {
        std::error_code ec;
        if (!fs::is_directory(root, ec)) {
            if (!fs::exists(root, ec)) throw Error({root.string(), "", -1}, "no such file or directory");
            out.push_back(root);
            continue;
        }
        fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
        if (ec) throw Error({root.string(), "", -1}, "cannot read the directory: " + ec.message());
        for (; it != end; it.increment(ec)) {
            if (ec) throw Error({root.string(), "", -1}, "cannot read the directory: " + ec.message());
            std::error_code fec;
            if (it->is_regular_file(fec) && is_bsp(it->path())) out.push_back(it->path());
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace bspkit::survey
