// bspkit::source::Map: which struct decodes which lump in which version, and
// the lazily decoded, byte-order-normalised views.
#include <bspkit/formats/source.hpp>
#include <bspkit/once.hpp>

#include <algorithm>
#include <cstring>

namespace bspkit::source {
namespace {

Location where_in(const Bsp& bsp, size_t lump, int64_t offset = -1) {
    const LumpEntry& e = bsp.entry(lump);
    return {bsp.file_name(), std::string(bsp.lump_name(lump)), offset < 0 ? int64_t(e.offset) : e.offset + offset};
}

/// A converted view decoded once (for records normalised to another struct).
template <class T>
struct Lazy {
    OnceFlag once;
    std::vector<T> items;
    template <class Fn>
    std::span<const T> get(Fn&& fill) {
        once.call([&] { items = fill(); });
        return items;
    }
};

/// Each record of `in` converted by `convert`, into a list allocated once.
template <class In, class Fn>
auto convert_all(std::span<const In> in, Fn&& convert) {
    std::vector<decltype(convert(in[0]))> out;
    out.reserve(in.size());
    for (const In& record : in) out.push_back(convert(record));
    return out;
}

template <class T>
struct LazyValue {
    OnceFlag once;
    T value{};
    template <class Fn>
    const T& get(Fn&& fill) {
        once.call([&] { value = fill(); });
        return value;
    }
};

dface_t from_v17(const dface_v17_t& f) {
    dface_t out{};
    out.planenum = f.planenum;
    out.side = f.side;
    out.onNode = f.onNode;
    out.firstedge = f.firstedge;
    out.numedges = f.numedges;
    out.texinfo = f.texinfo;
    out.dispinfo = f.dispinfo;
    out.surfaceFogVolumeID = f.surfaceFogVolumeID;
    std::copy_n(f.styles, MAXLIGHTMAPS, out.styles);
    out.lightofs = f.lightofs;
    out.area = f.area;
    std::copy_n(f.LightmapTextureMinsInLuxels, 2, out.LightmapTextureMinsInLuxels);
    std::copy_n(f.LightmapTextureSizeInLuxels, 2, out.LightmapTextureSizeInLuxels);
    out.origFace = f.origFace;
    out.smoothingGroups = f.smoothingGroups;
    return out;
}

dleaf_t from_v0(const dleaf_version_0_t& l) {
    dleaf_t out{};
    out.contents = l.contents;
    out.cluster = l.cluster;
    out.area_flags = l.area_flags;
    std::copy_n(l.mins, 3, out.mins);
    std::copy_n(l.maxs, 3, out.maxs);
    out.firstleafface = l.firstleafface;
    out.numleaffaces = l.numleaffaces;
    out.firstleafbrush = l.firstleafbrush;
    out.numleafbrushes = l.numleafbrushes;
    out.leafWaterDataID = l.leafWaterDataID;
    out.padding = l.padding;
    return out;
}

dworldlight_v1_t from_v0(const dworldlight_t& w) {
    dworldlight_v1_t out{};
    out.origin = w.origin;
    out.intensity = w.intensity;
    out.normal = w.normal;
    out.shadow_cast_offset = {0, 0, 0};
    out.cluster = w.cluster;
    out.type = w.type;
    out.style = w.style;
    out.stopdot = w.stopdot;
    out.stopdot2 = w.stopdot2;
    out.exponent = w.exponent;
    out.radius = w.radius;
    out.constant_attn = w.constant_attn;
    out.linear_attn = w.linear_attn;
    out.quadratic_attn = w.quadratic_attn;
    out.flags = w.flags;
    out.texinfo = w.texinfo;
    out.owner = w.owner;
    return out;
}

}  // namespace

// ---------------------------------------------------------------------------
// Variable lumps
// ---------------------------------------------------------------------------

Occlusion parse_occlusion(ByteSpan lump, ByteOrder order, int lump_version, const Location& where) {
    Occlusion out;
    out.lump_version = lump_version;
    if (lump.empty()) return out;
    size_t at = 0;
    auto fail = [&](const std::string& what) {
        Location w = where;
        if (w.offset >= 0) w.offset += int64_t(at);
        throw Error(w, what);
    };
    auto read_count = [&](const char* name, size_t record) -> size_t {
        if (lump.size() - at < 4) fail(std::string("occlusion lump ends before the ") + name + " count");
        const int32_t n = load<int32_t>(lump.data() + at, order);
        at += 4;
        if (n < 0) fail(std::string(name) + " count " + std::to_string(n) + " is negative");
        if (uint64_t(n) * record > lump.size() - at)
            fail(std::string(name) + " count " + std::to_string(n) + " needs " + std::to_string(uint64_t(n) * record) +
                 " bytes, " + std::to_string(lump.size() - at) + " remain");
        return size_t(n);
    };
    const size_t occluder_size = lump_version >= 1 ? sizeof(doccluderdata_t) : sizeof(doccluderdata_v0_t);
    const size_t n_occluders = read_count("occluder", occluder_size);
    if (lump_version >= 1) {
        out.occluders = decode_records<doccluderdata_t>(lump.subspan(at, n_occluders * occluder_size), order);
    } else {
        for (const auto& o : decode_records<doccluderdata_v0_t>(lump.subspan(at, n_occluders * occluder_size), order))
            out.occluders.push_back({o.flags, o.firstpoly, o.polycount, o.mins, o.maxs, 0});
    }
    at += n_occluders * occluder_size;
    const size_t n_polys = read_count("occluder polygon", sizeof(doccluderpolydata_t));
    out.polys = decode_records<doccluderpolydata_t>(lump.subspan(at, n_polys * sizeof(doccluderpolydata_t)), order);
    at += n_polys * sizeof(doccluderpolydata_t);
    const size_t n_indices = read_count("occluder vertex index", 4);
    out.vertex_indices.resize(n_indices);
    for (size_t i = 0; i < n_indices; ++i) out.vertex_indices[i] = load<int32_t>(lump.data() + at + 4 * i, order);
    at += 4 * n_indices;
    if (at != lump.size())
        fail(std::to_string(lump.size() - at) + " bytes follow the occluder vertex indices (wrong lump version " +
             std::to_string(lump_version) + "?)");
    return out;
}

VisHeader parse_vis_header(ByteSpan lump, ByteOrder order, const Location& where) {
    VisHeader out;
    if (lump.empty()) return out;
    if (lump.size() < 4) throw Error(where, "visibility lump of " + std::to_string(lump.size()) + " bytes has no cluster count");
    const int32_t n = load<int32_t>(lump.data(), order);
    if (n < 0) throw Error(where, "numclusters " + std::to_string(n) + " is negative");
    if (4 + uint64_t(n) * 8 > lump.size())
        throw Error(where, "numclusters " + std::to_string(n) + " needs a " + std::to_string(4 + uint64_t(n) * 8) +
                               "-byte offset table, the lump holds " + std::to_string(lump.size()));
    out.numclusters = n;
    out.bitofs.resize(size_t(n));
    for (size_t c = 0; c < size_t(n); ++c) {
        out.bitofs[c][0] = load<int32_t>(lump.data() + 4 + 8 * c, order);
        out.bitofs[c][1] = load<int32_t>(lump.data() + 8 + 8 * c, order);
    }
    return out;
}

std::vector<PhysModel> parse_physcollide(ByteSpan lump, ByteOrder order, const Location& where) {
    std::vector<PhysModel> out;
    size_t at = 0;
    auto fail = [&](const std::string& what) {
        Location w = where;
        if (w.offset >= 0) w.offset += int64_t(at);
        throw Error(w, what);
    };
    while (at < lump.size()) {
        if (lump.size() - at < sizeof(dphysmodel_t)) fail("physcollide model header runs past the end of the lump");
        dphysmodel_t h = decode_records<dphysmodel_t>(lump.subspan(at, sizeof(dphysmodel_t)), order)[0];
        if (h.modelIndex == -1) break;
        if (h.dataSize < 0 || h.keydataSize < 0 || h.solidCount < 0)
            fail("physcollide model " + std::to_string(h.modelIndex) + " has a negative size or count");
        const uint64_t body = uint64_t(h.dataSize) + uint64_t(h.keydataSize);
        if (body > lump.size() - at - sizeof(dphysmodel_t))
            fail("physcollide model " + std::to_string(h.modelIndex) + " needs " + std::to_string(body) +
                 " bytes after its header, " + std::to_string(lump.size() - at - sizeof(dphysmodel_t)) + " remain");
        out.push_back({h, at});
        at += sizeof(dphysmodel_t) + size_t(body);
    }
    return out;
}

// ---------------------------------------------------------------------------
// Map
// ---------------------------------------------------------------------------

struct Map::Cache {
    LazyRecords<dplane_t> planes;
    LazyRecords<dtexdata_t> texdata;
    LazyRecords<dvertex_t> vertexes;
    LazyRecords<dnode_t> nodes;
    LazyRecords<texinfo_t> texinfo;
    LazyRecords<dface_t> faces, originalfaces, faces_hdr;
    LazyRecords<dface_v17_t> faces_v17, originalfaces_v17;
    Lazy<dface_t> faces_conv, originalfaces_conv;
    LazyRecords<ColorRGBExp32> lighting, lighting_hdr;
    LazyRecords<dleaf_t> leafs;
    LazyRecords<dleaf_version_0_t> leafs_v0;
    Lazy<dleaf_t> leafs_conv;
    LazyRecords<dfaceid_t> faceids;
    LazyRecords<dedge_t> edges;
    LazyRecords<dsurfedge_t> surfedges;
    LazyRecords<dmodel_t> models;
    Lazy<dworldlight_v1_t> worldlights[2];
    LazyRecords<dleafface_t> leaffaces;
    LazyRecords<dleafbrush_t> leafbrushes;
    LazyRecords<dbrush_t> brushes;
    LazyRecords<dbrushside_t> brushsides;
    LazyRecords<dbrushside_v21_t> brushsides_v21;
    Lazy<dbrushside_t> brushsides_conv;
    LazyRecords<darea_t> areas;
    LazyRecords<dareaportal_t> areaportals;
    LazyRecords<ddispinfo_t> dispinfo;
    LazyRecords<Vector> vertnormals;
    LazyRecords<dvertnormalindex_t> vertnormalindices;
    LazyRecords<dDispVert> disp_verts;
    LazyRecords<dleafwaterdata_t> leafwaterdata;
    LazyRecords<dprimitive_t> primitives;
    LazyRecords<dprimvert_t> primverts;
    LazyRecords<dprimindex_t> primindices;
    LazyRecords<Vector> clipportalverts;
    LazyRecords<dcubemapsample_t> cubemaps;
    LazyRecords<dtexdatastringtable_t> texdata_string_table;
    LazyRecords<doverlay_t> overlays;
    LazyRecords<dleafmindisttowater_t> leafmindisttowater;
    LazyRecords<dfacemacrotextureinfo_t> face_macro_texture_info;
    LazyRecords<dDispTri> disp_tris;
    LazyRecords<dwateroverlay_t> wateroverlays;
    LazyRecords<dleafambientindex_t> leaf_ambient_index[2];
    LazyRecords<dleafambientlighting_t> leaf_ambient_lighting[2];
    LazyRecords<dflagslump_t> map_flags;
    LazyRecords<doverlayfade_t> overlay_fades;
    LazyRecords<doverlaysystemlevel_t> overlay_system_levels;
    LazyValue<Occlusion> occlusion;
    LazyValue<VisHeader> vis;
};

Map::Map(const Bsp& bsp) : bsp_(&bsp), cache_(std::make_unique<Cache>()) {
    if (bsp.format() != Format::source)
        throw Error({bsp.file_name(), "header", 0},
                    "not a Source map (format " + std::string(format_id(bsp.format())) + ")");
    version_ = bsp.version().value_or(0);
}
Map::Map(Map&&) noexcept = default;
Map& Map::operator=(Map&&) noexcept = default;
Map::~Map() = default;

bool Map::l4d2() const noexcept { return bsp_->layout().directory == DirectoryLayout::source_l4d2; }
int Map::lump_version(size_t index) const { return bsp_->entry(index).version; }
bool Map::brushside_variant_v21() const noexcept {
    // CS:GO-branch v21 maps split the short into bevel and thin bytes (corpus:
    // thin sides store bytes 00 01). Big-endian console files store bevel as
    // a byte too (x360_shack: bytes 01 00, a short would read 256).
    return (version_ >= 21 && !l4d2()) || bsp_->byte_order() == ByteOrder::big;
}

LumpLayout Map::layout_of(size_t index) const {
    const int lv = lump_version(index);
    auto rec = [](std::string_view name, uint32_t size, std::string note = {}) {
        return LumpLayout{name, size, std::move(note)};
    };
    auto raw = [](std::string note) { return LumpLayout{{}, 0, std::move(note)}; };
    switch (index) {
        case lump::entities: return rec("char", 0, "key/value text, NUL-terminated");
        case lump::planes: return rec("dplane_t", 20);
        case lump::texdata: return rec("dtexdata_t", 32);
        case lump::vertexes: return rec("dvertex_t", 12);
        case lump::visibility: return rec("dvis_t", 0, "cluster count, PVS/PAS offsets, run-length bit vectors");
        case lump::nodes: return rec("dnode_t", 32);
        case lump::texinfo: return rec("texinfo_t", 72);
        case lump::faces:
        case lump::originalfaces:
            if (version_ <= 17) return rec("dface_v17_t", 104, "version 17 (Bloodlines) faces are 104 bytes");
            return rec("dface_t", 56);
        case lump::faces_hdr: return rec("dface_t", 56);
        case lump::lighting:
        case lump::lighting_hdr: return rec("ColorRGBExp32", 4, "samples addressed by dface_t::lightofs (bytes)");
        case lump::occlusion:
            return rec(lv >= 1 ? "doccluderdata_t" : "doccluderdata_v0_t", 0,
                       "counted arrays: occluders, polygons, vertex indices (lump version " + std::to_string(lv) + ")");
        case lump::leafs:
            if (version_ <= 17) return rec("dleaf_t", 32, "version 17 leafs carry no ambient lighting");
            if (lv == 0) return rec("dleaf_version_0_t", 56, "lump version 0 leafs carry a CompressedLightCube");
            return rec("dleaf_t", 32, "lump version " + std::to_string(lv) + ": ambient lighting lives in lumps 55/56");
        case lump::faceids: return rec("dfaceid_t", 2);
        case lump::edges: return rec("dedge_t", 4);
        case lump::surfedges: return rec("dsurfedge_t", 4);
        case lump::models: return rec("dmodel_t", 48);
        case lump::worldlights:
        case lump::worldlights_hdr:
            if (lv >= 1) return rec("dworldlight_v1_t", 100, "lump version 1 adds shadow_cast_offset");
            return rec("dworldlight_t", 88);
        case lump::leaffaces: return rec("dleafface_t", 2);
        case lump::leafbrushes: return rec("dleafbrush_t", 2);
        case lump::brushes: return rec("dbrush_t", 12);
        case lump::brushsides:
            if (brushside_variant_v21())
                return rec("dbrushside_v21_t", 8,
                           bsp_->byte_order() == ByteOrder::big
                               ? "big-endian console map: bevel is stored as a byte, not a short"
                               : "version 21+ outside the L4D2 lump order (CS:GO branch): bevel and thin bytes");
            return rec("dbrushside_t", 8, l4d2() ? "Left 4 Dead 2 keeps the short bevel" : "");
        case lump::areas: return rec("darea_t", 8);
        case lump::areaportals: return rec("dareaportal_t", 12);
        case lump::portals:
        case lump::clusters:
        case lump::portalverts:
        case lump::clusterportals:
            if (version_ <= 19) return raw("vvis portal data of version 17-19 maps: layout not documented in the specs");
            return raw("unused, or game-specific (prop collision / fake entities) in later branches: layout not documented");
        case lump::dispinfo:
            if (version_ <= 17)
                return raw("version 17 displacement info: layout not confirmed (HL2 beta v17 uses 172 bytes without "
                           "DispTriStart; no corpus map has displacements)");
            return rec("ddispinfo_t", 176);
        case lump::physdisp: return raw("physics displacement data (per-displacement size list + VPhysics blobs)");
        case lump::physcollide: return rec("dphysmodel_t", 0, "model headers each followed by VPhysics data and text");
        case lump::vertnormals: return rec("Vector", 12);
        case lump::vertnormalindices: return rec("dvertnormalindex_t", 2);
        case lump::disp_lightmap_alphas: return raw("bytes addressed by ddispinfo_t::LightmapAlphaStart");
        case lump::disp_verts: return rec("dDispVert", 20);
        case lump::disp_lightmap_sample_positions:
            return raw("packed sample positions addressed by ddispinfo_t::LightmapSamplePositionStart");
        case lump::game_lump: return rec("dgamelump_t", 0, "game lump directory (see Bsp::game_lumps)");
        case lump::leafwaterdata: return rec("dleafwaterdata_t", 12);
        case lump::primitives: return rec("dprimitive_t", 10);
        case lump::primverts: return rec("dprimvert_t", 12);
        case lump::primindices: return rec("dprimindex_t", 2);
        case lump::pakfile: return raw("uncompressed ZIP archive");
        case lump::clipportalverts: return rec("Vector", 12);
        case lump::cubemaps: return rec("dcubemapsample_t", 16);
        case lump::texdata_string_data: return rec("char", 0, "NUL-terminated texture names");
        case lump::texdata_string_table: return rec("dtexdatastringtable_t", 4);
        case lump::overlays: return rec("doverlay_t", 352);
        case lump::leafmindisttowater: return rec("dleafmindisttowater_t", 2);
        case lump::face_macro_texture_info: return rec("dfacemacrotextureinfo_t", 2);
        case lump::disp_tris: return rec("dDispTri", 2);
        case lump::physcollidesurface: return raw("Havok terrain surface data (deprecated) / prop blob in later branches");
        case lump::wateroverlays: return rec("dwateroverlay_t", 1120);
        case lump::leaf_ambient_index_hdr:
        case lump::leaf_ambient_index:
            if (version_ < 20) return raw("Xbox lightmap pages before version 20: layout not documented");
            return rec("dleafambientindex_t", 4);
        case lump::leaf_ambient_lighting_hdr:
        case lump::leaf_ambient_lighting: return rec("dleafambientlighting_t", 28);
        case lump::xzippakfile: return raw("XZip pak file (Xbox, deprecated)");
        case lump::map_flags: return rec("dflagslump_t", 4);
        case lump::overlay_fades: return rec("doverlayfade_t", 8);
        case lump::overlay_system_levels: return rec("doverlaysystemlevel_t", 4);
        case lump::physlevel: return raw("physics level data (L4D2 branch): layout not documented");
        case lump::disp_multiblend: return raw("displacement multiblend (Alien Swarm branch): layout not documented");
        default: return raw("no such lump");
    }
}

size_t Map::count(size_t index) const {
    const LumpLayout l = layout_of(index);
    if (l.raw() || l.size == 0) return 0;
    return bsp_->decoded(index).size() / l.size;
}

std::string_view Map::entities() const {
    const ByteSpan b = bsp_->decoded(lump::entities);
    std::string_view s(reinterpret_cast<const char*>(b.data()), b.size());
    if (const size_t nul = s.find('\0'); nul != std::string_view::npos) s = s.substr(0, nul);
    return s;
}

#define BSPKIT_SIMPLE(name, type, index) \
    std::span<const type> Map::name() const { return cache_->name.get(*bsp_, index); }

BSPKIT_SIMPLE(planes, dplane_t, lump::planes)
BSPKIT_SIMPLE(texdata, dtexdata_t, lump::texdata)
BSPKIT_SIMPLE(vertexes, dvertex_t, lump::vertexes)
BSPKIT_SIMPLE(nodes, dnode_t, lump::nodes)
BSPKIT_SIMPLE(texinfo, texinfo_t, lump::texinfo)
BSPKIT_SIMPLE(faces_hdr, dface_t, lump::faces_hdr)
BSPKIT_SIMPLE(lighting, ColorRGBExp32, lump::lighting)
BSPKIT_SIMPLE(lighting_hdr, ColorRGBExp32, lump::lighting_hdr)
BSPKIT_SIMPLE(faceids, dfaceid_t, lump::faceids)
BSPKIT_SIMPLE(edges, dedge_t, lump::edges)
BSPKIT_SIMPLE(surfedges, dsurfedge_t, lump::surfedges)
BSPKIT_SIMPLE(models, dmodel_t, lump::models)
BSPKIT_SIMPLE(leaffaces, dleafface_t, lump::leaffaces)
BSPKIT_SIMPLE(leafbrushes, dleafbrush_t, lump::leafbrushes)
BSPKIT_SIMPLE(brushes, dbrush_t, lump::brushes)
BSPKIT_SIMPLE(areas, darea_t, lump::areas)
BSPKIT_SIMPLE(areaportals, dareaportal_t, lump::areaportals)
BSPKIT_SIMPLE(vertnormals, Vector, lump::vertnormals)
BSPKIT_SIMPLE(vertnormalindices, dvertnormalindex_t, lump::vertnormalindices)
BSPKIT_SIMPLE(disp_verts, dDispVert, lump::disp_verts)
BSPKIT_SIMPLE(leafwaterdata, dleafwaterdata_t, lump::leafwaterdata)
BSPKIT_SIMPLE(primitives, dprimitive_t, lump::primitives)
BSPKIT_SIMPLE(primverts, dprimvert_t, lump::primverts)
BSPKIT_SIMPLE(primindices, dprimindex_t, lump::primindices)
BSPKIT_SIMPLE(clipportalverts, Vector, lump::clipportalverts)
BSPKIT_SIMPLE(cubemaps, dcubemapsample_t, lump::cubemaps)
BSPKIT_SIMPLE(texdata_string_table, dtexdatastringtable_t, lump::texdata_string_table)
BSPKIT_SIMPLE(overlays, doverlay_t, lump::overlays)
BSPKIT_SIMPLE(leafmindisttowater, dleafmindisttowater_t, lump::leafmindisttowater)
BSPKIT_SIMPLE(face_macro_texture_info, dfacemacrotextureinfo_t, lump::face_macro_texture_info)
BSPKIT_SIMPLE(disp_tris, dDispTri, lump::disp_tris)
BSPKIT_SIMPLE(wateroverlays, dwateroverlay_t, lump::wateroverlays)
BSPKIT_SIMPLE(map_flags, dflagslump_t, lump::map_flags)
BSPKIT_SIMPLE(overlay_fades, doverlayfade_t, lump::overlay_fades)
BSPKIT_SIMPLE(overlay_system_levels, doverlaysystemlevel_t, lump::overlay_system_levels)
#undef BSPKIT_SIMPLE

std::span<const dface_v17_t> Map::faces_v17() const {
    if (version_ > 17) return {};
    return cache_->faces_v17.get(*bsp_, lump::faces);
}
std::span<const dface_v17_t> Map::originalfaces_v17() const {
    if (version_ > 17) return {};
    return cache_->originalfaces_v17.get(*bsp_, lump::originalfaces);
}
std::span<const dface_t> Map::faces() const {
    if (version_ > 17) return cache_->faces.get(*bsp_, lump::faces);
    return cache_->faces_conv.get([&] { return convert_all(faces_v17(), from_v17); });
}
size_t Map::world_face_lump() const {
    return faces().empty() && !faces_hdr().empty() ? lump::faces_hdr : lump::faces;
}
std::span<const dface_t> Map::world_faces() const {
    return world_face_lump() == lump::faces_hdr ? faces_hdr() : faces();
}
std::span<const dface_t> Map::originalfaces() const {
    if (version_ > 17) return cache_->originalfaces.get(*bsp_, lump::originalfaces);
    return cache_->originalfaces_conv.get([&] { return convert_all(originalfaces_v17(), from_v17); });
}

std::span<const dleaf_version_0_t> Map::leafs_version_0() const {
    if (version_ <= 17 || lump_version(lump::leafs) != 0) return {};
    return cache_->leafs_v0.get(*bsp_, lump::leafs);
}
std::span<const dleaf_t> Map::leafs() const {
    if (version_ <= 17 || lump_version(lump::leafs) != 0) return cache_->leafs.get(*bsp_, lump::leafs);
    return cache_->leafs_conv.get([&] {
        return convert_all(leafs_version_0(), [](const dleaf_version_0_t& l) { return from_v0(l); });
    });
}

std::span<const dworldlight_v1_t> Map::worldlights(bool hdr) const {
    const size_t index = hdr ? lump::worldlights_hdr : lump::worldlights;
    return cache_->worldlights[hdr ? 1 : 0].get([&] {
        const ByteSpan b = bsp_->decoded(index);
        if (lump_version(index) >= 1) return decode_records<dworldlight_v1_t>(b, bsp_->byte_order());
        const auto v0 = decode_records<dworldlight_t>(b, bsp_->byte_order());
        return convert_all(std::span<const dworldlight_t>(v0), [](const dworldlight_t& w) { return from_v0(w); });
    });
}

std::span<const dbrushside_v21_t> Map::brushsides_v21() const {
    if (!brushside_variant_v21()) return {};
    return cache_->brushsides_v21.get(*bsp_, lump::brushsides);
}
std::span<const dbrushside_t> Map::brushsides() const {
    if (!brushside_variant_v21()) return cache_->brushsides.get(*bsp_, lump::brushsides);
    return cache_->brushsides_conv.get([&] {
        std::vector<dbrushside_t> out;
        for (const dbrushside_v21_t& s : brushsides_v21())
            out.push_back({s.planenum, s.texinfo, s.dispinfo, int16_t(s.bevel | (s.thin << 8))});
        return out;
    });
}

std::span<const ddispinfo_t> Map::dispinfo() const {
    if (version_ <= 17) return {};
    return cache_->dispinfo.get(*bsp_, lump::dispinfo);
}

std::string_view Map::texdata_string_data() const {
    const ByteSpan b = bsp_->decoded(lump::texdata_string_data);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
}

std::span<const dleafambientindex_t> Map::leaf_ambient_index(bool hdr) const {
    if (version_ < 20) return {};
    return cache_->leaf_ambient_index[hdr ? 1 : 0].get(*bsp_, hdr ? lump::leaf_ambient_index_hdr : lump::leaf_ambient_index);
}
std::span<const dleafambientlighting_t> Map::leaf_ambient_lighting(bool hdr) const {
    return cache_->leaf_ambient_lighting[hdr ? 1 : 0].get(
        *bsp_, hdr ? lump::leaf_ambient_lighting_hdr : lump::leaf_ambient_lighting);
}

const Occlusion& Map::occlusion() const {
    return cache_->occlusion.get([&] {
        return parse_occlusion(bsp_->decoded(lump::occlusion), bsp_->byte_order(), lump_version(lump::occlusion),
                               where_in(*bsp_, lump::occlusion, 0));
    });
}

const VisHeader& Map::vis() const {
    return cache_->vis.get([&] {
        return parse_vis_header(bsp_->decoded(lump::visibility), bsp_->byte_order(), where_in(*bsp_, lump::visibility, 0));
    });
}

std::vector<PhysModel> Map::physcollide() const {
    return parse_physcollide(bsp_->decoded(lump::physcollide), bsp_->byte_order(), where_in(*bsp_, lump::physcollide, 0));
}

std::optional<std::string_view> Map::texture_name(size_t texdata_index) const {
    const auto td = texdata();
    if (texdata_index >= td.size()) return std::nullopt;
    const auto table = texdata_string_table();
    const int32_t id = td[texdata_index].nameStringTableID;
    if (id < 0 || size_t(id) >= table.size()) return std::nullopt;
    const std::string_view data = texdata_string_data();
    const int32_t offset = table[size_t(id)].offset;
    if (offset < 0 || size_t(offset) >= data.size()) return std::nullopt;
    const std::string_view rest = data.substr(size_t(offset));
    const size_t nul = rest.find('\0');
    if (nul == std::string_view::npos) return std::nullopt;
    return rest.substr(0, nul);
}

}  // namespace bspkit::source
