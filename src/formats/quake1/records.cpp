// Typed view of Quake 1 / BSP2 / 2PSB / GoldSrc maps.
#include <bspkit/formats/quake1.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace bspkit::quake1 {

MiptexDirectory parse_miptex_directory(ByteSpan lump, ByteOrder order) {
    MiptexDirectory dir;
    if (lump.size() < 4) {
        dir.truncated = !lump.empty();
        return dir;
    }
    dir.nummiptex = load<int32_t>(lump.data(), order);
    if (dir.nummiptex <= 0) return dir;
    const size_t fits = (lump.size() - 4) / 4;
    const size_t count = std::min<size_t>(size_t(dir.nummiptex), fits);
    dir.truncated = count < size_t(dir.nummiptex);
    dir.entries.resize(count);
    for (size_t i = 0; i < count; ++i) {
        Miptex& m = dir.entries[i];
        m.dataofs = load<int32_t>(lump.data() + 4 + i * 4, order);
        if (m.dataofs < 0 || size_t(m.dataofs) > lump.size() || lump.size() - size_t(m.dataofs) < sizeof(miptex_t))
            continue;
        const uint8_t* p = lump.data() + m.dataofs;
        m.header_ok = true;
        const size_t len = size_t(std::find(p, p + 16, uint8_t(0)) - p);
        m.name.assign(reinterpret_cast<const char*>(p), len);
        m.width = load<uint32_t>(p + 16, order);
        m.height = load<uint32_t>(p + 20, order);
        for (int k = 0; k < 4; ++k) m.offsets[k] = load<uint32_t>(p + 24 + 4 * k, order);
        m.embedded = m.offsets[0] != 0;
    }
    return dir;
}

Map::Map(const Bsp& bsp) : bsp_(&bsp) {
    switch (bsp.format()) {
        case Format::quake1:
        case Format::goldsrc: variant_ = Variant::bsp29; break;
        case Format::bsp2: variant_ = bsp.layout().variant == "2PSB" ? Variant::bsp2rmq : Variant::bsp2; break;
        default:
            throw Error({bsp.file_name(), "header", 0},
                        std::string(format_id(bsp.format())) + " is not a Quake 1 / BSP2 / GoldSrc map");
    }
}

bool Map::goldsrc() const noexcept { return bsp_->format() == Format::goldsrc; }

size_t Map::lump(std::string_view name) const {
    const auto index = bsp_->layout().find_lump(name);
    if (!index) throw Error({bsp_->file_name(), std::string(name), -1}, "no such lump in this format");
    return *index;
}

template <class T>
std::span<const T> Map::records(const LazyRecords<T>& lazy, std::string_view name) const {
    return lazy.get(*bsp_, lump(name));
}

ByteSpan Map::entities() const { return bsp_->decoded(lump("entities")); }
ByteSpan Map::textures() const { return bsp_->decoded(lump("textures")); }
ByteSpan Map::visibility() const { return bsp_->decoded(lump("visibility")); }
ByteSpan Map::lighting() const { return bsp_->decoded(lump("lighting")); }
MiptexDirectory Map::miptex() const { return parse_miptex_directory(textures(), bsp_->byte_order()); }

std::span<const dplane_t> Map::planes() const { return records(planes_, "planes"); }
std::span<const dvertex_t> Map::vertexes() const { return records(vertexes_, "vertexes"); }
std::span<const texinfo_t> Map::texinfo() const { return records(texinfo_, "texinfo"); }
std::span<const dsurfedge_t> Map::surfedges() const { return records(surfedges_, "surfedges"); }
std::span<const dmodel_t> Map::models() const { return records(models_, "models"); }

Tables<Bsp29Types> Map::bsp29() const {
    Tables<Bsp29Types> t;
    if (variant_ != Variant::bsp29) return t;
    t.planes = planes();
    t.vertexes = vertexes();
    t.nodes = records(nodes29_, "nodes");
    t.texinfo = texinfo();
    t.faces = records(faces29_, "faces");
    t.clipnodes = records(clipnodes29_, "clipnodes");
    t.leafs = records(leafs29_, "leafs");
    t.marksurfaces = records(marksurfaces29_, "marksurfaces");
    t.edges = records(edges29_, "edges");
    t.surfedges = surfedges();
    t.models = models();
    return t;
}

