// `bspkit export` over every readable corpus map: the .glb (and a .gltf with
// other options) passes the Khronos glTF-Validator with zero errors and holds
// what the model says (a node per model, entity and prop; the drawable
// triangles; lightmap UVs inside the atlas), and the OBJ's v / vt / vn / f
// counts match the model with every face index in range. A format whose
// geometry builder throws FAILS here (it does not skip).
#include <bspkit/bsp.hpp>
#include <bspkit/entities.hpp>
#include <bspkit/glob.hpp>
#include <bspkit/export.hpp>
#include <bspkit/model.hpp>

#include "export/lighting.hpp"
#include "export/selection.hpp"

#include "corpus.hpp"
#include "export_readers.hpp"
#include "same_asset.hpp"
#include "gltf_validator.hpp"
#include "run.hpp"

#include <gtest/gtest.h>
#include <cstring>
#include <set>
#include <nlohmann/json.hpp>

using namespace bspkit;
using namespace bspkit::test;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> readable_paths() {
    std::vector<std::string> out;
    for (const auto& f : corpus_files())
        if (expected_format(f)) out.push_back(f.relpath);
    return out;
}

class ExportCorpus : public ::testing::TestWithParam<std::string> {};

/// The model of a corpus file, or a test failure naming the builder's error.
std::optional<model::Map> build_or_fail(const CorpusFile& file, const model::BuildOptions& options = {}) {
    try {
        const Bsp bsp = Bsp::parse(read_corpus(file), file.path.string());
        return model::build(bsp, options);
    } catch (const std::exception& e) {
        ADD_FAILURE() << file.relpath << ": model::build failed: " << e.what();
        return std::nullopt;
    }
}

struct Expected {
    size_t models = 0, vertices = 0, triangles = 0;
};

/// What the exporters must write by the documented rules, counted from the model.
Expected expected(const model::Map& map, bool tools = false) {
    Expected e;
    uint32_t skip = model::kNodraw;
    if (!tools) skip |= model::kTrigger | model::kClip;
    e.models = map.models.size();
    for (const auto& m : map.models)
        for (const auto& s : m.surfaces) {
            if (s.material >= map.materials.size() || (map.materials[s.material].flags & skip) || s.indices.empty())
                continue;
            e.vertices += s.vertices.size();
            e.triangles += s.indices.size() / 3;
        }
    return e;
}

void expect_valid(const fs::path& file) {
    const GltfValidation v = validate_gltf(file);
    ASSERT_TRUE(v.ran) << file << ": " << v.errors;
    EXPECT_EQ(v.num_errors(), 0) << file << "\n" << v.error_messages();
    EXPECT_EQ(v.exit_code, 0) << file;
}

/// Every texture is one a material shows and every image one a texture
/// names: a baked export leaves out the textures only its baked surfaces
/// would have shown (the baked image holds them).
void expect_every_image_shown(const nlohmann::json& doc, const fs::path& file) {
    std::set<size_t> shown, named;
    if (doc.contains("materials"))
        for (const auto& m : doc["materials"]) {
            for (const char* key : {"occlusionTexture", "normalTexture", "emissiveTexture"})
                if (m.contains(key)) shown.insert(m[key]["index"].get<size_t>());
            if (m.contains("pbrMetallicRoughness") && m["pbrMetallicRoughness"].contains("baseColorTexture"))
                shown.insert(m["pbrMetallicRoughness"]["baseColorTexture"]["index"].get<size_t>());
        }
    const size_t textures = doc.contains("textures") ? doc["textures"].size() : 0;
    for (size_t t = 0; t < textures; ++t) {
        EXPECT_TRUE(shown.count(t)) << file << ": no material shows texture " << t;
        named.insert(doc["textures"][t]["source"].get<size_t>());
    }
    const size_t images = doc.contains("images") ? doc["images"].size() : 0;
    for (size_t i = 0; i < images; ++i) EXPECT_TRUE(named.count(i)) << file << ": no texture names image " << i;
}

}  // namespace

