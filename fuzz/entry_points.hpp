// The entry points the fuzz targets drive, one function each, shared by the
// libFuzzer targets (fuzz/fuzz_<name>.cpp) and by the regression test, which
// replays every input of tests/regressions/ through all of them. Only
// bspkit::Error may escape the library: a crash, a sanitizer report or any
// other exception is a bug.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/export.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/formats/source_props.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>
#include <bspkit/textures.hpp>
#include <bspkit/visibility.hpp>
#include <bspkit/zip.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace bspkit::fuzz {

inline std::optional<Bsp> open(const uint8_t* data, size_t size) {
    try {
        return Bsp::parse(Bytes(data, data + size), "fuzz.bsp");
    } catch (const Error&) {
        return std::nullopt;
    }
}

template <class Fn>
void guarded(Fn&& fn) {
    try {
        fn();
    } catch (const Error&) {
    }
}

/// Container: detect, read the directory, decode every lump and game lump,
/// save unchanged and decompressed.
inline void open_and_save(const uint8_t* data, size_t size) {
    auto bsp = open(data, size);
    if (!bsp) return;
    for (size_t i = 0; i < bsp->lump_count(); ++i) guarded([&] { (void)bsp->decoded(i); });
    for (size_t k = 0; k < bsp->game_lumps().size(); ++k) guarded([&] { (void)bsp->game_lump_decoded(k); });
    guarded([&] { (void)bsp->serialize(); });
    if (bsp->format() == Format::source) guarded([&] { (void)bsp->serialize({Compression::decompress}); });
}

/// `bspkit check`: every cross-reference walk of every format.
inline void check(const uint8_t* data, size_t size) {
    if (auto bsp = open(data, size)) guarded([&] { (void)bspkit::check(*bsp); });
}

/// Entities: parse, write back, save.
inline void entities(const uint8_t* data, size_t size) {
    if (auto bsp = open(data, size))
        guarded([&] {
            const EntityLump lump = read_entities(*bsp);
            write_entities(*bsp, lump);
            (void)bsp->serialize();
        });
}

/// Source static props: decode, encode again, save.
inline void props(const uint8_t* data, size_t size) {
    auto bsp = open(data, size);
    if (!bsp || bsp->format() != Format::source) return;
    guarded([&] {
        if (auto p = source::read_static_props(*bsp)) {
            source::write_static_props(*bsp, *p);
            (void)bsp->serialize();
        }
    });
}

/// Pakfile: the input as a zip and as a map's pakfile; list, extract, rewrite.
inline void pak(const uint8_t* data, size_t size) {
    auto exercise = [](const source::Pakfile& pak) {
        for (size_t i = 0; i < pak.entries().size() && i < 64; ++i) guarded([&] { (void)pak.extract(i); });
        (void)pak.serialize();
    };
    guarded([&] { exercise(source::Pakfile::parse(ByteSpan(data, size))); });
    if (auto bsp = open(data, size)) guarded([&] { exercise(source::Pakfile::read(*bsp)); });
}

/// Visibility: PVS decompression of every cluster (bounded) and the PAS of
/// the first clusters. A PAS that is not stored (Quake 1, Quake 3, Nightfire)
/// is the union of the PVS rows of every visible cluster, so each costs up to
/// a full decompression of the lump: all of them would be quadratic work.
/// pvs_sees() on three bits of each row: where the whole row decodes, it must
/// give the row's bits (abort otherwise: a finding).
inline void vis(const uint8_t* data, size_t size) {
    auto bsp = open(data, size);
    if (!bsp) return;
    guarded([&] {
        const Visibility v = Visibility::of(*bsp);
        Bytes row(v.row_bytes());
        for (size_t c = 0; c < v.clusters() && c < 4096; ++c) {
            const RowStatus status = v.pvs_into(c, row);
            for (size_t k : {size_t(0), c, v.clusters() - 1}) {
                const auto seen = v.pvs_sees(c, k);
                if (status == RowStatus::ok && (!seen || *seen != bool((row[k >> 3] >> (k & 7)) & 1))) std::abort();
            }
            if (c < 8) guarded([&] { (void)v.pas(c); });
        }
        for (size_t l = 0; l < v.leaf_count() && l < 4096; ++l) (void)v.cluster_of_leaf(l);
    });
}

