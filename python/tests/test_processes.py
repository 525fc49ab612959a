"""taskgraph.dask.get on worker processes: collections against threads,
errors, pickling, the bytes through the caller, callbacks, memory limits,
lost workers, Ctrl-C, workers that never outlive their caller, and workers
on the hosts of a hostfile."""

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from operator import add

import dask
import dask.array as da
import dask.bag as db
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask.callbacks import Callback

import taskgraph.dask
from taskgraph.dask import Processes, get


@pytest.fixture(scope="module")
def pool():
    with Processes(2) as pool:
        yield pool


def alive(pid):
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_gone(pids, seconds=10.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(alive(pid) for pid in pids):
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def slow(i, seconds=0.05):
    time.sleep(seconds)
    return i


def pid(_=None):
    return os.getpid()


class Boom(Exception):
    pass


def boom(x):
    raise Boom(f"boom {x}")


# --- the same results as threads ------------------------------------------


def test_arrays_as_threads(pool):
    x = da.random.RandomState(0).random((1200, 1000), chunks=(300, 250))
    for y in [(x[:1000] + x[:1000].T).sum(axis=0), (x @ x.T).mean(), x[::3, 1:].std(axis=1), da.linalg.qr(x.rechunk({1: -1}))[1]]:
        np.testing.assert_allclose(
            y.compute(scheduler="taskgraph", processes=pool), y.compute(scheduler="threads"), rtol=1e-10
        )


def test_dataframes_as_threads(pool):
    frame = pd.DataFrame({"k": np.arange(5000) % 13, "v": np.arange(5000.0), "w": np.arange(5000) % 7})
    df = dd.from_pandas(frame, npartitions=10)
    other = dd.from_pandas(pd.DataFrame({"w": range(7), "name": list("abcdefg")}), npartitions=2)
    for y in [df.groupby("k").v.sum(), df.merge(other, on="w").groupby("name").v.mean(), df.v.cumsum(), df.set_index("k").v]:
        ours = y.compute(scheduler="taskgraph", processes=pool)
        theirs = y.compute(scheduler="threads")
        # (set_index leaves the order among equal keys open)
        assert sorted(zip(ours.index, ours)) == sorted(zip(theirs.index, theirs))


def test_bags_and_delayed_as_threads(pool):
    b = db.from_sequence(range(1000), npartitions=12).map(lambda x: x * 3).filter(lambda x: x % 2).frequencies()
    assert sorted(b.compute(scheduler="taskgraph", processes=pool)) == sorted(b.compute(scheduler="threads"))
    offset = 7

    @dask.delayed
    def closure(i):
        return i + offset

    total = dask.delayed(sum)([closure(i) for i in range(50)])
    assert total.compute(scheduler="taskgraph", processes=pool) == total.compute(scheduler="threads")


def test_tasks_run_in_the_workers_not_the_caller(pool):
    dsk = {("p", i): (slow, i, 0.02) for i in range(20)}
    dsk.update({("pid", i): (pid, ("p", i)) for i in range(20)})
    pids = set(get(dsk, [("pid", i) for i in range(20)], processes=pool))
    assert os.getpid() not in pids
    assert pids == set(pool.pids)


def test_an_int_starts_and_stops_a_pool_for_the_call():
    before = set(child_pids())
    assert get({"x": 1, "y": (add, "x", 1)}, "y", processes=2) == 2
    assert not wait_gone(set(child_pids()) - before)


def test_a_pool_dropped_unclosed_ends_its_workers():
    import gc

    pool = Processes(2)
    pids = pool.pids
    assert get({"x": 1, "y": (add, "x", 1)}, "y", processes=pool) == 2
    del pool
    gc.collect()
    assert not wait_gone(pids)


def child_pids():
    me = str(os.getpid())
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if f.read().split(")")[-1].split()[1] == me:
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def test_the_cache_gives_results_and_takes_the_computed(pool):
    cache = {"x": 5}
    assert get({"x": (boom, 0), "y": (add, "x", 1)}, "y", processes=pool, cache=cache) == 6
    assert cache == {"x": 5, "y": 6}


def test_dask_config_names_the_pool(pool):
    x = da.ones((100, 100), chunks=50)
    with dask.config.set({"taskgraph.processes": pool}):
        assert x.sum().compute(scheduler="taskgraph") == 10_000
    assert pool.last_run is not None and pool.last_run["attempts"] == 1


# --- errors and pickling -------------------------------------------------------


def test_a_tasks_exception_is_raised_as_itself(pool):
    with pytest.raises(Boom, match="boom 1") as info:
        get({"a": 1, "b": (boom, "a"), "c": (add, "b", 1)}, "c", processes=pool)
    assert "Traceback in the worker process" in str(info.value.__cause__)
    assert "boom" in str(info.value.__cause__)
    # The pool serves the next call.
    assert get({"a": 1, "b": (add, "a", 1)}, "b", processes=pool) == 2


def test_a_task_that_cannot_be_pickled_is_refused_before_anything_runs(pool, tmp_path):
    marker = tmp_path / "ran"
    lock = threading.Lock()
    dsk = {"touch": (marker.write_text, "x"), "locked": (lambda lock, _: 1, lock, "touch")}
    with pytest.raises(TypeError, match="task 'locked' cannot be pickled"):
        get(dsk, "locked", processes=pool)
    assert not marker.exists()


def test_lambdas_closures_and_their_results(pool):
    n = 5
    dsk = {"f": (lambda: (lambda x: x + n),), "y": (lambda f: f(1), "f")}
    assert get(dsk, "y", processes=pool) == 6
    assert get(dsk, "f", processes=pool)(2) == 7


def test_a_result_that_cannot_come_back_names_the_problem(pool):
    with pytest.raises(TypeError, match="cannot be pickled to go back to the caller"):
        get({"lock": (threading.Lock,)}, "lock", processes=pool)


def test_an_intermediate_that_cannot_travel_names_its_task(pool):
    # Four locks made on both workers, all read by one task: two must
    # cross.
    dsk = {("lock", i): (lambda i: threading.Lock(), i) for i in range(4)}
    dsk["n"] = (lambda *locks: len(locks), *[("lock", i) for i in range(4)])
    with pytest.raises(RuntimeError, match=r"the result of task \('lock', \d\) cannot be pickled"):
        get(dsk, "n", processes=pool)


def test_bad_arguments(pool):
    with pytest.raises(TypeError, match="processes must be"):
        get({"x": 1}, "x", processes="two")
    with pytest.raises(ValueError, match="retries"):
        get({"x": 1}, "x", processes=pool, retries=-1)
    with pytest.raises(ValueError, match="at least one worker"):
        Processes(0)
    with pytest.raises(KeyError):
        get({"x": 1}, "y", processes=pool)
    with pytest.raises(RuntimeError, match="Cycle detected"):
        get({"x": (add, "y", 1), "y": (add, "x", 1)}, "x", processes=pool)


# --- what passes through the caller ----------------------------------------------


def test_only_the_requested_results_come_back(pool):
    # 16 chunks of 8 MB, reduced in the workers: a few hundred bytes back.
    x = da.ones((4096, 4096), chunks=(1024, 1024), dtype="f8") + 1
    assert x.sum().compute(scheduler="taskgraph", processes=pool) == 2 * 4096 * 4096
    assert pool.last_run["bytes_received"] < 50_000
    assert pool.last_run["bytes_sent"] < 500_000
    # The whole array asked for: its bytes come back, once.
    y = x.compute(scheduler="taskgraph", processes=pool)
    assert y.shape == (4096, 4096) and (y == 2).all()
    assert 128 * 2**20 <= pool.last_run["bytes_received"] < 130 * 2**20


# --- callbacks and limits ----------------------------------------------------------


def test_callbacks_hear_every_task_after_its_inputs(pool):
    seen = []
    with Callback(pretask=lambda key, dsk, state: seen.append(key)):
        x = da.ones((400, 400), chunks=100)
        assert (x + x.T).sum().compute(scheduler="taskgraph", processes=pool) == 320_000
    assert len(seen) == len(set(seen)) > 16


def test_progress_bar(pool, capsys):
    from dask.diagnostics import ProgressBar

    dsk = {("s", i): (slow, i, 0.02) for i in range(20)}
    dsk["t"] = (sum, [("s", i) for i in range(20)])
    with ProgressBar(dt=0.01):
        assert get(dsk, "t", processes=pool) == 190
    assert "100% Completed" in capsys.readouterr().out


def test_memory_limit_per_process(pool):
    x = da.ones((4000, 4000), chunks=(250, 4000)) * 2
    assert x.sum().compute(scheduler="taskgraph", processes=pool, memory_limit="40MB") == 32_000_000
    # Every chunk (8 MB) is read by its mirror's sum: 128 MB held at best
    # without a limit; each process keeps to 40 MB, spilling the rest.
    y = x[::-1] + x
    with taskgraph.dask.RunStats() as stats:
        np.testing.assert_array_equal(
            y.sum(axis=0).compute(scheduler="taskgraph", processes=pool, memory_limit="40MB"), np.full(4000, 16000.0)
        )
    assert stats.tasks_run == pool.last_run["tasks_run"] > 32
    assert 0 < stats.peak_bytes <= 40_000_000


def test_run_stats_on_processes(pool):
    with taskgraph.dask.RunStats() as stats:
        assert get({"a": 1, "b": (add, "a", 1), "c": (add, "b", "a")}, "c", processes=pool) == 3
    assert stats.tasks_run == 3 and stats.peak_held >= 1


# --- lost workers ------------------------------------------------------------------


def warm(pool):
    """A first call, so that a timer started next lands in the run that
    follows (60 tasks of 50 ms on two workers: 1.5 s)."""
    assert get({("s", i): (slow, i, 0.01) for i in range(4)} | {"t": (sum, [("s", i) for i in range(4)])}, "t", processes=pool) == 6


def sixty_slow_tasks():
    dsk = {("s", i): (slow, i) for i in range(60)}
    dsk["t"] = (sum, [("s", i) for i in range(60)])
    return dsk


def test_a_killed_worker_is_recovered_and_replaced():
    with Processes(2) as pool:
        warm(pool)
        pids = pool.pids
        threading.Timer(0.4, os.kill, (pids[1], signal.SIGKILL)).start()
        assert get(sixty_slow_tasks(), "t", processes=pool) == sum(range(60))
        assert pool.last_run["attempts"] == 2 and pool.last_run["lost"] == [pids[1]]
        assert get(sixty_slow_tasks(), "t", processes=pool) == sum(range(60))
        assert pool.pids[0] == pids[0] and pool.pids[1] != pids[1]


def test_a_task_that_kills_its_interpreter_is_recovered():
    flag = f"/tmp/taskgraph-crash-{os.getpid()}"

    def crash_once(x):
        try:
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return x
        os._exit(3)  # the first call only, in whichever worker makes it

    try:
        with Processes(2) as pool:
            dsk = {("a", i): (slow, i, 0.01) for i in range(10)}
            dsk.update({("b", i): (crash_once, ("a", i)) for i in range(10)})
            dsk["t"] = (sum, [("b", i) for i in range(10)])
            assert get(dsk, "t", processes=pool) == 45
            assert pool.last_run["attempts"] == 2
    finally:
        if os.path.exists(flag):
            os.remove(flag)


def test_a_paused_worker_is_taken_for_lost_and_the_run_goes_on():
    with Processes(2, heartbeat_timeout=1.0) as pool:
        warm(pool)
        paused = pool.pids[1]
        threading.Timer(0.4, os.kill, (paused, signal.SIGSTOP)).start()
        try:
            assert get(sixty_slow_tasks(), "t", processes=pool) == sum(range(60))
            assert pool.last_run["lost"] == [paused]
            assert not wait_gone([paused])
            assert get(sixty_slow_tasks(), "t", processes=pool) == sum(range(60))
        finally:
            if alive(paused):
                os.kill(paused, signal.SIGKILL)


def test_no_retries_ends_the_run_at_the_first_loss():
    with Processes(2) as pool:
        warm(pool)
        threading.Timer(0.4, os.kill, (pool.pids[1], signal.SIGKILL)).start()
        with pytest.raises(RuntimeError, match="more losses than retries=0"):
            get(sixty_slow_tasks(), "t", processes=pool, retries=0)
        assert get({"x": 1, "y": (add, "x", 1)}, "y", processes=pool) == 2


CALLER = """
import sys, time, taskgraph.dask
def slow(i):
    time.sleep(0.2)
    return i
if __name__ == "__main__":
    with taskgraph.dask.Processes(2) as pool:
        print(*pool.pids, flush=True)
        try:
            taskgraph.dask.get({("s", i): (slow, i) for i in range(200)} | {"t": (sum, [("s", i) for i in range(200)])}, "t", processes=pool)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(130)
"""


def start_caller(tmp_path):
    script = tmp_path / "caller.py"
    script.write_text(textwrap.dedent(CALLER))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in proc.stdout.readline().split()]
    assert len(pids) == 2 and all(alive(p) for p in pids)
    time.sleep(0.5)
    return proc, pids


