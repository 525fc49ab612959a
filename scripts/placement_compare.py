#!/usr/bin/env python3
"""The default placement against METIS: edge cut and simulated wall time.

Writes every generator shape at each size with `taskgraph generate`, places
it with `taskgraph assign --workers K --json` (the default, `auto`, and
`--strategy time` / `cut` for reference), partitions it with METIS
(`scripts/metis_compare.py`, pymetis), and prints one Markdown row per graph
and k: METIS' cut, each placement's cut and its ratio to METIS', and the
default's simulated wall time over its bound. The target of the default is a
cut of at most 1.5 x METIS' + 2.

    python scripts/placement_compare.py [--taskgraph target/release/taskgraph]
        [--sizes 1000 10000 100000 1000000] [--k 4 8 16] [--out target/placement-graphs]

Run it with a Python that has pymetis (`pip install pymetis`).
"""

import argparse
import json
import os
import subprocess
import sys

SHAPES = ["chain", "tree", "diamonds", "random", "array-sum-transpose",
          "array-overlap", "array-cumsum", "shuffle"]


def assign(taskgraph, path, k, strategy):
    cmd = [taskgraph, "assign", path, "--workers", str(k), "--json"]
    if strategy != "auto":
        cmd += ["--strategy", strategy]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    report = json.loads(out)
    report.pop("assignment")
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--k", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--out", default="target/placement-graphs")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    here = os.path.dirname(os.path.abspath(__file__))
    print("| shape | tasks | k | METIS | auto | auto/METIS | took | makespan/bound | time | cut |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
    misses = 0
    rows = 0
    for tasks in args.sizes:
        for shape in SHAPES:
            path = os.path.join(args.out, f"{shape}-{tasks}.json")
            subprocess.run([args.taskgraph, "generate", shape, "--tasks", str(tasks),
                            "--seed", "0", "-o", path], check=True)
            metis = subprocess.run(
                [sys.executable, os.path.join(here, "metis_compare.py"), path,
                 "--k", *map(str, args.k)],
                check=True, capture_output=True, text=True).stdout
            metis = {line["k"]: line for line in map(json.loads, metis.splitlines())}
            for k in args.k:
                ours = {s: assign(args.taskgraph, path, k, s) for s in ["auto", "time", "cut"]}
                auto = ours["auto"]
                cut = metis[k]["edge_cut"]
                # Which one auto took: the one whose cut it has.
                took = "cut" if auto["edge_cut"] == ours["cut"]["edge_cut"] else "time"
                ratio = auto["edge_cut"] / cut if cut else float("inf") if auto["edge_cut"] else 1.0
                ok = auto["edge_cut"] <= 1.5 * cut + 2
                misses += not ok
                rows += 1
                mark = "" if ok else " **miss**"
                print(f"| {shape} | {metis[k]['tasks']} | {k} | {cut} | {auto['edge_cut']} | "
                      f"{ratio:.2f}{mark} | {took} | {auto['makespan'] / auto['makespan_bound']:.2f} | "
                      f"{ours['time']['edge_cut']} | {ours['cut']['edge_cut']} |", flush=True)
    print(f"\n{rows - misses} of {rows} within 1.5 x METIS + 2.")


if __name__ == "__main__":
    main()