/// Geometry and export: model::build of every format (faces, displacements,
/// patches, lightmaps, embedded textures), then the glTF asset in memory
/// without images (PNG encoding would only slow the fuzzer), and the
/// renderer's scene (tree, PVS, each cluster's faces) with a 16 x 12 thumbnail.
inline void geometry_and_export(const uint8_t* data, size_t size) {
    auto bsp = open(data, size);
    if (!bsp) return;
    guarded([&] {
        model::BuildOptions build;
        build.patch_level = 2;  // bounded tessellation; the adaptive level runs in the tests
        const model::Map map = model::build(*bsp, build);
        exporter::Options options;
        options.textures = false;
        options.lighting = exporter::Lighting::none;
        (void)exporter::build_gltf(map, options, /*binary=*/true);
        guarded([&] {
            render::Options view;
            view.width = 16;
            view.height = 12;
            view.threads = 1;
            const render::Scene scene = render::Scene::prepare(map, *bsp, view);
            (void)render::render(scene, render::thumbnail_camera(scene), view);
        });
    });
}

/// Texture files of the search path: the input as a WAD (every miptex), a
/// miptex, a VTF, a WAL, a PCX palette and image, a TGA / JPEG / PNG, a VPK directory,
/// a zip (.pk3, every entry), shader script and VMT text.
inline void texture_files(const uint8_t* data, size_t size) {
    const Bytes bytes(data, data + size);
    const std::array<uint8_t, 768> palette{};
    guarded([&] {
        const textures::Wad wad = textures::Wad::parse(bytes, "fuzz.wad");
        for (size_t i = 0; i < wad.entries().size() && i < 64; ++i) guarded([&] { (void)wad.decode(i, palette); });
    });
    guarded([&] { (void)textures::decode_miptex(bytes, true, palette, "fuzz.mip"); });
    guarded([&] { (void)textures::decode_vtf(bytes, "fuzz.vtf"); });
    guarded([&] { (void)textures::decode_wal(bytes, palette, "fuzz.wal"); });
    guarded([&] { (void)textures::pcx_palette(bytes, "fuzz.pcx"); });
    guarded([&] { (void)textures::decode_pcx(bytes, "fuzz.pcx"); });
    guarded([&] { (void)textures::decode_image(bytes, "fuzz.tga"); });
    guarded([&] {
        // Archive numbers other than 0x7fff name files that do not exist: an Error.
        const textures::Vpk vpk = textures::Vpk::parse(bytes, "/nonexistent/fuzz_dir.vpk");
        (void)vpk.read("materials/a.vtf");
    });
    guarded([&] {
        const zip::Archive z = zip::Archive::parse(bytes, {"fuzz.pk3", "", 0});
        for (size_t i = 0; i < z.entries().size() && i < 64; ++i) guarded([&] { (void)z.extract(i); });
    });
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)textures::parse_shaders(text);
    (void)textures::parse_vmt(text);
}

/// The bounds of the finite vertices of `map`'s world model (models[0]), or
/// nothing when it has none: where traces through the drawn world go (the
/// query entry point, and the query verbs of the damaged-copies corpus test).
inline std::optional<std::pair<model::Vec3, model::Vec3>> drawn_bounds(const model::Map& map) {
    if (map.models.empty()) return std::nullopt;
    constexpr float kBig = 1e30f;
    model::Vec3 lo{kBig, kBig, kBig}, hi{-kBig, -kBig, -kBig};
    for (const model::Surface& s : map.models[0].surfaces)
        for (const model::Vertex& v : s.vertices)
            if (std::isfinite(v.position.x) && std::isfinite(v.position.y) && std::isfinite(v.position.z)) {
                lo = {std::min(lo.x, v.position.x), std::min(lo.y, v.position.y), std::min(lo.z, v.position.z)};
                hi = {std::max(hi.x, v.position.x), std::max(hi.y, v.position.y), std::max(hi.z, v.position.z)};
            }
    if (lo.x > hi.x) return std::nullopt;
    return std::pair{lo, hi};
}

