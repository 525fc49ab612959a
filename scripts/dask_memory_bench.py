#!/usr/bin/env python3
"""Out-of-core dask in one process: taskgraph.dask.get under a memory limit
against dask's threaded scheduler, on a computation that must hold its whole
input at once.

The computation is `abs(x - x.mean()).sum()` with x a random 12,000 x 12,000
float64 array (1.15 GB) in 1,000 x 1,000 chunks (8 MB each): the mean needs
every chunk of x before any chunk of `x - mean` can be computed, so dask's
threaded scheduler holds all of x at once. Each run is a fresh Python
process (so that its peak RSS is its own), timed from the call to
`compute`, with 2 workers:

  threads     x.compute(scheduler="threads", num_workers=2)
  taskgraph   x.compute(scheduler="taskgraph", num_workers=2,
              memory_limit=LIMIT), inside `taskgraph.dask.RunStats()`

The script prints, for each, the wall time, the peak RSS (`ru_maxrss`) and
the result, and for taskgraph's the run's `peak_bytes` and `spilled_bytes`;
it checks that both results are equal.

Usage: python scripts/dask_memory_bench.py [--limit 384MB] [--side 12000]
       [--chunk 1000] [--repeat 1]
"""

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time
import dask.array as da
import taskgraph.dask

side, chunk, scheduler, limit = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
x = da.random.RandomState(0).random_sample((side, side), chunks=(chunk, chunk))
y = abs(x - x.mean()).sum()
kwargs = {"num_workers": 2}
if scheduler == "taskgraph":
    kwargs["memory_limit"] = limit
with taskgraph.dask.RunStats() as stats:
    start = time.perf_counter()
    result = y.compute(scheduler=scheduler, **kwargs)
    seconds = time.perf_counter() - start
print(json.dumps({
    "seconds": seconds,
    "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    "result": repr(float(result)),
    "peak_bytes": stats.peak_bytes,
    "spilled_bytes": stats.spilled_bytes,
}))
"""


def run(scheduler, args):
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(args.side), str(args.chunk), scheduler, args.limit],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", default="384MB")
    parser.add_argument("--side", type=int, default=12_000)
    parser.add_argument("--chunk", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    mb = 1e6
    print(f"abs(x - x.mean()).sum(), x {args.side} x {args.side} float64 ({args.side**2 * 8 / mb:,.0f} MB) "
          f"in {args.chunk} x {args.chunk} chunks; 2 workers; taskgraph's memory_limit={args.limit}")
    print("| scheduler | seconds | peak RSS (MB) | peak_bytes (MB) | spilled (MB) | result |")
    print("|---|---:|---:|---:|---:|---|")
    results = set()
    for _ in range(args.repeat):
        for scheduler in ("threads", "taskgraph"):
            r = run(scheduler, args)
            results.add(r["result"])
            stats = (
                f"{r['peak_bytes'] / mb:,.0f} | {r['spilled_bytes'] / mb:,.0f}" if scheduler == "taskgraph" else "- | -"
            )
            print(f"| {scheduler} | {r['seconds']:.2f} | {r['rss'] / mb:,.0f} | {stats} | {r['result']} |", flush=True)
    if len(results) != 1:
        raise SystemExit(f"results differ: {sorted(results)}")


if __name__ == "__main__":
    main()
