#include <bspkit/error.hpp>

namespace bspkit {

std::string format_location_message(const Location& where, std::string_view detail) {
    std::string out = where.file.empty() ? std::string("<input>") : where.file;
    out += ": ";
    if (!where.lump.empty()) {
        out += "lump ";
        out += where.lump;
        if (where.offset >= 0) out += " at offset " + std::to_string(where.offset);
        out += ": ";
    } else if (where.offset >= 0) {
        out += "at offset " + std::to_string(where.offset) + ": ";
    }
    out += detail;
    return out;
}

Error::Error(Location where, std::string detail)
    : std::runtime_error(format_location_message(where, detail)), where_(std::move(where)), detail_(std::move(detail)) {}

}  // namespace bspkit
