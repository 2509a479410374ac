// bspkit pak list FILE [--json]
// bspkit pak extract FILE -o DIR [PATTERN...]
// bspkit pak add FILE PATH=LOCALFILE... -o NEW
// bspkit pak remove FILE PATTERN... -o NEW
#include "common.hpp"

#include <bspkit/entities.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/formats/source_pakfile.hpp>
#include <bspkit/zip.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace bspkit::cli {
namespace {

using source::Pakfile;

void print_list(const Pakfile& pak, bool json) {
    if (json) {
        nlohmann::json j;
        auto& entries = j["entries"] = nlohmann::json::array();
        for (const auto& e : pak.entries())
            entries.push_back({{"name", bytes_to_utf8(e.name)},
                               {"size", e.size},
                               {"compressed_size", e.compressed_size},
                               {"method", e.method_name()},
                               {"crc32", e.crc32},
                               {"offset", e.header_offset}});
        j["comment"] = bytes_to_utf8(std::string(pak.comment().c_str()));  // up to the first NUL
        fmt::print("{}\n", json_text(j));
        return;
    }
    uint64_t total = 0;
    for (const auto& e : pak.entries()) {
        fmt::print("{:>10} {:>10}  {:<7}  {}\n", e.size, e.compressed_size, e.method_name(), zip::printable(e.name));
        total += e.size;
    }
    fmt::print(stderr, "{} entries, {} bytes\n", pak.entries().size(), total);
}

void add_pak(CLI::App& app, Action& action) {
    auto* pak = app.add_subcommand("pak", "List, extract, add or remove files of a Source map's pakfile (lump 40)");
    pak->require_subcommand(1);
    struct Args {
        std::string file, out;
        bool json = false;
        std::vector<std::string> items;
    };
    auto a = std::make_shared<Args>();

    auto* list = pak->add_subcommand("list", "List the files in the pakfile");
    add_salvage_flag(list);
    list->add_option("FILE", a->file, "Source BSP file")->required();
    list->add_flag("--json", a->json, "Print JSON");
    list->callback([&action, a] {
        action = [a] {
            const Bsp bsp = open_requiring(a->file, {"pakfile"});
            const Pakfile p = Pakfile::read(bsp);
            for (const Diagnostic& d : p.diagnostics()) print_diagnostic(a->file, d);
            print_list(p, a->json);
            return kExitOk;
        };
    });

    auto* extract = pak->add_subcommand("extract", "Extract files (all, or those matching PATTERNs) below DIR");
    add_salvage_flag(extract);
    extract->add_option("FILE", a->file, "Source BSP file")->required();
    extract->add_option("-o,--output", a->out, "Directory to extract into")->required()->type_name("DIR");
    extract->add_option("PATTERN", a->items, "Glob on entry names (* and ?, case-insensitive, '\\' read as '/')");
    extract->footer("Refuses, before writing anything, entries that would land outside DIR.");
    extract->callback([&action, a] {
        action = [a] {
            const Bsp bsp = open_requiring(a->file, {"pakfile"});
            const Pakfile p = Pakfile::read(bsp);
            const auto summary = source::extract_to(p, a->out, a->items);
            fmt::print(stderr, "{}: extracted {} files ({} bytes){} to {}\n", a->file, summary.files, summary.bytes,
                       summary.directories ? fmt::format(" and {} directories", summary.directories) : "", a->out);
            return kExitOk;
        };
    });

    auto* add = pak->add_subcommand("add", "Add (or replace) files, stored uncompressed, and save a new BSP");
    add_salvage_flag(add);
    add->add_option("FILE", a->file, "Source BSP file")->required();
    add->add_option("ITEM", a->items, "PATH=LOCALFILE: store LOCALFILE as PATH inside the pakfile")
        ->required()
        ->type_name("PATH=LOCALFILE");
    add->add_option("-o,--output", a->out, "Output BSP file")->required();
    add->callback([&action, a] {
        action = [a] {
            std::vector<std::pair<std::string, std::string>> items;
            for (const std::string& item : a->items) {
                const size_t eq = item.find('=');
                if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
                    throw UsageError("expected PATH=LOCALFILE, got '" + item + "'");
                std::string path = item.substr(0, eq), why;
                if (!source::entry_path(path, &why) || path.back() == '/' || path.back() == '\\')
                    throw UsageError("cannot store '" + path + "' in a pakfile: " +
                                     (why.empty() ? "a file name must not end with a slash" : why));
                items.emplace_back(std::move(path), item.substr(eq + 1));
            }
            Bsp bsp = open_requiring(a->file, {"pakfile"});
            Pakfile p = Pakfile::read(bsp);
            for (const auto& [path, local] : items) {
                const bool replacing = p.find(path).has_value();
                Bytes data = read_file(local);
                fmt::print(stderr, "{} {} ({} bytes)\n", replacing ? "replaced" : "added", path, data.size());
                p.add(path, std::move(data));
            }
            p.write_to(bsp);
            bsp.save(a->out);
            fmt::print(stderr, "{}: pakfile now holds {} entries, saved {}\n", a->file, p.entries().size(), a->out);
            return kExitOk;
        };
    });

    auto* remove = pak->add_subcommand("remove", "Remove files matching PATTERNs and save a new BSP");
    add_salvage_flag(remove);
    remove->add_option("FILE", a->file, "Source BSP file")->required();
    remove->add_option("PATTERN", a->items, "Glob on entry names (* and ?, case-insensitive, '\\' read as '/')")
        ->required();
    remove->add_option("-o,--output", a->out, "Output BSP file")->required();
    remove->callback([&action, a] {
        action = [a] {
            Bsp bsp = open_requiring(a->file, {"pakfile"});
            Pakfile p = Pakfile::read(bsp);
            size_t removed = 0;
            for (const std::string& pattern : a->items) {
                const size_t n = p.remove_matching(pattern);
                if (n == 0) throw Error(p.at(-1), "pattern \"" + pattern + "\" matches no entry; nothing was saved");
                removed += n;
            }
            p.write_to(bsp);
            bsp.save(a->out);
            fmt::print(stderr, "{}: removed {} entries ({} left), saved {}\n", a->file, removed, p.entries().size(),
                       a->out);
            return kExitOk;
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("pak", add_pak);

}  // namespace bspkit::cli
