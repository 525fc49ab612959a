"""taskgraph.dask.install(), uninstall() and ordering(): dask calls our order
wherever it called its own, with its own signature, and gets its own back."""

import importlib
import sys
import threading
import types

import dask
import dask.local
import dask.order
import pytest

import corpus
import taskgraph
import taskgraph.dask
from taskgraph import _native

# dask's own function. Not a module attribute of its own: install() replaces
# every module attribute that holds it, which would include this one.
DASK = {"order": dask.order.order}


@pytest.fixture(autouse=True)
def restored():
    taskgraph.dask.uninstall()
    yield
    taskgraph.dask.uninstall()
    assert dask.order.order is DASK["order"]
    assert dask.local.order is DASK["order"]


@pytest.fixture
def calls(monkeypatch):
    """Counts the calls that reach taskgraph's native order."""
    seen = []
    real = _native.order

    def spy(dsk, dependencies=None, *, strategy="auto"):
        seen.append(strategy)
        return real(dsk, dependencies, strategy=strategy)

    monkeypatch.setattr(_native, "order", spy)
    return seen


def test_install_replaces_every_binding(calls):
    # A module that imported dask's order by name before install().
    user = types.ModuleType("user_code_with_order")
    user.order = DASK["order"]
    user.also = DASK["order"]
    sys.modules[user.__name__] = user
    try:
        taskgraph.dask.install(strategy="dask")
        for fn in (dask.order.order, dask.local.order, user.order, user.also):
            assert fn is not DASK["order"]
            assert fn(corpus.docstring()) == {"a": 0, "c": 1, "b": 2, "d": 3}
        assert calls == ["dask"] * 4
        assert taskgraph.dask.installed() == "dask"
        taskgraph.dask.uninstall()
        assert user.order is DASK["order"] and user.also is DASK["order"]
        assert taskgraph.dask.installed() is None
    finally:
        del sys.modules[user.__name__]


def test_module_imported_after_install_is_restored():
    taskgraph.dask.install()
    late = types.ModuleType("late_importer")
    exec("from dask.order import order", late.__dict__)
    sys.modules[late.__name__] = late
    try:
        assert late.order is dask.order.order is not DASK["order"]
        taskgraph.dask.uninstall()
        assert late.order is DASK["order"]
    finally:
        del sys.modules[late.__name__]


def test_install_twice_then_uninstall_restores_dask(calls):
    taskgraph.dask.install(strategy="auto")
    taskgraph.dask.install(strategy="dask")
    dask.order.order(corpus.diamond())
    assert calls == ["dask"]
    assert dask.order.order.__wrapped__ is DASK["order"]
    taskgraph.dask.uninstall()
    assert dask.order.order is DASK["order"]
    taskgraph.dask.uninstall()  # nothing installed: nothing to do
    assert dask.order.order is DASK["order"]


def test_unknown_strategy_changes_nothing():
    with pytest.raises(ValueError, match="unknown strategy"):
        taskgraph.dask.install(strategy="fastest")
    assert dask.order.order is DASK["order"]


def test_ordering_restores_on_exit_and_on_error(calls):
    with taskgraph.dask.ordering(strategy="dask"):
        dask.order.order(corpus.diamond())
    assert dask.order.order is DASK["order"]
    with pytest.raises(ZeroDivisionError):
        with taskgraph.dask.ordering():
            dask.order.order(corpus.diamond())
            1 / 0
    assert dask.order.order is DASK["order"]
    assert calls == ["dask", "auto"]


def test_ordering_inside_install_restores_the_install(calls):
    taskgraph.dask.install(strategy="tree")
    with taskgraph.dask.ordering(strategy="dask"):
        dask.order.order(corpus.diamond())
    dask.order.order(corpus.diamond())
    assert calls == ["dask", "tree"]
    assert taskgraph.dask.installed() == "tree"


def test_dask_call_forms(calls):
    taskgraph.dask.install()
    dsk = corpus.docstring()
    expected = taskgraph.order(dsk)
    installed = dask.order.order
    assert installed(dsk) == expected
    assert installed(dsk=dsk) == expected  # distributed's scheduler
    assert installed(dsk, dependencies={"x": {"y"}}, return_stats=False) == expected  # ignored, as dask does
    assert installed(dsk=dsk, dependencies=None) == expected
    with pytest.raises(TypeError):
        installed(dsk, None, True)  # return_stats is keyword-only, as in dask
    with pytest.raises(NotImplementedError, match="return_stats=True is not supported"):
        installed(dsk, return_stats=True)
    with pytest.raises(RuntimeError, match="Cycle detected"):
        installed({"a": (corpus.f, "a")})


def test_diagnostics_and_get_use_it(calls):
    taskgraph.dask.install(strategy="dask")
    dask.order.diagnostics(corpus.diamond())
    assert calls == ["dask"]
    assert dask.get(corpus.docstring(), "d") == 4
    assert dask.threaded.get(corpus.docstring(), "d") == 4
    assert len(calls) == 3
    with pytest.raises(RuntimeError, match="Cycle detected"):
        dask.get({"a": (corpus.f, "a")}, "a")


def test_test_modules_that_bound_order_are_patched():
    module = importlib.import_module("dask.tests.test_order")
    taskgraph.dask.install()
    try:
        assert module.order is dask.order.order is not DASK["order"]
    finally:
        taskgraph.dask.uninstall()
    assert module.order is DASK["order"]


def test_called_from_another_thread(calls):
    taskgraph.dask.install()
    res = []
    t = threading.Thread(target=lambda: res.append(dask.order.order(dsk=corpus.diamond())))
    t.start()
    t.join()
    assert res == [taskgraph.order(corpus.diamond())]
