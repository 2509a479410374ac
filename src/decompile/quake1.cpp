// Quake 1 / BSP2 / GoldSrc -> .map. These maps keep no brushes: BSPX
// BRUSHLIST gives them back when the compiler wrote it; otherwise each
// model's hull 0 tree is walked from a box around the model's bounds, the
// convex cell split at every node, and each solid / sky / liquid leaf's cell
// becomes a brush. Sides are textured from the drawn face on them.
#include "common.hpp"

#include <bspkit/bspx.hpp>
#include <bspkit/formats/quake1.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

namespace bspkit::decompile::detail {
namespace {

using quake1::CONTENTS_LAVA;
using quake1::CONTENTS_SKY;
using quake1::CONTENTS_SLIME;
using quake1::CONTENTS_SOLID;
using quake1::CONTENTS_WATER;

constexpr double kSplitEpsilon = 1e-6;
constexpr double kBoundsMargin = 8;

/// One face of a convex cell: its polygon, its outward plane, and the BSP
/// plane it lies on (-1 for the bounding box) with whether it faces against it.
struct CellFace {
    Winding w;
    PlaneD plane;
    int64_t planenum = -1;
    bool flipped = false;
};
using Cell = std::vector<CellFace>;

/// Splits `w` by `p` into the parts in front (dot > d) and behind.
void split_winding(const Winding& w, const PlaneD& p, Winding& front, Winding& back) {
    front.clear();
    back.clear();
    const size_t n = w.size();
    std::vector<double> d(n);
    for (size_t i = 0; i < n; ++i) d[i] = dot(w[i], p.normal) - p.dist;
    for (size_t i = 0; i < n; ++i) {
        const Vec3d& a = w[i];
        const Vec3d& b = w[(i + 1) % n];
        const double da = d[i], db = d[(i + 1) % n];
        if (da >= -kSplitEpsilon) front.push_back(a);
        if (da <= kSplitEpsilon) back.push_back(a);
        if ((da > kSplitEpsilon && db < -kSplitEpsilon) || (da < -kSplitEpsilon && db > kSplitEpsilon)) {
            const double t = da / (da - db);
            Vec3d m;
            for (size_t k = 0; k < 3; ++k) m[k] = a[k] + t * (b[k] - a[k]);
            front.push_back(m);
            back.push_back(m);
        }
    }
    if (front.size() < 3 || winding_area(front) < 1e-3) front.clear();
    if (back.size() < 3 || winding_area(back) < 1e-3) back.clear();
}

/// Splits a convex cell by BSP plane `planenum` (`p`): front = dot(n, x) > d.
void split_cell(const Cell& in, const PlaneD& p, int64_t planenum, Cell& front, Cell& back) {
    front.clear();
    back.clear();
    Winding cap = plane_winding(p);
    for (const auto& f : in) {
        clip_to_back(cap, f.plane);
        if (cap.empty()) break;
    }
    if (cap.size() < 3 || winding_area(cap) < 1e-3) {
        // The plane misses the cell: it lies wholly on one side.
        double lo = 0, hi = 0;
        for (const auto& f : in)
            for (const auto& v : f.w) {
                const double d = dot(v, p.normal) - p.dist;
                lo = std::min(lo, d);
                hi = std::max(hi, d);
            }
        (hi > -lo ? front : back) = in;
        return;
    }
    Winding fw, bw;
    for (const auto& f : in) {
        split_winding(f.w, p, fw, bw);
        if (!fw.empty()) front.push_back({fw, f.plane, f.planenum, f.flipped});
        if (!bw.empty()) back.push_back({bw, f.plane, f.planenum, f.flipped});
    }
    back.push_back({cap, p, planenum, false});
    Winding rev(cap.rbegin(), cap.rend());
    front.push_back({std::move(rev), {scale(p.normal, -1), -p.dist}, planenum, true});
    if (front.size() < 4) front.clear();
    if (back.size() < 4) back.clear();
}

Cell box_cell(const Vec3d& mins, const Vec3d& maxs) {
    Cell c;
    std::vector<PlaneD> planes;
    for (size_t k = 0; k < 3; ++k) {
        Vec3d n{0, 0, 0};
        n[k] = 1;
        planes.push_back({n, maxs[k]});
        n[k] = -1;
        planes.push_back({n, -mins[k]});
    }
    std::vector<Winding> w = brush_windings(planes);
    for (size_t i = 0; i < planes.size(); ++i) c.push_back({std::move(w[i]), planes[i], -1, false});
    return c;
}

/// Volume of a convex cell: a third of the sum over its faces of area x distance from the origin.
double cell_volume(const Cell& c) {
    double v = 0;
    for (const auto& f : c) {
        const double len = std::sqrt(dot(f.plane.normal, f.plane.normal));
        v += winding_area(f.w) * (dot(f.w[0], f.plane.normal) / len);
    }
    return v / 3;
}

struct Box {
    Vec3d lo{1e30, 1e30, 1e30}, hi{-1e30, -1e30, -1e30};
};
Box box_of(const Winding& w) {
    Box b;
    for (const auto& v : w)
        for (size_t k = 0; k < 3; ++k) b.lo[k] = std::min(b.lo[k], v[k]), b.hi[k] = std::max(b.hi[k], v[k]);
    return b;
}
/// Whether two polygons' bounding boxes overlap (touching counts).
bool boxes_overlap(const Box& a, const Box& b) {
    for (size_t k = 0; k < 3; ++k)
        if (std::min(a.hi[k], b.hi[k]) < std::max(a.lo[k], b.lo[k]) - 1e-3) return false;
    return true;
}

/// The union of two cells that meet across plane `planenum`, when it is
/// convex (its volume is the sum of theirs); nullopt otherwise.
std::optional<Cell> merge_cells(const Cell& a, const Cell& b, int64_t planenum) {
    // The union of two convex cells on either side of a plane is convex
    // exactly when each lies behind every other face plane of the other
    // (then the intersection of those planes is the union): a cheap test first.
    auto behind = [&](const Cell& x, const Cell& y) {
        for (const auto& f : x) {
            if (f.planenum == planenum) continue;
            for (const auto& g : y)
                for (const auto& v : g.w)
                    if (dot(v, f.plane.normal) - f.plane.dist > 1e-3) return false;
        }
        return true;
    };
    if (!behind(a, b) || !behind(b, a)) return std::nullopt;
    std::vector<const CellFace*> faces;
    for (const auto* c : {&a, &b})
        for (const auto& f : *c)
            if (f.planenum != planenum || planenum < 0) faces.push_back(&f);
    std::vector<PlaneD> planes;
    for (const auto* f : faces) planes.push_back(f->plane);
    std::vector<Winding> w = brush_windings(planes);
    Cell out;
    for (size_t i = 0; i < faces.size(); ++i)
        if (!w[i].empty()) out.push_back({std::move(w[i]), faces[i]->plane, faces[i]->planenum, faces[i]->flipped});
    if (out.size() < 4) return std::nullopt;
    const double want = cell_volume(a) + cell_volume(b), got = cell_volume(out);
    if (std::abs(got - want) > 1e-3 + 1e-7 * want) return std::nullopt;
    return out;
}

/// Merges cells pairwise while the union stays convex (greedy, a few passes).
void merge_cells(std::vector<Cell>& cells) {
    std::vector<uint8_t> alive(cells.size(), 1);
    // Pairs already refused stay refused unless one of the two changed since.
    std::vector<uint8_t> touched(cells.size(), 1);
    for (int pass = 0; pass < 6; ++pass) {
        std::unordered_map<int64_t, std::vector<std::pair<uint32_t, uint32_t>>> by_plane;
        for (uint32_t i = 0; i < cells.size(); ++i)
            if (alive[i])
                for (uint32_t k = 0; k < cells[i].size(); ++k)
                    if (cells[i][k].planenum >= 0) by_plane[cells[i][k].planenum].push_back({i, k});
        size_t merged = 0;
        std::vector<Box> boxes;
        std::vector<uint8_t> changed(cells.size());
        for (auto& [pn, list] : by_plane) {
            // Entries of cells merged earlier in this pass are stale (the face
            // index named a face of the cell before it grew): dropped here, their
            // cells come back next pass.
            std::erase_if(list, [&](const std::pair<uint32_t, uint32_t>& e) { return !alive[e.first] || changed[e.first]; });
            if (list.size() < 2) continue;
            // Sweep along an axis in the plane: only faces whose boxes overlap on it are paired.
            const Vec3d& n = cells[list[0].first][list[0].second].plane.normal;
            const size_t axis = std::abs(n[0]) > 0.7 ? 1 : 0;
            boxes.clear();
            for (const auto& [i, fi] : list) boxes.push_back(box_of(cells[i][fi].w));
            std::vector<uint32_t> order(list.size());
            for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
            std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return boxes[a].lo[axis] < boxes[b].lo[axis]; });
            for (size_t ox = 0; ox < order.size(); ++ox) {
                const size_t x = order[ox];
                const auto [i, fi] = list[x];
                if (!alive[i] || changed[i]) continue;
                for (size_t oy = ox + 1; oy < order.size(); ++oy) {
                    const size_t y = order[oy];
                    if (boxes[y].lo[axis] > boxes[x].hi[axis] + 1e-3) break;
                    const auto [j, fj] = list[y];
                    if (!alive[j] || changed[j] || i == j || !(touched[i] || touched[j])) continue;
                    const CellFace &a = cells[i][fi], &b = cells[j][fj];
                    if (a.flipped == b.flipped || !boxes_overlap(boxes[x], boxes[y])) continue;
                    if (auto m = merge_cells(cells[i], cells[j], pn)) {
                        cells[i] = std::move(*m);
                        alive[j] = 0;
                        changed[i] = 1;  // its face indices are stale until the next pass
                        ++merged;
                        break;
                    }
                }
            }
        }
        if (!merged) break;
        touched = std::move(changed);
    }
    std::vector<Cell> out;
    for (size_t i = 0; i < cells.size(); ++i)
        if (alive[i]) out.push_back(std::move(cells[i]));
    cells = std::move(out);
}

