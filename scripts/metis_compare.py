#!/usr/bin/env python3
"""Partition taskgraph-json/1 graphs with METIS (pymetis) for comparison.

For every FILE and every k (4, 8, 16 by default), builds the undirected graph
of the dependencies (one edge per distinct dependency, unit weights), asks
METIS for k parts with at most 3% imbalance (ufactor 30), and prints one JSON
line: {"file", "tasks", "edges", "k", "edge_cut", "imbalance", "seconds"}.
The imbalance is the largest part over the average part (tasks per part).

    target/venv-bench/bin/python scripts/metis_compare.py FILE... [--k 4 8 16]

(`cargo xtask bench --compare` makes that venv, with pymetis from PyPI, and
runs this partitioning against `taskgraph assign` through
scripts/bench_compare.py.)

Files may be gzip-compressed (by their .gz suffix).
"""

import argparse
import gzip
import json
import sys
import time


def key_id(key):
    """A hashable spelling of a JSON key (string, number, or nested array)."""
    return json.dumps(key, separators=(",", ":"))


def term_refs(term, out):
    """Appends every key referenced by a term to `out`."""
    stack = [term]
    while stack:
        t = stack.pop()
        if isinstance(t, dict):
            if "ref" in t:
                out.append(key_id(t["ref"]))
            elif "call" in t:
                stack.extend(t.get("args", []))
            elif "list" in t:
                stack.extend(t["list"])


def read_graph(path):
    """Returns (number of tasks, sorted list of undirected edges (a, b), a < b)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    if doc.get("format") != "taskgraph-json/1":
        raise SystemExit(f"{path}: not a taskgraph-json/1 file")
    tasks = doc["tasks"]
    index = {key_id(t["key"]): i for i, t in enumerate(tasks)}
    edges = set()
    for i, t in enumerate(tasks):
        refs = []
        if "deps" in t:
            refs = [key_id(k) for k in t["deps"]]
        elif "task" in t:
            term_refs(t["task"], refs)
        for r in refs:
            j = index.get(r)
            if j is None:
                raise SystemExit(f"{path}: task {t['key']} refers to a missing key {r}")
            if j != i:
                edges.add((min(i, j), max(i, j)))
    return len(tasks), sorted(edges)


def csr(n, edges):
    adjacency = [[] for _ in range(n)]
    for a, b in edges:
        adjacency[a].append(b)
        adjacency[b].append(a)
    xadj, adjncy = [0], []
    for row in adjacency:
        adjncy.extend(row)
        xadj.append(len(adjncy))
    return xadj, adjncy


def partition(pymetis, n, edges, xadj, adjncy, k, ufactor=30):
    """METIS' k-way partition of the graph: its edge cut, imbalance and time."""
    options = pymetis.Options(ufactor=ufactor)
    start = time.perf_counter()
    if hasattr(pymetis, "CSRAdjacency"):
        graph = {"adjacency": pymetis.CSRAdjacency(xadj, adjncy)}
    else:  # pymetis before 2025
        graph = {"xadj": xadj, "adjncy": adjncy}
    _, parts = pymetis.part_graph(k, options=options, **graph)
    seconds = time.perf_counter() - start
    cut = sum(1 for a, b in edges if parts[a] != parts[b])
    sizes = [0] * k
    for p in parts:
        sizes[p] += 1
    imbalance = max(sizes) / (n / k) if n else 1.0
    return {"edge_cut": cut, "imbalance": round(imbalance, 4), "seconds": seconds}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--k", nargs="+", type=int, default=[4, 8, 16])
    parser.add_argument("--ufactor", type=int, default=30,
                        help="allowed imbalance in thousandths (30: 3%%)")
    args = parser.parse_args()
    try:
        import pymetis
    except ImportError:
        raise SystemExit("pymetis is not installed: pip install pymetis")
    for path in args.files:
        n, edges = read_graph(path)
        xadj, adjncy = csr(n, edges)
        for k in args.k:
            result = partition(pymetis, n, edges, xadj, adjncy, k, args.ufactor)
            result["seconds"] = round(result["seconds"], 4)
            print(json.dumps({"file": path, "tasks": n, "edges": len(edges), "k": k, **result}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
