// The size-vs-time curve of issue 9 ("cost must grow linearly"): whole
// `bspkit` processes on each generated map, each beside the floor of the same
// bytes moved by a trivial program, in the same run and interleaved run by run
// (process_runs.hpp, as process_bench: posix_spawn, wait4 for the child's CPU
// time and peak RSS, medians):
//   info     bspkit info FILE            vs cat FILE
//   check    bspkit check FILE           vs cat FILE   (must exit 0: 0 errors)
//   repack   bspkit repack FILE -o OUT   vs cp FILE OUT   (OUT must equal FILE byte for byte)
//   glb      bspkit export FILE -o .glb  vs cat FILE
//   glb-nolm bspkit export FILE -o .glb --no-lightmaps  vs cat FILE (the same without
//            the lightmap atlas, whose power-of-two width makes its cost grow in steps)
// Per size: MB, faces and nodes, each verb's wall time, its floor, the ratio,
// CPU times, and ms per MB; per verb: a least-squares line ms = a + b x MB
// over the sizes with its R^2, and ms per MB of the largest file over that of
// the smallest (1.0 = linear; the fixed start-up cost makes small files dearer
// per MB, so the fitted slope is the figure to compare).
#include "big_curve.hpp"
#include "process_runs.hpp"

#include <bspkit/bsp.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <unistd.h>

