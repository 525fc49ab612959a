"""taskgraph.Graph: a dask graph read once, then ordered, measured, placed,
written and drawn."""

import json
import os
import subprocess

import dask.array as da
import dask.order
import pytest

import corpus
from graphviz_here import has_dot, needs_dot
import taskgraph

TASKGRAPH = os.environ.get("TASKGRAPH")


def inc(x):
    return x + 1


def reduction():
    x = da.ones((40, 40), chunks=(10, 10))
    return (x + x.T).sum()


def test_from_collection_and_from_graph():
    x = reduction()
    g = taskgraph.Graph.from_dask(x)
    assert len(g) == len(dict(x.__dask_graph__()))
    assert set(g.keys()) == set(dict(x.__dask_graph__()))
    assert len(taskgraph.Graph.from_dask(x.__dask_graph__())) == len(g)
    assert len(taskgraph.Graph.from_dask(dict(x.__dask_graph__()))) == len(g)
    assert repr(g) == f"<taskgraph.Graph: {len(g)} tasks>"


def test_order_is_taskgraph_order():
    dsk = corpus.array_graphs()["map_overlap"]
    g = taskgraph.Graph(dsk)
    for strategy in ["auto", "dask", "tree"]:
        o = g.order(strategy=strategy)
        assert o == taskgraph.order(dsk, strategy=strategy)
        assert list(o) == list(taskgraph.order(dsk, strategy=strategy))
        assert g.max_pressure(o) == taskgraph.max_pressure(dsk, o)
    assert g.max_pressure() == taskgraph.max_pressure(dsk, g.order())
    assert g.max_pressure(dask.order.order(dsk)) >= g.lower_bound()


def test_stats():
    g = taskgraph.Graph(corpus.shared_literal_root())
    assert g.stats() == {
        "tasks": 4,
        "edges": 4,
        "roots": 1,
        "leaves": 1,
        "depth": 3,
        "max_in_degree": 2,
        "max_out_degree": 2,
        "data_nodes": 1,
        "lower_bound": 2,
    }


def test_external_keys_are_not_tasks():
    g = taskgraph.Graph(corpus.external_task_ref())
    assert len(g) == 2 and g.stats()["edges"] == 1
    assert g.order() == {"a": 0, "b": 1}


def test_assign():
    g = taskgraph.Graph.from_dask(reduction())
    placement = g.assign(4)
    assert set(placement) == set(g.keys())
    assert set(placement.values()) == {0, 1, 2, 3}
    with pytest.raises(ValueError):
        g.assign(0)


def test_cycle():
    with pytest.raises(RuntimeError, match="Cycle detected"):
        taskgraph.Graph({"a": (corpus.f, "a")})


def test_to_json(tmp_path):
    path = tmp_path / "graph.json"
    g = taskgraph.Graph.from_dask(reduction())
    assert g.to_json(path) == len(g)
    doc = json.loads(path.read_text())
    assert doc["format"] == "taskgraph-json/1" and len(doc["tasks"]) == len(g)
    assert any("size" in task for task in doc["tasks"]), "sizes come from the collection's layers"


def test_dot_labels_and_colors():
    g = taskgraph.Graph({"a": (corpus.f,), 'say "hi"': (corpus.f, "a")})
    text = g.to_dot()
    assert text.startswith("digraph taskgraph {")
    assert 'label="a\\n#0"' in text and 'label="say \\"hi\\"\\n#1"' in text
    assert "n0 -> n1;" in text
    plain = g.to_dot(color=None)
    assert "no colouring" in plain
    assert plain.count('fillcolor="#ffffff"') == 2, "every task is white"
    assert "<B>memorypressure</B>" in g.to_dot(color="memorypressure")
    assert g.to_dot(color="age") == g.to_dot(color="ages")
    with pytest.raises(ValueError, match="unknown colouring \"purple\""):
        g.to_dot(color="purple")
    with pytest.raises(ValueError, match="more than the limit of 1 boxes"):
        g.to_dot(max_tasks=1)


