// The BSPX directory after the last lump (see include/bspkit/bspx.hpp): found
// where ericw-tools writes it and FTE / QuakeSpasm-Spiked look for it (the end
// of the furthest lump, rounded up to 4), bounds-checked like the lump table.
#include <bspkit/bspx.hpp>

#include <algorithm>

namespace bspkit::bspx {

bool applies_to(Format format) noexcept {
    return format == Format::quake1 || format == Format::bsp2 || format == Format::goldsrc || format == Format::quake2;
}

std::string lump_name(std::string_view name) { return "bspx:" + std::string(name); }

const Lump* Directory::find(std::string_view name) const noexcept {
    for (const Lump& l : lumps)
        if (l.name == name) return &l;
    return nullptr;
}

size_t BrushList::brush_count() const noexcept {
    size_t n = 0;
    for (const BrushListModel& m : models) n += m.brushes.size();
    return n;
}

namespace {

struct Span {
    int64_t begin, end;
    std::string what;
};

}  // namespace

Directory read(ByteSpan file, std::span<const LumpEntry> entries, std::span<const std::string_view> entry_names,
               uint64_t header_size) {
    Directory dir;
    // A hostile directory of millions of entries gives a bounded report.
    constexpr size_t kMaxDiagnostics = 64;
    size_t suppressed = 0;
    auto warn = [&](std::string lump, int64_t offset, std::string message) {
        if (dir.diagnostics.size() >= kMaxDiagnostics) {
            ++suppressed;
            return;
        }
        dir.diagnostics.push_back({Severity::warning, std::move(lump), offset, std::move(message)});
    };
    uint64_t end = header_size;
    for (const LumpEntry& e : entries)
        if (e.offset >= 0 && e.length > 0) end = std::max<uint64_t>(end, uint64_t(e.offset) + uint64_t(e.length));
    end = (end + 3) & ~uint64_t(3);
    if (end >= file.size()) return dir;
    const uint64_t tail = file.size() - end;
    const auto* at = file.data() + end;
    if (tail < 8) {
        // A few bytes of padding are common; a cut "BSPX" header is not.
        if (tail >= 1 && std::equal(at, at + std::min<uint64_t>(tail, 4), "BSPX"))
            warn("bspx", int64_t(end),
                 "BSPX header cut short: " + std::to_string(tail) + " of its 8 bytes are in the file");
        return dir;
    }
    if (!std::equal(at, at + 4, "BSPX")) return dir;  // trailing data of another kind
    dir.offset = int64_t(end);
    dir.count = load<int32_t>(at + 4);
    if (dir.count < 0) {
        warn("bspx", dir.offset + 4, "numlumps " + std::to_string(dir.count) + " is negative");
        return dir;
    }
    const uint64_t dir_bytes = 8 + uint64_t(dir.count) * sizeof(bspx_lump_t);
    uint64_t whole = uint64_t(dir.count);
    if (dir_bytes > tail) {
        whole = (tail - 8) / sizeof(bspx_lump_t);
        warn("bspx", dir.offset,
             "directory of " + std::to_string(dir.count) + " lumps needs " + std::to_string(dir_bytes) +
                 " bytes, the file has " + std::to_string(tail) + " after the last lump; reading the " +
                 std::to_string(whole) + " whole entries");
    }
    const int64_t dir_end = dir.offset + int64_t(8 + whole * sizeof(bspx_lump_t));
    // Everything a BSPX lump must not overlap: the header, the lumps, the directory.
    std::vector<Span> taken;
    taken.push_back({0, int64_t(header_size), "the header"});
    for (size_t i = 0; i < entries.size(); ++i)
        if (entries[i].length > 0)
            taken.push_back({entries[i].offset, int64_t(entries[i].offset) + entries[i].length,
                             "lump " + std::string(i < entry_names.size() ? entry_names[i] : "?")});
    taken.push_back({dir.offset, dir_end, "the BSPX directory"});
    constexpr uint64_t kPairwiseLimit = 4096;  // BSPX lumps checked against each other up to this many
    for (uint64_t k = 0; k < whole; ++k) {
        const uint8_t* p = at + 8 + k * sizeof(bspx_lump_t);
        Lump l;
        const auto* name_end = std::find(p, p + 24, uint8_t(0));
        l.name.assign(reinterpret_cast<const char*>(p), size_t(name_end - p));
        l.entry_offset = dir.offset + 8 + int64_t(k * sizeof(bspx_lump_t));
        l.offset = load<int32_t>(p + 24);
        l.length = load<int32_t>(p + 28);
        const std::string lname = lump_name(l.name);
        if (name_end == p + 24) warn(lname, l.entry_offset, "name is not NUL-terminated within its 24 bytes");
        if (l.offset < 0 || l.length < 0) {
            warn(lname, l.entry_offset,
                 "negative " + std::string(l.offset < 0 ? "offset " + std::to_string(l.offset)
                                                         : "length " + std::to_string(l.length)) +
                     ": lump ignored");
            continue;
        }
        const uint64_t lump_end = uint64_t(l.offset) + uint64_t(l.length);
        uint64_t present = uint64_t(l.length);
        if (lump_end > file.size()) {
            present = uint64_t(l.offset) < file.size() ? file.size() - uint64_t(l.offset) : 0;
            warn(lname, l.offset,
                 "runs " + std::to_string(lump_end - file.size()) + " bytes past the end of the file (" +
                     std::to_string(file.size()) + " bytes); reading the " + std::to_string(present) +
                     " bytes present");
        }
        if (l.length > 0) {
            if (l.offset % 4 != 0) warn(lname, l.offset, "offset is not 4-byte aligned");
            for (const Span& s : taken)
                if (l.offset < s.end && int64_t(lump_end) > s.begin) {
                    warn(lname, l.offset,
                         "overlaps " + s.what + " (bytes " + std::to_string(s.begin) + " to " + std::to_string(s.end) +
                             ")");
                    break;
                }
            if (whole <= kPairwiseLimit) taken.push_back({l.offset, int64_t(lump_end), "lump " + lname});
        }
        l.data = file.subspan(std::min<size_t>(size_t(l.offset), file.size()), size_t(present));
        dir.lumps.push_back(std::move(l));
    }
    if (suppressed)
        dir.diagnostics.push_back({Severity::warning, "bspx", dir.offset,
                                   std::to_string(suppressed) + " more BSPX directory findings not listed"});
    return dir;
}

Directory read(const Bsp& bsp) {
    if (!applies_to(bsp.format())) return {};
    std::vector<LumpEntry> entries;
    std::vector<std::string_view> names;
    for (size_t i = 0; i < bsp.lump_count(); ++i) {
        entries.push_back(bsp.entry(i));
        names.push_back(bsp.lump_name(i));
    }
    return read(bsp.file_bytes(), entries, names, bsp.layout().header_size());
}

}  // namespace bspkit::bspx
