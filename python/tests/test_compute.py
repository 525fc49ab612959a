"""Real computations under taskgraph.dask.install(): dask's results, with
taskgraph's order doing the ordering (local schedulers and distributed)."""

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import taskgraph.dask
from taskgraph import _native


@pytest.fixture
def calls(monkeypatch):
    """Counts the graphs that reach taskgraph's native order."""
    seen = []
    real = _native.order

    def spy(dsk, dependencies=None, *, strategy="auto"):
        seen.append(len(dsk))
        return real(dsk, dependencies, strategy=strategy)

    monkeypatch.setattr(_native, "order", spy)
    yield seen
    taskgraph.dask.uninstall()


def array_reduction():
    x = da.random.default_rng(42).random((300, 300), chunks=(30, 30))
    return (x + x.T).mean(axis=0).sum() + x.map_overlap(lambda a: a * 2, depth=1).std()


def dataframe_groupby():
    frame = pd.DataFrame({"k": [i % 7 for i in range(5000)], "v": np.arange(5000.0)})
    return dd.from_pandas(frame, npartitions=16).groupby("k").v.agg(["sum", "mean", "count"])


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
@pytest.mark.parametrize("strategy", ["auto", "dask", "tree"])
def test_array_reduction(calls, scheduler, strategy):
    expected = array_reduction().compute(scheduler=scheduler)
    assert not calls
    with taskgraph.dask.ordering(strategy=strategy):
        got = array_reduction().compute(scheduler=scheduler)
    assert calls, "dask ordered the graph with taskgraph"
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_dataframe_groupby(calls, scheduler):
    expected = dataframe_groupby().compute(scheduler=scheduler)
    taskgraph.dask.install()
    got = dataframe_groupby().compute(scheduler=scheduler)
    assert calls
    pd.testing.assert_frame_equal(got.sort_index(), expected.sort_index())


def test_delayed_and_persist(calls):
    inc = dask.delayed(lambda i: i + 1)
    total = dask.delayed(sum)([inc(i) for i in range(20)])
    with taskgraph.dask.ordering():
        assert total.compute() == sum(range(1, 21))
        x = da.ones((100, 100), chunks=10).sum(axis=0).persist(scheduler="threads")
        assert (x.compute() == 100).all()
    assert len(calls) >= 2


def test_distributed_client(calls):
    distributed = pytest.importorskip("distributed")
    expected_array = array_reduction().compute(scheduler="sync")
    expected_frame = dataframe_groupby().compute(scheduler="sync")
    taskgraph.dask.install(strategy="auto")
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as client:
        got_array = client.compute(array_reduction()).result()
        got_frame = dataframe_groupby().compute()
    np.testing.assert_allclose(got_array, expected_array)
    pd.testing.assert_frame_equal(got_frame.sort_index(), expected_frame.sort_index())
    # The scheduler ordered both graphs with taskgraph (in its offload thread).
    assert len(calls) >= 2
