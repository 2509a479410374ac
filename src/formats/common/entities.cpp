// Entity lump parser and writer, shared by every format (see entities.hpp).
#include <bspkit/entities.hpp>

#include <algorithm>
#include <charconv>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace bspkit {

// --- Entity ----------------------------------------------------------------

std::optional<std::string_view> Entity::find(std::string_view key) const noexcept {
    for (const KeyValue& kv : pairs)
        if (kv.key == key) return std::string_view(kv.value);
    return std::nullopt;
}

std::string_view Entity::get(std::string_view key, std::string_view fallback) const noexcept {
    const auto v = find(key);
    return v ? *v : fallback;
}

std::vector<std::string_view> Entity::get_all(std::string_view key) const {
    std::vector<std::string_view> out;
    for (const KeyValue& kv : pairs)
        if (kv.key == key) out.emplace_back(kv.value);
    return out;
}

void Entity::set(std::string_view key, std::string value) {
    for (KeyValue& kv : pairs)
        if (kv.key == key) {
            kv.value = std::move(value);
            return;
        }
    pairs.push_back({std::string(key), std::move(value)});
}

size_t Entity::erase(std::string_view key) {
    const auto before = pairs.size();
    std::erase_if(pairs, [&](const KeyValue& kv) { return kv.key == key; });
    return before - pairs.size();
}

// --- Parser ----------------------------------------------------------------

namespace {

enum class TokenKind { end, open, close, string };

struct Token {
    TokenKind kind = TokenKind::end;
    size_t at = 0;       ///< position of the token's first byte
    std::string_view text;  ///< string contents (without quotes)
    bool quoted = false;
};

/// A short printable excerpt for messages.
std::string excerpt(std::string_view s) {
    std::string out;
    for (char c : s.substr(0, 24)) {
        const auto u = static_cast<unsigned char>(c);
        if (u >= 32 && u < 127 && c != '\\') {
            out += c;
        } else {
            static const char* hex = "0123456789abcdef";
            out += "\\x";
            out += hex[u >> 4];
            out += hex[u & 15];
        }
    }
    if (s.size() > 24) out += "...";
    return out;
}

/// The tokenizer and the entity list built from its tokens. The text must be
/// followed by a NUL byte (text.data()[text.size()] == 0, as std::string's
/// c_str() is): NUL ends the text for the engines, so every scanning loop
/// stops at it and none needs a bounds test.
class Parser {
public:
    Parser(std::string_view text, const Location& where, bool decoded)
        : begin_(text.data()), end_(text.data() + text.size()), p_(begin_), where_(where), decoded_(decoded) {}

    [[noreturn]] void fail(size_t pos, const std::string& what) const {
        Location at = where_;
        if (at.lump.empty()) at.lump = "entities";
        at.offset = (where_.offset >= 0 ? where_.offset : 0) + int64_t(pos);
        std::string detail = what;
        if (decoded_) detail += " (byte " + std::to_string(pos) + " of the LZMA-decoded lump)";
        throw Error(std::move(at), std::move(detail));
    }

    int64_t absolute(size_t pos) const { return (where_.offset >= 0 ? where_.offset : 0) + int64_t(pos); }

    Token next() {
        const char* p = p_;
        for (;;) {
            while (static_cast<unsigned char>(*p) - 1u < uint8_t(' ')) ++p;  // bytes 1..32; NUL ends the text
            if (*p == '\0') {
                p_ = p;
                return {TokenKind::end, at(p), {}, false};
            }
            if (p[0] == '/' && p[1] == '/') {
                while (*p != '\n' && *p != '\0') ++p;
                continue;
            }
            break;
        }
        const char* start = p;
        const char c = *p;
        if (c == '{' || c == '}') {
            p_ = p + 1;
            return {c == '{' ? TokenKind::open : TokenKind::close, at(start), {start, 1}, false};
        }
        if (c == '"') {
            const char* body = start + 1;
            const char* e = quote_or_nul(body);
            if (e == end_) fail(at(start), "unterminated quoted string: no closing '\"' before the end of the lump");
            if (*e == '\0')
                fail(at(start), "unterminated quoted string: a NUL byte at offset " + std::to_string(absolute(at(e))) +
                                    " ends the text before the closing '\"'");
            p_ = e + 1;
            return {TokenKind::string, at(start), {body, size_t(e - body)}, true};
        }
        // An unquoted word runs to whitespace (or NUL), a quote or a brace.
        const char* e = start;
        for (;;) {
            const char d = *e;
            if (static_cast<unsigned char>(d) <= ' ' || d == '"' || d == '{' || d == '}') break;
            ++e;
        }
        p_ = e;
        return {TokenKind::string, at(start), {start, size_t(e - start)}, false};
    }

