"""taskgraph.dask.get: dask's specification of a get function, the keyword
arguments dask passes, errors, Ctrl-C, threads, and real computations
against dask's own threaded scheduler."""

import collections
import concurrent.futures
import contextvars
import errno
import multiprocessing.pool
import os
import pathlib
import pickle
import signal
import struct
import subprocess
import sys
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
import taskgraph._threads
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


def _os_threads():
    """The threads of this process, Rust's included (None off Linux)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def test_ctrl_c_while_a_large_graph_is_read_and_ordered():
    # 10^6 tasks take 0.6 s to read, order and schedule in a release build
    # (6 s in a debug one) before the first runs: a Ctrl-C at any point of
    # it raises at once, not once it is over, and leaves nothing running.
    n = 1_000_000
    dsk = {("x", 0): 1}
    dsk.update({("x", i): (inc, ("x", i - 1)) for i in range(1, n)})
    # Large enough to start every thread a run starts (rayon's pool).
    assert get({k: dsk[k] for k in list(dsk)[:20_000]}, ("x", 19_999), num_workers=1) == 20_000
    threads, before = _os_threads(), set(threading.enumerate())
    # The kernel's timer sends the signal: a Python thread could not while
    # the graph is read, which holds the GIL. Its handler is Ctrl-C's.
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    late = {}
    try:
        for delay in (0.05, 0.3, 0.6):
            start = time.perf_counter()
            signal.setitimer(signal.ITIMER_REAL, delay)
            with pytest.raises(KeyboardInterrupt):
                get(dsk, ("x", n - 1), num_workers=1)
            late[delay] = round(time.perf_counter() - start - delay, 3)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    # It took 1.0-1.3 s; now some 0.02 s.
    assert max(late.values()) < 0.4, late
    assert set(threading.enumerate()) == before
    assert _os_threads() == threads


# --- threads -----------------------------------------------------------------------


def test_no_worker_thread_outlives_the_call():
    before = set(threading.enumerate())
    dsk = {("n", i): (lambda: threading.current_thread().name,) for i in range(50)}
    names = get(dsk, list(dsk), num_workers=4)
    assert set(threading.enumerate()) == before
    assert all(name.startswith(("taskgraph-worker", "MainThread")) for name in names)


# A run whose task fails while tasks on the other threads are still inside
# Python, in and out of the GIL (sleeps): the interpreter then exits, and a
# thread of the run still in a task would be ended inside Rust frames while
# it finalizes, which aborts the process (SIGABRT or SIGSEGV, no message).
_EXIT_AFTER_AN_ERROR = """
import multiprocessing.pool, signal, sys, threading, time
import numpy as np
import taskgraph.dask

mode = sys.argv[1]
main = threading.get_ident()

class Stop(BaseException):
    pass

def spin(i):
    for _ in range(100):
        time.sleep(0.001)
    return i

def fail():
    time.sleep(0.01)
    if mode.startswith("interrupt"):
        # Ctrl-C: the call raises at once, the other tasks still running.
        signal.pthread_kill(main, signal.SIGINT)
        time.sleep(0.05)
        return 0
    raise (Stop if mode == "base" else ValueError)("failed")

dsk = {("s", i): (spin, i) for i in range(16)}
dsk["f"] = (fail,)
kwargs = {}
if mode == "memory":
    dsk["f"] = (lambda: time.sleep(0.01) or np.zeros(1_000_000),)
    kwargs["memory_limit"] = "1MB"
elif mode in ("pool", "interrupt-pool"):
    kwargs["pool"] = multiprocessing.pool.ThreadPool(4)  # daemon threads, never closed
try:
    taskgraph.dask.get(dsk, list(dsk), num_workers=4, **kwargs)
except (ValueError, Stop, MemoryError, KeyboardInterrupt) as err:
    print(type(err).__name__)
