"""Shared helpers of the Python test suite: the corpus (BSPKIT_CORPUS, its MANIFEST.tsv, as the C++
tests read it) and the command line built beside the module (BSPKIT_CLI). A corpus file listed in
the manifest that is absent fails the test that needs it; nothing is skipped."""
import json
import os
import subprocess
from pathlib import Path

import pytest

CORPUS = Path(os.environ.get("BSPKIT_CORPUS", Path(__file__).resolve().parents[3] / "shared" / "corpus"))
CLI = os.environ.get("BSPKIT_CLI", str(Path(__file__).resolve().parents[2] / "build" / "test" / "bspkit"))

# Format id per corpus folder (tests/support/corpus.cpp holds the same table for the C++ tests);
# folders absent here hold variants bspkit refuses by name.
FORMAT_BY_FOLDER = {
    "q1_v29": "quake1", "q1_bsp2": "bsp2", "hl1_v30": "goldsrc", "q2_v38": "quake2", "q3_v46": "quake3",
    "q3_ibsp47": "quake3", "nightfire_v42": "nightfire", "src_v17": "source", "src_v19": "source",
    "src_v20": "source", "src_v20_lzma": "source", "src_v21": "source", "src_v21_csgo": "source",
    "src_console": "source",
}
SPECIAL = {"q1_v29/hl_crossfire_bsp29.bsp": "goldsrc"}  # a Half-Life map with a v29 header


def manifest():
    path = CORPUS / "MANIFEST.tsv"
    if not path.is_file():
        raise RuntimeError(f"corpus manifest missing: {path} (set BSPKIT_CORPUS)")
    rows = []
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            if line.strip():
                rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    return rows


ROWS = manifest()
ALL = [r["relpath"] for r in ROWS]


def expected_format(relpath):
    return SPECIAL.get(relpath) or FORMAT_BY_FOLDER.get(relpath.split("/")[0])


SUPPORTED = [p for p in ALL if expected_format(p)]
REFUSED = [p for p in ALL if not expected_format(p)]


def corpus_path(relpath):
    p = CORPUS / relpath
    if not p.is_file():
        pytest.fail(f"corpus file missing: {p}")
    return p


def run_cli(*args, check=True, input=None):
    r = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, input=input)
    if check and r.returncode != 0:
        raise AssertionError(f"bspkit {' '.join(map(str, args))} exited {r.returncode}: {r.stderr}")
    return r


def cli_json(*args, check=True):
    return json.loads(run_cli(*args, "--json", check=check).stdout)
