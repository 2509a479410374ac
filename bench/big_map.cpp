// Generates big maps for the size-vs-time curve of issue 9, and measures it:
//   bspkit-bigmap DIR SIZE_MB...          Source maps DIR/big_source_<SIZE>mb.bsp
//   bspkit-bigmap --bsp2 DIR SIZE_MB...   Quake BSP2 maps DIR/big_bsp2_<SIZE>mb.bsp
//   bspkit-bigmap --curve DIR [--runs N] [--bsp2 S,S,...] [--source S,S,...] [--only info,check,repack,glb,glb-nolm]
//       generates both sets into DIR (defaults: BSP2 12.5,25,50,100,200; Source 25,50,100,200), then
//       times whole `bspkit` processes on each beside cat / cp of the same file (big_curve.cpp).
//
// Source: a 255 x 255 grid of quad
// faces sharing vertices and edges (65025 faces), power-4 displacements on
// the first faces (about 7 KB each) and a stored pakfile of incompressible
// entries filling the rest, all consistent enough for `bspkit check` and
// `bspkit export`. Sizes grow by displacements and pakfile alike, so cost per
// byte stays comparable across the curve. No game data: every byte is built here.
//
// BSP2: src/samples/big_bsp2.cpp (shared with the test tests/unit/big_bsp2_test.cpp):
// a field of grid x grid cells with stepped floors, its grid chosen for the size.
// Every BSP29 limit is passed from about 42 MB (grid 256) on: vertexes, faces,
// marksurfaces, leafs, nodes and clipnodes past 65,535, edges past 256,000,
// surfedges past 512,000; from 168 MB (grid 512) on the world also spans more
// than the 32,767 units BSP29's int16 bounds can hold (200 MB: grid 559). The limits, with
// where they come from, are listed at the top of big_bsp2.cpp.
#include <bspkit/bsp.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/format.hpp>
#include <bspkit/formats/source.hpp>
#include <bspkit/records.hpp>

#include "big_bsp2.hpp"
#include "big_curve.hpp"
#include "process_runs.hpp"
#include "samples.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace bspkit;
using namespace bspkit::source;

constexpr int kGrid = 255;          // faces per side: (kGrid + 1)^2 vertices fit uint16 edges
constexpr float kCell = 64.0f;      // units per face
constexpr int kDispPower = 4;
constexpr int kDispVerts = 17 * 17;
constexpr int kDispTris = 2 * 16 * 16;

template <class T>
Bytes encode(const std::vector<T>& v) {
    return encode_records<T>(std::span<const T>(v), ByteOrder::little);
}

uint32_t crc32(const uint8_t* p, size_t n) {
    static uint32_t table[256];
    if (!table[1])
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i) c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/// A stored (method 0) zip of `count` entries of `entry_size` pseudo-random bytes.
Bytes pakfile(size_t count, size_t entry_size) {
    Bytes zip, central;
    uint64_t state = 0x9e3779b97f4a7c15ull;
    for (size_t k = 0; k < count; ++k) {
        Bytes data(entry_size);
        for (size_t i = 0; i < entry_size; i += 8) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            for (size_t b = 0; b < 8 && i + b < entry_size; ++b) data[i + b] = uint8_t(state >> (8 * b));
        }
        const std::string name = "materials/big/blob" + std::to_string(k) + ".vtf";
        const uint32_t crc = crc32(data.data(), data.size());
        const uint32_t local_at = uint32_t(zip.size());
        auto header = [&](Bytes& out, bool local) {
            append<uint32_t>(out, local ? 0x04034b50u : 0x02014b50u);
            if (!local) append<uint16_t>(out, 20);  // version made by
            append<uint16_t>(out, 10);              // version needed
            append<uint16_t>(out, 0);               // flags
            append<uint16_t>(out, 0);               // stored
            append<uint16_t>(out, 0);               // time
            append<uint16_t>(out, 0x21);            // date
            append<uint32_t>(out, crc);
            append<uint32_t>(out, uint32_t(data.size()));
            append<uint32_t>(out, uint32_t(data.size()));
            append<uint16_t>(out, uint16_t(name.size()));
            append<uint16_t>(out, 0);  // extra
            if (!local) {
                append<uint16_t>(out, 0);  // comment
                append<uint16_t>(out, 0);  // disk
                append<uint16_t>(out, 0);  // internal attributes
                append<uint32_t>(out, 0);  // external attributes
                append<uint32_t>(out, local_at);
            }
            out.insert(out.end(), name.begin(), name.end());
        };
        header(zip, true);
        zip.insert(zip.end(), data.begin(), data.end());
        header(central, false);
    }
    const uint32_t central_at = uint32_t(zip.size());
    zip.insert(zip.end(), central.begin(), central.end());
    append<uint32_t>(zip, 0x06054b50u);
    append<uint16_t>(zip, 0);
    append<uint16_t>(zip, 0);
    append<uint16_t>(zip, uint16_t(count));
    append<uint16_t>(zip, uint16_t(count));
    append<uint32_t>(zip, uint32_t(central.size()));
    append<uint32_t>(zip, central_at);
    append<uint16_t>(zip, 0);
    return zip;
}

