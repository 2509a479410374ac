// Typed records of Quake 1 (BSP 29), BSP2 / 2PSB and GoldSrc (BSP 30, Blue
// Shift lump order, Half-Life maps with a v29 header), named as in id's
// bspfile.h and ericw-tools' BSP2 structs.
//
//   const bspkit::Bsp bsp = bspkit::Bsp::open("e1m1.bsp");
//   const bspkit::quake1::Map map(bsp);                 // decodes nothing yet
//   for (const auto& f : map.faces()) ...               // BSP 29 / GoldSrc
//   map.visit([](const auto& t) { t.faces.size(); });   // any variant
//
// The 16-bit formats (Quake 29, GoldSrc) and the two 32-bit ones (BSP2 with
// float bounds, 2PSB with short bounds) differ only in nodes, faces,
// clipnodes, leafs, marksurfaces and edges; the other records are shared.
#pragma once

#include <bspkit/records.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::quake1 {

// ---- records shared by every variant -------------------------------------

struct dplane_t {
    float normal[3];
    float dist;
    int32_t type;  ///< 0-2 axial X/Y/Z, 3-5 closest to X/Y/Z
    static constexpr std::string_view kLayout = "3ffi";
};
BSPKIT_RECORD(dplane_t, 20);

struct dvertex_t {
    float point[3];
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(dvertex_t, 12);

struct texinfo_t {
    float vecs[2][4];  ///< [s/t][xyz offset]
    int32_t miptex;    ///< index into the miptex directory
    int32_t flags;     ///< TEX_SPECIAL (1): sky, water — no lightmap
    static constexpr std::string_view kLayout = "8fii";
};
BSPKIT_RECORD(texinfo_t, 40);
inline constexpr int32_t TEX_SPECIAL = 1;

struct dsurfedge_t {
    int32_t edge;  ///< index into edges; negative: the edge walked from v[1] to v[0]
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(dsurfedge_t, 4);

inline constexpr int MAX_MAP_HULLS = 4;

struct dmodel_t {
    float mins[3], maxs[3];
    float origin[3];
    int32_t headnode[MAX_MAP_HULLS];  ///< [0] into nodes, [1..3] into clipnodes
    int32_t visleafs;                 ///< leaves with visibility, leaf 0 excluded
    int32_t firstface, numfaces;
    static constexpr std::string_view kLayout = "3f3f3f4iiii";
};
BSPKIT_RECORD(dmodel_t, 64);

/// Header of one embedded texture. GoldSrc follows the last mip level with a
/// 2-byte colour count and a palette; offsets of 0 mean "in an external WAD".
struct miptex_t {
    char name[16];
    uint32_t width, height;
    uint32_t offsets[4];  ///< of the four mip levels, from the start of this header
    static constexpr std::string_view kLayout = "16b2i4i";
};
BSPKIT_RECORD(miptex_t, 40);

// ---- BSP 29 and GoldSrc (16-bit indices, short bounds) --------------------

struct dnode_t {
    int32_t planenum;
    int16_t children[2];  ///< >= 0 node; negative: leaf -(child + 1)
    int16_t mins[3], maxs[3];
    uint16_t firstface, numfaces;
    static constexpr std::string_view kLayout = "i2h3h3hhh";
};
BSPKIT_RECORD(dnode_t, 24);

struct dclipnode_t {
    int32_t planenum;
    int16_t children[2];  ///< >= 0 clipnode; negative: contents (CONTENTS_*)
    static constexpr std::string_view kLayout = "i2h";
};
BSPKIT_RECORD(dclipnode_t, 8);

/// A node's or clipnode's child as the engines read it: >= 0 a node
/// (clipnode), < 0 a leaf -(child + 1) (a CONTENTS_* value). `count` is the
/// number of nodes (clipnodes). A BSP 29 / GoldSrc file with more than 32767
/// of them stores children as unsigned shorts, as ericw-tools' qbsp writes them
/// for QuakeSpasm-family engines (Mod_LoadNodes_S, Mod_LoadClipnodes): below
/// `count` a node, else child - 65536 (the same leaf or contents as the signed
/// reading gives below 32768). BSP2's 32-bit children are taken as stored.
inline int32_t tree_child(int16_t stored, size_t count) noexcept {
    if (count <= 32767) return stored;
    const int32_t u = uint16_t(stored);
    return size_t(u) < count ? u : u - 65536;
}
inline int32_t tree_child(int32_t stored, size_t /*count*/) noexcept { return stored; }

/// planenum, numedges and texinfo are id's shorts read as unsigned, as the
/// engines that lift id's limits read them (QuakeSpasm's, FTE's and DarkPlaces'
/// Mod_LoadFaces): a negative reading is never a valid index.
struct dface_t {
    uint16_t planenum;
    int16_t side;
    int32_t firstedge;  ///< into surfedges
    uint16_t numedges;
    uint16_t texinfo;
    uint8_t styles[4];  ///< light styles, 255 = unused
    int32_t lightofs;   ///< byte offset into lighting, -1 = none
    static constexpr std::string_view kLayout = "hhihh4bi";
};
BSPKIT_RECORD(dface_t, 20);

struct dleaf_t {
    int32_t contents;
    int32_t visofs;  ///< byte offset into visibility, -1 = none
    int16_t mins[3], maxs[3];
    uint16_t firstmarksurface, nummarksurfaces;
    uint8_t ambient_level[4];
    static constexpr std::string_view kLayout = "ii3h3hhh4b";
};
BSPKIT_RECORD(dleaf_t, 28);

struct dedge_t {
    uint16_t v[2];
    static constexpr std::string_view kLayout = "2h";
};
BSPKIT_RECORD(dedge_t, 4);

struct dmarksurface_t {
    uint16_t face;
    static constexpr std::string_view kLayout = "h";
};
BSPKIT_RECORD(dmarksurface_t, 2);

// ---- BSP2 (32-bit indices, float bounds) ----------------------------------

struct bsp2_dnode_t {
    int32_t planenum;
    int32_t children[2];
    float mins[3], maxs[3];
    uint32_t firstface, numfaces;
    static constexpr std::string_view kLayout = "i2i3f3fii";
};
BSPKIT_RECORD(bsp2_dnode_t, 44);

struct bsp2_dclipnode_t {
    int32_t planenum;
    int32_t children[2];
    static constexpr std::string_view kLayout = "i2i";
};
BSPKIT_RECORD(bsp2_dclipnode_t, 12);

struct bsp2_dface_t {
    int32_t planenum;
    int32_t side;
    int32_t firstedge;
    int32_t numedges;
    int32_t texinfo;
    uint8_t styles[4];
    int32_t lightofs;
    static constexpr std::string_view kLayout = "iiiii4bi";
};
BSPKIT_RECORD(bsp2_dface_t, 28);

struct bsp2_dleaf_t {
    int32_t contents;
    int32_t visofs;
    float mins[3], maxs[3];
    uint32_t firstmarksurface, nummarksurfaces;
    uint8_t ambient_level[4];
    static constexpr std::string_view kLayout = "ii3f3fii4b";
};
BSPKIT_RECORD(bsp2_dleaf_t, 44);

struct bsp2_dedge_t {
    uint32_t v[2];
    static constexpr std::string_view kLayout = "2i";
};
BSPKIT_RECORD(bsp2_dedge_t, 8);

struct bsp2_dmarksurface_t {
    uint32_t face;
    static constexpr std::string_view kLayout = "i";
};
BSPKIT_RECORD(bsp2_dmarksurface_t, 4);

// ---- 2PSB, early RMQ (32-bit indices, short bounds) -----------------------

struct bsp2rmq_dnode_t {
    int32_t planenum;
    int32_t children[2];
    int16_t mins[3], maxs[3];
    uint32_t firstface, numfaces;
    static constexpr std::string_view kLayout = "i2i3h3hii";
};
BSPKIT_RECORD(bsp2rmq_dnode_t, 32);

struct bsp2rmq_dleaf_t {
    int32_t contents;
    int32_t visofs;
    int16_t mins[3], maxs[3];
    uint32_t firstmarksurface, nummarksurfaces;
    uint8_t ambient_level[4];
    static constexpr std::string_view kLayout = "ii3h3hii4b";
};
BSPKIT_RECORD(bsp2rmq_dleaf_t, 32);

// ---- contents values (leaf contents, clipnode children) --------------------

inline constexpr int32_t CONTENTS_EMPTY = -1, CONTENTS_SOLID = -2, CONTENTS_WATER = -3, CONTENTS_SLIME = -4,
                         CONTENTS_LAVA = -5, CONTENTS_SKY = -6, CONTENTS_ORIGIN = -7, CONTENTS_CLIP = -8,
                         CONTENTS_CURRENT_0 = -9, CONTENTS_CURRENT_DOWN = -14, CONTENTS_TRANSLUCENT = -15;
/// Lowest contents value any engine of the family uses (Half-Life's translucent).
inline constexpr int32_t kLowestContents = CONTENTS_TRANSLUCENT;

// ---- the variants ----------------------------------------------------------

enum class Variant : uint8_t { bsp29, bsp2, bsp2rmq };

/// The record types of one variant.
struct Bsp29Types {
    using node = dnode_t;
    using face = dface_t;
    using clipnode = dclipnode_t;
    using leaf = dleaf_t;
    using edge = dedge_t;
    using marksurface = dmarksurface_t;
};
struct Bsp2Types {
    using node = bsp2_dnode_t;
    using face = bsp2_dface_t;
    using clipnode = bsp2_dclipnode_t;
    using leaf = bsp2_dleaf_t;
    using edge = bsp2_dedge_t;
    using marksurface = bsp2_dmarksurface_t;
};
struct Bsp2RmqTypes {
    using node = bsp2rmq_dnode_t;
    using face = bsp2_dface_t;
    using clipnode = bsp2_dclipnode_t;
    using leaf = bsp2rmq_dleaf_t;
    using edge = bsp2_dedge_t;
    using marksurface = bsp2_dmarksurface_t;
};

/// The decoded lumps of one variant, as spans (valid while the Map lives).
template <class Types>
struct Tables {
    std::span<const dplane_t> planes;
    std::span<const dvertex_t> vertexes;
    std::span<const typename Types::node> nodes;
    std::span<const texinfo_t> texinfo;
    std::span<const typename Types::face> faces;
    std::span<const typename Types::clipnode> clipnodes;
    std::span<const typename Types::leaf> leafs;
    std::span<const typename Types::marksurface> marksurfaces;
    std::span<const typename Types::edge> edges;
    std::span<const dsurfedge_t> surfedges;
    std::span<const dmodel_t> models;
};

/// One entry of the miptex directory (lump "textures"), parsed.
struct Miptex {
    int32_t dataofs = -1;       ///< as stored: offset from the start of the lump, -1 = missing
    bool header_ok = false;     ///< a whole miptex_t lies inside the lump at dataofs
    std::string name;           ///< up to the first NUL of miptex_t::name
    uint32_t width = 0, height = 0;
    bool embedded = false;      ///< pixels in the lump (offsets[0] != 0); false = external WAD
    uint32_t offsets[4] = {};
};

struct MiptexDirectory {
    int32_t nummiptex = 0;       ///< as stored
    bool truncated = false;      ///< the lump is too short for the count (entries kept: what fits)
    std::vector<Miptex> entries;
};

/// Parses the miptex directory; never reads outside `lump`, bounded by its size.
MiptexDirectory parse_miptex_directory(ByteSpan lump, ByteOrder order = ByteOrder::little);

/// Typed view of a Quake 1 / BSP2 / 2PSB / GoldSrc map. Lumps are decoded on
/// first access (thread-safe); spans stay valid while the Map and the Bsp live.
/// Lumps are found by name, so the Blue Shift order needs nothing special.
class Map {
public:
    explicit Map(const Bsp& bsp);  ///< throws Error when `bsp` is not of this family

