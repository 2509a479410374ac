// The engines' light rules (see bspkit/engine_light.hpp): one place for the
// exporters and the renderer.
#include <bspkit/engine_light.hpp>

#include <algorithm>
#include <cmath>

namespace bspkit::model {
namespace {

/// GoldSrc's light gamma table (BuildGammaTable in the GL engine, as
/// reimplemented by Xash3D's gamma.c and reGS's hw_view.cpp): f = x^lightgamma,
/// the "brightness" shift of the darkest 1/8 of the range, then f^(1/gamma).
/// With the defaults lightgamma 2.5, brightness 1 (so the shift point is
/// 0.125 - 0.075 = 0.05) and gamma 2.5.
uint8_t goldsrc_light(uint8_t v) {
    // A table of the 256 answers (the engine builds one too): two pow() calls per
    // channel of every luxel were a tenth of a GoldSrc export.
    static const std::array<uint8_t, 256> table = [] {
        constexpr double kLightGamma = 2.5, kGamma = 2.5, kShift = 0.05;
        std::array<uint8_t, 256> t{};
        for (int i = 0; i < 256; ++i) {
            double f = std::pow(i / 255.0, kLightGamma);
            f = f <= kShift ? f / kShift * 0.125 : 0.125 + (f - kShift) / (1.0 - kShift) * 0.875;
            t[size_t(i)] = uint8_t(std::clamp(std::lround(255.0 * std::pow(f, 1.0 / kGamma)), 0L, 255L));
        }
        return t;
    }();
    return table[v];
}

}  // namespace

/// One luxel as the engine shows it, before the exposure.
std::array<double, 3> engine_light(Format format, const uint8_t* rgb) {
    std::array<double, 3> c{double(rgb[0]), double(rgb[1]), double(rgb[2])};
    switch (format) {
    case Format::quake1:
    case Format::bsp2:
    case Format::quake2:
        // Software Quake (and Quake 2's ref_soft) light through the colormap,
        // whose 64 rows run from black through the texture as drawn (a luxel
        // of about 128) to twice as bright: lightmaps are "overbright" by 2
        // (quaddicted.com "Differences between software rendered Quake and
        // GLQuake"; mhquake's "Fun with Lighting"). GL ports that match it
        // (QuakeSpasm gl_overbright 1, Yamagi Quake 2 gl1_overbrightbits 2)
        // multiply the lightmap by 2 the same way.
        for (double& v : c) v *= 2;
        break;
    case Format::quake3: {
        // Quake 3 (tr_bsp.c R_ColorShiftLightingBytes): lightmap bytes are
        // shifted left by r_mapOverBrightBits (2) - r_overBrightBits, and the
        // display gamma ramp brightens by 2^r_overBrightBits: x4 in all. When
        // a channel would pass 255 all three are scaled down together (the
        // hue is kept), as R_ColorShiftLightingBytes does.
        double top = 0;
        for (double& v : c) top = std::max(top, v *= 4);
        if (top > 255)
            for (double& v : c) v *= 255 / top;
        break;
    }
    case Format::goldsrc:
    case Format::nightfire:
        for (double& v : c) v = goldsrc_light(uint8_t(v));
        break;
    case Format::source:
        // The model already holds what Source shows: ColorRGBExp32 to linear
        // (TexLightToLinear: c * 2^exponent / 255), then linear^(1/2.2).
        break;
    }
    return c;
}

double engine_light_scale(Format format) {
    const uint8_t grey[3] = {128, 128, 128};
    return engine_light(format, grey)[0] / 128.0;
}

void shade_lightmap(Format format, bool engine, double exposure, LightmapAtlas& atlas) {
    const double gain = std::exp2(std::clamp((std::isfinite(exposure) ? exposure : 0.0), -16.0, 16.0));
    if (!engine && gain == 1) return;
    if (!engine || format != Format::quake3) {
        // Every family but Quake 3 lights each channel on its own: the 256 answers
        // once, by the same arithmetic as the luxel-by-luxel path below.
        std::array<uint8_t, 256> table{};
        for (int v = 0; v < 256; ++v) {
            const uint8_t grey[3] = {uint8_t(v), uint8_t(v), uint8_t(v)};
            const double c = engine ? engine_light(format, grey)[0] : double(v);
            table[size_t(v)] = uint8_t(std::clamp(std::lround(c * gain), 0L, 255L));
        }
        const size_t whole = atlas.rgb.size() - atlas.rgb.size() % 3;  // whole luxels, as below
        // Through plain pointers: a byte stored through atlas.rgb[i] may alias the
        // vector's own data pointer, which was then read again for every byte.
        uint8_t* const rgb = atlas.rgb.data();
        const uint8_t* const lut = table.data();
        for (size_t i = 0; i < whole; ++i) rgb[i] = lut[rgb[i]];
        return;
    }
    for (size_t i = 0; i + 2 < atlas.rgb.size(); i += 3) {
        std::array<double, 3> c{double(atlas.rgb[i]), double(atlas.rgb[i + 1]), double(atlas.rgb[i + 2])};
        if (engine) c = engine_light(format, &atlas.rgb[i]);
        for (int k = 0; k < 3; ++k) atlas.rgb[i + size_t(k)] = uint8_t(std::clamp(std::lround(c[size_t(k)] * gain), 0L, 255L));
    }
}

}  // namespace bspkit::model
