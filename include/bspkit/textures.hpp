// Textures from outside the map: a search path the way the games find them.
//
//   bspkit::model::Map map = bspkit::model::build(bsp);
//   bspkit::textures::SearchPath path;
//   path.wads = {"valve/"};                 // WAD2 / WAD3 files or folders
//   path.game_dirs = {"baseq2/"};            // Quake 2, Quake 3, Source game folders
//   auto result = bspkit::textures::resolve(map, bsp, path);
//   for (const auto& m : result.missing) ...  // material, where it was searched
//
// Per format (after the textures the map embeds):
//   Quake 1 / BSP2 / GoldSrc: miptex of the same name (case-insensitive) in
//     WAD2 (Quake palette) and WAD3 (own palette) files: the --wad files, then
//     the files named by worldspawn's "wad" key (a ';' list of paths, found by
//     file name in the --wad folders and the game folders), then the other
//     *.wad files of the --wad folders (by name).
//   Quake 2: textures/NAME.wal with the palette of pics/colormap.pcx, then
//     textures/NAME.tga / .png / .jpg (Quake 2 ports), loose in each game
//     folder, then in its PACK archives (pak*.pak, later packs first, as the
//     engine lets pak1 override pak0), then in its *.pk3 archives.
//   Quake 3: the image of the shader's first stage (map / clampMap, from
//     scripts/*.shader) or the name itself, as .tga / .jpg / .png (Quake 3
//     tries the other extensions when the named one is absent), loose files
//     first, then the *.pk3 archives (later names first, as the engine
//     lets later archives override earlier ones).
//   Source: materials/NAME.vmt -> its $basetexture (a "patch" material reads
//     its "include" first) -> materials/TEX.vtf, each looked up in the map's
//     pakfile, then loose under each game folder, then in its *_dir.vpk
//     archives; a material without a VMT tries materials/NAME.vtf.
//   Quake 3 lightmaps kept outside the map (q3map2 -external, an empty
//     lightmaps lump): maps/<map>/lm_NNNN.tga / .jpg / .png in the same
//     places; the pages found light their surfaces and are packed into
//     Map::lightmaps (an empty Map::external_lightmaps: nothing to do).
//   Sky boxes (SearchPath::sky_box, for pictures of the map): the six images
//     rt bk lf ft up dn of the box the map names, in the same places as its
//     textures: Quake 2 env/<worldspawn "sky", default unit1_><suffix>.tga,
//     then .pcx; Quake 3 <far box>_<suffix>.tga / .jpg / .png (skyParms of
//     the first sky shader a surface shows); GoldSrc gfx/env/<worldspawn
//     "skyname", default desert><suffix>.tga; Source the materials
//     skybox/<worldspawn "skyname", default sky_urb01><suffix>. All six found:
//     Map::sky_box; else Resolved::sky_box_missing says which and where.
//     Quake 3 also: the sky shader's stages with an image, its cloud layers
//     (the image as the engine tries it: the name, then .tga / .jpg / .png),
//     into Map::sky_clouds; a far box under an opaque first layer is hidden:
//     it is neither loaded nor reported missing.
// Found textures are appended to Map::textures and set Material::texture.
// A material whose size was unknown (width 0: UVs in texels, Quake 2 and
// Nightfire) gets the texture's size and its UVs divided by it, so that they
// are normalised like everywhere else; Quake 3 UVs are already normalised.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/bytes.hpp>
#include <bspkit/error.hpp>
#include <bspkit/model.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::textures {

struct SearchPath {
    std::vector<std::filesystem::path> wads;       ///< WAD files, or folders to find them in
    std::vector<std::filesystem::path> game_dirs;  ///< game folders (baseq2, baseq3, hl2, cstrike ...)
    bool map_wad_key = true;                       ///< also the WADs named by worldspawn's "wad" key
    std::optional<std::array<uint8_t, 768>> quake_palette;  ///< WAD2 miptex palette (default: Quake's)
    bool textures = true;  ///< the materials' textures (false: only Quake 3 external lightmaps)
    bool sky_box = false;  ///< also the map's sky box (Map::sky_box), for pictures of the map
};