"""


def test_the_interpreter_exits_cleanly_after_a_failed_run(tmp_path):
    # Before the call waited for its threads, 14-19 runs of 30 aborted in
    # each mode but "pool" (30 of 30).
    script = tmp_path / "exit_after_an_error.py"
    script.write_text(_EXIT_AFTER_AN_ERROR)
    expected = {
        "value": "ValueError",
        "base": "Stop",
        "memory": "MemoryError",
        "pool": "ValueError",
        "interrupt": "KeyboardInterrupt",
        "interrupt-pool": "KeyboardInterrupt",
    }
    outcomes = []
    for _ in range(3):
        for mode, error in expected.items():
            done = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True, timeout=60)
            outcomes.append((mode, done.returncode, done.stdout.strip() == error, done.stderr[-300:]))
    assert [o for o in outcomes if o[1] != 0 or not o[2]] == []


def test_a_failed_run_returns_once_its_tasks_on_other_threads_end():
    # The call returns only once no thread of the run is left in a task,
    # on its own threads and on a pool's.
    ended = []

    def slow(i):
        time.sleep(0.2)
        ended.append(i)
        return i

    def fail():
        time.sleep(0.05)
        raise ValueError("failed")

    dsk = {("s", i): (slow, i) for i in range(3)}
    dsk["f"] = (fail,)
    with pytest.raises(ValueError, match="failed"):
        get(dsk, list(dsk), num_workers=4)
    assert sorted(ended) == [0, 1, 2]
    ended.clear()
    pool = multiprocessing.pool.ThreadPool(4)
    try:
        with pytest.raises(ValueError, match="failed"):
            get(dsk, list(dsk), pool=pool)
        assert sorted(ended) == [0, 1, 2]
    finally:
        pool.terminate()


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


def test_a_batch_of_quick_tasks_hands_back_the_slow_ones():
    # Quick tasks make a worker take ready tasks a batch at a time; the slow
    # ones that follow are shared out all the same.
    def slow(_, i):
        time.sleep(0.02)
        return threading.get_ident()

    dsk = {("q", i): (inc, i) for i in range(32)}
    dsk["root"] = (sum, [("q", i) for i in range(32)])
    dsk.update({("s", i): (slow, "root", i) for i in range(20)})
    counts = collections.Counter(get(dsk, [("s", i) for i in range(20)], num_workers=2))
    assert len(counts) == 2 and min(counts.values()) >= 5, counts


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
    # A sum over rows in an order the shuffle leaves open: equal up to rounding.
    assert ours[1] == pytest.approx(theirs[1], rel=1e-12)
    assert ours[2] == pdf.i.sum()


def test_bags_and_delayed():
    db = pytest.importorskip("dask.bag")
    words = db.from_sequence(["a", "b", "a", "c", "b", "a"] * 50, npartitions=7)
    parts = [dask.delayed(lambda i: i * i)(i) for i in range(30)]
    total = dask.delayed(sum)(parts)
    ours, theirs = both(words.frequencies(), total)
    assert sorted(ours[0]) == sorted(theirs[0])
    assert ours[1] == theirs[1] == sum(i * i for i in range(30))


# --- memory limit ---------------------------------------------------------------------


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """A temporary directory of the test's own, for the spill directories."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


# A result is measured once made, and a task's is expected to take the mean
# of those before it: one larger than that can pass the limit by its excess
# (at most a chunk, 500 kB) until the next spill, and peak_bytes says so.
CHUNK = 250 * 250 * 8


def must_hold_all_of_x():
    da = pytest.importorskip("dask.array")
    x = da.random.RandomState(0).random_sample((2000, 2000), chunks=(250, 250))  # 32 MB
    return abs(x - x.mean()).sum()


@pytest.mark.parametrize("num_workers", [1, 3])
def test_a_memory_limit_spills_and_gives_the_same_result(num_workers, private_tmp):
    y = must_hold_all_of_x()
    expected = y.compute(scheduler="threads")
    with taskgraph.dask.RunStats() as stats:
        assert y.compute(scheduler="taskgraph", memory_limit="8MB", num_workers=num_workers) == expected
    assert 0 < stats.peak_bytes <= 8_000_000 + CHUNK
    assert stats.spilled_bytes > 0
    assert stats.tasks_run > 0 and stats.peak_held > 0
    assert list(private_tmp.iterdir()) == []  # the spill directory is gone
    with taskgraph.dask.RunStats() as unlimited:
        assert y.compute(scheduler="taskgraph") == expected
    assert unlimited.peak_bytes > 30_000_000 and unlimited.spilled_bytes == 0


