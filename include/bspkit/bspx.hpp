// BSPX extension lumps (ericw-tools, FTE, QuakeSpasm-Spiked) of Quake 1,
// BSP2, GoldSrc and Quake 2 files: a directory after the last lump, at the
// end of the last lump rounded up to 4 bytes:
//     char id[4] = "BSPX"; int32 numlumps; { char name[24]; int32 ofs, len; } [numlumps]
// with each lump's data 4-byte aligned and `ofs` counted from the file start.
//
//   const bspkit::Bsp bsp = bspkit::Bsp::open("map.bsp");
//   const bspkit::bspx::Directory dir = bspkit::bspx::read(bsp);
//   if (const auto* l = dir.find("BRUSHLIST")) {
//       const bspkit::bspx::BrushList brushes = bspkit::bspx::decode_brushlist(bsp, *l);
//   }
//
// Record layouts follow ericw-tools (include/common/bspxfile.hh,
// common/bspxfile.cc, light/light.cc) and FTE's specs/bspx.txt. Lumps are
// named "bspx:NAME" in messages: `FILE: lump bspx:BRUSHLIST at offset N: ...`.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/records.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::bspx {

// ---- on-disk records ---------------------------------------------------------

struct bspx_header_t {
    char id[4];        ///< "BSPX"
    int32_t numlumps;
    static constexpr std::string_view kLayout = "4bi";
};
BSPKIT_RECORD(bspx_header_t, 8);

struct bspx_lump_t {
    char lumpname[24];  ///< up to 23 characters, NUL-padded
    int32_t fileofs;    ///< from the start of the file
    int32_t filelen;
    static constexpr std::string_view kLayout = "24bii";
};
BSPKIT_RECORD(bspx_lump_t, 32);

/// BRUSHLIST: per model this header, then `numbrushes` brushes, each followed
/// by its non-axial planes (the axial ones are the brush's bounds).
struct bspx_brushlist_model_t {
    int32_t ver;         ///< 1
    int32_t modelnum;    ///< 0 = world, N = "*N"
    int32_t numbrushes;
    int32_t numplanes;   ///< total over the model's brushes (for validation)
    static constexpr std::string_view kLayout = "4i";
};
BSPKIT_RECORD(bspx_brushlist_model_t, 16);

struct bspx_brushlist_brush_t {
    float mins[3], maxs[3];
    int16_t contents;    ///< Quake CONTENTS_*: -2 solid, -3 water, ..., -8 clip, -16 ladder
    uint16_t numplanes;
    static constexpr std::string_view kLayout = "3f3fhh";
};
BSPKIT_RECORD(bspx_brushlist_brush_t, 28);

struct bspx_brushlist_plane_t {
    float normal[3];
    float dist;
    static constexpr std::string_view kLayout = "3ff";
};
BSPKIT_RECORD(bspx_brushlist_plane_t, 16);

/// DECOUPLED_LM: one per face. The lightmap is lmwidth x lmheight samples at
/// `offset` (in samples of the lighting lump: x3 bytes into RGBLIGHTING / a
/// .lit; Quake 2 and GoldSrc: bytes), sample (i, j) at lightmap coordinate
/// (i, j) where s = dot(p, world_to_lm[0].xyz) + world_to_lm[0].w (t likewise).
struct bspx_decoupled_lm_t {
    uint16_t lmwidth, lmheight;
    int32_t offset;            ///< -1: no lightmap
    float world_to_lm[2][4];   ///< row-major 2 x 4
    static constexpr std::string_view kLayout = "hhi8f";
};
BSPKIT_RECORD(bspx_decoupled_lm_t, 40);

/// FACENORMALS: uint32 count, count of these vectors, then per face and per
/// edge of the face one bspx_facenormals_vertex_t (indices into the vectors).
struct bspx_vec3_t {
    float v[3];
    static constexpr std::string_view kLayout = "3f";
};
BSPKIT_RECORD(bspx_vec3_t, 12);

struct bspx_facenormals_vertex_t {
    uint32_t normal, tangent, bitangent;
    static constexpr std::string_view kLayout = "3i";
};
BSPKIT_RECORD(bspx_facenormals_vertex_t, 12);

/// Per-face lumps with one scalar per face (or per face and style slot):
///   LMSHIFT      uint8   texels per luxel = 1 << shift
///   LMOFFSET     int32   replaces the face's lightofs
///   LMSTYLE      uint8   x styles-per-face (255 unused), replaces the face's styles
///   LMSTYLE16    uint16  x styles-per-face (65535 unused)
///   RGBLIGHTING  3 bytes per sample (a .lit without its header)
///   LIGHTINGDIR  3 bytes per sample (a .lux / deluxemap without its header)
inline constexpr uint16_t kNoStyle16 = 0xffff;

// ---- the directory -------------------------------------------------------------

struct Lump {
    std::string name;         ///< up to the first NUL of lumpname
    int64_t entry_offset = 0; ///< file offset of its directory entry
    int64_t offset = 0;       ///< as stored
    int64_t length = 0;       ///< as stored
    ByteSpan data;            ///< the bytes present in the file (clipped to its end)
    bool truncated() const noexcept { return int64_t(data.size()) < length; }
};

