"""A pytest plugin that runs dask's own tests of its threaded scheduler with
``dask.threaded.get`` pointed at ``taskgraph.dask.get`` (``-p
dask_get_plugin``).

It replaces the attribute before the test modules are imported, so their
own ``from dask.threaded import get`` binds taskgraph's. With
``TASKGRAPH_SUITE_GET=dask`` it leaves dask's in place: the same files run
with dask's own get, for the comparison.
"""

import os

import dask.threaded

import taskgraph.dask

GET = os.environ.get("TASKGRAPH_SUITE_GET", "taskgraph")


def pytest_configure(config):
    if GET == "taskgraph":
        dask.threaded.get = taskgraph.dask.get


def pytest_report_header(config):
    return f"dask.threaded.get is {dask.threaded.get.__module__}.get"