/// A material no texture was found (or decoded) for.
struct Missing {
    std::string material;
    std::vector<std::string> searched;  ///< every place looked at, in order ("pakfile:materials/x.vmt", a path ...)
    std::string problem;                ///< why a file that was found could not be used; empty when none was found
};

struct Resolved {
    size_t found = 0;                      ///< textures added to the map
    size_t lightmap_pages = 0;             ///< Quake 3 external lightmap pages loaded (Map::external_lightmaps)
    /// Quake 3 materials whose shader script names no image (see
    /// ShaderImage: caulk, clip, hint, trigger, fog volumes, a sky without a
    /// far box), or says `surfaceparm nodraw` and whose image was not found:
    /// the engine draws no image for them, so they are not in `missing`.
    size_t without_image = 0;
    std::vector<Missing> missing;          ///< one per material name, in material order
    /// SearchPath::sky_box: the sky image that was not found or not usable
    /// ("material": "sky box <name> (<face>)" or "sky clouds <shader>
    /// (<image>)", where it was searched); then Map::sky_box, or
    /// Map::sky_clouds, is not set.
    std::optional<Missing> sky_box_missing;
    std::vector<Diagnostic> diagnostics;   ///< archives that could not be read, and why
};

/// Fills Map::textures / Material::texture for the materials the map does
/// not embed; on a Quake 3 map, only those some surface uses (its materials
/// are every shader of the map, those only on brush sides too: clip, hint,
/// caulk, "noshader"). Never throws for bad archives or images: an archive that
/// cannot be read becomes a diagnostic (and is not searched), a file that
/// is found but does not decode becomes the material's `problem`.
Resolved resolve(model::Map& map, const Bsp& bsp, const SearchPath& path);

/// One WAD a worldspawn "wad" key lists: the entry as written (';' ends it,
/// '\\' read as '/') and its file name, by which tools and engines look it up.
struct WadKeyEntry {
    std::string written;
    std::string file;
};
/// Whether `key` lists WADs: "wad", or "_wad" as some compile tools write it (any case).
bool is_wad_key(std::string_view key);
/// The entries of a "wad" key's `value`, in order; those without a file name left out.
std::vector<WadKeyEntry> wad_key_entries(std::string_view value);

// --- Decoders (each throws Error naming `name` and the byte offset) ----------

/// Largest texture side accepted from any file (engines stop far below).
inline constexpr uint32_t kMaxSide = 8192;

/// WAD2 / WAD3 directory entry (32 bytes on disk).
struct WadEntry {
    std::string name;
    uint32_t offset = 0, disk_size = 0, size = 0;
    uint8_t type = 0, compression = 0;
};

class Wad {
public:
    /// Parses a WAD2 or WAD3 file's bytes.
    static Wad parse(Bytes bytes, std::string name);
    static Wad open(const std::filesystem::path& path);
    bool wad3() const noexcept { return wad3_; }
    const std::vector<WadEntry>& entries() const noexcept { return entries_; }
    const std::string& name() const noexcept { return name_; }
    /// Index of the miptex named `texture` (case-insensitive), if any.
    std::optional<size_t> find(std::string_view texture) const;
    /// Decodes miptex entry `index` (WAD2: with `palette`; WAD3: its own).
    model::Texture decode(size_t index, const std::array<uint8_t, 768>& palette) const;

private:
    std::string name_;
    Bytes bytes_;
    bool wad3_ = false;
    std::vector<WadEntry> entries_;
};

/// A miptex (40-byte header, 4 mip levels; GoldSrc: uint16 count + palette
/// after the last level) to RGBA; `own_palette` for GoldSrc / WAD3.
model::Texture decode_miptex(ByteSpan data, bool own_palette, const std::array<uint8_t, 768>& palette,
                             const std::string& name);