TEST_P(ExportCorpus, GlbPassesTheValidatorAndHoldsTheModel) {
    const CorpusFile& file = corpus_file(GetParam());
    const fs::path dir = temp_dir("export_glb");
    const fs::path out = dir / (test_name(file.relpath) + ".glb");
    const RunResult r = run_cli({"export", file.path.string(), "-o", out.string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << "a progress bar on a stderr that is not a terminal";
    const auto summary = nlohmann::json::parse(r.out);
    ASSERT_TRUE(fs::exists(out));
    expect_valid(out);

    const auto map = build_or_fail(file);
    ASSERT_TRUE(map);
    // What the build left out (nexuiz_ons-reborn: lightmaps kept outside the
    // map) is said on stderr and in --json, not only in `bspkit lightmaps`.
    ASSERT_TRUE(summary.contains("warnings"));
    EXPECT_EQ(summary["warnings"].size(), map->diagnostics.size());
    for (const Diagnostic& d : map->diagnostics)
        EXPECT_NE(r.err.find(d.message), std::string::npos) << "not on stderr: " << d.message << "\n" << r.err;
    const Expected want = expected(*map);
    const GltfFile glb = GltfFile::read(out);
    expect_every_image_shown(glb.doc, out);
    size_t model_nodes = 0, entity_nodes = 0, prop_nodes = 0;
    for (const auto& n : glb.doc["nodes"]) {
        if (!n.contains("extras")) continue;
        if (n["extras"].contains("keyvalues")) ++entity_nodes;
        else if (n["extras"].contains("prop")) ++prop_nodes;
        else if (n["extras"].contains("model") && !n["extras"].contains("format")) ++model_nodes;
    }
    EXPECT_EQ(model_nodes, want.models);
    EXPECT_EQ(entity_nodes, map->entities.size());
    EXPECT_EQ(prop_nodes, map->props.size());
    size_t triangles = 0, vertices = 0;
    if (glb.doc.contains("meshes"))
        for (const auto& mesh : glb.doc["meshes"])
            for (const auto& prim : mesh["primitives"]) {
                triangles += glb.doc["accessors"][prim["indices"].get<size_t>()]["count"].get<size_t>() / 3;
                const auto& attr = prim["attributes"];
                vertices += glb.doc["accessors"][attr["POSITION"].get<size_t>()]["count"].get<size_t>();
                if (attr.contains("TEXCOORD_1")) {  // lightmap UVs land inside the atlas
                    const auto uv = glb.accessor(attr["TEXCOORD_1"]);
                    const auto [lo, hi] = std::minmax_element(uv.begin(), uv.end());
                    EXPECT_GE(*lo, -1e-4) << mesh["name"];
                    EXPECT_LE(*hi, 1 + 1e-4) << mesh["name"];
                }
            }
    EXPECT_EQ(triangles, want.triangles);
    EXPECT_EQ(vertices, want.vertices);
    EXPECT_EQ(summary["triangles"], want.triangles);
    EXPECT_GT(want.triangles, 0u) << "a map with nothing to draw";
}

TEST_P(ExportCorpus, GltfWithYUpWorldOnlyPassesTheValidator) {
    const CorpusFile& file = corpus_file(GetParam());
    const fs::path dir = temp_dir("export_gltf");
    const fs::path out = dir / "map.gltf";
    const RunResult r = run_cli({"export", file.path.string(), "-o", out.string(), "--y-up", "--scale", "0.0254",
                                 "--models", "world", "--tools"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_valid(out);
    const GltfFile gltf = GltfFile::read(out);
    EXPECT_FALSE(gltf.doc["nodes"][0].contains("rotation"));
    // Every file it names lies beside it.
    std::vector<std::string> uris = {gltf.doc["buffers"][0]["uri"]};
    if (gltf.doc.contains("images"))
        for (const auto& img : gltf.doc["images"]) uris.push_back(img["uri"]);
    for (const auto& uri : uris) {
        EXPECT_EQ(uri.find('/'), std::string::npos) << uri;
        std::string name;  // the URI percent-decoded ('#' in "*water" names is written %23)
        for (size_t i = 0; i < uri.size(); ++i)
            if (uri[i] == '%' && i + 2 < uri.size()) {
                name += char(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
                i += 2;
            } else {
                name += uri[i];
            }
        EXPECT_TRUE(fs::exists(dir / name)) << uri;
    }
}

TEST_P(ExportCorpus, ObjCountsMatchTheModelAndIndicesAreInRange) {
    const CorpusFile& file = corpus_file(GetParam());
    model::BuildOptions build;
    build.lightmaps = false;
    const auto map = build_or_fail(file, build);
    ASSERT_TRUE(map);
    const fs::path dir = temp_dir("export_obj");
    const exporter::Summary s = exporter::write_obj(*map, dir / "map.obj");
    const Bytes bytes = read_file(dir / "map.obj");
    const ObjCounts c = ObjCounts::parse(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    const Expected want = expected(*map);
    EXPECT_EQ(c.v, want.vertices);
    EXPECT_EQ(c.vt, want.vertices);
    EXPECT_EQ(c.vn, want.vertices);
    EXPECT_EQ(c.f, want.triangles);
    EXPECT_EQ(c.bad_faces, 0u);
    EXPECT_EQ(s.triangles, want.triangles);
    for (double p : c.positions) ASSERT_TRUE(std::isfinite(p));
    // The same triangles as the model's drawable surfaces, at their models' origins.
    std::vector<TriangleKey> triangles;
    for (const auto& m : map->models)
        for (const auto& surf : m.surfaces) {
            if (map->materials[surf.material].flags & (model::kNodraw | model::kClip | model::kTrigger)) continue;
            const auto at = [&](uint32_t i) {
                const model::Vec3 p = surf.vertices[i].position + m.origin;
                return std::array<double, 3>{p.x, p.y, p.z};
            };
            for (size_t i = 0; i + 2 < surf.indices.size(); i += 3)
                triangles.push_back(triangle_key(at(surf.indices[i]), at(surf.indices[i + 1]), at(surf.indices[i + 2])));
        }
    std::sort(triangles.begin(), triangles.end());
    EXPECT_TRUE(obj_triangles(c) == triangles) << "the OBJ's triangles differ from the model's";
    const Bytes mtl = read_file(dir / "map.mtl");
    const std::string mtl_text(mtl.begin(), mtl.end());
    for (const auto& name : c.materials) EXPECT_NE(mtl_text.find("newmtl " + name + "\n"), std::string::npos) << name;
}

TEST_P(ExportCorpus, DamagedCopiesExportOrFailCleanly) {
    // Truncated and bit-flipped copies: `bspkit export` exits 0 with a valid
    // file or 1 with a one-line error and no output, never anything else.
    const CorpusFile& file = corpus_file(GetParam());
    const Bytes original = read_corpus(file);
    const fs::path dir = temp_dir("export_damaged");
    std::vector<std::pair<std::string, Bytes>> copies;
    copies.emplace_back("truncated", Bytes(original.begin(), original.begin() + long(original.size() * 2 / 3)));
    Bytes flipped = original;
    for (size_t i = 64; i < flipped.size(); i += 4093) flipped[i] ^= 0x5a;
    copies.emplace_back("flipped", std::move(flipped));
    for (const auto& [name, bytes] : copies) {
        const fs::path in = dir / (name + ".bsp"), out = dir / (name + ".glb");
        write_file_atomic(in, bytes);
        const RunResult r = run_cli({"export", in.string(), "-o", out.string()});
        ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << name << ": exit " << r.exit_code << "\n" << r.err;
        if (r.exit_code == 1) {
            EXPECT_FALSE(fs::exists(out)) << name;
            EXPECT_NE(r.err.find(in.string()), std::string::npos) << name << ": " << r.err;
        } else {
            expect_valid(out);
        }
    }
}

// A damaged map can warn once per face: stderr lists the first ten of a lump
// and counts the rest on one line; --verbose and --json list them all.
// `export --skip` takes comma-separated classname globs (case-insensitive, empty
// items ignored): the brush models of the entities they match are left out,
// and --json counts them.
TEST(ExportCorpusSkip, SkipListLeavesOutTheMatchingEntitiesBrushModels) {
    const CorpusFile& file = corpus_file("q1_v29/hl_crossfire_bsp29.bsp");
    const Bsp bsp = Bsp::open(file.path);
    const EntityLump lump = EntityLump::parse(bsp.decoded(0));
    const auto matching = [&](std::initializer_list<const char*> patterns) {
        size_t n = 0;
        for (const Entity& e : lump.entities) {
            const std::string_view model = e.get("model");
            if (model.size() < 2 || model[0] != '*') continue;
            for (const char* p : patterns)
                if (glob_match(p, e.get("classname"), true)) {
                    ++n;
                    break;
                }
        }
        return n;
    };
    const fs::path out = fs::path(temp_dir("export_skip")) / "map.glb";
    const auto skipped = [&](const std::string& list) {
        const RunResult r = run_cli({"export", file.path.string(), "--skip", list, "-o", out.string(), "--json"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? nlohmann::json::parse(r.out)["skipped_models"].get<size_t>() : size_t(0);
    };
    const size_t doors = matching({"func_door*"}), both = matching({"func_door*", "func_button"});
    EXPECT_GT(doors, 0u);
    EXPECT_GT(both, doors);
    EXPECT_EQ(skipped("func_door*"), doors);
    EXPECT_EQ(skipped(",FUNC_DOOR*,,func_button,"), both);
    EXPECT_EQ(skipped(",,"), 0u);
}

TEST(ExportCorpusWarnings, ManyWarningsOfOneLumpAreCounted) {
    const CorpusFile& file = corpus_file("q1_v29/pd_change_dest.bsp");
    Bytes bytes = read_corpus(file);
    const Bsp original = Bsp::parse(bytes, file.relpath);
    const LumpEntry& texinfo = original.entry(*original.find_lump("texinfo"));
    ASSERT_EQ(texinfo.length % 40, 0);
    for (int32_t at = texinfo.offset; at < texinfo.offset + texinfo.length; at += 40) {
        const float huge = 1e30f;  // vecs[0][0]: every lit face's texture coordinates overflow
        std::memcpy(bytes.data() + at, &huge, sizeof huge);
    }
    const fs::path dir = temp_dir("export_many_warnings");
    const fs::path in = dir / "wild_texinfo.bsp";
    write_file_atomic(in, bytes);
    const RunResult r = run_cli({"export", in.string(), "-o", (dir / "out.glb").string(), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto summary = nlohmann::json::parse(r.out);
    const size_t warned = summary["warnings"].size();
    ASSERT_GT(warned, 100u) << r.err;
    size_t listed = 0, pos = 0;
    const std::string face_line = "texture coordinates of the face are not finite or too large";
    while ((pos = r.err.find(face_line, pos)) != std::string::npos) ++listed, ++pos;
    EXPECT_EQ(listed, 10u) << r.err;
    EXPECT_NE(r.err.find("lump faces: warning: " + std::to_string(warned - 10) +
                         " more like the ones above (--verbose lists each)"),
              std::string::npos)
        << r.err;
    const RunResult v = run_cli({"-v", "export", in.string(), "-o", (dir / "out.glb").string()});
    ASSERT_EQ(v.exit_code, 0) << v.err;
    listed = pos = 0;
    while ((pos = v.err.find(face_line, pos)) != std::string::npos) ++listed, ++pos;
    EXPECT_EQ(listed, warned);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ExportCorpus, ::testing::ValuesIn(readable_paths()),
                         [](const auto& info) { return test_name(info.param); });

// The baked texture packs each lit surface's texels on shelves when that is
// smaller than the lightmap atlas's layout (plan_bake()): every texel a lit
// triangle covers there holds the bytes the atlas layout gives it, at the
// surface's shift, on every corpus map that packs; a map of small faces
// (torabora) needs under half the texels. Surfaces of a black texture are
// black there and share one black texel in the packed layout (pd_change_dest's
// backdrop: a twentieth of the texels).
TEST(ExportCorpusBake, PackedLayoutKeepsEveryCoveredTexelOfTheAtlasLayout) {
    namespace ed = exporter::detail;
    size_t packed_maps = 0, compared = 0, black_texels = 0;
    bool torabora = false, pd = false;
    for (const auto& f : corpus_files()) {
        if (!expected_format(f)) continue;
        const auto map = build_or_fail(f);
        if (!map) continue;
        const exporter::Options options;
        const ed::Selection selection = ed::select(*map, options, true);
        if (!selection.lightmap) continue;
        const ed::BakeLayout layout = ed::plan_bake(*map, selection, *selection.lightmap, options);
        if (!layout.packed()) continue;
        ++packed_maps;
        ed::BakeLayout atlas = layout;
        atlas.shifts.clear();
        atlas.width = atlas.atlas_width;
        atlas.height = atlas.atlas_height;
        const ed::Baked a = ed::bake(*map, selection, *selection.lightmap, options, atlas);
        const ed::Baked b = ed::bake(*map, selection, *selection.lightmap, options, layout);
        ASSERT_EQ(a.image.width, layout.atlas_width);
        ASSERT_EQ(b.image.width, layout.width);
        ASSERT_EQ(b.image.height, layout.height);
        EXPECT_LT(uint64_t(b.image.width) * b.image.height, uint64_t(a.image.width) * a.image.height) << f.relpath;
        if (f.relpath.find("torabora") != std::string::npos) {
            torabora = true;
            EXPECT_LT(2 * uint64_t(b.image.width) * b.image.height, uint64_t(a.image.width) * a.image.height);
        }
        // The texels each lit triangle covers in the atlas layout (their centres
        // well inside it), the last surface to cover a texel owning it.
        std::vector<int64_t> owner(size_t(a.image.width) * a.image.height, -1);
        std::vector<std::pair<size_t, uint32_t>> surfaces;  // (selected model, surface)
        std::vector<std::vector<uint32_t>> texels;          // per entry of `surfaces`
        for (size_t mi = 0; mi < selection.models.size(); ++mi)
            for (const auto& g : selection.models[mi].groups) {
                if (!g.lit) continue;
                for (const uint32_t si : g.surfaces) {
                    const model::Surface& s = selection.models[mi].model->surfaces[si];
                    const int64_t me = int64_t(surfaces.size());
                    surfaces.push_back({mi, si});
                    texels.emplace_back();
                    for (size_t i = 0; i + 2 < s.indices.size(); i += 3) {
                        double px[3], py[3];
                        for (int j = 0; j < 3; ++j) {
                            px[j] = double(s.vertices[s.indices[i + j]].lightmap_uv.x) * a.image.width;
                            py[j] = double(s.vertices[s.indices[i + j]].lightmap_uv.y) * a.image.height;
                        }
                        const double det = (px[1] - px[0]) * (py[2] - py[0]) - (px[2] - px[0]) * (py[1] - py[0]);
                        int x0, x1, y0, y1;
                        if (!(std::fabs(det) > 1e-6) || !ed::texel_box(px, py, a.image.width, a.image.height, x0, x1, y0, y1))
                            continue;
                        for (int y = y0; y <= y1; ++y)
                            for (int x = x0; x <= x1; ++x) {
                                const ed::Barycentric bc = ed::barycentric(px, py, 1 / det, x + 0.5, y + 0.5);
                                if (bc.b0 < 1e-6 || bc.b1 < 1e-6 || bc.b2 < 1e-6) continue;
                                owner[size_t(y) * a.image.width + size_t(x)] = me;
                                texels.back().push_back(uint32_t(y) * a.image.width + uint32_t(x));
                            }
                    }
                }
            }
        size_t mismatched = 0, black_mismatched = 0, black_here = 0;
        static constexpr uint8_t kBlack[4] = {0, 0, 0, 255};
        for (size_t k = 0; k < surfaces.size(); ++k) {
            const ed::BakeLayout::Shift shift = layout.shift(surfaces[k].first, surfaces[k].second);
            if (shift.black) {  // not baked: black in the atlas layout too, whatever its light
                for (const uint32_t at : texels[k])
                    if (owner[at] == int64_t(k)) black_mismatched += std::memcmp(&a.image.rgba[size_t(at) * 4], kBlack, 4) != 0, ++black_here;
                continue;
            }
            for (const uint32_t at : texels[k]) {
                if (owner[at] != int64_t(k)) continue;
                const uint32_t x = at % a.image.width, y = at / a.image.width;
                const int64_t bx = int64_t(x) + shift.x, by = int64_t(y) + shift.y;
                ASSERT_TRUE(bx >= 0 && by >= 0 && bx < b.image.width && by < b.image.height) << f.relpath;
                const uint8_t* pa = &a.image.rgba[size_t(at) * 4];
                const uint8_t* pb = &b.image.rgba[(size_t(by) * b.image.width + size_t(bx)) * 4];
                mismatched += std::memcmp(pa, pb, 4) != 0;
                ++compared;
            }
        }
        EXPECT_EQ(mismatched, 0u) << f.relpath;
        EXPECT_EQ(black_mismatched, 0u) << f.relpath;
        if (black_here) {
            // Their one texel, and the texels a bilinear tap or dilate()'s rings reach from it, are black.
            const int64_t cx = int64_t(std::floor(double(layout.black_uv.x) * b.image.width));
            const int64_t cy = int64_t(std::floor(double(layout.black_uv.y) * b.image.height));
            for (int64_t y = cy - 2; y <= cy + 2; ++y)
                for (int64_t x = cx - 2; x <= cx + 2; ++x) {
                    ASSERT_TRUE(x >= 0 && y >= 0 && x < b.image.width && y < b.image.height) << f.relpath;
                    EXPECT_EQ(std::memcmp(&b.image.rgba[(size_t(y) * b.image.width + size_t(x)) * 4], kBlack, 4), 0)
                        << f.relpath << " at " << x << ", " << y;
                }
        }
        black_texels += black_here;
        if (f.relpath.find("pd_change_dest") != std::string::npos) {
            // Its black backdrop was 5.9 M of the 8.8 M texels baked before black surfaces shared a texel.
            pd = true;
            EXPECT_GT(black_here, 1000000u);
            EXPECT_LT(20 * uint64_t(b.image.width) * b.image.height, uint64_t(a.image.width) * a.image.height);
        }
    }
    EXPECT_TRUE(torabora);
    EXPECT_TRUE(pd);
    EXPECT_GE(packed_maps, 4u);
    EXPECT_GT(compared, 1000000u);
    EXPECT_GT(black_texels, 1000000u);
}

// The user chooses the Quake 3 patch level: a fixed level gives every patch
// segment that many subdivisions, so a finer level writes more triangles, and
// the adaptive default equals what model::build makes by default.
TEST(ExportCorpusPatches, PatchLevelOptionReachesTheTessellation) {
    const CorpusFile& file = corpus_file("q3_v46/oa_ctf2.bsp");
    const fs::path dir = temp_dir("export_patch_level");
    auto triangles = [&](const std::vector<std::string>& extra) -> size_t {
        std::vector<std::string> args = {"export", file.path.string(), "-o", (dir / "p.obj").string(), "--json",
                                         "--no-textures"};
        args.insert(args.end(), extra.begin(), extra.end());
        const RunResult r = run_cli(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return r.exit_code == 0 ? nlohmann::json::parse(r.out).at("triangles").get<size_t>() : 0;
    };
    const size_t coarse = triangles({"--patch-level", "1"});
    const size_t fine = triangles({"--patch-level", "8"});
    const size_t adaptive = triangles({});
    EXPECT_EQ(triangles({"--patch-level", "adaptive"}), adaptive);
    EXPECT_LT(coarse, fine);

    const auto map = build_or_fail(file);
    ASSERT_TRUE(map);
    const Expected e = expected(*map);
    EXPECT_EQ(adaptive, e.triangles);
    size_t patches = 0;
    for (const auto& m : map->models)
        for (const auto& s : m.surfaces) patches += s.kind == model::SurfaceKind::patch;
    ASSERT_GT(patches, 0u) << "oa_ctf2 has bezier patches";
}

// Above 65,536 vertices the glTF writer fills the vertex and index bytes of its
// groups on every core (and on as many threads as Options::threads asks for):
// the bytes are those one thread writes.
TEST(ExportCorpusThreads, BigMapsGetTheSameBytesOnEveryThreadCount) {
    size_t big = 0;
    for (const char* relpath : {"q3_v46/nexuiz_ons-reborn.bsp", "q3_v46/oa_oacmpctf3.bsp", "q1_v29/pd_change_dest.bsp"}) {
        const CorpusFile& file = corpus_file(relpath);
        model::BuildOptions build;
        build.textures = false;
        const auto map = build_or_fail(file, build);
        ASSERT_TRUE(map);
        exporter::Options one;
        one.lighting = exporter::Lighting::separate;
        one.threads = 1;
        const auto a = exporter::build_gltf(*map, one, true);
        big += a.summary.vertices >= 65536;
        for (const unsigned threads : {0u, 2u}) {
            exporter::Options other = one;
            other.threads = threads;
            expect_same_asset(a, exporter::build_gltf(*map, other, true),
                              std::string(relpath) + ", " + std::to_string(threads) + " threads");
        }
    }
    EXPECT_GE(big, 1u) << "nexuiz_ons-reborn has more than 65,536 vertices: the default takes every core there";
}