    const Bsp& bsp() const noexcept { return *bsp_; }
    Variant variant() const noexcept { return variant_; }
    bool goldsrc() const noexcept;  ///< RGB lighting, textures with palettes / in WADs
    /// Bytes per lightmap sample: 1 (Quake, BSP2) or 3 (GoldSrc).
    int lightmap_sample_bytes() const noexcept { return goldsrc() ? 3 : 1; }

    // Variable lumps, as bytes.
    ByteSpan entities() const;
    ByteSpan textures() const;  ///< raw miptex lump; see miptex()
    ByteSpan visibility() const;
    ByteSpan lighting() const;
    MiptexDirectory miptex() const;

    // Shared fixed-size lumps.
    std::span<const dplane_t> planes() const;
    std::span<const dvertex_t> vertexes() const;
    std::span<const texinfo_t> texinfo() const;
    std::span<const dsurfedge_t> surfedges() const;
    std::span<const dmodel_t> models() const;

    /// BSP 29 / GoldSrc records (empty spans for the 32-bit variants).
    Tables<Bsp29Types> bsp29() const;
    /// BSP2 records (empty spans for other variants).
    Tables<Bsp2Types> bsp2() const;
    /// 2PSB records (empty spans for other variants).
    Tables<Bsp2RmqTypes> bsp2rmq() const;

