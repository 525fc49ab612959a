"""The exporter against real dask: an array reduction, a dataframe groupby and
a delayed graph become taskgraph-json/1 documents that `taskgraph` reads."""

import json
import os
import subprocess

import dask
import dask.array as da
import dask.dataframe as dd
import pandas as pd
import pytest

import taskgraph_dask

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


@pytest.mark.parametrize("make", [array_reduction, dataframe_groupby, delayed_graph])
def test_exports_are_complete(make):
    obj = make()
    doc = taskgraph_dask.to_taskgraph(obj)
    check_document(doc)
    assert len(doc["tasks"]) == len(dict(obj.__dask_graph__()))


def test_array_chunks_have_sizes():
    x = da.ones((40, 40), chunks=(10, 10), dtype="float64")
    doc = taskgraph_dask.to_taskgraph(x + 1)
    sized = [task for task in doc["tasks"] if "size" in task]
    assert sized and all(task["size"] == 10 * 10 * 8 for task in sized)


def test_calls_keep_qualified_names():
    doc = taskgraph_dask.to_taskgraph(delayed_graph())
    ops = {task["task"]["call"] for task in doc["tasks"] if isinstance(task["task"], dict) and "call" in task["task"]}
    assert "builtins.sum" in ops


@pytest.mark.skipif(not TASKGRAPH, reason="set TASKGRAPH to the taskgraph binary to check the round trip")
@pytest.mark.parametrize("make", [array_reduction, dataframe_groupby, delayed_graph])
def test_taskgraph_reads_the_export(make, tmp_path):
    path = tmp_path / "graph.json.gz"
    n = taskgraph_dask.dump(make(), path)
    stats = subprocess.run([TASKGRAPH, "stats", str(path), "--json"], check=True, capture_output=True, text=True)
    assert json.loads(stats.stdout)["tasks"] == n
    order = subprocess.run([TASKGRAPH, "order", str(path), "--json"], check=True, capture_output=True, text=True)
    order = json.loads(order.stdout)
    assert sorted(priority for _, priority in order["order"]) == list(range(n))
    assert order["lower_bound"] <= order["max_pressure"]
