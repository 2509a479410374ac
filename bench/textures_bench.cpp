// The texture search path: textures::resolve() finding and decoding every
// texture of a generated archive, as a ratio to plain reading of the same
// archive file measured in the same run.
//   wad3_*   64 GoldSrc miptex (256 x 256, own palettes) in one WAD3
//   pk3_*    64 TGA images (256 x 256 RGBA) in a .pk3, deflated, found
//            through a shader script (Quake 3)
//   vpk_*    64 VMT + DXT5 VTF (512 x 512) pairs in a VPK v2 (_dir + _000)
//   pakfile  the pakfile textures (cubemaps, patch VMTs) of the L4D2 corpus
//            map, against reading the map file
//   external_lightmaps  oa_oacmpctf3's 40 lightmap pages as q3map2 -external
//            TGAs in a .pk3, found, decoded and packed (Quake 3)
// The archives are written once by the benchmark (tests/support/texture_files.hpp).
#include "bench_support.hpp"

#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/quake3.hpp>
#include <bspkit/model.hpp>
#include <bspkit/textures.hpp>

#include "samples.hpp"
#include "texture_files.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace {

using namespace bspkit;
namespace fs = std::filesystem;

constexpr int kCount = 64;

const fs::path& dir() {
    static const fs::path d = [] {
        const fs::path p = fs::temp_directory_path() / ("bspkit_textures_bench_" + std::to_string(::getpid()));
        fs::create_directories(p);
        return p;
    }();
    static const struct Cleanup {
        ~Cleanup() { fs::remove_all(d); }
    } cleanup;
    return d;
}

std::string name(int i) { return "tex" + std::to_string(i); }

Bsp sample(const std::string& file) {
    for (auto& s : samples::all())
        if (s.name == file) return Bsp::parse(std::move(s.bytes), file);
    std::fprintf(stderr, "textures_bench: no sample %s\n", file.c_str());
    std::exit(1);
}

model::Map materials(Format format, const std::string& prefix, uint32_t size) {
    model::Map map;
    map.format = format;
    model::Model world;
    for (int i = 0; i < kCount; ++i) {
        map.materials.push_back({prefix + name(i), 0, size, size, -1, {}});
        // A surface shows each (resolve() looks only for those on Quake 3 maps).
        model::Surface s;
        s.material = uint32_t(i);
        world.surfaces.push_back(std::move(s));
    }
    map.models.push_back(std::move(world));
    return map;
}

void run(benchmark::State& state, const Bsp& bsp, const model::Map& base, const textures::SearchPath& path,
         const fs::path& floor_file, size_t expected) {
    const double floor = bench::plain_read_seconds(floor_file);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        model::Map map = base;
        const auto r = textures::resolve(map, bsp, path);
        if (r.found != expected) {
            state.SkipWithError("not every texture was found");
            return;
        }
        benchmark::DoNotOptimize(map.textures.data());
    }
    bench::report_ratio(state, floor_file, floor, bench::seconds_since(start));
}

void wad3(benchmark::State& state) {
    const auto palette = test::ramp_palette();
    std::vector<test::WadLump> lumps;
    for (int i = 0; i < kCount; ++i) lumps.push_back({name(i), test::make_miptex(name(i), 256, 256, &palette), 0x43});
    const fs::path file = dir() / "bench.wad";
    test::write_bytes(file, test::make_wad(true, lumps));
    textures::SearchPath path;
    path.wads = {file};
    run(state, sample("sample_goldsrc.bsp"), materials(Format::goldsrc, "", 256), path, file, kCount);
}

void pk3(benchmark::State& state) {
    Bytes tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 32, 0x28};  // 256 x 256, 32-bit, top-down
    for (int p = 0; p < 256 * 256; ++p) tga.insert(tga.end(), {uint8_t(p), uint8_t(p >> 8), uint8_t(p * 7), 255});
    std::vector<test::ZipFile> files;
    std::string shaders;
    for (int i = 0; i < kCount; ++i) {
        files.push_back({"textures/bench/" + name(i) + "_d.tga", tga, true});
        shaders += "textures/bench/" + name(i) + "\n{\n  {\n    map $lightmap\n  }\n  {\n    map textures/bench/" +
                   name(i) + "_d.tga\n  }\n}\n";
    }
    files.push_back({"scripts/bench.shader", Bytes(shaders.begin(), shaders.end()), true});
    const fs::path game = dir() / "baseq3";
    const fs::path file = game / "pak0.pk3";
    test::write_bytes(file, test::make_zip(files));
    textures::SearchPath path;
    path.game_dirs = {game};
    run(state, sample("sample_quake3.bsp"), materials(Format::quake3, "textures/bench/", 0), path, file, kCount);
}

