"""dask's own tests of its threaded scheduler, its callbacks and its
diagnostics, taken from the installed dask and run twice in fresh
interpreters: with dask's ``dask.threaded.get``, then with it pointed at
``taskgraph.dask.get``. Every test that passes with dask's own get passes
with ours."""

import importlib.util

from suites import run_suite

SUITES = [
    "dask.tests.test_threaded",
    "dask.tests.test_callbacks",
    "dask.diagnostics.tests.test_progress",
    "dask.diagnostics.tests.test_profiler",
]


def run_suites(get, tmp_path):
    paths = [importlib.util.find_spec(name).origin for name in SUITES]
    res, report, _ = run_suite(paths, "dask_get_plugin", {"TASKGRAPH_SUITE_GET": get}, tmp_path, name=get)
    return res, report


def test_every_test_dask_passes_passes_with_ours(tmp_path):
    theirs, their_report = run_suites("dask", tmp_path)
    ours, report = run_suites("taskgraph", tmp_path)
    assert "dask.threaded.get is taskgraph.dask.get" in report
    assert "dask.threaded.get is dask.threaded.get" in their_report
    passed = [name for name, outcome in theirs.items() if outcome == "passed"]
    # The suites are there and mostly run here.
    assert len(passed) >= 40, their_report
    regressed = [name for name in passed if ours.get(name) != "passed"]
    assert not regressed, report