namespace bigmap {
namespace {

namespace fs = std::filesystem;

using Pair = bspkit::bench::ProcessPair;

Pair compare(const std::vector<std::string>& floor, const std::vector<std::string>& subject, int runs) {
    // Every command must succeed: check finds nothing on a generated map.
    return bspkit::bench::compare_processes(floor, subject, runs, "bspkit-bigmap",
                                            [](int code, const std::vector<std::string>&) { return code == 0; });
}

bool same_bytes(const fs::path& a, const fs::path& b) {
    if (fs::file_size(a) != fs::file_size(b)) return false;
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    std::vector<char> p(1 << 20), q(1 << 20);
    while (x && y) {
        x.read(p.data(), std::streamsize(p.size()));
        y.read(q.data(), std::streamsize(q.size()));
        if (x.gcount() != y.gcount() || !std::equal(p.begin(), p.begin() + x.gcount(), q.begin())) return false;
    }
    return true;
}

size_t count_of(const bspkit::Bsp& bsp, const char* lump) {
    const auto i = bsp.find_lump(lump);
    if (!i) return 0;
    return bsp.record_count(*i).value_or(0);
}

struct Row {
    double mb = 0;
    size_t faces = 0, nodes = 0;
    std::map<std::string, Pair> verbs;
};

struct Fit {
    double a = 0, b = 0, r2 = 0;  ///< ms = a + b * MB
};

Fit fit(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = double(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    Fit f;
    const double d = n * sxx - sx * sx;
    if (x.size() < 2 || d == 0) return f;
    f.b = (n * sxy - sx * sy) / d;
    f.a = (sy - f.b * sx) / n;
    double ss_res = 0, ss_tot = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        const double e = y[i] - (f.a + f.b * x[i]), m = y[i] - sy / n;
        ss_res += e * e, ss_tot += m * m;
    }
    f.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    return f;
}

const char* kVerbs[] = {"info", "check", "repack", "glb", "glb-nolm"};

}  // namespace

int run_curve(const std::vector<CurveFile>& files, int runs, const std::set<std::string>& only) {
    const std::string bspkit = BSPKIT_CLI_PATH;
    const fs::path out = fs::temp_directory_path() / ("bspkit_bigmap_curve_" + std::to_string(::getpid()));
    fs::create_directories(out);
    const std::string repacked = (out / "out.bsp").string(), glb = (out / "map.glb").string();
    std::vector<std::string> order;
    std::map<std::string, std::vector<Row>> tables;
    for (const CurveFile& file : files) {
        const std::string f = file.path.string();
        Row row;
        row.mb = double(fs::file_size(file.path)) / 1e6;
        {
            const bspkit::Bsp bsp = bspkit::Bsp::open(file.path);
            row.faces = count_of(bsp, "faces");
            row.nodes = count_of(bsp, "nodes");
        }
        for (const char* verb : kVerbs) {
            if (!only.empty() && !only.count(verb)) continue;
            const std::string v = verb;
            Pair p;
            if (v == "info") p = compare({"/bin/cat", f}, {bspkit, "info", f}, runs);
            if (v == "check") p = compare({"/bin/cat", f}, {bspkit, "check", f}, runs);
            if (v == "repack") {
                p = compare({"/bin/cp", f, repacked}, {bspkit, "repack", f, "-o", repacked}, runs);
                if (!same_bytes(file.path, repacked)) {
                    std::fprintf(stderr, "bspkit-bigmap: repack of %s is not byte-identical\n", f.c_str());
                    return 1;
                }
            }
            if (v == "glb") p = compare({"/bin/cat", f}, {bspkit, "export", f, "-o", glb}, runs);
            if (v == "glb-nolm") p = compare({"/bin/cat", f}, {bspkit, "export", f, "-o", glb, "--no-lightmaps"}, runs);
            row.verbs[v] = p;
            std::fprintf(stderr, "  %-7s %-28s %8.1f MB  %9.1f ms  floor %7.1f ms\n", verb,
                         file.path.filename().string().c_str(), row.mb, p.subject_ms, p.floor_ms);
        }
        if (!tables.count(file.format)) order.push_back(file.format);
        tables[file.format].push_back(row);
    }
    fs::remove_all(out);

    std::printf("\nbspkit-bigmap --curve: medians of %d runs of whole processes, each beside its floor in the same run\n"
                "(info, check, glb: cat FILE; repack: cp FILE OUT). wall = elapsed; cpu = user + system of the child (wait4).\n",
                runs);
    for (const std::string& format : order) {
        std::vector<Row>& rows = tables[format];
        std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.mb < b.mb; });
        std::printf("\n== %s\n%8s %9s %9s  %-8s %10s %9s %7s | %9s %8s %7s | %8s %9s %8s\n", format.c_str(), "MB", "faces",
                    "nodes", "verb", "wall ms", "floor ms", "ratio", "cpu ms", "floor", "ratio", "ms/MB", "cpu ms/MB",
                    "RSS MB");
        for (const Row& r : rows)
            for (const char* verb : kVerbs) {
                const auto it = r.verbs.find(verb);
                if (it == r.verbs.end()) continue;
                const Pair& p = it->second;
                std::printf("%8.1f %9zu %9zu  %-8s %10.1f %9.1f %7.2f | %9.1f %8.1f %7.2f | %8.2f %9.2f %8.0f\n", r.mb,
                            r.faces, r.nodes, verb, p.subject_ms, p.floor_ms, p.subject_ms / std::max(p.floor_ms, 1e-6), p.subject_cpu_ms,
                            p.floor_cpu_ms, p.subject_cpu_ms / std::max(p.floor_cpu_ms, 1e-6), p.subject_ms / r.mb, p.subject_cpu_ms / r.mb,
                            p.rss_mb);
            }
        std::printf("-- %s, per verb: least-squares line over the sizes (wall and cpu), and ms/MB largest / smallest\n",
                    format.c_str());
        for (const char* verb : kVerbs) {
            std::vector<double> x, wall, cpu, floor_wall;
            for (const Row& r : rows)
                if (const auto it = r.verbs.find(verb); it != r.verbs.end())
                    x.push_back(r.mb), wall.push_back(it->second.subject_ms), cpu.push_back(it->second.subject_cpu_ms),
                        floor_wall.push_back(it->second.floor_ms);
            if (x.size() < 2) continue;
            const Fit w = fit(x, wall), c = fit(x, cpu), fl = fit(x, floor_wall);
            std::printf("%-8s wall = %8.1f ms + %7.3f ms/MB (R^2 %.4f) | cpu = %8.1f ms + %7.3f ms/MB (R^2 %.4f) | "
                        "floor %7.3f ms/MB | ms/MB %.1f MB -> %.1f MB: %.2f -> %.2f (x%.2f)\n",
                        verb, w.a, w.b, w.r2, c.a, c.b, c.r2, fl.b, x.front(), x.back(), wall.front() / x.front(),
                        wall.back() / x.back(), (wall.back() / x.back()) / (wall.front() / x.front()));
        }
    }
    return 0;
}

}  // namespace bigmap