struct FaceInfo {
    Vec3d centre;
    int32_t texinfo;
    bool back;  ///< the face looks against its plane
};

class Quake1Decompiler {
public:
    Quake1Decompiler(const Bsp& bsp, const Options& o) : bsp_(bsp), map_(bsp), options_(o) {}

    Result run() {
        const bool goldsrc = map_.goldsrc();
        fallback_ = goldsrc ? "SKIP" : "skip";
        planes_lump_ = map_.lump("planes");
        miptex_ = map_.miptex();
        const auto models = map_.models();
        EntityTable t = start_map(r_, bsp_, options_, goldsrc ? mapfile::Dialect::valve220 : mapfile::Dialect::quake, models.size());
        map_.visit([&](const auto& tables) { index_faces(tables); });
        const bspx::Directory dir = bspx::read(bsp_);
        if (const auto* l = dir.find("BRUSHLIST")) {
            from_brushlist(bspx::decode_brushlist(bsp_, *l), t);
            r_.notes.push_back("brushes from the BSPX BRUSHLIST lump");
        } else {
            map_.visit([&](const auto& tables) { from_tree(tables, t); });
            r_.notes.push_back(options_.merge ? "brushes rebuilt from the hull 0 tree: solid, sky and liquid leaves, merged where the union stays convex"
                                              : "brushes rebuilt from the hull 0 tree, one per solid, sky or liquid leaf");
        }
        if (mapfile::uses_axes(r_.map.dialect)) r_.map.entities[0].set("mapversion", "220");
        return std::move(r_);
    }

private:
    const Bsp& bsp_;
    quake1::Map map_;
    Options options_;
    Result r_;
    std::string fallback_;
    size_t planes_lump_ = 0;
    quake1::MiptexDirectory miptex_;
    std::unordered_map<int64_t, std::vector<FaceInfo>> faces_by_plane_;

