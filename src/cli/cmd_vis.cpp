// bspkit vis FILE [--cluster N | --leaf N] [--json]: what is potentially
// visible (PVS) and audible (PAS) from a cluster or leaf; without an option,
// a summary of the whole map.
#include "common.hpp"

#include <bspkit/visibility.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace bspkit::cli {
namespace {

std::vector<size_t> bits(const Bytes& row, size_t count) {
    std::vector<size_t> out;
    for (size_t i = 0; i < count; ++i)
        if (row[i >> 3] & (1u << (i & 7))) out.push_back(i);
    return out;
}

/// "0-3 7 9-12" (offset added, e.g. +1 for leaves of leaf-based formats).
std::string ranges(const std::vector<size_t>& v, size_t offset = 0) {
    std::string out;
    for (size_t i = 0; i < v.size();) {
        size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ' ';
        out += std::to_string(v[i] + offset);
        if (j > i) out += "-" + std::to_string(v[j] + offset);
        i = j + 1;
    }
    return out.empty() ? "(none)" : out;
}

const char* encoding_name(Visibility::Encoding e) {
    switch (e) {
        case Visibility::Encoding::none: return "none (everything visible)";
        case Visibility::Encoding::quake_leaf_rle: return "run-length rows per leaf (leaf 0 excluded)";
        case Visibility::Encoding::cluster_rle: return "run-length rows per cluster (dvis_t, PVS + PAS)";
        case Visibility::Encoding::cluster_raw: return "uncompressed rows per cluster (visdata)";
        case Visibility::Encoding::nightfire_leaf: return "uncompressed rows per leaf (leaf 0 excluded)";
    }
    return "";
}

const char* encoding_id(Visibility::Encoding e) {
    switch (e) {
        case Visibility::Encoding::none: return "none";
        case Visibility::Encoding::quake_leaf_rle: return "quake_leaf_rle";
        case Visibility::Encoding::cluster_rle: return "cluster_rle";
        case Visibility::Encoding::cluster_raw: return "cluster_raw";
        case Visibility::Encoding::nightfire_leaf: return "nightfire_leaf";
    }
    return "";
}

int run_one(const Bsp& bsp, const Visibility& vis, std::optional<size_t> cluster, std::optional<size_t> leaf,
            bool json) {
    const size_t n = vis.clusters();
    if (leaf && *leaf >= vis.leaf_count())
        throw UsageError(fmt::format("leaf {} is out of range: the map has {} leaves", *leaf, vis.leaf_count()));
    if (leaf) cluster = vis.cluster_of_leaf(*leaf);
    else if (*cluster >= n)
        throw UsageError(fmt::format("cluster {} is out of range: the map has {} clusters", *cluster, n));

    nlohmann::json j;
    j["file"] = bsp.file_name();
    j["format"] = format_id(bsp.format());
    j["encoding"] = encoding_id(vis.encoding());
    j["clusters"] = n;
    j["leaf_based"] = vis.leaf_based();
    j["leaf"] = leaf ? nlohmann::json(*leaf) : nlohmann::json(nullptr);
    if (!cluster) {  // a leaf without a row: Quake leaf 0, cluster -1, brush-model leaves
        j["cluster"] = nullptr;
        j["visible"] = nullptr;
        j["audible"] = nullptr;
        if (json)
            fmt::print("{}\n", json_text(j));
        else
            fmt::print("{}: leaf {} has no visibility cluster (outside the world, solid, or a brush-model leaf)\n",
                       bsp.file_name(), *leaf);
        return kExitOk;
    }
    const auto visible = bits(vis.pvs(*cluster), n);
    const auto audible = bits(vis.pas(*cluster), n);
    j["cluster"] = *cluster;
    j["visible"] = visible;
    j["audible"] = audible;
    j["pas"] = vis.pas_stored() ? "stored" : "computed";
    if (vis.leaf_based()) {
        std::vector<size_t> leaves;
        for (size_t c : visible) leaves.push_back(c + 1);
        j["visible_leaves"] = leaves;
    }
    if (json) {
        fmt::print("{}\n", json_text(j));
        return kExitOk;
    }
    const std::string who = vis.leaf_based() ? fmt::format("cluster {} (leaf {})", *cluster, *cluster + 1)
                                             : fmt::format("cluster {}", *cluster);
    fmt::print("{}: {}{}\n", bsp.file_name(), who, leaf && !vis.leaf_based() ? fmt::format(", from leaf {}", *leaf) : "");
    fmt::print("visible: {} of {} clusters ({:.1f}%): {}\n", visible.size(), n, n ? 100.0 * visible.size() / n : 0.0,
               ranges(visible));
    if (vis.leaf_based()) fmt::print("visible leaves: {}\n", ranges(visible, 1));
    fmt::print("audible ({}): {} of {} clusters: {}\n", vis.pas_stored() ? "stored PAS" : "computed from the PVS",
               audible.size(), n, ranges(audible));
    return kExitOk;
}

int run_summary(const Bsp& bsp, const Visibility& vis, bool json) {
    const size_t n = vis.clusters();
    // Every row is read: a file naming millions of clusters is refused at once.
    if (uint64_t(n) * vis.row_bytes() > kMaxRowBytesRead)
        throw Error({bsp.file_name(), vis.lump_name(), -1},
                    fmt::format("{} clusters of {}-byte rows are {} bytes to read, more than the summary reads ({}); "
                                "--cluster N still answers for one cluster",
                                n, vis.row_bytes(), uint64_t(n) * vis.row_bytes(), kMaxRowBytesRead));
    Bytes row(vis.row_bytes());
    double sum = 0;
    size_t largest = 0, largest_cluster = 0, self_missing = 0;
    for (size_t c = 0; c < n; ++c) {
        row = vis.pvs(c);  // throws Error naming the lump for a broken row
        size_t count = 0;
        for (uint8_t b : row) count += size_t(__builtin_popcount(b));
        sum += double(count) / double(n);
        if (count > largest) {
            largest = count;
            largest_cluster = c;
        }
        if (!(row[c >> 3] & (1u << (c & 7)))) ++self_missing;
    }
    const double average = n ? sum / double(n) : 0.0;
    const double top = n ? double(largest) / double(n) : 0.0;
    if (json) {
        nlohmann::json j;
        j["file"] = bsp.file_name();
        j["format"] = format_id(bsp.format());
        j["encoding"] = encoding_id(vis.encoding());
        j["clusters"] = n;
        j["leaf_based"] = vis.leaf_based();
        j["leaves"] = vis.leaf_count();
        j["lump"] = vis.lump_name();
        j["lump_bytes"] = vis.lump().size();
        j["pas"] = vis.pas_stored() ? "stored" : "computed";
        j["average_visible_fraction"] = average;
        j["largest_visible_fraction"] = top;
        j["largest_visible_cluster"] = n ? nlohmann::json(largest_cluster) : nlohmann::json(nullptr);
        j["clusters_not_seeing_themselves"] = self_missing;
        fmt::print("{}\n", json_text(j));
        return kExitOk;
    }
    fmt::print("file:       {}\n", bsp.file_name());
    fmt::print("format:     {}\n", format_id(bsp.format()));
    fmt::print("encoding:   {}\n", encoding_name(vis.encoding()));
    fmt::print("clusters:   {}{}\n", n, vis.leaf_based() ? " (cluster c = leaf c + 1)" : "");
    fmt::print("leaves:     {}\n", vis.leaf_count());
    fmt::print("vis lump:   {} ({} bytes)\n", vis.lump_name(), vis.lump().size());
    fmt::print("PAS:        {}\n", vis.pas_stored() ? "stored" : "computed from the PVS");
    fmt::print("visible:    {:.1f}% on average, at most {:.1f}% (cluster {})\n", 100 * average, 100 * top,
               largest_cluster);
    if (self_missing) fmt::print("note:       {} clusters do not see themselves\n", self_missing);
    return kExitOk;
}

void add_vis(CLI::App& app, Action& action) {
    auto* cmd = app.add_subcommand("vis", "Potentially visible / audible sets (PVS / PAS) of a map");
    auto file = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    auto cluster = std::make_shared<int64_t>(-1);
    auto leaf = std::make_shared<int64_t>(-1);
    cmd->add_option("FILE", *file, "BSP file")->required();
    auto* c = cmd->add_option("--cluster", *cluster,
                              "List what cluster N sees and hears (Quake 1 / GoldSrc / Nightfire: leaf N + 1)")
                  ->check(CLI::NonNegativeNumber);
    auto* l = cmd->add_option("--leaf", *leaf, "List what leaf N sees and hears (through its cluster)")
                  ->check(CLI::NonNegativeNumber);
    c->excludes(l);
    cmd->add_flag("--json", *json, "Print machine-readable JSON");
    add_salvage_flag(cmd);
    cmd->footer("Without --cluster or --leaf: a summary (clusters, average and largest visible fraction).");
    cmd->callback([&action, file, json, cluster, leaf] {
        action = [file, json, cluster, leaf] {
            // The lumps the sets come from, by their names in each format (a
            // truncated download would otherwise give a summary of 0 clusters).
            const Bsp bsp = open_requiring(*file, {"visibility", "visdata", "leafs", "leaves", "models"});
            const Visibility vis = Visibility::of(bsp);
            if (*cluster < 0 && *leaf < 0) return run_summary(bsp, vis, *json);
            return run_one(bsp, vis, *cluster >= 0 ? std::optional<size_t>(size_t(*cluster)) : std::nullopt,
                           *leaf >= 0 ? std::optional<size_t>(size_t(*leaf)) : std::nullopt, *json);
        };
    });
}

}  // namespace

BSPKIT_REGISTER_VERB("vis", add_vis);

}  // namespace bspkit::cli
