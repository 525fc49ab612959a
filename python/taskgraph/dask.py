"""dask with taskgraph's order, and dask graphs as ``taskgraph-json/1``.

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
dict; ``dump`` writes it to a file (``.gz`` compresses).

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
dependency ``{"call": "<key>", "args": [KEY]}``, and anything else the
marker ``{"call": "<opaque>", "args": ["TYPE"]}``. Keyword arguments become
a last argument ``{"call": "<kwargs>", "args": [NAME, VALUE, ...]}``. A task
whose body hides a dependency (inside an opaque object) is written by its
dependencies alone (``"deps"``). ``size`` is given where dask knows a
chunk's bytes (arrays with a known shape and dtype). The top-level
``"data_nodes"`` lists the keys that dask's order treats as data rather than
tasks (literals, ``DataNode``s, lists of keys).
"""

import contextlib
import functools
import gzip
import json
import math
import numbers
import os
import sys
import tempfile
import threading

from taskgraph import _native

FORMAT = "taskgraph-json/1"

__all__ = ["FORMAT", "dump", "install", "installed", "ordering", "to_taskgraph", "uninstall"]


# --- ordering ---------------------------------------------------------------

_lock = threading.RLock()
# The installed wrappers by id (kept alive here so that ids stay unique),
# the strategy in effect (None when dask's own order is in place), and the
# (module, attribute) pairs that held dask's function.
_wrappers = {}
_installed = {"strategy": None, "replaced": []}

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


def _make_wrapper(strategy, original):
    def order(dsk, dependencies=None, *, return_stats=False):
        if return_stats:
            raise NotImplementedError(_RETURN_STATS)
        # dask's order ignores `dependencies` and computes its own; so does
        # this, so that every caller gets what dask would give.
        return _native.order(dsk, strategy=strategy)

    order.__name__ = original.__name__
    order.__qualname__ = original.__qualname__
    order.__module__ = original.__module__
    order.__doc__ = f"taskgraph's order (strategy {strategy!r}) in place of dask's.\n\n{original.__doc__ or ''}"
    order.__wrapped__ = original
    order.taskgraph_strategy = strategy
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


def install(strategy="auto"):
    """Makes dask use :func:`taskgraph.order` with ``strategy`` wherever it
    calls its own ``order``. Calling it again switches the strategy."""
    import dask.local  # noqa: F401  (binds `order` by name at import)
    import dask.order

    # Refuse an unknown strategy before touching anything.
    if strategy not in _native.strategies():
        raise ValueError(f"unknown strategy {strategy!r}: expected one of {', '.join(_native.strategies())}")
    with _lock:
        original = _dask_order()
        wrapper = _make_wrapper(strategy, original)
        holders = _holders([original, *_wrappers.values()])
        for module, attr in holders:
            if getattr(module, attr) is original:
                _installed["replaced"].append((module, attr))
            setattr(module, attr, wrapper)
        if dask.order.order is not wrapper:
            dask.order.order = wrapper
        _wrappers.clear()
        _wrappers[id(wrapper)] = wrapper
        _installed["strategy"] = strategy


def uninstall():
    """Restores dask's own ``order`` everywhere ``install`` put taskgraph's,
    and wherever a module imported taskgraph's since. Does nothing when
    nothing is installed."""
    with _lock:
        if not _wrappers:
            return
        original = _dask_order()
        ours = list(_wrappers.values())
        for module, attr in _installed["replaced"] + _holders(ours):
            if any(getattr(module, attr, None) is w for w in ours):
                setattr(module, attr, original)
        _wrappers.clear()
        _installed["replaced"].clear()
        _installed["strategy"] = None


def installed():
    """The strategy installed in dask, or None when dask's own order is in
    place."""
    return _installed["strategy"]


@contextlib.contextmanager
def ordering(strategy="auto"):
    """``install(strategy)`` for the length of a ``with`` block; on leaving
    it (by an exception too) what was in place before is back."""
    with _lock:
        previous = _installed["strategy"]
        install(strategy)
    try:
        yield
    finally:
        with _lock:
            if previous is None:
                uninstall()
            else:
                install(previous)


# --- export -----------------------------------------------------------------


def _key(key):
    """A dask key in JSON: strings and numbers as they are, tuples as arrays."""
    if isinstance(key, tuple):
        return [_key(part) for part in key]
    if isinstance(key, bytes):
        return key.decode("utf-8", "replace")
    if isinstance(key, bool) or not isinstance(key, (str, numbers.Integral, numbers.Real)):
        return str(key)
    if isinstance(key, numbers.Integral):
        return int(key)
    if isinstance(key, numbers.Real):
        return float(key)
    return key


def _name(func):
    """The qualified name of a callable, through partials and wrappers."""
    while isinstance(func, functools.partial):
        func = func.func
    module = getattr(func, "__module__", None) or type(func).__module__
    qualname = getattr(func, "__qualname__", None) or type(func).__qualname__
    return f"{module}.{qualname}"


def _opaque(value):
    kind = type(value)
    return {"call": "<opaque>", "args": [f"{kind.__module__}.{kind.__qualname__}"]}


def _literal(value):
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral) and -(2**63) <= int(value) < 2**63:
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)):
        return float(value)
    return _opaque(value)


