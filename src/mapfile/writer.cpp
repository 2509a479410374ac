// Writing editor maps: the .map dialects and Hammer's VMF.
#include <bspkit/mapfile.hpp>

#include <charconv>
#include <string>

namespace bspkit::mapfile {
namespace {

/// Shortest text that reads back to the same double; -0 written as 0.
void num(std::string& out, double v) {
    if (v == 0) v = 0;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void check_text(std::string_view s, std::string_view what) {
    for (char c : s)
        if (c == '"' || c == '\n' || c == '\r' || c == '\0') {
            // The text itself goes into the message printable and short (it may hold the newline).
            std::string shown;
            for (char d : s.substr(0, 40)) shown += (static_cast<unsigned char>(d) < ' ' || d == '"') ? '?' : d;
            throw Error({"", "map", -1}, std::string(what) + " '" + shown + "' holds a quote, newline or NUL");
        }
}

void check_material(std::string_view s, bool vmf) {
    if (s.empty()) throw Error({"", "map", -1}, "a side has no material");
    check_text(s, "material");
    if (!vmf)
        for (unsigned char c : s)
            if (c <= ' ') throw Error({"", "map", -1}, "material '" + std::string(s) + "' holds white space");
}

void quoted(std::string& out, std::string_view k, std::string_view v, std::string_view indent) {
    check_text(k, "key");
    check_text(v, "value");
    out += indent;
    out += '"';
    out += k;
    out += "\" \"";
    out += v;
    out += "\"\n";
}

void vec(std::string& out, const Vec3d& v, char sep = ' ') {
    num(out, v[0]);
    out += sep;
    num(out, v[1]);
    out += sep;
    num(out, v[2]);
}

// --- .map ------------------------------------------------------------------

void write_side(std::string& out, const Side& s, Dialect d) {
    check_material(s.material, false);
    for (const auto& p : s.points) {
        out += "( ";
        vec(out, p);
        out += " ) ";
    }
    if (d == Dialect::quake3_bp) {
        // brushDef: the matrix comes before the shader.
        out += "( ( ";
        for (size_t i = 0; i < 6; ++i) {
            num(out, s.bp_matrix[i]);
            out += i == 2 ? " ) ( " : " ";
        }
        out += ") ) ";
        out += s.material;
    } else if (uses_axes(d)) {
        out += s.material;
        out += ' ';
        const TextureAxes& a = s.axes;
        for (const auto& [axis, shift] : {std::pair{&a.u_axis, a.u_shift}, std::pair{&a.v_axis, a.v_shift}}) {
            out += "[ ";
            vec(out, *axis);
            out += ' ';
            num(out, shift);
            out += " ] ";
        }
        num(out, a.rotation);
        out += ' ';
        num(out, a.u_scale);
        out += ' ';
        num(out, a.v_scale);
    } else {
        out += s.material;
        out += ' ';
        const TextureStandard& t = s.standard;
        for (double v : {t.x_shift, t.y_shift, t.rotation, t.x_scale}) {
            num(out, v);
            out += ' ';
        }
        num(out, t.y_scale);
    }
    if (uses_surface_flags(d)) out += ' ' + std::to_string(s.contents) + ' ' + std::to_string(s.flags) + ' ' + std::to_string(s.value);
    out += '\n';
}

void write_patch(std::string& out, const Patch& p) {
    check_material(p.material, false);
    if (p.rows < 1 || p.columns < 1 || p.points.size() != size_t(p.rows) * size_t(p.columns))
        throw Error({"", "map", -1}, "patch of " + p.material + " has " + std::to_string(p.points.size()) +
                                         " points for " + std::to_string(p.rows) + " x " + std::to_string(p.columns));
    out += "{\npatchDef2\n{\n" + p.material + "\n( " + std::to_string(p.columns) + ' ' + std::to_string(p.rows) +
           " 0 0 0 )\n(\n";
    for (int c = 0; c < p.columns; ++c) {
        out += "( ";
        for (int r = 0; r < p.rows; ++r) {
            const auto& v = p.points[size_t(r) * size_t(p.columns) + size_t(c)];
            out += "( ";
            for (double x : v) {
                num(out, x);
                out += ' ';
            }
            out += ") ";
        }
        out += ")\n";
    }
    out += ")\n}\n}\n";
}

/// Sides of the map, to reserve the text once (about 150 bytes each).
size_t side_count(const MapFile& m) {
    size_t n = 0;
    for (const auto& e : m.entities)
        for (const auto& b : e.brushes) n += b.sides.size();
    return n;
}

std::string write_map(const MapFile& m) {
    std::string out;
    out.reserve(side_count(m) * 150 + 4096);
    for (size_t e = 0; e < m.entities.size(); ++e) {
        const MapEntity& ent = m.entities[e];
        out += "// entity " + std::to_string(e) + "\n{\n";
        for (const auto& kv : ent.pairs) quoted(out, kv.key, kv.value, "");
        for (size_t b = 0; b < ent.brushes.size(); ++b) {
            const bool bp = m.dialect == Dialect::quake3_bp;
            out += "// brush " + std::to_string(b) + (bp ? "\n{\nbrushDef\n{\n" : "\n{\n");
            for (const auto& s : ent.brushes[b].sides) write_side(out, s, m.dialect);
            out += bp ? "}\n}\n" : "}\n";
        }
        for (const auto& p : ent.patches) write_patch(out, p);
        out += "}\n";
    }
    return out;
}

// --- VMF -------------------------------------------------------------------

struct VmfWriter {
    std::string out;
    int64_t next_id = 1;
    std::string indent;

    void open(std::string_view name) {
        out += indent;
        out += name;
        out += '\n';
        out += indent;
        out += "{\n";
        indent += '\t';
    }
    void close() {
        indent.pop_back();
        out += indent;
        out += "}\n";
    }
    void kv(std::string_view k, std::string_view v) { quoted(out, k, v, indent); }
    void kv(std::string_view k, int64_t v) { kv(k, std::to_string(v)); }
    int64_t id(int64_t given) { return given > 0 ? given : next_id++; }

    template <class F>
    void rows(std::string_view name, int n, F&& row) {
        open(name);
        for (int r = 0; r < n; ++r) {
            std::string line;
            row(r, line);
            kv("row" + std::to_string(r), line);
        }
        close();
    }

    void displacement(const Displacement& d) {
        const int n = (1 << d.power) + 1;
        if (d.power < 1 || d.power > 4) throw Error({"", "map", -1}, "displacement power " + std::to_string(d.power));
        const size_t verts = size_t(n) * size_t(n);
        if (d.normals.size() != verts || d.distances.size() != verts || d.offsets.size() != verts ||
            d.offset_normals.size() != verts || d.alphas.size() != verts ||
            d.triangle_tags.size() != size_t(d.triangle_count()))
            throw Error({"", "map", -1}, "displacement arrays do not match its power");
        open("dispinfo");
        kv("power", d.power);
        std::string sp = "[";
        vec(sp, d.start_position);
        sp += ']';
        kv("startposition", sp);
        kv("flags", d.flags);
        kv("elevation", d.elevation);
        kv("subdiv", d.subdiv);
        auto vec_rows = [&](std::string_view name, const std::vector<Vec3d>& v) {
            rows(name, n, [&](int r, std::string& line) {
                for (int c = 0; c < n; ++c) {
                    if (c) line += ' ';
                    vec(line, v[size_t(r * n + c)]);
                }
            });
        };
        auto num_rows = [&](std::string_view name, const std::vector<double>& v) {
            rows(name, n, [&](int r, std::string& line) {
                for (int c = 0; c < n; ++c) {
                    if (c) line += ' ';
                    num(line, v[size_t(r * n + c)]);
                }
            });
        };
        vec_rows("normals", d.normals);
        num_rows("distances", d.distances);
        vec_rows("offsets", d.offsets);
        vec_rows("offset_normals", d.offset_normals);
        num_rows("alphas", d.alphas);
        const int tn = 1 << d.power;
        rows("triangle_tags", tn, [&](int r, std::string& line) {
            for (int c = 0; c < 2 * tn; ++c) {
                if (c) line += ' ';
                line += std::to_string(d.triangle_tags[size_t(r * 2 * tn + c)]);
            }
        });
        open("allowed_verts");
        std::string av;
        for (size_t i = 0; i < 10; ++i) {
            if (i) av += ' ';
            av += std::to_string(d.allowed_verts[i]);
        }
        kv("10", av);
        close();
        close();
    }

    void side(const Side& s) {
        check_material(s.material, true);
        open("side");
        kv("id", id(s.id));
        std::string plane;
        for (size_t i = 0; i < 3; ++i) {
            if (i) plane += ' ';
            plane += '(';
            vec(plane, s.points[i]);
            plane += ')';
        }
        kv("plane", plane);
        kv("material", s.material);
        auto axis = [&](const Vec3d& a, double shift, double scale) {
            std::string t = "[";
            vec(t, a);
            t += ' ';
            num(t, shift);
            t += "] ";
            num(t, scale);
            return t;
        };
        kv("uaxis", axis(s.axes.u_axis, s.axes.u_shift, s.axes.u_scale));
        kv("vaxis", axis(s.axes.v_axis, s.axes.v_shift, s.axes.v_scale));
        std::string t;
        num(t, s.axes.rotation);
        kv("rotation", t);
        t.clear();
        num(t, s.lightmap_scale);
        kv("lightmapscale", t);
        kv("smoothing_groups", int64_t(s.smoothing_groups));
        if (s.displacement) displacement(*s.displacement);
        close();
    }

    void solid(const Brush& b) {
        open("solid");
        kv("id", id(b.id));
        for (const auto& s : b.sides) side(s);
        open("editor");
        kv("color", "0 180 220");
        kv("visgroupshown", "1");
        kv("visgroupautoshown", "1");
        close();
        close();
    }

    void entity(const MapEntity& e, bool world) {
        open(world ? "world" : "entity");
        kv("id", id(e.id));
        for (const auto& p : e.pairs)
            if (p.key != "id") kv(p.key, p.value);
        for (const auto& b : e.brushes) solid(b);
        if (!world) {
            open("editor");
            kv("color", "220 30 220");
            kv("visgroupshown", "1");
            kv("visgroupautoshown", "1");
            close();
        }
        close();
    }
};

std::string write_vmf(const MapFile& m) {
    VmfWriter w;
    w.out.reserve(side_count(m) * 400 + 4096);
    // Ids given in the data are kept; new ones start above the largest.
    for (const auto& e : m.entities) {
        w.next_id = std::max(w.next_id, e.id + 1);
        for (const auto& b : e.brushes) {
            w.next_id = std::max(w.next_id, b.id + 1);
            for (const auto& s : b.sides) w.next_id = std::max(w.next_id, s.id + 1);
        }
    }
    w.open("versioninfo");
    w.kv("editorversion", "400");
    w.kv("editorbuild", "0");
    w.kv("mapversion", "1");
    w.kv("formatversion", "100");
    w.kv("prefab", "0");
    w.close();
    w.open("visgroups");
    w.close();
    w.open("viewsettings");
    w.kv("bSnapToGrid", "1");
    w.kv("bShowGrid", "1");
    w.kv("bShowLogicalGrid", "0");
    w.kv("nGridSpacing", "64");
    w.kv("bShow3DGrid", "0");
    w.close();
    for (size_t i = 0; i < m.entities.size(); ++i) w.entity(m.entities[i], i == 0);
    w.open("cameras");
    w.kv("activecamera", "-1");
    w.close();
    w.open("cordon");
    w.kv("mins", "(-1024 -1024 -1024)");
    w.kv("maxs", "(1024 1024 1024)");
    w.kv("active", "0");
    w.close();
    return std::move(w.out);
}

}  // namespace

std::string write(const MapFile& map) { return map.dialect == Dialect::vmf ? write_vmf(map) : write_map(map); }

}  // namespace bspkit::mapfile
