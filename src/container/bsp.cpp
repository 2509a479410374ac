// Reading: header, lump directory with its checks, LZMA lumps, game lumps.
#include "bsp_impl.hpp"

#include <bspkit/bspx.hpp>
#include <bspkit/file_io.hpp>

#include "core/parallel.hpp"

#include <algorithm>
#include <charconv>

namespace bspkit {

ByteSpan Blob::decoded(const Location& where) const {
    if (replacement) return *replacement;
    if (!lzma) return stored;
    cache->once.call([&] {
        std::string error;
        uint64_t at = 0;
        auto out = lzma::decode(stored, error, at);
        if (!out) throw Error({where.file, where.lump, where.offset + int64_t(at)}, error);
        cache->bytes = std::move(*out);
    });
    return cache->bytes;
}

std::string GameLump::name() const {
    std::string s(4, ' ');
    for (int i = 0; i < 4; ++i) {
        const char c = char((id >> (8 * (3 - i))) & 0xff);  // ids are big-endian-ish: 'sprp' = 0x73707270
        s[size_t(i)] = (c >= 32 && c < 127) ? c : '?';
    }
    return s;
}

Location Bsp::Impl::where(size_t lump, int64_t offset) const {
    std::string lump_name = lump < layout->lumps.size() ? std::string(layout->lumps[lump].name) : "header";
    return {name, std::move(lump_name), offset};
}

namespace {

void warn(Bsp::Impl& b, std::string lump, int64_t offset, std::string message, bool cut_short = false) {
    b.diagnostics.push_back({Severity::warning, std::move(lump), offset, std::move(message), cut_short});
}

LumpEntry read_entry(const Bsp::Impl& b, size_t index) {
    const uint8_t* e = b.file.data() + b.layout->directory_offset() + index * b.layout->entry_size();
    LumpEntry entry;
    switch (b.layout->directory) {
        case DirectoryLayout::offset_length:
            entry.offset = load<int32_t>(e, b.order);
            entry.length = load<int32_t>(e + 4, b.order);
            break;
        case DirectoryLayout::source:
            entry.offset = load<int32_t>(e, b.order);
            entry.length = load<int32_t>(e + 4, b.order);
            entry.version = load<int32_t>(e + 8, b.order);
            entry.fourcc = load<uint32_t>(e + 12, b.order);
            break;
        case DirectoryLayout::source_l4d2:
            entry.version = load<int32_t>(e, b.order);
            entry.offset = load<int32_t>(e + 4, b.order);
            entry.length = load<int32_t>(e + 8, b.order);
            entry.fourcc = load<uint32_t>(e + 12, b.order);
            break;
    }
    return entry;
}

void read_directory(Bsp::Impl& b) {
    const size_t count = b.layout->lumps.size();
    const uint64_t file_size = b.file.size();
    const uint32_t header_size = b.layout->header_size();
    b.entries.resize(count);
    b.lumps.resize(count);
    for (size_t i = 0; i < count; ++i) {
        const int64_t entry_at = int64_t(b.layout->directory_offset() + i * b.layout->entry_size());
        const LumpEntry e = b.entries[i] = read_entry(b, i);
        const std::string name(b.layout->lumps[i].name);
        if (e.offset < 0) throw Error(b.where(i, entry_at), "negative offset " + std::to_string(e.offset));
        if (e.length < 0) throw Error(b.where(i, e.offset), "negative length " + std::to_string(e.length));
        if (e.length == 0) continue;
        const uint64_t end = uint64_t(e.offset) + uint64_t(e.length);
        uint64_t present = e.length;
        if (end > file_size) {
            present = uint64_t(e.offset) < file_size ? file_size - uint64_t(e.offset) : 0;
            warn(b, name, e.offset,
                 "runs " + std::to_string(end - file_size) + " bytes past the end of the file (" +
                     std::to_string(file_size) + " bytes); reading the " + std::to_string(present) +
                     " bytes present",
                 true);
        }
        if (uint64_t(e.offset) < header_size)
            warn(b, name, e.offset, "starts inside the " + std::to_string(header_size) + "-byte header");
        if (e.offset % 4 != 0) warn(b, name, e.offset, "offset is not 4-byte aligned");
        b.lumps[i].stored = b.file.subspan(std::min<uint64_t>(uint64_t(e.offset), file_size), present);
    }
    // Overlaps between lumps that hold data.
    std::vector<size_t> order;
    for (size_t i = 0; i < count; ++i)
        if (b.entries[i].length > 0) order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
        return std::pair(b.entries[x].offset, x) < std::pair(b.entries[y].offset, y);
    });
    size_t reach_lump = SIZE_MAX;
    int64_t reach = 0;
    for (size_t i : order) {
        const LumpEntry& e = b.entries[i];
        if (reach_lump != SIZE_MAX && e.offset < reach) {
            const LumpEntry& o = b.entries[reach_lump];
            warn(b, std::string(b.layout->lumps[i].name), e.offset,
                 "overlaps lump " + std::string(b.layout->lumps[reach_lump].name) + " (bytes " +
                     std::to_string(o.offset) + " to " + std::to_string(int64_t(o.offset) + o.length) + ")");
        }
        if (int64_t(e.offset) + e.length > reach) {
            reach = int64_t(e.offset) + e.length;
            reach_lump = i;
        }
    }
}

