// consumer FILE: opens a BSP file with the installed bspkit and prints its format id and lump count.
#include <bspkit/bsp.hpp>
#include <bspkit/format.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    try {
        const bspkit::Bsp bsp = bspkit::Bsp::open(argv[1]);
        std::printf("%s %zu\n", std::string(bspkit::format_id(bsp.format())).c_str(), bsp.lump_count());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
