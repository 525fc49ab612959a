#!/usr/bin/env python3
"""Twelve real dask computations, taken from dask's issue reports, under dask's
threaded scheduler, taskgraph's scheduler (with and without a memory limit)
and a distributed LocalCluster, all with 2 workers.

Each workload works on 0.5-2 GB at `--scale 1.0` (the figure in the list is
the size of its inputs, or of its large intermediate where that is the
point):

  xcorr-argmax    dask/dask#5859: X (90, 128, 128) random in 9 chunks;
                  Corr = X[:, None] * X.conj()[None] (81 chunks of 13 MB,
                  1.06 GB), flattened, each chunk read by two tiny
                  reductions: dask.compute(argmax(Corr, -1), max(Corr, -1))
  climatology     dask/distributed#2602: x (5 x 365 days, 180, 360) random
                  (946 MB) in 73-day chunks; climatology = x.reshape(5, 365,
                  ...).mean(0), anomaly = x - climatology; anomaly.std()
  vorticity       dask/distributed#6571: u, v (30, 1600, 1600) (1.2 GB) and
                  the grid spacings dx, dy (1600, 1600) read by every time
                  chunk; centred differences by slicing, dv/dx - du/dy;
                  mean and mean(abs)
  double-diff     dask/distributed#6597: a, b (8000, 8000) (1 GB) in 1000^2
                  chunks; (a[1:, 1:] - b[:-1, :-1]).sum()
  uv-means        dask/dask#10384: u, v (1000, 250, 250) (1 GB) chunked along
                  time; dask.compute((u*u).mean(0), (v*v).mean(0),
                  (u*v).mean(0))
  overlap-store   dask/dask#5824: x (6, 2, 3072, 3072) (906 MB) in
                  (1, 2, 512, 512) chunks; x.map_overlap(f, depth=(0, 0, 64,
                  64)), each block reduced to (1, 2, 1, 1) by map_blocks and
                  stored with da.store into a small array target (a
                  np.memmap in /dev/shm, opened by path in __setitem__, so
                  that distributed's workers write to the same array as the
                  threads do)
  rechunk-rows    x (11000, 11000) (968 MB) in column chunks (11000, 250)
                  rechunked to row chunks (250, 11000); (x**2).sum(axis=1)
  thin-tree-sum   x (1,000,000, 125) (1 GB) in 2,000 thin chunks of 0.5 MB;
                  x.sum(axis=0) with dask's default split_every
  df-merge        two dask dataframes (20M rows x (key, a), 5M rows x (key,
                  b): 400 MB) from dd.from_map, merged on `key` by a hash
                  shuffle; digest: groupby(key % 100)[a, b].sum()
  tpch-q3         TPC-H Q3 on tables generated with numpy per partition
                  (customer 750k, orders 7.5M, lineitem 30M rows: 1.2 GB):
                  segment and date filters, two joins, groupby(orderkey,
                  orderdate, shippriority) revenue sum, nlargest(10)
  svd-compressed  dask/dask#11055: x (1,250,000, 100) (1 GB) in 25 chunks;
                  da.linalg.svd_compressed(x, k=20, n_power_iter=2, seed=0);
                  digest: the singular values
  covariance      dask/dask-ml#206 (the PCA centring that dask's order test
                  test_prefer_short_ancestor comes from): x (1,000,000, 128)
                  (1 GB); xc = x - x.mean(0); xc.T @ xc / (n - 1)

`--scale` multiplies every workload's bytes (one dimension grows with it, or
two with its square root).

Schedulers, each run in a FRESH `python -c` process (CHILD below), the graph
built before the timer, wall time from the call to compute to its return:

  threads        dask.compute(..., scheduler="threads", num_workers=2)
  taskgraph      dask.compute(..., scheduler="taskgraph", num_workers=2),
                 inside taskgraph.dask.RunStats() (peak_bytes, spilled_bytes)
  taskgraph-1GB  the same with memory_limit="1GB"
  local-cluster  distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                 processes=True, memory_limit="10GB" per worker), started
                 and warmed (numpy and pandas imported on the workers, one
                 small array computed) before the timer; dask.compute(...)
                 with its Client as the default scheduler

Peak RSS: `ru_maxrss` of the child process (RUSAGE_SELF). For local-cluster
it is the client process's ru_maxrss (which holds the scheduler and the
nannies too) plus each worker process's own ru_maxrss, read at the end with
`client.run(resource.getrusage(RUSAGE_SELF).ru_maxrss)` (the peak of each
worker since it started, so including its start-up, ~150 MB each); both
parts are kept in the JSON records. taskgraph's own `peak_bytes` counts
results with dask.sizeof, so views that share a buffer count once each and
it can exceed the RSS.

Each record also keeps the 1-minute load average before and after its
compute: on a shared 2-core machine the wall times are only as good as that.

Every child runs with distributed's pre-spawn environment
(MALLOC_TRIM_THRESHOLD_=65536, OMP/MKL/OPENBLAS_NUM_THREADS=1) so that the
four differ in the scheduler only, not in the allocator's trimming or BLAS
threads; and with dataframe.shuffle.method="tasks" so that the dataframe
workloads are the same graph under all four (distributed would otherwise
pick P2P).

dask 2026.8.0 builds dask.array collections as the legacy HighLevelGraph
arrays: `array.query-planning` is None by default and
`dask.array._array_expr_enabled()` turns None into False ("Eventually, this
default will flip to True"); dask.dataframe uses dask-expr (query
planning), whose optimizer runs inside compute, so inside the timed part.

Each run returns a small digest of its result (a few floats, or the result
itself when small); the digests of all schedulers must agree
(np.allclose, rtol=1e-6) and the table says so per workload.

Usage:
  python scripts/real_work_bench.py [--only NAME[,NAME]]
      [--schedulers threads,taskgraph,taskgraph-1GB,local-cluster]
      [--scale 1.0] [--repeat 1] [--json FILE]

With --repeat N the wall time and the peak RSS are each the median over N
runs (each in its own process). The end prints, per workload, taskgraph /
threads for the wall time and the peak RSS (and taskgraph-1GB / threads),
and the geometric means of each column.
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, os, resource, sys, tempfile, time
import numpy as np
import dask
import dask.array as da
import dask.dataframe as dd
import pandas as pd

spec = json.loads(sys.argv[1])
NAME, SCHEDULER, S = spec["workload"], spec["scheduler"], float(spec["scale"])
dask.config.set({"dataframe.shuffle.method": "tasks"})


def rs(seed):
    return da.random.RandomState(seed)


def sq(n):
    # n scaled by the square root of the scale: two such dimensions scale
    # the bytes by the scale.
    return max(1, round(n * S ** 0.5))


def lin(n):
    return max(1, round(n * S))


def vec(a, k=10):
    a = np.asarray(a, dtype="f8").ravel()
    return [float(a.sum())] + [float(v) for v in a[:k]]


# Each workload returns (collections, finish): dask.compute(*collections)
# is the timed part, finish(results) the digest {name: [floats]}.

def xcorr_argmax():
    # dask/dask#5859 (comment 608422198): a large product read by two
    # reductions computed together.
    side = sq(128)
    x = rs(0).random_sample((90, side, side), chunks=(10, side, side))
    corr = x[:, np.newaxis, ...] * x.conj()[np.newaxis, ...]
    flat = corr.reshape(corr.shape[:-2] + (-1,))
    return (da.argmax(flat, axis=-1), da.max(flat, axis=-1)), lambda r: {
        "argmax": vec(r[0]), "max": vec(r[1])}


def climatology():
    # dask/distributed#2602: anomalies from a day-of-year climatology.
    years, days, lat, lon = 5, 365, 180, lin(360)
    x = rs(1).random_sample((years * days, lat, lon), chunks=(73, lat, lon))
    by_year = x.reshape((years, days, lat, lon))
    clim = by_year.mean(axis=0)
    anomaly = by_year - clim[np.newaxis]
    return (anomaly.std(),), lambda r: {"std": [float(r[0])]}


def vorticity():
    # dask/distributed#6571: two fields and the grid spacings they share.
    t, n = lin(30), 1600
    u = rs(2).random_sample((t, n, n), chunks=(5, 800, 800))
    v = rs(3).random_sample((t, n, n), chunks=(5, 800, 800))
    dx = rs(4).random_sample((n, n), chunks=(800, 800)) + 0.5
    dy = rs(5).random_sample((n, n), chunks=(800, 800)) + 0.5
    dvdx = (v[:, 1:-1, 2:] - v[:, 1:-1, :-2]) / (2 * dx[1:-1, 1:-1])
    dudy = (u[:, 2:, 1:-1] - u[:, :-2, 1:-1]) / (2 * dy[1:-1, 1:-1])
    vort = dvdx - dudy
    return (vort.mean(), abs(vort).mean()), lambda r: {
        "mean": [float(r[0])], "mean_abs": [float(r[1])]}


def double_diff():
    # dask/distributed#6597
    n = sq(8000)
    a = rs(6).random_sample((n, n), chunks=(1000, 1000))
    b = rs(7).random_sample((n, n), chunks=(1000, 1000))
    return ((a[1:, 1:] - b[:-1, :-1]).sum(),), lambda r: {"sum": [float(r[0])]}


def uv_means():
    # dask/dask#10384: three means of products of the same two inputs.
    t = lin(1000)
    u = rs(8).random_sample((t, 250, 250), chunks=(20, 250, 250))
    v = rs(9).random_sample((t, 250, 250), chunks=(20, 250, 250))
    return ((u * u).mean(0), (v * v).mean(0), (u * v).mean(0)), lambda r: {
        "uu": vec(r[0]), "vv": vec(r[1]), "uv": vec(r[2])}


class FileTarget:
    # A small float64 array in a file, written by path: picklable, so that
    # distributed's workers write to the same array the threads do.
    def __init__(self, path, shape):
        self.path, self.shape, self.dtype, self.ndim = path, shape, np.dtype("f8"), len(shape)
        np.memmap(path, dtype="f8", mode="w+", shape=shape).flush()

    def __setitem__(self, index, value):
        m = np.memmap(self.path, dtype="f8", mode="r+", shape=self.shape)
        m[index] = value
        m.flush()

    def read(self):
        return np.array(np.memmap(self.path, dtype="f8", mode="r", shape=self.shape))


def _edges(b):
    return b - np.roll(b, 1, axis=-1) + np.roll(b, 1, axis=-2)


def _block_sum(b):
    return b.sum(axis=(2, 3), keepdims=True)


def overlap_store():
    # dask/dask#5824: a map_overlap whose blocks are reduced and stored.
    t = lin(6)
    x = rs(10).random_sample((t, 2, 3072, 3072), chunks=(1, 2, 512, 512))
    y = x.map_overlap(_edges, depth=(0, 0, 64, 64), boundary="none")
    red = y.map_blocks(_block_sum, chunks=(1, 2, 1, 1), dtype="f8")
    tmp = tempfile.mkdtemp(dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    target = FileTarget(os.path.join(tmp, "target.f8"), red.shape)
    stored = da.store(red, target, lock=False, compute=False)

    def finish(r):
        out = target.read()
        os.remove(target.path)
        os.rmdir(tmp)
        return {"stored": vec(out)}

    return (stored,), finish


def rechunk_rows():
    n = sq(11000)
    x = rs(11).random_sample((n, n), chunks=(n, 250))
    y = x.rechunk((250, n))
    return ((y ** 2).sum(axis=1),), lambda r: {"rows": vec(r[0])}


def thin_tree_sum():
    n = lin(1_000_000)
    x = rs(12).random_sample((n, 125), chunks=(500, 125))
    return (x.sum(axis=0),), lambda r: {"sum": vec(r[0], 125)}


def _left(i, rows, keys):
    rng = np.random.default_rng([20, i])
    return pd.DataFrame({"key": rng.integers(0, keys, rows), "a": rng.random(rows)})


def _right(i, rows):
    rng = np.random.default_rng([21, i])
    return pd.DataFrame({"key": np.arange(i * rows, (i + 1) * rows), "b": rng.random(rows)})


def df_merge():
    parts = 20
    lrows, rrows = lin(1_000_000), lin(250_000)
    left = dd.from_map(_left, range(parts), rows=lrows, keys=parts * rrows,
                       meta=_left(0, 0, 1), enforce_metadata=False)
    right = dd.from_map(_right, range(parts), rows=rrows, meta=_right(0, 0),
                        enforce_metadata=False)
    m = left.merge(right, on="key", how="inner", shuffle_method="tasks")
    m = m.assign(g=m.key % 100)
    digest = m.groupby("g")[["a", "b"]].sum()
    count = m.shape[0]

    def finish(r):
        g = r[0].sort_index()
        return {"rows": [float(r[1])], "a": vec(g["a"]), "b": vec(g["b"])}

    return (digest, count), finish


SEGMENTS = np.array(["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"])
DAY0 = np.datetime64("1992-01-01", "D")


def _customer(i, rows):
    rng = np.random.default_rng([30, i])
    return pd.DataFrame({
        "c_custkey": np.arange(i * rows, (i + 1) * rows),
        "c_mktsegment": pd.array(SEGMENTS[rng.integers(0, 5, rows)], dtype="string"),
    })


def _orders_arrays(i, rows, customers):
    rng = np.random.default_rng([31, i])
    return (np.arange(i * rows, (i + 1) * rows), rng.integers(0, customers, rows),
            DAY0 + rng.integers(0, 2406, rows).astype("timedelta64[D]"))


def _orders(i, rows, customers):
    key, cust, date = _orders_arrays(i, rows, customers)
    return pd.DataFrame({"o_orderkey": key, "o_custkey": cust,
                         "o_orderdate": date.astype("datetime64[s]"),
                         "o_shippriority": np.zeros(rows, dtype="i8")})


def _lineitem(i, rows, customers):
    key, _, date = _orders_arrays(i, rows, customers)
    rng = np.random.default_rng([32, i])
    n = 4 * rows
    return pd.DataFrame({
        "l_orderkey": np.repeat(key, 4),
        "l_extendedprice": rng.uniform(900.0, 105_000.0, n),
        "l_discount": rng.integers(0, 11, n) / 100.0,
        "l_shipdate": (np.repeat(date, 4) + rng.integers(1, 122, n).astype("timedelta64[D]")).astype("datetime64[s]"),
    })


def tpch_q3():
    cparts, oparts = 5, 30
    crows, orows = lin(150_000), lin(250_000)
    customers = cparts * crows
    customer = dd.from_map(_customer, range(cparts), rows=crows, meta=_customer(0, 0),
                           enforce_metadata=False)
    orders = dd.from_map(_orders, range(oparts), rows=orows, customers=customers,
                         meta=_orders(0, 0, 1), enforce_metadata=False)
    lineitem = dd.from_map(_lineitem, range(oparts), rows=orows, customers=customers,
                           meta=_lineitem(0, 0, 1), enforce_metadata=False)
    date = pd.Timestamp("1995-03-15")
    c = customer[customer.c_mktsegment == "BUILDING"]
    o = orders[orders.o_orderdate < date]
    li = lineitem[lineitem.l_shipdate > date]
    li = li.assign(revenue=li.l_extendedprice * (1 - li.l_discount))
    j = c.merge(o, left_on="c_custkey", right_on="o_custkey")
    j = j.merge(li, left_on="o_orderkey", right_on="l_orderkey")
    g = j.groupby(["l_orderkey", "o_orderdate", "o_shippriority"]).revenue.sum().reset_index()
    top = g.nlargest(10, "revenue")

    def finish(r):
        t = r[0]
        return {"orderkey": [float(v) for v in t["l_orderkey"]],
                "revenue": [float(v) for v in t["revenue"]]}

    return (top,), finish


def svd_compressed():
    # dask/dask#11055
    n = lin(1_250_000)
    x = rs(13).random_sample((n, 100), chunks=(50_000, 100))
    u, s, v = da.linalg.svd_compressed(x, k=20, n_power_iter=2, seed=0)
    return (s,), lambda r: {"s": vec(r[0], 20)}


def covariance():
    # dask/dask-ml#206: centring before PCA; x.T @ x of the centred data.
    n = lin(1_000_000)
    x = rs(14).random_sample((n, 128), chunks=(25_000, 128))
    xc = x - x.mean(axis=0)
    cov = (xc.T @ xc) / (n - 1)
    return (cov,), lambda r: {"trace": [float(np.trace(r[0]))], "cov": vec(r[0])}


WORKLOADS = {
    "xcorr-argmax": xcorr_argmax, "climatology": climatology, "vorticity": vorticity,
    "double-diff": double_diff, "uv-means": uv_means, "overlap-store": overlap_store,
    "rechunk-rows": rechunk_rows, "thin-tree-sum": thin_tree_sum, "df-merge": df_merge,
    "tpch-q3": tpch_q3, "svd-compressed": svd_compressed, "covariance": covariance,
}
if NAME == "--list":
    print(json.dumps(list(WORKLOADS)))
    sys.exit(0)

rec = {"workload": NAME, "scheduler": SCHEDULER, "scale": S, "load_before": os.getloadavg()[0]}
client = cluster = None
if SCHEDULER == "local-cluster":
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           memory_limit="10GB", dashboard_address=None)
    client = Client(cluster)
    client.run(lambda: (__import__("numpy"), __import__("pandas"), None)[-1])
    da.ones(1000, chunks=100).sum().compute()

collections, finish = WORKLOADS[NAME]()
kwargs = {}
if SCHEDULER in ("threads", "taskgraph", "taskgraph-1GB"):
    kwargs = {"scheduler": SCHEDULER.split("-")[0], "num_workers": 2}
    if SCHEDULER == "taskgraph-1GB":
        kwargs["memory_limit"] = "1GB"
if SCHEDULER.startswith("taskgraph"):
    import taskgraph.dask
    with taskgraph.dask.RunStats() as stats:
        start = time.perf_counter()
        results = dask.compute(*collections, **kwargs)
        rec["seconds"] = time.perf_counter() - start
    rec["peak_bytes"], rec["spilled_bytes"] = stats.peak_bytes, stats.spilled_bytes
else:
    start = time.perf_counter()
    results = dask.compute(*collections, **kwargs)
    rec["seconds"] = time.perf_counter() - start
rec["load_after"] = os.getloadavg()[0]
rec["digest"] = finish(results)
rec["client_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
rec["rss"] = rec["client_rss"]
if client is not None:
    peaks = client.run(lambda: __import__("resource").getrusage(
        __import__("resource").RUSAGE_SELF).ru_maxrss * 1024)
    rec["worker_rss"] = sorted(peaks.values())
    rec["rss"] = rec["client_rss"] + sum(peaks.values())
    client.close()
    cluster.close()
print(json.dumps(rec), flush=True)
"""