void read_compression(Bsp::Impl& b) {
    if (!b.is_source()) return;
    for (size_t i = 0; i < b.lumps.size(); ++i) {
        Blob& blob = b.lumps[i];
        blob.lzma = lzma::read_header(blob.stored);
        if (!blob.lzma) continue;
        const LumpEntry& e = b.entries[i];
        const std::string name(b.layout->lumps[i].name);
        if (uint64_t(blob.lzma->lzma_size) + lzma::header_size > blob.stored.size())
            warn(b, name, e.offset + 8,
                 "LZMA header says " + std::to_string(blob.lzma->lzma_size) + " compressed bytes, the lump holds " +
                     std::to_string(blob.stored.size() - lzma::header_size));
        if (e.fourcc != 0 && e.fourcc != blob.lzma->actual_size)
            warn(b, name, e.offset,
                 "fourCC gives uncompressed size " + std::to_string(e.fourcc) + ", the LZMA header " +
                     std::to_string(blob.lzma->actual_size));
    }
}

void check_record_sizes(Bsp::Impl& b, const Bsp& bsp) {
    for (size_t i = 0; i < b.lumps.size(); ++i) {
        const uint32_t size = bsp.record_size(i);
        const size_t length = b.lumps[i].decoded_length();
        if (size == 0 || length % size == 0) continue;
        warn(b, std::string(b.layout->lumps[i].name), b.entries[i].offset,
             "length " + std::to_string(length) + " is not a multiple of the " + std::to_string(size) +
                 "-byte record");
    }
}

}  // namespace

void Bsp::Impl::parse_game_lumps(ByteSpan data, int64_t base) {
    game_lumps.clear();
    game_lump_entries.clear();
    game_lumps_terminated = false;
    game_lumps_relative = false;
    const std::string lump_name(layout->lumps[source_lump::game_lump].name);
    if (data.empty()) return;
    if (data.size() < 4) throw Error(where(source_lump::game_lump, base), "game lump directory needs 4 bytes");
    const int32_t count = load<int32_t>(data.data(), order);
    if (count < 0 || uint64_t(count) * 16 + 4 > data.size())
        throw Error(where(source_lump::game_lump, base),
                    "game lump count " + std::to_string(count) + " needs " + std::to_string(int64_t(count) * 16 + 4) +
                        " bytes, the lump holds " + std::to_string(data.size()));
    std::vector<GameLump> entries(static_cast<size_t>(count));
    for (int32_t k = 0; k < count; ++k) {
        const uint8_t* e = data.data() + 4 + size_t(k) * 16;
        GameLump& g = entries[size_t(k)];
        g.id = load<uint32_t>(e, order);
        g.flags = load<uint16_t>(e + 4, order);
        g.version = load<uint16_t>(e + 6, order);
        g.offset = load<int32_t>(e + 8, order);
        g.length = load<int32_t>(e + 12, order);
    }
    // A compressed game lump's filelen is its uncompressed size; its stored
    // bytes run to the next entry's offset (hence the empty closing entry).
    auto stored_length = [&](size_t k) -> int64_t {
        const GameLump& g = entries[k];
        if (!g.compressed() || g.length == 0) return g.length;
        if (k + 1 < entries.size()) return int64_t(entries[k + 1].offset) - g.offset;
        return -1;  // to the end of the lump
    };
    // Offsets are absolute, except on consoles (Portal 2, the Xbox 360 Orange
    // Box) where they are relative to the lump: take whichever fits.
    auto fits = [&](int64_t shift) {
        for (size_t k = 0; k < entries.size(); ++k) {
            const int64_t rel = int64_t(entries[k].offset) - shift;
            const int64_t len = stored_length(k);
            if (entries[k].length <= 0) continue;
            if (rel < 0 || rel > int64_t(data.size()) || (len >= 0 && rel + len > int64_t(data.size()))) return false;
        }
        return true;
    };
    if (!fits(base) && fits(0)) game_lumps_relative = true;
    const int64_t shift = game_lumps_relative ? 0 : base;
    std::vector<int64_t> lengths(entries.size());
    for (size_t k = 0; k < entries.size(); ++k) {
        lengths[k] = stored_length(k);
        if (lengths[k] < 0) lengths[k] = std::max<int64_t>(0, int64_t(data.size()) - (int64_t(entries[k].offset) - shift));
    }
    if (!entries.empty() && entries.back().id == 0 && entries.back().length == 0) {
        game_lumps_terminated = true;
        entries.pop_back();
    }
    for (size_t k = 0; k < entries.size(); ++k) {
        const GameLump& g = entries[k];
        GameLumpState state{g, {}};
        const int64_t rel = int64_t(g.offset) - shift;
        const int64_t file_offset = base + rel;
        const int64_t length = lengths[k];
        if (g.length < 0 || length < 0)
            throw Error(where(source_lump::game_lump, base + 4 + int64_t(k) * 16),
                        "game lump " + g.name() + " has negative length " + std::to_string(std::min<int64_t>(g.length, length)));
        if (length > 0) {
            if (rel < 0 || rel + length > int64_t(data.size())) {
                const int64_t start = std::clamp<int64_t>(rel, 0, int64_t(data.size()));
                const int64_t end = std::clamp<int64_t>(rel + length, start, int64_t(data.size()));
                diagnostics.push_back({Severity::warning, lump_name, file_offset,
                                       "game lump " + g.name() + " (" + std::to_string(length) +
                                           " bytes) does not lie inside the game lump; reading the " +
                                           std::to_string(end - start) + " bytes inside"});
                state.blob.stored = data.subspan(size_t(start), size_t(end - start));
            } else {
                state.blob.stored = data.subspan(size_t(rel), size_t(length));
            }
        }
        if (g.compressed()) {
            state.blob.lzma = lzma::read_header(state.blob.stored);
            if (!state.blob.lzma && g.length > 0)
                diagnostics.push_back({Severity::warning, lump_name, file_offset,
                                       "game lump " + g.name() + " is flagged compressed but has no LZMA header"});
        }
        game_lump_entries.push_back(g);
        game_lumps.push_back(std::move(state));
    }
}

