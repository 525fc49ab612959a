"""dask's ``order`` replaced by taskgraph's: ``install``, ``uninstall``,
``installed`` and ``ordering``, which :mod:`taskgraph.dask` exports.

One wrapper of dask's own function takes its place wherever it is bound
(``dask.order.order`` and every module that imported it by name), and picks
the strategy at each call: the innermost ``ordering()`` block's of the
calling thread or task, else ``install()``'s, else dask's own order."""

import contextlib
import contextvars
import sys
import threading

from taskgraph import _native

__all__ = ["install", "installed", "ordering", "uninstall"]

_lock = threading.RLock()
# The one installed wrapper (by id, kept alive here so that its id stays
# unique), the strategy install() set for the whole process (None: dask's
# own order outside ordering() blocks), the (module, attribute, value)
# bindings the wrapper replaced, and how many ordering() blocks are open.
_wrappers = {}
_installed = {"strategy": None, "replaced": [], "blocks": 0}
# The strategy of the innermost ordering() block of this thread or task.
_block_strategy = contextvars.ContextVar("taskgraph_ordering", default=None)

_RETURN_STATS = (
    "taskgraph.dask.install() replaced dask's order, which computes no "
    "critical-path statistics: return_stats=True is not supported. Call "
    "taskgraph.dask.uninstall() to use dask's own order for this, or "
    "taskgraph.Graph.from_dask(x).viz(path) to see taskgraph's order."
)


def _dask_order():
    """dask's own ``order`` function, even while ours is installed."""
    import dask.order

    current = dask.order.order
    if id(current) in _wrappers:
        return current.__wrapped__
    return current


def _effective():
    """The strategy dask's order calls take here: the innermost ordering()
    block's, else install()'s; None for dask's own order."""
    strategy = _block_strategy.get()
    return strategy if strategy is not None else _installed["strategy"]


def _make_wrapper(original):
    def order(dsk, dependencies=None, *, return_stats=False):
        strategy = _effective()
        if strategy is None:
            return original(dsk, dependencies, return_stats=return_stats)
        if return_stats:
            raise NotImplementedError(_RETURN_STATS)
        # dask's order ignores `dependencies` and computes its own; so does
        # this, so that every caller gets what dask would give.
        return _native.order(dsk, strategy=strategy)

    order.__name__ = original.__name__
    order.__qualname__ = original.__qualname__
    order.__module__ = original.__module__
    order.__doc__ = f"taskgraph's order in place of dask's (see taskgraph.dask.install).\n\n{original.__doc__ or ''}"
    order.__wrapped__ = original
    return order


def _holders(targets):
    """Every (module, attribute) whose value is one of ``targets`` (by
    identity), in every imported module but taskgraph's own."""
    ids = {id(t) for t in targets}
    found = []
    for name, module in list(sys.modules.items()):
        if module is None or name == "taskgraph" or name.startswith("taskgraph."):
            continue
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for attr, value in list(namespace.items()):
            if id(value) in ids and any(value is t for t in targets):
                found.append((module, attr))
    return found


def _check(strategy):
    if strategy not in _native.strategies():
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {', '.join(_native.strategies())}")


def _put_wrapper():
    """Puts the wrapper wherever dask's own order is bound (once); on a
    failure midway, puts back what it had replaced and raises."""
    import dask.local  # noqa: F401  (binds `order` by name at import)
    import dask.order

    if _wrappers:
        return
    original = _dask_order()
    wrapper = _make_wrapper(original)
    replaced = []
    try:
        for module, attr in _holders([original]):
            setattr(module, attr, wrapper)
            replaced.append((module, attr, original))
        if dask.order.order is not wrapper:
            dask.order.order = wrapper
            replaced.append((dask.order, "order", original))
    except BaseException:
        for module, attr, value in reversed(replaced):
            with contextlib.suppress(Exception):
                setattr(module, attr, value)
        raise
    _wrappers[id(wrapper)] = wrapper
    _installed["replaced"] = replaced


def _take_wrapper():
    """Puts back exactly what the wrapper replaced, and dask's own order
    wherever a module imported the wrapper since."""
    if not _wrappers:
        return
    ours = list(_wrappers.values())
    original = ours[0].__wrapped__
    restored = set()
    for module, attr, value in _installed["replaced"]:
        if any(getattr(module, attr, None) is w for w in ours):
            setattr(module, attr, value)
        restored.add((id(module), attr))
    for module, attr in _holders(ours):
        if (id(module), attr) not in restored:
            setattr(module, attr, original)
    _wrappers.clear()
    _installed["replaced"] = []


def install(strategy="auto"):
    """Makes dask use :func:`taskgraph.order` with ``strategy`` wherever it
    calls its own ``order``, in every thread (an ``ordering()`` block still
    picks its own). Calling it again switches the strategy. If a binding
    cannot be replaced, the ones replaced are put back and the error
    raised."""
    _check(strategy)
    with _lock:
        _put_wrapper()
        _installed["strategy"] = strategy


def uninstall():
    """Restores dask's own ``order`` everywhere ``install`` put taskgraph's
    (exactly what each binding held), and wherever a module imported
    taskgraph's since. Does nothing when nothing is installed. ``ordering()``
    blocks still open keep their strategy."""
    with _lock:
        _installed["strategy"] = None
        if _installed["blocks"] == 0:
            _take_wrapper()


def installed():
    """The strategy dask's order calls take here (the innermost
    ``ordering()`` block's, else ``install()``'s), or None when dask's own
    order is in place."""
    return _effective()


@contextlib.contextmanager
def ordering(strategy="auto"):
    """taskgraph's order with ``strategy`` for the length of a ``with``
    block, in this thread or asyncio task alone: blocks nest, run in
    several threads or tasks at once and end in any order, and each leaves
    what was in place before it. Once no block is open and nothing is
    installed, dask's own order is back where it was."""
    _check(strategy)
    with _lock:
        _put_wrapper()
        _installed["blocks"] += 1
    token = _block_strategy.set(strategy)
    try:
        yield
    finally:
        _block_strategy.reset(token)
        with _lock:
            _installed["blocks"] -= 1
            if _installed["blocks"] == 0 and _installed["strategy"] is None:
                _take_wrapper()
