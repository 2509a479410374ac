// Source (VBSP 17-21+, console, LZMA) -> Hammer VMF.
#include "common.hpp"

#include <bspkit/formats/source.hpp>
#include <bspkit/formats/source_props.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

namespace bspkit::decompile::detail {
namespace {

namespace L = source::lump;
using mapfile::Side;

// bspflags.h
constexpr int32_t CONTENTS_AREAPORTAL = 0x8000, CONTENTS_PLAYERCLIP = 0x10000, CONTENTS_MONSTERCLIP = 0x20000,
                  CONTENTS_DETAIL = 0x8000000, CONTENTS_LADDER = 0x20000000;
constexpr double kDispThickness = 8;

/// Shortest text of a float read from the map (reads back to the same float).
std::string ftext(float v) {
    if (v == 0) v = 0;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}
std::string ftext3(float x, float y, float z) { return ftext(x) + ' ' + ftext(y) + ' ' + ftext(z); }

std::string upper(std::string_view s) {
    std::string o(s);
    for (auto& c : o) c = char(std::toupper(static_cast<unsigned char>(c)));
    return o;
}

/// The material a side was given in Hammer: vbsp renames cubemapped
/// materials to maps/MAPNAME/NAME_X_Y_Z (and water to ..._WVT_PATCH) in the pakfile.
std::string unpatched_material(std::string_view name) {
    std::string n(name);
    const std::string u = upper(n);
    if (u.rfind("MAPS/", 0) != 0) return n;
    const size_t slash = n.find('/', 5);
    if (slash == std::string::npos) return n;
    n = n.substr(slash + 1);
    auto strip_suffix = [&](std::string_view suffix) {
        if (upper(n).size() >= suffix.size() && upper(n).ends_with(suffix)) n.resize(n.size() - suffix.size());
    };
    strip_suffix("_WVT_PATCH");
    // Three trailing _INT groups (the cubemap origin).
    size_t end = n.size();
    for (int k = 0; k < 3; ++k) {
        const size_t us = n.rfind('_', end - 1 < end ? end - 1 : 0);
        if (us == std::string::npos || us + 1 >= end) return n;
        for (size_t i = us + 1; i < end; ++i)
            if (!(std::isdigit(static_cast<unsigned char>(n[i])) || (i == us + 1 && n[i] == '-'))) return n;
        end = us;
        if (end == 0) return n;
    }
    n.resize(end);
    return n;
}

std::string tool_material(int32_t contents) {
    if ((contents & CONTENTS_PLAYERCLIP) && (contents & CONTENTS_MONSTERCLIP)) return "TOOLS/TOOLSCLIP";
    if (contents & CONTENTS_PLAYERCLIP) return "TOOLS/TOOLSPLAYERCLIP";
    if (contents & CONTENTS_MONSTERCLIP) return "TOOLS/TOOLSNPCCLIP";
    if (contents & CONTENTS_AREAPORTAL) return "TOOLS/TOOLSAREAPORTAL";
    if (contents & CONTENTS_LADDER) return "TOOLS/TOOLSINVISIBLELADDER";
    return "TOOLS/TOOLSNODRAW";
}

/// Default axes of a side with no texinfo (Hammer's world-aligned projection).
mapfile::TextureAxes default_axes(const Vec3d& normal) {
    auto v = mapfile::standard_vectors(normal, {0, 0, 0, 0.25, 0.25});
    return mapfile::axes_from_vectors(v);
}

class SourceDecompiler {
public:
    SourceDecompiler(const Bsp& bsp, const Options& o) : bsp_(bsp), map_(bsp), options_(o) {}

