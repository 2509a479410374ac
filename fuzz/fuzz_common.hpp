// Shared by the fuzz targets: parse the input as a map, swallowing the only
// exception the library may throw for bad input (bspkit::Error).
#pragma once

#include <bspkit/bsp.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace bspkit::fuzz {

inline std::optional<Bsp> open(const uint8_t* data, size_t size) {
    try {
        return Bsp::parse(Bytes(data, data + size), "fuzz.bsp");
    } catch (const Error&) {
        return std::nullopt;
    }
}

template <class Fn>
void guarded(Fn&& fn) {
    try {
        fn();
    } catch (const Error&) {
    }
}

}  // namespace bspkit::fuzz
