#!/usr/bin/env python3
"""Python bindings benchmark (run by hand, see README "Python"):

    PYTHONPATH=build/test/python python3 bench/python_bench.py [MAP] [--cli build/test/bspkit]

1. Full decode of one map from Python: open + every lump's decoded bytes + entities + model
   (geometry, lightmap atlas, textures) + check, beside the floors measured in the same run: a plain
   open().read() of the file, and the C++ command line doing the survey's work (`bspkit survey MAP`:
   open + check + entities + geometry) next to the same work from Python (bspkit.survey_one).
   bsp_tool's full decode of oa_thor (20 s, 512 MB) is the figure quoted in issue 13, not measured
   here: bsp_tool is not packaged in Debian and nothing is fetched from PyPI. oa_thor is not in the
   corpus either; the default map is the biggest OpenArena map there (oa_oacmpctf3, 10 MB).
2. Array access overhead: creating a numpy view of the model's positions vs a plain C++ call
   through the binding (bsp.revision) vs copying the array.
3. Traces: N rays through bsp.trace (GIL released, every core) vs the C++ CLI's --rays run.
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import bspkit

ROOT = Path(__file__).resolve().parents[1]
BSP_TOOL_SECONDS = 20.0  # quoted (issue 13): bsp_tool's full decode of oa_thor


def best(fn, repeat=5):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def full_decode(path):
    bsp = bspkit.open(path)
    total = 0
    for lump in bsp.lumps.values():
        total += len(lump.data())
    ents = bsp.entities
    m = bsp.model()
    findings = bsp.check()
    return total, len(ents), len(m.indices), len(findings)


def main():
    ap = argparse.ArgumentParser()
    corpus = Path(os.environ.get("BSPKIT_CORPUS", ROOT.parent / "shared" / "corpus"))
    ap.add_argument("map", nargs="?", default=str(corpus / "q3_v46" / "oa_oacmpctf3.bsp"))
    ap.add_argument("--cli", default=str(ROOT / "build" / "test" / "bspkit"))
    ap.add_argument("--rays", type=int, default=200_000)
    a = ap.parse_args()
    path = a.map
    size = os.path.getsize(path)
    print(f"map: {path} ({size / 1e6:.1f} MB)")

    floor = best(lambda: open(path, "rb").read())
    decode = best(lambda: full_decode(path))
    lumps, ents, tris, findings = full_decode(path)
    print(f"\n1. full decode (open + {lumps} lump bytes + {ents} entities + {tris} triangles with lightmaps and "
          f"textures + check: {findings} findings)")
    print(f"   floor open().read():          {floor * 1e3:8.2f} ms")
    print(f"   bspkit from Python:           {decode * 1e3:8.2f} ms   {decode / floor:6.1f}x the floor")
    print(f"   bsp_tool (quoted, oa_thor):   {BSP_TOOL_SECONDS * 1e3:8.0f} ms   -> bspkit is "
          f"{BSP_TOOL_SECONDS / decode:.0f}x faster (goal >= 200x)")
    py_survey = best(lambda: bspkit.survey_one(path))
    cli_survey = best(lambda: subprocess.run([a.cli, "survey", path], capture_output=True, check=True))
    true = best(lambda: subprocess.run(["/bin/true"], capture_output=True, check=True))
    print(f"   survey record, Python:        {py_survey * 1e3:8.2f} ms")
    print(f"   survey record, C++ CLI:       {cli_survey * 1e3:8.2f} ms   (process start /bin/true: "
          f"{true * 1e3:.2f} ms)   Python / CLI = {py_survey / cli_survey:.2f}")
    print(f"   peak RSS of this process so far: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

    bsp = bspkit.open(path)
    m = bsp.model()
    n = 100_000
    t = time.perf_counter()
    for _ in range(n):
        m.positions
    view = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for _ in range(n):
        bsp.revision
    call = (time.perf_counter() - t) / n
    copy = best(lambda: np.array(m.positions), 20)
    print(f"\n2. array access ({m.positions.shape[0]} vertices)")
    print(f"   numpy view of positions:      {view * 1e9:8.0f} ns per access (no copy)")
    print(f"   plain C++ call (bsp.revision): {call * 1e9:7.0f} ns   view / call = {view / call:.1f}")
    print(f"   copying positions (np.array): {copy * 1e9:8.0f} ns   copy / view = {copy / view:.0f}")

    rng = np.random.default_rng(1)
    lo, hi = m.positions.min(axis=0), m.positions.max(axis=0)
    starts = rng.uniform(lo, hi, (a.rays, 3)).astype(np.float32)
    ends = rng.uniform(lo, hi, (a.rays, 3)).astype(np.float32)
    bsp.trace(starts[:10], ends[:10])  # prepares the collision world
    py_trace = best(lambda: bsp.trace(starts, ends), 3)
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        for s, e in zip(starts.tolist(), ends.tolist()):
            f.write(f"{s[0]!r},{s[1]!r},{s[2]!r} {e[0]!r},{e[1]!r},{e[2]!r}\n")
    try:
        cli_trace = best(lambda: subprocess.run([a.cli, "trace", path, "--rays", f.name], capture_output=True,
                                                check=True), 3)
    finally:
        os.unlink(f.name)
    print(f"\n3. {a.rays} line traces")
    print(f"   bsp.trace (numpy in/out):     {py_trace * 1e3:8.1f} ms   {py_trace / a.rays * 1e9:.0f} ns per ray")
    print(f"   bspkit trace --rays (CLI, text in / JSON lines out, whole process): {cli_trace * 1e3:.1f} ms   "
          f"CLI / Python = {cli_trace / py_trace:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
