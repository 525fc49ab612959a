"""dask on taskgraph's scheduler, dask with taskgraph's order, and dask
graphs as ``taskgraph-json/1``.

Running
-------
``get(dsk, keys, **kwargs)`` is ``dask.threaded.get`` on taskgraph's
scheduler: the graph is read, ordered and scheduled in Rust, and Python is
entered only to run tasks and call callbacks. Importing this module
registers it as dask's scheduler ``"taskgraph"``
(``x.compute(scheduler="taskgraph")``).

Ordering
--------
``install(strategy="auto")`` puts :func:`taskgraph.order` in the place of
``dask.order.order`` everywhere dask calls it: the attribute of
``dask.order`` (which distributed's scheduler, ``dask.order.diagnostics``
and ``dask.base.visualize_dsk`` look up when they call it) and every
module that imported the function by name (``dask.local``, tests, user
code). ``x.compute()`` and ``client.compute(x)`` then use it.
``uninstall()`` restores dask's own function wherever it was replaced, and
``with ordering(strategy="dask"):`` installs for the length of a block.

>>> import dask.order, taskgraph.dask
>>> with taskgraph.dask.ordering(strategy="dask"):
...     print(taskgraph.dask.installed(), dask.order.order({"a": 1, "b": (sum, ["a"])}))
dask {'a': 0, 'b': 1}
>>> print(taskgraph.dask.installed())
None

The installed function keeps dask's signature, ``order(dsk,
dependencies=None, *, return_stats=False)``, and like dask's ignores
``dependencies``. ``return_stats=True`` asks for dask's internal
critical-path figures, which taskgraph does not compute: it raises
``NotImplementedError``.

Export
------
``to_taskgraph`` takes any dask collection (array, dataframe, bag, delayed),
a ``HighLevelGraph`` or a plain graph dict, and returns the document as a
dict; ``dump`` writes it to a file (``.gz`` compresses), whole or not at all.
The conversion runs in Rust and the file is written by the same writer as
the ``taskgraph`` command's.

>>> import dask.array as da
>>> x = da.ones((4, 4), chunks=(2, 2))
>>> doc = taskgraph.dask.to_taskgraph((x + x.T).sum())
>>> doc["format"], len(doc["tasks"])
('taskgraph-json/1', 17)

Each task's dependencies are the ones ``dask.order`` computes: a key inside
a plain tuple is not a reference, a key that a fused task holds inside
itself is not one either, and a self-reference is a cycle (``RuntimeError:
Cycle detected ...``). Task bodies become terms: a call is ``{"call":
"module.qualname", "args": [...]}``, a reference ``{"ref": KEY}``, a list
``{"list": [...]}``, a JSON-representable value itself, a key that is not a
dependency ``{"call": "<key>", "args": [KEY]}`` (a tuple key as a list), and anything else the
marker ``{"call": "<opaque>", "args": ["TYPE"]}``. Keyword arguments become
a last argument ``{"call": "<kwargs>", "args": [NAME, VALUE, ...]}``. A task
whose body hides a dependency (inside an opaque object) is written by its
dependencies alone (``"deps"``). ``size`` is given where dask knows a
chunk's bytes (arrays with a known shape and dtype). The top-level
``"data_nodes"`` lists the keys that dask's order treats as data rather than
tasks (literals, ``DataNode``s, lists of keys).
"""

import gc
import json
import os
import threading

from taskgraph import _native
from taskgraph._callbacks import recorders as _recorders
from taskgraph._ordering import install, installed, ordering, uninstall
from taskgraph._processes import Processes
from taskgraph._spill import SpillError
from taskgraph._threads import on_threads as _on_threads

FORMAT = "taskgraph-json/1"

__all__ = [
    "FORMAT",
    "Processes",
    "RunStats",
    "SpillError",
    "dump",
    "get",
    "install",
    "installed",
    "ordering",
    "to_taskgraph",
    "uninstall",
]


# --- running ----------------------------------------------------------------


