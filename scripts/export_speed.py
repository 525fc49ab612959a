"""Time ``taskgraph.dask.to_taskgraph``/``dump`` against the exporter it
replaced (the Python converter of taskgraph 0.1 before the Rust conversion,
taken from the git history) on the same dask graphs, in one process.

    python3 scripts/export_speed.py --python target/venv-ci/bin/python [--old REV]

Prints one line per graph: tasks, the old and new median of 5 calls of
``to_taskgraph`` (the document as a dict) and of ``dump`` (a file), and the
ratios; the documents are compared task by task.
"""

import argparse
import os
import subprocess
import sys
import tempfile

RUN = r'''
import json, statistics, sys, time, types
import dask, dask.array as da
import taskgraph.dask

old = types.ModuleType("old_dask")
old.__dict__["__name__"] = "old_dask"
exec(compile(open(sys.argv[1]).read(), "old_dask", "exec"), old.__dict__)

def graphs():
    x = da.random.random((4000, 4000), chunks=(40, 40))
    yield "array (x + x.T).sum(), 10^4 chunks", dict(((x + x.T).sum()).__dask_graph__())
    y = da.ones((2000, 2000), chunks=(10, 10))
    yield "array ((y + 1) * 2).mean(axis=0), 4*10^4 chunks", dict((((y + 1) * 2).mean(axis=0)).__dask_graph__())
    inc = dask.delayed(lambda i: i + 1, name="inc")
    yield "delayed, 2*10^4 tasks", dict(dask.delayed(sum)([inc(i) for i in range(20000)]).__dask_graph__())

def timed(f, graph):
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        doc = f(graph)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs), doc

import os, tempfile
path = os.path.join(tempfile.mkdtemp(), "g.json")
for name, graph in graphs():
    t_old, d_old = timed(old.to_taskgraph, graph)
    t_new, d_new = timed(taskgraph.dask.to_taskgraph, graph)
    w_old, _ = timed(lambda g: old.dump(g, path), graph)
    w_new, _ = timed(lambda g: taskgraph.dask.dump(g, path), graph)
    same = [a == b for a, b in zip(d_old["tasks"], d_new["tasks"])]
    assert len(d_old["tasks"]) == len(d_new["tasks"]) and d_old["data_nodes"] == d_new["data_nodes"]
    print(f"{name}: {len(d_new['tasks'])} tasks, old {t_old:.3f} s, new {t_new:.3f} s, "
          f"{t_old / t_new:.1f}x; dump old {w_old:.3f} s, new {w_new:.3f} s, {w_old / w_new:.1f}x; "
          f"{sum(same)} of {len(same)} tasks written alike", flush=True)
'''


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", default=sys.executable, help="a Python with taskgraph and dask installed")
    parser.add_argument("--old", default="ff1b0ba", help="the git revision of the Python exporter")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = subprocess.run(
        ["git", "show", f"{args.old}:python/taskgraph/dask.py"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    try:
        subprocess.run([args.python, "-c", RUN, f.name], check=True)
    finally:
        os.unlink(f.name)


if __name__ == "__main__":
    main()
