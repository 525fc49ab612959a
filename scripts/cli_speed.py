"""Whole-process speed and memory of the `taskgraph` command on big graphs,
with dask's order on the same graph in the same run.

Measured, each as a whole process (start-up, reading, writing) and the best
of --repeat runs, with its peak resident memory (by /usr/bin/time):

1. `taskgraph order FILE --json -o OUT` on dask's map_overlap reduction
   (``da.random.random((SIZE, SIZE), chunks=(10, 10)).map_overlap(lambda a:
   a, depth=1).sum()``, about 10^6 tasks at SIZE 2630), exported once with
   ``taskgraph.dask.dump`` (gzip) and kept in --work; against
   ``dask.order.order`` on the same graph dict in this process (dict built
   before timing), with both max pressures (dask's counted by
   ``taskgraph.max_pressure``).
2. `taskgraph stats` on `generate random --tasks 1000000`, plain and gzip,
   and the `generate` that writes it.
3. Peak bytes per task of `stats` and `order` on 10^7-task chain and
   array-overlap graphs (skip with --no-huge).

Usage (in a venv with ``pip install "./python[test]"``, after
``cargo build --release -p graph-cli``):

    python scripts/cli_speed.py [--taskgraph target/release/taskgraph]
        [--size 2630] [--repeat 3] [--dask-repeat 1] [--work target/cli-speed]
        [--no-huge] [--markdown OUT.md]
"""

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

from speed_common import cpu_model, map_overlap


def run_once(cmd):
    """Seconds and peak resident bytes of one run of `cmd` (output thrown
    away); raises if it fails. The peak is measured by /usr/bin/time in the
    process it starts: the resource usage of a child of this process would
    count this process's own memory, which the child shares until it execs."""
    with tempfile.NamedTemporaryFile("r") as peak, open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak.name, *cmd], stdout=null, stderr=subprocess.PIPE
        )
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode(errors='replace')}")
        kilobytes = int(peak.read().split()[-1])
    return seconds, kilobytes * 1024


def best(repeat, cmd):
    """The fastest of `repeat` runs: (seconds, peak bytes of that run)."""
    runs = [run_once(cmd) for _ in range(repeat)]
    return min(runs)


def num(x):
    return f"{x:,}".replace(",", " ")


