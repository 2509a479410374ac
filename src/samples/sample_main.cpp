// bspkit-sample DIR — writes the generated sample maps into DIR: one box per
// format, and rooms.bsp, the Quake map of room_map.hpp (the demo's map).
#include "room_map.hpp"
#include "samples.hpp"

#include <bspkit/file_io.hpp>

#include <cstdio>
#include <filesystem>

int main(int argc, char** argv) {
    if (argc != 2 || std::string_view(argv[1]) == "--help") {
        std::fprintf(stderr, "usage: bspkit-sample DIR\nWrites one generated sample map per format, and rooms.bsp (a compiled Quake map), into DIR.\n");
        return argc == 2 ? 0 : 2;
    }
    const std::filesystem::path dir = argv[1];
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    try {
        for (const auto& s : bspkit::samples::all()) {
            bspkit::write_file_atomic(dir / s.name, s.bytes);
            std::printf("%s\n", (dir / s.name).string().c_str());
        }
        bspkit::write_file_atomic(dir / "rooms.bsp", bspkit::samples::compile_room_map(bspkit::samples::room_design()));
        std::printf("%s\n", (dir / "rooms.bsp").string().c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
