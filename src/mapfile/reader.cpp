// Reading editor maps: the .map dialects (detected per side) and Hammer's
// VMF (a KeyValues tree interpreted as world / entity / solid / side / dispinfo).
#include <bspkit/mapfile.hpp>

#include <charconv>
#include <memory>
#include <string>

namespace bspkit::mapfile {
namespace {

struct Token {
    std::string_view text;
    bool quoted = false;
    size_t offset = 0;
};

/// Tokenizer shared by both syntaxes: "quoted" strings, single-character
/// punctuation ( ) [ ] { }, bare words up to white space, // comments.
class Lexer {
public:
    Lexer(std::string_view text, const std::string& file) : s_(text), file_(file) {}

    [[noreturn]] void fail(size_t offset, const std::string& what) const { throw Error({file_, "map", int64_t(offset)}, what); }

    bool at_end() {
        skip();
        return pos_ >= s_.size();
    }
    Token peek() {
        const size_t save = pos_;
        Token t = next_or_end();
        pos_ = save;
        return t;
    }
    Token next() {
        if (at_end()) fail(pos_, "unexpected end of file");
        return next_or_end();
    }
    void expect(std::string_view what) {
        const Token t = next();
        if (t.quoted || t.text != what)
            fail(t.offset, "expected '" + std::string(what) + "', found '" + std::string(t.text) + "'");
    }
    double number() {
        const Token t = next();
        return to_number(t);
    }
    double to_number(const Token& t) const {
        double v = 0;
        const char* b = t.text.data();
        const char* e = b + t.text.size();
        if (b != e && *b == '+') ++b;
        const auto r = std::from_chars(b, e, v);
        if (r.ec != std::errc() || r.ptr != e) fail(t.offset, "expected a number, found '" + std::string(t.text) + "'");
        return v;
    }
    static bool is_number(std::string_view s) {
        double v;
        const char* b = s.data();
        const char* e = b + s.size();
        if (b != e && *b == '+') ++b;
        const auto r = std::from_chars(b, e, v);
        return r.ec == std::errc() && r.ptr == e && b != e;
    }
    /// True when the next token starts on the current line.
    bool more_on_line() {
        size_t p = pos_;
        while (p < s_.size() && s_[p] != '\n' && static_cast<unsigned char>(s_[p]) <= ' ') ++p;
        return p < s_.size() && s_[p] != '\n' && !(s_[p] == '/' && p + 1 < s_.size() && s_[p + 1] == '/');
    }

private:
    void skip() {
        while (pos_ < s_.size()) {
            const unsigned char c = static_cast<unsigned char>(s_[pos_]);
            if (c <= ' ') ++pos_;
            else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
                while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
            } else break;
        }
    }
    Token next_or_end() {
        skip();
        Token t;
        t.offset = pos_;
        if (pos_ >= s_.size()) return t;
        const char c = s_[pos_];
        if (c == '"') {
            const size_t end = s_.find('"', pos_ + 1);
            if (end == std::string_view::npos) fail(pos_, "unterminated quoted string");
            t.text = s_.substr(pos_ + 1, end - pos_ - 1);
            t.quoted = true;
            pos_ = end + 1;
            return t;
        }
        // Braces end at white space: GoldSrc texture names start with '{' ("{BLUE").
        const bool brace = (c == '{' || c == '}') &&
                           (pos_ + 1 >= s_.size() || static_cast<unsigned char>(s_[pos_ + 1]) <= ' ');
        if (c == '(' || c == ')' || c == '[' || c == ']' || brace) {
            t.text = s_.substr(pos_++, 1);
            return t;
        }
        const size_t start = pos_;
        while (pos_ < s_.size() && static_cast<unsigned char>(s_[pos_]) > ' ') ++pos_;
        t.text = s_.substr(start, pos_ - start);
        return t;
    }

    std::string_view s_;
    const std::string& file_;
    size_t pos_ = 0;
};

bool is(const Token& t, std::string_view s) { return !t.quoted && t.text == s; }

// --- .map ------------------------------------------------------------------

struct MapReader {
    Lexer lex;
    bool saw_axes = false, saw_flags = false, saw_patch = false, saw_bp = false;

    Vec3d point() {
        lex.expect("(");
        Vec3d p{lex.number(), lex.number(), lex.number()};
        lex.expect(")");
        return p;
    }