    Result run() {
        faces_ = map_.world_faces();  // console maps keep only the HDR faces
        EntityTable t = start_map(r_, bsp_, options_, mapfile::Dialect::vmf, map_.models().size());
        prepare_faces();
        if (options_.brushes == BrushSource::lumps) brushes_from_lumps(t);
        else brushes_from_faces(t);
        occluders();
        displacements();
        props();
        cubemaps();
        overlays();
        if (r_.map.dialect != mapfile::Dialect::vmf) strip_vmf_only();
        mapfile::assign_ids(r_.map);
        return std::move(r_);
    }

private:
    const Bsp& bsp_;
    source::Map map_;
    Options options_;
    Result r_;
    size_t detail_entity_ = SIZE_MAX;
    std::span<const source::dface_t> faces_;
    /// (planenum, texinfo) -> smoothing groups of the original face made from such a side.
    std::unordered_map<uint64_t, uint32_t> smoothing_;
    /// Per plane number: the sides written on it (entity, brush, side) and their polygon, for overlays.
    struct PlacedSide {
        size_t entity, brush, side;
        Winding winding;
    };
    std::unordered_map<uint32_t, std::vector<PlacedSide>> sides_on_plane_;

    PlaneD plane(int64_t planenum, size_t from_lump, size_t from_record) const {
        const auto& p = at(bsp_, map_.planes(), planenum, L::planes, from_lump, from_record, "plane");
        return {{p.normal.x, p.normal.y, p.normal.z}, p.dist};
    }

    void prepare_faces() {
        const auto faces = map_.originalfaces().empty() ? faces_ : map_.originalfaces();
        for (const auto& f : faces)
            smoothing_.emplace((uint64_t(f.planenum) << 32) | uint32_t(uint16_t(f.texinfo)), f.smoothingGroups);
    }

    /// Material, axes and lightmap scale of texinfo `ti` (moved by `offset`).
    void texture(Side& s, int64_t ti, int32_t contents, const Vec3d& normal, const Vec3d& offset, size_t from_lump,
                 size_t from_record) {
        if (ti < 0) {
            s.material = tool_material(contents);
            s.axes = default_axes(normal);
            return;
        }
        const auto& tx = at(bsp_, map_.texinfo(), ti, L::texinfo, from_lump, from_record, "texinfo");
        std::array<std::array<double, 4>, 2> v{};
        for (size_t i = 0; i < 2; ++i)
            for (size_t k = 0; k < 4; ++k) v[i][k] = tx.textureVecs[i][k];
        s.axes = mapfile::axes_from_vectors(moved_vectors(v, offset));
        const double lx = tx.lightmapVecs[0][0], ly = tx.lightmapVecs[0][1], lz = tx.lightmapVecs[0][2];
        const double llen = std::sqrt(lx * lx + ly * ly + lz * lz);
        if (llen > 0) {
            const double lm = 1 / llen;
            s.lightmap_scale = std::abs(lm - std::round(lm)) < 1e-3 ? std::round(lm) : lm;
        }
        std::string name(map_.texture_name(size_t(std::max<int32_t>(tx.texdata, 0))).value_or(""));
        if (tx.texdata < 0 || size_t(tx.texdata) >= map_.texdata().size() || name.empty())
            name = tool_material(contents);
        s.material = unpatched_material(name);
    }

    size_t detail_entity() {
        if (detail_entity_ == SIZE_MAX) {
            mapfile::MapEntity e;
            e.pairs.push_back({"classname", "func_detail"});
            detail_entity_ = r_.map.entities.size();
            r_.map.entities.push_back(std::move(e));
        }
        return detail_entity_;
    }

    void brushes_from_lumps(const EntityTable& t) {
        const auto brushes = map_.brushes();
        // Read here though only brush() uses it: a broken brushsides lump is reported
        // before the tree's lumps, as it always was.
        (void)map_.brushsides();
        const auto leafs = map_.leafs();
        const auto leafbrushes = map_.leafbrushes();
        const auto nodes = map_.nodes();
        const auto models = map_.models();
        std::vector<uint8_t> owned, seen;
        for (size_t m = 0; m < models.size(); ++m) {
            const auto list = model_brushes(bsp_, nodes, leafs, leafbrushes, brushes.size(), models[m].headnode, m,
                                            {L::models, L::leafs, L::leafbrushes, L::brushes}, owned, seen);
            const int64_t ent = t.model_entity[m];
            if (ent < 0) continue;  // a model no entity uses: its brushes are left out
            for (size_t b : list) brush(b, size_t(ent), m == 0, t.model_offset[m]);
        }
        // Brushes in no model's leaves: vbsp keeps func_areaportal brushes in
        // the brush lump but out of the tree. Each goes back under the
        // func_areaportal whose portal polygon lies on it; others to the world.
        size_t loose = 0;
        for (size_t b = 0; b < brushes.size(); ++b) {
            if (b < owned.size() && owned[b]) continue;
            size_t ent = 0;
            if (brushes[b].contents & CONTENTS_AREAPORTAL) ent = areaportal_entity(b);
            else ++loose;
            brush(b, ent, false, {0, 0, 0});
        }
        if (loose) r_.notes.push_back(std::to_string(loose) + " brushes in no model's leaves were put in the world");
    }

