#!/usr/bin/env python3
"""Is the scheduler parallel on real work? Graphs of sleeping tasks, timed
against the best time any scheduler could reach with 4 workers.

Every task sleeps `--sleep` seconds (4 ms by default) in the built-in op
`sleep(x, seconds)`, so its work takes no CPU and W workers can overlap W
sleeps even on a machine with fewer cores. x is the built-in `checksum` of
the values of the task's dependencies (an integer literal for a root), so
each output is a 64-bit integer that depends on every task upstream of it
and on the order of each task's inputs: two runs that give the same outputs
ran the same graph. (A sum would overflow 64 bits on the grid and the random
DAG.) The shapes, with their default sizes:

  chains   8 independent chains of 200 tasks; outputs: the 8 chain ends
  grid     a 40 x 40 wavefront: cell (i, j) reads (i-1, j) and (i, j-1);
           output: the corner (39, 39)
  tree     a 4-ary reduction tree over 1,024 leaves (1,365 tasks)
  random   2,000 tasks, each reading 1 to 3 random tasks among the 60 before
           it (seeded); outputs: the tasks nobody reads
  shuffle  dask's task-based shuffle of 64 partitions in 3 stages of 4-way
           exchanges: in each stage every partition is split in 4 pieces and
           every new partition joins the 4 pieces meant for it, so after the
           3 stages each of the 64 outputs depends on every input (1,024
           tasks, at most 4 dependencies each)
  overlap  map_overlap in 1-D: 400 blocks; block i of stage 2 reads blocks
           i-1, i, i+1 of stage 1, and stage 3 the same of stage 2; then a
           4-ary tree reduction of stage 3 (1,335 tasks)

For each graph: its tasks; work = tasks x sleep; critical path = the longest
chain of tasks x sleep; bound = max(work / 4, critical path), the least wall
time 4 workers can take. Each graph is written to `--out` as taskgraph-json/1
and run, `--repeat` times each:

  `taskgraph run FILE --threads 1 --json`
  `taskgraph run FILE --threads 4 --json`
  `taskgraph run FILE --processes 4 --json`
  dask.threaded.get(dsk, outputs, num_workers=4), on the same file turned into
  a dask graph (keys: arrays become tuples; refs become keys; ops become
  Python functions, `sleep` being time.sleep then return x, `checksum` the
  same hash as ours)

taskgraph's time is the whole process's (time.perf_counter around
subprocess.run; the JSON's own "seconds" is recorded too); dask's is the `get`
call's alone, dask being imported, and the graph read and converted, before
the clock starts. dask runs in the venv's Python (`--python`, by default
target/venv-bench/bin/python, as `cargo xtask bench --compare` makes it),
which runs this very file as its worker; the driver needs only the standard
library. Every run must give the results of the first one, dask's included.

Prints one JSON object per measurement (median of the runs, every run's
time, and the ratio to the bound), then a Markdown table of medians, each as
`X.XX s (R.RRx)`, R being the time over the bound.

Usage: python3 scripts/parallel_bench.py --taskgraph target/release/taskgraph \
           [--repeat 3] [--sleep 0.004] [--shapes chains,grid,tree,random,shuffle,overlap] \
           [--out target/parallel] [--scale 0.1] [--workers 4] [--no-dask]

`--scale F` multiplies the size of every graph by about F (the grid's side
by sqrt(F)) for a quick smoke run; each size has its own option too.

`--sized` makes every result really take bytes, and say so: each task is
`blob(B, sleep(...))` with `"size": B`, B spread over 64 KiB to 1 MiB by the
task's position, so that several threads run within the order's byte
profile (1.1 times its peak bytes plus a largest result per thread) instead
of its count of results. dask is not run then (it has no `blob`).
"""

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time

from speed_common import cpu_model

SHAPES = ["chains", "grid", "tree", "random", "shuffle", "overlap"]

MASK = (1 << 64) - 1


def checksum(*values):
    """The built-in `checksum` (graph-exec's builtins.rs) of integers: the
    same multiply-and-shift mixer over the same words, as a signed 64-bit
    integer."""
    h = 0x243F_6A88_85A3_08D3
    for value in values:
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"checksum of {type(value).__name__}: only integers are mirrored here")
        for word in (4, value & MASK):
            h = ((h ^ word) * 0x9E37_79B9_7F4A_7C15) & MASK
            h ^= h >> 29
    return h - (1 << 64) if h >> 63 else h


# ---------------------------------------------------------------- the graphs