void vpk(benchmark::State& state) {
    const Bytes blocks = test::dxt5_blocks(512, 512, test::rgb565(200, 10, 10), test::rgb565(10, 10, 200));
    const Bytes vtf = test::make_vtf(5, 15, 512, 512, 1, blocks);
    std::vector<test::VpkFile> files;
    for (int i = 0; i < kCount; ++i) {
        const std::string vmt = "LightmappedGeneric { $basetexture bench/" + name(i) + "_c }";
        files.push_back({"vmt", "materials/bench", name(i), Bytes(vmt.begin(), vmt.end())});
        files.push_back({"vtf", "materials/bench", name(i) + "_c", vtf, 0, true});
    }
    const fs::path game = dir() / "hl2";
    test::make_vpk(game, "pak01", 2, files);
    textures::SearchPath path;
    path.game_dirs = {game};
    run(state, sample("sample_source.bsp"), materials(Format::source, "bench/", 512), path, game / "pak01_000.vpk",
        kCount);
}

void pakfile(benchmark::State& state) {
    const fs::path file = bench::corpus("src_v21/l4d2_escapefromterrortown01.bsp");
    const Bsp bsp = Bsp::open(file);
    model::BuildOptions o;
    o.lightmaps = false;
    const model::Map map = model::build(bsp, o);
    model::Map probe = map;
    const size_t found = textures::resolve(probe, bsp, {}).found;
    run(state, bsp, map, {}, file, found);
}

// Quake 3 lightmaps kept outside the map (q3map2 -external): oa_oacmpctf3's
// 40 pages as TGA in a .pk3, beside a copy of the map whose lightmaps lump is
// emptied; resolve() finds, decodes and packs them, against reading the .pk3.
void external_lightmaps(benchmark::State& state) {
    const fs::path map_file = bench::corpus("q3_v46/oa_oacmpctf3.bsp");
    Bytes bytes = read_file(map_file);
    const Bsp original = Bsp::parse(bytes, map_file.string());
    const LumpEntry lump = original.entry(quake3::Map::LUMP_LIGHTMAPS);
    const size_t pages = size_t(lump.length) / sizeof(quake3::dlightmap_t);
    std::vector<test::ZipFile> files;
    for (size_t p = 0; p < pages; ++p) {
        const uint8_t* rgb = bytes.data() + lump.offset + p * sizeof(quake3::dlightmap_t);
        Bytes tga = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 128, 0, 128, 0, 24, 0x20};  // top-down
        for (size_t i = 0; i < 128 * 128; ++i) tga.insert(tga.end(), {rgb[i * 3 + 2], rgb[i * 3 + 1], rgb[i * 3]});
        char page[48];
        std::snprintf(page, sizeof page, "maps/ext_ctf3/lm_%04zu.tga", p);
        files.push_back({page, std::move(tga), true});
    }
    const fs::path game = dir() / "baseq3_lm";
    const fs::path file = game / "pak0.pk3";
    test::write_bytes(file, test::make_zip(files));
    const int32_t zero = 0;
    std::memcpy(bytes.data() + 8 + 8 * quake3::Map::LUMP_LIGHTMAPS + 4, &zero, 4);
    const Bsp external = Bsp::parse(std::move(bytes), "ext_ctf3.bsp");
    const model::Map base = model::build(external);
    textures::SearchPath path;
    path.game_dirs = {game};
    path.textures = false;
    const double floor = bench::plain_read_seconds(file);
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        model::Map map = base;
        const auto r = textures::resolve(map, external, path);
        if (r.lightmap_pages != pages || map.lightmaps.empty()) {
            state.SkipWithError("not every lightmap page was found");
            return;
        }
        benchmark::DoNotOptimize(map.lightmaps.data());
    }
    bench::report_ratio(state, file, floor, bench::seconds_since(start));
}

}  // namespace

BENCHMARK(wad3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(pk3)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(vpk)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(pakfile)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(external_lightmaps)->UseRealTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