def test_ctrl_c_ends_the_run_and_every_worker(tmp_path):
    proc, pids = start_caller(tmp_path)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in out
    assert time.monotonic() - started < 10
    assert not wait_gone(pids)


def test_no_worker_outlives_a_killed_caller(tmp_path):
    proc, pids = start_caller(tmp_path)
    proc.kill()
    proc.wait()
    assert not wait_gone(pids)


# --- hosts -----------------------------------------------------------------------


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@pytest.fixture
def hostfile(tmp_path):
    path = tmp_path / "hosts"
    path.write_text("".join(f"127.0.0.1:{port}\n" for port in free_ports(2)))
    env = dict(os.environ, TASKGRAPH_SECRET="a secret shared by the hosts")
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "taskgraph", "worker", "--hostfile", str(path), "--process", str(i)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for worker in workers:
        assert worker.stdout.readline().startswith("taskgraph worker listening on")
    yield path, env
    for worker in workers:
        worker.kill()
        worker.wait()


def test_a_run_on_the_workers_of_a_hostfile(hostfile, monkeypatch):
    path, env = hostfile
    monkeypatch.setenv("TASKGRAPH_SECRET", env["TASKGRAPH_SECRET"])
    # A stranger holding a silent connection to a worker does not stop it.
    host, port = path.read_text().split()[0].split(":")
    stranger = socket.create_connection((host, int(port)))
    x = da.ones((1000, 1000), chunks=250)
    assert (x + x.T).sum().compute(scheduler="taskgraph", hosts=str(path)) == 2_000_000
    with Processes(hostfile=str(path)) as pool:
        assert len(pool) == 2
        assert get({"x": 1, "y": (add, "x", 1)}, "y", processes=pool) == 2
        assert get({"x": 2, "y": (add, "x", 1)}, "y", processes=pool) == 3
    stranger.close()


def test_a_hostfile_needs_the_secret(hostfile, monkeypatch):
    path, _ = hostfile
    monkeypatch.delenv("TASKGRAPH_SECRET", raising=False)
    with pytest.raises(ValueError, match="TASKGRAPH_SECRET"):
        Processes(hostfile=str(path))
    monkeypatch.setenv("TASKGRAPH_SECRET", "another secret, not theirs")
    with pytest.raises(RuntimeError, match="could not reach"):
        Processes(hostfile=str(path))