class Graph:
    """Tasks in topological order, each a sleep on the checksum of its
    dependencies, with the length of the longest chain ending at each."""

    def __init__(self, name, sleep, sized=False):
        self.name = name
        self.sleep = sleep
        self.sized = sized
        self.tasks = []
        self.depth = {}
        self.outputs = []

    def add(self, key, deps, seed=None):
        """Adds task `key` (a tuple) reading `deps` (keys added before), or,
        without deps, starting from the integer `seed`; returns the key."""
        if deps:
            value = {"call": "checksum", "args": [{"ref": d} for d in deps]}
        else:
            value = seed
        term = {"call": "sleep", "args": [value, self.sleep]}
        if not self.sized:
            self.tasks.append({"key": key, "task": term})
        else:
            size = 65_536 + (len(self.tasks) * 2_654_435_761) % (1_048_576 - 65_536)
            self.tasks.append({"key": key, "task": {"call": "blob", "args": [size, term]}, "size": size})
        self.depth[key] = 1 + max((self.depth[d] for d in deps), default=0)
        return key

    def stats(self, workers):
        work = len(self.tasks) * self.sleep
        critical = max(self.depth.values()) * self.sleep
        return {"tasks": len(self.tasks), "work": work, "critical_path": critical,
                "bound": max(work / workers, critical)}

    def write(self, path):
        with open(path, "w") as f:
            json.dump({"format": "taskgraph-json/1", "tasks": self.tasks}, f)


def reduce_tree(g, name, keys, arity):
    """An arity-ary reduction of `keys` to one task; returns its key."""
    level = 1
    while len(keys) > 1:
        keys = [g.add((name, level, i), keys[i * arity:(i + 1) * arity])
                for i in range(math.ceil(len(keys) / arity))]
        level += 1
    return keys[0]


def chains(g, args):
    for c in range(args.chains):
        prev = g.add(("chain", c, 0), [], seed=c + 1)
        for i in range(1, args.chain_length):
            prev = g.add(("chain", c, i), [prev])
        g.outputs.append(prev)


def grid(g, args):
    n = args.grid_side
    for i in range(n):
        for j in range(n):
            deps = ([("grid", i - 1, j)] if i else []) + ([("grid", i, j - 1)] if j else [])
            g.add(("grid", i, j), deps, seed=1)
    g.outputs.append(("grid", n - 1, n - 1))


def tree(g, args):
    leaves = [g.add(("tree", 0, i), [], seed=i + 1) for i in range(args.tree_leaves)]
    g.outputs.append(reduce_tree(g, "tree", leaves, args.arity))


def random_dag(g, args):
    rng = random.Random(args.seed)
    read = set()
    for i in range(args.random_tasks):
        window = range(max(0, i - args.random_window), i)
        deps = [("random", d) for d in sorted(rng.sample(window, min(i, rng.randint(1, 3))))]
        read.update(deps)
        g.add(("random", i), deps, seed=i + 1)
    g.outputs.extend(t["key"] for t in g.tasks if t["key"] not in read)


def shuffle(g, args):
    k, stages = args.shuffle_width, args.shuffle_stages
    n = k ** stages
    parts = [g.add(("shuffle-input", p), [], seed=p + 1) for p in range(n)]
    for s in range(stages):
        # Stage s exchanges along digit s (base k) of the partition number:
        # partition q joins piece digit(q) of each partition differing from q
        # in that digit alone.
        stride = k ** s
        splits = {(p, d): g.add(("shuffle-split", s + 1, p, d), [parts[p]])
                  for p in range(n) for d in range(k)}

        def digit(q):
            return (q // stride) % k

        parts = [g.add(("shuffle-join", s + 1, q),
                       [splits[(q + (e - digit(q)) * stride, digit(q))] for e in range(k)])
                 for q in range(n)]
    g.outputs.extend(parts)


def overlap(g, args):
    blocks = [g.add(("overlap", 1, i), [], seed=i + 1) for i in range(args.overlap_blocks)]
    for stage in (2, 3):
        blocks = [g.add(("overlap", stage, i), blocks[max(0, i - 1):i + 2]) for i in range(len(blocks))]
    g.outputs.append(reduce_tree(g, "overlap-sum", blocks, args.arity))


BUILDERS = {"chains": chains, "grid": grid, "tree": tree, "random": random_dag,
            "shuffle": shuffle, "overlap": overlap}


def scaled(args):
    """Shrinks (or grows) every size by --scale."""
    f = args.scale
    if f == 1:
        return
    args.chain_length = max(2, round(args.chain_length * f))
    args.grid_side = max(2, round(args.grid_side * math.sqrt(f)))
    args.tree_leaves = max(2, round(args.tree_leaves * f))
    args.random_tasks = max(2, round(args.random_tasks * f))
    args.shuffle_width = max(2, round((args.shuffle_width ** args.shuffle_stages * f) ** (1 / args.shuffle_stages)))
    args.overlap_blocks = max(2, round(args.overlap_blocks * f))


# ------------------------------------------------------------------ the runs


def tuplify(key):
    return tuple(tuplify(k) for k in key) if isinstance(key, list) else key


def results_of(pairs):
    """[[KEY, VALUE], ...] as a dict with hashable keys."""
    return {tuplify(k): v for k, v in pairs}


def run_taskgraph(taskgraph, path, keys, flags, timeout):
    """One `taskgraph run`: (wall seconds, the JSON report)."""
    cmd = [taskgraph, "run", path, "--json", "--keys", json.dumps(keys), *flags]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd[:3])} {' '.join(flags)} failed:\n{proc.stderr}")
    return wall, json.loads(proc.stdout)