Bsp Bsp::open(const std::filesystem::path& path) {
    FileView view = map_file(path);
    std::string name = path.string();
    Detection detection = detect(view.bytes, name);
    Bsp bsp = Impl::from_detected(view.bytes, std::move(view.owner), std::move(name), std::move(detection));
    bsp.impl_->origin = std::move(view.origin);
    return bsp;
}

Bsp Bsp::parse(Bytes file_bytes, std::string name) {
    Detection detection = detect(file_bytes, name);
    return from_detected(std::move(file_bytes), std::move(name), std::move(detection));
}

Bsp Bsp::from_detected(Bytes file_bytes, std::string name, Detection detection) {
    FileView view = own_bytes(std::move(file_bytes));
    return Impl::from_detected(view.bytes, std::move(view.owner), std::move(name), std::move(detection));
}

Bsp Bsp::create(const FormatLayout& layout, std::optional<int32_t> version, ByteOrder order) {
    Bytes header(layout.header_size(), 0);
    size_t at = 0;
    if (layout.magic) {
        store<uint32_t>(header.data(), order == ByteOrder::big ? byteswap(layout.magic) : layout.magic);
        at = 4;
    }
    if (layout.has_version) store<int32_t>(header.data() + at, version.value_or(0), order);
    Detection detection{&layout, layout.has_version ? version : std::nullopt, "created empty"};
    return from_detected(std::move(header), "new " + std::string(format_id(layout.format)) + " map", std::move(detection));
}