Tables<Bsp2Types> Map::bsp2() const {
    Tables<Bsp2Types> t;
    if (variant_ != Variant::bsp2) return t;
    t.planes = planes();
    t.vertexes = vertexes();
    t.nodes = records(nodes2_, "nodes");
    t.texinfo = texinfo();
    t.faces = records(faces2_, "faces");
    t.clipnodes = records(clipnodes2_, "clipnodes");
    t.leafs = records(leafs2_, "leafs");
    t.marksurfaces = records(marksurfaces2_, "marksurfaces");
    t.edges = records(edges2_, "edges");
    t.surfedges = surfedges();
    t.models = models();
    return t;
}

Tables<Bsp2RmqTypes> Map::bsp2rmq() const {
    Tables<Bsp2RmqTypes> t;
    if (variant_ != Variant::bsp2rmq) return t;
    t.planes = planes();
    t.vertexes = vertexes();
    t.nodes = records(nodes2rmq_, "nodes");
    t.texinfo = texinfo();
    t.faces = records(faces2_, "faces");
    t.clipnodes = records(clipnodes2_, "clipnodes");
    t.leafs = records(leafs2rmq_, "leafs");
    t.marksurfaces = records(marksurfaces2_, "marksurfaces");
    t.edges = records(edges2_, "edges");
    t.surfedges = surfedges();
    t.models = models();
    return t;
}

}  // namespace bspkit::quake1

namespace bspkit::quake1 {

std::optional<FaceLightmap> face_lightmap(const Map& map, size_t face) {
    return map.visit([&](const auto& t) -> std::optional<FaceLightmap> {
        if (face >= t.faces.size()) return std::nullopt;
        const auto& f = t.faces[face];
        FaceLightmap out;
        out.styles = 0;
        while (out.styles < 4 && f.styles[out.styles] != 255) ++out.styles;
        out.lightofs = f.lightofs;
        if (f.lightofs < 0 || out.styles == 0) return std::nullopt;
        if (f.texinfo < 0 || size_t(f.texinfo) >= t.texinfo.size()) return std::nullopt;
        const texinfo_t& ti = t.texinfo[size_t(f.texinfo)];
        if (ti.flags & TEX_SPECIAL) return std::nullopt;
        if (f.firstedge < 0 || f.numedges < 3 || uint64_t(f.firstedge) + uint64_t(f.numedges) > t.surfedges.size())
            return std::nullopt;
        double mins[2] = {1e30, 1e30}, maxs[2] = {-1e30, -1e30};
        for (int64_t k = 0; k < int64_t(f.numedges); ++k) {
            const int64_t e = t.surfedges[size_t(f.firstedge + k)].edge;
            const uint64_t mag = uint64_t(e < 0 ? -e : e);
            if (mag >= t.edges.size()) return std::nullopt;
            const auto& edge = t.edges[size_t(mag)];
            const uint64_t v = e < 0 ? edge.v[1] : edge.v[0];
            if (v >= t.vertexes.size()) return std::nullopt;
            const float* p = t.vertexes[size_t(v)].point;
            for (int a = 0; a < 2; ++a) {
                const double s = double(p[0]) * ti.vecs[a][0] + double(p[1]) * ti.vecs[a][1] +
                                 double(p[2]) * ti.vecs[a][2] + double(ti.vecs[a][3]);
                mins[a] = std::min(mins[a], s);
                maxs[a] = std::max(maxs[a], s);
            }
        }
        int size[2];
        for (int a = 0; a < 2; ++a) {
            const double n = std::ceil(maxs[a] / 16) - std::floor(mins[a] / 16) + 1;
            if (!(n >= 1 && n <= 65536)) return std::nullopt;
            size[a] = int(n);
        }
        out.width = size[0];
        out.height = size[1];
        out.bytes = size_t(out.width) * size_t(out.height) * size_t(out.styles) * size_t(map.lightmap_sample_bytes());
        return out;
    });
}

}  // namespace bspkit::quake1
