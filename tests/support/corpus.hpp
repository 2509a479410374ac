// The real-map corpus beside the checkout (../shared/corpus). Tests that need
// it fail loudly when it is missing: they never pass by skipping.
#pragma once

#include <bspkit/bytes.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace bspkit::test {

struct CorpusFile {
    std::string relpath;   ///< e.g. "q2_v38/q2_base1.bsp"
    std::string folder;    ///< e.g. "q2_v38"
    uint64_t size = 0;
    std::string sha256;
    std::string magic;     ///< as in the manifest: "IBSP", "int29", ...
    std::string version;   ///< as in the manifest: "38", "n/a (...)"
    std::filesystem::path path;
};

std::filesystem::path corpus_dir();
/// Every row of MANIFEST.tsv. Throws (failing the test) when the manifest is missing.
const std::vector<CorpusFile>& corpus_files();
/// Reads a corpus file; fails the test (throws) when it is absent.
Bytes read_corpus(const CorpusFile& f);
const CorpusFile& corpus_file(const std::string& relpath);

/// The format id a corpus folder holds, or nullopt for folders of variants
/// bspkit refuses ("other", "titanfall").
std::optional<std::string> expected_format(const CorpusFile& f);
/// The corpus's Quake 1 family maps (quake1, bsp2, goldsrc): every one is cut from a tree or a BRUSHLIST.
std::vector<const CorpusFile*> quake1_family_files();

/// Gtest parameter names from paths.
std::string test_name(const std::string& relpath);

}  // namespace bspkit::test