    PlaneD plane(int64_t planenum, size_t from_lump, size_t from_record) const {
        const auto& p = at(bsp_, map_.planes(), planenum, planes_lump_, from_lump, from_record, "plane");
        return {{p.normal[0], p.normal[1], p.normal[2]}, p.dist};
    }

    template <class Tables>
    void index_faces(const Tables& t) {
        const size_t faces_lump = map_.lump("faces"), surfedges_lump = map_.lump("surfedges"),
                     edges_lump = map_.lump("edges"), vertexes_lump = map_.lump("vertexes");
        for (size_t fi = 0; fi < t.faces.size(); ++fi) {
            const auto& f = t.faces[fi];
            Vec3d c{0, 0, 0};
            size_t n = 0;
            for (int64_t k = 0; k < int64_t(f.numedges); ++k) {
                const auto& se = at(bsp_, t.surfedges, int64_t(f.firstedge) + k, surfedges_lump, faces_lump, fi, "surfedge");
                const int64_t e = se.edge < 0 ? -int64_t(se.edge) : se.edge;
                const auto& ed = at(bsp_, t.edges, e, edges_lump, surfedges_lump, size_t(f.firstedge + k), "edge");
                const auto& v = at(bsp_, t.vertexes, int64_t(se.edge < 0 ? ed.v[1] : ed.v[0]), vertexes_lump, edges_lump,
                                   size_t(e), "vertex");
                c = add(c, {v.point[0], v.point[1], v.point[2]});
                ++n;
            }
            if (n) c = scale(c, 1.0 / double(n));
            faces_by_plane_[f.planenum].push_back({c, int32_t(f.texinfo), f.side != 0});
        }
    }