Bytes big_source(double size_mb) {
    const size_t displacements = std::min<size_t>(30000, size_t(size_mb * 70));
    const double disp_bytes = double(displacements) * (kDispVerts * 20 + kDispTris * 2 + 176);
    const double rest = std::max(0.0, size_mb * 1e6 - disp_bytes - 5.5e6);
    const size_t pak_entries = size_t(rest / 1e6) + 1;
    const size_t pak_entry_size = size_t(rest / double(pak_entries)) + 1;

    std::vector<Bytes> lumps(64);
    const std::string entities = "{\n\"classname\" \"worldspawn\"\n\"mapversion\" \"1\"\n}\n";
    lumps[lump::entities].assign(entities.begin(), entities.end());
    lumps[lump::entities].push_back(0);
    lumps[lump::planes] = encode(std::vector<dplane_t>{{{0, 0, 1}, 0, 2}});
    const std::string texname = "dev/dev_measuregeneric01";
    lumps[lump::texdata_string_data].assign(texname.begin(), texname.end());
    lumps[lump::texdata_string_data].push_back(0);
    lumps[lump::texdata_string_table] = encode(std::vector<dtexdatastringtable_t>{{0}});
    lumps[lump::texdata] = encode(std::vector<dtexdata_t>{{{0.5f, 0.5f, 0.5f}, 0, 128, 128, 128, 128}});
    texinfo_t ti{};
    ti.textureVecs[0][0] = 0.25f, ti.textureVecs[1][1] = -0.25f;
    ti.lightmapVecs[0][0] = 1 / 16.0f, ti.lightmapVecs[1][1] = -1 / 16.0f;
    ti.flags = int32_t(SURF_NOLIGHT);
    ti.texdata = 0;
    lumps[lump::texinfo] = encode(std::vector<texinfo_t>{ti});

    // Vertices of the grid, then edges: horizontal rows, then vertical columns.
    std::vector<dvertex_t> verts;
    for (int y = 0; y <= kGrid; ++y)
        for (int x = 0; x <= kGrid; ++x) verts.push_back({{x * kCell, y * kCell, 0}});
    auto vid = [](int x, int y) { return uint16_t(y * (kGrid + 1) + x); };
    std::vector<dedge_t> edges{{{0, 0}}};  // edge 0 is never used by surfedges
    auto h_edge = [](int x, int y) { return int32_t(1 + y * kGrid + x); };
    auto v_edge = [](int x, int y) { return int32_t(1 + (kGrid + 1) * kGrid + x * kGrid + y); };
    for (int y = 0; y <= kGrid; ++y)
        for (int x = 0; x < kGrid; ++x) edges.push_back({{vid(x, y), vid(x + 1, y)}});
    for (int x = 0; x <= kGrid; ++x)
        for (int y = 0; y < kGrid; ++y) edges.push_back({{vid(x, y), vid(x, y + 1)}});
    std::vector<dsurfedge_t> surfedges;
    std::vector<dface_t> faces;
    std::vector<ddispinfo_t> disp;
    std::vector<dDispVert> disp_verts;
    std::vector<dDispTri> disp_tris;
    for (int y = 0; y < kGrid; ++y)
        for (int x = 0; x < kGrid; ++x) {
            dface_t f{};
            f.planenum = 0;
            f.firstedge = int32_t(surfedges.size());
            f.numedges = 4;
            f.texinfo = 0;
            f.dispinfo = -1;
            f.lightofs = -1;
            for (uint8_t& s : f.styles) s = 255;
            f.area = kCell * kCell;
            f.origFace = -1;
            surfedges.push_back({h_edge(x, y)});
            surfedges.push_back({v_edge(x + 1, y)});
            surfedges.push_back({-h_edge(x, y + 1)});
            surfedges.push_back({-v_edge(x, y)});
            if (disp.size() < displacements) {
                f.dispinfo = int16_t(disp.size());
                ddispinfo_t d{};
                d.startPosition = {x * kCell, y * kCell, 0};
                d.DispVertStart = int32_t(disp_verts.size());
                d.DispTriStart = int32_t(disp_tris.size());
                d.power = kDispPower;
                d.MapFace = uint16_t(faces.size());
                for (auto& e : d.EdgeNeighbors)
                    for (auto& s : e.m_SubNeighbors) s.m_iNeighbor = 0xffff;
                disp.push_back(d);
                for (int k = 0; k < kDispVerts; ++k)
                    disp_verts.push_back({{0, 0, 1}, 8.0f * std::sin(float(k + x) * 0.37f) * std::cos(float(y) * 0.21f), 0});
                disp_tris.resize(disp_tris.size() + kDispTris);
            }
            faces.push_back(f);
        }
    lumps[lump::vertexes] = encode(verts);
    lumps[lump::edges] = encode(edges);
    lumps[lump::surfedges] = encode(surfedges);
    lumps[lump::faces] = encode(faces);
    lumps[lump::dispinfo] = encode(disp);
    lumps[lump::disp_verts] = encode(disp_verts);
    lumps[lump::disp_tris] = encode(disp_tris);
    const float extent = kGrid * kCell;
    dnode_t node{};
    node.planenum = 0;
    node.children[0] = -1;  // leaf 0
    node.children[1] = -2;  // leaf 1
    node.maxs[0] = node.maxs[1] = int16_t(std::min(extent, 32767.0f));
    node.numfaces = 0;
    lumps[lump::nodes] = encode(std::vector<dnode_t>{node});
    dleaf_t solid{}, empty{};
    solid.contents = 1, solid.cluster = -1, solid.leafWaterDataID = -1;
    empty.contents = 0, empty.cluster = -1, empty.leafWaterDataID = -1;
    lumps[lump::leafs] = encode(std::vector<dleaf_t>{solid, empty});
    dmodel_t world{};
    world.mins = {0, 0, -64};
    world.maxs = {extent, extent, 64};
    world.headnode = 0;
    world.firstface = 0;
    world.numfaces = int32_t(faces.size());
    lumps[lump::models] = encode(std::vector<dmodel_t>{world});
    lumps[lump::pakfile] = pakfile(pak_entries, pak_entry_size);
    Bytes file = samples::build(layouts::source(), 20, lumps);
    // Leafs of lump version 1 (the 32-byte dleaf_t): the version field of entry 10.
    store<int32_t>(file.data() + 8 + 16 * lump::leafs + 8, 1);
    return file;
}

}  // namespace

