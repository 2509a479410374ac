// Quake stores 1 byte per lightmap sample (grey) and embeds every texture;
// GoldSrc stores 3 bytes (RGB), gives each embedded texture its own palette
// and may leave textures in external WADs. These differences decide.
#include "goldsrc_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace bspkit::quake1 {
namespace {

enum Lump { kTextures = 2, kVertexes = 3, kTexinfo = 6, kFaces = 7, kLighting = 8, kEdges = 12, kSurfedges = 13 };

ByteSpan lump(ByteSpan file, int index) {
    const size_t at = 4 + size_t(index) * 8;
    if (file.size() < at + 8) return {};
    const int32_t ofs = load<int32_t>(file.data() + at);
    const int32_t len = load<int32_t>(file.data() + at + 4);
    if (ofs < 0 || len <= 0 || size_t(ofs) >= file.size()) return {};
    return file.subspan(size_t(ofs), std::min<size_t>(size_t(len), file.size() - size_t(ofs)));
}

// Total lightmap samples over all lit faces (one style counted per style slot).
uint64_t lightmap_samples(ByteSpan file) {
    const ByteSpan faces = lump(file, kFaces), texinfo = lump(file, kTexinfo), verts = lump(file, kVertexes),
                   edges = lump(file, kEdges), surfedges = lump(file, kSurfedges);
    const size_t nface = faces.size() / 20, ntex = texinfo.size() / 40, nvert = verts.size() / 12,
                 nedge = edges.size() / 4, nsurf = surfedges.size() / 4;
    uint64_t samples = 0;
    uint64_t budget = 1u << 24;  // bounded work on hostile files
    for (size_t f = 0; f < nface; ++f) {
        const uint8_t* face = faces.data() + f * 20;
        const int32_t first_edge = load<int32_t>(face + 4);
        const uint16_t num_edges = load<uint16_t>(face + 8);
        const uint16_t tex = load<uint16_t>(face + 10);
        const int32_t light_ofs = load<int32_t>(face + 16);
        if (light_ofs < 0 || tex >= ntex || first_edge < 0 || size_t(first_edge) + num_edges > nsurf) continue;
        const uint8_t* ti = texinfo.data() + size_t(tex) * 40;
        if (load<int32_t>(ti + 36) & 1) continue;  // TEX_SPECIAL: sky, water — unlit
        if (num_edges > budget) break;
        budget -= num_edges;
        float vec[2][4];
        for (int a = 0; a < 2; ++a)
            for (int k = 0; k < 4; ++k) vec[a][k] = load<float>(ti + a * 16 + k * 4);
        double lo[2] = {1e30, 1e30}, hi[2] = {-1e30, -1e30};
        bool ok = num_edges >= 3;
        for (uint16_t e = 0; e < num_edges && ok; ++e) {
            const int32_t se = load<int32_t>(surfedges.data() + (size_t(first_edge) + e) * 4);
            const size_t edge = se < 0 ? size_t(-int64_t(se)) : size_t(se);
            if (edge >= nedge) { ok = false; break; }
            const uint16_t v = load<uint16_t>(edges.data() + edge * 4 + (se < 0 ? 2 : 0));
            if (v >= nvert) { ok = false; break; }
            const uint8_t* p = verts.data() + size_t(v) * 12;
            const double x = load<float>(p), y = load<float>(p + 4), z = load<float>(p + 8);
            for (int a = 0; a < 2; ++a) {
                const double s = x * vec[a][0] + y * vec[a][1] + z * vec[a][2] + vec[a][3];
                lo[a] = std::min(lo[a], s);
                hi[a] = std::max(hi[a], s);
            }
        }
        if (!ok || !(hi[0] - lo[0] < 1e6) || !(hi[1] - lo[1] < 1e6)) continue;
        uint64_t size = 1;
        for (int a = 0; a < 2; ++a) size *= uint64_t(std::ceil(hi[a] / 16) - std::floor(lo[a] / 16)) + 1;
        int styles = 0;
        for (int s = 0; s < 4; ++s) styles += face[12 + s] != 255;
        samples += size * uint64_t(styles);
    }
    return samples;
}

}  // namespace

ContentVerdict classify_v29(ByteSpan file) {
    char text[256];
    // 1. Lighting: bytes per lightmap sample.
    const ByteSpan lighting = lump(file, kLighting);
    const uint64_t samples = lightmap_samples(file);
    if (!lighting.empty() && samples > 0) {
        const double ratio = double(lighting.size()) / double(samples);
        std::snprintf(text, sizeof text, "lighting holds %.2f bytes per lightmap sample (%zu bytes for %llu samples)",
                      ratio, lighting.size(), static_cast<unsigned long long>(samples));
        if (ratio >= 2.5) return {true, std::string(text) + ": RGB, GoldSrc"};
        if (ratio <= 1.5) return {false, std::string(text) + ": grey, Quake"};
    }
    // 2. Textures: GoldSrc miptex carry a 256-colour palette after the mip
    //    levels, or live in external WADs (offsets 0); Quake embeds them bare.
    const ByteSpan tex = lump(file, kTextures);
    if (tex.size() >= 4) {
        const int32_t count = load<int32_t>(tex.data());
        size_t external = 0, paletted = 0, bare = 0;
        for (int32_t i = 0; count > 0 && i < count && size_t(4 + i * 4 + 4) <= tex.size() && i < 65536; ++i) {
            const int32_t ofs = load<int32_t>(tex.data() + 4 + size_t(i) * 4);
            if (ofs <= 0 || size_t(ofs) + 40 > tex.size()) continue;
            const uint8_t* mt = tex.data() + ofs;
            const uint32_t w = load<uint32_t>(mt + 16), h = load<uint32_t>(mt + 20);
            const uint32_t mip0 = load<uint32_t>(mt + 24);
            if (mip0 == 0) { ++external; continue; }
            if (w == 0 || h == 0 || w > 8192 || h > 8192) continue;
            const uint64_t palette_at = uint64_t(ofs) + 40 + uint64_t(w) * h * 85 / 64;
            if (palette_at + 2 <= tex.size() && load<uint16_t>(tex.data() + palette_at) == 256) ++paletted;
            else ++bare;
        }
        if (paletted + external > 0 && bare == 0) {
            std::snprintf(text, sizeof text,
                          "textures: %zu embedded with their own palettes, %zu in external WADs: GoldSrc", paletted,
                          external);
            return {true, text};
        }
        if (bare > 0 && paletted == 0 && external == 0) {
            std::snprintf(text, sizeof text, "textures: %zu embedded without palettes: Quake", bare);
            return {false, text};
        }
    }
    return {false, "version 29 with no GoldSrc evidence in lighting or textures: Quake"};
}

}  // namespace bspkit::quake1
