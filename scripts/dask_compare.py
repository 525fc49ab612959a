#!/usr/bin/env python3
"""Time dask on the same generated graphs that taskgraph's benchmarks use.

Each graph is written by `taskgraph generate SHAPE --tasks N` (same generator,
same seed as the divan benchmarks), converted into a dask graph (ops become
Python functions, references become keys), and timed with dask's own
functions. Our side is timed on the same file in the same run through the
`taskgraph` binary, where a command reports its own time (`run --json`).

Usage: scripts/dask_compare.py --taskgraph target/release/taskgraph \
           [--shapes chain,tree,...] [--sizes 10000,100000] [--out target/compare]

Prints one JSON object per measurement, then a Markdown table.
"""

import argparse
import json
import math
import operator
import os
import subprocess
import sys
import time


def tuplify(key):
    return tuple(tuplify(k) for k in key) if isinstance(key, list) else key


def _sum(*args):
    return sum(args[0]) if len(args) == 1 and isinstance(args[0], list) else sum(args)


def _max(*args):
    return max(args[0]) if len(args) == 1 and isinstance(args[0], list) else max(args)


def _min(*args):
    return min(args[0]) if len(args) == 1 and isinstance(args[0], list) else min(args)


OPS = {
    "inc": lambda x: x + 1,
    "dec": lambda x: x - 1,
    "neg": operator.neg,
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "exp": math.exp,
    "log": math.log,
    "sum": _sum,
    "max": _max,
    "min": _min,
    "identity": lambda x: x,
    "list": lambda *xs: list(xs),
    "len": len,
}


def to_dask(term):
    if isinstance(term, dict):
        if "ref" in term:
            return tuplify(term["ref"])
        if "call" in term:
            return (OPS[term["call"]],) + tuple(to_dask(a) for a in term["args"])
        if "list" in term:
            return [to_dask(a) for a in term["list"]]
    return term


def load(path):
    with open(path) as f:
        doc = json.load(f)
    return {tuplify(t["key"]): to_dask(t["task"]) for t in doc["tasks"]}


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def leaves(dsk):
    from dask.core import get_dependencies

    used = set()
    for key in dsk:
        used.update(get_dependencies(dsk, key))
    return [k for k in dsk if k not in used]


def measure(taskgraph, path, shape, size):
    import dask
    import dask.optimization as opt
    import dask.order
    import dask.threaded

    dsk = load(path)
    keys = leaves(dsk)
    rows = []

    def row(op, seconds, **extra):
        r = {"shape": shape, "tasks": len(dsk), "op": op, "system": "dask", "seconds": seconds, **extra}
        rows.append(r)
        print(json.dumps(r), flush=True)

    seconds, o = timed(dask.order.order, dsk)
    _, pressure = dask.order.diagnostics(dsk, o=o)
    row("order", seconds, max_pressure=max(pressure) if pressure else 0)
    seconds, (culled, deps) = timed(opt.cull, dsk, keys)
    row("cull", seconds)
    seconds, inlined = timed(opt.inline, culled, dependencies=deps)
    row("inline", seconds)
    fast = [OPS["identity"], OPS["inc"]]
    seconds, fast_inlined = timed(opt.inline_functions, inlined, keys, fast_functions=fast)
    row("inline_functions", seconds)
    seconds, _ = timed(opt.fuse, fast_inlined, keys)
    row("fuse", seconds)
    seconds, _ = timed(dask.get, dsk, keys)
    row("get", seconds)
    seconds, _ = timed(dask.threaded.get, dsk, keys, num_workers=2)
    row("threaded.get", seconds)

    def ours(op, seconds, **extra):
        r = {"shape": shape, "tasks": len(dsk), "op": op, "system": "taskgraph", "seconds": seconds, **extra}
        rows.append(r)
        print(json.dumps(r), flush=True)

    for strategy in ["auto", "dask"]:
        summary = subprocess.run([taskgraph, "order", path, "--strategy", strategy],
                                 check=True, capture_output=True, text=True).stdout
        pressure = int(summary.split("max pressure")[1].split()[0])
        ours(f"order ({strategy})", parse_time(summary.split("time")[-1]), max_pressure=pressure)
    passes = subprocess.run([taskgraph, "optimize", path, "--fast-ops", "identity,inc", "-o", os.devnull],
                            check=True, capture_output=True, text=True).stdout
    for line in passes.strip().splitlines():
        name, before, _, after, value, unit = line.split()
        ours(name, parse_time(f"{value} {unit}"), tasks_after=int(after))
    report = json.loads(subprocess.run([taskgraph, "run", path, "--json", "--threads", "2"],
                                       check=True, capture_output=True, text=True).stdout)
    ours("run (2 threads)", report["seconds"], peak_held=report["peak_held"])
    report = json.loads(subprocess.run([taskgraph, "run", path, "--json", "--threads", "1"],
                                       check=True, capture_output=True, text=True).stdout)
    ours("run (1 thread)", report["seconds"], peak_held=report["peak_held"])
    return rows


def parse_time(text):
    """Seconds from a summary's time figure: '11.854 ms', '0.7 s', '950 us'."""
    value, unit = text.split()[:2]
    return float(value) * {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}[unit]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--shapes", default="chain,tree,random,array-sum-transpose,array-overlap,array-cumsum,shuffle")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--out", default="target/compare")
    args = parser.parse_args()
    try:
        import dask  # noqa: F401
    except ImportError:
        sys.exit("dask is not installed in this Python: make the venv first (see BENCHMARKS.md)")
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for size in [int(s) for s in args.sizes.split(",")]:
        for shape in args.shapes.split(","):
            path = os.path.join(args.out, f"{shape}-{size}.json")
            subprocess.run([args.taskgraph, "generate", shape, "--tasks", str(size), "-o", path],
                           check=True, capture_output=True)
            rows.extend(measure(args.taskgraph, path, shape, size))
    print()
    print(ratio_table(rows))


# Which of our measurements answers which of dask's.
PAIRS = [
    ("order", "order (auto)"),
    ("order", "order (dask)"),
    ("cull", "cull"),
    ("inline", "inline"),
    ("inline_functions", "inline_functions"),
    ("fuse", "fuse"),
    ("get", "run (1 thread)"),
    ("threaded.get", "run (2 threads)"),
]


def ratio_table(rows):
    """A Markdown table: dask's time, ours, the ratio, and memory where known."""
    lines = [
        "| shape | tasks | dask | taskgraph | dask (s) | taskgraph (s) | speed-up | max pressure dask / ours |",
        "|---|---:|---|---|---:|---:|---:|---:|",
    ]
    groups = {}
    for r in rows:
        groups.setdefault((r["shape"], r["tasks"]), {})[(r["system"], r["op"])] = r
    for (shape, tasks), found in groups.items():
        for theirs, ours in PAIRS:
            d, t = found.get(("dask", theirs)), found.get(("taskgraph", ours))
            if not d or not t:
                continue
            memory = ""
            if "max_pressure" in d:
                ours_memory = t.get("max_pressure", t.get("peak_held", ""))
                memory = f"{d['max_pressure']} / {ours_memory}"
            elif "peak_held" in t:
                memory = f"- / {t['peak_held']}"
            speedup = d["seconds"] / t["seconds"] if t["seconds"] > 0 else float("inf")
            lines.append(f"| {shape} | {tasks} | {theirs} | {ours} | {d['seconds']:.4f} | {t['seconds']:.4f} | "
                         f"{speedup:.0f}x | {memory} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
