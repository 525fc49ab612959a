#!/usr/bin/env python3
"""dask, dask.rewrite and METIS against taskgraph, on the same graphs, in one run.

The driver behind `cargo xtask bench --compare`. Each graph is written once by
`taskgraph generate SHAPE --tasks N` (the generator and seed of the divan
benchmarks); then, for every graph:

- dask: the measurements of scripts/dask_compare.py (dask's order, cull,
  inline, inline_functions, fuse, get and threaded.get, and the same
  operations through the `taskgraph` binary);
- rewrite: dask.rewrite (bottom-up, every task, as `valmap(rs.rewrite, dsk)`)
  against `taskgraph rewrite` with the same rules;
- metis: pymetis (scripts/metis_compare.py) against `taskgraph assign
  --workers K` (auto and mars) for every K;

and once, `rules`: dask.rewrite on the `terms_vs_rules` workload of
graph-rewrite's divan bench (graph-rewrite/benches/dask_rewrite.py).

Prints one JSON object per line on standard output, each with a "kind";
progress goes to standard error. A part whose package is missing prints
{"kind": "missing", "part": ..., "package": ...}, a part that fails
{"kind": "error", "part": ..., "message": ...}, and the others still run.
xtask turns the lines into the tables of BENCHMARKS.md.

Usage: scripts/bench_compare.py --taskgraph target/release/taskgraph
           [--parts dask,rewrite,metis,rules] [--shapes chain,tree,...]
           [--sizes 10000,100000] [--k 4,8,16] [--out target/bench-compare]
"""

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import dask_compare  # noqa: E402
import metis_compare  # noqa: E402

SHAPES = "chain,tree,random,array-sum-transpose,array-overlap,array-cumsum,shuffle"
PARTS = "dask,rewrite,metis,rules"
PACKAGES = {"dask": "dask", "rewrite": "dask", "rules": "dask", "metis": "pymetis"}


def emit(record):
    print(json.dumps(record), flush=True)


def progress(text):
    print(text, file=sys.stderr, flush=True)


def taskgraph_output(taskgraph, *args):
    return subprocess.run([taskgraph, *args], check=True, capture_output=True, text=True).stdout


# The rewrite rules, as (lhs, rhs) in the JSON term syntax of rules files
# with {"var": "x"}: those of graph-rewrite's graph bench, plus identity(x) -> x
# for the identity tasks of the array shapes. None is longer than a term it
# meets in the generated graphs (dask's matcher raises IndexError on those).
def _call(op, *args):
    return {"call": op, "args": list(args)}


X = {"var": "x"}
REWRITE_RULES = [
    (_call("inc", _call("max", {"list": [X]})), _call("inc", X)),
    (_call("add", X, 0), X),
    (_call("mul", X, 2), _call("add", X, X)),
    (_call("inc", _call("inc", X)), _call("add", X, 2)),
    (_call("sum", {"list": [X]}), X),
    (_call("neg", _call("neg", X)), X),
    (_call("identity", X), X),
]


def show_term(term):
    """The rule text of a JSON term: inc(max([x]))."""
    if isinstance(term, dict):
        if "var" in term:
            return term["var"]
        if "call" in term:
            return f"{term['call']}({', '.join(show_term(a) for a in term['args'])})"
        if "list" in term:
            return f"[{', '.join(show_term(a) for a in term['list'])}]"
    return json.dumps(term)


def dask_pattern(term):
    """A JSON term as a dask.rewrite pattern, ops as dask_compare's functions."""
    if isinstance(term, dict):
        if "var" in term:
            return term["var"]
        if "call" in term:
            return (dask_compare.OPS[term["call"]],) + tuple(dask_pattern(a) for a in term["args"])
        if "list" in term:
            return [dask_pattern(a) for a in term["list"]]
    return term


def dask_rule_set():
    from dask.rewrite import RewriteRule, RuleSet

    return RuleSet(*(RewriteRule(dask_pattern(lhs), dask_pattern(rhs), ("x",)) for lhs, rhs in REWRITE_RULES))


def write_rules_file(out):
    path = os.path.join(out, "rules.json")
    with open(path, "w") as f:
        json.dump({"rules": [{"lhs": lhs, "rhs": rhs} for lhs, rhs in REWRITE_RULES]}, f)
    return path


def measure_dask(taskgraph, path, shape, size):
    # dask_compare prints its own lines; they are progress here.
    with contextlib.redirect_stdout(sys.stderr):
        rows = dask_compare.measure(taskgraph, path, shape, size)
    for row in rows:
        emit({"kind": "dask", **row})


def measure_rewrite(taskgraph, path, shape, rules_path, rule_set):
    dsk = dask_compare.load(path)
    start = time.perf_counter()
    out = {key: rule_set.rewrite(task) for key, task in dsk.items()}
    seconds = time.perf_counter() - start
    changed = sum(1 for key, task in dsk.items() if out[key] != task)
    base = {"kind": "rewrite", "shape": shape, "tasks": len(dsk)}
    emit({**base, "system": "dask", "seconds": seconds, "changed": changed})
    # "7 rules: 2190 of 10000 tasks changed (2190 rewrites) in 0.004 s (read ..., write ...)"
    summary = taskgraph_output(taskgraph, "rewrite", path, "--rules", rules_path, "-o", os.devnull)
    words = summary.split()
    changed = int(words[words.index("of") - 1])
    value, unit = words[words.index("in") + 1:words.index("in") + 3]
    seconds = dask_compare.parse_time(f"{value} {unit}")
    # The figure's last digit: a time below it shows as zero.
    decimals = len(value.split(".")[1]) if "." in value else 0
    resolution = dask_compare.parse_time(f"{10.0 ** -decimals} {unit}")
    emit({**base, "system": "taskgraph", "seconds": seconds, "resolution": resolution, "changed": changed})


