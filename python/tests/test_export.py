"""The exporter against real dask: an array reduction, a dataframe groupby and
a delayed graph become taskgraph-json/1 documents that `taskgraph` reads, with
the dependencies dask's order computes."""

import json
import os
import subprocess

import dask
import dask.array as da
import dask.dataframe as dd
import pandas as pd
import pytest

from dask._task_spec import DataNode, Task, TaskRef

import taskgraph
import taskgraph.dask

TASKGRAPH = os.environ.get("TASKGRAPH")


def refs(term, found):
    if isinstance(term, dict):
        if "ref" in term:
            found.append(term["ref"])
        for value in term.get("args", []) + term.get("list", []):
            refs(value, found)
    return found


def check_document(doc):
    assert doc["format"] == "taskgraph-json/1"
    keys = [json.dumps(task["key"]) for task in doc["tasks"]]
    assert len(keys) == len(set(keys)), "keys are unique"
    for task in doc["tasks"]:
        assert set(task) <= {"key", "task", "deps", "size"}
        assert ("task" in task) != ("deps" in task)
        for ref in refs(task.get("task"), []) + task.get("deps", []):
            assert json.dumps(ref) in keys, f"{task['key']} refers to {ref}, which is not a task"


def array_reduction():
    x = da.random.random((40, 40), chunks=(10, 10))
    return (x + x.T).mean(axis=0).sum()


def dataframe_groupby():
    frame = pd.DataFrame({"k": [i % 7 for i in range(1000)], "v": range(1000)})
    return dd.from_pandas(frame, npartitions=8).groupby("k").v.sum()


def delayed_graph():
    inc = dask.delayed(lambda i: i + 1, name="inc")
    return dask.delayed(sum)([inc(i) for i in range(10)])


def fused_graph():
    """The graph dask computes for an array expression: optimized, its
    linear chains fused into Tasks that hold the inner tasks inside."""
    import dask.array as da
    from dask.base import collections_to_expr

    y = ((da.ones((20, 20), chunks=(5, 5)) + 1) * 2).sum()
    return dict(collections_to_expr([y], optimize_graph=True).optimize().__dask_graph__())


@pytest.mark.parametrize("make", [array_reduction, dataframe_groupby, delayed_graph])
def test_exports_are_complete(make):
    obj = make()
    doc = taskgraph.dask.to_taskgraph(obj)
    check_document(doc)
    assert len(doc["tasks"]) == len(dict(obj.__dask_graph__()))


def test_array_chunks_have_sizes():
    x = da.ones((40, 40), chunks=(10, 10), dtype="float64")
    doc = taskgraph.dask.to_taskgraph(x + 1)
    sized = [task for task in doc["tasks"] if "size" in task]
    assert sized and all(task["size"] == 10 * 10 * 8 for task in sized)


def test_calls_keep_qualified_names():
    doc = taskgraph.dask.to_taskgraph(delayed_graph())
    ops = {task["task"]["call"] for task in doc["tasks"] if isinstance(task["task"], dict) and "call" in task["task"]}
    assert "builtins.sum" in ops


@pytest.mark.skipif(not TASKGRAPH, reason="set TASKGRAPH to the taskgraph binary to check the round trip")
@pytest.mark.parametrize("make", [array_reduction, dataframe_groupby, delayed_graph, fused_graph])
def test_taskgraph_reads_the_export(make, tmp_path):
    path = tmp_path / "graph.json.gz"
    n = taskgraph.dask.dump(make(), path)
    stats = subprocess.run([TASKGRAPH, "stats", str(path), "--json"], check=True, capture_output=True, text=True)
    assert json.loads(stats.stdout)["tasks"] == n
    order = subprocess.run([TASKGRAPH, "order", str(path), "--json"], check=True, capture_output=True, text=True)
    order = json.loads(order.stdout)
    assert sorted(priority for _, priority in order["order"]) == list(range(n))
    assert order["lower_bound"] <= order["max_pressure"]


def f(*args):
    return args


def spelled(key):
    """A plain dask key (str, int, float, tuples of those) as JSON text."""

    def plain(part):
        return [plain(p) for p in part] if isinstance(part, tuple) else part

    return json.dumps(plain(key))


def deps_of(doc):
    """Each task's dependencies as the document gives them."""
    res = {}
    for task in doc["tasks"]:
        found = task.get("deps") or refs(task.get("task"), [])
        res[json.dumps(task["key"])] = sorted({json.dumps(ref) for ref in found})
    return res


@pytest.mark.parametrize("make", [array_reduction, dataframe_groupby, delayed_graph])
def test_dependencies_are_those_dask_orders_by(make):
    from dask.order import DependenciesMapping

    graph = dict(make().__dask_graph__())
    doc = taskgraph.dask.to_taskgraph(graph)
    expected = {
        spelled(key): sorted({spelled(d) for d in deps if d in graph}) for key, deps in DependenciesMapping(graph).items()
    }
    assert deps_of(doc) == expected


