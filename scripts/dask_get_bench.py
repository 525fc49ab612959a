#!/usr/bin/env python3
"""taskgraph.dask.get against dask.threaded.get, in one process, on the same
graphs, alternated.

Trivial tasks (what a scheduler costs per task), about 10^5 of them, each
graph in both forms dask 2026.8 accepts (legacy tuples and
`dask._task_spec.Task` objects):

  chain    100,000 tasks, each adding 1 to the one before
  tree     50,000 independent tasks reduced by a binary tree of `add`
           (99,999 tasks)
  stencil  a 316 x 316 grid: cell (i, j) sums cells (i-1, j-1), (i-1, j)
           and (i-1, j+1) of the row before (99,856 tasks)

and real array work: `(x + x.T).sum()` with x a 5,000 x 5,000 random array
in 50 x 50 chunks (10^4 chunks).

Each call is `get(dsk, keys, num_workers=2)`, the graph built before the
clock starts; conversion and ordering are inside the call, as they are in
dask's. Each pair is run `--repeat` times, alternating which goes first;
the script prints the median wall time of each and their ratio, and checks
that both return the same result.

Usage: python scripts/dask_get_bench.py [--repeat 5] [--only chain,tree]
(with taskgraph installed in the interpreter, as `pip install ./python`
does, and dask[array] 2026.8).
"""

import argparse
import statistics
import time
from operator import add

import dask
import dask.array as da
import dask.threaded
from dask._task_spec import Task, TaskRef

import taskgraph.dask


def inc(x):
    return x + 1


def add3(a, b, c):
    return a + b + c


def chain(n, tasks):
    if tasks:
        dsk = {("x", 0): Task(("x", 0), inc, 0)}
        for i in range(1, n):
            dsk[("x", i)] = Task(("x", i), inc, TaskRef(("x", i - 1)))
    else:
        dsk = {("x", 0): (inc, 0)}
        for i in range(1, n):
            dsk[("x", i)] = (inc, ("x", i - 1))
    return dsk, ("x", n - 1)


def tree(leaves, tasks):
    dsk = {}
    level = []
    for i in range(leaves):
        key = ("leaf", i)
        dsk[key] = Task(key, inc, i) if tasks else (inc, i)
        level.append(key)
    depth = 0
    while len(level) > 1:
        depth += 1
        up = []
        for j in range(0, len(level) - 1, 2):
            key = ("sum", depth, j // 2)
            a, b = level[j], level[j + 1]
            dsk[key] = Task(key, add, TaskRef(a), TaskRef(b)) if tasks else (add, a, b)
            up.append(key)
        if len(level) % 2:
            up.append(level[-1])
        level = up
    return dsk, level[0]


def stencil(side, tasks):
    dsk = {}
    for j in range(side):
        key = ("s", 0, j)
        dsk[key] = Task(key, inc, j) if tasks else (inc, j)
    for i in range(1, side):
        for j in range(side):
            key = ("s", i, j)
            a, b, c = (("s", i - 1, max(j - 1, 0)), ("s", i - 1, j), ("s", i - 1, min(j + 1, side - 1)))
            if tasks:
                dsk[key] = Task(key, add3, TaskRef(a), TaskRef(b), TaskRef(c))
            else:
                dsk[key] = (add3, a, b, c)
    return dsk, [("s", side - 1, j) for j in range(side)]


def array_work():
    x = da.random.RandomState(0).random_sample((5000, 5000), chunks=(50, 50))
    total = (x + x.T).sum()
    keys = total.__dask_keys__()
    return dict(total.__dask_graph__()), keys


def timed(get, dsk, keys):
    start = time.perf_counter()
    result = get(dsk, keys, num_workers=2)
    return time.perf_counter() - start, result


def compare(name, dsk, keys, repeat):
    ours, theirs = [], []
    for i in range(repeat):
        pair = [("taskgraph", taskgraph.dask.get, ours), ("dask", dask.threaded.get, theirs)]
        if i % 2:
            pair.reverse()
        results = {}
        for label, get, times in pair:
            seconds, result = timed(get, dsk, keys)
            times.append(seconds)
            results[label] = result
        if repr(results["taskgraph"]) != repr(results["dask"]):
            raise SystemExit(f"{name}: results differ: {results['taskgraph']!r} != {results['dask']!r}")
    a, b = statistics.median(ours), statistics.median(theirs)
    print(f"| {name} | {len(dsk):,} | {b:.3f} | {a:.3f} | {b / a:.1f}x |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated graph names")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    graphs = [
        ("chain", lambda t: chain(100_000, t)),
        ("tree", lambda t: tree(50_000, t)),
        ("stencil", lambda t: stencil(316, t)),
    ]
    print(f"dask {dask.__version__}, num_workers=2, median of {args.repeat}")
    print("| graph | tasks | dask.threaded.get (s) | taskgraph.dask.get (s) | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for name, build in graphs:
        if only and name not in only:
            continue
        for tasks in (False, True):
            dsk, keys = build(tasks)
            compare(f"{name} ({'Task objects' if tasks else 'tuples'})", dsk, keys, args.repeat)
    if not only or "array" in only:
        dsk, keys = array_work()
        compare("(x + x.T).sum(), 10^4 chunks", dsk, keys, args.repeat)


if __name__ == "__main__":
    main()
