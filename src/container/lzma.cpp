// Source LZMA lumps through liblzma's raw LZMA1EXT filter, which accepts a
// known uncompressed size and streams with or without an end marker.
#include <bspkit/lzma.hpp>

#include <lzma.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace bspkit::lzma {

std::optional<Header> read_header(ByteSpan data) noexcept {
    if (data.size() < header_size || load<uint32_t>(data.data()) != magic) return std::nullopt;
    Header h;
    h.actual_size = load<uint32_t>(data.data() + 4);
    h.lzma_size = load<uint32_t>(data.data() + 8);
    std::memcpy(h.properties, data.data() + 12, 5);
    return h;
}

namespace {

struct StreamGuard {
    lzma_stream stream = LZMA_STREAM_INIT;
    ~StreamGuard() { lzma_end(&stream); }
};

bool decode_properties(const uint8_t props[5], lzma_options_lzma& options) {
    // lc/lp/pb byte then a little-endian dictionary size.
    const unsigned pb_lp_lc = props[0];
    if (pb_lp_lc >= 9 * 5 * 5) return false;
    options.lc = pb_lp_lc % 9;
    options.lp = (pb_lp_lc / 9) % 5;
    options.pb = pb_lp_lc / 45;
    if (options.lc + options.lp > LZMA_LCLP_MAX) return false;
    options.dict_size = load<uint32_t>(props + 1);
    if (options.dict_size < LZMA_DICT_SIZE_MIN) options.dict_size = LZMA_DICT_SIZE_MIN;
    options.preset_dict = nullptr;
    options.preset_dict_size = 0;
    return true;
}

}  // namespace

std::optional<Bytes> decode(ByteSpan data, std::string& error, uint64_t& error_offset) {
    error_offset = 0;
    const auto header = read_header(data);
    if (!header) {
        error = "not an LZMA lump (no 17-byte 'LZMA' header)";
        return std::nullopt;
    }
    if (uint64_t(header->lzma_size) + header_size > data.size()) {
        error = "LZMA header says " + std::to_string(header->lzma_size) + " compressed bytes but only " +
                std::to_string(data.size() - header_size) + " follow";
        error_offset = 8;
        return std::nullopt;
    }
    lzma_options_lzma options{};
    if (!decode_properties(header->properties, options)) {
        error = "invalid LZMA properties";
        error_offset = 12;
        return std::nullopt;
    }
    // The dictionary never needs to exceed the output; console lumps declare
    // large dictionaries that would otherwise be allocated per lump.
    options.dict_size = std::max<uint32_t>(LZMA_DICT_SIZE_MIN, std::min(options.dict_size, header->actual_size));
    lzma_set_ext_size(options, header->actual_size);
    options.ext_flags = LZMA_LZMA1EXT_ALLOW_EOPM;
    const lzma_filter filters[] = {{LZMA_FILTER_LZMA1EXT, &options}, {LZMA_VLI_UNKNOWN, nullptr}};

    StreamGuard guard;
    if (lzma_raw_decoder(&guard.stream, filters) != LZMA_OK) {
        error = "cannot initialise the LZMA decoder (dictionary too large?)";
        error_offset = 12;
        return std::nullopt;
    }
    // actual_size is at most 4 GiB - 1; the compressed size bounds any real
    // ratio, so refuse absurd claims before allocating.
    const uint64_t max_ratio_size = uint64_t(header->lzma_size) * 1100 + 65536;
    if (header->actual_size > max_ratio_size) {
        error = "LZMA header claims " + std::to_string(header->actual_size) + " bytes from " +
                std::to_string(header->lzma_size) + " compressed bytes";
        error_offset = 4;
        return std::nullopt;
    }
    Bytes out(header->actual_size);
    guard.stream.next_in = data.data() + header_size;
    guard.stream.avail_in = header->lzma_size;
    guard.stream.next_out = out.data();
    guard.stream.avail_out = out.size();
    lzma_ret ret = lzma_code(&guard.stream, LZMA_RUN);
    if (ret == LZMA_OK) ret = lzma_code(&guard.stream, LZMA_FINISH);
    const size_t produced = out.size() - guard.stream.avail_out;
    if (ret != LZMA_STREAM_END || produced != out.size()) {
        error_offset = header_size + (header->lzma_size - guard.stream.avail_in);
        if (ret == LZMA_STREAM_END || ret == LZMA_OK || ret == LZMA_BUF_ERROR)
            error = "LZMA stream ends after " + std::to_string(produced) + " of " +
                    std::to_string(out.size()) + " bytes";
        else
            error = "corrupt LZMA data";
        return std::nullopt;
    }
    return out;
}

Bytes encode(ByteSpan data) {
    lzma_options_lzma options{};
    lzma_lzma_preset(&options, 6);
    // Smallest power-of-two dictionary that holds the lump (the engine allocates it).
    uint32_t dict = LZMA_DICT_SIZE_MIN;
    while (dict < data.size() && dict < (1u << 24)) dict <<= 1;
    options.dict_size = dict;
    options.ext_flags = 0;  // no end marker: the size is in the header
    lzma_set_ext_size(options, data.size());
    const lzma_filter filters[] = {{LZMA_FILTER_LZMA1EXT, &options}, {LZMA_VLI_UNKNOWN, nullptr}};

    StreamGuard guard;
    if (lzma_raw_encoder(&guard.stream, filters) != LZMA_OK) throw std::runtime_error("cannot initialise LZMA encoder");
    Bytes out(header_size + data.size() + data.size() / 16 + 4096);
    guard.stream.next_in = data.data();
    guard.stream.avail_in = data.size();
    guard.stream.next_out = out.data() + header_size;
    guard.stream.avail_out = out.size() - header_size;
    lzma_ret ret;
    do {
        ret = lzma_code(&guard.stream, LZMA_FINISH);
        if (ret == LZMA_OK && guard.stream.avail_out == 0) {
            const size_t used = out.size();
            out.resize(used * 2);
            guard.stream.next_out = out.data() + used;
            guard.stream.avail_out = out.size() - used;
        }
    } while (ret == LZMA_OK);
    if (ret != LZMA_STREAM_END) throw std::runtime_error("LZMA encoding failed");
    const size_t compressed = guard.stream.total_out;
    out.resize(header_size + compressed);
    store<uint32_t>(out.data(), magic);
    store<uint32_t>(out.data() + 4, uint32_t(data.size()));
    store<uint32_t>(out.data() + 8, uint32_t(compressed));
    // The classic 5-byte LZMA1 properties: (pb * 5 + lp) * 9 + lc, then the dictionary size.
    out[12] = uint8_t((options.pb * 5 + options.lp) * 9 + options.lc);
    store<uint32_t>(out.data() + 13, options.dict_size);
    return out;
}

}  // namespace bspkit::lzma
