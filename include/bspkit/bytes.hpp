// Byte order helpers. All on-disk reads go through these so that big-endian
// (console) files and unaligned data are handled in one place.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

namespace bspkit {

/// std::bit_cast where the standard library has it; the compiler builtin
/// otherwise (Emscripten 3.1.6's libc++, for the WebAssembly viewer).
template <class To, class From>
constexpr To bit_cast(const From& from) noexcept {
#if defined(__cpp_lib_bit_cast)
    return std::bit_cast<To>(from);
#else
    return __builtin_bit_cast(To, from);
#endif
}

using ByteSpan = std::span<const uint8_t>;
using Bytes = std::vector<uint8_t>;

enum class ByteOrder : uint8_t { little, big };

template <class T>
constexpr T byteswap(T value) noexcept {
    static_assert(std::is_integral_v<T>);
    if constexpr (sizeof(T) == 1) {
        return value;
    } else if constexpr (sizeof(T) == 2) {
        return static_cast<T>(__builtin_bswap16(static_cast<uint16_t>(value)));
    } else if constexpr (sizeof(T) == 4) {
        return static_cast<T>(__builtin_bswap32(static_cast<uint32_t>(value)));
    } else {
        return static_cast<T>(__builtin_bswap64(static_cast<uint64_t>(value)));
    }
}

/// Reads a T at `p` (no alignment needed) stored in `order`.
template <class T>
inline T load(const uint8_t* p, ByteOrder order = ByteOrder::little) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
        using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        return bspkit::bit_cast<T>(load<U>(p, order));
    } else {
        T value;
        std::memcpy(&value, p, sizeof(T));
        const bool native_little = std::endian::native == std::endian::little;
        if ((order == ByteOrder::little) != native_little) value = byteswap(value);
        return value;
    }
}

/// Writes `value` at `p` in `order`.
template <class T>
inline void store(uint8_t* p, T value, ByteOrder order = ByteOrder::little) noexcept {
    if constexpr (std::is_floating_point_v<T>) {
        using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        store<U>(p, bspkit::bit_cast<U>(value), order);
    } else {
        const bool native_little = std::endian::native == std::endian::little;
        if ((order == ByteOrder::little) != native_little) value = byteswap(value);
        std::memcpy(p, &value, sizeof(T));
    }
}

/// Appends `value` to `out` in `order`.
template <class T>
inline void append(Bytes& out, T value, ByteOrder order = ByteOrder::little) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    store<T>(out.data() + at, value, order);
}

/// Four ASCII characters as the little-endian integer they make on disk.
constexpr uint32_t fourcc(const char (&s)[5]) noexcept {
    return uint32_t(uint8_t(s[0])) | uint32_t(uint8_t(s[1])) << 8 | uint32_t(uint8_t(s[2])) << 16 |
           uint32_t(uint8_t(s[3])) << 24;
}

}  // namespace bspkit
