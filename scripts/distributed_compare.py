#!/usr/bin/env python3
"""Time dask.distributed against `taskgraph run --processes 2` on the same graphs.

Each graph is written by `taskgraph generate SHAPE --tasks N`. dask runs it on
a `LocalCluster` of 2 worker processes with 1 thread each (started once,
outside the timing) through `Client.get`; taskgraph runs it on 2 worker
processes with `taskgraph run FILE --processes 2 --json`, whose `seconds`
cover connecting the processes and running (not starting them or reading the
file). The tasks are trivial (`inc`, `add`, `sum` on small integers), so the
time per task is the system's overhead per task. Beside each, the edge cut:
`cut_edges` as our run counted it and `edge_cut` as `taskgraph assign
--workers 2` predicted it.

Usage: scripts/distributed_compare.py --taskgraph target/release/taskgraph \
           [--shapes chain,tree,...] [--sizes 1000,10000] [--out target/compare]

Needs dask and distributed (`pip install dask distributed`). Prints one JSON
object per measurement, then a Markdown table.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dask_compare import leaves, load  # noqa: E402

SHAPES = ["chain", "tree", "array-sum-transpose", "shuffle", "random"]


def ours(taskgraph, path):
    """Seconds, tasks and cut edges of `taskgraph run --processes 2`."""
    started = time.perf_counter()
    out = subprocess.run([taskgraph, "run", path, "--processes", "2", "--json"],
                         check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - started
    report = json.loads(out)
    return report, wall


def predicted_cut(taskgraph, path):
    out = subprocess.run([taskgraph, "assign", path, "--workers", "2", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["edge_cut"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--repeat", type=int, default=3, help="best of N runs")
    parser.add_argument("--out", default="target/compare")
    args = parser.parse_args()
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as err:
        sys.exit(f"distributed_compare: needs dask and distributed ({err})")

    os.makedirs(args.out, exist_ok=True)
    # Worker processes unpickle the ops by reference to this directory's modules.
    os.environ["PYTHONPATH"] = os.path.dirname(os.path.abspath(__file__)) + os.pathsep + os.environ.get("PYTHONPATH", "")
    rows = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.get({"warm": (sum, [1, 2])}, "warm")
        for shape in args.shapes.split(","):
            for size in map(int, args.sizes.split(",")):
                path = os.path.join(args.out, f"{shape}-{size}.json")
                subprocess.run([args.taskgraph, "generate", shape, "--tasks", str(size), "-o", path],
                               check=True, capture_output=True)
                dsk = load(path)
                keys = leaves(dsk)
                theirs = []
                for _ in range(args.repeat):
                    started = time.perf_counter()
                    client.get(dsk, keys, sync=True)
                    theirs.append(time.perf_counter() - started)
                mine = [ours(args.taskgraph, path) for _ in range(args.repeat)]
                report, wall = min(mine, key=lambda m: m[0]["seconds"])
                row = {
                    "shape": shape,
                    "tasks": len(dsk),
                    "dask_seconds": min(theirs),
                    "taskgraph_seconds": report["seconds"],
                    "taskgraph_wall_seconds": min(m[1] for m in mine),
                    "cut_edges": report["cut_edges"],
                    "predicted_cut": predicted_cut(args.taskgraph, path),
                    "values_sent": report["values_sent"],
                    "dask_version": dask.__version__,
                }
                print(json.dumps(row), flush=True)
                rows.append(row)
    print()
    print("| shape | tasks | dask.distributed (s) | us/task | taskgraph (s) | us/task | less overhead | cut edges (run / predicted) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        d, t = r["dask_seconds"], r["taskgraph_seconds"]
        print(f"| {r['shape']} | {r['tasks']} | {d:.4f} | {d / r['tasks'] * 1e6:.0f} | {t:.4f} | "
              f"{t / r['tasks'] * 1e6:.2f} | {d / t:.0f}x | {r['cut_edges']} / {r['predicted_cut']} |")


if __name__ == "__main__":
    main()