    /// Texture of a side on BSP plane `planenum` (facing against it when `flipped`) around `centre`.
    void texture(mapfile::Side& s, int64_t planenum, bool flipped, const Vec3d& centre, const PlaneD& outward,
                 const Vec3d& offset) {
        const FaceInfo* best = nullptr;
        double best_d = 0;
        if (auto it = faces_by_plane_.find(planenum); it != faces_by_plane_.end())
            for (int pass = 0; pass < 2 && !best; ++pass)
                for (const auto& f : it->second) {
                    if (pass == 0 && f.back != flipped) continue;
                    const Vec3d d = sub(f.centre, centre);
                    const double dd = dot(d, d);
                    if (!best || dd < best_d) best = &f, best_d = dd;
                }
        const auto texinfo = map_.texinfo();
        std::array<std::array<double, 4>, 2> vecs{};
        if (best && best->texinfo >= 0 && size_t(best->texinfo) < texinfo.size()) {
            const auto& tx = texinfo[size_t(best->texinfo)];
            for (size_t i = 0; i < 2; ++i)
                for (size_t k = 0; k < 4; ++k) vecs[i][k] = tx.vecs[i][k];
            vecs = moved_vectors(vecs, offset);
            if (tx.miptex >= 0 && size_t(tx.miptex) < miptex_.entries.size()) s.material = miptex_.entries[size_t(tx.miptex)].name;
        } else {
            vecs = mapfile::standard_vectors(outward.normal, {});
        }
        if (s.material.empty()) s.material = fallback_;
        set_projection(s, r_.map.dialect, vecs, outward.normal);
    }

    void emit_cell(const Cell& cell, size_t entity, const Vec3d& offset, int32_t contents) {
        mapfile::Brush b;
        b.sides.reserve(cell.size());
        for (const auto& f : cell) {
            mapfile::Side s;
            s.points = side_points(f.w, f.plane);
            Vec3d c{0, 0, 0};
            for (const auto& v : f.w) c = add(c, v);
            c = scale(c, 1.0 / double(f.w.size()));
            // Faces are found in the model's own coordinates.
            texture(s, f.planenum, f.flipped, sub(c, offset), f.plane, offset);
            b.sides.push_back(std::move(s));
        }
        add_brush(r_, entity, std::move(b), -1, offset, std::vector<int64_t>(cell.size(), -1));
        r_.origins.back().contents = contents;
    }