    /// The func_areaportal entity for areaportal brush `b`: the one whose
    /// "portalnumber" is the key of an areaportal whose polygon lies on the brush.
    size_t areaportal_entity(size_t b) {
        const auto& br = map_.brushes()[b];
        const auto sides = map_.brushsides();
        const auto verts = map_.clipportalverts();
        std::vector<PlaneD> planes;
        for (int k = 0; k < br.numsides; ++k)
            if (size_t(br.firstside + k) < sides.size()) planes.push_back(plane(sides[size_t(br.firstside + k)].planenum, L::brushsides, size_t(br.firstside + k)));
        for (const auto& ap : map_.areaportals()) {
            if (ap.m_nClipPortalVerts == 0 || size_t(ap.m_FirstClipPortalVert) + ap.m_nClipPortalVerts > verts.size()) continue;
            bool on = true;
            for (size_t v = 0; v < ap.m_nClipPortalVerts && on; ++v) {
                const auto& cv = verts[ap.m_FirstClipPortalVert + v];
                for (const auto& p : planes)
                    if (dot(p.normal, {cv.x, cv.y, cv.z}) - p.dist > 0.1) {
                        on = false;
                        break;
                    }
            }
            if (!on) continue;
            const std::string key = std::to_string(ap.m_PortalKey);
            for (size_t e = 0; e < r_.map.entities.size(); ++e) {
                const auto& ent = r_.map.entities[e];
                if (ent.get("classname").starts_with("func_areaportal") && ent.get("portalnumber") == key) return e;
            }
        }
        mapfile::MapEntity e;
        e.pairs = {{"classname", "func_areaportal"}, {"StartOpen", "1"}};
        r_.map.entities.push_back(std::move(e));
        r_.notes.push_back("areaportal brush " + std::to_string(b) + " matched no func_areaportal: a new one was made");
        return r_.map.entities.size() - 1;
    }

    void brush(size_t index, size_t entity, bool world, const Vec3d& offset) {
        const auto& b = map_.brushes()[index];
        const auto sides = map_.brushsides();
        if (b.firstside < 0 || b.numsides < 0 || size_t(b.firstside) + size_t(b.numsides) > sides.size())
            fail(bsp_, L::brushes, index, "sides " + std::to_string(b.firstside) + "+" + std::to_string(b.numsides) +
                                             " out of range (brushsides has " + std::to_string(sides.size()) + ")");
        std::vector<PlaneD> planes;
        std::vector<size_t> side_index;
        std::vector<uint32_t> planenums;
        for (size_t k = 0; k < size_t(b.numsides); ++k) {
            const auto& s = sides[size_t(b.firstside) + k];
            if (s.bevel & 0xff) {
                ++r_.stats.dropped_sides;
                continue;
            }
            PlaneD p = plane(s.planenum, L::brushsides, size_t(b.firstside) + k);
            p.dist += dot(p.normal, offset);
            planes.push_back(p);
            side_index.push_back(size_t(b.firstside) + k);
            planenums.push_back(s.planenum);
        }
        const auto built = build_sides(planes);
        r_.stats.dropped_sides += planes.size() - built.size();
        if (built.size() < 4) {
            ++r_.stats.skipped_brushes;
            return;
        }
        mapfile::Brush out;
        std::vector<int64_t> from;
        for (const auto& bs : built) {
            const size_t si = side_index[bs.index];
            const auto& s = sides[si];
            Side side;
            side.points = bs.points;
            texture(side, s.texinfo, b.contents, planes[bs.index].normal, offset, L::brushsides, si);
            if (auto it = smoothing_.find((uint64_t(s.planenum) << 32) | uint32_t(uint16_t(s.texinfo))); it != smoothing_.end())
                side.smoothing_groups = it->second;
            out.sides.push_back(std::move(side));
            from.push_back(int64_t(si));
        }
        if (world && (b.contents & CONTENTS_DETAIL)) entity = detail_entity();
        const size_t brush_pos = r_.map.entities[entity].brushes.size();
        for (size_t k = 0; k < built.size(); ++k)
            sides_on_plane_[planenums[built[k].index]].push_back({entity, brush_pos, k, built[k].winding});
        add_brush(r_, entity, std::move(out), int64_t(index), offset, std::move(from));
    }

