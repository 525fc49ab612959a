"""Whether Graphviz's `dot` is installed, and whether it must be: with
`TASKGRAPH_GRAPHVIZ=require` (as CI sets it, having installed Graphviz) a
test that renders fails where `dot` is missing instead of passing without
rendering."""

import os
import shutil

import pytest

REQUIRED = os.environ.get("TASKGRAPH_GRAPHVIZ") == "require"


def has_dot() -> bool:
    """Whether `dot` is on the PATH; a failed test if it is not and must be."""
    found = shutil.which("dot") is not None
    if not found and REQUIRED:
        pytest.fail("TASKGRAPH_GRAPHVIZ=require, but Graphviz's dot is not on the PATH")
    return found


def needs_dot() -> None:
    """Skips the test where `dot` is missing (fails it where it is required)."""
    if not has_dot():
        pytest.skip("needs Graphviz's dot (apt-get install graphviz)")
