"""``Graph``: a dask graph read once, then ordered, measured, placed on
workers, written as JSON and drawn."""

import shutil

from taskgraph import _native
from taskgraph._sizes import chunk_layers

__all__ = ["Graph"]

# Graphviz lays out a few thousand boxes in seconds; past this a notebook
# shows no picture rather than waiting.
_REPR_SVG_MAX_TASKS = 2000


class Graph:
    """A dask graph read into Rust once.

    >>> import dask.array as da, taskgraph
    >>> g = taskgraph.Graph.from_dask(da.ones((4, 4), chunks=(2, 2)).sum())
    >>> g.stats()["tasks"], len(g.order()) == len(g)
    (9, True)

    ``dependencies`` (optional) maps each key to the keys it needs, instead
    of the dependencies dask's order computes from the tasks.

    ``sizes`` weighs results by their bytes, so that :meth:`order` holds few
    bytes rather than few results: a dict from key to bytes (the keys it
    leaves out take their chunk's bytes where the graph's array layers tell
    them, else the mean of the known sizes of their group, dask's
    ``key_split`` of the key, else of all), None for the sizes that can be
    found (the chunks of a ``HighLevelGraph``'s or a collection's array
    layers: the product of a chunk's lengths times its dtype's item size),
    or False to count results.

    >>> import dask.array as da, taskgraph
    >>> g = taskgraph.Graph.from_dask(da.ones((4, 3), chunks=2) + 1)
    >>> sorted(set(g.sizes.values()))
    [16, 32]
    """

    def __init__(self, dsk, dependencies=None, *, sizes=None, source=None):
        self._dsk = dict(dsk)
        self._source = dsk if source is None else source
        layers = [] if sizes is False else chunk_layers(self._source)
        self._native = _native.DaskGraph(self._dsk, dependencies, sizes=sizes, layers=layers)

    @classmethod
    def from_dask(cls, obj, *, sizes=None):
        """The graph of a dask collection (array, dataframe, bag, delayed), a
        ``HighLevelGraph`` or a graph dict, as ``obj.__dask_graph__()`` gives
        it (not optimized); ``sizes`` as for the constructor."""
        from dask.base import is_dask_collection

        graph = obj.__dask_graph__() if is_dask_collection(obj) else obj
        return cls(graph, sizes=sizes, source=obj)

    def __len__(self):
        return len(self._native)

    def __repr__(self):
        return f"<taskgraph.Graph: {len(self)} tasks>"

    @property
    def dsk(self):
        """The graph as a dict from key to task."""
        return self._dsk

    def keys(self):
        """The keys, in the graph's order."""
        return self._native.keys()

    def order(self, strategy="auto"):
        """:func:`taskgraph.order` of the graph (with its :attr:`sizes`):
        key to priority."""
        return self._native.order(strategy)

    def max_pressure(self, o=None, strategy="auto"):
        """The most results held at once running order ``o`` (key to
        priority; by default this graph's order with ``strategy``)."""
        if o is None:
            o = self.order(strategy)
        return self._native.max_pressure(o)

    def lower_bound(self):
        """A proven lower bound on the max pressure of any order."""
        return self._native.lower_bound()

    @property
    def sizes(self):
        """Each task's bytes as the orders weigh them, key to bytes: those
        given or found, and the estimates for the rest; None when no size is
        known (orders then count results)."""
        return self._native.sizes()

    @property
    def known_sizes(self):
        """How many tasks' sizes were given or found (the others' in
        :attr:`sizes` are estimates)."""
        return self._native.known_sizes()

    def max_bytes(self, o=None, strategy="auto"):
        """The most bytes of results held at once running order ``o`` (key
        to priority; by default this graph's order with ``strategy``), each
        weighed by :attr:`sizes`. Raises ``ValueError`` when no size is
        known."""
        if o is None:
            o = self.order(strategy)
        return self._native.max_bytes(o)

    def lower_bound_bytes(self):
        """A proven lower bound on the max bytes of any order. Raises
        ``ValueError`` when no size is known."""
        return self._native.lower_bound_bytes()

    def stats(self):
        """The graph's shape as a dict: tasks, edges, roots, leaves, depth,
        max_in_degree, max_out_degree, data_nodes (tasks dask's order treats
        as data) and lower_bound."""
        res = self._native.stats()
        res["lower_bound"] = self._native.lower_bound()
        return res

    def stages(self, keys=None):
        """The stage plan, as ``taskgraph stages --json`` prints it: stages
        split at wide dependencies (the edges of complete bipartite blocks,
        as a shuffle's all-to-all exchange makes them), each partition's
        narrow work in a stage counted as one task, and what barriers would
        save. ``keys`` stay tasks of their own (default: the leaves).

        >>> import taskgraph
        >>> dsk = {("map", i): i for i in range(4)}
        >>> dsk.update({("reduce", j): (sum, [("map", i) for i in range(4)]) for j in range(2)})
        >>> plan = taskgraph.Graph(dsk).stages()
        >>> plan["stage_count"], [s["tasks"] for s in plan["stages"]], plan["edges_with_barriers"]
        (2, [4, 2], 6)
        """
        keep = None
        if keys is not None:
            position = {key: i for i, key in enumerate(self.keys())}
            missing = [key for key in keys if key not in position]
            if missing:
                raise KeyError(f"not keys of the graph: {missing[:5]!r}")
            keep = [position[key] for key in keys]
        return self._native.stages(keep)

    def assign(self, workers):
        """Places the tasks on ``workers`` workers, few edges crossing and
        loads balanced: key to worker index."""
        return self._native.assign(workers)

    def _sizes_from(self):
        """The graph whose layers tell the chunk sizes."""
        from taskgraph.dask import _graph

        return _graph(self._source)

    def to_json(self, path):
        """Writes the graph this object holds (the tasks it read, whatever
        became of the mapping since) as ``taskgraph-json/1`` (gzip when
        ``path`` ends in ``.gz``) for the ``taskgraph`` command, whole or not
        at all; returns the task count. Raises as
        :func:`taskgraph.dask.to_taskgraph` does."""
        return _native.dask_dump(self._dsk, path, self._sizes_from())

    def _picture(self, color, strategy, workers, collapse, max_tasks):
        return {
            "color": None if color is None or color == "none" else color,
            "strategy": strategy,
            "workers": workers,
            "collapse": collapse,
            "max_tasks": max_tasks,
        }

    def to_dot(self, color="order", strategy="auto", *, workers=4, collapse=False, max_tasks=2000):
        """The picture ``taskgraph viz`` draws of this graph (as written by
        :meth:`to_json`), in Graphviz's DOT language: a box per task labelled
        with its key and order position, filled by ``color`` (``"order"``,
        ``"ages"``, ``"freed"``, ``"memoryincreases"``,
        ``"memorydecreases"``, ``"memorypressure"``, ``"worker"`` on
        ``workers`` workers, ``"stage"``, or ``None``), with a legend.
        ``collapse=True`` draws a box per group of tasks (by key name).
        Raises ``ValueError`` past ``max_tasks`` boxes.

        >>> import taskgraph
        >>> dot = taskgraph.Graph({"a": 1, "b": (sum, ["a"])}).to_dot()
        >>> dot.startswith("digraph")
        True
        """
        options = self._picture(color, strategy, workers, collapse, max_tasks)
        return _native.dask_picture(self._dsk, self._sizes_from(), options)

    def viz(self, path, color="order", strategy="auto", *, workers=4, collapse=False, max_tasks=2000):
        """Draws :meth:`to_dot`'s picture into ``path``: ``.svg``, ``.png`` or
        ``.pdf`` rendered by Graphviz's ``dot``, ``.html`` as one page with
        pan, zoom and a hover card per task, or ``.dot``/``.gv`` as DOT text.
        The file is written whole or not at all. Raises ``ValueError`` for
        another extension and ``RuntimeError`` when Graphviz is missing or
        fails."""
        options = self._picture(color, strategy, workers, collapse, max_tasks)
        _native.dask_draw(self._dsk, self._sizes_from(), path, options)

    def _repr_svg_(self):
        """The picture a notebook shows: the order as SVG, or None without
        Graphviz or past 2000 tasks."""
        if len(self) > _REPR_SVG_MAX_TASKS or shutil.which("dot") is None:
            return None
        options = self._picture("order", "auto", 4, False, _REPR_SVG_MAX_TASKS)
        try:
            svg = _native.dask_picture(self._dsk, self._sizes_from(), options, "svg")
            return svg.decode("utf-8")
        except (OSError, RuntimeError, UnicodeError, ValueError):
            return None