    /// The polygon of face `fi` (of the faces lump) from its edges.
    Winding face_winding(size_t fi) const {
        const auto& f = faces_[fi];
        const auto surfedges = map_.surfedges();
        const auto edges = map_.edges();
        const auto verts = map_.vertexes();
        Winding w;
        for (int64_t k = 0; k < f.numedges; ++k) {
            const auto& se = at(bsp_, surfedges, int64_t(f.firstedge) + k, L::surfedges, L::faces, fi, "surfedge");
            const int64_t e = se.edge < 0 ? -int64_t(se.edge) : se.edge;
            const auto& ed = at(bsp_, edges, e, L::edges, L::surfedges, size_t(f.firstedge + k), "edge");
            const auto& v = at(bsp_, verts, se.edge < 0 ? ed.v[1] : ed.v[0], L::vertexes, L::edges, size_t(e), "vertex");
            w.push_back({v.point.x, v.point.y, v.point.z});
        }
        return w;
    }

    /// A brush made from a face polygon: the face on top, pushed `kDispThickness` back, nodraw around.
    std::optional<mapfile::Brush> face_brush(size_t fi, Side top, const Winding& w, const PlaneD& p) {
        if (w.size() < 3) return std::nullopt;
        Vec3d centre{0, 0, 0};
        for (const auto& v : w) centre = add(centre, v);
        centre = scale(centre, 1.0 / double(w.size()));
        std::vector<PlaneD> planes{p, {scale(p.normal, -1), -(p.dist - kDispThickness)}};
        for (size_t k = 0; k < w.size(); ++k) {
            Vec3d n = cross(sub(w[(k + 1) % w.size()], w[k]), p.normal);
            const double len = std::sqrt(dot(n, n));
            if (len < 1e-6) continue;
            n = scale(n, 1 / len);
            PlaneD e{n, dot(n, w[k])};
            if (dot(n, centre) > e.dist) e = {scale(n, -1), -e.dist};
            planes.push_back(e);
        }
        const auto built = build_sides(planes);
        if (built.size() < 4 || built[0].index != 0) return std::nullopt;
        mapfile::Brush b;
        for (const auto& bs : built) {
            Side s;
            if (bs.index == 0) s = std::move(top);
            else {
                s.material = "TOOLS/TOOLSNODRAW";
                s.axes = default_axes(planes[bs.index].normal);
            }
            s.points = bs.points;
            b.sides.push_back(std::move(s));
        }
        (void)fi;
        return b;
    }