@pytest.mark.skipif(not TASKGRAPH, reason="set TASKGRAPH to the taskgraph binary to compare with `taskgraph viz`")
@pytest.mark.parametrize("color", ["order", "memorypressure", "worker", "stage"])
def test_pictures_are_those_of_taskgraph_viz(tmp_path, color):
    # One drawing code: the picture of the graph is the one the command
    # draws of the file the graph writes.
    g = taskgraph.Graph.from_dask(reduction())
    path = tmp_path / "g.json"
    g.to_json(path)
    done = subprocess.run(
        [TASKGRAPH, "viz", str(path), "--color", color], check=True, capture_output=True, text=True
    )
    assert g.to_dot(color=color) == done.stdout
    collapsed = subprocess.run([TASKGRAPH, "viz", str(path), "--collapse"], check=True, capture_output=True, text=True)
    assert g.to_dot(collapse=True) == collapsed.stdout


def test_viz(tmp_path):
    g = taskgraph.Graph.from_dask(reduction())
    g.viz(tmp_path / "graph.dot")
    assert (tmp_path / "graph.dot").read_text().startswith("digraph")
    # Written through a private temporary file, yet with an ordinary file's mode.
    umask = os.umask(0o022)
    os.umask(umask)
    assert (tmp_path / "graph.dot").stat().st_mode & 0o777 == 0o666 & ~umask
    with pytest.raises(ValueError, match=r"cannot write \.txt"):
        g.viz(tmp_path / "graph.txt")
    if not has_dot():
        assert g._repr_svg_() is None
        with pytest.raises(RuntimeError, match="Graphviz"):
            g.viz(tmp_path / "graph.svg")
        return
    g.viz(tmp_path / "graph.svg")
    svg = (tmp_path / "graph.svg").read_text()
    assert "<svg" in svg and "#0" in svg
    assert g._repr_svg_().lstrip().startswith("<?xml") or "<svg" in g._repr_svg_()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.dot", "graph.svg"]


def test_repr_svg_is_none_for_large_graphs():
    g = taskgraph.Graph(corpus.chain(2500))
    assert g._repr_svg_() is None


def test_size_like_arguments_are_bounded_as_on_the_command_line():
    from operator import neg

    g = taskgraph.Graph({"a": 1, "b": (neg, "a")})
    for bad in (0, 10**9):
        with pytest.raises(ValueError, match="workers must be from 1 to 1000000"):
            g.assign(bad)
    assert set(g.assign(2)) == {"a", "b"}


def test_bad_orders_and_dependencies_say_what_is_wrong():
    from operator import neg

    dsk = {"a": 1, "b": (neg, "a")}
    with pytest.raises(TypeError, match="the priority of key 'b' must be an int"):
        taskgraph.max_pressure(dsk, {"a": 0, "b": 1.5})
    with pytest.raises(ValueError, match="the priority of key 'b' is 1180591620717411303424: out of range"):
        taskgraph.max_pressure(dsk, {"a": 0, "b": 2**70})
    with pytest.raises(TypeError, match="the order must map each key to its priority"):
        taskgraph.max_pressure(dsk, None)
    with pytest.raises(TypeError, match="dependencies must map each key to the keys it needs, not int"):
        taskgraph.order(dsk, dependencies=7)
    assert taskgraph.order(dsk, dependencies={"b": ["a"]}) == {"a": 0, "b": 1}


def bndl_example():
    """BNDL's example: 4 partitions read and mapped, shuffled into 2
    reducers, each mapped again."""
    dsk = {}
    for i in range(4):
        dsk[("read", i)] = i
        dsk[("map", i)] = (inc, ("read", i))
    for j in range(2):
        dsk[("reduce", j)] = (sum, [("map", i) for i in range(4)])
        dsk[("output", j)] = (inc, ("reduce", j))
    return dsk


def test_stages_of_bndl_example():
    plan = taskgraph.Graph(bndl_example()).stages()
    assert plan == {
        "stage_count": 2,
        "stages": [
            {"stage": 0, "tasks": 8, "tasks_after_coalescing": 4, "wide_inputs": 0},
            {"stage": 1, "tasks": 4, "tasks_after_coalescing": 2, "wide_inputs": 8},
        ],
        "barriers": 1,
        "edges": 14,
        "edges_with_barriers": 12,
    }
    # Kept keys stay tasks: the reducers are not coalesced into the outputs.
    kept = taskgraph.Graph(bndl_example()).stages(keys=[("reduce", 0), ("reduce", 1)])
    assert [s["tasks_after_coalescing"] for s in kept["stages"]] == [4, 4]
    with pytest.raises(KeyError, match="not keys of the graph"):
        taskgraph.Graph(bndl_example()).stages(keys=["nope"])