def get(
    dsk,
    keys,
    cache=None,
    num_workers=None,
    pool=None,
    *,
    strategy=None,
    callbacks=None,
    memory_limit=None,
    sizes=None,
    processes=None,
    hosts=None,
    retries=2,
    **kwargs,
):
    """Computes ``keys`` of the dask graph ``dsk`` on taskgraph's scheduler,
    as ``dask.threaded.get`` does on dask's.

    ``keys`` is a key or nested lists of keys; the results come back in the
    same structure, lists as tuples. The graph is read once, ordered
    (``strategy``, default ``"auto"``; also dask.config
    ``taskgraph.strategy``) and scheduled in Rust: the ready task of best
    priority runs first, each result goes as soon as its last reader has
    run, and with several workers the results held stay within 1.1 times
    the order's max pressure plus 8 (and about one per worker). Python is
    entered only to run a task, as dask 2026.8 runs it, and to call
    callbacks.

    - ``num_workers`` (or dask.config ``num_workers``; default: the cores)
      threads run the tasks: the caller's and ``num_workers - 1`` more,
      started for the call and gone when it returns.
    - ``pool`` (or dask.config ``pool``): a ``multiprocessing.pool.ThreadPool``
      or a ``concurrent.futures.Executor`` of threads; the tasks then run on
      its threads, at most ``num_workers`` (default: its size) at once.
    - ``callbacks``: dask's callback tuples, as ``dask.callbacks.Callback``
      gives them (those active with ``with Callback():`` too): ``start``,
      ``start_state``, ``pretask``, ``posttask`` and ``finish`` are called in
      dask's order with dask's arguments, so ``ProgressBar`` and the
      profilers work unchanged.
    - ``cache``: a dict of results known already (their tasks do not run);
      the results computed are added to it.
    - ``rerun_exceptions_locally`` (or the dask.config key): a failing task
      runs again on the calling thread, for a debugger.
    - ``memory_limit`` (bytes, or a string such as ``"384MB"`` or
      ``"2GiB"``; also dask.config ``taskgraph.memory-limit``): results are
      measured with ``dask.sizeof.sizeof``, tasks wait while their inputs
      and result would not fit, and where nothing fits the results the order
      needs latest go to a private temporary directory (mode 0700, files
      0600; pickle protocol 5, array buffers written without copies) until
      a task reads them. A file goes as soon as its result is read back
      (once, however many tasks read it), so the directory holds only what
      is on disk at the moment; a result spilled again is written again.
      The directory is removed however the call ends. Each file is checked
      before it is unpickled, against an HMAC-SHA256 whose key never leaves
      memory: a file changed, replaced or removed meanwhile, or a result
      that does not unpickle, raises :class:`SpillError` naming the task and
      the file, and nothing of the file is unpickled. A file that cannot be
      written (a full disk) raises :class:`SpillError` naming the task and
      the directory, chained from the ``OSError`` (whose ``errno`` it
      keeps). A result that cannot be pickled stays in memory and counts
      (one warning names it); a task whose inputs and result alone exceed
      the limit raises ``MemoryError`` naming it. :class:`RunStats` tells
      what a run held and spilled. A result whose measure fails (its
      ``sizeof`` raises, or gives a negative, huge or float number) counts
      as 1 MB, with one ``RuntimeWarning`` naming its type: measuring never
      changes a run's outcome, under a limit or inside ``RunStats``.
    - ``sizes``: the bytes of the results, as for :func:`taskgraph.order`:
      a dict from key to bytes, None (default) for those that can be found,
      or False to count results. ``x.compute(scheduler="taskgraph")`` hands
      this function dask's expression of ``x``, whose array layers tell
      their chunks (``shape`` and ``dtype``): the sizes are then found for
      the chunks the optimized graph still has (a fused chain's result is
      its last chunk's). Where sizes are known, the order weighs results by
      them, and the scheduler takes them as what each result will take until
      it has measured results of its group (``key_split`` of the key). A
      graph that tells none (a plain dict, a dataframe's) is ordered by
      counting results, and the run learns their bytes: with the
      ``"auto"`` strategy it measures its first results, and as soon as
      one takes 64 KiB or more and four times the smallest (from the
      fourth result on, up to the sixteenth), it goes on by an order in
      bytes (each group at the mean of its results measured, a group not
      yet seen at their geometric mean; the tasks started keep their
      places). ``sizes=False`` counts results throughout.

    - ``processes``: an int N, or a :class:`Processes` pool (also dask.config
      ``taskgraph.processes``): the tasks run on worker processes rather
      than threads, so that tasks holding the GIL run side by side. An int
      starts N workers for the call and stops them after it; a pool serves
      every call given it. ``hosts`` (a hostfile) runs on the workers of
      the hosts it lists (``python -m taskgraph worker``). The caller takes
      no task: the graph is ordered and placed here, pickled once
      (cloudpickle, so lambdas and closures work; a task that cannot be
      pickled raises ``TypeError`` naming its key before anything runs),
      and each result goes from worker to worker, pickled with protocol 5;
      only the requested results come back. ``memory_limit`` holds in each
      worker process; callbacks hear each task as it ends in a worker
      (``pretask`` then ``posttask``, whose result is None: it stayed in
      the worker); a lost worker process is recovered from the results the
      others hold, up to ``retries`` losses, and the pool replaces it.
      ``initializer`` (or dask.config ``multiprocessing.initializer``) is
      called in every worker process before the call's tasks run.
      ``rerun_exceptions_locally`` does not apply (the task ran in another
      process).

    A task's exception is raised as itself, its frames in the traceback,
    once the tasks still running on other threads have finished (no thread
    of the run is left in Python when the call returns, however it ends).
    Ctrl-C stops the run: no task starts any more and the call raises
    ``KeyboardInterrupt`` at once, as dask's does (a Ctrl-C while the call
    waits for the tasks of a failed run too); the tasks still running
    finish on their threads, and the interpreter waits for them at exit. Tasks see the caller's ``contextvars``; a task may
    call ``get`` itself, and several threads may call it at once. Other
    keyword arguments are ignored, as ``dask.threaded.get`` ignores them.

    Importing :mod:`taskgraph.dask` registers this function as dask's
    scheduler ``"taskgraph"``:

    >>> import dask, taskgraph.dask
    >>> from operator import add
    >>> dsk = {"x": 1, "y": (add, "x", 10), "z": (add, "y", "y")}
    >>> taskgraph.dask.get(dsk, "z"), taskgraph.dask.get(dsk, ["x", ["z"]])
    (22, (1, (22,)))
    >>> dask.delayed(add)(1, 2).compute(scheduler="taskgraph")
    3
    """
    from collections.abc import Mapping

    from dask import config

    pool = pool or config.get("pool", None)
    num_workers = num_workers or config.get("num_workers", None)
    memory_limit = _parse_bytes(memory_limit if memory_limit is not None else config.get("taskgraph.memory-limit", None))
    strategy = strategy or config.get("taskgraph.strategy", "auto")
    rerun = kwargs.get("rerun_exceptions_locally")
    if rerun is None:
        rerun = config.get("rerun_exceptions_locally", False)
    from taskgraph._sizes import chunk_layers

    # The array layers are read before the expression is lowered to a dict,
    # which keeps none of their metadata.
    layers = [] if sizes is False else chunk_layers(dsk)
    if not isinstance(dsk, Mapping):
        dsk = dsk.__dask_graph__()
    flat = list(_flatten(keys)) if isinstance(keys, list) else [keys]
    if cache is None:
        cache = config.get("cache", None)
    if cache:
        dsk = _with_cached(dsk, cache)
    if processes is None and hosts is None:
        processes = config.get("taskgraph.processes", None)
    if processes is not None or hosts is not None:
        from taskgraph._processes import on_processes

        initializer = kwargs.get("initializer") or config.get("multiprocessing.initializer", None)
        values = on_processes(
            dsk, flat, processes, hosts, strategy, sizes, layers, memory_limit, retries, callbacks, initializer
        )
    else:
        values = _on_threads(dsk, flat, cache, pool, num_workers, strategy, sizes, layers, memory_limit, rerun, callbacks)
    if cache is not None:
        cache.update(zip(flat, values))
    return _nest(keys, iter(values)) if isinstance(keys, list) else values[0]