    /// func_occluder: vbsp moves its brushes' occluder polygons into the
    /// occlusion lump and leaves the entity with "occludernumber". Each
    /// polygon comes back as a brush with the polygon on top in
    /// TOOLS/TOOLSOCCLUDER, pushed back, nodraw around (as from a face).
    void occluders() {
        if (bsp_.decoded_length(source::lump::occlusion) == 0) return;
        const source::Occlusion& occ = map_.occlusion();
        const auto verts = map_.vertexes();
        size_t rebuilt = 0;
        for (size_t e = 0; e < r_.map.entities.size(); ++e) {
            mapfile::MapEntity& ent = r_.map.entities[e];
            if (ent.get("classname") != "func_occluder") continue;
            const std::string_view key = ent.get("occludernumber");
            int64_t n = -1;
            std::from_chars(key.data(), key.data() + key.size(), n);
            if (n < 0 || size_t(n) >= occ.occluders.size()) {
                r_.notes.push_back("func_occluder entity " + std::to_string(e) + " names occluder '" +
                                   std::string(key) + "', which the occlusion lump does not have");
                continue;
            }
            const auto& o = occ.occluders[size_t(n)];
            for (int64_t k = 0; k < o.polycount; ++k) {
                const auto& poly = at(bsp_, std::span<const source::doccluderpolydata_t>(occ.polys),
                                      int64_t(o.firstpoly) + k, L::occlusion, L::occlusion, size_t(n), "occluder polygon");
                Winding w;
                for (int64_t v = 0; v < poly.vertexcount; ++v) {
                    const int32_t vi = at(bsp_, std::span<const int32_t>(occ.vertex_indices),
                                          int64_t(poly.firstvertexindex) + v, L::occlusion, L::occlusion,
                                          size_t(o.firstpoly + k), "occluder vertex index");
                    const auto& p = at(bsp_, verts, vi, L::vertexes, L::occlusion, size_t(o.firstpoly + k), "vertex");
                    w.push_back({p.point.x, p.point.y, p.point.z});
                }
                const PlaneD p = plane(poly.planenum, L::occlusion, size_t(o.firstpoly + k));
                Side top;
                top.material = "TOOLS/TOOLSOCCLUDER";
                top.axes = default_axes(p.normal);
                if (auto b = face_brush(0, std::move(top), w, p)) {
                    add_brush(r_, e, std::move(*b), -1, {0, 0, 0}, {});
                    ++rebuilt;
                }
            }
            ent.pairs.erase(std::remove_if(ent.pairs.begin(), ent.pairs.end(),
                                           [](const KeyValue& kv) { return kv.key == "occludernumber"; }),
                            ent.pairs.end());
        }
        if (rebuilt)
            r_.notes.push_back(std::to_string(rebuilt) + " func_occluder brushes rebuilt from the occlusion lump's "
                               "polygons (the polygon in TOOLS/TOOLSOCCLUDER, a thin slab behind it in nodraw)");
    }

    void brushes_from_faces(const EntityTable& t) {
        const auto models = map_.models();
        const auto faces = faces_;
        for (size_t m = 0; m < models.size(); ++m) {
            const int64_t ent = t.model_entity[m];
            if (ent < 0) continue;
            for (int64_t k = 0; k < models[m].numfaces; ++k) {
                const int64_t fi = int64_t(models[m].firstface) + k;
                const auto& f = at(bsp_, faces, fi, L::faces, L::models, m, "face");
                if (f.dispinfo >= 0) continue;  // displacements come from dispinfo
                PlaneD p = plane(f.planenum, L::faces, size_t(fi));
                if (f.side) p = {scale(p.normal, -1), -p.dist};
                Winding w = face_winding(size_t(fi));
                const Vec3d off = t.model_offset[m];
                for (auto& v : w) v = add(v, off);
                p.dist += dot(p.normal, off);
                Side top;
                texture(top, f.texinfo, 1, p.normal, off, L::faces, size_t(fi));
                top.smoothing_groups = f.smoothingGroups;
                if (auto b = face_brush(size_t(fi), std::move(top), w, p))
                    add_brush(r_, size_t(ent), std::move(*b), -1, off, {});
            }
        }
    }