    std::vector<Entity> run() {
        std::vector<Entity> out;
        // One entity's pairs as views of the text, so that its list of pairs is
        // allocated once, at its size.
        std::vector<std::pair<std::string_view, std::string_view>> pairs;
        for (;;) {
            const Token t = next();
            if (t.kind == TokenKind::end) break;
            if (t.kind != TokenKind::open)
                fail(t.at, "expected '{' to open an entity, found " + describe(t));
            pairs.clear();
            for (;;) {
                const Token k = next();
                if (k.kind == TokenKind::close) break;
                if (k.kind == TokenKind::end)
                    fail(t.at, "unterminated entity: the '{' here (entity " + std::to_string(out.size()) +
                                   ") has no closing '}' before the end of the lump");
                if (k.kind == TokenKind::open)
                    fail(k.at, "unexpected '{' inside entity " + std::to_string(out.size()) + " opened at offset " +
                                   std::to_string(absolute(t.at)) + " (missing '}'?)");
                const Token v = next();
                if (v.kind != TokenKind::string) {
                    const std::string key = "key \"" + excerpt(k.text) + "\" of entity " + std::to_string(out.size());
                    if (v.kind == TokenKind::end)
                        fail(k.at, key + " has no value before the end of the lump");
                    fail(v.at, key + " has no value: found " + describe(v));
                }
                pairs.emplace_back(k.text, v.text);
            }
            Entity& e = out.emplace_back();
            e.offset = absolute(t.at);
            e.pairs.reserve(pairs.size());
            for (const auto& [key, value] : pairs) e.pairs.push_back({std::string(key), std::string(value)});
        }
        return out;
    }

private:
    static std::string describe(const Token& t) {
        switch (t.kind) {
            case TokenKind::end: return "the end of the lump";
            case TokenKind::open: return "'{'";
            case TokenKind::close: return "'}'";
            case TokenKind::string: return (t.quoted ? "string \"" : "word ") + excerpt(t.text) + (t.quoted ? "\"" : "");
        }
        return "?";
    }

    size_t at(const char* p) const { return size_t(p - begin_); }

    /// The first '"' or NUL from `p` on (the NUL after the text at the latest).
    /// Quoted strings are most of the text: they are searched 16 bytes at a
    /// time where 16 bytes are left before the end.
    const char* quote_or_nul(const char* p) const {
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"'), nul = _mm_setzero_si128();
        for (; end_ - p >= 16; p += 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            const int hits = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, nul)));
            if (hits != 0) return p + __builtin_ctz(unsigned(hits));
        }
#endif
        while (*p != '"' && *p != '\0') ++p;
        return p;
    }

    const char* begin_;
    const char* end_;  ///< *end_ == '\0'
    const char* p_;
    Location where_;
    bool decoded_;
};

std::string_view as_chars(ByteSpan b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

}  // namespace

EntityLump EntityLump::parse(ByteSpan text, Location where, bool decoded) {
    EntityLump lump;
    lump.original_.assign(as_chars(text));
    const std::string_view s = lump.original_;  // followed by a NUL, as Parser needs
    lump.entities = Parser(s, where, decoded).run();
    lump.was_parsed_ = true;
    size_t nuls = 0;
    while (nuls < s.size() && s[s.size() - 1 - nuls] == '\0') ++nuls;
    const bool any_nul = s.find('\0') != std::string_view::npos;
    lump.trailing_nuls_ = s.empty() ? 1 : (any_nul ? std::max<size_t>(nuls, 1) : 0);
    const size_t lf = s.find('\n');
    lump.crlf_ = lf != std::string_view::npos && lf > 0 && s[lf - 1] == '\r';
    return lump;
}

EntityLump EntityLump::parse(std::string_view text, Location where) {
    return parse(ByteSpan(reinterpret_cast<const uint8_t*>(text.data()), text.size()), std::move(where), false);
}

bool EntityLump::modified() const {
    if (!was_parsed_) return !entities.empty();
    // Parsing again (only when writing) keeps parse() from holding a second copy of the list.
    return entities != Parser(original_, {}, false).run();
}

Bytes EntityLump::serialize() const {
    if (was_parsed_ && !modified()) return Bytes(original_.begin(), original_.end());
    return canonical();
}