def _flatten(keys):
    for key in keys:
        if isinstance(key, list):
            yield from _flatten(key)
        else:
            yield key


def _nest(keys, values):
    """``keys``' structure with lists as tuples, filled from ``values``."""
    return tuple(_nest(key, values) if isinstance(key, list) else next(values) for key in keys)


def _with_cached(dsk, cache):
    """``dsk`` with the keys of ``cache`` as data."""
    from dask._task_spec import DataNode

    dsk = dict(dsk)
    for key, value in cache.items():
        dsk[key] = DataNode(key, value)
    return dsk


def _parse_bytes(size):
    """A memory limit in bytes: an int, or a string such as ``"384MB"``."""
    if size is None:
        return None
    if isinstance(size, bool) or not isinstance(size, (int, str)):
        raise TypeError(f"memory_limit must be bytes as an int or a string such as '384MB', not {size!r}")
    if isinstance(size, str):
        from dask.utils import parse_bytes

        try:
            size = parse_bytes(size)
        except ValueError as err:
            raise ValueError(f"memory_limit {size!r} is not a size: {err}") from None
    if size <= 0:
        raise ValueError(f"memory_limit must be positive, not {size}")
    return size


class RunStats:
    """What the runs of :func:`get` inside a ``with`` block held, spilled
    and ran:

    >>> import taskgraph.dask
    >>> from operator import add
    >>> with taskgraph.dask.RunStats() as s:
    ...     taskgraph.dask.get({"a": 1, "b": (add, "a", 1), "c": (add, "b", "a")}, "c")
    3
    >>> s.tasks_run, s.peak_held
    (3, 2)

    - ``peak_bytes``: the most bytes of results in memory at once in any
      run (``dask.sizeof.sizeof`` of each result; 1 MB, with one warning
      per type, for a result it cannot measure);
    - ``spilled_bytes``: the bytes written to disk, over all the runs;
    - ``peak_held``: the most results held at once in any run;
    - ``tasks_run``: the tasks run, over all the runs.

    Runs that tasks start themselves (a nested ``get``) count too. Blocks
    may nest: each records the runs inside it.
    """

    def __init__(self):
        self.peak_bytes = 0
        self.spilled_bytes = 0
        self.peak_held = 0
        self.tasks_run = 0
        self._lock = threading.Lock()
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_recorders.set((*_recorders.get(), self)))
        return self

    def __exit__(self, *exc):
        _recorders.reset(self._tokens.pop())
        return False

    def _record(self, run):
        with self._lock:
            self.peak_bytes = max(self.peak_bytes, run.peak_bytes)
            self.spilled_bytes += run.spilled_bytes
            self.peak_held = max(self.peak_held, run.peak_held)
            self.tasks_run += run.tasks_run

    def __repr__(self):
        return (
            f"RunStats(peak_bytes={self.peak_bytes}, spilled_bytes={self.spilled_bytes}, "
            f"peak_held={self.peak_held}, tasks_run={self.tasks_run})"
        )


