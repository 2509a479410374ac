// The WebAssembly build leaves src/export/obj.cpp out (it needs float std::to_chars and
// std::make_unique_for_overwrite, which Emscripten 3.1.6's libc++ lacks; the viewer needs glTF only).
// exporter::write() still names write_obj, so it is defined here as an error.
#include <bspkit/error.hpp>
#include <bspkit/export.hpp>

namespace bspkit::exporter {

Summary write_obj(const model::Map&, const std::filesystem::path& path, const Options&) {
    throw Error({path.string(), "", -1}, "OBJ export is not part of the WebAssembly build");
}

}  // namespace bspkit::exporter
