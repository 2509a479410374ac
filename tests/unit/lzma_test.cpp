#include <bspkit/lzma.hpp>

#include <gtest/gtest.h>
#include <lzma.h>

#include <random>

using namespace bspkit;

namespace {

Bytes sample_data(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    Bytes out(n);
    // Compressible: runs of a small alphabet.
    for (size_t i = 0; i < n; ++i) out[i] = uint8_t("bspkit lump "[rng() % 12]);
    return out;
}

// A Source LZMA lump whose stream carries an end marker (as .lzma tools write),
// built from liblzma's .lzma ("alone") encoder output.
Bytes with_end_marker(ByteSpan data) {
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_options_lzma opt{};
    lzma_lzma_preset(&opt, 6);
    EXPECT_EQ(lzma_alone_encoder(&s, &opt), LZMA_OK);
    Bytes alone(data.size() + 1024);
    s.next_in = data.data();
    s.avail_in = data.size();
    s.next_out = alone.data();
    s.avail_out = alone.size();
    EXPECT_EQ(lzma_code(&s, LZMA_FINISH), LZMA_STREAM_END);
    alone.resize(s.total_out);
    lzma_end(&s);
    // .lzma header: 5 bytes props, 8 bytes size (unknown = all ones), then the stream.
    Bytes out(lzma::header_size);
    store<uint32_t>(out.data(), lzma::magic);
    store<uint32_t>(out.data() + 4, uint32_t(data.size()));
    store<uint32_t>(out.data() + 8, uint32_t(alone.size() - 13));
    std::copy_n(alone.begin(), 5, out.begin() + 12);
    out.insert(out.end(), alone.begin() + 13, alone.end());
    return out;
}

}  // namespace

TEST(Lzma, RoundTripWithoutEndMarker) {
    for (size_t n : {1u, 17u, 4096u, 300000u}) {
        const Bytes data = sample_data(n, unsigned(n));
        const Bytes packed = lzma::encode(data);
        const auto header = lzma::read_header(packed);
        ASSERT_TRUE(header);
        EXPECT_EQ(header->actual_size, n);
        EXPECT_EQ(header->lzma_size + lzma::header_size, packed.size());
        std::string error;
        uint64_t at = 0;
        const auto back = lzma::decode(packed, error, at);
        ASSERT_TRUE(back) << error;
        EXPECT_EQ(*back, data);
    }
}

TEST(Lzma, DecodesStreamsWithEndMarker) {
    const Bytes data = sample_data(100000, 7);
    const Bytes packed = with_end_marker(data);
    std::string error;
    uint64_t at = 0;
    const auto back = lzma::decode(packed, error, at);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(*back, data);
}

TEST(Lzma, TruncatedStreamIsAnErrorWithOffset) {
    const Bytes data = sample_data(50000, 3);
    Bytes packed = lzma::encode(data);
    packed.resize(packed.size() / 2);
    std::string error;
    uint64_t at = 0;
    EXPECT_FALSE(lzma::decode(packed, error, at));
    EXPECT_NE(error.find("compressed bytes"), std::string::npos) << error;
    // Header sizes consistent but stream cut short: decoding stops with a position.
    store<uint32_t>(packed.data() + 8, uint32_t(packed.size() - lzma::header_size));
    EXPECT_FALSE(lzma::decode(packed, error, at));
    EXPECT_GT(at, 0u);
    EXPECT_LE(at, packed.size());
}

TEST(Lzma, CorruptStreamsNeverSucceedSilently) {
    const Bytes data = sample_data(20000, 11);
    const Bytes packed = lzma::encode(data);
    std::mt19937 rng(5);
    int failures = 0;
    for (int i = 0; i < 200; ++i) {
        Bytes copy = packed;
        const size_t pos = lzma::header_size + rng() % (copy.size() - lzma::header_size);
        copy[pos] ^= uint8_t(1u << (rng() % 8));
        std::string error;
        uint64_t at = 0;
        const auto out = lzma::decode(copy, error, at);
        if (!out) {
            ++failures;
            EXPECT_FALSE(error.empty());
        } else {
            EXPECT_EQ(out->size(), data.size());  // a flip may still decode, but to the stated size
        }
    }
    EXPECT_GT(failures, 0);
}

TEST(Lzma, AbsurdSizeClaimIsRefusedBeforeAllocating) {
    Bytes packed = lzma::encode(sample_data(1000, 1));
    store<uint32_t>(packed.data() + 4, 0xF0000000u);  // claims 3.75 GiB
    std::string error;
    uint64_t at = 0;
    EXPECT_FALSE(lzma::decode(packed, error, at));
    EXPECT_EQ(at, 4u);
}

TEST(Lzma, HeaderNeedsMagicAndSeventeenBytes) {
    Bytes packed = lzma::encode(sample_data(100, 2));
    EXPECT_TRUE(lzma::read_header(packed));
    EXPECT_FALSE(lzma::read_header(ByteSpan(packed).first(16)));
    packed[0] = 'X';
    EXPECT_FALSE(lzma::read_header(packed));
}
