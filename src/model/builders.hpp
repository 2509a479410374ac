// Per-format builders of the engine-neutral model (internal).
#pragma once

#include <bspkit/model.hpp>

namespace bspkit {
namespace quake1 { void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map); }
namespace quake2 { void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map); }
namespace quake3 { void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map); }
namespace nightfire { void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map); }
namespace source { void build_model(const Bsp& bsp, const model::BuildOptions& options, model::Map& map); }
}  // namespace bspkit
