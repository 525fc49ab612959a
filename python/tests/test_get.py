"""taskgraph.dask.get: dask's specification of a get function, the keyword
arguments dask passes, errors, Ctrl-C, threads, and real computations
against dask's own threaded scheduler."""

import collections
import concurrent.futures
import contextvars
import multiprocessing.pool
import signal
import threading
import time
import traceback
import warnings
from operator import add, getitem

import dask
import numpy as np
import pytest
from dask._task_spec import DataNode, Task, TaskRef
from dask.callbacks import Callback
from dask.utils_test import GetFunctionTestMixin, inc

import taskgraph
import taskgraph.dask
from taskgraph import _native
from taskgraph.dask import get


class TestGetSpecification(GetFunctionTestMixin):
    """dask's own specification of a foreign get."""

    get = staticmethod(get)


class TestGetSpecificationOneWorker(GetFunctionTestMixin):
    get = staticmethod(lambda dsk, keys, **kw: get(dsk, keys, num_workers=1, **kw))


# --- how dask reaches it -------------------------------------------------------


def test_registered_as_a_named_scheduler():
    x = dask.delayed(add)(1, 2)
    assert x.compute(scheduler="taskgraph") == 3
    assert dask.compute(x, scheduler=get) == (3,)
    with dask.config.set(scheduler="taskgraph"):
        assert dask.base.get_scheduler() is get
        assert x.compute() == 3


def test_keys_nest_as_dask_nests_them():
    dsk = {"x": 1, "y": (inc, "x"), ("t", 0): (add, "x", "y")}
    assert get(dsk, ("t", 0)) == 3
    assert get(dsk, [["x", ["y"]], ("t", 0), []]) == ((1, (2,)), 3, ())
    assert get(dsk, ["y", "y"]) == (2, 2)


def test_num_workers_run_side_by_side():
    # Three tasks that each wait for the other two finish only if three
    # workers run them at once.
    barrier = threading.Barrier(3, timeout=10)
    dsk = {("b", i): (barrier.wait,) for i in range(3)}
    assert sorted(get(dsk, list(dsk), num_workers=3)) == [0, 1, 2]
    with dask.config.set(num_workers=3):
        assert sorted(get(dsk, list(dsk))) == [0, 1, 2]


@pytest.mark.parametrize("kind", ["ThreadPool", "ThreadPoolExecutor"])
def test_tasks_run_on_the_pool_given(kind):
    def ident(*_):
        time.sleep(0.005)
        return threading.get_ident()

    dsk = {("i", i): (ident,) for i in range(30)}
    dsk["all"] = (lambda *ids: set(ids), *[("i", i) for i in range(30)])
    if kind == "ThreadPool":
        pool = multiprocessing.pool.ThreadPool(3)
        pool_threads = {t.ident for t in pool._pool}
    else:
        pool = concurrent.futures.ThreadPoolExecutor(3)
    try:
        used = get(dsk, "all", pool=pool)
        if kind == "ThreadPoolExecutor":
            pool_threads = {t.ident for t in pool._threads}
        assert used <= pool_threads and len(used) >= 2
        assert threading.get_ident() not in used
        with dask.config.set(pool=pool):
            assert get(dsk, "all") <= pool_threads
    finally:
        if kind == "ThreadPool":
            pool.close()
            pool.join()
        else:
            pool.shutdown()


def test_a_process_pool_is_refused():
    pool = concurrent.futures.ProcessPoolExecutor(1)
    try:
        with pytest.raises(TypeError, match="runs tasks in this process"):
            get({"x": (inc, 1)}, "x", pool=pool)
    finally:
        pool.shutdown()


def test_strategy_is_ours_and_checked():
    dsk = {"a": 1, "b": (inc, "a"), "c": (add, "a", "b")}
    for strategy in _native.strategies():
        assert get(dsk, "c", strategy=strategy) == 3
    with pytest.raises(ValueError, match="unknown strategy 'fastest'"):
        get(dsk, "c", strategy="fastest")
    with dask.config.set({"taskgraph.strategy": "dask"}):
        assert get(dsk, "c") == 3


def test_cache_gives_results_and_receives_them():
    calls = []

    def f(x):
        calls.append(x)
        return x * 10

    dsk = {"a": (f, 1), "b": (f, "a"), "c": (add, "a", "b")}
    cache = {"a": 5}
    assert get(dsk, "c", cache=cache) == 55
    assert calls == [5]  # `a` came from the cache
    assert cache["c"] == 55