ALL_SCHEDULERS = ["threads", "taskgraph", "taskgraph-1GB", "local-cluster"]
ENV = {"MALLOC_TRIM_THRESHOLD_": "65536", "OMP_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
MB = 1e6


def child(spec, timeout):
    env = dict(os.environ, **ENV)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True,
                              text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**spec, "error": f"timed out after {timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return {**spec, "error": f"exit {done.returncode}: {tail}"}
    return json.loads(lines[-1])


def agree(a, b, rtol=1e-6):
    """Whether two digests agree, and the largest relative difference."""
    import numpy as np

    if a.keys() != b.keys():
        return False, math.inf
    worst = 0.0
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.shape != y.shape:
            return False, math.inf
        scale = np.maximum(np.abs(x), np.abs(y))
        diff = np.abs(x - y)
        rel = np.where(scale > 0, diff / np.where(scale > 0, scale, 1), 0)
        worst = max(worst, float(rel.max(initial=0)))
        if not np.allclose(x, y, rtol=rtol, atol=1e-9):
            return False, worst
    return True, worst


def gmean(values):
    values = [v for v in values if v and v > 0 and math.isfinite(v)]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="", help="NAME[,NAME]: workloads to run")
    parser.add_argument("--schedulers", default=",".join(ALL_SCHEDULERS))
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", default=None, help="write all records to FILE")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per run")
    args = parser.parse_args()

    listing = subprocess.run([sys.executable, "-c", CHILD, json.dumps({"workload": "--list", "scheduler": "", "scale": 1})],
                             capture_output=True, text=True, check=True)
    names = json.loads(listing.stdout)
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise SystemExit(f"unknown workloads {unknown}; known: {names}")
        names = [n for n in names if n in wanted]
    schedulers = args.schedulers.split(",")
    unknown = [s for s in schedulers if s not in ALL_SCHEDULERS]
    if unknown:
        raise SystemExit(f"unknown schedulers {unknown}; known: {ALL_SCHEDULERS}")

    print(f"{len(names)} workloads x {schedulers}, 2 workers, scale {args.scale}, repeat {args.repeat}; "
          f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    print("| workload | scheduler | wall s | peak RSS MB | taskgraph peak / spilled MB | digest |")
    print("|---|---|---:|---:|---:|---|", flush=True)
    started = time.perf_counter()
    records, summary = [], {}
    for name in names:
        runs = {}
        for scheduler in schedulers:
            rs = []
            for i in range(args.repeat):
                r = child({"workload": name, "scheduler": scheduler, "scale": args.scale}, args.timeout)
                r["repeat"] = i
                records.append(r)
                rs.append(r)
            runs[scheduler] = rs
        ok = {s: [r for r in rs if "error" not in r] for s, rs in runs.items()}
        reference = next((rs[0]["digest"] for rs in ok.values() if rs), None)
        summary[name] = {}
        for scheduler in schedulers:
            good = ok[scheduler]
            if not good:
                err = runs[scheduler][0]["error"]
                print(f"| {name} | {scheduler} | FAILED | - | - | {err[:300]} |", flush=True)
                summary[name][scheduler] = None
                continue
            wall = statistics.median(r["seconds"] for r in good)
            rss = statistics.median(r["rss"] for r in good)
            verdicts = [agree(reference, r["digest"]) for r in good]
            same = all(v[0] for v in verdicts)
            worst = max(v[1] for v in verdicts)
            digest = ("agrees" if same else "DIFFERS") + (f" (max rel diff {worst:.1e})" if worst else " (exact)")
            if len(good) < len(runs[scheduler]):
                digest += f"; {len(runs[scheduler]) - len(good)} run(s) failed"
            tg = "-"
            if scheduler.startswith("taskgraph"):
                tg = f"{statistics.median(r['peak_bytes'] for r in good) / MB:,.0f} / " \
                     f"{statistics.median(r['spilled_bytes'] for r in good) / MB:,.0f}"
            elif scheduler == "local-cluster":
                c = statistics.median(r["client_rss"] for r in good)
                tg = f"client {c / MB:,.0f} + workers {(rss - c) / MB:,.0f}"
            print(f"| {name} | {scheduler} | {wall:.2f} | {rss / MB:,.0f} | {tg} | {digest} |", flush=True)
            summary[name][scheduler] = {"seconds": wall, "rss": rss, "agrees": same}
    total = time.perf_counter() - started

    others = [s for s in ("taskgraph", "taskgraph-1GB", "local-cluster") if s in schedulers]
    if "threads" in schedulers and others:
        print()
        print("Ratios to threads (wall, peak RSS); < 1 is better than dask's threaded scheduler")
        print("| workload | " + " | ".join(f"{s} wall | {s} RSS" for s in others) + " |")
        print("|---|" + "---:|---:|" * len(others))
        cols = {s: ([], []) for s in others}
        for name in names:
            base = summary[name].get("threads")
            cells = []
            for s in others:
                cur = summary[name].get(s)
                if base and cur:
                    w, m = cur["seconds"] / base["seconds"], cur["rss"] / base["rss"]
                    cols[s][0].append(w)
                    cols[s][1].append(m)
                    cells += [f"{w:.2f}", f"{m:.2f}"]
                else:
                    cells += ["-", "-"]
            print(f"| {name} | " + " | ".join(cells) + " |")
        print("| geometric mean | " + " | ".join(f"{gmean(cols[s][0]):.2f} | {gmean(cols[s][1]):.2f}" for s in others) + " |")
    failed = [(r["workload"], r["scheduler"]) for r in records if "error" in r]
    differs = [(n, s) for n, d in summary.items() for s, v in d.items() if v and not v["agrees"]]
    print()
    print(f"total {total:.0f} s; {len(records)} runs; failed: {failed or 'none'}; digests differ: {differs or 'none'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"scale": args.scale, "repeat": args.repeat, "schedulers": schedulers,
                       "total_seconds": total, "records": records}, f, indent=1)


if __name__ == "__main__":
    main()
