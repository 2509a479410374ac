// The same map stored otherwise (another variant, byte order, compression,
// lump order, wider indices) must get the same answers from every verb: the
// original's answers, worked out once, and the comparison of a copy's.
#pragma once

#include <bspkit/bsp.hpp>
#include <bspkit/check.hpp>
#include <bspkit/export.hpp>
#include <bspkit/model.hpp>
#include <bspkit/query.hpp>
#include <bspkit/render.hpp>

#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace bspkit::test {

/// A check finding as compared between copies: where and what, without the
/// file offset (lumps move).
using FindingKey = std::tuple<Severity, std::string, int64_t, std::string, std::string>;

/// Per-record findings, and lump findings that are not about the lumps'
/// placement (alignment) or about counts against a tool's limits (MAX_MAP_*).
std::multiset<FindingKey> comparable_findings(const CheckReport& report);

/// What check, the geometry (glb), the renderer (a 96x64 thumbnail), the
/// decompiler and the collision world answer for a map.
struct Answers {
    explicit Answers(const Bsp& bsp);
    std::multiset<FindingKey> findings;
    model::Map model;
    exporter::GltfAsset gltf;  ///< the glb's JSON and buffer (compared by expect_same_asset)
    render::Frame frame;
    std::string decompiled;
    query::World world;
};

/// Up to `count` vertexes of the map's surfaces, spread over them: points
/// near the geometry, where comparing leaves and traces tells something.
std::vector<query::Vec3> surface_points(const model::Map& map, size_t count = 4096);

/// `copy` answers as `original` did: the same findings (unless
/// compare_findings is false: the copy moves records, so the caller compares
/// them its own way), the same glb but for extras.format, the same pixels, the
/// same decompiled text, and at points near `near` (e.g. the map's vertexes)
/// the same leaves, traces (every Quake 1 hull; else a line and the player's
/// box) and visible().
void expect_same_answers(const Answers& original, const Bsp& copy, std::span<const query::Vec3> near,
                         bool compare_findings = true);

}  // namespace bspkit::test