def test_a_memory_limit_on_a_pool(private_tmp):
    y = must_hold_all_of_x()
    expected = y.compute(scheduler="threads")
    with concurrent.futures.ThreadPoolExecutor(2) as pool, taskgraph.dask.RunStats() as stats:
        assert y.compute(scheduler="taskgraph", memory_limit="8MB", pool=pool) == expected
    assert 0 < stats.peak_bytes <= 8_000_000 + CHUNK < stats.spilled_bytes
    assert list(private_tmp.iterdir()) == []


def test_memory_limit_spellings_and_config(private_tmp):
    y = must_hold_all_of_x()
    expected = y.compute(scheduler="threads")
    for limit, limit_bytes in ((8_000_000, 8_000_000), ("8MB", 8_000_000), ("7.63MiB", 8_000_634)):
        with taskgraph.dask.RunStats() as stats:
            assert y.compute(scheduler="taskgraph", memory_limit=limit) == expected
        assert stats.peak_bytes <= limit_bytes + CHUNK < stats.spilled_bytes
    with dask.config.set({"taskgraph.memory-limit": "8MB"}), taskgraph.dask.RunStats() as stats:
        assert y.compute(scheduler="taskgraph") == expected
    assert stats.spilled_bytes > 0
    for bad, error in [(0, ValueError), (-5, ValueError), ("lots", ValueError), (True, TypeError), (1.5, TypeError)]:
        with pytest.raises(error, match="memory_limit"):
            get({"a": 1}, "a", memory_limit=bad)


def test_spill_files_are_private(private_tmp):
    np_ = pytest.importorskip("numpy")
    seen = []

    def probe(total):
        for directory in private_tmp.glob("taskgraph-spill-*"):
            seen.append(("dir", directory.stat().st_mode & 0o777))
            seen.extend(("file", f.stat().st_mode & 0o777) for f in directory.iterdir())
        return total

    # Eight 2 MB chunks, each read before the probe (by its sum) and after it
    # (by `again`): under 5 MB most wait on disk while the probe runs.
    dsk = {("big", i): (np_.full, 250_000, float(i)) for i in range(8)}
    dsk.update({("sum", i): (np_.sum, ("big", i)) for i in range(8)})
    dsk["probe"] = (probe, (sum, [("sum", i) for i in range(8)]))
    dsk.update({("again", i): (lambda b, _: len(b), ("big", i), "probe") for i in range(8)})
    dsk["out"] = (lambda p, *lens: (p, sum(lens)), "probe", *[("again", i) for i in range(8)])
    assert get(dsk, "out", memory_limit="5MB", num_workers=1) == (sum(250_000.0 * i for i in range(8)), 2_000_000)
    assert ("dir", 0o700) in seen
    assert {mode for kind, mode in seen if kind == "file"} == {0o600}


class Unpicklable:
    """A result that claims 1 MB and cannot be pickled."""

    def __init__(self, i):
        self.i = i
        self.lock = threading.Lock()

    def __sizeof__(self):
        return 1_000_000


def test_an_unpicklable_result_stays_in_memory_with_one_warning(private_tmp):
    # Six 1 MB results held across `mid` (each read before it and after
    # it): under 2.5 MB the scheduler asks for spills the writer refuses.
    dsk = {("u", i): (Unpicklable, i) for i in range(6)}
    dsk.update({("i", i): (getattr, ("u", i), "i") for i in range(6)})
    dsk["mid"] = (sum, [("i", i) for i in range(6)])
    dsk.update({("again", i): (lambda u, m: u.i + 0 * m, ("u", i), "mid") for i in range(6)})
    dsk["total"] = (sum, [("again", i) for i in range(6)])
    with pytest.warns(RuntimeWarning, match=r"the result of \('u', \d\) \(Unpicklable\) cannot be pickled") as caught:
        with taskgraph.dask.RunStats() as stats:
            assert get(dsk, "total", memory_limit="2.5MB", num_workers=1) == 15
    assert len([w for w in caught if "cannot be pickled" in str(w.message)]) == 1
    assert stats.peak_bytes >= 6_000_000  # counted where it stayed
    assert stats.spilled_bytes == 0


