"""The examples in the package's docstrings run and print what they show."""

import doctest

import pytest

import taskgraph
import taskgraph.dask
import taskgraph._processes
import taskgraph._sizes
import taskgraph.graph


@pytest.mark.parametrize("module", [taskgraph, taskgraph.dask, taskgraph.graph, taskgraph._sizes, taskgraph._processes], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    try:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    finally:
        taskgraph.dask.uninstall()
    assert result.attempted > 0
    assert result.failed == 0
