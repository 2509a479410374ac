#include <bspkit/records.hpp>

#include <algorithm>

namespace bspkit {

void swap_record(uint8_t* record, std::string_view layout) noexcept {
    size_t repeat = 0;
    for (char c : layout) {
        if (c >= '0' && c <= '9') {
            repeat = repeat * 10 + size_t(c - '0');
            continue;
        }
        const size_t n = repeat ? repeat : 1;
        repeat = 0;
        size_t size = 0;
        switch (c) {
            case 'b': size = 1; break;
            case 'h': size = 2; break;
            case 'i': case 'f': size = 4; break;
            case 'q': size = 8; break;
            default: return;
        }
        for (size_t k = 0; k < n; ++k, record += size) std::reverse(record, record + size);
    }
}

}  // namespace bspkit
