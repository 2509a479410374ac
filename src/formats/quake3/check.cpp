// PLACEHOLDER until the typed records of this format land: reports that no
// checks ran, so nobody mistakes it for a clean result.
#include <bspkit/check.hpp>

namespace bspkit::quake3 {
void check(const Bsp& bsp, CheckReport& report) {
    report.warning("", -1, "", "no record checks are implemented for " + std::string(format_id(bsp.format())) + " yet");
}
}  // namespace bspkit::quake3
