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


def test_blocks_in_threads_end_in_any_order(calls):
    # A enters ordering("dask"), B enters ordering("auto"), A leaves while B
    # runs: B keeps its strategy, and once B leaves dask's own is back.
    a_in, b_in, a_out, b_ran = (threading.Event() for _ in range(4))
    seen = {}

    def a():
        with taskgraph.dask.ordering("dask"):
            a_in.set()
            b_in.wait()
            seen["a"] = taskgraph.dask.installed()
            dask.order.order(corpus.diamond())
        a_out.set()

    def b():
        a_in.wait()
        with taskgraph.dask.ordering("auto"):
            b_in.set()
            a_out.wait()
            seen["b"] = taskgraph.dask.installed()
            dask.order.order(corpus.diamond())
            b_ran.set()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"a": "dask", "b": "auto"}
    assert calls == ["dask", "auto"]
    assert taskgraph.dask.installed() is None
    assert dask.order.order is DASK["order"] and dask.local.order is DASK["order"]


def test_blocks_nest_and_a_thread_outside_them_sees_dask(calls):
    with taskgraph.dask.ordering("dask"):
        with taskgraph.dask.ordering("tree"):
            dask.order.order(corpus.diamond())
            other = []
            t = threading.Thread(target=lambda: other.append(taskgraph.dask.installed()))
            t.start()
            t.join()
            assert other == [None]  # another thread is in no block
        dask.order.order(corpus.diamond())
        assert taskgraph.dask.installed() == "dask"
    assert calls == ["tree", "dask"]
    assert dask.order.order is DASK["order"]


def test_asyncio_tasks_each_see_their_own():
    import asyncio

    async def use(strategy, results):
        with taskgraph.dask.ordering(strategy):
            await asyncio.sleep(0.01)
            results.append((strategy, taskgraph.dask.installed()))
            await asyncio.sleep(0.01)

    async def main():
        results = []
        await asyncio.gather(use("dask", results), use("auto", results), use("tree", results))
        return results

    results = asyncio.run(main())
    assert sorted(results) == [("auto", "auto"), ("dask", "dask"), ("tree", "tree")]
    assert dask.order.order is DASK["order"]


class Locked(types.ModuleType):
    """A module whose `order` cannot be rebound."""

    def __setattr__(self, name, value):
        if name == "order" and "order" in self.__dict__:
            raise AttributeError("read-only")
        super().__setattr__(name, value)


def test_install_that_cannot_finish_puts_everything_back():
    locked = Locked("zz_locked_order_holder")
    locked.order = DASK["order"]
    sys.modules[locked.__name__] = locked
    try:
        with pytest.raises(AttributeError, match="read-only"):
            taskgraph.dask.install()
        assert dask.order.order is DASK["order"] and dask.local.order is DASK["order"]
        assert taskgraph.dask.installed() is None
    finally:
        del sys.modules[locked.__name__]


def test_uninstall_puts_back_what_it_replaced():
    user = types.ModuleType("user_rebinds_order")
    user.order = DASK["order"]
    sys.modules[user.__name__] = user
    try:
        taskgraph.dask.install()
        assert user.order is not DASK["order"]
        mine = object()
        user.order = mine  # rebound by the user meanwhile: left alone
        taskgraph.dask.uninstall()
        assert user.order is mine
        assert dask.order.order is DASK["order"]
    finally:
        del sys.modules[user.__name__]