    void displacements() {
        const auto infos = map_.dispinfo();
        const auto faces = faces_;
        const auto verts = map_.disp_verts();
        const auto tris = map_.disp_tris();
        for (size_t d = 0; d < infos.size(); ++d) {
            const auto& di = infos[d];
            if (di.power < 2 || di.power > 4) fail(bsp_, L::dispinfo, d, "power " + std::to_string(di.power) + " is not 2-4");
            const auto& f = at(bsp_, faces, di.MapFace, L::faces, L::dispinfo, d, "face");
            PlaneD p = plane(f.planenum, L::faces, di.MapFace);
            if (f.side) p = {scale(p.normal, -1), -p.dist};
            const Winding w = face_winding(di.MapFace);
            mapfile::Displacement disp;
            disp.power = di.power;
            disp.flags = int(source::disp_flags(di));
            disp.start_position = {pretty(di.startPosition.x), pretty(di.startPosition.y), pretty(di.startPosition.z)};
            const int nv = di.vert_count(), nt = di.tri_count();
            if (di.DispVertStart < 0 || size_t(di.DispVertStart) + size_t(nv) > verts.size())
                fail(bsp_, L::dispinfo, d, "vertices " + std::to_string(di.DispVertStart) + "+" + std::to_string(nv) + " out of range");
            if (!tris.empty() && (di.DispTriStart < 0 || size_t(di.DispTriStart) + size_t(nt) > tris.size()))
                fail(bsp_, L::dispinfo, d, "triangles " + std::to_string(di.DispTriStart) + "+" + std::to_string(nt) + " out of range");
            for (int i = 0; i < nv; ++i) {
                const auto& v = verts[size_t(di.DispVertStart + i)];
                disp.normals.push_back({pretty(v.m_vVector.x), pretty(v.m_vVector.y), pretty(v.m_vVector.z)});
                disp.distances.push_back(pretty(v.m_flDist));
                disp.offsets.push_back({0, 0, 0});
                disp.offset_normals.push_back({pretty(float(p.normal[0])), pretty(float(p.normal[1])), pretty(float(p.normal[2]))});
                disp.alphas.push_back(pretty(v.m_flAlpha));
            }
            for (int i = 0; i < nt; ++i) disp.triangle_tags.push_back(tris.empty() ? 0 : tris[size_t(di.DispTriStart + i)].m_uiTags);
            for (size_t i = 0; i < 10; ++i) disp.allowed_verts[i] = int(di.AllowedVerts[i]);
            Side top;
            texture(top, f.texinfo, 1, p.normal, {0, 0, 0}, L::faces, di.MapFace);
            top.displacement = std::move(disp);
            if (auto b = face_brush(di.MapFace, std::move(top), w, p)) add_brush(r_, 0, std::move(*b), -1, {0, 0, 0}, {});
            else r_.notes.push_back("displacement " + std::to_string(d) + ": its face has no area, left out");
        }
    }

    void props() {
        const auto lump = source::read_static_props(bsp_);
        if (!lump) return;
        using V = source::StaticPropVariant;
        const V v = lump->format.variant;
        const bool has_levels = v == V::v8 || v == V::v9 || v == V::v10_csgo || v == V::v11_csgo || v == V::v12 || v == V::v13;
        const bool has_dx = v == V::v6 || v == V::v7_l4d || v == V::v7_2013 || v == V::v10_2013 || v == V::v11_lite || v == V::v11_bm;
        const bool has_lmres = v == V::v7_2013 || v == V::v10_2013 || v == V::v11_lite || v == V::v11_bm;
        const bool has_diffuse = v == V::v7_l4d || v == V::v8 || v == V::v9 || v == V::v10_csgo || v == V::v11_lite ||
                                 v == V::v11_bm || v == V::v11_csgo || v == V::v12 || v == V::v13;
        size_t n = 0;
        for (const auto& p : lump->props) {
            mapfile::MapEntity e;
            auto set = [&](std::string k, std::string val) { e.pairs.push_back({std::move(k), std::move(val)}); };
            set("classname", "prop_static");
            set("origin", ftext3(p.origin[0], p.origin[1], p.origin[2]));
            set("angles", ftext3(p.angles[0], p.angles[1], p.angles[2]));
            if (p.prop_type >= lump->names.size())
                throw Error({bsp_.file_name(), "game lump sprp", -1},
                            "prop " + std::to_string(n) + ": model " + std::to_string(p.prop_type) + " out of range (" +
                                std::to_string(lump->names.size()) + " names)");
            set("model", lump->names[p.prop_type]);
            set("skin", std::to_string(p.skin));
            set("solid", std::to_string(p.solid));
            set("fademindist", ftext(p.fade_min_dist));
            set("fademaxdist", ftext(p.fade_max_dist));
            if (v != V::v4 && v != V::unknown) set("fadescale", ftext(p.forced_fade_scale));
            set("disableshadows", (p.flags & source::STATIC_PROP_NO_SHADOW) ? "1" : "0");
            set("screenspacefade", (p.flags & source::STATIC_PROP_SCREEN_SPACE_FADE) ? "1" : "0");
            set("ignorenormals", (p.flags & source::STATIC_PROP_IGNORE_NORMALS) ? "1" : "0");
            set("disablevertexlighting", (p.flags & source::STATIC_PROP_NO_PER_VERTEX_LIGHTING) ? "1" : "0");
            set("disableselfshadowing", (p.flags & source::STATIC_PROP_NO_SELF_SHADOWING) ? "1" : "0");
            if (has_dx) {
                set("mindxlevel", std::to_string(p.min_dx_level));
                set("maxdxlevel", std::to_string(p.max_dx_level));
            }
            if (has_lmres) {
                set("lightmapresolutionx", std::to_string(p.lightmap_res_x));
                set("lightmapresolutiony", std::to_string(p.lightmap_res_y));
            }
            if (has_levels) {
                set("mincpulevel", std::to_string(p.min_cpu_level));
                set("maxcpulevel", std::to_string(p.max_cpu_level));
                set("mingpulevel", std::to_string(p.min_gpu_level));
                set("maxgpulevel", std::to_string(p.max_gpu_level));
                if (v != V::v8) set("disableX360", p.disable_x360 ? "1" : "0");
            }
            if (has_diffuse) {
                const auto& c = p.diffuse_modulation;
                set("rendercolor", std::to_string(c[0]) + ' ' + std::to_string(c[1]) + ' ' + std::to_string(c[2]));
                set("renderamt", std::to_string(c[3]));
            }
            if (v == V::v11_csgo || v == V::v12) set("uniformscale", ftext(p.scale[0]));
            if (v == V::v13) set("modelscale", ftext3(p.scale[0], p.scale[1], p.scale[2]));
            if (p.flags & source::STATIC_PROP_USE_LIGHTING_ORIGIN) {
                const std::string name = "bspkit_lighting_origin_" + std::to_string(n);
                set("lightingorigin", name);
                mapfile::MapEntity l;
                l.pairs = {{"classname", "info_lighting"},
                           {"targetname", name},
                           {"origin", ftext3(p.lighting_origin[0], p.lighting_origin[1], p.lighting_origin[2])}};
                r_.map.entities.push_back(std::move(l));
            }
            r_.map.entities.push_back(std::move(e));
            ++n;
        }
        r_.stats.props = n;
    }

