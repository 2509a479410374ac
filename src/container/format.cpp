#include <bspkit/ascii.hpp>
#include <bspkit/format.hpp>

#include <algorithm>
#include <cctype>

namespace bspkit {

namespace {
constexpr std::pair<Format, std::string_view> kIds[] = {
    {Format::quake1, "quake1"}, {Format::bsp2, "bsp2"},         {Format::goldsrc, "goldsrc"},
    {Format::quake2, "quake2"}, {Format::quake3, "quake3"},     {Format::nightfire, "nightfire"},
    {Format::source, "source"},
};

}  // namespace

std::string_view format_id(Format format) noexcept {
    for (const auto& [f, id] : kIds)
        if (f == format) return id;
    return "unknown";
}

std::optional<Format> parse_format_id(std::string_view id) noexcept {
    for (const auto& [f, name] : kIds)
        if (name == id) return f;
    return std::nullopt;
}

uint32_t FormatLayout::record_size(size_t index, int map_version, int lump_version) const noexcept {
    if (index >= lumps.size()) return 0;
    const LumpDef& def = lumps[index];
    for (const SizeRule& rule : def.rules) {
        if (rule.bytes == 0) continue;
        if (map_version < rule.min_map_version || map_version > rule.max_map_version) continue;
        if (rule.lump_version >= 0 && rule.lump_version != lump_version) continue;
        return rule.bytes == kVariableUnderRule ? 0 : rule.bytes;
    }
    return def.record_size;
}

std::optional<size_t> FormatLayout::find_lump(std::string_view name) const noexcept {
    for (size_t i = 0; i < lumps.size(); ++i)
        if (ascii_iequals(lumps[i].name, name)) return i;
    return std::nullopt;
}

}  // namespace bspkit
