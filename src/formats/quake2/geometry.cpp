// PLACEHOLDER until this format's geometry lands: refuses clearly.
#include "../../model/builders.hpp"

namespace bspkit::quake2 {
void build_model(const Bsp& bsp, const model::BuildOptions&, model::Map&) {
    throw Error({bsp.file_name(), "header", 0},
                "geometry of " + std::string(format_id(bsp.format())) + " maps is not implemented yet");
}
}  // namespace bspkit::quake2
