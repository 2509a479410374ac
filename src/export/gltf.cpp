// glTF 2.0 writer (.glb and .gltf + .bin + PNG files). See export.hpp for
// what is written; the layout of the binary buffer is one tightly packed
// buffer view per vertex stream (POSITION, NORMAL, TEXCOORD_0, TEXCOORD_1,
// COLOR_0) shared by every primitive's accessors (hence byteStride), one
// for all indices, then one per embedded image.
#include "core/file_view.hpp"
#include "core/parallel.hpp"
#include "images.hpp"
#include "json_text.hpp"
#include "lighting.hpp"
#include "selection.hpp"

#include <bspkit/entities.hpp>
#include <bspkit/error.hpp>
#include <bspkit/export.hpp>
#include <bspkit/file_io.hpp>
#include <bspkit/format.hpp>
#include <bspkit/version.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>

namespace bspkit::exporter {
namespace {

using json = nlohmann::ordered_json;
using model::Vec3;

constexpr int kByte = 5121, kUnsignedInt = 5125, kFloat = 5126;
constexpr int kArrayBuffer = 34962, kElementArrayBuffer = 34963;
constexpr int kLinear = 9729, kLinearMipmapLinear = 9987, kRepeat = 10497, kClampToEdge = 33071;
constexpr double kHalfSqrt2 = 0.70710678118654752440;

enum Stream { kPosition, kNormal, kUv0, kUv1, kColor, kIndex, kStreams };
constexpr size_t kElementSize[kStreams] = {12, 12, 8, 8, 4, 4};

struct GroupOffsets {
    size_t at[kStreams] = {};  ///< byte offset of the group's data within each stream
};

void put_vec3(detail::JsonText& out, Vec3 v) {
    out.open_array().value(double(v.x)).value(double(v.y)).value(double(v.z)).close_array();
}

/// A unit quaternion for JSON: renormalised and clamped to [-1, 1] (rounding
/// can push a component of a 90-degree rotation to 1.0000000000000002).
void put_quaternion(detail::JsonText& out, const std::array<double, 4>& q) {
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    out.open_array();
    for (const double c : q) out.value(std::clamp(n > 0 ? c / n : 0.0, -1.0, 1.0));
    out.close_array();
}

/// q' = c * q * conj(c): a rotation expressed in map axes, moved to output axes.
std::array<double, 4> conjugate_by(const std::array<double, 4>& c, const std::array<double, 4>& q) {
    const auto mul = [](const std::array<double, 4>& a, const std::array<double, 4>& b) {
        return std::array<double, 4>{a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
                                     a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
                                     a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
                                     a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
    };
    return mul(mul(c, q), {-c[0], -c[1], -c[2], c[3]});
}

/// Z-up -> Y-up: -90 degrees about X, (x, y, z) -> (x, z, -y).
constexpr std::array<double, 4> kZupToYup{-kHalfSqrt2, 0, 0, kHalfSqrt2};

void put_f32(uint8_t* p, float v) noexcept { std::memcpy(p, &v, 4); }

class Builder {
public:
    Builder(const model::Map& map, const Options& options, bool binary, std::string_view stem)
        : map_(map), options_(options), binary_(binary), stem_(stem), axes_{options.scale, options.y_up} {}

    GltfAsset run() {
        if (!(options_.scale > 0) || !std::isfinite(options_.scale))
            throw std::invalid_argument("export scale must be a positive number");
        selection_ = detail::select(map_, options_, true);
        plan_streams();
        start_images();
        fill_geometry();
        assemble_json();
        finish_images();
        GltfAsset asset;
        asset.summary = summary_;
        if (!binary_ && !bin_.empty()) {
            doc_["buffers"] = json::array({{{"byteLength", bin_.size()}, {"uri", detail::uri_of(std::string(stem_) + ".bin")}}});
            files_.insert(files_.begin(), {std::string(stem_) + ".bin", std::move(bin_)});
            bin_.clear();
        } else if (!bin_.empty()) {
            doc_["buffers"] = json::array({{{"byteLength", bin_.size()}}});
        }
        drop_unfilled_keys();
        // doc_.dump()'s text, with the nodes written by assemble_json() in their place.
        asset.json = "{";
        for (const auto& [key, value] : doc_.items()) {
            if (asset.json.size() > 1) asset.json += ',';
            asset.json += json(key).dump();
            asset.json += ':';
            if (key == "nodes") asset.json += nodes_text_;
            else asset.json += value.dump();
        }
        asset.json += '}';
        asset.bin = std::move(bin_);
        asset.files = std::move(files_);
        asset.ranges = std::move(ranges_);
        for (const auto& [name, bytes] : asset.files) asset.summary.files.emplace_back(name);
        return asset;
    }

private:
    void progress(std::string_view stage, double fraction) {
        if (options_.progress) options_.progress(stage, fraction);
    }

    void plan_streams() {
        size_t total[kStreams] = {};
        for (const auto& sm : selection_.models) {
            auto& offsets = offsets_.emplace_back();
            for (const auto& g : sm.groups) {
                GroupOffsets o;
                for (int s = 0; s < kStreams; ++s) o.at[s] = total[s];
                total[kPosition] += g.vertices * kElementSize[kPosition];
                total[kNormal] += g.vertices * kElementSize[kNormal];
                total[kUv0] += g.vertices * kElementSize[kUv0];
                if (g.lit) total[kUv1] += g.vertices * kElementSize[kUv1];
                if (g.colored) total[kColor] += g.vertices * kElementSize[kColor];
                total[kIndex] += g.indices * kElementSize[kIndex];
                offsets.push_back(o);
            }
        }
        size_t at = 0;
        for (int s = 0; s < kStreams; ++s) {
            stream_offset_[s] = at;
            stream_length_[s] = total[s];
            at += total[s];  // every element size is a multiple of 4: views stay aligned
        }
        bin_.assign(at, 0);
        for (int s = 0; s < kStreams; ++s) {
            if (!stream_length_[s]) continue;
            json view = {{"buffer", 0}, {"byteOffset", stream_offset_[s]}, {"byteLength", stream_length_[s]}};
            if (s != kIndex) view["byteStride"] = kElementSize[s];
            view["target"] = s == kIndex ? kElementArrayBuffer : kArrayBuffer;
            stream_view_[s] = int(buffer_views_.size());
            buffer_views_.push_back(std::move(view));
        }
    }

    void start_images() {
        bool lit = false;
        for (const auto& sm : selection_.models)
            for (const auto& g : sm.groups) lit = lit || g.lit;
        const bool baked = lit && options_.lighting == Lighting::baked;
        // The textures a material shows: a baked lit group shows the baked image
        // instead (its texture is in it), so a texture only lit groups use is left out.
        std::vector<int32_t> textures;
        if (options_.textures) {
            std::vector<bool> used(map_.textures.size());
            for (const auto& sm : selection_.models)
                for (const auto& g : sm.groups) {
                    const int32_t t = map_.materials[g.material].texture;
                    if (t >= 0 && !used[size_t(t)] && !(baked && g.lit)) {
                        used[size_t(t)] = true;
                        textures.push_back(t);
                    }
                }
        }
        std::function<model::Texture()> bake;
        if (baked) {
            // The layout first: fill_geometry() writes lit vertices' TEXCOORD_1 in it.
            bake_layout_ = detail::plan_bake(map_, selection_, *selection_.lightmap, options_);
            bake = [this] {  // on the image thread
                return std::move(detail::bake(map_, selection_, *selection_.lightmap, options_, bake_layout_).image);
            };
        }
        images_ = detail::encode_images_async(map_, std::move(textures), baked ? nullptr : selection_.lightmap.get(),
                                              std::move(bake), options_.png_compression);
    }

    /// Bounds of a group's positions (the POSITION accessor's min and max).
    struct Bounds {
        float lo[3] = {std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
                       std::numeric_limits<float>::max()};
        float hi[3] = {-std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                       -std::numeric_limits<float>::max()};
    };

    /// Vertex and index bytes first, every group into the ranges of bin_ that
    /// plan_streams() gave it, so groups are filled in parallel on maps with
    /// many vertices; then the accessors, primitives and meshes, in order.
    void fill_geometry() {
        struct Job {
            size_t model, group;
        };
        std::vector<Job> jobs;
        for (size_t mi = 0; mi < selection_.models.size(); ++mi)
            for (size_t gi = 0; gi < selection_.models[mi].groups.size(); ++gi) jobs.push_back({mi, gi});
        ranges_.resize(jobs.size());
        std::vector<Bounds> bounds(jobs.size());
        // Below this many vertices a second thread costs more than it saves.
        constexpr size_t kParallelVertices = 65536;
        const unsigned threads = options_.threads ? options_.threads : selection_.vertices >= kParallelVertices ? 0 : 1;
        bspkit::detail::parallel_for(jobs.size(), threads, [&](size_t j) {
            const auto& sm = selection_.models[jobs[j].model];
            ranges_[j].primitive = uint32_t(jobs[j].group);
            fill_group_bytes(jobs[j].model, sm.groups[jobs[j].group], offsets_[jobs[j].model][jobs[j].group],
                             ranges_[j], bounds[j]);
        });
        const size_t total = std::max<size_t>(selection_.vertices, 1);
        size_t done = 0, j = 0;
        for (size_t mi = 0; mi < selection_.models.size(); ++mi) {
            const auto& sm = selection_.models[mi];
            json primitives = json::array();
            for (size_t gi = 0; gi < sm.groups.size(); ++gi, ++j) {
                ranges_[j].mesh = uint32_t(meshes_.size());  // the mesh pushed below, once its primitives are filled
                primitives.push_back(group_json(sm.groups[gi], offsets_[mi][gi], bounds[j]));
                done += sm.groups[gi].vertices;
                progress("geometry", double(done) / double(total));
            }
            meshes_of_model_.push_back(-1);
            if (!primitives.empty()) {
                meshes_of_model_.back() = int(meshes_.size());
                meshes_.push_back({{"name", model_name(*sm.model)}, {"primitives", std::move(primitives)}});
                summary_.primitives += sm.groups.size();
            }
        }
        summary_.vertices = selection_.vertices;
        summary_.triangles = selection_.triangles;
        summary_.skipped_surfaces = selection_.skipped_surfaces;
        summary_.skipped_models = selection_.skipped_models;
        summary_.models = selection_.models.size();
    }

    /// A group's vertex streams and indices, written into bin_; its surfaces'
    /// index ranges into `ranges`, its position bounds into `bounds`. Touches
    /// nothing another group's call does.
    void fill_group_bytes(size_t selected, const detail::Group& g, const GroupOffsets& o, PrimitiveRanges& ranges,
                          Bounds& bounds) {
        const model::Model& m = *selection_.models[selected].model;
        uint8_t* pos = bin_.data() + stream_offset_[kPosition] + o.at[kPosition];
        uint8_t* nrm = bin_.data() + stream_offset_[kNormal] + o.at[kNormal];
        uint8_t* uv0 = bin_.data() + stream_offset_[kUv0] + o.at[kUv0];
        uint8_t* uv1 = g.lit ? bin_.data() + stream_offset_[kUv1] + o.at[kUv1] : nullptr;
        uint8_t* col = g.colored ? bin_.data() + stream_offset_[kColor] + o.at[kColor] : nullptr;
        uint8_t* idx = bin_.data() + stream_offset_[kIndex] + o.at[kIndex];
        float* const lo = bounds.lo;
        float* const hi = bounds.hi;
        uint32_t base = 0;
        uint32_t first_index = 0;
        for (const uint32_t si : g.surfaces) {
            const model::Surface& s = m.surfaces[si];
            const uint32_t surface_indices = uint32_t(s.indices.size());  // what Selection counted in g.indices
            ranges.face.push_back(s.face >= 0 && s.face < int64_t(PrimitiveRanges::kNoFace) ? uint32_t(s.face)
                                                                                             : PrimitiveRanges::kNoFace);
            ranges.first.push_back(first_index);
            ranges.count.push_back(surface_indices);
            first_index += surface_indices;
            detail::NormalFixer fix(s);
            for (const model::Vertex& v : s.vertices) {
                const Vec3 p = detail::finite(axes_.point(v.position));
                const Vec3 n = axes_.direction(fix(v));
                put_f32(pos, p.x), put_f32(pos + 4, p.y), put_f32(pos + 8, p.z);
                put_f32(nrm, n.x), put_f32(nrm + 4, n.y), put_f32(nrm + 8, n.z);
                put_f32(uv0, detail::finite(v.uv.x)), put_f32(uv0 + 4, detail::finite(v.uv.y));
                pos += 12, nrm += 12, uv0 += 8;
                lo[0] = std::min(lo[0], p.x), lo[1] = std::min(lo[1], p.y), lo[2] = std::min(lo[2], p.z);
                hi[0] = std::max(hi[0], p.x), hi[1] = std::max(hi[1], p.y), hi[2] = std::max(hi[2], p.z);
                if (uv1) {
                    const bool has = s.lightmap >= 0;
                    const model::Vec2 lm = bake_layout_.uv(selected, si, v.lightmap_uv);  // as is unless baked and packed
                    put_f32(uv1, has ? detail::finite(lm.x) : 0.0f);
                    put_f32(uv1 + 4, has ? detail::finite(lm.y) : 0.0f);
                    uv1 += 8;
                }
                if (col) {
                    std::memcpy(col, v.color.data(), 4);
                    col += 4;
                }
            }
            for (size_t i = 0; i + 2 < s.indices.size(); i += 3) {
                uint32_t a = s.indices[i], b = s.indices[i + 1], c = s.indices[i + 2];
                if (detail::needs_flip(s, a, b, c)) std::swap(b, c);
                const uint32_t tri[3] = {base + a, base + b, base + c};
                std::memcpy(idx, tri, 12);
                idx += 12;
            }
            base += uint32_t(s.vertices.size());
        }
    }

    /// A group's accessors and primitive, once fill_group_bytes() has filled it.
    json group_json(const detail::Group& g, const GroupOffsets& o, const Bounds& b) {
        json attributes;
        attributes["POSITION"] = accessor(kPosition, o.at[kPosition], g.vertices, kFloat, "VEC3");
        accessors_[size_t(attributes["POSITION"].get<int>())]["min"] = json::array({b.lo[0], b.lo[1], b.lo[2]});
        accessors_[size_t(attributes["POSITION"].get<int>())]["max"] = json::array({b.hi[0], b.hi[1], b.hi[2]});
        attributes["NORMAL"] = accessor(kNormal, o.at[kNormal], g.vertices, kFloat, "VEC3");
        attributes["TEXCOORD_0"] = accessor(kUv0, o.at[kUv0], g.vertices, kFloat, "VEC2");
        if (g.lit) attributes["TEXCOORD_1"] = accessor(kUv1, o.at[kUv1], g.vertices, kFloat, "VEC2");
        if (g.colored) {
            attributes["COLOR_0"] = accessor(kColor, o.at[kColor], g.vertices, kByte, "VEC4");
            accessors_.back()["normalized"] = true;
        }
        json primitive = {{"attributes", std::move(attributes)},
                          {"indices", accessor(kIndex, o.at[kIndex], g.indices, kUnsignedInt, "SCALAR")},
                          {"material", material(g.material, g.lit)},
                          {"mode", 4}};
        return primitive;
    }

    int accessor(Stream s, size_t offset, size_t count, int component, const char* type) {
        accessors_.push_back({{"bufferView", stream_view_[s]},
                              {"byteOffset", offset},
                              {"componentType", component},
                              {"count", count},
                              {"type", type}});
        return int(accessors_.size() - 1);
    }

    int material(uint32_t index, bool lit) {
        const uint64_t key = uint64_t(index) * 2 + (lit ? 1 : 0);
        if (auto it = material_of_.find(key); it != material_of_.end()) return it->second;
        const int id = int(materials_.size());
        material_of_[key] = id;
        materials_.push_back(json::object());  // filled in assemble_json, once the images' texture indices are known
        material_keys_.push_back({index, lit});
        return id;
    }

    void finish_images() {
        progress("images", -1);
        std::vector<detail::Image> images = images_.get();
        json samplers = json::array();
        int sampler_of[2] = {-1, -1};  // [0] textures: repeat + mipmaps, [1] lightmap: clamp
        const auto sampler = [&](bool lightmap) {
            int& id = sampler_of[lightmap ? 1 : 0];
            if (id < 0) {
                id = int(samplers.size());
                if (lightmap)
                    samplers.push_back({{"magFilter", kLinear}, {"minFilter", kLinear}, {"wrapS", kClampToEdge},
                                        {"wrapT", kClampToEdge}});
                else
                    samplers.push_back({{"magFilter", kLinear}, {"minFilter", kLinearMipmapLinear},
                                        {"wrapS", kRepeat}, {"wrapT", kRepeat}});
            }
            return id;
        };
        json gl_images = json::array(), textures = json::array();
        std::map<int32_t, int> texture_of;  // Map::textures index (or kLightmapImage, kBakedImage) -> glTF texture
        for (detail::Image& img : images) {
            json image = {{"name", img.texture >= 0 ? bytes_to_utf8(map_.textures[size_t(img.texture)].name) : img.name},
                          {"mimeType", "image/png"}};
            if (binary_) {
                const size_t at = (bin_.size() + 3) & ~size_t(3);
                bin_.resize(at);
                bin_.insert(bin_.end(), img.png.begin(), img.png.end());
                image["bufferView"] = buffer_views_.size();
                buffer_views_.push_back({{"buffer", 0}, {"byteOffset", at}, {"byteLength", img.png.size()}});
            } else {
                const std::string file = std::string(stem_) + "_" + img.name + ".png";
                image["uri"] = detail::uri_of(file);
                files_.emplace_back(file, std::move(img.png));
            }
            texture_of[img.texture] = int(textures.size());
            textures.push_back({{"sampler", sampler(img.texture < 0)}, {"source", gl_images.size()}});
            gl_images.push_back(std::move(image));
        }
        summary_.images = images.size();
        // Materials, now that texture indices are known.
        const bool baked = options_.lighting == Lighting::baked;
        bool unlit_used = false;
        for (size_t i = 0; i < materials_.size(); ++i) {
            const auto [index, lit] = material_keys_[i];
            const model::Material& mat = map_.materials[index];
            json pbr = {{"metallicFactor", 0.0}, {"roughnessFactor", 1.0}};
            if (options_.textures && mat.texture >= 0)
                if (auto it = texture_of.find(mat.texture); it != texture_of.end())
                    pbr["baseColorTexture"] = {{"index", it->second}};
            if (lit && baked && !(options_.textures && mat.texture >= 0)) {
                const double grey = detail::srgb_to_linear(detail::kUntexturedAlbedo);
                pbr["baseColorFactor"] = {grey, grey, grey, 1.0};  // the flat colour times the baked light
            }
            json m = {{"name", bytes_to_utf8(mat.name)}, {"pbrMetallicRoughness", std::move(pbr)}};
            json extras = {{"material", index}, {"flags", detail::flag_names(mat.flags)}};
            if (mat.width && mat.height) extras["size"] = {mat.width, mat.height};
            if (lit && baked) {
                const int texture = texture_of.at(detail::kBakedImage);
                m["pbrMetallicRoughness"]["baseColorTexture"] = {{"index", texture}, {"texCoord", 1}};
                extras["lightmap"] = {{"texture", texture}, {"texCoord", 1}, {"styles", "all"}, {"baked", true},
                                      {"texels_per_luxel", bake_layout_.texels_per_luxel},
                                      {"scale", detail::engine_light_scale(map_.format)},
                                      {"exposure", options_.exposure}};
            } else if (lit) {
                const int lightmap = texture_of.at(detail::kLightmapImage);
                m["occlusionTexture"] = {{"index", lightmap}, {"texCoord", 1}};
                extras["lightmap"] = {{"texture", lightmap}, {"texCoord", 1}, {"styles", "all"},
                                      {"scale", detail::engine_light_scale(map_.format)},
                                      {"exposure", options_.exposure}};
            }
            if (mat.flags & model::kAlphaTest) {
                m["alphaMode"] = "MASK";
                m["alphaCutoff"] = 0.5;
            } else if (mat.flags & model::kTranslucent) {
                m["alphaMode"] = "BLEND";
            }
            if (baked || (mat.flags & (model::kSky | model::kUnlit))) {
                m["extensions"] = {{"KHR_materials_unlit", json::object()}};
                unlit_used = true;
            }
            m["extras"] = std::move(extras);
            materials_[i] = std::move(m);
        }
        summary_.materials = materials_.size();
        if (unlit_used) doc_["extensionsUsed"] = json::array({"KHR_materials_unlit"});
        if (!gl_images.empty()) {
            doc_["samplers"] = std::move(samplers);
            doc_["images"] = std::move(gl_images);
            doc_["textures"] = std::move(textures);
        }
        if (!materials_.empty()) doc_["materials"] = std::move(materials_);
        if (!buffer_views_.empty()) doc_["bufferViews"] = std::move(buffer_views_);
        if (!accessors_.empty()) doc_["accessors"] = std::move(accessors_);
    }

    std::string model_name(const model::Model& m) const {
        if (m.index == 0) return "world";
        std::string name = "*" + std::to_string(m.index);
        if (m.entity >= 0 && size_t(m.entity) < map_.entities.size())
            if (auto c = map_.entities[size_t(m.entity)].find("classname")) name += " " + bytes_to_utf8(*c);
        return name;
    }

    /// Opens a node: its name, and its translation to the map position when not 0.
    void open_node(detail::JsonText& out, std::string_view name, const Vec3* map_position) const {
        out.open_object().key("name").value(name);
        if (!map_position) return;
        const Vec3 t = detail::finite(axes_.point(*map_position));
        if (t.x != 0 || t.y != 0 || t.z != 0) put_vec3(out.key("translation"), t);
    }

    void assemble_json() {
        // Every top-level key in its final order, null until filled; drop_unfilled_keys()
        // drops those left null. A key added later would grow ordered_json's vector of
        // (const key, value) pairs, which copies rather than moves them when it
        // reallocates: the whole node tree, 5 ms of vtmb_ch_temple_3's 36.
        for (const char* key : {"asset", "extensionsUsed", "scene", "scenes", "nodes", "meshes", "samplers", "images",
                                "textures", "materials", "bufferViews", "accessors", "buffers"})
            doc_[key] = nullptr;
        doc_["asset"] = {{"version", "2.0"}, {"generator", "bspkit " + std::string(kVersion)}};
        doc_["scene"] = 0;
        doc_["scenes"] = json::array({{{"name", "map"}, {"nodes", json::array({0})}}});
        // The nodes, written as text (most of the document: an entity's node holds its
        // key/values): the root, a node per model, the entities' group and nodes, the
        // props' group and nodes, numbered in that order.
        const size_t models = selection_.models.size();
        const size_t entity_group = 1 + models;
        const size_t prop_group = entity_group + (map_.entities.empty() ? 0 : 1 + map_.entities.size());
        nodes_text_.clear();
        detail::JsonText out(nodes_text_);
        out.open_array();
        out.open_object().key("name").value("map");
        if (!options_.y_up) put_quaternion(out.key("rotation"), kZupToYup);
        out.key("extras").open_object();
        out.key("format").value(format_id(map_.format));
        out.key("up").value(options_.y_up ? "Y (converted)" : "Z (the root rotation stands it up)");
        out.key("scale").value(options_.scale).close_object();
        if (models || !map_.entities.empty() || !map_.props.empty()) {
            out.key("children").open_array();
            for (size_t mi = 0; mi < models; ++mi) out.value(1 + mi);
            if (!map_.entities.empty()) out.value(entity_group);
            if (!map_.props.empty()) out.value(prop_group);
            out.close_array();
        }
        out.close_object();
        for (size_t mi = 0; mi < models; ++mi) {
            const model::Model& m = *selection_.models[mi].model;
            open_node(out, model_name(m), &m.origin);
            if (meshes_of_model_[mi] >= 0) out.key("mesh").value(meshes_of_model_[mi]);
            out.key("extras").open_object().key("model").value(m.index);
            if (m.entity >= 0) out.key("entity").value(m.entity);
            out.close_object().close_object();
        }
        const auto group = [&](std::string_view name, size_t first, size_t count) {
            out.open_object().key("name").value(name).key("children").open_array();
            for (size_t i = 0; i < count; ++i) out.value(first + i);
            out.close_array().close_object();
        };
        if (!map_.entities.empty()) {
            group("entities", entity_group + 1, map_.entities.size());
            for (size_t e = 0; e < map_.entities.size(); ++e) {
                const Entity& ent = map_.entities[e];
                const auto classname = ent.find("classname");
                const std::string name = classname ? bytes_to_utf8(*classname) : "entity " + std::to_string(e);
                std::optional<Vec3> origin;
                if (auto text = ent.find("origin")) origin = parse_vec3(*text);
                open_node(out, name, origin ? &*origin : nullptr);
                out.key("extras").open_object().key("index").value(e).key("keyvalues").open_array();
                // Plain ASCII is its own UTF-8: written without a converted copy.
                const auto text = [&](std::string_view raw) {
                    if (detail::JsonText::plain(raw)) out.value(raw);
                    else out.value(bytes_to_utf8(raw));
                };
                for (const KeyValue& kv : ent.pairs) {
                    out.open_array();
                    text(kv.key);
                    text(kv.value);
                    out.close_array();
                }
                out.close_array().close_object().close_object();
            }
        }
        if (!map_.props.empty()) {
            group("props", prop_group + 1, map_.props.size());
            for (size_t p = 0; p < map_.props.size(); ++p) {
                const model::PropPlacement& prop = map_.props[p];
                const std::string name = bytes_to_utf8(prop.model);
                open_node(out, name, &prop.origin);
                auto q = angles_to_quaternion(prop.angles);
                if (options_.y_up) q = conjugate_by(kZupToYup, q);
                if (q[0] != 0 || q[1] != 0 || q[2] != 0) put_quaternion(out.key("rotation"), q);
                out.key("extras").open_object().key("prop").value(p).key("model").value(name);
                out.key("skin").value(prop.skin);
                put_vec3(out.key("origin"), detail::finite(prop.origin));
                put_vec3(out.key("angles"), detail::finite(prop.angles));
                out.close_object().close_object();
            }
        }
        out.close_array();
        doc_["nodes"] = json::array();  // a place in the key order: run() writes nodes_text_ there
        if (!meshes_.empty()) doc_["meshes"] = std::move(meshes_);
    }

    /// Drops the top-level keys assemble_json() placed that were left unfilled.
    void drop_unfilled_keys() {
        std::vector<std::string> unfilled;
        for (const auto& [key, value] : doc_.items())
            if (value.is_null()) unfilled.push_back(key);
        for (const std::string& key : unfilled) doc_.erase(key);
    }

    const model::Map& map_;
    const Options& options_;
    bool binary_;
    std::string_view stem_;
    detail::Axes axes_;
    detail::Selection selection_;
    std::vector<std::vector<GroupOffsets>> offsets_;
    size_t stream_offset_[kStreams] = {}, stream_length_[kStreams] = {};
    int stream_view_[kStreams] = {-1, -1, -1, -1, -1, -1};
    bspkit::detail::Background<std::vector<detail::Image>> images_;
    detail::BakeLayout bake_layout_;  ///< where lit surfaces are in the baked texture (Lighting::baked)
    Bytes bin_;
    std::vector<std::pair<std::string, Bytes>> files_;
    json doc_ = json::object();
    std::string nodes_text_;  ///< the "nodes" array's JSON text (assemble_json())
    json buffer_views_ = json::array(), accessors_ = json::array(), meshes_ = json::array(),
         materials_ = json::array();
    std::vector<int> meshes_of_model_;
    std::map<uint64_t, int> material_of_;
    std::vector<std::pair<uint32_t, bool>> material_keys_;
    Summary summary_;
    std::vector<PrimitiveRanges> ranges_;
};

/// A .glb's bytes as pieces: its 20-byte header and the JSON, the JSON's
/// padding, the BIN chunk's header, the binary buffer and its padding (the
/// headers and padding held in `scratch`, the rest in the asset), so the file
/// is written without a copy of the buffer.
std::vector<ByteSpan> glb_pieces(const GltfAsset& asset, std::array<uint8_t, 36>& scratch) {
    const size_t json_length = (asset.json.size() + 3) & ~size_t(3);
    const size_t bin_length = (asset.bin.size() + 3) & ~size_t(3);
    const uint64_t total = 12 + 8 + json_length + (asset.bin.empty() ? 0 : 8 + bin_length);
    if (total > UINT32_MAX) throw Error({"", "glb", -1}, "the model needs " + std::to_string(total) +
                                                             " bytes, more than a .glb can hold (4 GiB)");
    uint8_t* const header = scratch.data();             // 20 bytes: file header + JSON chunk header
    uint8_t* const json_pad = scratch.data() + 20;      // up to 3 spaces
    uint8_t* const bin_header = scratch.data() + 24;    // 8 bytes
    uint8_t* const bin_pad = scratch.data() + 32;       // up to 3 zeros
    store<uint32_t>(header, 0x46546C67);  // "glTF"
    store<uint32_t>(header + 4, 2);
    store<uint32_t>(header + 8, uint32_t(total));
    store<uint32_t>(header + 12, uint32_t(json_length));
    store<uint32_t>(header + 16, 0x4E4F534A);  // "JSON"
    std::fill_n(json_pad, 3, uint8_t(' '));
    std::vector<ByteSpan> pieces{ByteSpan(header, 20),
                                 ByteSpan(reinterpret_cast<const uint8_t*>(asset.json.data()), asset.json.size()),
                                 ByteSpan(json_pad, json_length - asset.json.size())};
    if (!asset.bin.empty()) {
        store<uint32_t>(bin_header, uint32_t(bin_length));
        store<uint32_t>(bin_header + 4, 0x004E4942);  // "BIN\0"
        std::fill_n(bin_pad, 3, uint8_t(0));
        pieces.insert(pieces.end(), {ByteSpan(bin_header, 8), ByteSpan(asset.bin), ByteSpan(bin_pad, bin_length - asset.bin.size())});
    }
    return pieces;
}

}  // namespace

GltfAsset build_gltf(const model::Map& map, const Options& options, bool binary, std::string_view stem) {
    return Builder(map, options, binary, stem).run();
}

Bytes encode_glb(const GltfAsset& asset) {
    std::array<uint8_t, 36> scratch;
    const std::vector<ByteSpan> pieces = glb_pieces(asset, scratch);
    size_t total = 0;
    for (const ByteSpan piece : pieces) total += piece.size();
    Bytes out;
    out.reserve(total);
    for (const ByteSpan piece : pieces) out.insert(out.end(), piece.begin(), piece.end());
    return out;
}

Summary write_gltf(const model::Map& map, const std::filesystem::path& path, const Options& options) {
    const auto format = format_for_path(path);
    if (format != FileFormat::glb && format != FileFormat::gltf)
        throw std::invalid_argument("write_gltf: " + path.string() + " does not end in .glb or .gltf");
    const bool binary = format == FileFormat::glb;
    const std::string stem = detail::safe_file_stem(path);
    GltfAsset asset = build_gltf(map, options, binary, stem);
    detail::make_output_dir(path);
    Summary summary = std::move(asset.summary);
    summary.files.clear();
    if (options.progress) options.progress("writing", 0);
    const std::filesystem::path dir = path.parent_path();
    for (const auto& [name, bytes] : asset.files) {
        write_file_atomic(dir / name, bytes);
        summary.files.push_back(dir / name);
    }
    if (binary) {
        std::array<uint8_t, 36> scratch;
        write_file_atomic(path, glb_pieces(asset, scratch));
    } else {
        write_file_atomic(path, ByteSpan(reinterpret_cast<const uint8_t*>(asset.json.data()), asset.json.size()));
    }
    summary.files.push_back(path);
    if (options.progress) options.progress("writing", 1);
    return summary;
}

Summary write(const model::Map& map, const std::filesystem::path& path, const Options& options) {
    const auto format = format_for_path(path);
    if (!format) throw std::invalid_argument(path.string() + ": the output must end in .glb, .gltf or .obj");
    return *format == FileFormat::obj ? write_obj(map, path, options) : write_gltf(map, path, options);
}

}  // namespace bspkit::exporter
