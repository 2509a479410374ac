// Validation of every cross-reference of a map (`bspkit check`).
#pragma once

#include <bspkit/bsp.hpp>

#include <string>
#include <vector>

namespace bspkit {

/// One finding: which lump, which record and which field, and what is wrong.
/// Engine limits (MAX_MAP_*) are warnings; broken references are errors.
struct Finding {
    Severity severity = Severity::error;
    std::string lump;        ///< lump name as in the format table
    int64_t record = -1;     ///< record index inside the lump, -1 for the lump as a whole
    std::string field;       ///< field name as in the spec struct, empty for the lump as a whole
    std::string message;
    int64_t offset = -1;     ///< absolute file offset the finding points at, -1 when none applies
};

struct CheckReport {
    std::vector<Finding> findings;
    size_t errors() const noexcept;
    size_t warnings() const noexcept;
    size_t infos() const noexcept;
    bool ok() const noexcept { return errors() == 0; }
    void error(std::string lump, int64_t record, std::string field, std::string message);
    void warning(std::string lump, int64_t record, std::string field, std::string message);
    void info(std::string lump, int64_t record, std::string field, std::string message);
};

/// Runs every check for the map's format. Container diagnostics (lumps past
/// the end of the file, overlaps, ...) are included as findings; a lump other
/// than the entity lump that runs past the end of the file is an error here.
CheckReport check(const Bsp& bsp);

/// "error" / "warning" / "info".
const char* severity_word(Severity severity) noexcept;

/// The text `bspkit check FILE` prints on stdout, line by line (without
/// newlines): one line per finding, "FILE: lump L record R field F at offset
/// N: SEVERITY: MESSAGE" (the parts that apply); unless `verbose`, lump-wide
/// findings (no record, no field) with the same severity and words on two or
/// more lumps fold into one line "FILE: SEVERITY: K lumps: MESSAGE: L1, L2
/// (--verbose lists each)" at the first one's place; then the summary line
/// "FILE: FORMAT (version V): E errors, W warnings". `file` is the name to
/// print. line_of_finding[i] is the index in `lines` of finding i's line.
struct CheckText {
    std::vector<std::string> lines;
    std::vector<size_t> line_of_finding;
};
CheckText check_text(const std::string& file, const Bsp& bsp, const CheckReport& report, bool verbose = false);

class EntityLump;
/// Entity checks shared by every format (part of check()): the lump parses
/// (a syntax error is reported with its byte offset), entity 0 is worldspawn,
/// each "model" "*N" names a record of the models lump and no two entities
/// use the same brush model.
void check_entities(const Bsp& bsp, CheckReport& report);
/// The same checks on an already parsed lump (syntax excepted).
void check_entities(const Bsp& bsp, const EntityLump& lump, CheckReport& report);

// Per-format checks, each in its format's folder.
namespace quake1 { void check(const Bsp& bsp, CheckReport& report); }     // quake1, bsp2, goldsrc
namespace quake2 { void check(const Bsp& bsp, CheckReport& report); }
namespace quake3 { void check(const Bsp& bsp, CheckReport& report); }
namespace nightfire { void check(const Bsp& bsp, CheckReport& report); }
namespace source { void check(const Bsp& bsp, CheckReport& report); }

}  // namespace bspkit