struct Directory {
    int64_t offset = -1;      ///< of the "BSPX" header; -1 when the file has none
    int64_t count = 0;        ///< numlumps as stored
    std::vector<Lump> lumps;  ///< the whole entries present in the file
    std::vector<Diagnostic> diagnostics;  ///< truncation, lumps past EOF, overlaps (lump "bspx" / "bspx:NAME")
    const Lump* find(std::string_view name) const noexcept;
    bool present() const noexcept { return offset >= 0; }
};

/// Formats that may carry BSPX: quake1, bsp2, goldsrc, quake2.
bool applies_to(Format format) noexcept;

/// "bspx:NAME", the lump name used in messages.
std::string lump_name(std::string_view name);

/// Reads the directory. Never throws for bad BSPX data: what is wrong goes to
/// `diagnostics` (also added to Bsp::diagnostics() when the file is opened).
Directory read(const Bsp& bsp);
/// The same, from the raw parts (used by the container while opening).
Directory read(ByteSpan file, std::span<const LumpEntry> entries, std::span<const std::string_view> entry_names,
               uint64_t header_size);

// ---- typed contents ------------------------------------------------------------

struct BrushListBrush {
    bspx_brushlist_brush_t header;
    int64_t offset = 0;  ///< file offset of the brush record
    std::vector<bspx_brushlist_plane_t> planes;
};

struct BrushListModel {
    bspx_brushlist_model_t header;
    int64_t offset = 0;  ///< file offset of the model header
    std::vector<BrushListBrush> brushes;
};

struct BrushList {
    std::vector<BrushListModel> models;
    size_t brush_count() const noexcept;
};

/// Decodes BRUSHLIST. Throws Error (lump bspx:BRUSHLIST, file offset of the
/// record that does not fit) when a count runs past the lump or is negative.
BrushList decode_brushlist(const Bsp& bsp, const Lump& lump);

/// Decodes a lump of `count` fixed-size records or little-endian scalars
/// exactly (throws Error naming bspx:NAME when its length is not count * sizeof(T)).
template <class T>
    requires Record<T> || std::is_arithmetic_v<T>
std::vector<T> decode_exact(const Bsp& bsp, const Lump& lump, size_t count) {
    if (lump.truncated() || lump.data.size() != count * sizeof(T))
        throw Error({bsp.file_name(), lump_name(lump.name), lump.offset},
                    std::to_string(lump.length) + " bytes is not " + std::to_string(count) + " records of " +
                        std::to_string(sizeof(T)) + " bytes (one per face)" +
                        (lump.truncated() ? ": the lump runs past the end of the file" : ""));
    if constexpr (Record<T>) {
        return decode_records<T>(lump.data, ByteOrder::little);
    } else {
        std::vector<T> out(count);
        for (size_t i = 0; i < count; ++i) out[i] = load<T>(lump.data.data() + i * sizeof(T));
        return out;
    }
}

/// Per-face lighting from BSPX and a `.lit` file, for the lightmap builders
/// and for users (LIGHTINGDIR). Lumps that do not fit the map (wrong length)
/// are left out with a diagnostic, as engines ignore them.
struct Lighting {
    /// RGB samples (3 bytes each) replacing a Quake 1 / BSP2 grey lighting
    /// lump: a `.lit` file or RGBLIGHTING; empty when neither is usable.
    ByteSpan rgb;
    std::string rgb_source;  ///< ".lit path", "bspx:RGBLIGHTING" or empty
    ByteSpan direction;      ///< LIGHTINGDIR (3 bytes per sample, as rgb)
    std::vector<uint8_t> lmshift;                 ///< per face, or empty
    std::vector<bspx_decoupled_lm_t> decoupled;   ///< per face, or empty
    std::vector<int32_t> lmoffset;                ///< per face, or empty
    std::vector<uint16_t> styles;                 ///< per face x styles_per_face (LMSTYLE16, or LMSTYLE widened)
    size_t styles_per_face = 0;
    std::vector<Diagnostic> diagnostics;

    Bytes lit_storage;  ///< the .lit file's samples when rgb comes from it
};

struct LightingOptions {
    bool lit_file = true;                       ///< look for a .lit file
    std::optional<std::filesystem::path> lit;   ///< the .lit file; default: beside Bsp::file_name()
};

/// Reads the lighting extensions of a map with `face_count` faces whose
/// grey lighting lump has `mono_bytes` bytes (a .lit must hold 3x as many).
/// `rgb_native` (Quake 2, GoldSrc): RGBLIGHTING and .lit do not apply.
Lighting read_lighting(const Bsp& bsp, size_t face_count, size_t mono_bytes, bool rgb_native,
                       const LightingOptions& options = {});

/// The .lit file a map would use: FILE.bsp -> FILE.lit.
std::filesystem::path lit_path(const Bsp& bsp);

}  // namespace bspkit::bspx
