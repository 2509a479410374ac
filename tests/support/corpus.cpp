#include "corpus.hpp"

#include <bspkit/file_io.hpp>

#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace bspkit::test {

std::filesystem::path corpus_dir() {
    if (const char* env = std::getenv("BSPKIT_CORPUS")) return env;
    return BSPKIT_CORPUS_DIR;
}

const std::vector<CorpusFile>& corpus_files() {
    static const std::vector<CorpusFile> files = [] {
        const auto manifest = corpus_dir() / "MANIFEST.tsv";
        std::ifstream in(manifest);
        if (!in) throw std::runtime_error("corpus manifest missing: " + manifest.string());
        std::vector<CorpusFile> out;
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            if (line.empty()) continue;
            std::vector<std::string> cols;
            std::stringstream ss(line);
            std::string col;
            while (std::getline(ss, col, '\t')) cols.push_back(col);
            if (cols.size() < 5) throw std::runtime_error("bad manifest line: " + line);
            CorpusFile f;
            f.relpath = cols[0];
            f.folder = f.relpath.substr(0, f.relpath.find('/'));
            f.size = std::stoull(cols[1]);
            f.sha256 = cols[2];
            f.magic = cols[3];
            f.version = cols[4];
            f.path = corpus_dir() / f.relpath;
            out.push_back(std::move(f));
        }
        if (out.empty()) throw std::runtime_error("corpus manifest lists no files: " + manifest.string());
        return out;
    }();
    return files;
}

Bytes read_corpus(const CorpusFile& f) {
    if (!std::filesystem::exists(f.path))
        throw std::runtime_error("corpus file listed in MANIFEST.tsv is missing: " + f.path.string());
    Bytes b = read_file(f.path);
    if (b.size() != f.size)
        throw std::runtime_error("corpus file " + f.relpath + " has " + std::to_string(b.size()) +
                                 " bytes, the manifest says " + std::to_string(f.size));
    return b;
}

const CorpusFile& corpus_file(const std::string& relpath) {
    for (const auto& f : corpus_files())
        if (f.relpath == relpath) return f;
    throw std::runtime_error("corpus file not in MANIFEST.tsv: " + relpath);
}

std::optional<std::string> expected_format(const CorpusFile& f) {
    static const std::map<std::string, std::string> by_folder = {
        {"q1_v29", "quake1"},     {"q1_bsp2", "bsp2"},    {"hl1_v30", "goldsrc"},     {"q2_v38", "quake2"},
        {"q3_v46", "quake3"},     {"q3_ibsp47", "quake3"}, {"nightfire_v42", "nightfire"}, {"src_v17", "source"},
        {"src_v19", "source"},    {"src_v20", "source"},  {"src_v20_lzma", "source"}, {"src_v21", "source"},
        {"src_v21_csgo", "source"}, {"src_console", "source"},
    };
    if (f.relpath == "q1_v29/hl_crossfire_bsp29.bsp") return "goldsrc";  // Half-Life map, v29 header
    const auto it = by_folder.find(f.folder);
    if (it == by_folder.end()) return std::nullopt;
    return it->second;
}

std::vector<const CorpusFile*> quake1_family_files() {
    std::vector<const CorpusFile*> out;
    for (const CorpusFile& f : corpus_files()) {
        const std::optional<std::string> format = expected_format(f);
        if (format == "quake1" || format == "bsp2" || format == "goldsrc") out.push_back(&f);
    }
    return out;
}

std::string test_name(const std::string& relpath) {
    std::string out;
    for (char c : relpath) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
}

}  // namespace bspkit::test
