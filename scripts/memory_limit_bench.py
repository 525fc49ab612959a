#!/usr/bin/env python3
"""A run under `taskgraph run --memory-limit` against the same run without it.

Generates a graph whose values are big (`taskgraph generate SHAPE --tasks N
--value-bytes B`), runs it without a limit and with one, several times each,
and prints a Markdown table: wall time, peak resident memory of the process
(GNU time's %M), the executor's peak bytes of results held and the bytes it
spilled, and whether the limited run stayed within the limit plus 160 MB of
resident memory. Both runs must give the same results.

    python3 scripts/memory_limit_bench.py --taskgraph target/release/taskgraph
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

MB = 1_000_000


def run(cmd):
    """Runs `cmd` under GNU time; returns (seconds, peak RSS in bytes, report)."""
    timed = ["/usr/bin/time", "-f", "%e %M"] + cmd
    proc = subprocess.run(timed, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    seconds, rss_kb = proc.stderr.strip().splitlines()[-1].split()
    return float(seconds), int(rss_kb) * 1024, json.loads(proc.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--shape", default="array-cumsum")
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--value-bytes", default="6MB")
    parser.add_argument("--limit", default="128MB")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="taskgraph-memory-bench-") as tmp:
        graph = os.path.join(tmp, "graph.json")
        subprocess.run(
            [args.taskgraph, "generate", args.shape, "--tasks", str(args.tasks),
             "--value-bytes", args.value_bytes, "-o", graph],
            check=True, capture_output=True,
        )
        base = [args.taskgraph, "run", graph, "--json", "--threads", str(args.threads)]
        modes = [("no limit", base), (f"--memory-limit {args.limit}", base + ["--memory-limit", args.limit])]
        rows, results = [], []
        for name, cmd in modes:
            runs = [run(cmd) for _ in range(args.repeat)]
            results.append(runs[0][2]["results"])
            report = runs[0][2]
            rows.append((
                name,
                statistics.median(r[0] for r in runs),
                min(r[0] for r in runs),
                max(r[1] for r in runs),
                report["peak_bytes"],
                report["spilled_bytes"],
            ))
        if results[0] != results[1]:
            sys.exit("the limited run gave other results than the unlimited one")

    limit = int(float(args.limit.rstrip("MB"))) * MB if args.limit.endswith("MB") else int(args.limit)
    print(f"`taskgraph generate {args.shape} --tasks {args.tasks} --value-bytes {args.value_bytes}`, "
          f"`taskgraph run --threads {args.threads}`, {args.repeat} runs each; same results with and without the limit.\n")
    print("| run | wall, median (min) | peak RSS (max) | peak bytes held | spilled |")
    print("|---|---:|---:|---:|---:|")
    for name, median, fastest, rss, peak, spilled in rows:
        print(f"| {name} | {median:.2f} s ({fastest:.2f} s) | {rss / MB:.0f} MB | {peak / MB:.0f} MB | {spilled / MB:.0f} MB |")
    limited_rss = rows[1][3]
    print(f"\nUnder the limit: peak RSS {limited_rss / MB:.0f} MB against a bound of "
          f"{(limit + 160 * MB) / MB:.0f} MB ({'within' if limited_rss <= limit + 160 * MB else 'ABOVE'}); "
          f"time {rows[1][1] / rows[0][1]:.2f}x the unlimited run's.")


if __name__ == "__main__":
    main()