def test_a_task_over_the_limit_is_named(private_tmp):
    np_ = pytest.importorskip("numpy")
    dsk = {"small": (np_.zeros, 10), "huge": (np_.zeros, 2_000_000), "out": (len, "huge")}
    with pytest.raises(MemoryError, match=r"task 'huge' needs \d+ bytes .* memory limit of 1000000 bytes"):
        get(dsk, ["out", "small"], memory_limit="1MB")
    assert list(private_tmp.iterdir()) == []


def test_the_spill_directory_goes_on_errors_and_ctrl_c(private_tmp):
    np_ = pytest.importorskip("numpy")
    main = threading.get_ident()

    def interrupt(*_):
        signal.pthread_kill(main, signal.SIGINT)
        time.sleep(0.5)

    def graph(last):
        # As above: chunks spilled while `last` runs, then read again.
        dsk = {("big", i): (np_.full, 250_000, float(i)) for i in range(8)}
        dsk.update({("sum", i): (np_.sum, ("big", i)) for i in range(8)})
        dsk["last"] = (last, [("sum", i) for i in range(8)])
        dsk.update({("again", i): (lambda b, _: len(b), ("big", i), "last") for i in range(8)})
        return dsk, [("again", i) for i in range(8)]

    for last, error in [(boom, ZeroDivisionError), (interrupt, KeyboardInterrupt)]:
        dsk, keys = graph(last)
        with taskgraph.dask.RunStats() as stats, pytest.raises(error):
            get(dsk, keys, memory_limit="5MB", num_workers=1)
        assert stats.spilled_bytes > 0
        assert list(private_tmp.iterdir()) == []


def test_run_stats_without_a_limit_and_nested():
    inner = {"a": 1, "b": (inc, "a")}
    outer = {"x": (lambda: get(inner, "b", num_workers=1),), "y": (inc, "x")}
    with taskgraph.dask.RunStats() as stats:
        assert get(outer, "y", num_workers=1) == 3
    assert stats.tasks_run == 4  # the nested run's two tasks too
    assert stats.peak_held >= 1 and stats.peak_bytes > 0 and stats.spilled_bytes == 0
    assert "tasks_run=4" in repr(stats)


@pytest.mark.parametrize("num_workers", [1, 3])
def test_a_panic_in_a_worker_loop_ends_the_run_with_an_error(num_workers, monkeypatch):
    # A bug in the Rust worker loop (injected here) fails the run with an
    # error naming it, whichever thread hits it: the others stop rather
    # than wait for its tasks for ever. The hook is in builds with the
    # extension's `test-hooks` feature (as `cargo xtask ci` makes them).
    if not hasattr(taskgraph._native.Execution, "_panic_next"):
        if os.environ.get("TASKGRAPH_TEST_HOOKS") == "require":
            pytest.fail("TASKGRAPH_TEST_HOOKS=require, but the extension has no test hooks")
        pytest.skip("the extension is built without its test-hooks feature")
    run_to_end = taskgraph._threads._run_to_end

    def panicking(run, submit, rerun):
        run._panic_next()
        return run_to_end(run, submit, rerun)

    monkeypatch.setattr(taskgraph._threads, "_run_to_end", panicking)
    dsk = {("x", i): (inc, i) for i in range(20)}
    dsk["total"] = (sum, [("x", i) for i in range(20)])
    with pytest.raises(RuntimeError, match="a worker thread of the run failed: .*injected"):
        get(dsk, "total", num_workers=num_workers)
    monkeypatch.undo()
    assert get(dsk, "total", num_workers=num_workers) == sum(range(1, 21))


# --- a pool that drops the run's tasks -------------------------------------------


def _ends_within(seconds, call):
    """``call()``'s exception, or None; fails if it has not returned within
    ``seconds`` (a hang)."""
    outcome = []

    def target():
        try:
            call()
            outcome.append(None)
        except BaseException as err:  # noqa: BLE001
            outcome.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the call did not return within {seconds} s"
    return outcome[0]


def _queued_graph():
    dsk = {("s", i): (time.sleep, 0.05) for i in range(40)}
    dsk["t"] = (len, [("s", i) for i in range(40)])
    return dsk


def test_an_executor_shut_down_with_tasks_queued_is_an_error_not_a_hang():
    pool = concurrent.futures.ThreadPoolExecutor(1)
    threading.Timer(0.2, lambda: pool.shutdown(wait=False, cancel_futures=True)).start()
    err = _ends_within(20, lambda: get(_queued_graph(), "t", pool=pool, num_workers=4))
    assert isinstance(err, RuntimeError) and "dropped tasks of the run" in str(err)