def _register():
    """Makes ``scheduler="taskgraph"`` name :func:`get` in dask."""
    try:
        import dask.base
    except ImportError:  # dask is a dependency, but the rest works without it
        return
    dask.base.named_schedulers["taskgraph"] = get


_register()


# --- export -----------------------------------------------------------------


def _graph(obj):
    """The low-level graph of a collection, a HighLevelGraph or a dict."""
    from dask.base import is_dask_collection

    if is_dask_collection(obj):
        return obj.__dask_graph__()
    return obj


def to_taskgraph(obj, *, sizes_from=None):
    """The ``taskgraph-json/1`` document of a dask collection or graph, as
    a dict.

    Raises ``RuntimeError("Cycle detected ...")`` for a graph with a cycle,
    a task that refers to itself included, as dask's order does, and
    ``ValueError`` naming the key for a key the format cannot hold (an
    integer outside the 64-bit range, a float that is not finite, bytes that
    are not UTF-8), two keys written alike, or a task nested deeper than the
    format allows. ``sizes_from``: the collection or graph whose layers tell
    the chunk sizes, when ``obj`` is its dict.
    """
    graph, sizes = _graph_and_sizes(obj, sizes_from)
    text = _native.dask_document(graph, sizes)
    # The document is made of many small dicts and lists, none of them in a
    # cycle: the cyclic collector, run again and again as they are made (and
    # over the graph each time), would take most of the time.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return json.loads(text)
    finally:
        if collecting:
            gc.enable()


def _graph_and_sizes(obj, sizes_from):
    """The graph dict of ``obj`` and the graph whose layers tell its sizes."""
    graph = _graph(obj)
    return dict(graph), graph if sizes_from is None else _graph(sizes_from)


def dump(obj, path, *, sizes_from=None):
    """Writes the document of ``obj`` to ``path`` (gzip when it ends in .gz)
    and returns the number of tasks written. Raises as ``to_taskgraph`` does,
    writing nothing: the file is written whole or not at all."""
    graph, sizes = _graph_and_sizes(obj, sizes_from)
    return _native.dask_dump(graph, os.fspath(path), sizes)
