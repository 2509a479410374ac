// Format detection from the header bytes; version 29 is decided by content.
#include <bspkit/bsp.hpp>

#include "../formats/quake1/goldsrc_rule.hpp"

#include <cstdio>

namespace bspkit {
namespace {

[[noreturn]] void refuse(std::string_view file, std::string what) {
    throw Error({std::string(file), "header", 0}, std::move(what) + " is not supported");
}

std::string hex_magic(ByteSpan file) {
    char text[64];
    std::snprintf(text, sizeof text, "%02x %02x %02x %02x", file[0], file[1], file[2], file[3]);
    return text;
}

// Variants outside the specs that we recognise by name to refuse clearly.
std::string_view ibsp_variant_name(int32_t version) {
    switch (version) {
        case 41: return "Daikatana";
        case 47: return "Return to Castle Wolfenstein / Enemy Territory";
        case 78: return "UFO: Alien Invasion";
        default: return "";
    }
}

std::string_view vbsp_variant_name(int32_t version) {
    switch (version) {
        case 24: return "unknown Source branch";
        case 25: return "Strata Source / Momentum Mod";
        case 27: return "Contagion";
        case 29: return "Titanfall";
        case 42: return "unknown Source branch";
        default: return "";
    }
}

std::string_view rbsp_respawn_name(int32_t version) {
    switch (version) {
        case 29: return "Titanfall";
        case 36: return "Titanfall 2 tech test";
        case 37: return "Titanfall 2";
        default: return version >= 47 && version <= 51 ? "Apex Legends" : "Respawn";
    }
}

std::string named(std::string_view what, int32_t version, std::string_view name) {
    std::string out = std::string(what) + " version " + std::to_string(version);
    if (!name.empty()) out += " (" + std::string(name) + ")";
    return out;
}

// How many Source directory entries make sense when read with `layout`.
int plausible_entries(ByteSpan file, const FormatLayout& layout, ByteOrder order) {
    int good = 0;
    const uint32_t header = layout.header_size();
    for (size_t i = 0; i < layout.lumps.size(); ++i) {
        const uint8_t* e = file.data() + layout.directory_offset() + i * 16;
        int32_t ofs, len, ver;
        if (layout.directory == DirectoryLayout::source_l4d2) {
            ver = load<int32_t>(e, order), ofs = load<int32_t>(e + 4, order), len = load<int32_t>(e + 8, order);
        } else {
            ofs = load<int32_t>(e, order), len = load<int32_t>(e + 4, order), ver = load<int32_t>(e + 8, order);
        }
        const bool fits = ofs >= 0 && len >= 0 && uint64_t(ofs) + uint64_t(len) <= file.size() &&
                          (len == 0 || uint32_t(ofs) >= header) && ver >= 0 && ver < 256;
        good += fits;
    }
    return good;
}

Detection detect_source(ByteSpan file, std::string_view name, ByteOrder order) {
    const char* magic = order == ByteOrder::big ? "PSBV" : "VBSP";
    if (file.size() < 8) throw Error({std::string(name), "header", 4}, "file ends inside the VBSP header");
    const int32_t version = load<int32_t>(file.data() + 4, order);
    if (version < 17 || version > 23) refuse(name, named(magic, version, vbsp_variant_name(version)));
    const FormatLayout& standard = layouts::source();
    if (file.size() < standard.header_size())
        throw Error({std::string(name), "header", int64_t(file.size())},
                    "file is " + std::to_string(file.size()) + " bytes, the VBSP header needs " +
                        std::to_string(standard.header_size()));
    Detection d;
    d.version = version;
    const std::string base = std::string(magic) + " magic (" + (order == ByteOrder::big ? "big" : "little") +
                             "-endian), version " + std::to_string(version);
    const int std_ok = plausible_entries(file, standard, order);
    const int l4d2_ok = version >= 21 ? plausible_entries(file, layouts::source_l4d2(), order) : -1;
    if (l4d2_ok > std_ok) {
        d.layout = &layouts::source_l4d2();
        d.rule = base + "; lump_t order {version, fileofs, filelen, fourCC} of Left 4 Dead 2: " +
                 std::to_string(l4d2_ok) + " of 64 entries fit the file, " + std::to_string(std_ok) +
                 " in the standard order";
    } else {
        d.layout = &standard;
        d.rule = base + "; standard lump_t order {fileofs, filelen, version, fourCC}";
        if (l4d2_ok >= 0)
            d.rule += ": " + std::to_string(std_ok) + " of 64 entries fit the file, " + std::to_string(l4d2_ok) +
                      " in the Left 4 Dead 2 order";
    }
    return d;
}

// Blue Shift swaps the first two lumps: planes first, entities second.
bool looks_like_blue_shift(ByteSpan file) {
    if (file.size() < 20) return false;
    auto text_start = [&](int index) -> int {
        const int32_t ofs = load<int32_t>(file.data() + 4 + index * 8);
        const int32_t len = load<int32_t>(file.data() + 8 + index * 8);
        if (ofs < 0 || len <= 0 || size_t(ofs) >= file.size()) return -1;
        size_t i = size_t(ofs);
        const size_t end = std::min(file.size(), size_t(ofs) + size_t(len));
        while (i < end && (file[i] == ' ' || file[i] == '\n' || file[i] == '\r' || file[i] == '\t')) ++i;
        return i < end ? file[i] : -1;
    };
    const int32_t len0 = load<int32_t>(file.data() + 8);
    return text_start(0) != '{' && text_start(1) == '{' && len0 > 0 && len0 % 20 == 0;
}

}  // namespace

Detection detect(ByteSpan file, std::string_view name) {
    if (file.empty()) throw Error({std::string(name), "", -1}, "empty file (0 bytes)");
    if (file.size() < 4)
        throw Error({std::string(name), "header", int64_t(file.size())},
                    "file is " + std::to_string(file.size()) + " bytes, too short for a BSP header");
    const uint32_t magic = load<uint32_t>(file.data());
    auto version_after_magic = [&]() -> int32_t {
        if (file.size() < 8) throw Error({std::string(name), "header", 4}, "file ends inside the header");
        return load<int32_t>(file.data() + 4);
    };
    Detection d;
    if (magic == fourcc("VBSP")) return detect_source(file, name, ByteOrder::little);
    if (magic == fourcc("PSBV")) return detect_source(file, name, ByteOrder::big);
    if (magic == fourcc("IBSP")) {
        const int32_t version = version_after_magic();
        d.version = version;
        d.layout = &layouts::quake3();
        if (version == 38) {
            d.layout = &layouts::quake2();
            d.rule = "IBSP magic, version 38";
        } else if (version == 46) {
            d.rule = "IBSP magic, version 46";
        } else if (version == 47) {
            d.rule = "IBSP magic, version 47 (Return to Castle Wolfenstein): Quake 3 lumps";
        } else {
            refuse(name, named("IBSP", version, ibsp_variant_name(version)));
        }
        return d;
    }
    if (magic == fourcc("BSP2") || magic == fourcc("2PSB")) {
        d.layout = magic == fourcc("BSP2") ? &layouts::bsp2() : &layouts::bsp2_2psb();
        d.rule = std::string(d.layout->variant) + " magic";
        return d;
    }
    if (magic == fourcc("QBSP")) refuse(name, named("QBSP", version_after_magic(), "ericw-tools extended Quake 2"));
    if (magic == fourcc("rBSP")) {
        int32_t v = version_after_magic();
        if (v > 0xffff) v &= 0xffff;  // Apex stores flags in the high half
        refuse(name, named("rBSP", v, rbsp_respawn_name(v)));
    }
    if (magic == fourcc("RBSP"))
        refuse(name, named("RBSP", version_after_magic(), "Raven: Soldier of Fortune II, Jedi Knight"));
    if (magic == fourcc("FBSP")) refuse(name, named("FBSP", version_after_magic(), "QFusion / Warsow"));
    if (magic == fourcc("FAKK")) refuse(name, named("FAKK", version_after_magic(), "Heavy Metal: F.A.K.K. 2"));
    if (magic == fourcc("EF2!")) refuse(name, named("EF2!", version_after_magic(), "Star Trek: Elite Force II"));

    const int32_t version = int32_t(magic);
    d.version = version;
    auto need_header = [&](const FormatLayout& layout) {
        if (file.size() < layout.header_size())
            throw Error({std::string(name), "header", int64_t(file.size())},
                        "file is " + std::to_string(file.size()) + " bytes, the " + std::string(layout.description) +
                            " header needs " + std::to_string(layout.header_size()));
    };
    switch (version) {
        case 29: {
            need_header(layouts::quake1());
            const quake1::ContentVerdict verdict = quake1::classify_v29(file);
            d.layout = verdict.goldsrc ? &layouts::goldsrc() : &layouts::quake1();
            d.rule = "version 29; " + verdict.rule;
            return d;
        }
        case 30:
            need_header(layouts::goldsrc());
            if (looks_like_blue_shift(file)) {
                d.layout = &layouts::goldsrc_bshift();
                d.rule = "version 30; lump 1 holds the entity text and lump 0 20-byte planes: Blue Shift lump order";
            } else {
                d.layout = &layouts::goldsrc();
                d.rule = "version 30 (only GoldSrc writes it)";
            }
            return d;
        case 42:
            need_header(layouts::nightfire());
            d.layout = &layouts::nightfire();
            d.rule = "version 42";
            return d;
        case 43: refuse(name, "BSP version 43 (Afterburner, Nightfire derivative)");
        default: break;
    }
    throw Error({std::string(name), "header", 0},
                "not a BSP file this tool knows: header bytes " + hex_magic(file));
}

}  // namespace bspkit
