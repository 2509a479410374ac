// Text formats of the search path: Quake 3 shader scripts and Source VMT
// (KeyValues) materials. Both are tokenised the same way: quoted strings,
// bare words, braces, // and /* */ comments.
#include <bspkit/ascii.hpp>
#include <bspkit/textures.hpp>

#include <cctype>

namespace bspkit::textures {

namespace {

class Tokens {
public:
    explicit Tokens(std::string_view text) : t_(text) {}

    /// Next token ("{", "}", a word or a quoted string's contents); false at the end.
    bool next(std::string& out) {
        for (;;) {
            while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) ++p_;
            if (p_ >= t_.size()) return false;
            if (t_.compare(p_, 2, "//") == 0) {
                while (p_ < t_.size() && t_[p_] != '\n') ++p_;
                continue;
            }
            if (t_.compare(p_, 2, "/*") == 0) {
                const size_t end = t_.find("*/", p_ + 2);
                p_ = end == std::string_view::npos ? t_.size() : end + 2;
                continue;
            }
            break;
        }
        const char c = t_[p_];
        if (c == '{' || c == '}') {
            out.assign(1, c);
            ++p_;
            return true;
        }
        if (c == '"') {
            const size_t end = t_.find('"', p_ + 1);
            const size_t stop = end == std::string_view::npos ? t_.size() : end;
            out.assign(t_.substr(p_ + 1, stop - p_ - 1));
            p_ = end == std::string_view::npos ? t_.size() : end + 1;
            return true;
        }
        const size_t start = p_;
        while (p_ < t_.size() && !std::isspace(static_cast<unsigned char>(t_[p_])) && t_[p_] != '{' &&
               t_[p_] != '}' && t_[p_] != '"' && t_.compare(p_, 2, "//") != 0)
            ++p_;
        out.assign(t_.substr(start, p_ - start));
        return true;
    }

private:
    std::string_view t_;
    size_t p_ = 0;
};

}  // namespace

std::vector<ShaderImage> parse_shaders(std::string_view text) {
    std::vector<ShaderImage> out;
    Tokens tokens(text);
    std::string tok, name, image, editor_image, far_box;
    int depth = 0;
    bool in_stage_with_image = false, nodraw = false;
    // A keyword's argument that turns out to be a brace (the argument is
    // missing) is read again as a brace.
    bool held = false;
    const auto next = [&] {
        if (held) {
            held = false;
            return true;
        }
        return tokens.next(tok);
    };
    const auto argument = [&] {
        if (!tokens.next(tok)) return false;
        held = tok == "{" || tok == "}";
        return !held;
    };
    while (next()) {
        if (tok == "{") {
            ++depth;
            continue;
        }
        if (tok == "}") {
            if (depth == 2) in_stage_with_image = false;
            if (depth == 1 && !name.empty()) {
                // What the engine shows: a stage's image, else the far box
                // (its sky overhead); else what the editor shows, if anything.
                const std::string chosen = !image.empty()     ? image
                                           : !far_box.empty() ? far_box + "_up.tga"
                                                              : editor_image;
                out.push_back({name, far_box, chosen, nodraw});
                name.clear();
            }
            depth = std::max(0, depth - 1);
            continue;
        }
        if (depth == 0) {
            name = ascii_lower(tok);
            image.clear();
            editor_image.clear();
            far_box.clear();
            nodraw = false;
            continue;
        }
        const std::string key = ascii_lower(tok);
        if (depth == 1 && key == "surfaceparm") {
            if (argument()) nodraw |= ascii_lower(tok) == "nodraw";
        } else if (depth == 1 && key == "qer_editorimage") {
            if (argument()) editor_image = tok;
        } else if (depth == 1 && key == "skyparms") {
            // <far box> <cloud height> <near box>; "-" is no box.
            if (argument() && tok != "-") far_box = tok;
        } else if (depth == 2 && image.empty() && !in_stage_with_image &&
                   (key == "map" || key == "clampmap" || key == "animmap")) {
            if (key == "animmap" && !argument()) continue;  // the frequency
            if (!argument()) continue;
            if (!tok.empty() && tok[0] != '$') image = tok;
            in_stage_with_image = true;
        }
    }
    return out;
}

Vmt parse_vmt(std::string_view text) {
    Vmt vmt;
    Tokens tokens(text);
    std::string tok, key;
    int depth = 0;
    bool have_key = false;
    std::string nested_base;
    while (tokens.next(tok)) {
        if (tok == "{") {
            ++depth;
            have_key = false;
            continue;
        }
        if (tok == "}") {
            depth = std::max(0, depth - 1);
            have_key = false;
            continue;
        }
        if (depth == 0) {
            if (vmt.shader.empty()) vmt.shader = ascii_lower(tok);
            continue;
        }
        if (!have_key) {
            key = ascii_lower(tok);
            have_key = true;
            continue;
        }
        have_key = false;
        if (key == "$basetexture") {
            if (depth == 1 && vmt.base_texture.empty()) vmt.base_texture = tok;
            else if (nested_base.empty()) nested_base = tok;  // patch "insert" / "replace", fallback blocks
        } else if (key == "include" && depth == 1 && vmt.include.empty()) {
            vmt.include = tok;
        }
    }
    if (vmt.base_texture.empty()) vmt.base_texture = nested_base;
    return vmt;
}

}  // namespace bspkit::textures
