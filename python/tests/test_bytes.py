"""Orders in bytes: ``sizes=`` given or found in dask arrays' chunk metadata,
``max_bytes`` and ``lower_bound_bytes``, the errors of bad sizes, and runs
of array computations that find their sizes."""

import dask
import dask.array as da
import numpy as np
import pytest

import taskgraph
import taskgraph.dask
from taskgraph._sizes import chunk_layers

PRODUCER = 500_000 * 8  # np.ones(500_000): 4 MB
SMALL = 8


def _produce(i):
    return np.ones(500_000)


def _length(a):
    return len(a)


def _checksum(a):
    return float(a.sum())


def _gather(*parts):
    return sum(parts)


def _readers(n=40):
    """The issue's graph: ``n`` producers of 4 MB, each read by a ``len``-like
    and a ``checksum``-like task, all their small results gathered by one."""
    dsk, sizes = {}, {}
    for i in range(n):
        dsk[("produce", i)] = (_produce, i)
        dsk[("length", i)] = (_length, ("produce", i))
        dsk[("checksum", i)] = (_checksum, ("produce", i))
        sizes[("produce", i)] = PRODUCER
        sizes[("length", i)] = sizes[("checksum", i)] = SMALL
    dsk["gather"] = (_gather, *[k for i in range(n) for k in (("length", i), ("checksum", i))])
    sizes["gather"] = SMALL
    return dsk, sizes


# --- (a) sizes given -------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["auto", "greedy", "dfs"])
def test_sizes_given_hold_few_producers(strategy):
    dsk, sizes = _readers()
    o = taskgraph.order(dsk, sizes=sizes, strategy=strategy)
    assert sorted(o.values()) == list(range(len(dsk)))
    held = taskgraph.max_bytes(dsk, o, sizes)
    assert held <= 2 * PRODUCER + 80 * SMALL
    # As a count, the order is still measured the way dask's tests expect.
    assert isinstance(taskgraph.max_pressure(dsk, o), int)
    assert taskgraph.lower_bound_bytes(dsk, sizes) <= held


def test_without_sizes_the_order_counts_results():
    dsk, sizes = _readers()
    counted = taskgraph.order(dsk)
    assert counted == taskgraph.order(dsk, sizes=False)
    weighed = taskgraph.order(dsk, sizes=sizes)
    # Counting results, the order may hold many producers at once; weighing
    # them, never more than two.
    assert taskgraph.max_bytes(dsk, counted, sizes) >= taskgraph.max_bytes(dsk, weighed, sizes)
    assert taskgraph.max_bytes(dsk, weighed, sizes) <= 2 * PRODUCER + 80 * SMALL


def test_max_pressure_checks_sizes_and_counts():
    dsk, sizes = _readers()
    o = taskgraph.order(dsk, sizes=sizes)
    assert taskgraph.max_pressure(dsk, o, sizes) == taskgraph.max_pressure(dsk, o)
    with pytest.raises(ValueError, match="the size of key 'gather' is -1"):
        taskgraph.max_pressure(dsk, o, {"gather": -1})


def test_sizes_alike_give_the_order_of_counting():
    dsk, _ = _readers(10)
    alike = dict.fromkeys(dsk, 100)
    assert list(taskgraph.order(dsk, sizes=alike).items()) == list(taskgraph.order(dsk).items())


def test_missing_sizes_take_their_groups_mean():
    dsk, sizes = _readers(4)
    del sizes[("produce", 3)]
    del sizes["gather"]
    g = taskgraph.Graph(dsk, sizes=sizes)
    assert g.known_sizes == len(dsk) - 2
    assert g.sizes[("produce", 3)] == PRODUCER
    # "gather" is a group of its own with nothing known: the mean of all.
    known = [v for v in sizes.values()]
    assert g.sizes["gather"] == sum(known) // len(known)
    assert g.max_bytes() == taskgraph.max_bytes(dsk, g.order(), g.sizes)
    assert g.lower_bound_bytes() == taskgraph.lower_bound_bytes(dsk, g.sizes)


def test_a_size_of_none_is_unknown():
    dsk, sizes = _readers(2)
    sizes[("produce", 1)] = None
    assert taskgraph.Graph(dsk, sizes=sizes).sizes[("produce", 1)] == PRODUCER


def test_numpy_integers_are_sizes():
    dsk, sizes = _readers(2)
    sizes = {k: np.int64(v) for k, v in sizes.items()}
    assert taskgraph.Graph(dsk, sizes=sizes).sizes[("produce", 0)] == PRODUCER


def test_graph_without_sizes():
    dsk, _ = _readers(2)
    g = taskgraph.Graph(dsk)
    assert g.sizes is None and g.known_sizes == 0
    with pytest.raises(ValueError, match="no size is known"):
        g.max_bytes()
    with pytest.raises(ValueError, match="no size is known"):
        taskgraph.lower_bound_bytes(dsk)