    static bool kept(int32_t contents) {
        return contents == CONTENTS_SOLID || contents == CONTENTS_SKY || contents == CONTENTS_WATER ||
               contents == CONTENTS_SLIME || contents == CONTENTS_LAVA;
    }

    /// Whether [mins, maxs] is a box the cutting can start from: non-empty on
    /// every axis, within 1e6 units (the precision the cuts are made at).
    static bool usable_box(const Vec3d& mins, const Vec3d& maxs) {
        for (size_t k = 0; k < 3; ++k)
            if (!(mins[k] < maxs[k]) || !(std::abs(mins[k]) <= 1e6) || !(std::abs(maxs[k]) <= 1e6)) return false;
        return true;
    }

    /// The box the cutting of model `m` starts from: its bounds plus a margin,
    /// or, where those are unusable (damaged: inside out, not numbers, far out;
    /// the engines only link entities by them), the bounds its head node (or
    /// leaf) keeps for culling, which qbsp takes from the same brushes.
    template <class Tables>
    std::pair<Vec3d, Vec3d> model_box(const Tables& t, size_t m) {
        const auto& md = t.models[m];
        const auto grown = [](const auto& lo, const auto& hi) {
            return std::pair<Vec3d, Vec3d>{
                {double(lo[0]) - kBoundsMargin, double(lo[1]) - kBoundsMargin, double(lo[2]) - kBoundsMargin},
                {double(hi[0]) + kBoundsMargin, double(hi[1]) + kBoundsMargin, double(hi[2]) + kBoundsMargin}};
        };
        const auto box = grown(md.mins, md.maxs);
        if (usable_box(box.first, box.second)) return box;
        const int64_t head = md.headnode[0];
        std::pair<Vec3d, Vec3d> head_box;
        if (head >= 0) {
            const auto& n = at(bsp_, t.nodes, head, map_.lump("nodes"), map_.lump("models"), m, "node");
            head_box = grown(n.mins, n.maxs);
        } else {
            const auto& l = at(bsp_, t.leafs, -(head + 1), map_.lump("leafs"), map_.lump("models"), m, "leaf");
            head_box = grown(l.mins, l.maxs);
        }
        const std::string why = "model " + std::to_string(m) + "'s bounds are not a box within 1e6 units";
        const std::string whose = head >= 0 ? "its head node's" : "its head leaf's";
        if (!usable_box(head_box.first, head_box.second)) fail(bsp_, map_.lump("models"), m, why + ", nor are " + whose);
        r_.notes.push_back(why + ": cut from " + whose + " bounds");
        return head_box;
    }

    template <class Tables>
    void from_tree(const Tables& t, const EntityTable& et) {
        const size_t nodes_lump = map_.lump("nodes"), leafs_lump = map_.lump("leafs");
        std::vector<uint8_t> seen(t.nodes.size());
        for (size_t m = 0; m < t.models.size(); ++m) {
            if (et.model_entity[m] < 0) continue;
            const auto& md = t.models[m];
            const size_t ent = size_t(et.model_entity[m]);
            const Vec3d off = et.model_offset[m];
            const auto [mins, maxs] = model_box(t, m);
            std::map<int32_t, std::vector<Cell>> by_contents;
            std::vector<std::pair<int64_t, Cell>> stack;
            stack.push_back({md.headnode[0], box_cell(mins, maxs)});
            while (!stack.empty()) {
                auto [node, cell] = std::move(stack.back());
                stack.pop_back();
                if (node < 0) {
                    const int64_t leaf = -(node + 1);
                    const auto& l = at(bsp_, t.leafs, leaf, leafs_lump, nodes_lump, 0, "leaf");
                    if (kept(l.contents) && !cell.empty()) by_contents[l.contents].push_back(std::move(cell));
                    continue;
                }
                if (size_t(node) >= t.nodes.size()) fail(bsp_, nodes_lump, 0, "node " + std::to_string(node) + " out of range");
                if (seen[size_t(node)]) fail(bsp_, nodes_lump, size_t(node), "node reached twice: the tree has a cycle or a shared subtree");
                seen[size_t(node)] = 1;
                const auto& n = t.nodes[size_t(node)];
                const PlaneD p = plane(n.planenum, nodes_lump, size_t(node));
                Cell front, back;
                split_cell(cell, p, n.planenum, front, back);
                stack.push_back({quake1::tree_child(n.children[1], t.nodes.size()), std::move(back)});
                stack.push_back({quake1::tree_child(n.children[0], t.nodes.size()), std::move(front)});
            }
            for (auto& [contents, cells] : by_contents) {
                if (options_.merge) merge_cells(cells);
                for (auto& cell : cells) {
                    if (off != Vec3d{0, 0, 0})
                        for (auto& f : cell) {
                            for (auto& v : f.w) v = add(v, off);
                            f.plane.dist += dot(f.plane.normal, off);
                        }
                    emit_cell(cell, ent, off, contents);
                }
            }
        }
    }

