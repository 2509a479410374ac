#!/usr/bin/env python3
"""Survey a map archive on a Dask cluster and write one table.

    python3 dask_survey.py /data/maps -o survey.jsonl                 # a LocalCluster on this machine
    python3 dask_survey.py /data/maps -o survey.csv --workers 8
    python3 dask_survey.py /data/maps -o survey.jsonl --scheduler tcp://10.0.0.5:8786   # an existing cluster

On a multi-machine cluster every worker needs bspkit installed (pip install . from the checkout)
and the maps at the same path (a shared file system). Then, in pandas:

    import pandas as pd
    df = pd.read_json("survey.jsonl", lines=True)
    df.groupby(["format", "version"]).size()
"""
import argparse
import sys
import time

import bspkit.survey


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="+", help="directories (searched for *.bsp) or map files")
    ap.add_argument("-o", "--output", required=True, help="table to write: .jsonl or .csv")
    ap.add_argument("--scheduler", help="address of a running Dask scheduler (default: start a LocalCluster)")
    ap.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    ap.add_argument("--batch", type=int, default=1, help="maps per task (default 1)")
    args = ap.parse_args()

    from dask.distributed import Client, LocalCluster

    start = time.perf_counter()
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None))
    with client:
        lines = bspkit.survey.run_lines(*args.roots, client=client, batch=args.batch)
    bspkit.survey.write(lines, args.output)
    frame = bspkit.survey.to_frame(lines)
    bad = int(frame["error"].notna().sum()) if len(frame) else 0
    print(f"{len(lines)} maps ({bad} unreadable) in {time.perf_counter() - start:.1f} s -> {args.output}",
          file=sys.stderr)
    if len(frame):
        print(frame.groupby(["format", "version"], dropna=False).size().to_string(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
