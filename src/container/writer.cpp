// Writing: an unchanged file is reproduced byte for byte (header rebuilt from
// the parsed directory, everything else copied); any change lays the lumps
// out again in their original order, 4-byte aligned.
#include "bsp_impl.hpp"

#include <bspkit/bspx.hpp>
#include <bspkit/file_io.hpp>

#include <algorithm>
#include <numeric>

namespace bspkit {
namespace {

void write_header(const Bsp::Impl& b, const std::vector<LumpEntry>& entries, uint8_t* out) {
    const FormatLayout& l = *b.layout;
    // Magic and version are copied from the input: they are what was detected.
    std::copy_n(b.file.data(), l.directory_offset(), out);  // the caller's buffer starts as the input's header
    for (size_t i = 0; i < entries.size(); ++i) {
        uint8_t* e = out + l.directory_offset() + i * l.entry_size();
        const LumpEntry& x = entries[i];
        switch (l.directory) {
            case DirectoryLayout::offset_length:
                store<int32_t>(e, x.offset, b.order);
                store<int32_t>(e + 4, x.length, b.order);
                break;
            case DirectoryLayout::source:
                store<int32_t>(e, x.offset, b.order);
                store<int32_t>(e + 4, x.length, b.order);
                store<int32_t>(e + 8, x.version, b.order);
                store<uint32_t>(e + 12, x.fourcc, b.order);
                break;
            case DirectoryLayout::source_l4d2:
                store<int32_t>(e, x.version, b.order);
                store<int32_t>(e + 4, x.offset, b.order);
                store<int32_t>(e + 8, x.length, b.order);
                store<uint32_t>(e + 12, x.fourcc, b.order);
                break;
        }
    }
    if (l.has_revision) store<int32_t>(out + l.header_size() - 4, b.revision, b.order);
}

bool unchanged(const Bsp::Impl& b) {
    return !b.game_lumps_edited &&
           std::none_of(b.lumps.begin(), b.lumps.end(), [](const Blob& x) { return x.replacement.has_value(); });
}

bool anything_compressed(const Bsp::Impl& b) {
    return std::any_of(b.lumps.begin(), b.lumps.end(), [](const Blob& x) { return x.compressed(); }) ||
           std::any_of(b.game_lumps.begin(), b.game_lumps.end(),
                       [](const GameLumpState& g) { return g.blob.compressed(); });
}

/// The BSPX lumps of the input carried after the laid-out lumps (ericw-tools'
/// placement: directory at the end rounded up to 4, each lump 4-byte aligned).
/// The BSPX tail (padding, directory, lumps) of a file whose other bytes end
/// at `base`; offsets in the directory are file offsets. Empty without BSPX.
Bytes bspx_tail(const Bsp::Impl& b, uint64_t base) {
    Bytes out;
    if (!bspx::applies_to(b.layout->format)) return out;
    std::vector<std::string_view> names;
    for (const auto& l : b.layout->lumps) names.push_back(l.name);
    const bspx::Directory dir = bspx::read(b.file, b.entries, names, b.layout->header_size());
    if (dir.lumps.empty()) return out;
    const auto pad_to_4 = [&] { out.resize(align4(base + out.size()) - base, 0); };
    pad_to_4();
    const size_t at = out.size();
    out.insert(out.end(), {'B', 'S', 'P', 'X'});
    append<int32_t>(out, int32_t(dir.lumps.size()), b.order);
    out.resize(out.size() + dir.lumps.size() * sizeof(bspx::bspx_lump_t), 0);
    for (size_t k = 0; k < dir.lumps.size(); ++k) {
        const bspx::Lump& l = dir.lumps[k];
        pad_to_4();
        uint8_t* e = out.data() + at + 8 + k * sizeof(bspx::bspx_lump_t);
        std::copy_n(l.name.begin(), std::min<size_t>(l.name.size(), 24), e);
        store<int32_t>(e + 24, int32_t(base + out.size()), b.order);
        store<int32_t>(e + 28, int32_t(l.data.size()), b.order);
        out.insert(out.end(), l.data.begin(), l.data.end());
        if (base + out.size() > uint64_t(INT32_MAX))
            throw Error({b.name, "bspx", int64_t(base + at)}, "the saved file would exceed 2 GiB");
    }
    return out;
}

}  // namespace

void Bsp::Impl::Pieces::add(ByteSpan s) {
    if (s.empty()) return;
    spans.push_back(s);
    size += s.size();
}

void Bsp::Impl::Pieces::zeros(uint64_t n) {
    static const uint8_t zero[64] = {};
    for (; n > 0; n -= std::min<uint64_t>(n, sizeof zero)) add(ByteSpan(zero, std::min<uint64_t>(n, sizeof zero)));
}

ByteSpan Bsp::Impl::payload(const Blob& blob, const Location& where, Compression compression, bool may_compress,
                            std::deque<Bytes>& keep) const {
    const bool was_compressed = blob.lzma.has_value();
    switch (compression) {
        case Compression::keep:
            if (!blob.replacement) return blob.stored;
            if (was_compressed && !blob.replacement->empty()) return keep.emplace_back(lzma::encode(*blob.replacement));
            return *blob.replacement;
        case Compression::decompress:
            return blob.decoded(where);
        case Compression::compress: {
            if (blob.compressed()) return blob.stored;
            const ByteSpan d = blob.decoded(where);
            if (may_compress && !d.empty()) {
                Bytes packed = lzma::encode(d);
                if (packed.size() < d.size()) return keep.emplace_back(std::move(packed));  // bspzip leaves lumps that would grow
            }
            return d;
        }
    }
    return {};
}

Bytes Bsp::Impl::build_game_lump(int64_t base, Compression compression) const {
    std::deque<Bytes> keep;
    std::vector<ByteSpan> payloads;
    std::vector<bool> packed;
    bool any_packed = false;
    for (const GameLumpState& g : game_lumps) {
        Location at = where(source_lump::game_lump, -1);
        at.lump += " " + g.entry.name();
        if (!g.blob.stored.empty()) at.offset = g.blob.stored.data() - file.data();
        payloads.push_back(payload(g.blob, at, compression, true, keep));
        packed.push_back(lzma::read_header(payloads.back()).has_value() &&
                         (g.blob.lzma.has_value() || compression == Compression::compress));
        any_packed = any_packed || packed.back();
    }
    const bool terminate = any_packed || (compression == Compression::keep && game_lumps_terminated);
    const size_t count = game_lumps.size() + (terminate ? 1 : 0);
    Bytes out;
    append<int32_t>(out, int32_t(count), order);
    const int64_t data_start = 4 + int64_t(count) * 16;
    const int64_t shift = game_lumps_relative ? 0 : base;
    int64_t cursor = data_start;
    for (size_t k = 0; k < game_lumps.size(); ++k) {
        const GameLump& g = game_lumps[k].entry;
        append<uint32_t>(out, g.id, order);
        append<uint16_t>(out, uint16_t((g.flags & ~1u) | (packed[k] ? 1u : 0u)), order);
        append<uint16_t>(out, g.version, order);
        append<int32_t>(out, int32_t(shift + cursor), order);
        // Compressed game lumps record their uncompressed size (as bspzip does).
        const auto header = packed[k] ? lzma::read_header(payloads[k]) : std::nullopt;
        append<int32_t>(out, int32_t(header ? header->actual_size : payloads[k].size()), order);
        cursor += int64_t(payloads[k].size());
    }
    if (terminate) {
        append<uint32_t>(out, 0, order);
        append<uint16_t>(out, 0, order);
        append<uint16_t>(out, 0, order);
        append<int32_t>(out, int32_t(shift + cursor), order);
        append<int32_t>(out, 0, order);
    }
    out.reserve(size_t(cursor));
    for (const ByteSpan p : payloads) out.insert(out.end(), p.begin(), p.end());
    return out;
}

Bsp::Impl::Pieces Bsp::Impl::lay_out(const SaveOptions& options) const {
    const Impl& b = *this;
    if (!b.is_source() && options.compression == Compression::compress)
        throw Error({b.name, "header", 0}, "LZMA-compressed lumps exist only in Source BSP files");
    const uint32_t header_size = b.layout->header_size();
    Pieces out;
    const bool nothing_to_decompress = options.compression == Compression::decompress && !anything_compressed(b);
    if (unchanged(b) && (options.compression == Compression::keep || nothing_to_decompress || !b.is_source())) {
        // The header rebuilt from the directory, then everything else as it is in the input.
        Bytes& header = out.owned.emplace_back(b.file.begin(), b.file.begin() + header_size);
        write_header(b, b.entries, header.data());
        out.add(header);
        out.add(b.file.subspan(header_size));
        return out;
    }

    const size_t count = b.lumps.size();
    std::vector<size_t> order(count);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return b.entries[x].offset < b.entries[y].offset; });

    std::vector<ByteSpan> payloads(count);
    std::vector<LumpEntry> entries = b.entries;
    const bool game = b.has_game_lumps();
    for (size_t i = 0; i < count; ++i) {
        if (game && i == source_lump::game_lump) continue;  // built once its offset is known
        const bool may_compress = b.is_source() && i != source_lump::pakfile && i != source_lump::xzip_pakfile;
        payloads[i] = b.payload(b.lumps[i], b.where(i, b.entries[i].offset), options.compression, may_compress, out.owned);
    }
    const size_t game_size = game ? b.build_game_lump(0, options.compression).size() : 0;

    uint64_t cursor = align4(header_size);
    for (size_t i : order) {
        const size_t size = (game && i == source_lump::game_lump) ? game_size : payloads[i].size();
        LumpEntry& e = entries[i];
        const bool unused = b.entries[i].offset == 0 && b.entries[i].length == 0;
        e.offset = (size == 0 && unused) ? 0 : int32_t(cursor);
        e.length = int32_t(size);
        if (b.is_source()) {
            const auto header = lzma::read_header(game && i == source_lump::game_lump ? ByteSpan{} : payloads[i]);
            const bool packed = header && (b.lumps[i].lzma || options.compression == Compression::compress);
            e.fourcc = packed ? header->actual_size : (b.lumps[i].lzma ? 0 : b.entries[i].fourcc);
        }
        cursor = align4(cursor + size);
        if (cursor > uint64_t(INT32_MAX)) throw Error({b.name, "header", 0}, "the saved file would exceed 2 GiB");
    }
    if (game)
        payloads[source_lump::game_lump] =
            out.owned.emplace_back(b.build_game_lump(entries[source_lump::game_lump].offset, options.compression));

    Bytes& header = out.owned.emplace_back(header_size, 0);
    write_header(b, entries, header.data());
    out.add(header);
    // Lumps in file order, each preceded by the padding that aligns it; the
    // last lump is not padded: the file ends where its data ends.
    for (size_t i : order) {
        if (payloads[i].empty()) continue;
        out.zeros(uint64_t(entries[i].offset) - out.size);
        out.add(payloads[i]);
    }
    // ericw-tools' BSPX lumps follow the last lump, as they did in the input.
    if (Bytes tail = bspx_tail(b, out.size); !tail.empty()) out.add(out.owned.emplace_back(std::move(tail)));
    return out;
}

Bytes Bsp::serialize(const SaveOptions& options) const {
    const Impl::Pieces pieces = impl_->lay_out(options);
    Bytes out;
    out.reserve(pieces.size);
    for (const ByteSpan s : pieces.spans) out.insert(out.end(), s.begin(), s.end());
    return out;
}

void Bsp::save(const std::filesystem::path& path, const SaveOptions& options) const {
    const Impl::Pieces pieces = impl_->lay_out(options);
    write_file_atomic(path, pieces.spans, impl_->origin ? &*impl_->origin : nullptr);
}

}  // namespace bspkit
