// bspkit entities FILE [--json] [--where KEY=GLOB]...
// bspkit entities FILE --set ENTITIES.json -o NEW
#include "common.hpp"

#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/glob.hpp>
#include <bspkit/zip.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <unistd.h>

namespace bspkit::cli {
namespace {

struct Filter {
    std::string key, glob;
};

std::vector<Filter> parse_filters(const std::vector<std::string>& where) {
    std::vector<Filter> out;
    for (const std::string& w : where) {
        const size_t eq = w.find('=');
        if (eq == std::string::npos || eq == 0)
            throw UsageError("--where needs KEY=GLOB (e.g. classname=light*), got '" + w + "'");
        out.push_back({w.substr(0, eq), w.substr(eq + 1)});
    }
    return out;
}

/// An entity matches when, for every filter, some pair with that key has a
/// value matching the glob (keys and values compared exactly, case-sensitive).
bool matches(const Entity& e, const std::vector<Filter>& filters) {
    for (const Filter& f : filters) {
        bool any = false;
        for (const KeyValue& kv : e.pairs)
            if (kv.key == f.key && glob_match(f.glob, kv.value)) {
                any = true;
                break;
            }
        if (!any) return false;
    }
    return true;
}

nlohmann::json entity_json(const Entity& e, size_t index) {
    auto pairs = nlohmann::json::array();
    for (const KeyValue& kv : e.pairs) pairs.push_back({bytes_to_utf8(kv.key), bytes_to_utf8(kv.value)});
    return {{"index", index}, {"offset", e.offset}, {"pairs", std::move(pairs)}};
}

void write_out(std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); }

void print_text(const EntityLump& lump, const std::vector<size_t>& selected) {
    // The map's own bytes, as they are into a file or a pipe (the text parses back to the same
    // entities); to a terminal, its control bytes as \xNN (Source's I/O separator ESC among them),
    // which the terminal would otherwise act on.
    const bool terminal = ::isatty(1);
    const auto shown = [terminal](const std::string& s) { return terminal ? zip::printable(s) : s; };
    for (size_t i : selected) {
        const Entity& e = lump.entities[i];
        std::string block = fmt::format("// entity {}", i);
        if (e.offset >= 0) block += fmt::format(" at offset {}", e.offset);
        block += "\n{\n";
        for (const KeyValue& kv : e.pairs) {
            block += '"';
            block += shown(kv.key);
            block += "\" \"";
            block += shown(kv.value);
            block += "\"\n";
        }
        block += "}\n";
        write_out(block);
    }
}

/// Reads the JSON that --json prints (an array of {"pairs": [[key, value], ...]}).
EntityLump entities_from_json(const std::string& path, EntityLump base) {
    const Bytes raw = read_file(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(raw.begin(), raw.end());
    } catch (const nlohmann::json::parse_error& e) {
        throw Error({path, "", int64_t(e.byte)}, std::string("invalid JSON: ") + e.what());
    }
    if (!j.is_array()) throw Error({path, "", -1}, "expected a JSON array of entities, as printed by --json");
    std::vector<Entity> list;
    for (size_t i = 0; i < j.size(); ++i) {
        const auto& item = j[i];
        const std::string at = "entity " + std::to_string(i) + " of the array";
        if (!item.is_object() || !item.contains("pairs") || !item["pairs"].is_array())
            throw Error({path, "", -1}, at + ": expected an object with a \"pairs\" array");
        Entity e;
        const auto& pairs = item["pairs"];
        for (size_t k = 0; k < pairs.size(); ++k) {
            const auto& p = pairs[k];
            if (!p.is_array() || p.size() != 2 || !p[0].is_string() || !p[1].is_string())
                throw Error({path, "", -1}, at + ", pair " + std::to_string(k) + ": expected [\"key\", \"value\"]");
            e.pairs.push_back({utf8_to_bytes(p[0].get<std::string>()), utf8_to_bytes(p[1].get<std::string>())});
        }
        list.push_back(std::move(e));
    }
    base.entities = std::move(list);
    return base;
}

void add_entities(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("entities", "List, filter or replace the entities of a BSP file");
    struct Args {
        std::string file, set, out;
        bool json = false;
        std::vector<std::string> where;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("FILE", a->file, "BSP file")->required();
    cmd->add_flag("--json", a->json, "Print JSON: [{\"index\": n, \"offset\": o, \"pairs\": [[key, value], ...]}, ...]");
    auto* where = cmd->add_option("--where", a->where,
                                  "Only entities with a KEY whose value matches GLOB (* and ?); repeat for AND")
                      ->type_name("KEY=GLOB")
                      ->allow_extra_args(false);
    auto* set = cmd->add_option("--set", a->set, "Replace the entity lump with this JSON (as printed by --json)")
                    ->type_name("ENTITIES.json");
    auto* out = cmd->add_option("-o,--output", a->out, "Output BSP file (with --set)");
    set->needs(out);
    out->needs(set);
    set->excludes(where);
    cmd->footer(
        "Text output is the entity lump itself, each entity preceded by a '// entity N' comment; to a\n"
        "terminal, control bytes in keys and values (ESC, newlines inside a value...) are shown as \\xNN.\n"
        "--set takes the whole list (\"index\" and \"offset\" are ignored; entities left out are removed);\n"
        "an unchanged list leaves the file byte-identical, LZMA-compressed lumps stay compressed.\n"
        "Bytes that are not UTF-8 appear in JSON as U+EF80..U+EFFF and are restored by --set.");
    cmd->callback([&action, a] {
        action = [a] {
            if (!a->set.empty()) {
                if (a->json) throw UsageError("--json cannot be combined with --set");
                Bsp bsp = open_reporting(a->file);
                // A malformed lump can be replaced too: the new one is then written in compiler form.
                EntityLump current;
                try {
                    current = read_entities(bsp);
                } catch (const Error& e) {
                    fmt::print(stderr, "{} (replacing it)\n", e.what());
                }
                const EntityLump lump = entities_from_json(a->set, std::move(current));
                const bool changed = write_entities(bsp, lump);
                bsp.save(a->out);
                fmt::print(stderr, "{}: {} entities{}, saved {}\n", a->file, lump.entities.size(),
                           changed ? "" : " (unchanged)", a->out);
                return kExitOk;
            }
            const std::vector<Filter> filters = parse_filters(a->where);
            const Bsp bsp = open_reporting(a->file);
            const EntityLump lump = read_entities(bsp);
            std::vector<size_t> selected;
            for (size_t i = 0; i < lump.entities.size(); ++i)
                if (matches(lump.entities[i], filters)) selected.push_back(i);
            if (a->json) {
                auto j = nlohmann::json::array();
                for (size_t i : selected) j.push_back(entity_json(lump.entities[i], i));
                fmt::print("{}\n", json_text(j, 1));
            } else {
                print_text(lump, selected);
            }
            if (!filters.empty())
                fmt::print(stderr, "{}: {} of {} entities match\n", a->file, selected.size(), lump.entities.size());
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("entities", add_entities);

}  // namespace bspkit::cli
