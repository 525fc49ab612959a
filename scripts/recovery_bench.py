"""A run across processes that loses one, against the same run without the
fault: `taskgraph run FILE --processes 4 --json` on a 10^5-task random graph
and a shuffle, worker process 1 killed (SIGKILL) halfway through the
fault-free run's time once every process is connected. Linux only (reads
/proc for the worker processes and their sockets).

    python3 scripts/recovery_bench.py --taskgraph target/release/taskgraph [--repeat 3] [--hostfile]

With --hostfile, the four processes are started as a run across hosts
(`--hostfile H --process I --allow-shrink`, on loopback ports), with no
supervisor: the survivors regroup among themselves, and what the lost
process had run is what it told the others on its heartbeats (every 50 ms
at most), as the survivors say (`..., it had run N tasks`).

Prints, per graph: the fault-free median time, the median time with the
fault and their ratio, the tasks the attempt after the loss ran, those of
them that had run before (`recomputed_tasks`), and the tasks the lost
process had run (as the supervisor says: `..., after running N tasks`,
from its last progress line, at most 20 ms old), which the recomputed tasks
are compared with. Every run's results are checked equal to the fault-free
run's.
"""

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PROCESSES = 4


def children(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def sockets(pid):
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    count = 0
    for name in names:
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                count += 1
        except OSError:
            pass
    return count


def run(taskgraph, graph, kill_after=None, hostfile=False):
    """One run; with ``kill_after`` (seconds after every worker has
    connected), worker process 1 is killed then. Returns the wall time, the
    JSON report and the time from start to connected."""
    if hostfile:
        return run_hostfile(taskgraph, graph, kill_after)
    started = time.perf_counter()
    proc = subprocess.Popen(
        [taskgraph, "run", graph, "--json", "--processes", str(PROCESSES)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    workers = []
    while len(workers) < PROCESSES and proc.poll() is None:
        workers = children(proc.pid)
        time.sleep(0.001)
    connected_at = None
    # Connecting, a worker has at most its listener and two connections to
    # each other; with more, it has finished connecting.
    connecting = 1 + 2 * (PROCESSES - 1)
    while proc.poll() is None and not all(sockets(w) > connecting for w in workers):
        time.sleep(0.001)
    connected_at = time.perf_counter() - started
    if kill_after is not None and proc.poll() is None:
        time.sleep(kill_after)
        os.kill(workers[1], signal.SIGKILL)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"taskgraph failed ({proc.returncode}): {err}")
    report = json.loads(out)
    ran = re.search(r"after running (\d+) tasks", err)
    report["lost_ran"] = int(ran.group(1)) if ran else None
    return wall, report, connected_at


def free_ports(n):
    held = [socket.socket() for _ in range(n)]
    for s in held:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in held]
    for s in held:
        s.close()
    return ports


def run_hostfile(taskgraph, graph, kill_after):
    """As ``run``, the processes started as a run across hosts that allows
    shrinking; the wall time runs until every survivor has ended."""
    hosts = os.path.join(os.path.dirname(graph), "hosts")
    with open(hosts, "w") as f:
        f.write("".join(f"127.0.0.1:{port}\n" for port in free_ports(PROCESSES)))
    env = dict(os.environ, TASKGRAPH_SECRET="recovery-bench-secret-0123456789")
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            [taskgraph, "run", graph, "--json", "--hostfile", hosts, "--process", str(i), "--allow-shrink"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(PROCESSES)
    ]
    connecting = 1 + 2 * (PROCESSES - 1)
    while all(p.poll() is None for p in procs) and not all(sockets(p.pid) > connecting for p in procs):
        time.sleep(0.001)
    connected_at = time.perf_counter() - started
    if kill_after is not None and procs[1].poll() is None:
        time.sleep(kill_after)
        procs[1].kill()
    outputs = [p.communicate() for p in procs]
    wall = time.perf_counter() - started
    for i, p in enumerate(procs):
        if p.returncode != 0 and not (kill_after is not None and i == 1):
            sys.exit(f"taskgraph process {i} failed ({p.returncode}): {outputs[i][1]}")
    report = json.loads(outputs[0][0])
    ran = re.search(r"had run (\d+) tasks", outputs[0][1])
    report["lost_ran"] = int(ran.group(1)) if ran else None
    return wall, report, connected_at


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--hostfile", action="store_true", help="a run across hosts, with --allow-shrink")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="recovery-bench-")
    rows = []
    for shape in ["random", "shuffle"]:
        graph = os.path.join(work, f"{shape}.json")
        subprocess.run(
            [args.taskgraph, "generate", shape, "--tasks", "100000", "-o", graph], check=True, capture_output=True
        )
        clean = [run(args.taskgraph, graph, hostfile=args.hostfile) for _ in range(args.repeat)]
        t_clean = statistics.median(r[0] for r in clean)
        connect = statistics.median(r[2] for r in clean)
        expected = clean[0][1]["results"]
        tasks = clean[0][1]["tasks_run"]
        half = max((t_clean - connect) / 2, 0.0)
        faulty = [run(args.taskgraph, graph, kill_after=half, hostfile=args.hostfile) for _ in range(args.repeat)]
        for _, report, _ in faulty:
            assert report["results"] == expected, "the results differ from the fault-free run's"
            assert report["attempts"] == 2 and report["lost_processes"] == [1], report
        t_fault = statistics.median(r[0] for r in faulty)
        recomputed = statistics.median(r[1]["recomputed_tasks"] for r in faulty)
        attempt_tasks = statistics.median(r[1]["tasks_run"] for r in faulty)
        lost_ran = statistics.median(r[1]["lost_ran"] for r in faulty)
        worst = max(r[1]["recomputed_tasks"] / max(r[1]["lost_ran"], 1) for r in faulty)
        rows.append((shape, tasks, t_clean, t_fault, attempt_tasks, recomputed, lost_ran, worst))
    how = "a run across hosts (--allow-shrink)" if args.hostfile else "--processes"
    print(f"{PROCESSES} processes ({how}), process 1 killed halfway; median of {args.repeat}")
    print(
        "| graph | tasks | fault-free | with the loss | ratio | attempt ran | recomputed "
        "| the lost process had run | recomputed / its work, worst run |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for shape, tasks, t_clean, t_fault, attempt_tasks, recomputed, lost_ran, worst in rows:
        print(
            f"| {shape} | {tasks} | {t_clean:.2f} s | {t_fault:.2f} s | {t_fault / t_clean:.2f}x "
            f"| {attempt_tasks:.0f} | {recomputed:.0f} "
            f"| {lost_ran:.0f} | {worst:.2f} |"
        )


if __name__ == "__main__":
    main()
