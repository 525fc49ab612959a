#!/usr/bin/env python3
"""`taskgraph optimize` and `taskgraph rewrite` as whole processes against
dask's own functions, on the same 10^5-task graphs, in one run.

Each graph is written by `taskgraph generate SHAPE --tasks N` and converted
into a dask graph as `scripts/dask_compare.py` converts it (ops become Python
functions, references keys). dask's side is its functions alone, in this
process, on the dict built beforehand: the optimize pipeline as dask chains it
(cull -> inline -> inline_functions -> fuse) and dask.rewrite with the rules of
`scripts/bench_compare.py` (`valmap(rs.rewrite, dsk)`), each the best of
--dask-repeat runs. Ours is the whole process, reading the file and writing
the result included: `taskgraph optimize FILE -o OUT` and `taskgraph rewrite
FILE --rules RULES -o OUT`, the median of --repeat runs. With --baseline, a
second binary runs beside it, the two in turn, and the ratio of the medians is
printed too.

Usage (in a venv with dask, after `cargo build --release -p graph-cli`):

    python scripts/whole_process_speed.py [--taskgraph target/release/taskgraph]
        [--baseline OLD_BINARY] [--shapes chain,array-overlap,random]
        [--tasks 100000] [--repeat 7] [--dask-repeat 3] [--work target/whole-speed]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_compare  # noqa: E402
import dask_compare  # noqa: E402
from speed_common import cpu_model  # noqa: E402


def seconds_of(cmd):
    """Wall seconds of one run of `cmd`, its output thrown away; raises if it
    fails."""
    start = time.perf_counter()
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({run.returncode}): {run.stderr}")
    return seconds


def medians(commands, repeat):
    """The median wall seconds of each command, the commands run in turn
    `repeat` times (so that a drift of the machine's speed touches all)."""
    runs = [[] for _ in commands]
    for _ in range(repeat):
        for i, cmd in enumerate(commands):
            runs[i].append(seconds_of(cmd))
    return [statistics.median(r) for r in runs]


def best(repeat, fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--baseline", help="another taskgraph binary to time beside it")
    parser.add_argument("--shapes", default="chain,array-overlap,random")
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7, help="whole-process runs of each command (median)")
    parser.add_argument("--dask-repeat", type=int, default=3, help="runs of dask's functions (best)")
    parser.add_argument("--work", default="target/whole-speed")
    args = parser.parse_args()

    import dask
    import dask.optimization as opt

    os.makedirs(args.work, exist_ok=True)
    rules_path = bench_compare.write_rules_file(args.work)
    rule_set = bench_compare.dask_rule_set()
    fast = [dask_compare.OPS["identity"], dask_compare.OPS["inc"]]
    binaries = [args.taskgraph] + ([args.baseline] if args.baseline else [])
    out = os.path.join(args.work, "out.json")

    rows = []
    for shape in args.shapes.split(","):
        path = os.path.join(args.work, f"{shape}-{args.tasks}.json")
        subprocess.run([args.taskgraph, "generate", shape, "--tasks", str(args.tasks), "-o", path],
                       check=True, capture_output=True)
        dsk = dask_compare.load(path)
        keys = dask_compare.leaves(dsk)

        def pipeline():
            culled, deps = opt.cull(dsk, keys)
            inlined = opt.inline(culled, dependencies=deps)
            return opt.fuse(opt.inline_functions(inlined, keys, fast_functions=fast), keys)

        work = {
            "optimize": (pipeline, ["optimize", path, "-o", out]),
            "rewrite": (lambda: {k: rule_set.rewrite(t) for k, t in dsk.items()},
                        ["rewrite", path, "--rules", rules_path, "-o", out]),
        }
        for name, (dask_fn, ours) in work.items():
            dask_seconds = best(args.dask_repeat, dask_fn)
            ours_seconds = medians([[binary, *ours] for binary in binaries], args.repeat)
            rows.append((shape, len(dsk), name, dask_seconds, ours_seconds))
            print(f"{shape} {name}: dask {dask_seconds:.3f} s, ours "
                  + ", ".join(f"{s:.3f} s" for s in ours_seconds), file=sys.stderr, flush=True)

    header = "| graph | tasks | work | dask (functions) | `taskgraph` (whole process) | vs dask |"
    rule = "|---|---:|---|---:|---:|---:|"
    if args.baseline:
        header += " baseline (whole process) | vs baseline |"
        rule += "---:|---:|"
    print(header)
    print(rule)
    for shape, tasks, name, dask_seconds, ours in rows:
        line = (f"| {shape} | {tasks} | {name} | {dask_seconds:.3f} s | {ours[0]:.3f} s "
                f"| {dask_seconds / ours[0]:.1f}x |")
        if args.baseline:
            line += f" {ours[1]:.3f} s | {ours[0] / ours[1]:.2f}x |"
        print(line)
    print()
    print(f"dask {dask.__version__} functions best of {args.dask_repeat}; taskgraph whole process, "
          f"median of {args.repeat} runs in turn; {os.cpu_count()} cores, {cpu_model()}.")


if __name__ == "__main__":
    main()