def test_fused_graphs_keep_internal_keys_inside():
    graph = fused_graph()
    assert any(getattr(v, "has_subgraph", lambda: False)() for v in graph.values()), "the graph has fused tasks"
    doc = taskgraph.dask.to_taskgraph(graph)
    check_document(doc)
    assert len(doc["tasks"]) == len(graph)
    # The inner keys appear as values, not references.
    text = json.dumps(doc)
    assert '"<key>"' in text


def test_key_in_plain_tuple_is_not_a_reference():
    doc = taskgraph.dask.to_taskgraph({"a": (f,), "b": (f, (1, "a"))})
    check_document(doc)
    assert deps_of(doc)['"b"'] == []


def test_data_nodes_are_listed():
    graph = {
        "x": DataNode("x", 10),
        "lit": 5,
        "a": Task("a", f, TaskRef("x")),
        "b": (f, "a", "lit"),
        "both": ["a", "b"],
    }
    doc = taskgraph.dask.to_taskgraph(graph)
    check_document(doc)
    assert doc["data_nodes"] == ["x", "lit", "both"]


def test_external_references_are_not_references():
    doc = taskgraph.dask.to_taskgraph({"a": Task("a", f, TaskRef("ext")), "b": Task("b", f, TaskRef("a"))})
    check_document(doc)
    assert deps_of(doc) == {'"a"': [], '"b"': ['"a"']}


@pytest.mark.parametrize("graph", [{"a": (f, "a")}, {"a": Task("a", f, TaskRef("a"))}, {"a": (f, "b"), "b": (f, "a")}])
def test_self_reference_is_a_cycle(graph, tmp_path):
    with pytest.raises(RuntimeError, match="Cycle detected"):
        taskgraph.dask.to_taskgraph(graph)
    with pytest.raises(RuntimeError, match="Cycle detected"):
        taskgraph.dask.dump(graph, tmp_path / "cycle.json")
    assert not list(tmp_path.iterdir()), "no partial file is left"