    void from_brushlist(const bspx::BrushList& list, const EntityTable& et) {
        // Side planes back to the map's plane numbers, for texturing.
        std::unordered_map<std::string, std::pair<int64_t, bool>> by_plane;
        auto key = [](const Vec3d& n, double d) {
            return std::to_string(std::llround(n[0] * 1e4)) + ',' + std::to_string(std::llround(n[1] * 1e4)) + ',' +
                   std::to_string(std::llround(n[2] * 1e4)) + ',' + std::to_string(std::llround(d * 100));
        };
        const auto planes = map_.planes();
        for (size_t i = 0; i < planes.size(); ++i) {
            const Vec3d n{planes[i].normal[0], planes[i].normal[1], planes[i].normal[2]};
            by_plane.emplace(key(n, planes[i].dist), std::pair{int64_t(i), false});
            by_plane.emplace(key(scale(n, -1), -planes[i].dist), std::pair{int64_t(i), true});
        }
        for (const auto& model : list.models) {
            const int32_t m = model.header.modelnum;
            if (m < 0 || size_t(m) >= et.model_entity.size() || et.model_entity[size_t(m)] < 0) continue;
            const size_t ent = size_t(et.model_entity[size_t(m)]);
            const Vec3d off = et.model_offset[size_t(m)];
            for (const auto& br : model.brushes) {
                std::vector<PlaneD> pl;
                for (size_t k = 0; k < 3; ++k) {
                    Vec3d n{0, 0, 0};
                    n[k] = 1;
                    pl.push_back({n, br.header.maxs[k]});
                    n[k] = -1;
                    pl.push_back({n, -double(br.header.mins[k])});
                }
                for (const auto& p : br.planes) pl.push_back({{p.normal[0], p.normal[1], p.normal[2]}, p.dist});
                std::vector<PlaneD> moved = pl;
                for (auto& p : moved) p.dist += dot(p.normal, off);
                const auto built = build_sides(moved);
                r_.stats.dropped_sides += moved.size() - built.size();
                if (built.size() < 4) {
                    ++r_.stats.skipped_brushes;
                    continue;
                }
                mapfile::Brush b;
                for (const auto& bs : built) {
                    mapfile::Side s;
                    s.points = bs.points;
                    Vec3d c{0, 0, 0};
                    for (const auto& v : bs.winding) c = add(c, v);
                    c = scale(c, 1.0 / double(bs.winding.size()));
                    const auto it = by_plane.find(key(pl[bs.index].normal, pl[bs.index].dist));
                    texture(s, it == by_plane.end() ? -1 : it->second.first, it != by_plane.end() && it->second.second,
                            sub(c, off), moved[bs.index], off);
                    b.sides.push_back(std::move(s));
                }
                add_brush(r_, ent, std::move(b), -1, off, std::vector<int64_t>(built.size(), -1));
                r_.origins.back().contents = br.header.contents;
            }
        }
    }
};

}  // namespace

Result decompile_quake1(const Bsp& bsp, const Options& options) { return Quake1Decompiler(bsp, options).run(); }

}  // namespace bspkit::decompile::detail