/// The 256-colour palette at the end of a PCX file (0x0C, then 768 bytes).
std::array<uint8_t, 768> pcx_palette(ByteSpan data, const std::string& name);
/// An 8-bit PCX image (RLE, one plane, the 256-colour palette at its end), as
/// Quake 2's env/ sky images: RGBA, opaque.
model::Texture decode_pcx(ByteSpan data, const std::string& name);
/// A Quake 2 .wal (100-byte header, 4 mip levels of palette indices).
model::Texture decode_wal(ByteSpan data, const std::array<uint8_t, 768>& palette, const std::string& name);
/// TGA, JPEG or PNG (stb_image).
model::Texture decode_image(ByteSpan data, const std::string& name);
/// A Source VTF 7.0-7.5: mip 0 of the first frame / face / slice.
model::Texture decode_vtf(ByteSpan data, const std::string& name);

/// Quake 3 shader scripts, every shader: its name (lower case) -> the image
/// the engine shows for it: its first stage's map / clampMap / animMap other
/// than $lightmap / $whiteimage, else its sky's far box (skyParms <box>: the
/// box's "up" face, <box>_up.tga), else its qer_editorImage; and whether it
/// has `surfaceparm nodraw`.
struct ShaderImage {
    std::string shader;
    std::string far_box;  ///< skyParms' far box ("env/space1"), empty when none or "-"
    float cloud_height = 0;  ///< skyParms' cloud height (512 when it says 0); 0 without skyParms
    /// The stages that name an image (not $lightmap / $whiteimage), in order:
    /// a sky shader's cloud layers (model::SkyClouds).
    struct Stage {
        std::string image;                ///< map / clampMap, or animMap's first frame
        float scale_s = 1, scale_t = 1;   ///< tcMod scale
        model::BlendFactor src = model::BlendFactor::one, dst = model::BlendFactor::zero;  ///< blendFunc
    };
    std::vector<Stage> stages;
    /// Empty when the shader names no image: the engine draws none for it
    /// (nodraw, and shaders with no stage, which ioquake3 draws as fog only).
    std::string image;
    bool nodraw = false;
};
std::vector<ShaderImage> parse_shaders(std::string_view text);

/// A Source VMT (KeyValues text): its shader name ("LightmappedGeneric",
/// "patch", ...), $basetexture and, for patch materials, "include".
struct Vmt {
    std::string shader;
    std::string base_texture;
    std::string include;
};
Vmt parse_vmt(std::string_view text);

/// A Quake / Quake 2 PACK archive (pak0.pak ...): a 12-byte header and a
/// directory of 64-byte entries (name[56], offset, length). Only the header
/// and the directory are read when it is opened; each file is read on demand.
class Pak {
public:
    static Pak open(const std::filesystem::path& path);
    /// Contents of `path` ("textures/e1u1/floor1_1.wal", case-insensitive), or nullopt.
    std::optional<Bytes> read(std::string_view path) const;
    size_t size() const noexcept { return files_.size(); }

    struct File {
        uint32_t offset = 0, length = 0;
    };

private:
    std::filesystem::path path_;
    std::vector<std::pair<std::string, File>> files_;  ///< sorted by lower-case name
};

/// A Source VPK directory (*_dir.vpk, version 1 or 2); archive data in the
/// _dir file or in NAME_NNN.vpk beside it.
class Vpk {
public:
    static Vpk open(const std::filesystem::path& dir_file);
    static Vpk parse(Bytes dir_bytes, std::filesystem::path dir_file);
    /// Contents of `path` ("materials/x.vtf", case-insensitive), or nullopt.
    std::optional<Bytes> read(std::string_view path) const;
    size_t size() const noexcept { return files_.size(); }
    const std::filesystem::path& path() const noexcept { return path_; }

    struct File {
        uint32_t crc = 0;
        uint16_t archive = 0;
        uint32_t offset = 0, length = 0;
        size_t preload_at = 0;   ///< in the directory bytes
        uint16_t preload = 0;
    };

private:
    Bytes read_data(const std::string& key, const File& f) const;

    std::filesystem::path path_;
    Bytes dir_;
    size_t data_start_ = 0;  ///< where archive 0x7fff data starts in the _dir file
    std::vector<std::pair<std::string, File>> files_;  ///< sorted by name
};

}  // namespace bspkit::textures