Bsp Bsp::Impl::from_detected(ByteSpan file, std::shared_ptr<const void> owner, std::string name, Detection detection) {
    auto impl = std::make_unique<Impl>();
    Impl& b = *impl;
    b.name = std::move(name);
    b.file = file;
    b.file_owner = std::move(owner);
    b.detection = std::move(detection);
    b.layout = b.detection.layout;
    b.order = (b.layout->magic && load<uint32_t>(b.file.data()) == byteswap(b.layout->magic)) ? ByteOrder::big
                                                                                              : ByteOrder::little;
    if (b.file.size() < b.layout->header_size())
        throw Error({b.name, "header", int64_t(b.file.size())},
                    "file is " + std::to_string(b.file.size()) + " bytes, the header needs " +
                        std::to_string(b.layout->header_size()));
    if (b.layout->has_revision)
        b.revision = load<int32_t>(b.file.data() + b.layout->header_size() - 4, b.order);
    read_directory(b);
    read_compression(b);
    Bsp bsp(std::move(impl));
    Impl& i = *bsp.impl_;
    if (i.has_game_lumps()) {
        const size_t gl = source_lump::game_lump;
        const ByteSpan data = i.lumps[gl].decoded(i.where(gl, i.entries[gl].offset));
        i.parse_game_lumps(data, i.entries[gl].offset);
    }
    check_record_sizes(i, bsp);
    if (bspx::applies_to(i.layout->format)) {
        std::vector<std::string_view> names;
        for (const auto& l : i.layout->lumps) names.push_back(l.name);
        bspx::Directory dir = bspx::read(i.file, i.entries, names, i.layout->header_size());
        for (Diagnostic& d : dir.diagnostics) i.diagnostics.push_back(std::move(d));
    }
    return bsp;
}

Bsp::Bsp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bsp::Bsp(Bsp&&) noexcept = default;
Bsp& Bsp::operator=(Bsp&&) noexcept = default;
Bsp::~Bsp() = default;

const std::string& Bsp::file_name() const noexcept { return impl_->name; }
const FormatLayout& Bsp::layout() const noexcept { return *impl_->layout; }
std::optional<int32_t> Bsp::version() const noexcept { return impl_->detection.version; }
int32_t Bsp::revision() const noexcept { return impl_->revision; }
ByteOrder Bsp::byte_order() const noexcept { return impl_->order; }
const Detection& Bsp::detection() const noexcept { return impl_->detection; }
const std::vector<Diagnostic>& Bsp::diagnostics() const noexcept { return impl_->diagnostics; }
ByteSpan Bsp::file_bytes() const noexcept { return impl_->file; }
size_t Bsp::lump_count() const noexcept { return impl_->lumps.size(); }

static void check_index(const Bsp::Impl& b, size_t index) {
    if (index >= b.lumps.size())
        throw Error({b.name, "#" + std::to_string(index), -1},
                    "no such lump: this format has " + std::to_string(b.lumps.size()));
}

std::string_view Bsp::lump_name(size_t index) const {
    check_index(*impl_, index);
    return impl_->layout->lumps[index].name;
}

std::optional<size_t> Bsp::find_lump(std::string_view text) const {
    size_t index = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
    if (ec == std::errc() && end == text.data() + text.size())
        return index < lump_count() ? std::optional(index) : std::nullopt;
    std::string name(text);
    if (name.rfind("lump_", 0) == 0 || name.rfind("LUMP_", 0) == 0) name = name.substr(5);
    return impl_->layout->find_lump(name);
}

const LumpEntry& Bsp::entry(size_t index) const {
    check_index(*impl_, index);
    return impl_->entries[index];
}

ByteSpan Bsp::stored(size_t index) const {
    check_index(*impl_, index);
    return impl_->lumps[index].stored;
}

std::shared_ptr<const void> Bsp::file_owner() const noexcept { return impl_->file_owner; }

ByteSpan Bsp::decoded(size_t index) const {
    check_index(*impl_, index);
    const Impl& b = *impl_;
    if (b.has_game_lumps() && index == source_lump::game_lump && !b.lumps[index].replacement) {
        const bool rebuilt = b.game_lumps_edited || std::any_of(b.game_lumps.begin(), b.game_lumps.end(),
                                                                [](const GameLumpState& g) { return g.blob.compressed(); });
        if (rebuilt) {
            b.game_lump_cache->once.call([&] {
                b.game_lump_cache->bytes = b.build_game_lump(b.entries[index].offset, Compression::decompress);
            });
            return b.game_lump_cache->bytes;
        }
    }
    return b.lumps[index].decoded(b.where(index, b.entries[index].offset));
}

void Bsp::decode_ahead(std::span<const size_t> lumps, bool game_lumps, unsigned threads) const {
    const Impl& b = *impl_;
    struct Job {
        const Blob* blob;
        Location where;
    };
    std::vector<Job> jobs;
    for (size_t index : lumps)
        if (index < b.lumps.size() && b.lumps[index].compressed())
            jobs.push_back({&b.lumps[index], b.where(index, b.entries[index].offset)});
    if (game_lumps)
        for (const GameLumpState& g : b.game_lumps)
            if (g.blob.compressed()) jobs.push_back({&g.blob, b.where(source_lump::game_lump, -1)});
    // Largest first, so that no thread is left with a big lump at the end.
    std::sort(jobs.begin(), jobs.end(),
              [](const Job& x, const Job& y) { return x.blob->lzma->actual_size > y.blob->lzma->actual_size; });
    detail::parallel_for(jobs.size(), threads, [&](size_t i) {
        try {
            jobs[i].blob->decoded(jobs[i].where);
        } catch (...) {
            // Left undecoded: the decoded() call that needs this lump raises the error, with its own location.
        }
    });
}

