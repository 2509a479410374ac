// Entity lump checks shared by every format: the text must parse the way the
// engines' tokenizers read it (the other verbs refuse a map whose entities do
// not), the first entity is the world, and brush-model references ("model"
// "*N") name a record of the models lump, one entity per model.
#include <bspkit/check.hpp>
#include <bspkit/entities.hpp>

#include <unordered_map>

namespace bspkit {

namespace {

std::string quote_value(std::string_view s) {
    constexpr size_t kMax = 40;
    std::string out = "\"";
    out.append(s.substr(0, kMax));
    if (s.size() > kMax) out += "...";
    return out + "\"";
}

}  // namespace

void check_entities(const Bsp& bsp, const EntityLump& lump, CheckReport& report) {
    const std::string el(bsp.lump_name(entity_lump_index(bsp)));
    const auto& ents = lump.entities;
    if (ents.empty()) {
        report.error(el, -1, "", "no entities: the engine needs a worldspawn entity first");
        return;
    }
    const std::string_view first = ents[0].get("classname");
    if (first != "worldspawn") {
        report.findings.push_back({Severity::error, el, 0, "classname",
                                   "entity 0 is " + (first.empty() ? std::string("without a classname") : quote_value(first)) +
                                       ", not worldspawn: the engine takes the first entity as the world",
                                   ents[0].offset});
    }
    const auto models_lump = bsp.layout().find_lump("models");
    const size_t models = models_lump ? bsp.record_count(*models_lump).value_or(0) : 0;
    const std::string ml = models_lump ? std::string(bsp.lump_name(*models_lump)) : std::string("models");
    std::unordered_map<uint64_t, size_t> user;  // brush model -> first entity using it
    for (size_t i = 0; i < ents.size(); ++i) {
        const Entity& e = ents[i];
        if (i > 0 && e.get("classname") == "worldspawn")
            report.findings.push_back({Severity::warning, el, int64_t(i), "classname",
                                       "a second worldspawn (the engine spawns it as an ordinary entity)", e.offset});
        for (const KeyValue& kv : e.pairs) {
            if (kv.key != "model" || kv.value.empty() || kv.value[0] != '*') continue;
            const auto n = brush_model_number(kv.value);
            std::string message;
            Severity severity = Severity::error;
            if (!n) {
                message = "model " + quote_value(kv.value) + " is not *N";
            } else if (*n >= models) {
                message = "model *" + std::to_string(*n) + " is out of range: " + ml + " has " +
                          std::to_string(models) + " records";
            } else if (const auto [it, fresh] = user.try_emplace(*n, i); !fresh) {
                const std::string_view other = ents[it->second].get("classname");
                message = "model *" + std::to_string(*n) + " is also used by entity " + std::to_string(it->second) +
                          (other.empty() ? std::string() : " (" + quote_value(other) + ")") +
                          ": one brush model, two entities moving or removing the same surfaces";
            } else {
                continue;
            }
            report.findings.push_back({severity, el, int64_t(i), "model", std::move(message), e.offset});
        }
    }
}

void check_entities(const Bsp& bsp, CheckReport& report) {
    if (!bsp.layout().find_lump("entities")) return;
    EntityLump lump;
    try {
        lump = read_entities(bsp);
    } catch (const Error& e) {
        // The byte where the text goes wrong, as the other verbs report it.
        report.findings.push_back({Severity::error, e.where().lump, -1, "", e.detail(), e.where().offset});
        return;
    }
    check_entities(bsp, lump, report);
}

}  // namespace bspkit
