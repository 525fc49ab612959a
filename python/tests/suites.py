"""Running a test suite of dask's, from the installed dask, with one of our
pytest plugins, in a fresh interpreter: what each test came to."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def outcomes(junit_xml):
    """Each test's outcome: passed, failed, xfail or skipped."""
    res = {}
    for case in ET.parse(junit_xml).iter("testcase"):
        kinds = [child.tag for child in case]
        skipped = case.find("skipped")
        if "failure" in kinds or "error" in kinds:
            res[case.get("name")] = "failed"
        elif skipped is not None:
            res[case.get("name")] = "xfail" if skipped.get("type") == "pytest.xfail" else "skipped"
        else:
            res[case.get("name")] = "passed"
    return res


def run_suite(paths, plugin, env, tmp_path, name="report"):
    """Runs pytest on ``paths`` with ``-p plugin`` and ``env`` added to the
    environment (this directory on ``PYTHONPATH``, for the plugin); returns
    each test's outcome, pytest's output and its exit status."""
    env = dict(os.environ, **env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [HERE, env.get("PYTHONPATH")] if p)
    junit = tmp_path / f"{name}.xml"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", plugin, f"--junitxml={junit}", *paths],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    return outcomes(junit), done.stdout + done.stderr, done.returncode
