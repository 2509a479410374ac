// JSON text written straight into a string, for the parts of the glTF
// document too large to build as nlohmann::json values first (the node of
// every entity with its key/values: most of the document, and most of the time
// building and dumping it took). The bytes are those nlohmann's dump() writes
// for the same values: numbers through its own double formatting (Grisu2,
// "1.0" for integral values, null for NaN and infinities), strings escaped by
// it unless they are plain printable ASCII.
#pragma once

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bspkit::exporter::detail {

class JsonText {
public:
    explicit JsonText(std::string& out) : out_(out) {}

    JsonText& open_object() { return open('{'); }
    JsonText& close_object() { return close('}'); }
    JsonText& open_array() { return open('['); }
    JsonText& close_array() { return close(']'); }

    /// An object's key; its value comes next. Keys are the writer's own names.
    JsonText& key(std::string_view name) {
        separate();
        out_ += '"';
        out_ += name;
        out_ += "\":";
        after_key_ = true;
        return *this;
    }

    JsonText& value(std::string_view s) {
        separate();
        if (plain(s)) {
            out_ += '"';
            out_ += s;
            out_ += '"';
        } else {
            out_ += nlohmann::json(std::string(s)).dump();  // its escapes; throws on invalid UTF-8, as dump() does
        }
        return *this;
    }
    JsonText& value(const char* s) { return value(std::string_view(s)); }
    JsonText& value(const std::string& s) { return value(std::string_view(s)); }

    JsonText& value(double v) {
        separate();
        if (!std::isfinite(v)) {
            out_ += "null";
            return *this;
        }
        char buffer[64];
        out_.append(buffer, nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, v));
        return *this;
    }

    template <std::integral T>
        requires(!std::same_as<T, bool>)
    JsonText& value(T v) {
        separate();
        char buffer[24];
        out_.append(buffer, std::to_chars(buffer, buffer + sizeof buffer, v).ptr);
        return *this;
    }

    /// A value nlohmann already holds (small pieces), dumped as is.
    JsonText& value(const nlohmann::ordered_json& v) {
        separate();
        out_ += v.dump();
        return *this;
    }

    /// Printable ASCII without quote or backslash: written as it is.
    static bool plain(std::string_view s) {
        for (const char c : s)
            if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e || c == '"' || c == '\\')
                return false;
        return true;
    }

private:
    void separate() {
        if (after_key_) {
            after_key_ = false;
            return;
        }
        if (!open_.empty()) {
            if (open_.back()) out_ += ',';
            open_.back() = true;
        }
    }

    JsonText& open(char c) {
        separate();
        out_ += c;
        open_.push_back(false);
        return *this;
    }

    JsonText& close(char c) {
        out_ += c;
        open_.pop_back();
        return *this;
    }

    std::string& out_;
    std::vector<bool> open_;  ///< per open container: has it an element yet
    bool after_key_ = false;
};

}  // namespace bspkit::exporter::detail
