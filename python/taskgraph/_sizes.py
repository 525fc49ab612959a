"""Where the bytes of a dask graph's results can be found: the chunk
metadata of its array layers.

dask keeps, on each layer of an array's ``HighLevelGraph``, the
``collection_annotations`` of the array that made it (``chunks`` and
``dtype``), on every intermediate layer, not only the last. A scheduler
that ``dask.compute`` calls gets an expression whose ``HLGExpr`` nodes
hold those graphs, unoptimized (the optimized graph it runs has lost the
annotations). With ``array.query-planning``, each array expression has its
own ``chunks`` and ``dtype``. This module lists them, one entry per layer;
the keys are matched to them in Rust (``taskgraph._native``), where the
graph is walked.
"""

import operator
import threading

__all__ = ["SafeSizeof", "chunk_layers"]

# What a result counts for when ``sizeof`` cannot tell, as
# ``distributed.sizeof.safe_sizeof`` counts it; and the most a result is
# taken to take (more than any machine holds: 256 TiB). The scheduler in
# Rust (``graph-python/src/execute/results.rs``) holds the same two figures.
FALLBACK_BYTES = 1_000_000
MAX_BYTES = 1 << 48


class SafeSizeof:
    """``dask.sizeof.sizeof`` that never fails: where it raises an
    ``Exception`` (a ``__sizeof__`` that raises, or returns a negative, a
    huge or a float number: ``sys.getsizeof`` refuses those), or gives
    anything but an integer from 0 to 2^48, the result counts as 1 MB
    (``FALLBACK_BYTES``), with one ``RuntimeWarning`` per type of value
    (per instance: one per run). Measuring only observes a run: it never
    changes its outcome.

    >>> class Odd:
    ...     def __sizeof__(self):
    ...         return -1
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     measure = SafeSizeof()
    ...     measure(Odd()), measure(Odd()), measure([1, 2]) > 0
    (1000000, 1000000, True)
    >>> len(caught), "Odd" in str(caught[0].message)
    (1, True)
    """

    def __init__(self):
        from dask.sizeof import sizeof

        self._sizeof = sizeof
        self._warned = set()
        self._lock = threading.Lock()

    def __call__(self, value):
        try:
            size = self._sizeof(value)
        except Exception as err:  # noqa: BLE001 (a measure only observes)
            self._warn(value, f"raised {type(err).__name__}: {err}")
            return FALLBACK_BYTES
        try:
            size = operator.index(size)
        except TypeError:
            self._warn(value, f"gave {size!r}, not a number of bytes")
            return FALLBACK_BYTES
        if not 0 <= size <= MAX_BYTES:
            self._warn(value, f"gave {size} bytes")
            return FALLBACK_BYTES
        return size

    def _warn(self, value, what):
        kind = type(value)
        with self._lock:
            if kind in self._warned:
                return
            self._warned.add(kind)
        import warnings

        warnings.warn(
            f"taskgraph: dask.sizeof.sizeof of a result of type {kind.__module__}.{kind.__qualname__} {what}; "
            f"such results count as {FALLBACK_BYTES} bytes",
            RuntimeWarning,
            stacklevel=2,
        )


def chunk_layers(obj):
    """``(name, chunks, itemsize)`` for each dask array layer ``obj`` (a
    ``HighLevelGraph``, a dask collection, or the expression a scheduler
    gets from ``dask.compute``) describes with known chunks and a dtype of
    fixed item size; an empty list for anything else (a plain dict). The
    chunk ``(name, i, j, ...)`` then holds the product of its chunk lengths
    times ``itemsize`` bytes.

    >>> import dask.array as da
    >>> [(name.split("-")[0], chunks, itemsize) for name, chunks, itemsize in chunk_layers(da.ones((4, 3), chunks=2))]
    [('ones_like', ((2, 2), (2, 1)), 8)]
    """
    try:
        from dask.highlevelgraph import HighLevelGraph
    except ImportError:  # dask is a dependency, but the rest works without it
        return []
    found = []
    expr = _expression(obj)
    if expr is None and not isinstance(obj, HighLevelGraph):
        from dask.base import is_dask_collection

        if is_dask_collection(obj):
            obj = obj.__dask_graph__()
    if isinstance(obj, HighLevelGraph):
        _from_graph(obj, found)
    if expr is None:
        return found
    from dask._expr import HLGExpr

    array_expr = _array_expr_class()
    for node in expr.walk():
        if isinstance(node, HLGExpr):
            graph = node.operand("dsk")
            if isinstance(graph, HighLevelGraph):
                _from_graph(graph, found)
        elif array_expr is not None and isinstance(node, array_expr):
            _add(found, node._name, node.chunks, node.dtype)
    return found


def _expression(obj):
    """The dask expression ``obj`` is or holds (a collection's ``expr``), or
    None."""
    try:
        from dask._expr import Expr
    except ImportError:
        return None
    if isinstance(obj, Expr):
        return obj
    expr = getattr(obj, "expr", None)
    return expr if isinstance(expr, Expr) else None


def _array_expr_class():
    """dask's array expression class, when dask has one."""
    try:
        from dask.array._array_expr._expr import ArrayExpr
    except ImportError:
        return None
    return ArrayExpr


def _from_graph(graph, found):
    for name, layer in graph.layers.items():
        notes = getattr(layer, "collection_annotations", None)
        if notes:
            _add(found, name, notes.get("chunks"), notes.get("dtype"))


def _add(found, name, chunks, dtype):
    itemsize = getattr(dtype, "itemsize", None)
    # A dtype of no fixed size (object, a string of any length) says nothing.
    if isinstance(name, str) and isinstance(chunks, tuple) and isinstance(itemsize, int) and itemsize > 0:
        if getattr(dtype, "hasobject", False):
            return
        found.append((name, chunks, itemsize))
