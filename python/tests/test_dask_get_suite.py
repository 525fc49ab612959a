"""dask's own tests of its threaded scheduler, its callbacks and its
diagnostics, taken from the installed dask and run twice in fresh
interpreters: with dask's ``dask.threaded.get``, then with it pointed at
``taskgraph.dask.get``. Every test that passes with dask's own get passes
with ours."""

import importlib.util
import os
import subprocess
import sys

import pytest

from test_dask_order_suite import outcomes

HERE = os.path.dirname(os.path.abspath(__file__))

SUITES = [
    "dask.tests.test_threaded",
    "dask.tests.test_callbacks",
    "dask.diagnostics.tests.test_progress",
    "dask.diagnostics.tests.test_profiler",
]


def run_suites(get, tmp_path):
    paths = [importlib.util.find_spec(name).origin for name in SUITES]
    env = dict(os.environ, TASKGRAPH_SUITE_GET=get)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [HERE, env.get("PYTHONPATH")] if p)
    junit = tmp_path / f"{get}.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "dask_get_plugin", f"--junitxml={junit}", *paths],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = done.stdout + done.stderr
    return outcomes(junit), report


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