    void cubemaps() {
        for (const auto& c : map_.cubemaps()) {
            mapfile::MapEntity e;
            e.pairs = {{"classname", "env_cubemap"},
                       {"origin", vec_text({double(c.origin[0]), double(c.origin[1]), double(c.origin[2])})},
                       {"cubemapsize", std::to_string(c.size)}};
            r_.map.entities.push_back(std::move(e));
            ++r_.stats.cubemaps;
        }
    }

    /// The id-to-be of the written side that holds face `fi`: the side on its plane whose polygon holds the face's centre.
    std::optional<std::pair<size_t, size_t>> side_of_face(size_t fi) {
        const auto& f = faces_[fi];
        const auto it = sides_on_plane_.find(f.planenum);
        if (it == sides_on_plane_.end()) return std::nullopt;
        const Winding w = face_winding(fi);
        if (w.empty()) return std::nullopt;
        Vec3d c{0, 0, 0};
        for (const auto& v : w) c = add(c, v);
        c = scale(c, 1.0 / double(w.size()));
        for (const auto& ps : it->second) {
            const Winding& sw = ps.winding;
            Vec3d n{0, 0, 0};
            for (size_t i = 2; i < sw.size(); ++i) n = add(n, cross(sub(sw[i - 1], sw[0]), sub(sw[i], sw[0])));
            bool inside = true;
            for (size_t i = 0; i < sw.size() && inside; ++i)
                inside = dot(cross(sub(sw[(i + 1) % sw.size()], sw[i]), sub(c, sw[i])), n) >= -1e-3;
            if (inside) return std::pair{ps.entity, ps.brush * 1000 + ps.side};
        }
        return std::nullopt;
    }

