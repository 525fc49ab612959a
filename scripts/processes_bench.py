#!/usr/bin/env python3
"""dask graphs on worker processes: taskgraph's processes against its threads,
dask.multiprocessing and a distributed LocalCluster, all with 2 workers,
each system in a fresh interpreter with its pool warm (one untimed run
first).

Graphs (pure-Python tasks hold the GIL; ``--scale`` multiplies their work):

  tree      96 leaves of ~20 ms of pure-Python arithmetic, summed pairwise
  chains    8 chains of 12 tasks of ~10 ms each, passing a list along
  shuffle   16 producers of a list of 2,000 ints (~10 ms each), each read by
            all of 16 consumers (~10 ms each), then summed
  numpy     x (4000, 4000) float64 random in 16 chunks of 8 MB (a new seed
            each run, so that no cluster keeps the last run's chunks);
            (x + x.T).sum(): half the chunks' transposes cross processes
  trivial   a tree of 10^4 adds of ints (5,000 leaves): the overhead per task

For each: the median wall time of ``--repeat`` runs, and the bytes that
passed through the caller: taskgraph's as its pool counts them (the graph
sent, the results and progress received), dask.multiprocessing's (called
as users call it, with a pool of its own per call, and given one warm
pool for every call) as the
pickles the caller made and read (every task out, every result back),
counted by the func_dumps / func_loads dask takes. LocalCluster's are not
counted ("-").

    python scripts/processes_bench.py [--repeat 5] [--scale 1.0] [--only tree,trivial]

Run it in a venv with taskgraph (pip install ./python), dask, distributed.
"""

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import time

SYSTEMS = ["taskgraph-processes", "taskgraph-threads", "dask-multiprocessing", "dask-mp-warm", "localcluster"]
GRAPHS = ["tree", "chains", "shuffle", "numpy", "trivial"]


def work(i, n):
    x = 0
    for j in range(n):
        x += j ^ i
    return i + (x & 0)  # the value does not depend on how long it ran


def pair(a, b):
    return a + b


def step(values, n):
    work(len(values), n)
    return [v + 1 for v in values]


def produce(i, n):
    work(i, n)
    return list(range(i, i + 2000))


def consume(j, n, *parts):
    work(j, n)
    return sum(p[j] for p in parts)


def total(*xs):
    return sum(xs)


# Iterations of ``work`` a millisecond, measured once by the parent (the
# best of five) and given to every system's interpreter, so that all run
# the same work.
PER_MS = [None]


def per_ms():
    n = 200_000
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        work(0, n)
        best = min(best, time.perf_counter() - start)
    return n / (best * 1000)


def loops_for(ms):
    """Iterations of ``work`` that take about ``ms``."""
    return max(1, int(ms * PER_MS[0]))