class _Converter:
    """Task bodies as terms. A reference is written as one only when it names
    a dependency of the task being written (``deps``): the keys a fused task
    holds inside itself, keys missing from the graph and keys dask does not
    count are written as ``<key>`` values."""

    def __init__(self):
        self.deps = frozenset()

    def ref(self, key):
        try:
            is_dep = key in self.deps
        except TypeError:
            is_dep = False
        if is_dep:
            return {"ref": _key(key)}
        return {"call": "<key>", "args": [_key(key)]}

    def term(self, value):
        from dask import _task_spec as ts

        if isinstance(value, ts.TaskRef):
            return self.ref(value.key)
        if isinstance(value, ts.Alias):
            return self.ref(value.target)
        if isinstance(value, ts.DataNode):
            return self.term(value.value)
        if isinstance(value, (ts.List, ts.Tuple, ts.Set)):
            return {"list": [self.term(item) for item in value.args]}
        if isinstance(value, ts.Dict):
            # Its arguments alternate: key, value, key, value, ...
            return {"call": "<dict>", "args": [self.term(item) for item in value.args]}
        if isinstance(value, ts.Task):
            args = [self.term(arg) for arg in value.args]
            if value.kwargs:
                kwargs = []
                for name, item in value.kwargs.items():
                    kwargs.extend([str(name), self.term(item)])
                args.append({"call": "<kwargs>", "args": kwargs})
            return {"call": _name(value.func), "args": args}
        if isinstance(value, (list, tuple, set, frozenset)):
            return {"list": [self.term(item) for item in value]}
        if isinstance(value, dict):
            items = []
            for name, item in value.items():
                items.extend([self.term(name), self.term(item)])
            return {"call": "<dict>", "args": items}
        return _literal(value)


def _graph(obj):
    """The low-level graph of a collection, a HighLevelGraph or a dict."""
    from dask.base import is_dask_collection

    if is_dask_collection(obj):
        return obj.__dask_graph__()
    return obj


def _sizes(graph):
    """Bytes of each chunk whose layer tells its chunks and dtype."""
    sizes = {}
    layers = getattr(graph, "layers", None)
    if not layers:
        return sizes
    for layer in layers.values():
        notes = getattr(layer, "collection_annotations", None) or {}
        chunks, dtype = notes.get("chunks"), notes.get("dtype")
        itemsize = getattr(dtype, "itemsize", None)
        if chunks is None or itemsize is None:
            continue
        for key in layer:
            if not (isinstance(key, tuple) and len(key) == len(chunks) + 1):
                continue
            try:
                cells = math.prod(chunks[axis][index] for axis, index in enumerate(key[1:]))
            except (IndexError, TypeError):
                continue
            if not (isinstance(cells, float) and math.isnan(cells)):
                sizes[key] = int(cells) * itemsize
    return sizes


def _refs(term, found):
    if isinstance(term, dict):
        if "ref" in term:
            found.add(json.dumps(term["ref"]))
        for value in term.get("args", []) + term.get("list", []):
            _refs(value, found)


def to_taskgraph(obj):
    """The ``taskgraph-json/1`` document of a dask collection or graph.

    Raises ``RuntimeError("Cycle detected ...")`` for a graph with a cycle,
    a task that refers to itself included, as dask's order does.
    """
    from dask._task_spec import convert_legacy_graph

    graph = _graph(obj)
    sizes = _sizes(graph)
    raw = dict(graph)
    # The dependencies exactly as dask's order computes them, on the graph
    # as given (not on its converted form, which counts more).
    native = _native.DaskGraph(raw)
    keys = native.keys()
    deps = [[] for _ in keys]
    for dep, task in native.edges():
        deps[task].append(keys[dep])
    is_data = native.is_data()
    nodes = convert_legacy_graph(raw)
    converter = _Converter()
    tasks = []
    for i, key in enumerate(keys):
        converter.deps = frozenset(deps[i])
        node = nodes.get(key)
        task = {"key": _key(key)}
        if node is None:
            # convert_legacy_graph drops nothing but self-aliases, which are
            # cycles and refused above; keep the task by its dependencies.
            task["deps"] = [_key(dep) for dep in deps[i]]
        else:
            task["task"] = converter.term(node)
            # A dependency the term does not show (inside an opaque object)
            # would be lost: such a task is written by its dependencies.
            shown = set()
            _refs(task["task"], shown)
            if not {json.dumps(_key(dep)) for dep in deps[i]} <= shown:
                del task["task"]
                task["deps"] = [_key(dep) for dep in deps[i]]
        if key in sizes:
            task["size"] = sizes[key]
        tasks.append(task)
    data_nodes = [_key(key) for key, data in zip(keys, is_data) if data]
    return {"format": FORMAT, "producer": "taskgraph.dask", "tasks": tasks, "data_nodes": data_nodes}


def _write_atomically(path, write):
    """Writes through a private temporary file beside ``path``, renamed over
    it once complete: a failure never leaves a partial file."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".taskgraph-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as raw:
            write(raw)
        # mkstemp's file is private; the result gets an ordinary file's mode.
        umask = os.umask(0o022)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def dump(obj, path):
    """Writes the document of ``obj`` to ``path`` (gzip when it ends in .gz)
    and returns the number of tasks written."""
    doc = to_taskgraph(obj)
    data = json.dumps(doc).encode("utf-8")

    def write(raw):
        if str(path).endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb") as f:
                f.write(data)
        else:
            raw.write(data)

    _write_atomically(path, write)
    return len(doc["tasks"])