def edge_cut(taskgraph, path, workers, strategy):
    """The edges `taskgraph assign --strategy STRATEGY` cuts on `workers`."""
    cmd = [taskgraph, "assign", path, "--workers", str(workers), "--strategy", strategy, "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)["edge_cut"]


def run_dask(python, path, keys, workers, repeat, timeout):
    """dask.threaded.get `repeat` times in the venv's Python: (the get calls'
    seconds, the results)."""
    job = json.dumps({"graph": path, "keys": keys, "workers": workers, "repeat": repeat})
    proc = subprocess.run([python, os.path.abspath(__file__), "--dask-worker"],
                          input=job, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"dask.threaded.get on {path} failed:\n{proc.stderr}")
    report = json.loads(proc.stdout)
    return report["seconds"], results_of(report["results"])


def dask_worker():
    """The venv's side: reads {"graph", "keys", "workers", "repeat"} from
    standard input, prints {"seconds": [...], "results": [[KEY, VALUE], ...]}."""
    import dask.threaded

    def _sleep(x, seconds):
        time.sleep(seconds)
        return x

    def _sum(*args):
        return sum(args[0]) if len(args) == 1 and isinstance(args[0], list) else sum(args)

    ops = {"sleep": _sleep, "checksum": checksum, "sum": _sum,
           "add": lambda a, b: a + b, "inc": lambda x: x + 1}

    def to_dask(term):
        if isinstance(term, dict):
            if "ref" in term:
                return tuplify(term["ref"])
            if "call" in term:
                return (ops[term["call"]], *(to_dask(a) for a in term["args"]))
            if "list" in term:
                return [to_dask(a) for a in term["list"]]
        return term

    job = json.load(sys.stdin)
    with open(job["graph"]) as f:
        dsk = {tuplify(t["key"]): to_dask(t["task"]) for t in json.load(f)["tasks"]}
    keys = [tuplify(k) for k in job["keys"]]
    seconds = []
    for _ in range(job["repeat"]):
        start = time.perf_counter()
        values = dask.threaded.get(dsk, keys, num_workers=job["workers"])
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"seconds": seconds, "results": [[k, v] for k, v in zip(keys, values)]}))


def measure(args, name, python):
    """Builds graph `name`, runs it every way; returns its rows."""
    g = Graph(name, args.sleep, args.sized)
    BUILDERS[name](g, args)
    path = os.path.join(args.out, f"{name}.json")
    g.write(path)
    stats = g.stats(args.workers)
    # The cut of the placement `run --processes` uses (the default, `auto`),
    # of the list schedule and of the partitioner that keeps the cut lowest.
    stats["cut_auto"] = edge_cut(args.taskgraph, path, args.workers, "auto")
    stats["cut_time"] = edge_cut(args.taskgraph, path, args.workers, "time")
    stats["cut_partitioner"] = edge_cut(args.taskgraph, path, args.workers, "cut")
    keys = g.outputs
    # Generous: a run that takes ten times the whole work on one thread is stuck.
    timeout = 60 + 10 * stats["work"]
    w = args.workers
    runs = [("1 thread", ["--threads", "1"]),
            (f"{w} threads", ["--threads", str(w)]),
            (f"{w} processes", ["--processes", str(w)])]
    expected = None
    rows = []

    def row(run, walls, **extra):
        median = statistics.median(walls)
        r = {"graph": name, **stats, "run": run, "seconds": median, "ratio": median / stats["bound"],
             "runs": walls, **extra}
        print(json.dumps(r), flush=True)
        rows.append(r)

    for run, flags in runs:
        walls, reported, tasks_run = [], [], []
        for _ in range(args.repeat):
            wall, report = run_taskgraph(args.taskgraph, path, keys, flags, timeout)
            results = results_of(report["results"])
            if expected is None:
                expected = results
            elif results != expected:
                sys.exit(f"{name}: `taskgraph run {' '.join(flags)}` gave other results than the first run")
            walls.append(wall)
            reported.append(report["seconds"])
            tasks_run.append(report["tasks_run"])
        row(run, walls, system="taskgraph", args=flags, reported_seconds=statistics.median(reported),
            tasks_run=max(tasks_run))
    if python:
        walls, results = run_dask(python, path, keys, w, args.repeat, timeout * args.repeat)
        if results != expected:
            sys.exit(f"{name}: dask.threaded.get gave other results than taskgraph")
        row(f"dask.threaded, {w} workers", walls, system="dask")
    return rows