    Side side(bool bp) {
        Side s;
        for (auto& p : s.points) p = point();
        if (bp) {
            lex.expect("(");
            for (size_t row = 0; row < 2; ++row) {
                lex.expect("(");
                for (size_t i = 0; i < 3; ++i) s.bp_matrix[row * 3 + i] = lex.number();
                lex.expect(")");
            }
            lex.expect(")");
        }
        const Token mat = lex.next();
        if (mat.text.empty() || is(mat, "(") || is(mat, "}")) lex.fail(mat.offset, "expected a material");
        s.material = std::string(mat.text);
        if (bp) {
            // brushDef sides carry no other projection.
        } else if (is(lex.peek(), "[")) {
            saw_axes = true;
            auto axis = [&](Vec3d& a, double& shift) {
                lex.expect("[");
                a = {lex.number(), lex.number(), lex.number()};
                shift = lex.number();
                lex.expect("]");
            };
            axis(s.axes.u_axis, s.axes.u_shift);
            axis(s.axes.v_axis, s.axes.v_shift);
            s.axes.rotation = lex.number();
            s.axes.u_scale = lex.number();
            s.axes.v_scale = lex.number();
        } else {
            s.standard.x_shift = lex.number();
            s.standard.y_shift = lex.number();
            s.standard.rotation = lex.number();
            s.standard.x_scale = lex.number();
            s.standard.y_scale = lex.number();
        }
        if (lex.more_on_line() && Lexer::is_number(lex.peek().text)) {
            saw_flags = true;
            s.contents = int32_t(lex.number());
            s.flags = int32_t(lex.number());
            s.value = int32_t(lex.number());
        }
        return s;
    }

    Patch patch() {
        saw_patch = true;
        lex.expect("{");
        Patch p;
        const Token mat = lex.next();
        p.material = std::string(mat.text);
        lex.expect("(");
        const double w = lex.number(), h = lex.number();
        lex.number(), lex.number(), lex.number();
        lex.expect(")");
        if (w < 1 || h < 1 || w > 1024 || h > 1024 || w != int(w) || h != int(h))
            lex.fail(mat.offset, "patch size " + std::to_string(w) + " x " + std::to_string(h));
        p.columns = int(w);
        p.rows = int(h);
        p.points.resize(size_t(p.rows) * size_t(p.columns));
        lex.expect("(");
        for (int c = 0; c < p.columns; ++c) {
            lex.expect("(");
            for (int r = 0; r < p.rows; ++r) {
                lex.expect("(");
                for (auto& x : p.points[size_t(r) * size_t(p.columns) + size_t(c)]) x = lex.number();
                lex.expect(")");
            }
            lex.expect(")");
        }
        lex.expect(")");
        lex.expect("}");
        lex.expect("}");
        return p;
    }

