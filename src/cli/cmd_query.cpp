// bspkit leaf FILE X Y Z [--json]: the leaf, cluster, area and contents at a point.
// bspkit trace FILE --from X,Y,Z --to X,Y,Z [--hull N | --box MINS,MAXS] [--models] [--json]
// bspkit trace FILE --rays FILE|- [...]: one ray "X,Y,Z X,Y,Z" (or six numbers) per line, JSON lines out.
// bspkit visible FILE --from X,Y,Z --to X,Y,Z [--json]: PVS and line of sight between two points.
// Thin front ends over bspkit::query::World.
#include "common.hpp"

#include <bspkit/file_io.hpp>
#include <bspkit/float_text.hpp>
#include <bspkit/parallel.hpp>
#include <bspkit/query.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>

namespace bspkit::cli {
namespace {

using query::Vec3;

/// The numbers of `text` (separated by commas and white space) into `out`,
/// each without a '+' sign (std::from_chars reads none); how many there
/// are, or SIZE_MAX when there are more than out.size().
size_t split_numbers(std::string_view text, std::span<std::string_view> out) {
    static constexpr auto kSeparator = [] {
        std::array<bool, 256> is{};
        for (const unsigned char ch : {',', ' ', '\t', '\r', '\n', '\v', '\f'}) is[ch] = true;
        return is;
    }();
    const auto separator = [](char ch) { return kSeparator[static_cast<unsigned char>(ch)]; };
    size_t n = 0, i = 0;
    while (true) {
        while (i < text.size() && separator(text[i])) ++i;
        if (i == text.size()) return n;
        size_t end = i;
        while (end < text.size() && !separator(text[end])) ++end;
        if (n == out.size()) return SIZE_MAX;
        const size_t first = i + (text[i] == '+' && end - i > 1 && text[i + 1] != '-' && text[i + 1] != '+');
        out[n++] = text.substr(first, end - first);
        i = end;
    }
}

/// Reads the numbers in `text` (split_numbers()) into `out`; false unless
/// there are exactly out.size() of them, each a finite decimal number (an
/// optional sign, digits, a point, an exponent). By std::from_chars: no
/// locale and no stream per line, which were most of `trace --rays`' time.
/// `tokens`, when given (out.size() of them): each number's text.
bool parse_floats(std::string_view text, std::span<float> out, std::string_view* tokens = nullptr) {
    std::string_view own[8];
    if (!tokens) {
        if (out.size() > std::size(own)) return false;
        tokens = own;
    }
    if (split_numbers(text, std::span(tokens, out.size())) != out.size()) return false;
    for (size_t n = 0; n < out.size(); ++n) {
        const std::string_view token = tokens[n];
        const char* const end = token.data() + token.size();
        float v = 0;
        auto [ptr, ec] = std::from_chars(token.data(), end, v);
        if (ec == std::errc::result_out_of_range) {
            // Too small for a float (1e-300) reads as its nearest float, zero, as a
            // stream read it; too large (1e50) stays an error.
            double d = 0;
            const auto r = std::from_chars(token.data(), end, d);
            if (r.ec == std::errc() && std::fabs(d) < 1) {
                v = float(d);
                ptr = r.ptr;
                ec = std::errc();
            }
        }
        if (ec != std::errc() || ptr != end || !std::isfinite(v)) return false;
        out[n] = v;
    }
    return true;
}

/// Where a ray's line typed each of its six numbers as float_text() prints
/// the float (is_float_text()): `trace --rays` copies those texts into the
/// ray's JSON line instead of printing the floats again. A number typed
/// otherwise, or further into its line than 255 characters, has length 0.
struct TypedRay {
    size_t line = 0;    ///< the line's offset in the input
    uint8_t start[6]{};  ///< each number's offset in the line
    uint8_t length[6]{};