/// Queries: World::prepare (hostile trees: cycles, out-of-range children must
/// end in an Error), then leaf / contents / line, box and hull traces between
/// fixed points and points inside the world's drawn bounds (where the walks go
/// deep), and a visibility test. Every result must be a trace's (fraction in
/// [0, 1], allsolid only with startsolid) and a batch on one thread must give
/// each ray's single trace: abort otherwise, a finding.
inline void queries(const uint8_t* data, size_t size) {
    auto bsp = open(data, size);
    if (!bsp) return;
    std::vector<query::Vec3> points = {{0, 0, 0}, {64, -32, 16}, {-1024, 512, 128}, {4096, 4096, -4096}};
    guarded([&] {
        model::BuildOptions build;
        build.lightmaps = build.textures = false;
        build.all_models = false;
        build.patch_level = 1;
        const auto bounds = drawn_bounds(model::build(*bsp, build));
        if (!bounds) return;
        const auto& [lo, hi] = *bounds;
        for (const float f : {0.3f, 0.5f, 0.7f, 0.9f}) {
            const float g = 1 - f;
            points.push_back({lo.x + (hi.x - lo.x) * f, lo.y + (hi.y - lo.y) * g, lo.z + (hi.z - lo.z) * f});
        }
    });
    auto sane = [](const query::TraceResult& r) {
        if (!(r.fraction >= 0 && r.fraction <= 1) || (r.allsolid && !r.startsolid)) std::abort();
        return r;
    };
    guarded([&] {
        const query::World world = query::World::prepare(*bsp);
        for (const auto& p : points) {
            guarded([&] { (void)world.leaf_at(p); });
            guarded([&] { (void)world.contents(p); });
        }
        std::vector<query::Ray> rays;
        for (size_t i = 0; i + 1 < points.size(); ++i) {
            rays.push_back({points[i], points[i + 1]});
            guarded([&] { (void)sane(world.trace(points[i], points[i + 1])); });
            guarded([&] { (void)sane(world.trace(points[i], points[i + 1], world.player())); });
            guarded([&] {
                query::TraceOptions o = query::TraceOptions::box({-8, -8, -8}, {8, 8, 8});
                o.models = true;
                (void)sane(world.trace(points[i + 1], points[i], o));
            });
            guarded([&] { (void)world.visible(points[i], points[i + 1]); });
        }
        for (const auto& h : world.hulls())
            guarded([&] {
                query::TraceOptions o;
                o.hull = h.index;
                (void)sane(world.trace(points[0], points[2], o));
            });
        guarded([&] {
            const query::TraceOptions o = world.player();
            std::vector<query::TraceResult> batch(rays.size());
            std::vector<std::string> errors(rays.size());
            world.try_trace(rays, batch, errors, o, 1);
            for (size_t i = 0; i < rays.size(); ++i) {
                if (!errors[i].empty()) continue;
                const query::TraceResult one = sane(world.trace(rays[i].start, rays[i].end, o));
                const auto& b = batch[i];
                // Bitwise, so that NaN coordinates compare too.
                if (std::memcmp(&one.fraction, &b.fraction, sizeof b.fraction) ||
                    std::memcmp(&one.end, &b.end, sizeof b.end) || one.startsolid != b.startsolid ||
                    one.allsolid != b.allsolid || one.model != b.model)
                    std::abort();
            }
        });
    });
}

struct EntryPoint {
    std::string_view name;
    void (*run)(const uint8_t*, size_t);
};

inline constexpr std::array<EntryPoint, 9> kEntryPoints = {{{"open", open_and_save},
                                                            {"check", check},
                                                            {"entities", entities},
                                                            {"props", props},
                                                            {"pak", pak},
                                                            {"vis", vis},
                                                            {"export", geometry_and_export},
                                                            {"textures", texture_files},
                                                            {"query", queries}}};

}  // namespace bspkit::fuzz