    MapFile read(std::optional<Dialect> dialect) {
        MapFile m;
        while (!lex.at_end()) {
            lex.expect("{");
            MapEntity e;
            for (;;) {
                const Token t = lex.next();
                if (is(t, "}")) break;
                if (t.quoted) {
                    const Token v = lex.next();
                    if (!v.quoted) lex.fail(v.offset, "expected a quoted value for key '" + std::string(t.text) + "'");
                    e.pairs.push_back({std::string(t.text), std::string(v.text)});
                } else if (is(t, "{")) {
                    const Token first = lex.peek();
                    if (is(first, "patchDef2")) {
                        lex.next();
                        e.patches.push_back(patch());
                    } else if (is(first, "brushDef")) {
                        saw_bp = true;
                        lex.next();
                        lex.expect("{");
                        Brush b;
                        while (!is(lex.peek(), "}")) b.sides.push_back(side(true));
                        lex.next();
                        lex.expect("}");
                        e.brushes.push_back(std::move(b));
                    } else {
                        Brush b;
                        while (!is(lex.peek(), "}")) b.sides.push_back(side(false));
                        lex.next();
                        e.brushes.push_back(std::move(b));
                    }
                } else {
                    lex.fail(t.offset, "expected a key, a brush or '}', found '" + std::string(t.text) + "'");
                }
            }
            m.entities.push_back(std::move(e));
        }
        if (dialect) m.dialect = *dialect;
        else if (saw_bp) m.dialect = Dialect::quake3_bp;
        else if (saw_axes) m.dialect = saw_flags ? Dialect::quake2 : Dialect::valve220;
        else if (saw_flags) m.dialect = saw_patch ? Dialect::quake3 : Dialect::quake2_standard;
        else m.dialect = saw_patch ? Dialect::quake3 : Dialect::quake;
        return m;
    }
};

// --- VMF -------------------------------------------------------------------

struct Node {
    std::string_view name;
    size_t offset = 0;
    std::vector<std::pair<Token, Token>> pairs;
    std::vector<std::unique_ptr<Node>> children;
    const Token* find(std::string_view key) const {
        for (const auto& [k, v] : pairs)
            if (k.text == key) return &v;
        return nullptr;
    }
};

constexpr int kMaxDepth = 32;

void parse_block(Lexer& lex, Node& node, int depth) {
    if (depth > kMaxDepth) lex.fail(node.offset, "blocks nested deeper than " + std::to_string(kMaxDepth));
    for (;;) {
        const Token t = lex.next();
        if (is(t, "}")) return;
        if (is(t, "{")) lex.fail(t.offset, "a block without a name");
        const Token n = lex.next();
        if (is(n, "{")) {
            auto child = std::make_unique<Node>();
            child->name = t.text;
            child->offset = t.offset;
            parse_block(lex, *child, depth + 1);
            node.children.push_back(std::move(child));
        } else if (is(n, "}")) {
            lex.fail(n.offset, "key '" + std::string(t.text) + "' without a value");
        } else {
            node.pairs.emplace_back(t, n);
        }
    }
}

struct VmfReader {
    Lexer& lex;