namespace {

std::string file_name(const char* prefix, const std::string& size) { return std::string(prefix) + size + "mb.bsp"; }

/// Writes the BSP2 map for `size` MB into dir; prints its counts.
std::filesystem::path write_bsp2(const std::filesystem::path& dir, const std::string& size) {
    const bspkit::samples::BigBsp2 map = bspkit::samples::big_bsp2(bspkit::samples::big_bsp2_grid_for_mb(std::atof(size.c_str())));
    const auto path = dir / file_name("big_bsp2_", size);
    bspkit::write_file_atomic(path, map.bytes);
    const auto& n = map.counts;
    std::printf("%s %zu bytes: grid %d, faces %zu, vertexes %zu, edges %zu, surfedges %zu, nodes %zu, clipnodes %zu, "
                "leafs %zu, marksurfaces %zu, planes %zu, lighting %zu bytes\n",
                path.string().c_str(), map.bytes.size(), map.grid, n.faces, n.vertexes, n.edges, n.surfedges, n.nodes,
                n.clipnodes, n.leafs, n.marksurfaces, n.planes, n.lighting_bytes);
    return path;
}

std::filesystem::path write_source(const std::filesystem::path& dir, const std::string& size) {
    const bspkit::Bytes bytes = big_source(std::atof(size.c_str()));
    const auto path = dir / file_name("big_source_", size);
    bspkit::write_file_atomic(path, bytes);
    std::printf("%s %zu bytes\n", path.string().c_str(), bytes.size());
    return path;
}

int usage() {
    std::fprintf(stderr,
                 "usage: bspkit-bigmap DIR SIZE_MB...\n"
                 "       bspkit-bigmap --bsp2 DIR SIZE_MB...\n"
                 "       bspkit-bigmap --curve DIR [--runs N] [--bsp2 S,S,...] [--source S,S,...] [--only info,check,repack,glb,glb-nolm]\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) return usage();
    const std::string mode = argv[1];
    if (mode == "--curve") {
        const std::filesystem::path dir = argv[2];
        std::filesystem::create_directories(dir);
        int runs = 5;
        std::vector<std::string> bsp2_sizes{"12.5", "25", "50", "100", "200"}, source_sizes{"25", "50", "100", "200"};
        std::set<std::string> only;
        for (int i = 3; i < argc; ++i) {
            const std::string a = argv[i];
            if (i + 1 >= argc) return usage();
            if (a == "--runs") runs = std::max(1, std::atoi(argv[++i]));
            else if (a == "--bsp2") bsp2_sizes = bspkit::bench::split_list(argv[++i]);
            else if (a == "--source") source_sizes = bspkit::bench::split_list(argv[++i]);
            else if (a == "--only")
                for (const std::string& v : bspkit::bench::split_list(argv[++i])) only.insert(v);
            else return usage();
        }
        // Each map is generated by a child (this program again): generating takes up to 1 GB, and a
        // child spawned later would report the parent's peak RSS as its own (Linux keeps it across exec).
        std::fflush(stdout);
        std::vector<bigmap::CurveFile> files;
        const auto generate = [&](const char* mode, const char* prefix, const std::string& size) {
            std::vector<std::string> args{"/proc/self/exe"};
            if (*mode) args.push_back(mode);
            args.push_back(dir.string());
            args.push_back(size);
            if (bspkit::bench::run_process(args, "bspkit-bigmap", true).exit_code != 0) std::exit(1);
            files.push_back({*mode ? "bsp2" : "source", dir / file_name(prefix, size)});
        };
        for (const std::string& s : bsp2_sizes) generate("--bsp2", "big_bsp2_", s);
        for (const std::string& s : source_sizes) generate("", "big_source_", s);
        return bigmap::run_curve(files, runs, only);
    }
    const bool bsp2 = mode == "--bsp2";
    const int first = bsp2 ? 3 : 2;
    if (argc <= first) return usage();
    const std::filesystem::path dir = argv[first - 1];
    std::filesystem::create_directories(dir);
    for (int i = first; i < argc; ++i) bsp2 ? write_bsp2(dir, argv[i]) : write_source(dir, argv[i]);
    return 0;
}
