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

__all__ = ["chunk_layers"]


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