    std::vector<double> numbers(const Token& t, size_t want) {
        std::vector<double> out;
        std::string_view s = t.text;
        size_t i = 0;
        while (i < s.size()) {
            while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '(' || s[i] == ')' || s[i] == '[' || s[i] == ']')) ++i;
            const size_t b = i;
            while (i < s.size() && !(s[i] == ' ' || s[i] == '\t' || s[i] == '(' || s[i] == ')' || s[i] == '[' || s[i] == ']')) ++i;
            if (b < i) out.push_back(lex.to_number({s.substr(b, i - b), true, t.offset}));
        }
        if (want && out.size() != want)
            lex.fail(t.offset, "expected " + std::to_string(want) + " numbers, found " + std::to_string(out.size()));
        return out;
    }
    const Token& need(const Node& n, std::string_view key) {
        const Token* t = n.find(key);
        if (!t) lex.fail(n.offset, std::string(n.name) + " has no \"" + std::string(key) + "\"");
        return *t;
    }
    double num(const Node& n, std::string_view key, double fallback) {
        const Token* t = n.find(key);
        return t ? numbers(*t, 1)[0] : fallback;
    }
    const Node* child(const Node& n, std::string_view name) {
        for (const auto& c : n.children)
            if (c->name == name) return c.get();
        return nullptr;
    }

    template <class T, class F>
    void rows(const Node& d, std::string_view name, int n, int per_row, int width, std::vector<T>& out, F&& make) {
        out.clear();
        const Node* block = child(d, name);
        if (!block) {
            out.resize(size_t(n) * size_t(per_row));
            return;
        }
        for (int r = 0; r < n; ++r) {
            const Token& t = need(*block, "row" + std::to_string(r));
            const auto v = numbers(t, size_t(per_row * width));
            for (int c = 0; c < per_row; ++c) out.push_back(make(&v[size_t(c * width)]));
        }
    }

    Displacement displacement(const Node& d) {
        Displacement disp;
        disp.power = int(num(d, "power", 0));
        if (disp.power < 1 || disp.power > 4) lex.fail(d.offset, "displacement power " + std::to_string(disp.power));
        const auto sp = numbers(need(d, "startposition"), 3);
        disp.start_position = {sp[0], sp[1], sp[2]};
        disp.flags = int(num(d, "flags", 0));
        disp.elevation = int(num(d, "elevation", 0));
        disp.subdiv = int(num(d, "subdiv", 0));
        const int n = (1 << disp.power) + 1, tn = 1 << disp.power;
        auto v3 = [](const double* p) { return Vec3d{p[0], p[1], p[2]}; };
        auto v1 = [](const double* p) { return p[0]; };
        rows(d, "normals", n, n, 3, disp.normals, v3);
        rows(d, "distances", n, n, 1, disp.distances, v1);
        rows(d, "offsets", n, n, 3, disp.offsets, v3);
        rows(d, "offset_normals", n, n, 3, disp.offset_normals, v3);
        rows(d, "alphas", n, n, 1, disp.alphas, v1);
        rows(d, "triangle_tags", tn, 2 * tn, 1, disp.triangle_tags, [](const double* p) { return int(*p); });
        if (const Node* av = child(d, "allowed_verts"))
            if (const Token* t = av->find("10")) {
                const auto v = numbers(*t, 10);
                for (size_t i = 0; i < 10; ++i) disp.allowed_verts[i] = int(v[i]);
            }
        return disp;
    }

    Side side(const Node& n) {
        Side s;
        s.id = int64_t(num(n, "id", 0));
        const auto p = numbers(need(n, "plane"), 9);
        for (size_t i = 0; i < 3; ++i) s.points[i] = {p[i * 3], p[i * 3 + 1], p[i * 3 + 2]};
        s.material = std::string(need(n, "material").text);
        const auto u = numbers(need(n, "uaxis"), 5), v = numbers(need(n, "vaxis"), 5);
        s.axes.u_axis = {u[0], u[1], u[2]};
        s.axes.u_shift = u[3];
        s.axes.u_scale = u[4];
        s.axes.v_axis = {v[0], v[1], v[2]};
        s.axes.v_shift = v[3];
        s.axes.v_scale = v[4];
        s.axes.rotation = num(n, "rotation", 0);
        s.lightmap_scale = num(n, "lightmapscale", 16);
        s.smoothing_groups = uint32_t(num(n, "smoothing_groups", 0));
        if (const Node* d = child(n, "dispinfo")) s.displacement = displacement(*d);
        return s;
    }

    void solids(const Node& n, MapEntity& e) {
        for (const auto& c : n.children) {
            if (c->name == "solid") {
                Brush b;
                b.id = int64_t(num(*c, "id", 0));
                for (const auto& sc : c->children)
                    if (sc->name == "side") b.sides.push_back(side(*sc));
                e.brushes.push_back(std::move(b));
            } else if (c->name == "hidden") {
                solids(*c, e);
            }
        }
    }

    MapEntity entity(const Node& n) {
        MapEntity e;
        for (const auto& [k, v] : n.pairs) {
            if (k.text == "id") e.id = int64_t(lex.to_number(v));
            else e.pairs.push_back({std::string(k.text), std::string(v.text)});
        }
        solids(n, e);
        return e;
    }
};

MapFile read_vmf(Lexer& lex) {
    Node root;
    while (!lex.at_end()) {
        const Token name = lex.next();
        if (name.quoted || is(name, "{") || is(name, "}")) lex.fail(name.offset, "expected a block name");
        lex.expect("{");
        auto child = std::make_unique<Node>();
        child->name = name.text;
        child->offset = name.offset;
        parse_block(lex, *child, 1);
        root.children.push_back(std::move(child));
    }
    VmfReader r{lex};
    MapFile m;
    m.dialect = Dialect::vmf;
    const Node* world = r.child(root, "world");
    if (!world) lex.fail(0, "VMF without a world block");
    m.entities.push_back(r.entity(*world));
    for (const auto& c : root.children)
        if (c->name == "entity") m.entities.push_back(r.entity(*c));
    return m;
}

}  // namespace

MapFile read(std::string_view text, const std::string& file, std::optional<Dialect> dialect) {
    Lexer lex(text, file);
    if (!dialect && !lex.at_end()) {
        const Token t = lex.peek();
        if (!is(t, "{")) dialect = Dialect::vmf;
    }
    if (dialect == Dialect::vmf) return read_vmf(lex);
    MapReader r{Lexer(text, file)};
    return r.read(dialect);
}

void assign_ids(MapFile& map) {
    int64_t next = 1;
    for (auto& e : map.entities) {
        e.id = next++;
        for (auto& b : e.brushes) {
            b.id = next++;
            for (auto& s : b.sides) s.id = next++;
        }
    }
}

}  // namespace bspkit::mapfile