@pytest.mark.parametrize(
    "make, stop",
    [
        (lambda: multiprocessing.pool.ThreadPool(1), lambda pool: pool.terminate()),
        (lambda: concurrent.futures.ThreadPoolExecutor(1), lambda pool: pool.shutdown()),
    ],
    ids=["terminated ThreadPool", "executor shut down"],
)
def test_a_pool_that_takes_no_more_tasks_is_an_error_not_a_hang(make, stop):
    # Stopped before the run, as it may be before the run's watch sees it:
    # the pool refuses the first task, and the run ends with the same error.
    pool = make()
    stop(pool)
    err = _ends_within(20, lambda: get(_queued_graph(), "t", pool=pool, num_workers=4))
    assert isinstance(err, RuntimeError) and "would take no more" in str(err)


def test_a_thread_pool_terminated_with_tasks_queued_is_an_error_not_a_hang():
    pool = multiprocessing.pool.ThreadPool(1)
    threading.Timer(0.2, pool.terminate).start()
    err = _ends_within(20, lambda: get(_queued_graph(), "t", pool=pool, num_workers=4))
    assert isinstance(err, RuntimeError) and "dropped tasks of the run" in str(err)


# --- spill files: bounded, checked, errors named ------------------------------------


def _chunk(_, i):
    return np.full(250_000, float(i))  # 2 MB


def _length_after(b, _):
    return len(b)


def _phases(n_phases, probe):
    """``n_phases`` rounds of eight 2 MB chunks, each read before ``probe``
    runs (by its sum) and after it: under 5 MB most wait on disk while the
    probe runs. A round starts once the one before it has ended."""
    dsk = {"start": 0}
    last = "start"
    for p in range(n_phases):
        dsk.update({("big", p, i): (_chunk, last, i) for i in range(8)})
        dsk.update({("sum", p, i): (np.sum, ("big", p, i)) for i in range(8)})
        dsk[("probe", p)] = (probe, [("sum", p, i) for i in range(8)])
        dsk.update({("again", p, i): (_length_after, ("big", p, i), ("probe", p)) for i in range(8)})
        dsk[("end", p)] = (sum, [("again", p, i) for i in range(8)])
        last = ("end", p)
    return dsk, last


def _spill_files(tmp):
    return [f for directory in tmp.glob("taskgraph-spill-*") for f in directory.iterdir()]


_TWO_READERS_OF_A_SPILLED_RESULT = """
import time
import numpy as np
import taskgraph.dask
import taskgraph._spill as spill

read = spill.Spill.read

def slow_read(self, node, key):
    time.sleep(0.2)  # while one worker reads it back, the other needs it too
    return read(self, node, key)

spill.Spill.read = slow_read

def big(i):
    return np.full(125_000, float(i))

def total(a):
    time.sleep(0.05)
    return float(a.sum())

dsk = {"out": (sum, [n + s for n in "xyz" for s in "12"])}
for i, name in enumerate("xyz"):
    dsk[name] = (big, i)
    dsk[name + "1"] = (total, name)
    dsk[name + "2"] = (total, name)
with taskgraph.dask.RunStats() as stats:
    out = taskgraph.dask.get(dsk, "out", num_workers=2, memory_limit="2500kB", strategy="bfs")
print(out, stats.spilled_bytes > 0)
"""


