// Typed records: one plain struct per on-disk record, named as in the specs,
// with its size checked at compile time, decoded on first access, and
// big-endian (console) files decoded into the same structs.
//
// Every record struct carries a layout string that describes its scalars in
// order, used to byte-swap big-endian data and checked against sizeof:
//   'b' 1 byte, 'h' 2 bytes, 'i' 4-byte integer, 'f' 4-byte float, 'q' 8 bytes;
//   a decimal count repeats the next code: "3f" = three floats, "64b" = char[64].
//
//   struct dplane_t {
//       float normal[3]; float dist; int32_t type;
//       static constexpr std::string_view kLayout = "3ffi";
//   };
//   BSPKIT_RECORD(dplane_t, 20);
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/bytes.hpp>
#include <bspkit/once.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bspkit {

/// Size in bytes described by a layout string (0 when the string is malformed).
constexpr size_t layout_size(std::string_view layout) {
    size_t total = 0, repeat = 0;
    for (char c : layout) {
        if (c >= '0' && c <= '9') {
            repeat = repeat * 10 + size_t(c - '0');
            continue;
        }
        size_t size = 0;
        switch (c) {
            case 'b': size = 1; break;
            case 'h': size = 2; break;
            case 'i': case 'f': size = 4; break;
            case 'q': size = 8; break;
            default: return 0;
        }
        total += size * (repeat ? repeat : 1);
        repeat = 0;
    }
    return total;
}

/// Swaps every scalar of one record in place according to `layout`.
void swap_record(uint8_t* record, std::string_view layout) noexcept;

template <class T>
concept Record = std::is_trivially_copyable_v<T> && std::is_standard_layout_v<T> && requires {
    { T::kLayout } -> std::convertible_to<std::string_view>;
};

#define BSPKIT_RECORD(T, bytes)                                                            \
    static_assert(sizeof(T) == (bytes), #T " must be " #bytes " bytes on disk");           \
    static_assert(::bspkit::layout_size(T::kLayout) == (bytes), #T "::kLayout must describe " #bytes " bytes")

/// Decodes whole records from `bytes` (trailing partial bytes are ignored;
/// the container reports them). Big-endian data is swapped into host order.
template <Record T>
std::vector<T> decode_records(ByteSpan bytes, ByteOrder order) {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    if (order == ByteOrder::big)
        for (T& r : out) swap_record(reinterpret_cast<uint8_t*>(&r), T::kLayout);
    return out;
}

/// Calls fn(record, index) for each whole record of `bytes`, each decoded into
/// host order on its own: for readers that only walk the records once, with no
/// list of them built.
template <Record T, class Fn>
void for_each_record(ByteSpan bytes, ByteOrder order, Fn&& fn) {
    const size_t n = bytes.size() / sizeof(T);
    for (size_t i = 0; i < n; ++i) {
        T record;
        std::memcpy(&record, bytes.data() + i * sizeof(T), sizeof(T));
        if (order == ByteOrder::big) swap_record(reinterpret_cast<uint8_t*>(&record), T::kLayout);
        fn(static_cast<const T&>(record), i);
    }
}

/// Encodes records back to bytes in `order` (for writers and editors).
template <Record T>
Bytes encode_records(std::span<const T> records, ByteOrder order) {
    Bytes out(records.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), records.data(), out.size());
    if (order == ByteOrder::big)
        for (size_t i = 0; i < records.size(); ++i) swap_record(out.data() + i * sizeof(T), T::kLayout);
    return out;
}

/// True when records of T can be read in place from `bytes`: host order and
/// T's alignment (lumps of a mapped file usually are).
template <Record T>
bool readable_in_place(ByteSpan bytes, ByteOrder order) noexcept {
    const bool host_order = (order == ByteOrder::little) == (std::endian::native == std::endian::little);
    return host_order && reinterpret_cast<uintptr_t>(bytes.data()) % alignof(T) == 0;
}

/// A lump's records, decoded on first access (thread-safe). Lumps stored as
/// they are in the input (not LZMA, not replaced) in host order are read in
/// place: the span points into the file, which lives as long as the Bsp.
template <Record T>
class LazyRecords {
public:
    std::span<const T> get(const Bsp& bsp, size_t lump) const {
        state_->once.call([&] {
            const ByteSpan bytes = bsp.decoded(lump);
            const bool stable = !bsp.replaced(lump) && !bsp.compressed(lump);
            if (stable && readable_in_place<T>(bytes, bsp.byte_order())) {
                state_->view = {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
            } else {
                state_->items = decode_records<T>(bytes, bsp.byte_order());
                state_->view = state_->items;
            }
        });
        return state_->view;
    }

private:
    struct State {
        OnceFlag once;
        std::vector<T> items;
        std::span<const T> view;
    };
    std::unique_ptr<State> state_ = std::make_unique<State>();
};

}  // namespace bspkit