    void overlays() {
        const auto ovs = map_.overlays();
        const auto fades = map_.overlay_fades();
        struct Pending {
            size_t entity;
            std::vector<std::pair<size_t, size_t>> sides;  // (entity, brush * 1000 + side)
        };
        std::vector<Pending> pending;
        for (size_t i = 0; i < ovs.size(); ++i) {
            const auto& o = ovs[i];
            mapfile::MapEntity e;
            auto set = [&](std::string k, std::string val) { e.pairs.push_back({std::move(k), std::move(val)}); };
            set("classname", "info_overlay");
            set("origin", ftext3(o.vecOrigin.x, o.vecOrigin.y, o.vecOrigin.z));
            Side tmp;
            texture(tmp, o.nTexInfo, 0, {0, 0, 1}, {0, 0, 0}, L::overlays, i);
            set("material", tmp.material);
            const Vec3d n{o.vecBasisNormal.x, o.vecBasisNormal.y, o.vecBasisNormal.z};
            const Vec3d u{o.vecUVPoints[0].z, o.vecUVPoints[1].z, o.vecUVPoints[2].z};
            set("BasisOrigin", ftext3(o.vecOrigin.x, o.vecOrigin.y, o.vecOrigin.z));
            set("BasisNormal", ftext3(o.vecBasisNormal.x, o.vecBasisNormal.y, o.vecBasisNormal.z));
            set("BasisU", ftext3(o.vecUVPoints[0].z, o.vecUVPoints[1].z, o.vecUVPoints[2].z));
            const Vec3d bv = cross(n, u);
            set("BasisV", ftext3(float(bv[0]), float(bv[1]), float(bv[2])));
            for (int k = 0; k < 4; ++k)
                set("uv" + std::to_string(k), ftext3(o.vecUVPoints[k].x, o.vecUVPoints[k].y, 0));
            set("StartU", ftext(o.flU[0]));
            set("EndU", ftext(o.flU[1]));
            set("StartV", ftext(o.flV[0]));
            set("EndV", ftext(o.flV[1]));
            set("RenderOrder", std::to_string(o.render_order()));
            if (i < fades.size()) {
                set("fademindist", ftext(std::sqrt(std::max(0.0f, fades[i].flFadeDistMinSq))));
                set("fademaxdist", ftext(std::sqrt(std::max(0.0f, fades[i].flFadeDistMaxSq))));
            }
            Pending pd{r_.map.entities.size(), {}};
            const int count = std::min(o.face_count(), source::OVERLAY_BSP_FACE_COUNT);
            for (int k = 0; k < count; ++k) {
                const int32_t fi = o.aFaces[k];
                if (fi < 0 || size_t(fi) >= faces_.size())
                    fail(bsp_, L::overlays, i, "face " + std::to_string(fi) + " out of range");
                if (auto s = side_of_face(size_t(fi)); s && std::find(pd.sides.begin(), pd.sides.end(), *s) == pd.sides.end())
                    pd.sides.push_back(*s);
            }
            set("sides", "");
            r_.map.entities.push_back(std::move(e));
            pending.push_back(std::move(pd));
            ++r_.stats.overlays;
        }
        if (pending.empty()) return;
        // Side ids as assign_ids will number them.
        mapfile::assign_ids(r_.map);
        for (const auto& pd : pending) {
            std::string ids;
            for (const auto& [ent, code] : pd.sides) {
                const auto& b = r_.map.entities[ent].brushes[code / 1000];
                if (!ids.empty()) ids += ' ';
                ids += std::to_string(b.sides[code % 1000].id);
            }
            r_.map.entities[pd.entity].set("sides", ids);
        }
    }

    /// A .map dialect holds no displacements: their sides are written flat, and
    /// a note says how many were dropped (the user asked for another format,
    /// not for less of the map).
    void strip_vmf_only() {
        size_t dropped = 0;
        for (auto& e : r_.map.entities)
            for (auto& b : e.brushes)
                for (auto& s : b.sides) {
                    dropped += s.displacement.has_value();
                    s.displacement.reset();
                }
        if (dropped)
            r_.notes.push_back(std::to_string(dropped) + " displacement" + (dropped == 1 ? "" : "s") + " not written: the " +
                               std::string(mapfile::dialect_name(r_.map.dialect)) +
                               " format has none, so their faces are written flat (--format vmf keeps them)");
    }
};

}  // namespace

Result decompile_source(const Bsp& bsp, const Options& options) { return SourceDecompiler(bsp, options).run(); }

}  // namespace bspkit::decompile::detail