def test_callbacks_argument_and_order_of_hooks():
    events = []
    callbacks = (
        lambda dsk: events.append(("start", sorted(dsk))),
        lambda dsk, state: events.append(("start_state", sorted(state["cache"]))),
        lambda key, dsk, state: events.append(("pre", key)),
        lambda key, value, dsk, state, worker: events.append(("post", key, value, isinstance(worker, int))),
        lambda dsk, state, failed: events.append(("finish", failed, len(state["finished"]))),
    )
    dsk = {"x": 1, "y": (inc, "x"), "z": (inc, "y")}
    assert get(dsk, "z", callbacks=[callbacks]) == 3
    assert events == [
        ("start", ["x", "y", "z"]),
        ("start_state", ["x"]),
        ("pre", "y"),
        ("post", "y", 2, True),
        ("pre", "z"),
        ("post", "z", 3, True),
        ("finish", False, 2),
    ]


def test_progress_bar_and_profiler_work_unchanged(capsys):
    from dask.diagnostics import Profiler, ProgressBar

    dsk = {("x", i): (inc, i) for i in range(20)}
    dsk["total"] = (sum, [("x", i) for i in range(20)])
    with ProgressBar(dt=0.001), Profiler() as prof:
        assert get(dsk, "total", num_workers=2) == sum(range(1, 21))
    assert "100% Completed" in capsys.readouterr().out
    assert {r.key for r in prof.results} == set(dsk)


# --- errors ----------------------------------------------------------------------


def boom(x):
    raise ZeroDivisionError(f"boom {x}")


def test_a_task_error_is_raised_as_itself_with_its_frames():
    dsk = {"x": 1, "y": (boom, "x"), "z": (inc, "y")}
    with pytest.raises(ZeroDivisionError, match="boom 1") as info:
        get(dsk, "z")
    frames = [frame.name for frame in traceback.extract_tb(info.value.__traceback__)]
    assert "boom" in frames


def test_a_failing_callback_is_raised():
    def pretask(key, dsk, state):
        raise LookupError(f"callback saw {key}")

    with pytest.raises(LookupError, match="callback saw y"):
        get({"x": 1, "y": (inc, "x")}, "y", callbacks=[(None, None, pretask, None, None)])


def test_rerun_exceptions_locally_runs_the_task_again_on_the_caller():
    threads = []

    def fail():
        threads.append(threading.get_ident())
        raise ValueError("again")

    dsk = {("w", i): (time.sleep, 0.001) for i in range(4)}
    dsk["f"] = (fail,)
    with dask.config.set(rerun_exceptions_locally=True):
        with pytest.raises(ValueError, match="again"):
            get(dsk, list(dsk), num_workers=2)
    assert len(threads) == 2
    assert threads[-1] == threading.get_ident()


def test_missing_keys_and_dependencies_are_named():
    with pytest.raises(KeyError):
        get({"x": 1}, "nope")
    with pytest.raises(ValueError, match="^Missing dependency b for dependents {'a'}$"):
        get({"a": Task("a", inc, TaskRef("b")), "c": (inc, "a")}, "c")


def test_a_cycle_is_named():
    with pytest.raises(RuntimeError, match="Cycle detected"):
        get({"a": (inc, "b"), "b": (inc, "a")}, "a")


def test_ctrl_c_stops_the_run_promptly():
    main = threading.get_ident()
    started = []

    def interrupt():
        signal.pthread_kill(main, signal.SIGINT)
        return 0

    def slow(i, _):
        started.append(i)
        time.sleep(0.2)
        return i

    # 40 tasks of 0.2 s on 2 workers would take 4 s; all wait for the
    # interrupting one.
    dsk = {"i": (interrupt,)}
    dsk.update({("s", i): (slow, i, "i") for i in range(40)})
    start = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        get(dsk, list(dsk), num_workers=2)
    assert time.perf_counter() - start < 2
    count = len(started)
    time.sleep(0.5)
    assert len(started) == count < 40  # no task started after the call raised


# --- threads -----------------------------------------------------------------------


def test_no_worker_thread_outlives_the_call():
    before = set(threading.enumerate())
    dsk = {("n", i): (lambda: threading.current_thread().name,) for i in range(50)}
    names = get(dsk, list(dsk), num_workers=4)
    assert set(threading.enumerate()) == before
    assert all(name.startswith(("taskgraph-worker", "MainThread")) for name in names)


var = contextvars.ContextVar("var", default="unset")


@pytest.mark.parametrize("num_workers", [1, 4])
def test_tasks_see_the_callers_context_and_warning_filters(num_workers):
    dsk = {("v", i): (var.get,) for i in range(8)}
    token = var.set("set by the caller")
    try:
        assert set(get(dsk, list(dsk), num_workers=num_workers)) == {"set by the caller"}
    finally:
        var.reset(token)

    def warn():
        warnings.warn("from a task", RuntimeWarning, stacklevel=1)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        get({("w", i): (warn,) for i in range(4)}, [("w", i) for i in range(4)], num_workers=num_workers)
    assert [str(w.message) for w in caught] == ["from a task"] * 4


