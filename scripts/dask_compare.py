#!/usr/bin/env python3
"""Time dask on the same generated graphs that taskgraph's benchmarks use.

Each graph is written by `taskgraph generate SHAPE --tasks N` (same generator,
same seed as the divan benchmarks), converted into a dask graph (ops become
Python functions, references become keys), and timed with dask's own
functions. Our side is timed on the same file in the same run through the
`taskgraph` binary, where a command reports its own time (`run --json`).

The optimization passes are timed one at a time, each system's pass on the
same input graph: the pipeline cull -> inline -> inline_functions -> fuse is
run by `taskgraph optimize --passes ...` to write the graph each pass starts
from, and both systems time that pass on that file. dask's time is its
function's, which resolves the graph's dependencies (but for inline, which is
handed those of the cull before it, as in dask's own pipeline) and builds the
graph it returns. Ours comes from `taskgraph optimize FILE --passes PASS`,
twice: the pass's own line ("cull"), which is what the pass adds to a
pipeline, where references are resolved once and the output graph is built
once; and the run's total ("cull (alone)"), which adds resolving the
references and building the output graph, as dask's function does (neither
counts reading or writing the file). Where our JSON reader cannot take the
input (terms nested deeper than its recursion limit: the chain after
inline_functions), our pass line comes from the whole pipeline instead ("in
pipeline" in the table) and there is no "alone" figure. Last, the whole
pipeline: dask's four functions chained as dask chains them, each on the one
before's output, against `taskgraph optimize` on the generated file. Each
optimization figure, dask's and ours, is the best of `--repeat` runs (3 by
default), as the machine's other load makes single runs noisy.

Usage: scripts/dask_compare.py --taskgraph target/release/taskgraph \
           [--shapes chain,tree,...] [--sizes 10000,100000] [--out target/compare] [--repeat 3]

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


# How many times each optimization pass is timed (the best run counts).
REPEAT = 3


def best_of(fn, *args, **kwargs):
    """The fastest of REPEAT runs of fn, and its result."""
    runs = [timed(fn, *args, **kwargs) for _ in range(REPEAT)]
    return min(runs, key=lambda run: run[0])


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
    # The optimization passes, each on the graph our pipeline hands it.
    passes = ["cull", "inline", "inline_functions", "fuse"]
    fast_ops = "identity,inc"
    inputs = {}
    for i, name in enumerate(passes):
        if i == 0:
            inputs[name] = path
            continue
        inputs[name] = f"{os.path.splitext(path)[0]}.before-{name}.json"
        subprocess.run([taskgraph, "optimize", path, "--passes", ",".join(passes[:i]),
                        "--fast-ops", fast_ops, "-o", inputs[name]],
                       check=True, capture_output=True, text=True)
    fast = [OPS["identity"], OPS["inc"]]
    for name in passes:
        graph = load(inputs[name])
        if name == "cull":
            seconds, _ = best_of(opt.cull, graph, keys)
        elif name == "inline":
            _, deps = opt.cull(graph, keys)
            seconds, _ = best_of(opt.inline, graph, dependencies=deps)
        elif name == "inline_functions":
            seconds, _ = best_of(opt.inline_functions, graph, keys, fast_functions=fast)
        else:
            seconds, _ = best_of(opt.fuse, graph, keys)
        row(name, seconds, tasks_before=len(graph))
    # The whole pipeline as dask runs it.
    def pipeline():
        culled, deps = opt.cull(dsk, keys)
        inlined = opt.inline(culled, dependencies=deps)
        return opt.fuse(opt.inline_functions(inlined, keys, fast_functions=fast), keys)

    seconds, _ = best_of(pipeline)
    row("cull+inline+inline_functions+fuse", seconds)
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
    def optimize_lines(*args):
        """`taskgraph optimize` REPEAT times: each line's best time, with its task
        counts; None if the input cannot be read."""
        best = {}
        for _ in range(REPEAT):
            run = subprocess.run([taskgraph, "optimize", *args, "--fast-ops", fast_ops, "-o", os.devnull],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                return None
            for line in run.stdout.strip().splitlines():
                name, before, _, after, value, unit = line.split()
                seconds = parse_time(f"{value} {unit}")
                if name not in best or seconds < best[name][0]:
                    best[name] = (seconds, int(before), int(after))
        return best

    in_pipeline = optimize_lines(path)
    for name in passes:
        alone = optimize_lines(inputs[name], "--passes", name)
        if alone is not None:
            for op, line in [(name, alone[name]), (f"{name} (alone)", alone["total"])]:
                seconds, before, after = line
                ours(op, seconds, how="alone", tasks_before=before, tasks_after=after)
        else:
            seconds, before, after = in_pipeline[name]
            ours(name, seconds, how="in pipeline", tasks_before=before, tasks_after=after)
    seconds, before, after = in_pipeline["total"]
    ours("optimize", seconds, tasks_before=before, tasks_after=after)
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
    global REPEAT
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--shapes", default="chain,tree,random,array-sum-transpose,array-overlap,array-cumsum,shuffle")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--out", default="target/compare")
    parser.add_argument("--repeat", type=int, default=REPEAT,
                        help="times each optimization pass is timed, on both sides (the best counts)")
    args = parser.parse_args()
    REPEAT = max(1, args.repeat)
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
    ("cull", "cull (alone)"),
    ("inline", "inline"),
    ("inline", "inline (alone)"),
    ("inline_functions", "inline_functions"),
    ("inline_functions", "inline_functions (alone)"),
    ("fuse", "fuse"),
    ("fuse", "fuse (alone)"),
    ("cull+inline+inline_functions+fuse", "optimize"),
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
            label = f"{ours} (in pipeline)" if t.get("how") == "in pipeline" else ours
            lines.append(f"| {shape} | {tasks} | {theirs} | {label} | {d['seconds']:.4f} | {t['seconds']:.4f} | "
                         f"{speedup:.0f}x | {memory} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
