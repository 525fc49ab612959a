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

Then tasks that take time (`--only sleeping`): each task sleeps 2 ms
(`time.sleep`, which releases the GIL, as numpy does), on 8 independent
chains of 25 tasks, a 4-ary reduction tree over 256 leaves, and a 16 x 16
wavefront (cell (i, j) reads (i-1, j) and (i, j-1)). Each is run with
taskgraph on 1 and 4 workers and with dask.threaded on 4, against the bound
no scheduler beats with 4 workers, max(work / 4, critical path).

Each call is `get(dsk, keys, num_workers=2)`, the graph built before the
clock starts; conversion and ordering are inside the call, as they are in
dask's. Each pair is run `--repeat` times, alternating which goes first;
the script prints the median wall time of each and their ratio, and checks
that both return the same result.

Usage: python scripts/dask_get_bench.py [--repeat 5] [--only chain,tree,sleeping]
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


SLEEP = 0.002


def nap(*_):
    time.sleep(SLEEP)
    return 1


def sleeping_graphs():
    """(name, dsk, keys, tasks, critical path in tasks) of sleeping tasks."""
    chains = {}
    for c in range(8):
        chains[("c", c, 0)] = (nap,)
        for i in range(1, 25):
            chains[("c", c, i)] = (nap, ("c", c, i - 1))
    tree, level = {}, []
    for i in range(256):
        tree[("l", i)] = (nap,)
        level.append(("l", i))
    depth = 1
    while len(level) > 1:
        up = []
        for j in range(0, len(level), 4):
            key = ("t", depth, j)
            tree[key] = (nap, *level[j : j + 4])
            up.append(key)
        level, depth = up, depth + 1
    grid = {}
    for i in range(16):
        for j in range(16):
            deps = ([("g", i - 1, j)] if i else []) + ([("g", i, j - 1)] if j else [])
            grid[("g", i, j)] = (nap, *deps)
    return [
        ("8 chains x 25", chains, [("c", c, 24) for c in range(8)], len(chains), 25),
        ("4-ary tree, 256 leaves", tree, level, len(tree), depth),
        ("16 x 16 wavefront", grid, [("g", 15, 15)], len(grid), 31),
    ]


def sleeping(repeat):
    print(f"\nTasks sleeping {SLEEP * 1e3:.0f} ms each; median of {repeat}; bound = max(work / 4, critical path)")
    print("| graph | tasks | bound (s) | taskgraph, 1 worker | taskgraph, 4 workers | dask.threaded, 4 workers |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, dsk, keys, tasks, path in sleeping_graphs():
        bound = max(tasks * SLEEP / 4, path * SLEEP)
        runs = [(taskgraph.dask.get, 1), (taskgraph.dask.get, 4), (dask.threaded.get, 4)]
        times = [[] for _ in runs]
        for i in range(repeat):
            order = list(enumerate(runs))
            if i % 2:
                order.reverse()
            for k, (get, workers) in order:
                start = time.perf_counter()
                get(dsk, keys, num_workers=workers)
                times[k].append(time.perf_counter() - start)
        cells = [f"{statistics.median(t):.3f} ({statistics.median(t) / bound:.2f}x)" for t in times]
        print(f"| {name} | {tasks} | {bound:.3f} | {' | '.join(cells)} |", flush=True)


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
    if not only or "sleeping" in only:
        sleeping(args.repeat)


if __name__ == "__main__":
    main()