# --- (b) sizes from dask's metadata ------------------------------------------


def test_chunk_sizes_from_array_layers():
    x = da.ones((10, 7), chunks=(4, 3), dtype="float32")
    y = (x + 1).sum(axis=0)
    g = taskgraph.Graph.from_dask(y)
    assert g.known_sizes == len(g)
    name = (x + 1).name
    # Chunks of 4 x 3, 4 x 1 and 2 x 3 float32s.
    assert g.sizes[(name, 0, 0)] == 4 * 3 * 4
    assert g.sizes[(name, 0, 2)] == 4 * 1 * 4
    assert g.sizes[(name, 2, 1)] == 2 * 3 * 4
    # The same sizes from the HighLevelGraph itself, as `order` finds them.
    hlg = y.__dask_graph__()
    assert taskgraph.Graph(hlg).sizes == g.sizes
    assert taskgraph.max_bytes(hlg, g.order()) == g.max_bytes()
    # A plain dict has no metadata: its order counts results.
    assert taskgraph.Graph(dict(hlg)).sizes is None
    assert taskgraph.Graph(hlg, sizes=False).sizes is None


def test_chunk_layers_lists_every_array_layer():
    x = da.random.random((40, 40), chunks=10)
    y = (x + 1).sum()
    layers = {name: (chunks, itemsize) for name, chunks, itemsize in chunk_layers(y)}
    assert layers[x.name] == (((10,) * 4, (10,) * 4), 8)
    assert layers[(x + 1).name] == (((10,) * 4, (10,) * 4), 8)
    assert layers[y.name] == ((), 8)
    assert chunk_layers({"a": 1}) == []
    assert chunk_layers(dask.delayed(sum)([1, 2])) == []


def test_given_sizes_win_over_those_found():
    x = da.ones((4, 4), chunks=2)
    hlg = x.__dask_graph__()
    key = (x.name, 0, 0)
    g = taskgraph.Graph(hlg, sizes={key: 1})
    assert g.sizes[key] == 1
    assert g.sizes[(x.name, 1, 1)] == 2 * 2 * 8


def test_unknown_chunk_lengths_give_no_size():
    x = da.ones((6,), chunks=2)
    y = x[x > 0]  # chunks of unknown length
    g = taskgraph.Graph.from_dask(y + 1)
    assert g.sizes[(x.name, 0)] == 16
    assert g.known_sizes < len(g)


def test_the_scheduler_finds_the_sizes_of_a_computation():
    """What ``dask.compute`` hands a scheduler is an expression; its array
    layers tell the chunks of the optimized graph's keys."""
    x = da.random.random((400, 400), chunks=100)
    seen = {}

    def scheduler(expr, keys, **kwargs):
        graph = taskgraph.Graph(expr.__dask_graph__(), source=expr)
        seen["graph"] = graph
        return taskgraph.dask.get(expr, keys, **kwargs)

    res = dask.compute(x.max(), (x + 1).sum(), scheduler=scheduler)
    assert np.allclose(res, dask.compute(x.max(), (x + 1).sum(), scheduler="threads"))
    graph = seen["graph"]
    chunk = 100 * 100 * 8
    assert graph.known_sizes > len(graph) // 2
    found = [k for k, v in graph.sizes.items() if isinstance(k, tuple) and v == chunk]
    assert len(found) >= 16


# --- (c) bad sizes -------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        ({"b": -1}, ValueError, r"the size of key 'b' is -1"),
        ({"b": 2**64}, ValueError, r"the size of key 'b'"),
        ({"b": 1.5}, TypeError, r"the size of key 'b' must be an int \(bytes\), not 1.5"),
        ({"b": "8"}, TypeError, r"the size of key 'b' must be an int"),
        ({"b": True}, TypeError, r"the size of key 'b' must be an int"),
        ({"zz": 8}, KeyError, r"sizes gives a size for 'zz', which is not a key of the graph"),
        ({("b", 0): 8}, KeyError, r"\('b', 0\)"),
        ({"b": 8, frozenset(): 1}, KeyError, r"frozenset\(\)"),
        ([("b", 8)], TypeError, r"sizes must map keys to bytes \(a dict\), not list"),
        (True, TypeError, r"sizes must map keys to bytes"),
    ],
)
def test_bad_sizes(bad, error, match):
    dsk = {"a": 1, "b": (sum, ["a"])}
    for call in (
        lambda: taskgraph.order(dsk, sizes=bad),
        lambda: taskgraph.max_bytes(dsk, {"a": 0, "b": 1}, bad),
        lambda: taskgraph.max_pressure(dsk, {"a": 0, "b": 1}, bad),
        lambda: taskgraph.lower_bound_bytes(dsk, bad),
        lambda: taskgraph.Graph(dsk, sizes=bad),
        lambda: taskgraph.dask.get(dsk, "b", sizes=bad),
    ):
        with pytest.raises(error, match=match):
            call()