    /// Calls `fn(tables)` with the Tables of this map's variant.
    template <class Fn>
    decltype(auto) visit(Fn&& fn) const {
        switch (variant_) {
            case Variant::bsp2: return fn(bsp2());
            case Variant::bsp2rmq: return fn(bsp2rmq());
            case Variant::bsp29: break;
        }
        return fn(bsp29());
    }

    /// Lump index by the names of the format table ("planes", "faces", ...).
    size_t lump(std::string_view name) const;

private:
    template <class T>
    std::span<const T> records(const LazyRecords<T>& lazy, std::string_view name) const;

    const Bsp* bsp_;
    Variant variant_;
    LazyRecords<dplane_t> planes_;
    LazyRecords<dvertex_t> vertexes_;
    LazyRecords<texinfo_t> texinfo_;
    LazyRecords<dsurfedge_t> surfedges_;
    LazyRecords<dmodel_t> models_;
    LazyRecords<dnode_t> nodes29_;
    LazyRecords<dface_t> faces29_;
    LazyRecords<dclipnode_t> clipnodes29_;
    LazyRecords<dleaf_t> leafs29_;
    LazyRecords<dedge_t> edges29_;
    LazyRecords<dmarksurface_t> marksurfaces29_;
    LazyRecords<bsp2_dnode_t> nodes2_;
    LazyRecords<bsp2rmq_dnode_t> nodes2rmq_;
    LazyRecords<bsp2_dface_t> faces2_;
    LazyRecords<bsp2_dclipnode_t> clipnodes2_;
    LazyRecords<bsp2_dleaf_t> leafs2_;
    LazyRecords<bsp2rmq_dleaf_t> leafs2rmq_;
    LazyRecords<bsp2_dedge_t> edges2_;
    LazyRecords<bsp2_dmarksurface_t> marksurfaces2_;
};

/// A face's lightmap by the 16-texel luxel rule: floor(min / 16) .. ceil(max / 16)
/// of its texture coordinates, plus one, on each axis.
struct FaceLightmap {
    int width = 0, height = 0;  ///< samples
    int styles = 0;             ///< light styles in use (up to the first 255)
    int64_t lightofs = -1;
    size_t bytes = 0;           ///< width x height x styles x sample bytes
};

/// The lightmap of face `face`, or nullopt when it has none (lightofs -1, no
/// styles, TEX_SPECIAL) or its references are broken. Ignores BSPX LMSHIFT /
/// DECOUPLED_LM (see `check`, which honours them).
std::optional<FaceLightmap> face_lightmap(const Map& map, size_t face);

// ---- engine limits (warnings in `check`) -----------------------------------

/// Limits of the format's reference tools and engines, checked as warnings:
/// Quake: id's bspfile.h (and WinQuake's 256-texel surface extents);
/// GoldSrc: VHLT's bspfile.h, the compile tools of current Half-Life maps
/// (its engine limits: 8192 leaves, 16-luxel surface extents).
struct Limits {
    std::string_view source;  ///< named in the warnings
    size_t models, planes, nodes, clipnodes, leafs, vertexes, faces, marksurfaces, texinfo, edges, surfedges,
        textures, miptex_bytes, lighting_bytes, visibility_bytes, entities_bytes;
    int max_extent;  ///< largest lightmapped surface extent in texels
};
inline constexpr Limits kQuakeLimits{"Quake's bspfile.h", 256, 32767, 32767, 32767, 8192, 65535, 65535, 65535, 4096,
                                     256000, 512000, 512, 0x200000, 0x100000, 0x100000, 65536, 256};
inline constexpr Limits kGoldSrcLimits{"Half-Life's (VHLT bspfile.h)", 512, 32768, 32767, 32767, 8192, 65535, 65535,
                                       65535, 32767, 256000, 512000, 4096, 0x2000000, 0x3000000, 0x800000,
                                       2048 * 1024, 256};

}  // namespace bspkit::quake1