def test_stages_of_dask_collections():
    # A chain of blockwise steps has no wide edge: one stage, each chunk's
    # lineage one task.
    x = da.ones((40, 40), chunks=(10, 10))
    plan = taskgraph.Graph.from_dask(((x + 1) * 2).sum(axis=0)).stages()
    assert plan["stage_count"] == 1 and plan["stages"][0]["wide_inputs"] == 0
    assert plan["stages"][0]["tasks_after_coalescing"] < plan["stages"][0]["tasks"]
    # Three tasks that each read the four blocks of a row: a 4 x 3 block,
    # whose 12 edges a barrier would make 7.
    a = da.ones((40, 40), chunks=(10, 10))
    dsk = dict(a.__dask_graph__())
    dsk.update({("all", j): (sum, list(a.__dask_keys__()[0])) for j in range(3)})
    plan = taskgraph.Graph(dsk).stages()
    assert plan["stage_count"] == 2
    assert plan["stages"][1]["wide_inputs"] == 3 * 4
    assert (plan["barriers"], plan["edges"], plan["edges_with_barriers"]) == (1, 12, 7)


@pytest.mark.skipif(not TASKGRAPH, reason="set TASKGRAPH to the taskgraph binary to check the round trip")
@pytest.mark.parametrize("make", [bndl_example, lambda: dict(reduction().__dask_graph__()), corpus.docstring])
def test_stages_match_the_command_line(tmp_path, make):
    # The same dict as `taskgraph stages --json` prints for the graph written
    # out, key for key.
    g = taskgraph.Graph(make())
    path = tmp_path / "g.json"
    g.to_json(path)
    done = subprocess.run([TASKGRAPH, "stages", str(path), "--json"], check=True, capture_output=True, text=True)
    assert json.loads(done.stdout) == g.stages()


def test_keys_are_drawn_as_written():
    long = "k" * 20_000
    dsk = {"A&B": 1, "A&amp;B": 2, "x&#x202E;gnp.exe": (inc, "A&B"), long: (inc, "A&amp;B"), "nul\0key": 3}
    g = taskgraph.Graph(dsk)
    dot = g.to_dot()
    assert 'label="A&amp;B\\n' in dot and 'label="A&amp;amp;B\\n' in dot
    assert "x&amp;#x202E;gnp.exe" in dot
    assert "\0" not in dot
    assert 'label="' + "k" * 39 + "\u2026" in dot, "long keys are cut in labels"
    # A lone surrogate cannot be UTF-8: drawn as U+FFFD, never an error.
    g = taskgraph.Graph({"\ud800": 1, "b": (inc, "\ud800")})
    dot = g.to_dot(color=None)
    dot.encode("utf-8")
    svg = g._repr_svg_()
    if has_dot():
        assert svg.startswith("<?xml") or "<svg" in svg
    else:
        assert svg is None


def test_hostile_keys_render(tmp_path):
    needs_dot()
    dsk = {"A&B": 1, "nul\0key": 3, "k" * 20_000: (inc, "A&B"), "\udcff": 4}
    taskgraph.Graph(dsk).viz(tmp_path / "g.svg")
    assert (tmp_path / "g.svg").read_text().count("A&amp;B") >= 1


def test_viz_takes_every_colouring_and_writes_pages(tmp_path):
    g = taskgraph.Graph.from_dask(reduction())
    g.viz(tmp_path / "workers.dot", color="worker", workers=3)
    assert "worker 2" in (tmp_path / "workers.dot").read_text()
    g.viz(tmp_path / "groups.gv", collapse=True)
    assert "tasks" in (tmp_path / "groups.gv").read_text()
    with pytest.raises(ValueError, match="workers must be from 1 to 1000"):
        g.viz(tmp_path / "none.dot", color="worker", workers=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["groups.gv", "workers.dot"]
    if not has_dot():
        return
    g.viz(tmp_path / "page.html")
    page = (tmp_path / "page.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