def table(rows, workers):
    runs = ["1 thread", f"{workers} threads", f"{workers} processes", f"dask.threaded, {workers} workers"]
    lines = ["| graph | tasks | bound | " + " | ".join(runs) + " | cut: default (time / cut placer) |",
             "|---|---:|---:|" + "---:|" * len(runs) + "---:|"]
    graphs = {}
    for r in rows:
        graphs.setdefault(r["graph"], {})[r["run"]] = r
    for name, found in graphs.items():
        first = next(iter(found.values()))
        cells = [f"{found[run]['seconds']:.2f} s ({found[run]['ratio']:.2f}x)" if run in found else "-"
                 for run in runs]
        cut = f"{first['cut_auto']:,} ({first['cut_time']:,} / {first['cut_partitioner']:,})"
        lines.append(f"| {name} | {first['tasks']:,} | {first['bound']:.2f} s | " + " | ".join(cells)
                     + f" | {cut} |")
    return "\n".join(lines)


def venv_python(python):
    """The venv's Python if it has dask, else exits saying how to make it."""
    ok = os.path.exists(python) and subprocess.run(
        [python, "-c", "import dask.threaded"], capture_output=True).returncode == 0
    if not ok:
        sys.exit(f"no dask in {python}: make the venv first, e.g.\n"
                 "  python3 -m venv target/venv-bench && target/venv-bench/bin/pip install dask distributed\n"
                 "or leave dask out with --no-dask")
    return python


def main():
    if sys.argv[1:] == ["--dask-worker"]:
        return dask_worker()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--python", default="target/venv-bench/bin/python",
                        help="a Python with dask, which runs the dask side")
    parser.add_argument("--no-dask", action="store_true", help="time taskgraph alone")
    parser.add_argument("--sized", action="store_true",
                        help="results of 64 KiB to 1 MiB, with their sizes (taskgraph alone)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each (the median counts)")
    parser.add_argument("--sleep", type=float, default=0.004, help="seconds each task sleeps")
    parser.add_argument("--workers", type=int, default=4, help="threads, processes and dask workers")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--out", default="target/parallel", help="where the graphs are written")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every graph's size")
    sizes = parser.add_argument_group("sizes (before --scale)")
    sizes.add_argument("--chains", type=int, default=8)
    sizes.add_argument("--chain-length", type=int, default=200)
    sizes.add_argument("--grid-side", type=int, default=40)
    sizes.add_argument("--tree-leaves", type=int, default=1024)
    sizes.add_argument("--arity", type=int, default=4, help="of the tree and of overlap's reduction")
    sizes.add_argument("--random-tasks", type=int, default=2000)
    sizes.add_argument("--random-window", type=int, default=60)
    sizes.add_argument("--seed", type=int, default=1, help="of the random DAG")
    sizes.add_argument("--shuffle-width", type=int, default=4, help="pieces per split; partitions = width^stages")
    sizes.add_argument("--shuffle-stages", type=int, default=3)
    sizes.add_argument("--overlap-blocks", type=int, default=400)
    args = parser.parse_args()
    shapes = args.shapes.split(",")
    unknown = [s for s in shapes if s not in BUILDERS]
    if unknown:
        parser.error(f"unknown shapes {unknown}: choose among {','.join(SHAPES)}")
    if args.repeat < 1 or args.workers < 1 or args.arity < 2 or args.scale <= 0:
        parser.error("--repeat and --workers must be at least 1, --arity at least 2, --scale more than 0")
    scaled(args)
    python = None if args.no_dask or args.sized else venv_python(args.python)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in shapes:
        rows.extend(measure(args, name, python))
    print()
    print(f"Tasks sleep {args.sleep * 1000:g} ms each; bound = max(work / {args.workers}, critical path); "
          f"median of {args.repeat} run(s); taskgraph timed as a whole process, dask's `get` alone; "
          f"{os.cpu_count()} cores ({cpu_model()}).\n")
    print(table(rows, args.workers))


if __name__ == "__main__":
    main()
