"""Graphs in every form dask 2026.8 accepts, with names, for the parity tests.

Each maker returns a fresh graph dict. ``DETERMINISTIC`` names the graphs on
which ``dask.order.order`` itself gives the same result whatever the hash
seed (it iterates sets elsewhere); only there can "the same result as dask"
be asserted exactly.
"""

from operator import add

from dask._task_spec import Alias, DataNode, Dict, List, Task, TaskRef


def f(*args):
    return args


def inc(x):
    return x + 1


def docstring():
    return {"a": 1, "b": 2, "c": (inc, "a"), "d": (add, "b", "c")}


def single():
    return {"a": 1}


def literals_and_missing_alias():
    return {"a": 1, "b": 2, "c": "zzz"}


def shared_literal_root():
    return {"x": 10, "a": (f, "x"), "b": (f, "x"), "c": (f, "a", "b")}


def shared_data_node_root():
    return {
        "x": DataNode("x", 10),
        "a": Task("a", f, TaskRef("x")),
        "b": Task("b", f, TaskRef("x")),
        "c": Task("c", f, TaskRef("a"), TaskRef("b")),
    }


def list_leaf():
    return {"a": (f,), "b": (f,), "c": ["a", "b"]}


def alias_chain():
    return {"a": (f,), "b": "a", "c": "b"}


def task_alias():
    return {"a": Task("a", f), "b": Alias("b", "a")}


def tuple_keys():
    return {("x", 0): (f,), ("x", 1): (f,), ("y", 0): (f, ("x", 0), ("x", 1))}


def external_task_ref():
    return {"a": Task("a", f, TaskRef("ext")), "b": Task("b", f, TaskRef("a"))}


def external_legacy():
    return {"a": (f, "ext"), "b": (f, "a")}


def mixed_key_types():
    return {"x": (f, 1), ("y", 0): (f, 2), "z": (f, "x", ("y", 0))}


def key_in_plain_tuple():
    return {"a": (f,), "b": (f, (1, "a"))}


def nested_tasks():
    return {"a": (f,), "b": (f,), "c": (f, (inc, "a"), [(inc, "b"), {"k": "a"}])}


def task_spec_containers():
    return {
        "a": Task("a", f),
        "b": Task("b", f),
        "c": Task("c", f, List(TaskRef("a"), TaskRef("b"))),
        "d": Task("d", f, Dict(x=TaskRef("c"), y=1)),
        "e": Task("e", f, [TaskRef("a")]),  # plain list: not a dependency
    }


def task_kwargs():
    return {"a": Task("a", f), "b": Task("b", f, x=TaskRef("a"))}


def legacy_holding_task_objects():
    return {"a": Task("a", f), "b": (f, TaskRef("a")), "c": (f, [Alias("x", "b")])}


def float_and_int_keys():
    return {1: (f,), 2.5: (f, 1), ("a", 0.1): (f, 2.5), ("a", 1e20): (f,), ("a", -3): (f, ("a", 1e20), ("a", 0.1))}


def quoted_string_keys():
    return {"it's": (f,), 'say "hi"': (f, "it's"), ("back\\slash", 0): (f, 'say "hi"'), ("ünï", 1): (f,)}


def diamond():
    return {"a": (f,), "b": (f, "a"), "c": (f, "a"), "d": (f, "b", "c")}


def chain(n=50):
    dsk = {("c", 0): (f,)}
    for i in range(1, n):
        dsk[("c", i)] = (inc, ("c", i - 1))
    return dsk


def tree_reduction(width=16):
    dsk = {("x", i): (f,) for i in range(width)}
    level, names = 0, [("x", i) for i in range(width)]
    while len(names) > 1:
        level += 1
        nxt = []
        for j in range(0, len(names), 2):
            key = (f"r{level}", j // 2)
            dsk[key] = (f, *names[j : j + 2])
            nxt.append(key)
        names = nxt
    return dsk


def numpy_literal():
    import numpy as np

    return {"a": np.arange(3), "b": (f, "a")}


ALL = [
    docstring,
    single,
    literals_and_missing_alias,
    shared_literal_root,
    shared_data_node_root,
    list_leaf,
    alias_chain,
    task_alias,
    tuple_keys,
    external_task_ref,
    external_legacy,
    mixed_key_types,
    key_in_plain_tuple,
    nested_tasks,
    task_spec_containers,
    task_kwargs,
    legacy_holding_task_objects,
    float_and_int_keys,
    quoted_string_keys,
    diamond,
    chain,
    tree_reduction,
    numpy_literal,
]


def array_graphs():
    """Real dask.array graphs (as ``__dask_graph__`` gives them: mixed legacy
    tuples and Task objects, float keys, aliases)."""
    import dask.array as da

    x = da.ones((60, 60), chunks=(10, 10))
    return {
        "sum_transpose": dict(((x + x.T).sum()).__dask_graph__()),
        "map_overlap": dict(x.map_overlap(lambda a: a, depth=1).sum().__dask_graph__()),
        "matmul": dict((x @ x).__dask_graph__()),
        "cumsum": dict(x.cumsum(axis=0).sum().__dask_graph__()),
    }