def test_two_workers_that_need_one_spilled_result_read_it_back_once():
    # Before, the worker that found the result being read back by the other
    # deadlocked on the lock of the results being read back, holding the GIL:
    # the whole process hung (a rechunk under memory_limit="1GB" did). In a
    # process of its own, so that a hang fails the test.
    done = subprocess.run(
        [sys.executable, "-c", _TWO_READERS_OF_A_SPILLED_RESULT],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["750000.0", "True"]


@pytest.mark.parametrize("num_workers", [1, 3])
def test_a_spill_file_goes_once_its_result_is_read_back(num_workers, private_tmp):
    # Before, a result read back kept its file to the end of the run: the
    # directory held every round's chunks (40 MB and more by the fourth).
    on_disk = []

    def probe(sums):
        on_disk.append(sum(f.stat().st_size for f in _spill_files(private_tmp)))
        return sum(sums)

    dsk, last = _phases(4, probe)
    with taskgraph.dask.RunStats() as stats:
        assert get(dsk, last, memory_limit="5MB", num_workers=num_workers) == 8 * 250_000
    assert len(on_disk) == 4 and min(on_disk) > 0
    one_round = 8 * (2_000_000 + 1_000)  # a round's chunks, with their headers
    assert max(on_disk) <= one_round < stats.spilled_bytes
    assert list(private_tmp.iterdir()) == []


def _fake_full_disk(monkeypatch):
    """Spill files open on /dev/full (or fail to open) as on a full disk."""
    real_open = os.open

    def open_(path, flags, *args, **kwargs):
        if "taskgraph-spill-" in os.fspath(path) and flags & os.O_WRONLY:
            if not os.path.exists("/dev/full"):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
            real_open(path, flags, *args, **kwargs)  # the file that the error removes
            return real_open("/dev/full", os.O_WRONLY)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_)


def test_a_full_disk_is_an_error_naming_the_task_and_directory(private_tmp, monkeypatch):
    _fake_full_disk(monkeypatch)
    dsk, last = _phases(1, lambda sums: sum(sums))
    with pytest.raises(taskgraph.dask.SpillError) as info:
        get(dsk, last, memory_limit="5MB", num_workers=1)
    monkeypatch.undo()
    message = str(info.value)
    assert message.startswith("taskgraph: cannot spill the result of ('big', 0, ")
    assert f"to {private_tmp}{os.sep}taskgraph-spill-" in message
    assert message.endswith(": No space left on device")
    assert info.value.errno == errno.ENOSPC and isinstance(info.value, OSError)
    assert isinstance(info.value.__cause__, OSError) and info.value.__cause__.errno == errno.ENOSPC
    assert list(private_tmp.iterdir()) == []