def test_nested_and_concurrent_calls():
    inner = {"a": 1, "b": (inc, "a")}
    outer = {("o", i): (lambda i=i: get(inner, "b", num_workers=2) + i,) for i in range(6)}
    assert get(outer, list(outer), num_workers=3) == tuple(2 + i for i in range(6))
    results = []
    threads = [threading.Thread(target=lambda: results.append(get(outer, list(outer), num_workers=2))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [tuple(2 + i for i in range(6))] * 8


def test_several_workers_hold_results_within_the_orders_bound():
    # A wide reduction: 4 workers run leaves side by side, and the results
    # held stay within 1.1 P + 8 of the order's max pressure P, plus one per
    # worker.
    dsk = {}
    level = []
    for i in range(512):
        dsk[("l", i)] = (inc, i)
        level.append(("l", i))
    depth = 0
    while len(level) > 1:
        depth += 1
        level_up = []
        for j in range(0, len(level), 4):
            key = ("t", depth, j)
            dsk[key] = (sum, level[j : j + 4])
            level_up.append(key)
        level = level_up
    run = _native.Execution(dsk, [level[0]], workers=4, strategy="auto")
    run.work()
    assert run.results() == [sum(range(1, 513))]
    pressure = taskgraph.max_pressure(dsk, taskgraph.order(dsk))
    assert run.peak_held <= pressure + pressure // 10 + 8 + 4


# --- what a task is, as dask 2026.8 runs it ---------------------------------------


Point = collections.namedtuple("Point", "x y")


def identity(x):
    return x


@pytest.mark.parametrize(
    "dsk, key",
    [
        ({"a": 1, "b": (identity, ("a", 2))}, "b"),  # a key inside a plain tuple is read
        ({"a": 1, "b": (identity, {"k": "a"})}, "b"),  # ... inside a dict argument it is not
        ({"a": 1, "b": (identity, [["a"], ("a",), {"a"}])}, "b"),
        ({"a": 1, "b": (identity, Point("a", 3))}, "b"),
        ({("a", 0): 1, "b": (identity, ("a", 0))}, "b"),  # a tuple key
        ({"a": 1, "b": "a", "c": ["a", "b", (inc, "b")]}, "c"),  # aliases, lists
        ({"a": DataNode("a", "b"), "b": 7}, "a"),  # a DataNode is data, not a key
        ({"a": 1, "b": Task("b", add, TaskRef("a"), Task(None, inc, TaskRef("a")))}, "b"),
        ({"a": 1, "b": Task("b", dict, x=TaskRef("a"), y=[TaskRef("a")])}, "b"),
        ({"a": (getitem, [10, 20, 30], slice(1, None))}, "a"),
    ],
)
def test_tasks_give_what_dask_gives(dsk, key):
    assert repr(get(dsk, key)) == repr(dask.threaded.get(dsk, key))


# --- real computations ----------------------------------------------------------------


def both(*collections_):
    return dask.compute(*collections_, scheduler="taskgraph"), dask.compute(*collections_, scheduler="threads")


def test_arrays():
    da = pytest.importorskip("dask.array")
    x = da.random.RandomState(0).random_sample((400, 400), chunks=(50, 40))
    ours, theirs = both(
        x.sum(axis=0),
        x.mean(),
        x + x.T,
        x.map_overlap(lambda b: b * 2 - np.roll(b, 1, axis=0), depth=2, boundary="reflect"),
        x.cumsum(axis=1),
        x.rechunk((80, 100)),
        (x + x.T).sum(),
    )
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)


def test_dataframes():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    pdf = pd.DataFrame({"k": rng.integers(0, 20, 2000), "v": rng.random(2000), "i": np.arange(2000)})
    df = dd.from_pandas(pdf, npartitions=8)
    ours, theirs = both(df.groupby("k").v.sum(), df.set_index("k").v.sum(), df.shuffle("k").i.sum())
    pd.testing.assert_series_equal(ours[0], theirs[0])
    assert ours[1:] == theirs[1:]
    assert ours[2] == pdf.i.sum()


def test_bags_and_delayed():
    db = pytest.importorskip("dask.bag")
    words = db.from_sequence(["a", "b", "a", "c", "b", "a"] * 50, npartitions=7)
    parts = [dask.delayed(lambda i: i * i)(i) for i in range(30)]
    total = dask.delayed(sum)(parts)
    ours, theirs = both(words.frequencies(), total)
    assert sorted(ours[0]) == sorted(theirs[0])
    assert ours[1] == theirs[1] == sum(i * i for i in range(30))