def test_demo_writes_three_graphs(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "taskgraph", "demo", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["array-reduction.json", "dataframe-groupby.json", "delayed.json"]
    for name in names:
        check_document(json.loads((tmp_path / name).read_text()))


@pytest.mark.parametrize(
    ("key", "says"),
    [
        (float("nan"), "a float that is not finite"),
        (("x", float("inf")), "a float that is not finite"),
        (10**30, "outside the 64-bit range"),
        (("x", -(2**63) - 1), "outside the 64-bit range"),
        (b"\xff\xfe", "not UTF-8"),
    ],
    ids=["nan", "inf-in-tuple", "huge-int", "tiny-int-in-tuple", "bad-bytes"],
)
def test_keys_the_format_cannot_hold_raise_naming_them(key, says, tmp_path):
    path = tmp_path / "g.json"
    with pytest.raises(ValueError, match=says) as raised:
        taskgraph.dask.dump({key: 1, "y": (inc, key)}, path)
    assert repr(key) in str(raised.value)
    assert not path.exists(), "nothing is written"


def test_keys_written_alike_raise(tmp_path):
    path = tmp_path / "g.json"
    with pytest.raises(ValueError, match=r"keys b'x' and 'x' are both written as \"x\""):
        taskgraph.dask.dump({b"x": 1, "x": 2}, path)
    assert not path.exists()
    # Bytes keys alone are written decoded, and read back.
    assert taskgraph.dask.dump({b"a": 1, ("b", 0): (inc, b"a")}, path) == 2
    assert [task["key"] for task in json.loads(path.read_text())["tasks"]] == ["a", ["b", 0]]


@pytest.mark.skipif(not TASKGRAPH, reason="set TASKGRAPH to the taskgraph binary to check the round trip")
def test_what_is_written_is_read(tmp_path):
    path = tmp_path / "g.json"
    dsk = {("x", 2**63 - 1): 1.5, ("x", -(2**63)): (inc, ("x", 2**63 - 1)), 0.25: (inc, ("x", -(2**63)))}
    assert taskgraph.dask.dump(dsk, path) == 3
    stats = subprocess.run([TASKGRAPH, "stats", str(path), "--json"], check=True, capture_output=True, text=True)
    assert json.loads(stats.stdout)["tasks"] == 3


def test_graph_writes_the_graph_it_holds(tmp_path):
    dsk = {"a": 1, "b": (inc, "a"), "c": (inc, "b")}
    # From an iterator of items: read once, written whole.
    g = taskgraph.Graph(iter(dsk.items()))
    assert len(g) == 3
    assert g.to_json(tmp_path / "it.json") == 3
    # From a dict changed afterwards: the tasks it read.
    d = dict(dsk)
    g = taskgraph.Graph(d)
    d["d"] = (inc, "c")
    del d["a"]
    assert g.to_json(tmp_path / "d.json") == 3
    keys = [task["key"] for task in json.loads((tmp_path / "d.json").read_text())["tasks"]]
    assert keys == ["a", "b", "c"]


def inc(x):
    return x + 1


def test_values_the_format_cannot_hold_are_marked_opaque():
    import numpy as np

    doc = taskgraph.dask.to_taskgraph(
        {"a": (f, float("nan"), 2**70, np.int64(3), np.float32(0.5), 1 + 2j, None, True, "s")}
    )
    args = doc["tasks"][0]["task"]["args"]
    assert args == [
        {"call": "<opaque>", "args": ["builtins.float"]},
        {"call": "<opaque>", "args": ["builtins.int"]},
        3,
        0.5,
        {"call": "<opaque>", "args": ["builtins.complex"]},
        None,
        True,
        "s",
    ]
    assert doc["producer"] == "taskgraph.dask"


def test_keyword_arguments_and_containers():
    doc = taskgraph.dask.to_taskgraph(
        {"x": 1, "y": Task("y", f, TaskRef("x"), [1, (2, 3)], {"k": TaskRef("x")}, scale=2, name="n")}
    )
    assert doc["tasks"][1]["task"] == {
        "call": f"{__name__}.f",
        "args": [
            {"ref": "x"},
            {"list": [1, {"list": [2, 3]}]},
            {"call": "<dict>", "args": ["k", {"ref": "x"}]},
            {"call": "<kwargs>", "args": ["scale", 2, "name", "n"]},
        ],
    }


def test_keys_that_are_values_are_terms_the_reader_takes(tmp_path):
    # A tuple key that is not a dependency is written as a list, never as a
    # bare array (which is no term).
    doc = taskgraph.dask.to_taskgraph({"a": Task("a", f, TaskRef(("ext", 0)))})
    assert doc["tasks"][0]["task"]["args"] == [{"call": "<key>", "args": [{"list": ["ext", 0]}]}]
    if TASKGRAPH:
        path = tmp_path / "g.json"
        taskgraph.dask.dump({"a": Task("a", f, TaskRef(("ext", 0)))}, path)
        subprocess.run([TASKGRAPH, "stats", str(path)], check=True, capture_output=True)


@pytest.mark.parametrize("depth", [100_000])
def test_deep_values_raise_naming_the_task_without_recursion(depth, tmp_path):
    value = 1
    for _ in range(depth):
        value = [value]
    loop = []
    loop.append(loop)
    # Legacy tuples are read by dask (which recurses), Task objects by
    # taskgraph alone.
    for dsk in ({"deep": (f, value)}, {"deep": (f, loop)}, {"deep": Task("deep", f, DataNode(None, value))}):
        with pytest.raises(ValueError, match="task 'deep': its value nests deeper than"):
            taskgraph.dask.dump(dsk, tmp_path / "g.json")
    assert not list(tmp_path.iterdir())


def test_opaque_values_hiding_dependencies_keep_them():
    class Box:
        def __init__(self, inner):
            self.dependencies = frozenset(["x"])

    doc = taskgraph.dask.to_taskgraph({"x": 1, "y": Box("x")})
    assert doc["tasks"][1] == {"key": "y", "deps": ["x"]}


def corpus_graphs():
    import corpus

    graphs = [(make.__name__, make()) for make in corpus.ALL]
    return graphs + sorted(corpus.array_graphs().items())


@pytest.mark.parametrize(("name", "graph"), corpus_graphs(), ids=[name for name, _ in corpus_graphs()])
def test_every_graph_of_the_corpus_exports_with_dasks_dependencies(name, graph, tmp_path):
    from dask.core import istask
    from dask._task_spec import DataNode as Data, GraphNode
    from dask.order import DependenciesMapping

    doc = taskgraph.dask.to_taskgraph(graph)
    check_document(doc)
    assert [task["key"] for task in doc["tasks"]] == [json.loads(spelled(key)) for key in graph]
    expected = {spelled(k): sorted({spelled(d) for d in deps if d in graph}) for k, deps in DependenciesMapping(graph).items()}
    assert deps_of(doc) == expected

    def is_data(value):
        if isinstance(value, GraphNode):
            return isinstance(value, Data)
        return not istask(value)

    assert doc["data_nodes"] == [json.loads(spelled(k)) for k, v in graph.items() if is_data(v)]
    # The file says the same, and the command reads it.
    path = tmp_path / "g.json.gz"
    assert taskgraph.dask.dump(graph, path) == len(graph)
    if TASKGRAPH:
        stats = subprocess.run([TASKGRAPH, "stats", str(path), "--json"], check=True, capture_output=True, text=True)
        assert json.loads(stats.stdout)["tasks"] == len(graph)
    assert taskgraph.Graph(graph).to_dot().startswith("digraph taskgraph {")