    TypedRay() = default;
    TypedRay(std::string_view input, std::string_view line_text, const std::string_view (&tokens)[6])
        : line(size_t(line_text.data() - input.data())) {
        for (int k = 0; k < 6; ++k) {
            const size_t at = size_t(tokens[k].data() - line_text.data());
            if (at + tokens[k].size() <= 255 && is_float_text(tokens[k])) {
                start[k] = uint8_t(at);
                length[k] = uint8_t(tokens[k].size());
            }
        }
    }
    /// The six texts ("" where a number must be printed).
    void texts(std::string_view input, std::string_view (&out)[6]) const {
        for (int k = 0; k < 6; ++k) out[k] = input.substr(line + start[k], length[k]);
    }
};

std::vector<float> numbers(const std::string& text, size_t count, const char* what) {
    std::vector<float> v(count);
    if (!parse_floats(text, v))
        throw UsageError(fmt::format("{} needs {} comma-separated numbers, got '{}'", what, count, text));
    return v;
}

Vec3 vec3(const std::string& text, const char* what) {
    const auto v = numbers(text, 3, what);
    return {v[0], v[1], v[2]};
}

nlohmann::json j3(Vec3 v) { return {v.x, v.y, v.z}; }  // json_text() prints each as float_text()

nlohmann::json contents_json(const query::Contents& c) {
    return {{"raw", c.raw}, {"flags", query::content_flag_names(c.flags)}};
}

/// Appends `v` as float_text(), with ".0" on an integral one (as
/// nlohmann::json prints a double); null when it is not finite. Every
/// number in the query commands' JSON is a float read back exactly by a
/// float parse (or a double parse rounded to float).
void append_number(std::string& out, float v) {
    if (!std::isfinite(v)) {
        out.append("null", 4);
        return;
    }
    char buf[32];
    const std::string_view text = float_text(v, buf);
    out.append(text.data(), text.size());
    // A scan of the few characters (find_first_of called memchr once for each of ".e").
    for (const char c : text)
        if (c == '.' || c == 'e') return;
    out.append(".0", 2);
}

void append_integer(std::string& out, int64_t v) {
    char buf[24];
    out.append(buf, size_t(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
}

/// `v` as append_number() writes each coordinate; where `typed` (null, or
/// the coordinates as the user typed them: TypedRay) holds a coordinate's
/// text, float_text() of the float as is_float_text() found, it is copied.
void append_vec3(std::string& out, Vec3 v, const std::string_view* typed = nullptr) {
    const float xyz[3] = {v.x, v.y, v.z};
    out += '[';
    for (int k = 0; k < 3; ++k) {
        if (k) out += ',';
        if (typed && !typed[k].empty()) {
            out += typed[k];
            bool point = false;  // a scan of the few characters, as append_number()'s
            for (const char c : typed[k]) point |= c == '.';
            if (!point) out.append(".0", 2);
        } else {
            append_number(out, xyz[k]);
        }
    }
    out += ']';
}

/// One trace's JSON object on one line, appended to `out`: the keys in the
/// order nlohmann::json keeps them (sorted), so `trace --json`, `visible
/// --json` (which parse it) and `trace --rays` (which writes it as it is,
/// without building a json value per ray; with from_chars, the command ran
/// three times faster on 200000 rays) agree. Keys are string_views (their
/// lengths known: `out += "..."` measured each with strlen). `typed`: null,
/// or the ray's six numbers as the user typed them where that text is the
/// float's float_text() (TypedRay; "" elsewhere): such a text is copied
/// rather than printed again, the same bytes (for `end` too when it is `to`,
/// bit for bit).
void append_trace_json(std::string& out, Vec3 from, Vec3 to, const query::TraceResult& r,
                       const std::string_view* typed = nullptr) {
    using namespace std::string_view_literals;
    const bool hit = r.fraction < 1;
    const auto flag = [&](std::string_view key, bool value) {
        out += key;
        out += value ? "true"sv : "false"sv;
    };
    flag("{\"allsolid\":"sv, r.allsolid);
    if (hit) {
        out += ",\"brush\":"sv;
        if (r.brush >= 0) append_integer(out, r.brush);
        else out += "null"sv;
        // Flag names are plain identifiers joined by commas: nothing to escape.
        out += ",\"contents\":{\"flags\":\""sv;
        out += query::content_flag_names(r.contents.flags);
        out += "\",\"raw\":"sv;
        append_integer(out, r.contents.raw);
        out += "},\"dist\":"sv;
        append_number(out, r.dist);
    }
    out += ",\"end\":"sv;
    append_vec3(out, r.end, typed && std::memcmp(&r.end, &to, sizeof to) == 0 ? typed + 3 : nullptr);
    out += ",\"fraction\":"sv;
    append_number(out, r.fraction);
    out += ",\"from\":"sv;
    append_vec3(out, from, typed);
    flag(",\"hit\":"sv, r.hit());
    flag(",\"inopen\":"sv, r.inopen);  // Quake 1 family clip hulls (false elsewhere)
    flag(",\"inwater\":"sv, r.inwater);
    if (hit) {
        out += ",\"model\":"sv;
        append_integer(out, r.model);
        out += ",\"normal\":"sv;
        append_vec3(out, r.normal);
    }
    flag(",\"startsolid\":"sv, r.startsolid);
    if (hit) {
        out += ",\"surface_flags\":"sv;
        append_integer(out, int64_t(r.surface_flags));
    }
    out += ",\"to\":"sv;
    append_vec3(out, to, typed ? typed + 3 : nullptr);
    if (hit) flag(",\"triangle\":"sv, r.triangle);
    out += '}';
}

nlohmann::json trace_json(Vec3 from, Vec3 to, const query::TraceResult& r) {
    std::string text;
    append_trace_json(text, from, to, r);
    return nlohmann::json::parse(text);
}

void add_leaf(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("leaf", "The leaf, cluster, area and contents at a point");
    auto file = std::make_shared<std::string>();
    auto xyz = std::make_shared<std::vector<float>>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("FILE", *file, "BSP file")->required();
    cmd->add_option("X Y Z", *xyz, "The point")->expected(3)->required()->allow_extra_args(false);
    cmd->add_flag("--json", *json, "Print machine-readable JSON");
    add_salvage_flag(cmd);
    cmd->callback([&action, file, xyz, json] {
        action = [file, xyz, json] {
            const Bsp bsp = open_for_geometry(*file);
            const auto world = query::World::prepare(bsp);
            const Vec3 p{(*xyz)[0], (*xyz)[1], (*xyz)[2]};
            const auto leaf = world.leaf_at(p);
            nlohmann::json j;
            j["file"] = bsp.file_name();
            j["format"] = format_id(bsp.format());
            j["point"] = j3(p);
            j["leaf"] = leaf.leaf;
            j["cluster"] = leaf.cluster >= 0 ? nlohmann::json(leaf.cluster) : nlohmann::json(nullptr);
            j["area"] = leaf.area >= 0 ? nlohmann::json(leaf.area) : nlohmann::json(nullptr);
            j["contents"] = contents_json(leaf.contents);
            nlohmann::json hulls = nlohmann::json::array();
            for (const auto& h : world.hulls())
                if (h.index > 0 && h.available)
                    hulls.push_back({{"hull", h.index},
                                     {"source", h.brushlist ? "bspx:BRUSHLIST" : "clipnodes"},
                                     {"contents", contents_json(world.contents(p, h.index))}});
            if (!hulls.empty()) j["hulls"] = hulls;
            if (*json) {
                fmt::print("{}\n", json_text(j));
                return kExitOk;
            }
            fmt::print("{}: ({} {} {}) leaf {} cluster {} area {} contents {} ({})\n", bsp.file_name(), p.x, p.y, p.z,
                       leaf.leaf, leaf.cluster, leaf.area, query::content_flag_names(leaf.contents.flags),
                       leaf.contents.raw);
            for (const auto& h : hulls)
                fmt::print("hull {} ({}): {}\n", h["hull"].get<int>(), h["source"].get<std::string>(),
                           h["contents"]["flags"].get<std::string>());
            return kExitOk;
        };
    });
}

void add_trace(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("trace", "Line, box or hull traces through the map's collision");
    struct Opts {
        std::string file, from, to, box, rays;
        int hull = -1;
        bool models = false, json = false;
        int threads = 0;
    };
    auto o = std::make_shared<Opts>();
    cmd->add_option("FILE", o->file, "BSP file")->required();
    auto* from = cmd->add_option("--from", o->from, "Start X,Y,Z");
    auto* to = cmd->add_option("--to", o->to, "End X,Y,Z");
    auto* hull = cmd->add_option("--hull", o->hull, "Quake 1 / GoldSrc clip hull 0-3")->check(CLI::Range(0, 3));
    auto* box = cmd->add_option("--box", o->box, "Box MINX,MINY,MINZ,MAXX,MAXY,MAXZ (origin-relative)");
    hull->excludes(box);
    auto* rays = cmd->add_option("--rays", o->rays, "File of rays (one 'X,Y,Z X,Y,Z' per line; - = stdin): a JSON line per ray, in order (\"error\" in it: that ray could not be traced; exit 1)");
    rays->excludes(from)->excludes(to);
    from->needs(to);
    to->needs(from);
    cmd->add_flag("--models", o->models, "Also hit brush models (doors, platforms) at their entities' origins (not those the game spawns not solid: triggers, func_illusionary, ladders, zones...)");
    cmd->add_flag("--json", o->json, "Print machine-readable JSON");
    cmd->add_option("--threads", o->threads, "Threads for --rays (0 = every core)")->check(CLI::NonNegativeNumber);
    add_salvage_flag(cmd);
    cmd->footer("Without --hull or --box the trace is a line. Quake 1 / GoldSrc boxes pick a clip hull as the "
                "engine does.");
    cmd->callback([&action, o] {
        action = [o] {
            if (o->rays.empty() && o->from.empty()) throw UsageError("trace needs --from and --to, or --rays");
            const Bsp bsp = open_for_geometry(o->file);
            const auto world = query::World::prepare(bsp);
            query::TraceOptions opt;
            opt.hull = o->hull;
            opt.models = o->models;
            if (!o->box.empty()) {
                const auto b = numbers(o->box, 6, "--box");
                opt.mins = {b[0], b[1], b[2]};
                opt.maxs = {b[3], b[4], b[5]};
                if (opt.mins.x > opt.maxs.x || opt.mins.y > opt.maxs.y || opt.mins.z > opt.maxs.z)
                    throw UsageError("--box mins must not exceed maxs");
            }
            if (o->rays.empty()) {
                const Vec3 a = vec3(o->from, "--from"), b = vec3(o->to, "--to");
                const auto r = world.trace(a, b, opt);
                if (o->json) {
                    auto j = trace_json(a, b, r);
                    j["file"] = bsp.file_name();
                    j["format"] = format_id(bsp.format());
                    fmt::print("{}\n", json_text(j));
                    return kExitOk;
                }
                // + 0.0f: a negated zero prints as 0, not -0 (the JSON keeps the values as they are).
                fmt::print("fraction {} end ({} {} {}){}{}{}{}\n", r.fraction, r.end.x + 0.0f, r.end.y + 0.0f,
                           r.end.z + 0.0f, r.startsolid ? " startsolid" : "", r.allsolid ? " allsolid" : "",
                           r.inopen ? " inopen" : "", r.inwater ? " inwater" : "");
                if (r.fraction < 1)
                    fmt::print("hit model {} plane ({} {} {}) dist {} contents {} surface flags 0x{:x}{}\n", r.model,
                               r.normal.x + 0.0f, r.normal.y + 0.0f, r.normal.z + 0.0f, r.dist + 0.0f,
                               query::content_flag_names(r.contents.flags), r.surface_flags,
                               r.triangle ? " (triangle)" : "");
                return kExitOk;
            }
            const unsigned threads = unsigned(o->threads);  // 0: every core
            // Every line is read, then parsed a block of lines per thread (parsing on one
            // thread was a fifth of the time), before any ray is traced: a bad line is a
            // usage error with no output.
            // A regular file is read in one piece into a buffer of its size (appending
            // 1 MiB pieces to a growing string took 11-15 ms of 4.5 MB, most of it page
            // faults on the copies); read_file() refuses a directory, which read as no
            // rays. Standard input, pipes and devices (/dev/null: no rays) are streamed.
            Bytes file_bytes;
            std::string streamed;
            std::error_code status_error;
            const auto kind = o->rays == "-" ? std::filesystem::file_type::unknown
                                             : std::filesystem::status(o->rays, status_error).type();
            const bool whole = kind == std::filesystem::file_type::regular ||
                               kind == std::filesystem::file_type::directory;
            if (whole) {
                file_bytes = read_file(o->rays);
            } else {
                std::ifstream file;
                if (o->rays != "-") {
                    file.open(o->rays, std::ios::binary);
                    if (!file) throw Error({o->rays, "", -1}, "cannot open the rays file");
                }
                std::istream& in = o->rays == "-" ? std::cin : file;
                std::vector<char> piece(size_t(1) << 20);
                while (in.read(piece.data(), std::streamsize(piece.size())) || in.gcount() > 0)
                    streamed.append(piece.data(), size_t(in.gcount()));
            }
            const std::string_view input =
                whole ? std::string_view(reinterpret_cast<const char*>(file_bytes.data()), file_bytes.size())
                      : std::string_view(streamed);
            std::vector<std::string_view> lines;
            for (size_t at = 0; at < input.size();) {
                const void* nl = std::memchr(input.data() + at, '\n', input.size() - at);
                const size_t end = nl ? size_t(static_cast<const char*>(nl) - input.data()) : input.size();
                lines.emplace_back(input.data() + at, end - at);
                at = end + 1;
            }
            constexpr size_t kLinesPerBlock = 8192;
            const size_t line_blocks = (lines.size() + kLinesPerBlock - 1) / kLinesPerBlock;
            // Each line's ray in its line's slot (no per-block vectors to grow and join:
            // their page faults and copies were a tenth of the command), blank and comment
            // lines then squeezed out.
            std::vector<query::Ray> list(lines.size());
            std::vector<TypedRay> typed(lines.size());  // list[i]'s numbers as typed
            std::vector<uint8_t> is_ray(lines.size());
            std::vector<size_t> bad_line(line_blocks, SIZE_MAX);  // per block: its first bad line's index
            std::vector<size_t> rays_in(line_blocks, 0);
            for_each_block(line_blocks, threads, [&](size_t b) {
                for (size_t i = b * kLinesPerBlock; i < std::min(lines.size(), (b + 1) * kLinesPerBlock); ++i) {
                    const std::string_view line = lines[i];
                    if (line.find_first_not_of(" \t\r") == std::string_view::npos || line[0] == '#') continue;
                    float v[6];
                    std::string_view tokens[6];
                    if (!parse_floats(line, v, tokens)) {
                        bad_line[b] = i;
                        return;
                    }
                    list[i] = {{v[0], v[1], v[2]}, {v[3], v[4], v[5]}};
                    typed[i] = TypedRay(input, line, tokens);
                    is_ray[i] = 1;
                    ++rays_in[b];
                }
            });
            for (const size_t i : bad_line)
                if (i != SIZE_MAX) {
                    // The line as typed, its first 120 characters (a file that is not text has long
                    // ones); UsageError keeps its control bytes as \xNN.
                    const std::string_view shown = lines[i].substr(0, 120);
                    throw UsageError(fmt::format("{} line {}: a ray needs 6 comma-separated numbers, got '{}'{}",
                                                 o->rays, i + 1, shown, shown.size() < lines[i].size() ? "..." : ""));
                }
            const size_t total = std::accumulate(rays_in.begin(), rays_in.end(), size_t(0));
            if (total < lines.size()) {
                size_t kept = 0;
                for (size_t i = 0; i < lines.size(); ++i)
                    if (is_ray[i]) {
                        list[kept] = list[i];
                        typed[kept++] = typed[i];
                    }
                list.resize(total);
                typed.resize(total);
            }
            // Traced and written a chunk at a time: the results and their text for a
            // million rays would be a few hundred MB at once. Within a chunk, each
            // thread takes blocks of rays, traces them and formats their lines (the
            // text was most of the time when one thread wrote every line); the
            // blocks' text is written in order.
            constexpr size_t kChunk = size_t(1) << 16, kBlock = 2048;
            std::vector<query::TraceResult> results;
            std::vector<std::string> errors;
            std::vector<std::string> text;                   // per block
            std::vector<std::pair<size_t, size_t>> failures;  // per block: how many, the first's index in the chunk
            size_t failed = 0, first_failed = 0;
            std::string first_error;
            for (size_t from = 0; from < list.size(); from += kChunk) {
                const std::span<const query::Ray> chunk(list.data() + from, std::min(kChunk, list.size() - from));
                results.assign(chunk.size(), {});
                errors.assign(chunk.size(), {});
                const size_t blocks = (chunk.size() + kBlock - 1) / kBlock;
                text.resize(blocks);  // each block's buffer kept from the last chunk: its pages are not faulted in again
                for (auto& t : text) t.clear();
                failures.assign(blocks, {0, 0});
                for_each_block(blocks, threads, [&](size_t b) {
                    const size_t lo = b * kBlock, n = std::min(kBlock, chunk.size() - lo);
                    // A ray the map cannot answer (a hostile tree; a segment so long that its
                    // distances overflow and a trace runs out of steps) must not cost the others
                    // their lines: it gets a line with "error" in place of the result. Exit 1
                    // then, after every line.
                    world.try_trace(chunk.subspan(lo, n), std::span(results).subspan(lo, n),
                                    std::span(errors).subspan(lo, n), opt, 1);
                    std::string& out = text[b];
                    out.reserve(n * 512);  // a hit's line is about 400 bytes: no regrowth copies
                    for (size_t i = lo; i < lo + n; ++i) {
                        if (!errors[i].empty()) {
                            if (failures[b].first++ == 0) failures[b].second = i;
                            out += json_text({{"from", j3(chunk[i].start)}, {"to", j3(chunk[i].end)}, {"error", errors[i]}},
                                             -1);
                        } else {
                            std::string_view texts[6];
                            typed[from + i].texts(input, texts);
                            append_trace_json(out, chunk[i].start, chunk[i].end, results[i], texts);
                        }
                        out += '\n';
                    }
                });
                for (size_t b = 0; b < blocks; ++b) {
                    if (failures[b].first && failed == 0) {
                        first_failed = from + failures[b].second;
                        first_error = errors[failures[b].second];
                    }
                    failed += failures[b].first;
                    std::fwrite(text[b].data(), 1, text[b].size(), stdout);
                }
            }
            if (failed == 0) return kExitOk;
            fmt::print(stderr, "{}: {} of {} rays not traced (their lines hold \"error\"); ray {}: {}\n", bsp.file_name(),
                       failed, list.size(), first_failed + 1, first_error);
            return kExitBadInput;
        };
    });
}

nlohmann::json place_json(Vec3 p, const query::LeafInfo& leaf) {
    return {{"point", j3(p)},
            {"leaf", leaf.leaf},
            {"cluster", leaf.cluster >= 0 ? nlohmann::json(leaf.cluster) : nlohmann::json(nullptr)}};
}

void add_visible(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand(
        "visible", "Whether one point can see another: the PVS of the first point's cluster, and a line of sight");
    struct Opts {
        std::string file, from, to;
        bool json = false;
    };
    auto o = std::make_shared<Opts>();
    cmd->add_option("FILE", o->file, "BSP file")->required();
    cmd->add_option("--from", o->from, "The eye X,Y,Z")->required();
    cmd->add_option("--to", o->to, "The point looked at X,Y,Z")->required();
    cmd->add_flag("--json", o->json, "Print machine-readable JSON (\"sight\": the line trace, as `trace --json` gives it)");
    add_salvage_flag(cmd);
    cmd->footer("Visible: the second point's cluster is in the first's PVS (always, on maps without vis data) and a "
                "line between them is not blocked by opaque solids; on Quake 1 / BSP2 maps, as QuakeC's visible(), "
                "a line that crosses from the open into water, slime, lava or sky is no sight either. Exit 0 "
                "whatever the answer.");
    cmd->callback([&action, o] {
        action = [o] {
            const Vec3 a = vec3(o->from, "--from"), b = vec3(o->to, "--to");
            const Bsp bsp = open_for_geometry(o->file);
            const auto world = query::World::prepare(bsp);
            // Vis data prepare() could not read: visible() counts every cluster as visible. Say so.
            const std::optional<Diagnostic>& vis_error = world.vis_error();
            if (vis_error) {
                Diagnostic d = *vis_error;
                d.message += " (the PVS is not used: every cluster counts as visible)";
                print_diagnostic(bsp.file_name(), d);
            }
            const query::Visible v = world.visible(a, b);
            if (o->json) {
                nlohmann::json j;
                j["file"] = bsp.file_name();
                j["format"] = format_id(bsp.format());
                j["from"] = place_json(a, v.from);
                j["to"] = place_json(b, v.to);
                j["pvs"] = v.pvs;
                j["line_of_sight"] = v.line_of_sight;
                j["visible"] = v.visible();
                j["vis_error"] = vis_error ? nlohmann::json(vis_error->message) : nlohmann::json(nullptr);
                j["sight"] = trace_json(a, b, v.sight);
                fmt::print("{}\n", json_text(j));
                return kExitOk;
            }
            const auto place = [](Vec3 p, const query::LeafInfo& l) {
                return fmt::format("({} {} {}) leaf {} cluster {}", p.x, p.y, p.z, l.leaf,
                                   l.cluster >= 0 ? std::to_string(l.cluster) : std::string("none"));
            };
            std::string sight = v.line_of_sight ? "clear" : "blocked";
            if (!v.line_of_sight) {
                const auto& r = v.sight;
                if (r.startsolid) sight += " (the eye is in solid)";
                else if (r.fraction < 1)
                    sight += fmt::format(" at fraction {} ({} {} {})", r.fraction, r.end.x + 0.0f, r.end.y + 0.0f,
                                         r.end.z + 0.0f);
                else sight += " (it crosses from the open into water, slime, lava or sky)";
            }
            fmt::print("{}: from {} to {}\n", bsp.file_name(), place(a, v.from), place(b, v.to));
            fmt::print("pvs {}, line of sight {}: {}\n", v.pvs ? "yes" : "no", sight,
                       v.visible() ? "visible" : "not visible");
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("leaf", add_leaf);
BSPKIT_REGISTER_VERB("trace", add_trace);
BSPKIT_REGISTER_VERB("visible", add_visible);

}  // namespace bspkit::cli