def assign_time(taskgraph, path, k, strategy):
    """Seconds from the `time` line of `taskgraph assign`'s table."""
    table = taskgraph_output(taskgraph, "assign", path, "--workers", str(k), "--strategy", strategy)
    for line in table.splitlines():
        words = line.split()
        if words and words[0] == "time":
            return dask_compare.parse_time(" ".join(words[1:3]))
    raise ValueError(f"no time in the output of taskgraph assign:\n{table}")


def measure_metis(taskgraph, path, shape, ks):
    import pymetis

    n, edges = metis_compare.read_graph(path)
    xadj, adjncy = metis_compare.csr(n, edges)
    for k in ks:
        base = {"kind": "metis", "shape": shape, "tasks": n, "edges": len(edges), "k": k}
        emit({**base, "system": "metis", **metis_compare.partition(pymetis, n, edges, xadj, adjncy, k)})
        for strategy in ["auto", "mars"]:
            report = json.loads(taskgraph_output(taskgraph, "assign", path, "--workers", str(k),
                                                 "--strategy", strategy, "--json"))
            emit({**base, "system": "taskgraph" if strategy == "auto" else "mars",
                  "edge_cut": report["edge_cut"], "imbalance": report["imbalance"],
                  "seconds": assign_time(taskgraph, path, k, strategy)})


def measure_rules():
    """dask.rewrite on graph-rewrite's terms_vs_rules workload."""
    path = os.path.join(HERE, os.pardir, "graph-rewrite", "benches", "dask_rewrite.py")
    spec = importlib.util.spec_from_file_location("dask_rewrite", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    n_terms = 10_000
    for n_rules in [1, 10, 100, 1000]:
        rules = bench.many_rules(n_rules)
        terms = bench.terms(rules, n_terms)
        seconds = bench.best_of(3, lambda: [rules.rewrite(t) for t in terms])
        emit({"kind": "rules", "rules": n_rules, "terms": n_terms, "seconds": seconds})


def available(parts):
    """The parts whose package imports; a `missing` line for each other."""
    ok = []
    for part in parts:
        package = PACKAGES[part]
        try:
            __import__(package)
        except ImportError:
            emit({"kind": "missing", "part": part, "package": package})
            progress(f"{part}: the Python package {package} is missing; skipped")
            continue
        ok.append(part)
    return ok


def guarded(part, failed, fn, *args):
    """Runs one measurement; a failure stops that part only."""
    if part in failed:
        return
    try:
        fn(*args)
    except Exception as err:  # noqa: BLE001 - reported, and the other parts go on
        failed.add(part)
        progress(traceback.format_exc())
        emit({"kind": "error", "part": part, "message": f"{type(err).__name__}: {err}"})


def environment():
    record = {"kind": "env", "python": platform.python_version()}
    for package in ["dask", "distributed", "pymetis"]:
        try:
            from importlib.metadata import version

            record[package] = version(package)
        except Exception:  # noqa: BLE001 - not installed
            pass
    emit(record)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--taskgraph", default="target/release/taskgraph")
    parser.add_argument("--parts", default=PARTS)
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--k", default="4,8,16")
    parser.add_argument("--out", default="target/bench-compare")
    args = parser.parse_args()
    parts = [p for p in args.parts.split(",") if p]
    unknown = [p for p in parts if p not in PACKAGES]
    if unknown:
        sys.exit(f"unknown parts {unknown}; the parts are {PARTS}")
    environment()
    parts = available(parts)
    os.makedirs(args.out, exist_ok=True)
    ks = [int(k) for k in args.k.split(",")]
    failed = set()
    rules_path = write_rules_file(args.out)
    rule_set = None
    if "rewrite" in parts:
        rule_set = dask_rule_set()
        for lhs, rhs in REWRITE_RULES:
            emit({"kind": "rewrite_rule", "text": f"{show_term(lhs)} -> {show_term(rhs)}"})
    if "dask" in parts:
        for theirs, ours in dask_compare.PAIRS:
            emit({"kind": "dask_pair", "dask": theirs, "ours": ours})
    graph_parts = [p for p in parts if p in ("dask", "rewrite", "metis")]
    for size in [int(s) for s in args.sizes.split(",") if s] if graph_parts else []:
        for shape in args.shapes.split(","):
            path = os.path.join(args.out, f"{shape}-{size}.json")
            progress(f"== {shape}, {size} tasks: {', '.join(graph_parts)}")
            taskgraph_output(args.taskgraph, "generate", shape, "--tasks", str(size), "-o", path)
            if "dask" in parts:
                guarded("dask", failed, measure_dask, args.taskgraph, path, shape, size)
            if "rewrite" in parts:
                guarded("rewrite", failed, measure_rewrite, args.taskgraph, path, shape, rules_path, rule_set)
            if "metis" in parts:
                guarded("metis", failed, measure_metis, args.taskgraph, path, shape, ks)
    if "rules" in parts:
        progress("== dask.rewrite, 10^4 terms against 1 to 1000 rules")
        guarded("rules", failed, measure_rules)


if __name__ == "__main__":
    main()
