// bspkit._bspkit: the pybind11 front end over the C++ library (issue 13).
// The pure-Python package (python/bspkit/__init__.py) wraps these classes in
// the public API; what is here is thin: convert, release the GIL, keep the
// owner of every buffer alive (arrays and memoryviews have the Python object
// that owns their memory as their base), and turn bspkit::Error into
// bspkit.BspError with file / lump / offset attributes.
#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/decompile.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/export.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/formats/source_props.hpp>
#include <bspkit/mapfile.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>
#include <bspkit/survey.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/version.hpp>
#include <bspkit/visibility.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>

namespace py = pybind11;
using namespace bspkit;

namespace {

py::object g_bsp_error;  // bspkit.BspError (a ValueError)

py::object none_if_negative(int64_t v) { return v < 0 ? py::none() : py::object(py::int_(v)); }

/// The C++ state behind one Python Bsp: the map, and what is built from it on
/// demand (the query world, the entity lump, the pakfile being edited).
struct Map {
    Bsp bsp;
    std::mutex lock;  // guards the lazily built members (built with the GIL released)
    // Serialises edits (entities, pakfile) with saves, which run with the GIL released: a Python
    // thread must not replace a lump while another one writes the file. Taken before `lock`.
    std::mutex edit;
    std::unique_ptr<query::World> world;
    std::optional<EntityLump> entities;
    std::optional<source::Pakfile> pak;
    std::optional<Visibility> vis;

    explicit Map(Bsp b) : bsp(std::move(b)) {}