class _Touch:
    """Unpickled, creates ``path``: what a forged spill file would run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (pathlib.Path.touch, (pathlib.Path(self.path),))


def _forge(path, payload):
    """Rewrites the spill file ``path`` to unpickle ``payload``, its length
    and format kept: one in-band pickle, padded."""
    size = path.stat().st_size
    data = pickle.dumps(payload, protocol=5)
    path.write_bytes(struct.pack("<QQ", 1, size - 16) + data.ljust(size - 16, b"\0"))


def test_a_spill_file_changed_during_the_run_is_refused_unread(private_tmp, tmp_path_factory):
    markers = tmp_path_factory.mktemp("markers")
    # The forged file would run its payload if it were unpickled unchecked.
    probe_path = markers / "probe"
    probe_path.write_bytes(b"\0" * 200)
    _forge(probe_path, _Touch(markers / "works"))
    pickle.loads(probe_path.read_bytes()[16:])
    assert (markers / "works").exists()
    forged = []

    def tamper(sums):
        for f in _spill_files(private_tmp):
            _forge(f, _Touch(markers / "ran"))
            forged.append(f)
        return sum(sums)

    dsk, last = _phases(1, tamper)
    with pytest.raises(taskgraph.dask.SpillError) as info:
        get(dsk, last, memory_limit="5MB", num_workers=1)
    assert forged
    message = str(info.value)
    assert " of ('big', 0, " in message and "was changed after it was written (its checksum does not match)" in message
    assert any(str(f) in message for f in forged)
    assert not (markers / "ran").exists()
    assert list(private_tmp.iterdir()) == []


def test_a_spill_file_replaced_or_removed_is_refused(private_tmp):
    def replace(sums):
        for k, f in enumerate(_spill_files(private_tmp)):
            if k % 2:
                f.unlink()
            else:
                f.write_bytes(b"not a spill file")
        return sum(sums)

    dsk, last = _phases(1, replace)
    with pytest.raises(taskgraph.dask.SpillError, match=r"of \('big', 0, \d\)") as info:
        get(dsk, last, memory_limit="5MB", num_workers=1)
    message = str(info.value)
    assert "was changed after it was written (16 bytes where" in message or "No such file" in message


def _refuse_to_load(i):
    raise ValueError(f"refused {i}")


class _LoadsBadly:
    """A result that claims 1 MB, pickles, and raises when unpickled."""

    def __init__(self, i):
        self.i = i

    def __sizeof__(self):
        return 1_000_000

    def __reduce__(self):
        return (_refuse_to_load, (self.i,))


def test_a_result_that_does_not_unpickle_is_a_spill_error_naming_it(private_tmp):
    # As with the unpicklable results above: six 1 MB results held across
    # `mid` under 2.5 MB, so that some are spilled and read back.
    dsk = {("l", i): (_LoadsBadly, i) for i in range(6)}
    dsk.update({("i", i): (getattr, ("l", i), "i") for i in range(6)})
    dsk["mid"] = (sum, [("i", i) for i in range(6)])
    dsk.update({("again", i): (lambda u, m: u.i + 0 * m, ("l", i), "mid") for i in range(6)})
    dsk["total"] = (sum, [("again", i) for i in range(6)])
    pattern = r"the result of \('l', \d\) was spilled to .*taskgraph-spill-.* but does not unpickle: ValueError: refused \d"
    with pytest.raises(taskgraph.dask.SpillError, match=pattern) as info:
        get(dsk, "total", memory_limit="2.5MB", num_workers=1)
    assert isinstance(info.value.__cause__, ValueError)
    assert list(private_tmp.iterdir()) == []


# --- results whose size cannot be measured ------------------------------------------


def _measured_as(size):
    """A class whose ``__sizeof__`` gives ``size`` (raises it, if it is an
    exception class)."""

    def sizeof(self):
        if isinstance(size, type) and issubclass(size, BaseException):
            raise size("no size")
        return size

    return type(f"Sized_{abs(hash(repr(size)))}", (), {"__sizeof__": sizeof, "__init__": lambda self, i: None})


class _Registered:
    """A value whose size a handler registered with dask.sizeof gives."""

    size = None

    def __init__(self, i):
        pass


@pytest.mark.parametrize(
    "size",
    [LookupError, -1, 2**70, 2**60, 1.5e6, "big"],
    ids=["raises", "negative", "huge", "past-2^48", "float", "non-number"],
)
@pytest.mark.parametrize("how", ["RunStats", "RunStats-3-workers", "memory_limit", "registered"])
def test_a_result_of_no_size_counts_1mb_with_one_warning(size, how, private_tmp):
    if how == "registered":
        if size == 2**60:
            pytest.skip("as past-2^48 through __sizeof__")
        # The handler itself gives what it gives (sys.getsizeof would refuse
        # a negative, huge or float __sizeof__ itself).
        cls = type(f"Registered_{abs(hash(repr(size)))}", (_Registered,), {})
        from dask.sizeof import sizeof as dask_sizeof

        def handler(value):
            if isinstance(size, type):
                raise size("no size")
            return size

        dask_sizeof.register(cls)(handler)
    else:
        cls = _measured_as(size)
    dsk = {("r", i): (cls, i) for i in range(4)}
    dsk["n"] = (lambda *rs: len(rs), *[("r", i) for i in range(4)])
    kwargs = {"num_workers": 3 if how == "RunStats-3-workers" else 1}
    if how == "memory_limit":
        kwargs["memory_limit"] = "64MB"
    with warnings.catch_warnings(record=True) as caught, taskgraph.dask.RunStats() as stats:
        warnings.simplefilter("always")
        assert get(dsk, "n", **kwargs) == 4
    about = [str(w.message) for w in caught if "dask.sizeof.sizeof" in str(w.message)]
    assert len(about) == 1, about
    assert cls.__qualname__ in about[0] and "count as 1000000 bytes" in about[0]
    assert stats.peak_bytes >= 1_000_000 and stats.tasks_run == 5


@pytest.mark.parametrize("size", [-1, 1.5, 2**64, 2**70, "big", None])
def test_the_scheduler_counts_what_is_no_size_as_1mb(size):
    # Whatever a measure handed to the native run gives, the run goes on.
    def sizeof(value):
        if size is None:
            raise LookupError("no size")
        return size

    dsk = {"a": 1, "b": (inc, "a")}
    run = _native.Execution(dsk, ["b"], workers=1, sizeof=sizeof)
    run.work()
    assert list(run.results()) == [2]
    assert run.peak_bytes == 1_000_000