def mb(n):
    return f"{n / 1e6:.0f} MB"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph", help="the binary (default target/release/taskgraph)")
    parser.add_argument("--size", type=int, default=2630, help="map_overlap array side; chunks are 10 x 10 (default 2630)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command, best kept (default 3)")
    parser.add_argument("--dask-repeat", type=int, default=1, help="runs of dask's order, best kept (default 1)")
    parser.add_argument("--work", default="target/cli-speed", help="where the graphs are written and kept (default target/cli-speed)")
    parser.add_argument("--no-huge", action="store_true", help="skip the 10^7-task memory figures")
    parser.add_argument("--markdown", help="also write the tables to this file")
    args = parser.parse_args()

    import dask
    import dask.order

    import taskgraph
    import taskgraph.dask

    tg = os.path.abspath(args.taskgraph)
    os.makedirs(args.work, exist_ok=True)
    work = os.path.abspath(args.work)
    out = os.path.join(work, "out.json")
    lines = []

    # 1. map_overlap: the CLI's order against dask's.
    x = map_overlap(args.size)
    dsk = dict(x.__dask_graph__())
    path = os.path.join(work, f"map-overlap-{args.size}.json.gz")
    if not os.path.exists(path):
        print(f"exporting {len(dsk)} tasks to {path} ...", file=sys.stderr)
        taskgraph.dask.dump(x, path)
    rows = []
    for strategy in ["auto", "dask"]:
        seconds, peak = best(args.repeat, [tg, "order", path, "--strategy", strategy, "--json", "-o", out])
        with open(out) as f:
            report = json.load(f)
        rows.append((f"`taskgraph order --strategy {strategy} --json -o OUT`", seconds, peak, report["max_pressure"]))
        print(f"{rows[-1][0]}: {seconds:.3f} s, {mb(peak)}", file=sys.stderr)
    dask_best, o = None, None
    for _ in range(args.dask_repeat):
        gc.collect()
        start = time.perf_counter()
        o = dask.order.order(dsk)
        elapsed = time.perf_counter() - start
        dask_best = elapsed if dask_best is None else min(dask_best, elapsed)
    dask_pressure = taskgraph.max_pressure(dsk, o)
    print(f"dask.order.order: {dask_best:.3f} s", file=sys.stderr)
    del o
    stats_seconds, stats_peak = best(args.repeat, [tg, "stats", path])
    lines += [
        f"dask's map_overlap reduction, `da.random.random(({args.size}, {args.size}), chunks=(10, 10))"
        f".map_overlap(lambda a: a, depth=1).sum()`: {num(len(dsk))} tasks, exported by `taskgraph.dask.dump` "
        f"({os.path.getsize(path) / 1e6:.1f} MB gzip).",
        "",
        "| step | seconds | peak memory | vs dask | max pressure |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, secs, peak, pressure in rows:
        lines.append(f"| {name} (whole process) | {secs:.2f} | {mb(peak)} | {dask_best / secs:.1f}x | {num(pressure)} |")
    lines.append(f"| `taskgraph stats` (whole process) | {stats_seconds:.2f} | {mb(stats_peak)} | | |")
    lines.append(f"| `dask.order.order(dsk)` (in process, dict built before) | {dask_best:.2f} | | 1.0x | {num(dask_pressure)} |")
    lines.append("")

    # 2. stats and generate on 10^6 random tasks.
    random_json = os.path.join(work, "random-1m.json")
    random_gz = os.path.join(work, "random-1m.json.gz")
    gen_seconds, gen_peak = best(args.repeat, [tg, "generate", "random", "--tasks", "1000000", "-o", random_json])
    run_once([tg, "generate", "random", "--tasks", "1000000", "-o", random_gz])
    lines += [
        f"`taskgraph generate random --tasks 1000000` ({os.path.getsize(random_json) / 1e6:.0f} MB of JSON, "
        f"{os.path.getsize(random_gz) / 1e6:.1f} MB gzip):",
        "",
        "| step | seconds | peak memory |",
        "|---|---:|---:|",
        f"| `taskgraph generate random --tasks 1000000 -o random-1m.json` (builds and writes) | {gen_seconds:.2f} | {mb(gen_peak)} |",
    ]
    for name, file in [("random-1m.json", random_json), ("random-1m.json.gz", random_gz)]:
        seconds, peak = best(args.repeat, [tg, "stats", file])
        lines.append(f"| `taskgraph stats {name}` | {seconds:.2f} | {mb(peak)} |")
    lines.append("")

    # 3. Bytes per task at 10^7 tasks.
    if not args.no_huge:
        lines += [
            "Peak memory per task at 10^7 tasks (gzip files; best of "
            f"{args.repeat}):",
            "",
            "| graph | tasks | `stats` s | `stats` bytes/task | `order --json -o` s | `order` bytes/task |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for shape in ["chain", "array-overlap"]:
            file = os.path.join(work, f"{shape}-1e7.json.gz")
            if not os.path.exists(file):
                run_once([tg, "generate", shape, "--tasks", "10000000", "-o", file])
            tasks = int(json.loads(subprocess.run([tg, "stats", file, "--json"], check=True, capture_output=True).stdout)["tasks"])
            stats_s, stats_peak = best(args.repeat, [tg, "stats", file])
            order_s, order_peak = best(args.repeat, [tg, "order", file, "--json", "-o", out])
            lines.append(
                f"| {shape} | {num(tasks)} | {stats_s:.2f} | {stats_peak / tasks:.0f} | {order_s:.2f} | {order_peak / tasks:.0f} |"
            )
            print(lines[-1], file=sys.stderr)
        lines.append("")

    lines.append(
        f"Best of {args.repeat} whole-process runs of each command and {args.dask_repeat} of dask's order, in one run "
        f"of `scripts/cli_speed.py`; {os.cpu_count()} cores, {cpu_model()}; CPython {platform.python_version()}, "
        f"dask {dask.__version__}."
    )
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
