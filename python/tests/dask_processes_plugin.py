"""A pytest plugin that runs dask's own tests of its process scheduler with
``dask.multiprocessing.get`` (and the schedulers ``"processes"`` and
``"multiprocessing"``) on ``taskgraph.dask.get(..., processes=POOL)``, one
pool of two worker processes for the session (``-p
dask_processes_plugin``). With ``TASKGRAPH_SUITE_GET=dask`` it leaves
dask's in place, for the comparison."""

import os

import dask.base
import dask.multiprocessing

import taskgraph.dask

GET = os.environ.get("TASKGRAPH_SUITE_GET", "taskgraph")
_pool = []


def get(dsk, keys, **kwargs):
    if not _pool:
        _pool.append(taskgraph.dask.Processes(2))
    kwargs.pop("pool", None)
    return taskgraph.dask.get(dsk, keys, processes=_pool[0], **kwargs)


def pytest_configure(config):
    if GET == "taskgraph":
        dask.multiprocessing.get = get
        for name in ("processes", "multiprocessing"):
            dask.base.named_schedulers[name] = get


def pytest_unconfigure(config):
    for pool in _pool:
        pool.close()


def pytest_report_header(config):
    return f"dask.multiprocessing.get is {dask.multiprocessing.get.__module__}.get"
