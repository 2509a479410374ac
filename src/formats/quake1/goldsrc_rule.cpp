// Quake stores 1 byte per lightmap sample (grey) and embeds every texture;
// GoldSrc stores 3 bytes (RGB), gives each embedded texture its own palette
// and may leave textures in external WADs. These differences decide.
#include "goldsrc_rule.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

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

struct Lumps {
    ByteSpan faces, texinfo, verts, edges, surfedges;
};

// Lightmap samples of one face (its extents in 16-texel luxels, times its
// styles), or 0 when the face is unlit or its references are broken.
uint64_t face_samples(const Lumps& l, size_t f) {
    const size_t ntex = l.texinfo.size() / 40, nvert = l.verts.size() / 12, nedge = l.edges.size() / 4,
                 nsurf = l.surfedges.size() / 4;
    const uint8_t* face = l.faces.data() + f * 20;
    const int32_t first_edge = load<int32_t>(face + 4);
    const uint16_t num_edges = load<uint16_t>(face + 8);
    const uint16_t tex = load<uint16_t>(face + 10);
    if (tex >= ntex || first_edge < 0 || size_t(first_edge) + num_edges > nsurf || num_edges < 3) return 0;
    const uint8_t* ti = l.texinfo.data() + size_t(tex) * 40;
    if (load<int32_t>(ti + 36) & 1) return 0;  // TEX_SPECIAL: sky, water — unlit
    float vec[2][4];
    for (int a = 0; a < 2; ++a)
        for (int k = 0; k < 4; ++k) vec[a][k] = load<float>(ti + a * 16 + k * 4);
    double lo[2] = {1e30, 1e30}, hi[2] = {-1e30, -1e30};
    for (uint16_t e = 0; e < num_edges; ++e) {
        const int32_t se = load<int32_t>(l.surfedges.data() + (size_t(first_edge) + e) * 4);
        const size_t edge = se < 0 ? size_t(-int64_t(se)) : size_t(se);
        if (edge >= nedge) return 0;
        const uint16_t v = load<uint16_t>(l.edges.data() + edge * 4 + (se < 0 ? 2 : 0));
        if (v >= nvert) return 0;
        const uint8_t* p = l.verts.data() + size_t(v) * 12;
        const double x = load<float>(p), y = load<float>(p + 4), z = load<float>(p + 8);
        for (int a = 0; a < 2; ++a) {
            const double s = x * vec[a][0] + y * vec[a][1] + z * vec[a][2] + vec[a][3];
            lo[a] = std::min(lo[a], s);
            hi[a] = std::max(hi[a], s);
        }
    }
    // Not numbers (no bound moved: hi < lo) or too wide: no size to count.
    for (int a = 0; a < 2; ++a)
        if (!(hi[a] >= lo[a] && hi[a] - lo[a] < 1e6)) return 0;
    uint64_t size = 1;
    for (int a = 0; a < 2; ++a) size *= uint64_t(std::ceil(hi[a] / 16) - std::floor(lo[a] / 16)) + 1;
    int styles = 0;
    for (int s = 0; s < 4; ++s) styles += face[12 + s] != 255;
    return size * uint64_t(styles);
}

// Lighting bytes and lightmap samples of the faces whose lightmaps end the
// lighting lump. Lightmaps are stored one after another, so the gap from a
// face's offset to the next offset holds exactly that face's lightmaps: the
// last few faces by offset give bytes per sample without visiting them all.
std::pair<uint64_t, uint64_t> lighting_bytes_and_samples(ByteSpan file, size_t lighting_size) {
    const Lumps l{lump(file, kFaces), lump(file, kTexinfo), lump(file, kVertexes), lump(file, kEdges),
                  lump(file, kSurfedges)};
    std::vector<std::pair<int32_t, uint32_t>> lit;  // (lightofs, face)
    for (size_t f = 0; f < l.faces.size() / 20; ++f) {
        const int32_t ofs = load<int32_t>(l.faces.data() + f * 20 + 16);
        if (ofs >= 0 && size_t(ofs) < lighting_size) lit.emplace_back(ofs, uint32_t(f));
    }
    constexpr size_t kFacesUsed = 256;
    if (lit.size() > kFacesUsed) {
        std::nth_element(lit.begin(), lit.end() - kFacesUsed, lit.end());
        lit.erase(lit.begin(), lit.end() - kFacesUsed);
    }
    std::sort(lit.begin(), lit.end());
    uint64_t bytes = 0, samples = 0;
    for (size_t k = 0; k < lit.size(); ++k) {
        const uint64_t next = k + 1 < lit.size() ? uint64_t(lit[k + 1].first) : lighting_size;
        const uint64_t s = face_samples(l, lit[k].second);
        if (s == 0 || next == uint64_t(lit[k].first)) continue;  // shared or unlit
        bytes += next - uint64_t(lit[k].first);
        samples += s;
    }
    return {bytes, samples};
}

}  // namespace

ContentVerdict classify_v29(ByteSpan file) {
    char text[256];
    // 1. Lighting: bytes per lightmap sample.
    const ByteSpan lighting = lump(file, kLighting);
    const auto [bytes, samples] = lighting_bytes_and_samples(file, lighting.size());
    if (!lighting.empty() && samples > 0) {
        const double ratio = double(bytes) / double(samples);
        std::snprintf(text, sizeof text,
                      "lighting holds %.2f bytes per lightmap sample (the last %llu bytes hold %llu samples)", ratio,
                      static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(samples));
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