def summed(leaves, tag):
    """``leaves`` summed pairwise, level by level: (graph, its root)."""
    dsk = dict(leaves)
    names = list(leaves)
    level = 0
    while len(names) > 1:
        level += 1
        new = []
        for j in range(0, len(names), 2):
            key = ("sum", tag, level, j // 2)
            dsk[key] = (pair, names[j], names[j + 1]) if j + 1 < len(names) else (pair, names[j], 0)
            new.append(key)
        names = new
    return dsk, names[0]


def build(name, scale):
    """(graph, key) for workload ``name``, its keys new on every call."""
    tag = next(_calls)
    if name == "tree":
        n = loops_for(20 * scale)
        return summed({("leaf", tag, i): (work, i, n) for i in range(96)}, tag)
    if name == "chains":
        n = loops_for(10 * scale)
        dsk = {}
        for c in range(8):
            dsk[("c", tag, c, 0)] = (list, range(100))
            for i in range(1, 12):
                dsk[("c", tag, c, i)] = (step, ("c", tag, c, i - 1), n)
        dsk[("total", tag)] = (total, *[(len, ("c", tag, c, 11)) for c in range(8)])
        return dsk, ("total", tag)
    if name == "shuffle":
        n = loops_for(10 * scale)
        dsk = {("p", tag, i): (produce, i, n) for i in range(16)}
        for j in range(16):
            dsk[("q", tag, j)] = (consume, j, n, *[("p", tag, i) for i in range(16)])
        dsk[("total", tag)] = (total, *[("q", tag, j) for j in range(16)])
        return dsk, ("total", tag)
    if name == "numpy":
        import dask
        import dask.array as da

        x = da.random.RandomState(tag).random((4000, 4000), chunks=(1000, 1000))
        from dask.core import flatten

        (y,) = dask.optimize((x + x.T).sum())
        return dict(y.__dask_graph__()), next(iter(flatten(y.__dask_keys__())))
    if name == "trivial":
        return summed({("leaf", tag, i): (pair, i, 1) for i in range(5000)}, tag)
    raise ValueError(name)


_calls = itertools.count()

# The bytes dask.multiprocessing's caller pickled and unpickled (in the
# workers, the same functions count into their own copy).
_counted = [0]


def counting_dumps(obj, **kw):
    import cloudpickle

    data = cloudpickle.dumps(obj, **kw)
    _counted[0] += len(data)
    return data


def counting_loads(data, **kw):
    import cloudpickle

    _counted[0] += len(data)
    return cloudpickle.loads(data, **kw)


def measure(system, graphs, scale, repeat):
    """Runs in a fresh interpreter: the figures of ``system`` on ``graphs``."""
    out = {}
    if system == "taskgraph-processes":
        import taskgraph.dask

        pool = taskgraph.dask.Processes(2)

        def run(dsk, key):
            value = taskgraph.dask.get(dsk, key, processes=pool)
            last = pool.last_run
            return value, last["bytes_sent"] + last["bytes_received"]

        close = pool.close
    elif system == "taskgraph-threads":
        import taskgraph.dask

        def run(dsk, key):
            return taskgraph.dask.get(dsk, key, num_workers=2), 0

        close = lambda: None  # noqa: E731
    elif system in ("dask-multiprocessing", "dask-mp-warm"):
        import dask.multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        # As users call it (a pool of its own per call), or given one pool
        # for every call.
        executor = ProcessPoolExecutor(2) if system == "dask-mp-warm" else None

        def run(dsk, key):
            _counted[0] = 0
            value = dask.multiprocessing.get(
                dsk, key, num_workers=2, pool=executor, func_dumps=counting_dumps, func_loads=counting_loads
            )
            return value, _counted[0]

        close = executor.shutdown if executor is not None else (lambda: None)
    elif system == "localcluster":
        from distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)

        def run(dsk, key):
            return client.get(dsk, key), None

        def close():
            client.close()
            cluster.close()
    else:
        raise ValueError(system)
    try:
        for name in graphs:
            dsk, key = build(name, scale)
            value, _ = run(dsk, key)  # warm
            times = []
            for _ in range(repeat):
                # A graph of new keys each time: a cluster may still hold the
                # last run's results.
                dsk, key = build(name, scale)
                start = time.perf_counter()
                value, through = run(dsk, key)
                times.append(time.perf_counter() - start)
            out[name] = {
                "seconds": statistics.median(times),
                "min": min(times),
                "bytes": through,
                "tasks": len(dsk),
                "value": repr(value)[:60],
            }
    finally:
        close()
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", help="comma-separated graphs: " + ",".join(GRAPHS))
    parser.add_argument("--system", help=argparse.SUPPRESS)
    parser.add_argument("--per-ms", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    PER_MS[0] = args.per_ms or per_ms()
    graphs = args.only.split(",") if args.only else GRAPHS
    if args.system:
        print(json.dumps(measure(args.system, graphs, args.scale, args.repeat)))
        return
    results = {}
    for system in SYSTEMS:
        print(f"measuring {system} ...", file=sys.stderr, flush=True)
        done = subprocess.run(
            [sys.executable, __file__, "--system", system, "--repeat", str(args.repeat), "--scale", str(args.scale),
             "--only", ",".join(graphs), "--per-ms", str(PER_MS[0])],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            sys.exit(f"{system} failed:\n{done.stderr}")
        results[system] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"| graph | tasks | {' | '.join(SYSTEMS)} | {' | '.join('processes / ' + s for s in SYSTEMS[1:])} |")
    print("|---|---:|" + "---:|" * (2 * len(SYSTEMS) - 1))
    for name in graphs:
        row = [results[s][name] for s in SYSTEMS]
        values = {r["value"] for r in row}
        if len(values) != 1:
            sys.exit(f"{name}: the systems disagree: {values}")
        ours = row[0]["seconds"]
        cells = [f"{r['seconds']:.3f} s" for r in row]
        ratios = [f"{ours / r['seconds']:.2f}x" for r in row[1:]]
        print(f"| {name} | {row[0]['tasks']} | {' | '.join(cells)} | {' | '.join(ratios)} |")
    print()
    print("| graph | taskgraph-processes, bytes through the caller | dask-multiprocessing |")
    print("|---|---:|---:|")
    for name in graphs:
        print(f"| {name} | {results[SYSTEMS[0]][name]['bytes']:,} | {results['dask-multiprocessing'][name]['bytes']:,} |")
    trivial = "trivial" in graphs
    if trivial:
        tasks = results[SYSTEMS[0]]["trivial"]["tasks"]
        per = {s: results[s]["trivial"]["seconds"] / tasks * 1e6 for s in SYSTEMS}
        print()
        print("per task (trivial): " + ", ".join(f"{s} {v:.1f} us" for s, v in per.items()))
        print(f"taskgraph-processes / localcluster per task: 1/{per['localcluster'] / per['taskgraph-processes']:.0f}")


if __name__ == "__main__":
    main()
