#!/usr/bin/env python3
"""Peak memory of each process of a run across processes under --memory-limit.

Writes wavefront grids whose every task computes a large `blob` (each cell
reads the cell above and the one to its left, so every order holds a
wavefront of results), then runs each with `taskgraph run --processes 2` and
as two processes of a hostfile run on loopback, with and without a memory
limit, several times each. Prints a Markdown table: wall time (median), the
peak resident memory of each worker process (VmHWM, the most over the runs),
the bytes of results held and spilled as `run --json` reports them, and
whether every process stayed within the target (the limit + 160 MB). All
runs of a grid must give the same result. With `--baseline OTHER`, another
`taskgraph` binary runs the same cases in the same call, case by case.

    python3 scripts/distributed_memory_bench.py --taskgraph target/release/taskgraph
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MB = 1_000_000


def grid(rows, cols, value_bytes):
    """A rows x cols wavefront of `blob` tasks and one checksum of its corner."""
    tasks = []
    for i in range(rows):
        for j in range(cols):
            inputs = []
            if i:
                inputs.append({"ref": f"c-{i - 1}-{j}"})
            if j:
                inputs.append({"ref": f"c-{i}-{j - 1}"})
            tasks.append({
                "key": f"c-{i}-{j}",
                "task": {"call": "blob", "args": [value_bytes, i * cols + j] + inputs},
                "size": value_bytes,
            })
    corner = {"ref": f"c-{rows - 1}-{cols - 1}"}
    tasks.append({"key": "out", "task": {"call": "checksum", "args": [corner]}})
    return {"format": "taskgraph-json/1", "tasks": tasks}


def descendants(pid):
    """`pid` and every process below it."""
    found = [pid]
    try:
        for thread in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{thread}/children") as f:
                for child in f.read().split():
                    found += descendants(int(child))
    except OSError:
        pass
    return found


def high_water(pid):
    """The peak resident bytes of `pid` so far, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def watch(procs, pick):
    """Runs until every process in `procs` ends, sampling the high-water marks
    of the processes `pick(procs)` names; returns {pid: peak bytes}."""
    peaks = {}
    while any(p.poll() is None for p in procs):
        for pid in pick(procs):
            rss = high_water(pid)
            if rss is not None:
                peaks[pid] = max(peaks.get(pid, 0), rss)
        time.sleep(0.01)
    return peaks


def free_ports(n):
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def run_supervised(taskgraph, graph, limit):
    """`taskgraph run --processes 2`: the supervisor's children are the workers."""
    cmd = [taskgraph, "run", graph, "--processes", "2", "--json"] + (["--memory-limit", limit] if limit else [])
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    box = {}
    reader = threading.Thread(target=lambda: box.update(out=proc.communicate()))
    reader.start()
    peaks = watch([proc], lambda procs: descendants(procs[0].pid)[1:])
    reader.join()
    seconds = time.monotonic() - start
    out, err = box["out"]
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{err}")
    return seconds, sorted(peaks.values()), json.loads(out)


def run_hostfile(taskgraph, graph, limit, tmp):
    """Two processes of a hostfile run on loopback, started here."""
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w") as f:
        f.writelines(f"127.0.0.1:{port}\n" for port in free_ports(2))
    base = [taskgraph, "run", graph, "--hostfile", hosts, "--insecure", "--threads", "1"]
    base += ["--memory-limit", limit] if limit else []
    start = time.monotonic()
    procs = [
        subprocess.Popen(base + ["--process", str(i)] + (["--json"] if i == 0 else []),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outputs = [None, None]

    def drain(i):
        outputs[i] = procs[i].communicate()

    readers = [threading.Thread(target=drain, args=(i,)) for i in range(2)]
    for r in readers:
        r.start()
    peaks = watch(procs, lambda ps: [p.pid for p in ps])
    for r in readers:
        r.join()
    seconds = time.monotonic() - start
    for i, p in enumerate(procs):
        if p.returncode != 0:
            sys.exit(f"hostfile process {i} failed:\n{outputs[i][1]}")
    return seconds, sorted(peaks.values()), json.loads(outputs[0][0])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--limit", default="128MB")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--baseline", help="another taskgraph binary to run the same cases")
    parser.add_argument("--no-unlimited", action="store_true", help="only the runs under the limit")
    args = parser.parse_args()
    binaries = [("this", args.taskgraph)] + ([("baseline", args.baseline)] if args.baseline else [])
    limit_bytes = int(args.limit.removesuffix("MB")) * MB
    target = limit_bytes + 160 * MB

    grids = [(18, 18, 30 * MB), (16, 24, 36 * MB)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="taskgraph-distributed-memory-") as tmp:
        for r, c, b in grids:
            graph = os.path.join(tmp, f"grid-{r}x{c}.json")
            with open(graph, "w") as f:
                json.dump(grid(r, c, b), f)
            results = set()
            limits = ([] if args.no_unlimited else [None]) + [args.limit]
            for mode in ("--processes 2", "hostfile"):
                for limit in limits:
                    runs = {label: [] for label, _ in binaries}
                    for _ in range(args.repeat):
                        for label, binary in binaries:
                            if mode == "hostfile":
                                runs[label].append(run_hostfile(binary, graph, limit, tmp))
                            else:
                                runs[label].append(run_supervised(binary, graph, limit))
                    for label, _ in binaries:
                        rows.append(summary(runs[label], f"{r} x {c} of {b // MB} MB", label, mode, limit, target))
                        results.update(json.dumps(run[2]["results"]) for run in runs[label])
            if len(results) != 1:
                sys.exit(f"the {r} x {c} grid gave different results: {results}")

    print(f"`taskgraph run` across 2 processes of 1 worker each, {args.repeat} runs of each; "
          f"peak RSS of each worker process (VmHWM, the most over the runs); target under "
          f"`--memory-limit {args.limit}`: every process within {target // MB} MB. "
          "Every run of a grid gave the same result.\n")
    print("| grid | binary | processes | limit | wall (median) | peak RSS per process | peak bytes held | spilled | within target |")
    print("|---|---|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        print(row)


def summary(runs, name, label, mode, limit, target):
    """One table row for the runs of one binary on one case."""
    peaks = [max(run[1][i] for run in runs) for i in range(2)]
    report = runs[0][2]
    wall = statistics.median(run[0] for run in runs)
    rss = " / ".join(f"{p / MB:.0f} MB" for p in peaks)
    verdict = ("yes" if max(peaks) <= target else "NO") if limit else ""
    return (f"| {name} | {label} | {mode} | {limit or 'none'} | {wall:.2f} s | {rss} | "
            f"{report['peak_bytes'] / MB:.0f} MB | {report['spilled_bytes'] / MB:.0f} MB | {verdict} |")


if __name__ == "__main__":
    main()
