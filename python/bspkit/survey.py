"""Surveys of map archives on a distributed engine (Dask).

One record per map (:func:`bspkit.survey_one`: format, version, lump counts, check findings,
entity classes, texture names, world bounds), computed where the work runs and gathered into one
table::

    from dask.distributed import Client, LocalCluster
    import bspkit.survey

    client = Client(LocalCluster(n_workers=2, threads_per_worker=1))   # or Client("tcp://scheduler:8786")
    lines = bspkit.survey.run_lines("/data/maps", client=client)        # JSON lines, sorted by path
    bspkit.survey.write(lines, "survey.jsonl")                          # or .csv
    df = bspkit.survey.to_frame(lines)                                  # pandas

Without a client the records are computed in this process, one after the other (the reference the
cluster's table is compared with). The workers need bspkit importable and the map paths readable
(a shared file system, as on any Dask cluster that reads files). Each task is one map: a map that
fails to open is a row with ``error`` set, never a failed task.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Union

from . import _bspkit

__all__ = ["survey_line", "run_lines", "run", "to_frame", "write"]

PathLike = Union[str, os.PathLike]


def survey_line(path: PathLike) -> str:
    """One map's record as the JSON line `bspkit survey` writes for it (no newline)."""
    return _bspkit.survey_json(os.fspath(path))


def run_lines(*roots: PathLike, client: Any = None, batch: int = 1) -> list[str]:
    """The survey of every map under ``roots`` as JSON lines, in path order.

    client: a ``dask.distributed.Client`` (a LocalCluster's or a remote scheduler's); None runs
    in this process. batch: maps per task (1 is best for archives of big maps; raise it for
    thousands of small ones to cut scheduler overhead).
    """
    from . import find_maps

    paths = find_maps(*roots)
    if client is None:
        return [survey_line(p) for p in paths]
    batch = max(1, int(batch))
    chunks = [paths[i:i + batch] for i in range(0, len(paths), batch)]
    futures = client.map(_survey_chunk, chunks, pure=False)
    lines: list[str] = []
    for part in client.gather(futures):
        lines.extend(part)
    return lines


def _survey_chunk(paths: list[str]) -> list[str]:
    return [survey_line(p) for p in paths]


def to_frame(lines: list[str]):
    """The JSON lines as a pandas DataFrame (one row per map; nested fields stay dicts / lists)."""
    import pandas as pd

    return pd.DataFrame.from_records([json.loads(line) for line in lines])


def write(lines: list[str], out: PathLike) -> None:
    """Writes the table: JSON lines (.jsonl / .json, byte for byte what `bspkit survey -o` writes)
    or CSV (.csv: nested fields as JSON text). Temporary file + rename."""
    out = os.fspath(out)
    tmp = out + ".tmp"
    if out.lower().endswith(".csv"):
        frame = to_frame(lines)
        if "version" in frame:  # None for BSP2 / unreadable files: keep the others integers
            frame["version"] = frame["version"].astype("Int64")
        for col in frame.columns:
            if frame[col].map(lambda v: isinstance(v, (dict, list))).any():
                frame[col] = frame[col].map(lambda v: json.dumps(v, ensure_ascii=False))
        frame.to_csv(tmp, index=False)
    else:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
    os.replace(tmp, out)


def run(*roots: PathLike, client: Any = None, out: Optional[PathLike] = None, batch: int = 1):
    """run_lines(), then write() to ``out`` when given; returns the pandas DataFrame."""
    lines = run_lines(*roots, client=client, batch=batch)
    if out is not None:
        write(lines, out)
    return to_frame(lines)