Bytes EntityLump::canonical() const {
    const std::string_view nl = crlf_ ? "\r\n" : "\n";
    size_t size = trailing_nuls_;
    for (const Entity& e : entities) {
        size += 4 + 2 * nl.size();
        for (const KeyValue& kv : e.pairs) size += kv.key.size() + kv.value.size() + 5 + nl.size();
    }
    Bytes out;
    out.reserve(size);
    auto put = [&](std::string_view s) { out.insert(out.end(), s.begin(), s.end()); };
    auto check = [&](size_t index, const KeyValue& kv) {
        for (const auto& [what, s] : {std::pair<const char*, const std::string&>{"key", kv.key}, {"value", kv.value}}) {
            const size_t bad = s.find_first_of(std::string_view("\"\0", 2));
            if (bad == std::string::npos) continue;
            throw Error({"", "entities", -1},
                        "entity " + std::to_string(index) + ": the " + what + " of key \"" + excerpt(kv.key) +
                            "\" holds a " + (s[bad] == '"' ? "double quote" : "NUL byte") +
                            ", which an entity lump cannot store");
        }
    };
    for (size_t i = 0; i < entities.size(); ++i) {
        put("{");
        put(nl);
        for (const KeyValue& kv : entities[i].pairs) {
            check(i, kv);
            put("\"");
            put(kv.key);
            put("\" \"");
            put(kv.value);
            put("\"");
            put(nl);
        }
        put("}");
        put(nl);
    }
    out.insert(out.end(), trailing_nuls_, uint8_t(0));
    return out;
}

// --- Bsp integration --------------------------------------------------------

size_t entity_lump_index(const Bsp& bsp) {
    const auto index = bsp.layout().find_lump("entities");
    if (!index) throw Error({bsp.file_name(), "header", -1}, "this format has no entity lump");
    return *index;
}

EntityLump read_entities(const Bsp& bsp) {
    const size_t index = entity_lump_index(bsp);
    const ByteSpan text = bsp.decoded(index);
    const std::string name(bsp.lump_name(index));
    return EntityLump::parse(text, {bsp.file_name(), name, bsp.entry(index).offset},
                             bsp.compressed(index) && !bsp.replaced(index));
}

bool write_entities(Bsp& bsp, const EntityLump& lump) {
    const size_t index = entity_lump_index(bsp);
    Bytes bytes;
    try {
        bytes = lump.serialize();
    } catch (const Error& e) {
        throw Error({bsp.file_name(), std::string(bsp.lump_name(index)), -1}, e.detail());
    }
    const ByteSpan current = bsp.decoded(index);
    if (std::equal(bytes.begin(), bytes.end(), current.begin(), current.end())) return false;
    bsp.replace(index, std::move(bytes));
    return true;
}

// --- JSON-safe text ---------------------------------------------------------

namespace {

constexpr uint32_t kEscapeBase = 0xEF00;  // byte b (>= 0x80) <-> U+EF00 + b

void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}

/// Decodes one well-formed UTF-8 sequence at s[i]; returns its length (0 when ill-formed).
size_t decode_utf8(std::string_view s, size_t i, uint32_t& cp) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    size_t len;
    uint32_t min;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (i + len > s.size()) return 0;
    for (size_t k = 1; k < len; ++k) {
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

bool is_escape(uint32_t cp) { return cp >= kEscapeBase + 0x80 && cp <= kEscapeBase + 0xFF; }

/// Bytes before the first one of 0x80 or above: ASCII, which both
/// directions of the escape mapping keep as it is.
size_t ascii_prefix(std::string_view s) {
    size_t i = 0;
    while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
    return i;
}

}  // namespace

std::optional<uint64_t> brush_model_number(std::string_view value) {
    if (value.size() < 2 || value[0] != '*') return std::nullopt;
    const std::string_view digits = value.substr(1);
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    return n;
}

std::string bytes_to_utf8(std::string_view raw) {
    const size_t ascii = ascii_prefix(raw);  // most keys and values are ASCII throughout
    std::string out(raw.substr(0, ascii));
    if (ascii == raw.size()) return out;
    out.reserve(raw.size() + raw.size() / 2);
    for (size_t i = ascii; i < raw.size();) {
        uint32_t cp = 0;
        const size_t len = decode_utf8(raw, i, cp);
        if (len > 0 && !is_escape(cp)) {
            out.append(raw.substr(i, len));
            i += len;
            continue;
        }
        // Ill-formed byte, or a real escape code point: map byte by byte.
        const size_t n = len > 0 ? len : 1;
        for (size_t k = 0; k < n; ++k) put_utf8(out, kEscapeBase + static_cast<unsigned char>(raw[i + k]));
        i += n;
    }
    return out;
}

std::string utf8_to_bytes(std::string_view utf8) {
    const size_t ascii = ascii_prefix(utf8);
    std::string out(utf8.substr(0, ascii));
    if (ascii == utf8.size()) return out;
    out.reserve(utf8.size());
    for (size_t i = ascii; i < utf8.size();) {
        uint32_t cp = 0;
        const size_t len = decode_utf8(utf8, i, cp);
        if (len == 0) {  // not UTF-8 after all: keep the byte
            out += utf8[i++];
            continue;
        }
        if (is_escape(cp))
            out += char(cp - kEscapeBase);
        else
            out.append(utf8.substr(i, len));
        i += len;
    }
    return out;
}

}  // namespace bspkit
