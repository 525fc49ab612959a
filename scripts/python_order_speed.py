"""taskgraph.order against dask.order.order, in one process, on the graph of a
map_overlap reduction with about a million tasks.

The graph is ``da.random.random((SIZE, SIZE), chunks=(10, 10))
.map_overlap(lambda a: a, depth=1).sum()``; with SIZE 2630 (the default) its
chunk grid is 263 x 263 and ``dict(x.__dask_graph__())`` has about 10^6
tasks (988 492 with dask 2026.8.0). The dict is built before any timing;
each order call then gets the same dict, so taskgraph's time includes reading
it (the conversion to Rust) and building the result dict. Max pressure is
measured on every order with ``taskgraph.max_pressure`` (dask's
``diagnostics`` count).

The same graph is also timed as ``dask._task_spec.Task`` objects: each key
``Task(key, f, *[TaskRef(dep) ...])`` over the dependencies dask's
``convert_legacy_graph`` gives it (the keys and edges of the graph above,
every task in the form dask 2026.8 builds natively). ``--forms`` picks
either.

Usage (in a venv with ``pip install "./python[test]"``):

    python scripts/python_order_speed.py [--size 2630] [--repeat 3]
        [--dask-repeat 1] [--forms dict,tasks] [--markdown OUT.md]
"""

import argparse
import gc
import os
import platform
import sys
import time

from speed_common import cpu_model, map_overlap


def build(size):
    return dict(map_overlap(size).__dask_graph__())


def noop(*args):
    return None


def as_tasks(dsk):
    """The keys and edges of ``dsk`` as ``Task`` objects."""
    from dask._task_spec import Task, TaskRef, convert_legacy_graph

    converted = convert_legacy_graph(dsk)
    return {key: Task(key, noop, *[TaskRef(dep) for dep in node.dependencies]) for key, node in converted.items()}


def best_of(n, fn):
    best, result = None, None
    for _ in range(n):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=2630, help="array side; chunks are 10 x 10 (default 2630)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each taskgraph strategy, best kept (default 3)")
    parser.add_argument("--dask-repeat", type=int, default=1, help="runs of dask's order, best kept (default 1)")
    parser.add_argument("--strategies", default="auto,dask", help="taskgraph strategies (default auto,dask)")
    parser.add_argument("--forms", default="dict,tasks", help="graph forms: dict (dask's own), tasks (Task objects)")
    parser.add_argument("--markdown", help="also write the table to this file")
    args = parser.parse_args()

    import dask
    import dask.order

    import taskgraph

    start = time.perf_counter()
    graphs = {"dict": build(args.size)}
    if "tasks" in args.forms.split(","):
        graphs["tasks"] = as_tasks(graphs["dict"])
    n = len(graphs["dict"])
    lower = taskgraph.lower_bound(graphs["dict"])
    print(f"graph: {n} tasks, built in {time.perf_counter() - start:.1f} s", file=sys.stderr)

    def num(x):
        return f"{x:,}".replace(",", " ")

    lines = [
        f"`da.random.random(({args.size}, {args.size}), chunks=(10, 10)).map_overlap(lambda a: a, depth=1).sum()`: "
        f"{num(n)} tasks (graph dict built before timing); lower bound on max pressure {num(lower)}.",
        "",
        "| graph form | order | seconds | vs dask | max pressure |",
        "|---|---|---:|---:|---:|",
    ]
    for form in args.forms.split(","):
        dsk = graphs[form]
        label = "dask's dict" if form == "dict" else "Task objects"
        rows = []
        for strategy in args.strategies.split(","):
            seconds, o = best_of(args.repeat, lambda: taskgraph.order(dsk, strategy=strategy))
            rows.append((f"taskgraph.order, strategy={strategy!r}", seconds, taskgraph.max_pressure(dsk, o)))
            print(f"{label}: {rows[-1][0]}: {seconds:.3f} s", file=sys.stderr)
            del o
        seconds, o = best_of(args.dask_repeat, lambda: dask.order.order(dsk))
        dask_row = ("dask.order.order", seconds, taskgraph.max_pressure(dsk, o))
        print(f"{label}: dask.order.order: {seconds:.3f} s", file=sys.stderr)
        del o
        for name, secs, pressure in [*rows, dask_row]:
            ratio = dask_row[1] / secs
            lines.append(f"| {label} | {name} | {secs:.3f} | {ratio:.1f}x | {num(pressure)} |")
    lines += [
        "",
        f"Best of {args.repeat} (taskgraph) and {args.dask_repeat} (dask) in one process; "
        f"{os.cpu_count()} cores, {cpu_model()}; CPython {platform.python_version()}, dask {dask.__version__}, "
        f"taskgraph {taskgraph.__version__}.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