# --- (d) runs ------------------------------------------------------------------


def _cross_correlation():
    rng = da.random.default_rng(0)
    a = rng.random((2000, 2000), chunks=250)
    b = rng.random((2000, 2000), chunks=250)
    return (a @ b.T) - (a * b).sum(axis=1, keepdims=True)


def test_compute_finds_sizes_and_matches_threads():
    c = _cross_correlation()
    with taskgraph.dask.RunStats() as stats:
        got = dask.compute(c.argmax(), c.max(), scheduler="taskgraph", num_workers=2)
    want = dask.compute(c.argmax(), c.max(), scheduler="threads")
    assert got[0] == want[0]
    assert np.isclose(got[1], want[1])
    assert stats.tasks_run > 0


def test_compute_with_sizes_under_a_memory_limit():
    c = _cross_correlation()
    with taskgraph.dask.RunStats() as stats:
        got = c.sum().compute(scheduler="taskgraph", num_workers=2, memory_limit="64MB")
    assert np.isclose(got, c.sum().compute(scheduler="threads"))
    assert stats.peak_bytes > 0


def test_get_with_sizes_given():
    dsk, sizes = _readers(8)
    want = 8 * (500_000 + 500_000.0)
    with taskgraph.dask.RunStats() as weighed:
        assert taskgraph.dask.get(dsk, "gather", sizes=sizes, num_workers=1) == want
    # One worker follows the order: at most two producers held at once.
    assert weighed.peak_bytes <= 2 * PRODUCER + 10_000
    assert taskgraph.dask.get(dsk, "gather", sizes=False) == want


# --- (d) sizes learned as the run goes ------------------------------------------


def _run_order(dsk, **kwargs):
    """The keys in the order one worker runs them, and what it held at most."""
    from dask.callbacks import Callback

    ran = []

    class Record(Callback):
        def _pretask(self, key, dsk, state):
            ran.append(key)

    with taskgraph.dask.RunStats() as stats, Record():
        result = taskgraph.dask.get(dsk, "gather", num_workers=1, **kwargs)
    return result, ran, stats.peak_bytes


def test_a_run_without_sizes_learns_them_and_holds_few_producers():
    dsk, sizes = _readers()
    want = 40 * (500_000 + 500_000.0)
    # Counted, the order holds every producer (160 MB) on one worker.
    counted = taskgraph.order(dsk)
    assert taskgraph.max_bytes(dsk, counted, sizes) >= 30 * PRODUCER
    result, ran, peak = _run_order(dsk)
    assert result == want
    assert sorted(ran, key=str) == sorted(dsk, key=str)
    # The first results measured (producers of 4 MB, their 8-byte readers)
    # call for an order in bytes: past them, one producer at a time.
    assert peak <= 4 * PRODUCER
    tail = [k for k in ran if k[0] == "produce"][8:]
    assert all(ran.index(("length", k[1])) < ran.index(tail[i + 1]) for i, k in enumerate(tail[:-1]))
    # With another strategy, or sizes=False, the run keeps its order.
    for kwargs in ({"strategy": "dask"}, {"sizes": False}):
        _, ran, peak = _run_order(dsk, **kwargs)
        order = taskgraph.order(dsk, strategy=kwargs.get("strategy", "auto"))
        assert ran == sorted(dsk, key=order.get)
    assert peak >= 30 * PRODUCER


def test_several_workers_that_learn_sizes_go_over_to_bytes():
    dsk, _ = _readers()
    want = 40 * (500_000 + 500_000.0)
    with taskgraph.dask.RunStats() as learned:
        assert taskgraph.dask.get(dsk, "gather", num_workers=2) == want
    # Counting, two workers held 140 MB; once the sizes are learned, the
    # bound weighs bytes (what a worker took in a batch before that stays
    # taken).
    assert learned.peak_bytes <= 24 * PRODUCER


def test_results_alike_keep_the_order_of_counting():
    # Every result small and alike: nothing to learn, one worker runs the
    # order exactly.
    dsk = {("x", i): (abs, -i) for i in range(100)}
    dsk.update({("y", i): (max, ("x", i), ("x", 99 - i)) for i in range(100)})
    dsk["gather"] = (_gather, *[("y", i) for i in range(100)])
    _, ran, _ = _run_order(dsk)
    assert ran == sorted(dsk, key=taskgraph.order(dsk).get)