    const query::World& get_world() {
        std::lock_guard<std::mutex> g(lock);
        if (!world) world = std::make_unique<query::World>(query::World::prepare(bsp));
        return *world;
    }
    EntityLump& get_entities() {
        std::lock_guard<std::mutex> g(lock);
        if (!entities) entities = read_entities(bsp);
        return *entities;
    }
    source::Pakfile& get_pak() {
        std::lock_guard<std::mutex> g(lock);
        if (!pak) pak = source::Pakfile::read(bsp);
        return *pak;
    }
    const Visibility& get_vis() {
        std::lock_guard<std::mutex> g(lock);
        if (!vis) vis = Visibility::of(bsp);
        return *vis;
    }
};

/// A read-only uint8 array over `bytes` whose base is `owner`.
py::array readonly_bytes(ByteSpan bytes, py::handle owner) {
    py::array a(py::dtype::of<uint8_t>(), {py::ssize_t(bytes.size())}, {py::ssize_t(1)}, bytes.data(), owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

template <class T>
py::array view(const std::vector<T>& v, std::vector<py::ssize_t> shape, py::handle owner) {
    using Scalar = std::remove_cv_t<T>;
    std::vector<py::ssize_t> strides(shape.size());
    py::ssize_t s = sizeof(Scalar);
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = s;
        s *= shape[i];
    }
    return py::array(py::dtype::of<Scalar>(), shape, strides, v.data(), owner);
}

// --- the model as flat arrays --------------------------------------------

/// Every triangle surface of a model::Map, concatenated into flat arrays (one
/// pass, done with the GIL released); numpy views share these vectors.
struct Mesh {
    std::vector<float> positions, normals, uv, lightmap_uv;  // (V,3) (V,3) (V,2) (V,2)
    std::vector<uint8_t> colors;                             // (V,4)
    std::vector<uint32_t> indices;                           // (T,3), into the global vertex arrays
    // per surface
    std::vector<int32_t> surface_material, surface_model, surface_face, surface_lightmap;
    std::vector<uint8_t> surface_kind;
    std::vector<uint32_t> surface_first_vertex, surface_vertex_count, surface_first_triangle, surface_triangle_count;
    std::vector<int32_t> triangle_surface;  // (T,)
    model::Map map;                         // materials, textures, lightmaps, entities, props
    std::vector<std::vector<uint8_t>> lightmap_rgba;  // pages as RGBA
    std::vector<textures::Missing> missing;           // materials the search (wads, game_dirs) did not find

    explicit Mesh(model::Map m) : map(std::move(m)) {
        size_t nv = 0, nt = 0, ns = 0;
        for (const auto& mo : map.models)
            for (const auto& s : mo.surfaces) nv += s.vertices.size(), nt += s.indices.size() / 3, ++ns;
        positions.reserve(nv * 3), normals.reserve(nv * 3), uv.reserve(nv * 2), lightmap_uv.reserve(nv * 2);
        colors.reserve(nv * 4), indices.reserve(nt * 3), triangle_surface.reserve(nt);
        for (const auto& mo : map.models) {
            for (const auto& s : mo.surfaces) {
                const uint32_t base = uint32_t(positions.size() / 3);
                const int32_t sid = int32_t(surface_material.size());
                surface_material.push_back(int32_t(s.material));
                surface_model.push_back(int32_t(mo.index));
                surface_face.push_back(int32_t(s.face));
                surface_lightmap.push_back(s.lightmap);
                surface_kind.push_back(uint8_t(s.kind));
                surface_first_vertex.push_back(base);
                surface_vertex_count.push_back(uint32_t(s.vertices.size()));
                surface_first_triangle.push_back(uint32_t(indices.size() / 3));
                surface_triangle_count.push_back(uint32_t(s.indices.size() / 3));
                for (const auto& v : s.vertices) {
                    positions.insert(positions.end(), {v.position.x, v.position.y, v.position.z});
                    normals.insert(normals.end(), {v.normal.x, v.normal.y, v.normal.z});
                    uv.insert(uv.end(), {v.uv.x, v.uv.y});
                    lightmap_uv.insert(lightmap_uv.end(), {v.lightmap_uv.x, v.lightmap_uv.y});
                    colors.insert(colors.end(), v.color.begin(), v.color.end());
                }
                const size_t whole = s.indices.size() / 3 * 3;
                for (size_t i = 0; i < whole; ++i) indices.push_back(base + s.indices[i]);
                triangle_surface.insert(triangle_surface.end(), whole / 3, sid);
            }
            // the vertices now live in the flat arrays
        }
        for (auto& mo : map.models)
            for (auto& s : mo.surfaces) {
                std::vector<model::Vertex>().swap(s.vertices);
                std::vector<uint32_t>().swap(s.indices);
            }
        for (const auto& page : map.lightmaps) {
            std::vector<uint8_t> rgba(size_t(page.width) * page.height * 4, 255);
            for (size_t p = 0; p < size_t(page.width) * page.height && p * 3 + 2 < page.rgb.size(); ++p)
                std::memcpy(&rgba[p * 4], &page.rgb[p * 3], 3);
            lightmap_rgba.push_back(std::move(rgba));
        }
    }
};

model::BuildOptions build_options(bool lightmaps, bool textures, bool all_models, int patch_level, bool hdr) {
    model::BuildOptions o;
    o.lightmaps = lightmaps;
    o.textures = textures;
    o.all_models = all_models;
    o.patch_level = patch_level;
    o.hdr_lightmaps = hdr;
    return o;
}

// --- the texture search: `bspkit export --wad / --game-dir` -----------------

/// The WADs (files or folders) and game folders to look in for what the map
/// names but does not hold: its textures (WAD, WAL, Quake 3 images and
/// shaders, VMT/VTF, in archives too) and Quake 3 lightmaps kept outside it.
struct Search {
    std::vector<std::filesystem::path> wads, game_dirs;
    bool given() const { return !wads.empty() || !game_dirs.empty(); }
};

/// textures::resolve() into `map` when the search was given (`textures`
/// false: only the external lightmaps, as the CLI's lightmaps verb); the
/// archives it could not read join the map's diagnostics.
textures::Resolved resolve_into(model::Map& map, const Bsp& bsp, const Search& search, bool textures,
                                bool sky_box = false) {
    if (!search.given()) return {};
    textures::SearchPath path;
    path.wads = search.wads;
    path.game_dirs = search.game_dirs;
    path.textures = textures;
    path.sky_box = sky_box;
    textures::Resolved r = textures::resolve(map, bsp, path);
    map.diagnostics.insert(map.diagnostics.end(), r.diagnostics.begin(), r.diagnostics.end());
    return r;
}

/// The misses as `bspkit export --json` lists them ("problem": None when the
/// file was not found at all).
py::list missing_list(const std::vector<textures::Missing>& missing) {
    py::list out;
    for (const textures::Missing& m : missing)
        out.append(py::dict(py::arg("material") = bytes_to_utf8(m.material), py::arg("searched") = m.searched,
                            py::arg("problem") = m.problem.empty() ? py::object(py::none()) : py::str(m.problem)));
    return out;
}

py::list diagnostics_list(const std::vector<Diagnostic>& diagnostics) {
    py::list out;
    for (const Diagnostic& d : diagnostics)
        out.append(py::dict(py::arg("severity") = severity_word(d.severity), py::arg("lump") = d.lump,
                            py::arg("offset") = none_if_negative(d.offset), py::arg("message") = d.message));
    return out;
}

// --- traces ---------------------------------------------------------------

#pragma pack(push, 1)
struct TraceRow {
    float fraction;
    float end[3];
    float normal[3];
    float dist;
    bool hit, startsolid, allsolid, triangle, inopen, inwater;
    int32_t contents;
    uint32_t content_flags, surface_flags;
    int32_t model, brush;
};
#pragma pack(pop)

py::dtype trace_dtype() {
    py::list names, formats, offsets;
    auto add = [&](const char* n, const char* f, size_t off) {
        names.append(n), formats.append(f), offsets.append(off);
    };
    add("fraction", "<f4", offsetof(TraceRow, fraction));
    add("end", "(3,)<f4", offsetof(TraceRow, end));
    add("normal", "(3,)<f4", offsetof(TraceRow, normal));
    add("dist", "<f4", offsetof(TraceRow, dist));
    add("hit", "?", offsetof(TraceRow, hit));
    add("startsolid", "?", offsetof(TraceRow, startsolid));
    add("allsolid", "?", offsetof(TraceRow, allsolid));
    add("triangle", "?", offsetof(TraceRow, triangle));
    add("inopen", "?", offsetof(TraceRow, inopen));
    add("inwater", "?", offsetof(TraceRow, inwater));
    add("contents", "<i4", offsetof(TraceRow, contents));
    add("content_flags", "<u4", offsetof(TraceRow, content_flags));
    add("surface_flags", "<u4", offsetof(TraceRow, surface_flags));
    add("model", "<i4", offsetof(TraceRow, model));
    add("brush", "<i4", offsetof(TraceRow, brush));
    py::dict d;
    d["names"] = names, d["formats"] = formats, d["offsets"] = offsets, d["itemsize"] = sizeof(TraceRow);
    return py::dtype::from_args(d);
}

std::vector<query::Vec3> points(const py::array_t<float, py::array::c_style | py::array::forcecast>& a, const char* what) {
    if (a.ndim() != 2 || a.shape(1) != 3)
        throw py::value_error(std::string(what) + " must be an (N, 3) array");
    std::vector<query::Vec3> out(size_t(a.shape(0)));
    const float* p = a.data();
    for (size_t i = 0; i < out.size(); ++i) out[i] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
    return out;
}

query::TraceOptions trace_options(int hull, std::optional<std::array<float, 3>> mins,
                                  std::optional<std::array<float, 3>> maxs, bool models, uint32_t mask) {
    query::TraceOptions o;
    o.hull = hull;
    o.models = models;
    o.mask = mask;
    if (mins.has_value() != maxs.has_value()) throw py::value_error("mins and maxs go together");
    if (mins) {
        o.mins = {(*mins)[0], (*mins)[1], (*mins)[2]};
        o.maxs = {(*maxs)[0], (*maxs)[1], (*maxs)[2]};
        if (o.mins.x > o.maxs.x || o.mins.y > o.maxs.y || o.mins.z > o.maxs.z)
            throw py::value_error("mins must not exceed maxs");
    }
    return o;
}

/// The bytes of any buffer (bytes, bytearray, memoryview, numpy array), in C order; a
/// non-contiguous view (a strided slice) is copied through bytes() rather than read linearly.
Bytes buffer_bytes(const py::buffer& data) {
    const py::buffer_info info = data.request();
    bool contiguous = true;
    py::ssize_t expect = info.itemsize;
    for (py::ssize_t i = info.ndim - 1; i >= 0; --i) {
        if (info.shape[size_t(i)] > 1 && info.strides[size_t(i)] != expect) contiguous = false;
        expect *= info.shape[size_t(i)];
    }
    if (!contiguous) {
        const std::string copy = py::bytes(py::module_::import("builtins").attr("bytes")(py::memoryview(data)));
        return Bytes(copy.begin(), copy.end());
    }
    const auto* p = static_cast<const uint8_t*>(info.ptr);
    return Bytes(p, p + info.size * info.itemsize);
}

py::dict props_dict(const source::StaticPropsLump& lump, const source::StaticProp& p) {
    py::dict d;
    d["model"] = p.prop_type < lump.names.size() ? py::object(py::str(bytes_to_utf8(lump.names[p.prop_type])))
                                                 : py::object(py::none());
    d["prop_type"] = p.prop_type;
    d["origin"] = py::make_tuple(p.origin[0], p.origin[1], p.origin[2]);
    d["angles"] = py::make_tuple(p.angles[0], p.angles[1], p.angles[2]);
    d["skin"] = p.skin;
    d["solid"] = p.solid;
    d["flags"] = p.flags;
    d["first_leaf"] = p.first_leaf;
    d["leaf_count"] = p.leaf_count;
    d["fade_min_dist"] = p.fade_min_dist;
    d["fade_max_dist"] = p.fade_max_dist;
    d["scale"] = py::make_tuple(p.scale[0], p.scale[1], p.scale[2]);
    return d;
}


}  // namespace

PYBIND11_MODULE(_bspkit, m) {
    m.doc() = "bspkit C++ core (use the bspkit package, not this module directly)";
    m.attr("__version__") = std::string(kVersion);

    g_bsp_error = py::reinterpret_steal<py::object>(
        PyErr_NewException("bspkit.BspError", PyExc_ValueError, nullptr));
    g_bsp_error.attr("__doc__") =
        "Bad input: a file bspkit cannot read or a map with broken data. Attributes: file, lump "
        "(\"\" when none), offset (absolute byte offset, or None), detail (the message without the location).";
    m.attr("BspError") = g_bsp_error;
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const Error& e) {
            py::object err = g_bsp_error(std::string(e.what()));
            err.attr("file") = e.where().file;
            err.attr("lump") = e.where().lump;
            err.attr("offset") = none_if_negative(e.where().offset);
            err.attr("detail") = e.detail();
            PyErr_SetObject(g_bsp_error.ptr(), err.ptr());
        } catch (const std::filesystem::filesystem_error& e) {
            PyErr_SetString(PyExc_OSError, e.what());
        }
    });

    py::class_<Map, std::shared_ptr<Map>> bsp(m, "_Bsp");
    m.def(
        "open_path",
        [](const std::filesystem::path& path) {
            py::gil_scoped_release nogil;
            return std::make_shared<Map>(Bsp::open(path));
        },
        py::arg("path"));
    m.def(
        "open_bytes",
        [](const py::buffer& data, const std::string& name) {
            Bytes bytes = buffer_bytes(data);
            py::gil_scoped_release nogil;
            return std::make_shared<Map>(Bsp::parse(std::move(bytes), name));
        },
        py::arg("data"), py::arg("name") = "<bytes>");

    bsp.def_property_readonly("file_name", [](const Map& s) { return s.bsp.file_name(); })
        .def_property_readonly("format", [](const Map& s) { return std::string(format_id(s.bsp.format())); })
        .def_property_readonly("variant", [](const Map& s) { return std::string(s.bsp.layout().variant); })
        .def_property_readonly("version", [](const Map& s) { return s.bsp.version(); })
        .def_property_readonly("revision", [](const Map& s) { return s.bsp.revision(); })
        .def_property_readonly("big_endian", [](const Map& s) { return s.bsp.byte_order() == ByteOrder::big; })
        .def_property_readonly("size", [](const Map& s) { return s.bsp.file_bytes().size(); })
        .def("diagnostics", [](const Map& s) { return diagnostics_list(s.bsp.diagnostics()); })
        .def("lump_table",
             [](const Map& s) {
                 py::list out;
                 for (size_t i = 0; i < s.bsp.lump_count(); ++i) {
                     const LumpEntry& e = s.bsp.entry(i);
                     const auto count = s.bsp.record_count(i);
                     out.append(py::make_tuple(i, std::string(s.bsp.lump_name(i)), e.offset, e.length, e.version,
                                               e.fourcc, s.bsp.compressed(i), s.bsp.record_size(i),
                                               count ? py::object(py::int_(*count)) : py::object(py::none())));
                 }
                 return out;
             })
        .def(
            "lump_data",
            [](py::object self, size_t i, bool stored) -> py::object {
                Map& s = self.cast<Map&>();
                if (i >= s.bsp.lump_count()) throw py::index_error("lump index out of range");
                if (s.bsp.replaced(i) && !stored) {  // a replacement may be replaced again: hand out a copy
                    const ByteSpan b = s.bsp.decoded(i);
                    return py::memoryview(py::bytes(reinterpret_cast<const char*>(b.data()), b.size()));
                }
                ByteSpan b;
                {
                    py::gil_scoped_release nogil;
                    b = stored ? s.bsp.stored(i) : s.bsp.decoded(i);
                }
                return py::memoryview(readonly_bytes(b, self));
            },
            py::arg("index"), py::arg("stored") = false)
        .def("file_data", [](py::object self) { return py::memoryview(readonly_bytes(self.cast<Map&>().bsp.file_bytes(), self)); })
        .def("entities",
             [](Map& s) {
                 const EntityLump* lump;
                 {
                     py::gil_scoped_release nogil;
                     lump = &s.get_entities();
                 }
                 py::list out;
                 for (const Entity& e : lump->entities) {
                     py::list pairs;
                     for (const KeyValue& kv : e.pairs)
                         pairs.append(py::make_tuple(bytes_to_utf8(kv.key), bytes_to_utf8(kv.value)));
                     out.append(py::make_tuple(pairs, none_if_negative(e.offset)));
                 }
                 return out;
             })
        .def(
            "set_entities",
            [](Map& s, const std::vector<std::vector<std::pair<std::string, std::string>>>& list) {
                py::gil_scoped_release nogil;  // the list is already converted to C++
                std::lock_guard<std::mutex> g(s.edit);
                EntityLump& lump = s.get_entities();
                std::vector<Entity> ents;
                ents.reserve(list.size());
                for (const auto& pairs : list) {
                    Entity e;
                    for (const auto& [k, v] : pairs) e.pairs.push_back({utf8_to_bytes(k), utf8_to_bytes(v)});
                    ents.push_back(std::move(e));
                }
                EntityLump edited = lump;
                edited.entities = std::move(ents);
                const bool changed = write_entities(s.bsp, edited);
                lump = std::move(edited);
                return changed;
            },
            py::arg("entities"))
        .def(
            "save",
            [](Map& s, const std::filesystem::path& path, int compression) {
                SaveOptions o;
                o.compression = compression == 1 ? Compression::compress
                                : compression == 2 ? Compression::decompress
                                                   : Compression::keep;
                py::gil_scoped_release nogil;
                std::lock_guard<std::mutex> g(s.edit);
                if (s.pak && s.pak->modified()) s.pak->write_to(s.bsp);
                s.bsp.save(path, o);
            },
            py::arg("path"), py::arg("compression") = 0)
        .def("serialize",
             [](Map& s, int compression) {
                 SaveOptions o;
                 o.compression = compression == 1 ? Compression::compress
                                 : compression == 2 ? Compression::decompress
                                                    : Compression::keep;
                 Bytes out;
                 {
                     py::gil_scoped_release nogil;
                     std::lock_guard<std::mutex> g(s.edit);
                     if (s.pak && s.pak->modified()) s.pak->write_to(s.bsp);
                     out = s.bsp.serialize(o);
                 }
                 return py::bytes(reinterpret_cast<const char*>(out.data()), out.size());
             }, py::arg("compression") = 0)
        .def("check",
             [](Map& s) {
                 CheckReport report;
                 {
                     py::gil_scoped_release nogil;
                     report = check(s.bsp);
                 }
                 py::list out;
                 for (const Finding& f : report.findings)
                     out.append(py::dict(py::arg("severity") = severity_word(f.severity), py::arg("lump") = f.lump,
                                         py::arg("record") = none_if_negative(f.record), py::arg("field") = f.field,
                                         py::arg("message") = f.message,
                                         py::arg("offset") = none_if_negative(f.offset)));
                 return out;
             })
        .def(
            "model",
            [](Map& s, bool lightmaps, bool textures, bool all_models, int patch_level, bool hdr,
               const std::vector<std::filesystem::path>& wads, const std::vector<std::filesystem::path>& game_dirs) {
                py::gil_scoped_release nogil;
                model::Map map = model::build(s.bsp, build_options(lightmaps, textures, all_models, patch_level, hdr));
                const textures::Resolved found = resolve_into(map, s.bsp, {wads, game_dirs}, textures);
                auto mesh = std::make_shared<Mesh>(std::move(map));
                mesh->missing = found.missing;
                return mesh;
            },
            py::arg("lightmaps") = true, py::arg("textures") = true, py::arg("all_models") = true,
            py::arg("patch_level") = -1, py::arg("hdr") = false, py::arg("wads") = std::vector<std::filesystem::path>{},
            py::arg("game_dirs") = std::vector<std::filesystem::path>{})
        .def(
            "trace",
            [](Map& s, const py::array_t<float, py::array::c_style | py::array::forcecast>& starts,
               const py::array_t<float, py::array::c_style | py::array::forcecast>& ends, int hull,
               std::optional<std::array<float, 3>> mins, std::optional<std::array<float, 3>> maxs, bool models,
               uint32_t mask, unsigned threads) {
                const auto a = points(starts, "starts"), b = points(ends, "ends");
                if (a.size() != b.size()) throw py::value_error("starts and ends must have the same length");
                const query::TraceOptions opt = trace_options(hull, mins, maxs, models, mask);
                py::array out(trace_dtype(), std::vector<py::ssize_t>{py::ssize_t(a.size())});
                auto* rows = static_cast<TraceRow*>(out.mutable_data());
                {
                    py::gil_scoped_release nogil;
                    const query::World& world = s.get_world();
                    std::vector<query::Ray> rays(a.size());
                    for (size_t i = 0; i < a.size(); ++i) rays[i] = {a[i], b[i]};
                    std::vector<query::TraceResult> res(a.size());
                    // A ray that cannot be traced raises for the call, naming that ray (the first
                    // such) and how many there were; the others are traced first all the same.
                    std::vector<std::string> errors(a.size());
                    if (const size_t failed = world.try_trace(rays, res, errors, opt, threads)) {
                        const size_t i = size_t(std::find_if(errors.begin(), errors.end(),
                                                             [](const std::string& e) { return !e.empty(); }) -
                                                errors.begin());
                        try {
                            (void)world.trace(rays[i].start, rays[i].end, opt);
                        } catch (const Error& e) {
                            throw Error(e.where(), "ray " + std::to_string(i) + ": " + e.detail() + " (" +
                                                       std::to_string(failed) + " of " + std::to_string(a.size()) +
                                                       " rays could not be traced)");
                        }
                        throw std::runtime_error("ray " + std::to_string(i) + ": " + errors[i]);  // traces are deterministic: not reached
                    }
                    for (size_t i = 0; i < res.size(); ++i) {
                        const auto& r = res[i];
                        TraceRow& t = rows[i];
                        t.fraction = r.fraction;
                        t.end[0] = r.end.x, t.end[1] = r.end.y, t.end[2] = r.end.z;
                        t.normal[0] = r.normal.x, t.normal[1] = r.normal.y, t.normal[2] = r.normal.z;
                        t.dist = r.dist;
                        t.hit = r.hit(), t.startsolid = r.startsolid, t.allsolid = r.allsolid, t.triangle = r.triangle;
                        t.inopen = r.inopen, t.inwater = r.inwater;
                        t.contents = r.contents.raw, t.content_flags = r.contents.flags;
                        t.surface_flags = r.surface_flags;
                        t.model = r.model, t.brush = r.brush;
                    }
                }
                return out;
            },
            py::arg("starts"), py::arg("ends"), py::arg("hull") = -1, py::arg("mins") = py::none(),
            py::arg("maxs") = py::none(), py::arg("models") = false, py::arg("mask") = 0, py::arg("threads") = 0)
        .def(
            "leaf_at",
            [](Map& s, std::array<float, 3> p) {
                query::LeafInfo leaf;
                {
                    py::gil_scoped_release nogil;
                    leaf = s.get_world().leaf_at({p[0], p[1], p[2]});
                }
                return py::dict(py::arg("leaf") = leaf.leaf, py::arg("cluster") = none_if_negative(leaf.cluster),
                                py::arg("area") = none_if_negative(leaf.area),
                                py::arg("contents") = leaf.contents.raw,
                                py::arg("content_flags") = query::content_flag_names(leaf.contents.flags));
            },
            py::arg("point"))
        .def(
            "visible",
            [](Map& s, std::array<float, 3> a, std::array<float, 3> b) {
                query::Visible v;
                std::optional<std::string> vis_error;  // as `bspkit visible --json` gives it
                {
                    py::gil_scoped_release nogil;
                    const query::World& world = s.get_world();
                    v = world.visible({a[0], a[1], a[2]}, {b[0], b[1], b[2]});
                    if (world.vis_error()) vis_error = world.vis_error()->message;
                }
                const auto place = [](const query::LeafInfo& l) {
                    return py::dict(py::arg("leaf") = l.leaf, py::arg("cluster") = none_if_negative(l.cluster));
                };
                const auto& r = v.sight;
                return py::dict(py::arg("pvs") = v.pvs, py::arg("line_of_sight") = v.line_of_sight,
                                py::arg("visible") = v.visible(), py::arg("vis_error") = vis_error ? py::object(py::str(*vis_error)) : py::object(py::none()),
                                py::arg("from") = place(v.from),
                                py::arg("to") = place(v.to),
                                py::arg("sight") = py::dict(py::arg("fraction") = r.fraction,
                                                            py::arg("end") = py::make_tuple(r.end.x, r.end.y, r.end.z),
                                                            py::arg("startsolid") = r.startsolid,
                                                            py::arg("inopen") = r.inopen,
                                                            py::arg("inwater") = r.inwater));
            },
            py::arg("a"), py::arg("b"))
        // visibility
        .def("vis_info",
             [](Map& s) {
                 const Visibility& v = s.get_vis();
                 static const char* names[] = {"none", "quake_leaf_rle", "cluster_rle", "cluster_raw", "nightfire_leaf"};
                 return py::dict(py::arg("clusters") = v.clusters(), py::arg("encoding") = names[int(v.encoding())],
                                 py::arg("pas_stored") = v.pas_stored(), py::arg("leaf_based") = v.leaf_based(),
                                 py::arg("leaves") = v.leaf_count());
             })
        .def(
            "vis_row",
            [](Map& s, int64_t cluster, bool pas) {
                const Visibility& v = s.get_vis();
                if (cluster < 0 || size_t(cluster) >= v.clusters()) throw py::index_error("cluster out of range");
                Bytes row;
                {
                    py::gil_scoped_release nogil;
                    row = pas ? v.pas(size_t(cluster)) : v.pvs(size_t(cluster));
                }
                py::array_t<bool> out(py::ssize_t(v.clusters()));
                auto* o = out.mutable_data();
                for (size_t c = 0; c < v.clusters(); ++c) o[c] = (row[c >> 3] >> (c & 7)) & 1;
                return out;
            },
            py::arg("cluster"), py::arg("pas") = false)
        .def(
            "cluster_of_leaf",
            [](Map& s, size_t leaf) -> py::object {
                const auto c = s.get_vis().cluster_of_leaf(leaf);
                return c ? py::object(py::int_(*c)) : py::object(py::none());
            },
            py::arg("leaf"))
        // Source pakfile (lump 40)
        .def("pak_list",
             [](Map& s) {
                 py::list out;
                 for (const auto& e : s.get_pak().entries())
                     out.append(py::dict(py::arg("name") = bytes_to_utf8(e.name), py::arg("size") = e.size,
                                         py::arg("compressed_size") = e.compressed_size,
                                         py::arg("method") = e.method_name(), py::arg("crc32") = e.crc32));
                 return out;
             })
        .def(
            "pak_read",
            [](Map& s, const std::string& name) {
                auto& pak = s.get_pak();
                const auto i = pak.find(utf8_to_bytes(name));
                if (!i) throw py::key_error(name);
                Bytes data;
                {
                    py::gil_scoped_release nogil;
                    data = pak.extract(*i);
                }
                return py::bytes(reinterpret_cast<const char*>(data.data()), data.size());
            },
            py::arg("name"))
        .def(
            "pak_add",
            [](Map& s, const std::string& name, const py::buffer& data) {
                std::string why;
                const std::string raw = utf8_to_bytes(name);
                if (!source::entry_path(raw, &why) || raw.back() == '/' || raw.back() == '\\')
                    throw py::value_error("cannot store '" + name + "' in a pakfile: " +
                                          (why.empty() ? "a file name must not end with a slash" : why));
                Bytes bytes = buffer_bytes(data);
                py::gil_scoped_release nogil;
                std::lock_guard<std::mutex> g(s.edit);
                s.get_pak().add(raw, std::move(bytes));
            },
            py::arg("name"), py::arg("data"))
        .def(
            "pak_remove",
            [](Map& s, const std::string& pattern) {
                py::gil_scoped_release nogil;
                std::lock_guard<std::mutex> g(s.edit);
                return s.get_pak().remove_matching(utf8_to_bytes(pattern));
            },
            py::arg("pattern"))
        .def("static_props",
             [](Map& s) -> py::object {
                 std::optional<source::StaticPropsLump> lump;
                 {
                     py::gil_scoped_release nogil;
                     lump = source::read_static_props(s.bsp);
                 }
                 if (!lump) return py::none();
                 py::list out;
                 for (const auto& p : lump->props) out.append(props_dict(*lump, p));
                 return out;
             })
        .def(
            "export",
            [](Map& s, const std::filesystem::path& path, const std::string& lighting, bool all_models, bool textures,
               bool sky, bool tools, float scale, bool y_up, const std::vector<std::string>& skip,
               const std::vector<std::filesystem::path>& wads, const std::vector<std::filesystem::path>& game_dirs) {
                const auto format = exporter::format_for_path(path);
                if (!format) throw py::value_error("the output must end in .glb, .gltf or .obj");
                if (!(scale > 0)) throw py::value_error("scale must be positive");
                exporter::Options o;
                o.lighting = lighting == "none"       ? exporter::Lighting::none
                             : lighting == "separate" ? exporter::Lighting::separate
                             : lighting == "baked"    ? exporter::Lighting::baked
                                                      : throw py::value_error("lighting: baked, separate or none");
                o.all_models = all_models, o.textures = textures, o.sky = sky, o.tool_surfaces = tools;
                o.scale = scale, o.y_up = y_up, o.skip_classes = skip;
                py::gil_scoped_release nogil;
                model::BuildOptions b = build_options(o.lighting == exporter::Lighting::baked ||
                                                          (o.lighting == exporter::Lighting::separate &&
                                                           *format != exporter::FileFormat::obj),
                                                      textures, all_models, -1, false);
                model::Map map = model::build(s.bsp, b);
                const textures::Resolved found = resolve_into(map, s.bsp, {wads, game_dirs}, textures);
                const exporter::Summary sum = exporter::write(map, path, o);
                py::gil_scoped_acquire gil;
                py::list files;
                for (const auto& f : sum.files) files.append(f.string());
                return py::dict(py::arg("files") = files, py::arg("models") = sum.models,
                                py::arg("triangles") = sum.triangles, py::arg("vertices") = sum.vertices,
                                py::arg("materials") = sum.materials, py::arg("images") = sum.images,
                                py::arg("skipped_surfaces") = sum.skipped_surfaces,
                                py::arg("missing") = missing_list(found.missing),
                                py::arg("lightmap_pages") = found.lightmap_pages,
                                py::arg("warnings") = diagnostics_list(map.diagnostics));
            },
            py::arg("path"), py::arg("lighting") = "baked", py::arg("all_models") = true, py::arg("textures") = true,
            py::arg("sky") = true, py::arg("tools") = false, py::arg("scale") = 1.0f, py::arg("y_up") = false,
            py::arg("skip") = std::vector<std::string>{}, py::arg("wads") = std::vector<std::filesystem::path>{},
            py::arg("game_dirs") = std::vector<std::filesystem::path>{});

    // decompile(path, ...) -> counts: `bspkit decompile` (text written to a temporary file, then renamed).
    m.def(
        "_decompile",
        [](Map& s, const std::filesystem::path& path, const std::string& format, const std::string& brushes,
           bool merge) {
            decompile::Options options;
            if (!format.empty()) {
                options.dialect = mapfile::dialect_from_name(format);
                if (!options.dialect) throw py::value_error("unknown format '" + format + "'");
            } else if (path.extension() == ".vmf") {
                options.dialect = mapfile::Dialect::vmf;
            }
            if (brushes != "lumps" && brushes != "faces") throw py::value_error("brushes: lumps or faces");
            options.brushes = brushes == "faces" ? decompile::BrushSource::faces : decompile::BrushSource::lumps;
            options.merge = merge;
            decompile::Stats st;
            std::vector<std::string> notes;
            {
                py::gil_scoped_release nogil;
                std::lock_guard<std::mutex> g(s.edit);
                const decompile::Result r = decompile::decompile(s.bsp, options);
                const std::string text = mapfile::write(r.map);
                write_file_atomic(path, ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
                st = r.stats;
                notes = r.notes;
            }
            return py::dict(py::arg("entities") = st.entities, py::arg("brushes") = st.brushes,
                            py::arg("sides") = st.sides, py::arg("displacements") = st.displacements,
                            py::arg("patches") = st.patches, py::arg("props") = st.props,
                            py::arg("overlays") = st.overlays, py::arg("cubemaps") = st.cubemaps,
                            py::arg("notes") = notes);
        },
        py::arg("map"), py::arg("path"), py::arg("format"), py::arg("brushes"), py::arg("merge"));

    // render(...) -> (h, w, 4) uint8: the `bspkit render` picture, as an array.
    m.def(
        "_render",
        [](Map& s, uint32_t width, uint32_t height, const std::string& view, std::optional<std::vector<float>> camera,
           std::optional<std::vector<float>> angles, float fov, bool pvs, bool textures, bool lightmaps,
           unsigned threads, const std::vector<std::filesystem::path>& wads,
           const std::vector<std::filesystem::path>& game_dirs) {
            if (width == 0 || height == 0 || width > 16384 || height > 16384)
                throw py::value_error("size: width and height must be 1-16384");
            if (camera && camera->size() != 3) throw py::value_error("camera: three numbers X, Y, Z");
            if (angles && (angles->size() < 2 || angles->size() > 3))
                throw py::value_error("angles: PITCH, YAW[, ROLL]");
            render::Frame frame;
            {
                py::gil_scoped_release nogil;
                render::Options o;
                o.width = width, o.height = height, o.pvs = pvs, o.textures = textures, o.lightmaps = lightmaps;
                o.threads = threads;
                model::Map map = model::build(s.bsp, build_options(true, textures, true, -1, false));
                if (textures || lightmaps)
                    resolve_into(map, s.bsp, {wads, game_dirs}, textures, textures && view != "overview");
                const render::Scene scene = render::Scene::prepare(std::move(map), s.bsp, o);
                render::Camera cam;
                if (camera) {
                    cam.position = {(*camera)[0], (*camera)[1], (*camera)[2]};
                    if (angles) {
                        cam.pitch = (*angles)[0], cam.yaw = (*angles)[1];
                        if (angles->size() == 3) cam.roll = (*angles)[2];
                    }
                    cam.fov = fov;
                } else if (view == "overview") {
                    cam = render::overview_camera(scene, o);
                } else if (view == "thumbnail") {
                    cam = render::thumbnail_camera(scene);
                } else if (view == "spawn") {
                    // As `bspkit render`: the first player start, else the overview.
                    if (const auto spawn = render::spawn_camera(scene)) {
                        cam = *spawn;
                        cam.fov = fov;
                    } else {
                        cam = render::overview_camera(scene, o);
                    }
                } else {
                    py::gil_scoped_acquire gil;
                    throw py::value_error("view: spawn, overview or thumbnail (or pass camera=)");
                }
                frame = render::render(scene, cam, o);
            }
            auto* pixels = new std::vector<uint8_t>(std::move(frame.rgba));
            py::capsule owner(pixels, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
            return py::array(py::dtype::of<uint8_t>(),
                             {py::ssize_t(frame.height), py::ssize_t(frame.width), py::ssize_t(4)},
                             {py::ssize_t(frame.width) * 4, py::ssize_t(4), py::ssize_t(1)}, pixels->data(), owner);
        },
        py::arg("map"), py::arg("width"), py::arg("height"), py::arg("view"), py::arg("camera"), py::arg("angles"),
        py::arg("fov"), py::arg("pvs"), py::arg("textures"), py::arg("lightmaps"), py::arg("threads"),
        py::arg("wads"), py::arg("game_dirs"));

    // --- Mesh: numpy views of the flat arrays (base: the Mesh object) -----
    py::class_<Mesh, std::shared_ptr<Mesh>> mesh(m, "_Mesh");
#define BSPKIT_ARRAY(name, cols)                                                                                 \
    mesh.def_property_readonly(#name, [](py::object self) {                                                  \
        const Mesh& s = self.cast<const Mesh&>();                                                            \
        if (cols == 0) return view(s.name, {py::ssize_t(s.name.size())}, self);                             \
        return view(s.name, {py::ssize_t(s.name.size() / (cols ? cols : 1)), py::ssize_t(cols)}, self);     \
    })
    BSPKIT_ARRAY(positions, 3);
    BSPKIT_ARRAY(normals, 3);
    BSPKIT_ARRAY(uv, 2);
    BSPKIT_ARRAY(lightmap_uv, 2);
    BSPKIT_ARRAY(colors, 4);
    BSPKIT_ARRAY(indices, 3);
    BSPKIT_ARRAY(triangle_surface, 0);
    BSPKIT_ARRAY(surface_material, 0);
    BSPKIT_ARRAY(surface_model, 0);
    BSPKIT_ARRAY(surface_face, 0);
    BSPKIT_ARRAY(surface_lightmap, 0);
    BSPKIT_ARRAY(surface_kind, 0);
    BSPKIT_ARRAY(surface_first_vertex, 0);
    BSPKIT_ARRAY(surface_vertex_count, 0);
    BSPKIT_ARRAY(surface_first_triangle, 0);
    BSPKIT_ARRAY(surface_triangle_count, 0);
#undef BSPKIT_ARRAY
    mesh.def_property_readonly("materials", [](const Mesh& s) {
        py::list out;
        for (const auto& mat : s.map.materials)
            out.append(py::dict(py::arg("name") = bytes_to_utf8(mat.name), py::arg("flags") = mat.flags,
                                py::arg("width") = mat.width, py::arg("height") = mat.height,
                                py::arg("texture") = mat.texture));
        return out;
    });
    mesh.def_property_readonly("textures", [](py::object self) {
        const Mesh& s = self.cast<const Mesh&>();
        py::list out;
        for (const auto& t : s.map.textures) {
            if (t.rgba.size() != size_t(t.width) * t.height * 4) continue;
            out.append(py::make_tuple(bytes_to_utf8(t.name),
                                      view(t.rgba, {py::ssize_t(t.height), py::ssize_t(t.width), 4}, self)));
        }
        return out;
    });
    mesh.def_property_readonly("lightmaps", [](py::object self) {
        const Mesh& s = self.cast<const Mesh&>();
        py::list out;
        for (size_t i = 0; i < s.map.lightmaps.size(); ++i) {
            const auto& page = s.map.lightmaps[i];
            out.append(py::make_tuple(page.style, view(s.lightmap_rgba[i], {py::ssize_t(page.height),
                                                                             py::ssize_t(page.width), 4}, self)));
        }
        return out;
    });
    mesh.def_property_readonly("model_origins", [](const Mesh& s) {
        py::list out;
        for (const auto& mo : s.map.models) out.append(py::make_tuple(mo.index, mo.entity,
                                                                       py::make_tuple(mo.origin.x, mo.origin.y, mo.origin.z)));
        return out;
    });
    mesh.def_property_readonly("diagnostics", [](const Mesh& s) { return diagnostics_list(s.map.diagnostics); });
    mesh.def_property_readonly("missing", [](const Mesh& s) { return missing_list(s.missing); });

    // --- survey: one map's record as a JSON line (the CLI's exact text) --
    m.def(
        "survey_json",
        [](const std::string& path) {
            py::gil_scoped_release nogil;
            return survey::to_json_line(survey::survey_file(path));
        },
        py::arg("path"));
    m.def(
        "find_maps",
        [](const std::vector<std::filesystem::path>& roots) {
            std::vector<std::string> out;
            for (const auto& p : survey::find_maps(roots)) out.push_back(p.string());
            return out;
        },
        py::arg("roots"));
}
