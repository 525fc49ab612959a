"""dask's own tests of its process scheduler (``dask/tests/test_multiprocessing.py``
from the installed dask), run in fresh interpreters with dask's
``dask.multiprocessing.get`` and then with ``taskgraph.dask.get`` on a pool
of worker processes: every test that passes with dask's passes with ours,
but for those that test what only dask's pool of forked or spawned
``multiprocessing`` processes has, listed below with why."""

import importlib.util

from suites import run_suite

SUITE = "dask.tests.test_multiprocessing"

# Tests of dask's own pool that do not apply to taskgraph's workers.
NOT_APPLICABLE = {
    # dask.config "multiprocessing.context": "fork" makes dask fork the
    # caller, so the child sees the caller's modules; taskgraph's workers
    # are interpreters of their own, started once and reused.
    "test_custom_context_used_python3_posix",
}


def run(get, tmp_path):
    path = importlib.util.find_spec(SUITE).origin
    res, report, _ = run_suite([path], "dask_processes_plugin", {"TASKGRAPH_SUITE_GET": get}, tmp_path, name=get)
    return res, report


def test_every_test_of_dasks_process_scheduler_that_applies_passes_with_ours(tmp_path):
    theirs, their_report = run("dask", tmp_path)
    ours, report = run("taskgraph", tmp_path)
    assert "dask.multiprocessing.get is taskgraph_processes" not in their_report
    assert "dask.multiprocessing.get is dask_processes_plugin.get" in report, report
    passed = [name for name, outcome in theirs.items() if outcome == "passed"]
    assert len(passed) >= 15, their_report
    regressed = [name for name in passed if ours.get(name) != "passed" and name.split("[")[0] not in NOT_APPLICABLE]
    assert not regressed, report
    # The ones listed do differ (or the list is stale).
    for name in NOT_APPLICABLE:
        assert any(n.split("[")[0] == name for n in theirs), f"{name} is not in dask's suite any more"
