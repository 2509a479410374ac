#include "samples.hpp"

#include <array>
#include <string_view>

namespace bspkit::samples {
namespace {

Bytes text(std::string_view s, bool nul = true) {
    Bytes out(s.begin(), s.end());
    if (nul) out.push_back(0);
    return out;
}

// The six planes and eight corners of a 512 x 512 x 256 box.
constexpr float kMin[3] = {-256, -256, 0}, kMax[3] = {256, 256, 256};

Bytes planes(bool with_type, ByteOrder order) {
    Bytes out;
    for (int axis = 0; axis < 3; ++axis) {
        for (int side = 0; side < 2; ++side) {
            for (int k = 0; k < 3; ++k) append<uint32_t>(out, std::bit_cast<uint32_t>(k == axis ? (side ? -1.0f : 1.0f) : 0.0f), order);
            const float dist = side ? -kMax[axis] : kMin[axis];
            append<uint32_t>(out, std::bit_cast<uint32_t>(dist), order);
            if (with_type) append<int32_t>(out, axis, order);
        }
    }
    return out;
}

Bytes corners(ByteOrder order) {
    Bytes out;
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k)
            append<uint32_t>(out, std::bit_cast<uint32_t>((i >> k) & 1 ? kMax[k] : kMin[k]), order);
    return out;
}

constexpr std::string_view kEntities =
    "{\n\"classname\" \"worldspawn\"\n\"message\" \"bspkit sample box\"\n}\n"
    "{\n\"classname\" \"info_player_start\"\n\"origin\" \"0 0 64\"\n}\n";

// A Source game lump with one static prop dictionary entry ('sprp' v10 header only).
Bytes static_prop_lump(ByteOrder order) {
    Bytes out;
    append<int32_t>(out, 1, order);  // dictionary entries
    Bytes name(128, 0);
    const std::string_view model = "models/bspkit/sample_crate.mdl";
    std::copy(model.begin(), model.end(), name.begin());
    out.insert(out.end(), name.begin(), name.end());
    append<int32_t>(out, 0, order);  // leaf entries
    append<int32_t>(out, 0, order);  // props
    return out;
}

Bytes game_lump_directory(ByteOrder order, int64_t lump_offset) {
    // One game lump ('sprp', version 10) right after the directory; offsets absolute.
    const Bytes prop = static_prop_lump(order);
    Bytes out;
    append<int32_t>(out, 1, order);
    append<uint32_t>(out, 0x73707270u /* 'sprp' */, order);
    append<uint16_t>(out, 0, order);
    append<uint16_t>(out, 10, order);
    append<int32_t>(out, int32_t(lump_offset + 4 + 16), order);
    append<int32_t>(out, int32_t(prop.size()), order);
    out.insert(out.end(), prop.begin(), prop.end());
    return out;
}

}  // namespace

Bytes build(const FormatLayout& layout, std::optional<int32_t> version, const std::vector<Bytes>& lumps,
            ByteOrder order, Compression compression) {
    Bsp bsp = Bsp::create(layout, version, order);
    for (size_t i = 0; i < lumps.size() && i < bsp.lump_count(); ++i)
        if (!lumps[i].empty()) bsp.replace(i, lumps[i]);
    return bsp.serialize({compression});
}

std::vector<Sample> all() {
    using L = ByteOrder;
    std::vector<Sample> out;
    auto quake_like = [&](const FormatLayout& layout, std::optional<int32_t> version, std::string name,
                          size_t entities_index, size_t planes_index, size_t verts_index, bool plane_type) {
        std::vector<Bytes> lumps(layout.lumps.size());
        lumps[entities_index] = text(kEntities);
        lumps[planes_index] = planes(plane_type, L::little);
        lumps[verts_index] = corners(L::little);
        out.push_back({name, std::string(format_id(layout.format)), version, build(layout, version, lumps)});
    };
    quake_like(layouts::quake1(), 29, "sample_quake1.bsp", 0, 1, 3, true);
    quake_like(layouts::bsp2(), std::nullopt, "sample_bsp2.bsp", 0, 1, 3, true);
    quake_like(layouts::goldsrc(), 30, "sample_goldsrc.bsp", 0, 1, 3, true);
    quake_like(layouts::quake2(), 38, "sample_quake2.bsp", 0, 1, 2, true);
    {
        // Quake 3 vertices are 44-byte drawVert_t: position, st, lightmap st, normal, colour.
        std::vector<Bytes> lumps(layouts::quake3().lumps.size());
        lumps[0] = text(kEntities);
        lumps[2] = planes(false, L::little);
        const Bytes xyz = corners(L::little);
        for (size_t v = 0; v < 8; ++v) {
            lumps[10].insert(lumps[10].end(), xyz.begin() + v * 12, xyz.begin() + v * 12 + 12);
            lumps[10].resize(lumps[10].size() + 32, 0);
        }
        out.push_back({"sample_quake3.bsp", "quake3", 46, build(layouts::quake3(), 46, lumps)});
    }
    quake_like(layouts::nightfire(), 42, "sample_nightfire.bsp", 0, 1, 4, true);

    // Source v20, little- and big-endian, plain and LZMA, with a game lump.
    for (const L order : {L::little, L::big}) {
        for (const Compression c : {Compression::keep, Compression::compress}) {
            const FormatLayout& layout = layouts::source();
            std::vector<Bytes> lumps(layout.lumps.size());
            lumps[0] = text(kEntities);
            lumps[1] = planes(true, order);
            lumps[3] = corners(order);
            Bsp bsp = Bsp::parse(samples::build(layout, 20, lumps, order), "sample");
            // The game lump's offsets are absolute: lay it out at its final place.
            bsp.replace(source_lump::game_lump, game_lump_directory(order, bsp.entry(source_lump::game_lump).offset));
            std::string name = std::string("sample_source") + (order == L::big ? "_x360" : "") +
                               (c == Compression::compress ? "_lzma" : "") + ".bsp";
            out.push_back({name, "source", 20, bsp.serialize({c})});
        }
    }
    return out;
}

}  // namespace bspkit::samples