size_t Bsp::decoded_length(size_t index) const {
    check_index(*impl_, index);
    if (impl_->has_game_lumps() && index == source_lump::game_lump) return decoded(index).size();
    return impl_->lumps[index].decoded_length();
}

bool Bsp::compressed(size_t index) const {
    check_index(*impl_, index);
    return impl_->lumps[index].compressed();
}

bool Bsp::replaced(size_t index) const {
    check_index(*impl_, index);
    return impl_->lumps[index].replacement.has_value();
}

uint32_t Bsp::record_size(size_t index) const {
    check_index(*impl_, index);
    return impl_->layout->record_size(index, impl_->map_version(), impl_->entries[index].version);
}

std::optional<size_t> Bsp::record_count(size_t index) const {
    const uint32_t size = record_size(index);
    if (size == 0) return std::nullopt;
    return impl_->lumps[index].decoded_length() / size;
}

const std::vector<GameLump>& Bsp::game_lumps() const noexcept { return impl_->game_lump_entries; }

ByteSpan Bsp::game_lump_stored(size_t k) const {
    if (k >= impl_->game_lumps.size()) throw Error(impl_->where(source_lump::game_lump, -1), "no game lump #" + std::to_string(k));
    return impl_->game_lumps[k].blob.stored;
}

ByteSpan Bsp::game_lump_decoded(size_t k) const {
    const Impl& b = *impl_;
    if (k >= b.game_lumps.size()) throw Error(b.where(source_lump::game_lump, -1), "no game lump #" + std::to_string(k));
    const GameLumpState& g = b.game_lumps[k];
    const int64_t at = g.blob.stored.empty() ? -1 : int64_t(g.blob.stored.data() - b.file.data());
    Location where = b.where(source_lump::game_lump, at);
    where.lump += " " + g.entry.name();
    return g.blob.decoded(where);
}

bool Bsp::game_lump_offsets_relative() const noexcept { return impl_->game_lumps_relative; }

void Bsp::replace(size_t index, Bytes decoded_bytes) {
    check_index(*impl_, index);
    Impl& b = *impl_;
    if (b.has_game_lumps() && index == source_lump::game_lump) {
        // Re-parse as a directory laid out where the lump was; keep the bytes alive.
        auto owner = std::make_shared<Bytes>(std::move(decoded_bytes));
        b.game_lump_storage.push_back(owner);
        b.parse_game_lumps(*owner, b.entries[index].offset);
        for (GameLumpState& g : b.game_lumps)
            if (!g.blob.lzma) g.blob.replacement = Bytes(g.blob.stored.begin(), g.blob.stored.end());
        b.game_lumps_edited = true;
        b.game_lump_cache = std::make_unique<Blob::Cache>();
        return;
    }
    b.lumps[index].replacement = std::move(decoded_bytes);
    b.lumps[index].cache = std::make_unique<Blob::Cache>();
}

void Bsp::replace_game_lump(size_t k, Bytes decoded_bytes) {
    Impl& b = *impl_;
    if (k >= b.game_lumps.size()) throw Error(b.where(source_lump::game_lump, -1), "no game lump #" + std::to_string(k));
    b.game_lumps[k].blob.replacement = std::move(decoded_bytes);
    b.game_lumps_edited = true;
    b.game_lump_cache = std::make_unique<Blob::Cache>();
}

void require_complete_lump(const Bsp& bsp, size_t index) {
    const uint64_t size = bsp.file_bytes().size();
    const LumpEntry& e = bsp.entry(index);
    const uint64_t end = uint64_t(e.offset) + uint64_t(e.length);
    if (e.length <= 0 || end <= size) return;
    throw Error({bsp.file_name(), std::string(bsp.lump_name(index)), e.offset},
                "truncated: runs " + std::to_string(end - size) + " bytes past the end of the file (" +
                    std::to_string(size) + " bytes); --salvage goes on with the " +
                    std::to_string(bsp.stored(index).size()) + " bytes present");
}

void require_complete_lumps(const Bsp& bsp) {
    const auto entities = bsp.layout().find_lump("entities");
    for (size_t i = 0; i < bsp.lump_count(); ++i)
        if (i != entities) require_complete_lump(bsp, i);
}

}  // namespace bspkit
