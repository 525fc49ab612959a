"""dask's task ordering in Rust, in process.

>>> import taskgraph
>>> from operator import add, neg
>>> dsk = {"a": 1, "b": 2, "c": (neg, "a"), "d": (add, "b", "c")}
>>> taskgraph.order(dsk, strategy="dask")
{'a': 0, 'c': 1, 'b': 2, 'd': 3}

- :func:`order` returns what ``dask.order.order`` returns (a dict from each
  key of the graph to its priority, 0 running first), computed in Rust.
- :func:`max_pressure` measures an order as ``dask.order.diagnostics`` does;
  :func:`lower_bound` proves how low any order can go.
- With ``sizes`` (a dict from key to bytes, or found in the chunk metadata
  of a ``HighLevelGraph``'s array layers), :func:`order` holds few bytes
  rather than few results, :func:`max_bytes` measures an order in bytes
  and :func:`lower_bound_bytes` bounds every order's.
- :class:`Graph` reads a dask collection or graph once, then orders it,
  measures it, places it on workers, writes it as ``taskgraph-json/1`` and
  draws it.
- :mod:`taskgraph.dask` runs dask graphs on taskgraph's scheduler
  (``get``, registered as ``scheduler="taskgraph"``), makes dask itself use
  :func:`order` (``install``, ``uninstall``, ``ordering``) and exports
  graphs as JSON.
"""

from taskgraph._native import lower_bound, lower_bound_bytes, max_bytes, max_pressure, order
from taskgraph.graph import Graph

__all__ = ["Graph", "lower_bound", "lower_bound_bytes", "max_bytes", "max_pressure", "order"]
__version__ = "0.1.0"
