// Text formats of the search path: Quake 3 shader scripts and Source VMT
// (KeyValues) materials. Both are tokenised the same way: quoted strings,
// bare words, braces, // and /* */ comments.
#include <bspkit/ascii.hpp>
#include <bspkit/textures.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>

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

namespace {

/// An OpenGL blend factor's name in a shader (case already lowered);
/// ioquake3 takes GL_ONE for one it does not know.
model::BlendFactor blend_factor(const std::string& name) {
    using F = model::BlendFactor;
    static const std::pair<const char*, F> kNames[] = {
        {"gl_zero", F::zero},           {"gl_one", F::one},
        {"gl_src_color", F::src_color}, {"gl_one_minus_src_color", F::one_minus_src_color},
        {"gl_dst_color", F::dst_color}, {"gl_one_minus_dst_color", F::one_minus_dst_color},
        {"gl_src_alpha", F::src_alpha}, {"gl_one_minus_src_alpha", F::one_minus_src_alpha},
        {"gl_dst_alpha", F::dst_alpha}, {"gl_one_minus_dst_alpha", F::one_minus_dst_alpha}};
    for (const auto& [n, f] : kNames)
        if (name == n) return f;
    return F::one;
}

float number(const std::string& token) {
    const float v = std::strtof(token.c_str(), nullptr);
    return std::isfinite(v) ? v : 0.0f;
}

}  // namespace

std::vector<ShaderImage> parse_shaders(std::string_view text) {
    std::vector<ShaderImage> out;
    Tokens tokens(text);
    std::string tok, name, image, editor_image;
    ShaderImage shader;        // far box, cloud height and stages of the shader being read
    ShaderImage::Stage stage;  // the stage being read
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
            if (++depth == 2) stage = {};
            continue;
        }
        if (tok == "}") {
            if (depth == 2) {
                in_stage_with_image = false;
                if (!stage.image.empty()) shader.stages.push_back(stage);
            }
            if (depth == 1 && !name.empty()) {
                // What the engine shows: a stage's image, else the far box
                // (its sky overhead); else what the editor shows, if anything.
                const std::string chosen = !image.empty()            ? image
                                           : !shader.far_box.empty() ? shader.far_box + "_up.tga"
                                                                     : editor_image;
                shader.shader = name;
                shader.image = chosen;
                shader.nodraw = nodraw;
                out.push_back(std::move(shader));
                shader = {};
                name.clear();
            }
            depth = std::max(0, depth - 1);
            continue;
        }
        if (depth == 0) {
            name = ascii_lower(tok);
            image.clear();
            editor_image.clear();
            shader = {};
            nodraw = false;
            continue;
        }
        const std::string key = ascii_lower(tok);
        if (depth == 1 && key == "surfaceparm") {
            if (argument()) nodraw |= ascii_lower(tok) == "nodraw";
        } else if (depth == 1 && key == "qer_editorimage") {
            if (argument()) editor_image = tok;
        } else if (depth == 1 && key == "skyparms") {
            // <far box> <cloud height> <near box>; "-" is no box; a height of 0 is 512.
            if (!argument()) continue;
            if (tok != "-") shader.far_box = tok;
            shader.cloud_height = argument() ? number(tok) : 0.0f;
            if (!(shader.cloud_height != 0)) shader.cloud_height = 512;
        } else if (depth == 2 && stage.image.empty() && !in_stage_with_image &&
                   (key == "map" || key == "clampmap" || key == "animmap")) {
            if (key == "animmap" && !argument()) continue;  // the frequency
            if (!argument()) continue;
            if (!tok.empty() && tok[0] != '$') {
                stage.image = tok;
                if (image.empty()) image = tok;
            }
            in_stage_with_image = true;
        } else if (depth == 2 && key == "tcmod") {
            if (!argument() || ascii_lower(tok) != "scale") continue;
            if (!argument()) continue;
            const float s = number(tok);
            if (!argument()) continue;
            stage.scale_s *= s;
            stage.scale_t *= number(tok);
        } else if (depth == 2 && key == "blendfunc") {
            if (!argument()) continue;
            const std::string a = ascii_lower(tok);
            using F = model::BlendFactor;
            if (a == "add") {
                stage.src = F::one, stage.dst = F::one;
            } else if (a == "filter") {
                stage.src = F::dst_color, stage.dst = F::zero;
            } else if (a == "blend") {
                stage.src = F::src_alpha, stage.dst = F::one_minus_src_alpha;
            } else {
                stage.src = blend_factor(a);
                stage.dst = argument() ? blend_factor(ascii_lower(tok)) : F::one;
            }
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
