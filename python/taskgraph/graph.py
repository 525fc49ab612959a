"""``Graph``: a dask graph read once, then ordered, measured, placed on
workers, written as JSON and drawn."""

import os
import shutil
import subprocess

from taskgraph import _native

__all__ = ["Graph"]

# Graphviz lays out a few thousand boxes in seconds; past this a notebook
# shows no picture rather than waiting.
_REPR_SVG_MAX_TASKS = 2000

# Light to dark, for the fill by order position (viridis' ends and middle).
_RAMP = [(253, 231, 37), (94, 201, 98), (33, 145, 140), (59, 82, 139), (68, 1, 84)]


def _fill(t):
    """The ramp's color at ``t`` in [0, 1], and a text color readable on it."""
    t = min(max(t, 0.0), 1.0) * (len(_RAMP) - 1)
    i = min(int(t), len(_RAMP) - 2)
    f = t - i
    r, g, b = (round(a + (b - a) * f) for a, b in zip(_RAMP[i], _RAMP[i + 1]))
    text = "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#ffffff"
    return f"#{r:02x}{g:02x}{b:02x}", text


# The most characters of one line of a box's label.
_MAX_LABEL = 200


def _line(text):
    """One line of a label as Graphviz will draw it: at most ``_MAX_LABEL``
    characters (an ellipsis past it), control characters as spaces, a lone
    surrogate (which UTF-8 cannot hold) as U+FFFD."""
    if len(text) > _MAX_LABEL:
        text = text[: _MAX_LABEL - 1] + "\u2026"
    text = "".join(" " if ord(c) < 32 or 127 <= ord(c) < 160 else c for c in text)
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _quote(*lines):
    """A quoted DOT string of ``lines``: backslashes and quotes escaped, and
    ``&`` as ``&amp;``, since Graphviz decodes HTML entities even in plain
    labels (``A&amp;B`` and ``A&B`` stay apart)."""
    escaped = (_line(line).replace("\\", "\\\\").replace('"', '\\"').replace("&", "&amp;") for line in lines)
    return '"' + "\\n".join(escaped) + '"'


class Graph:
    """A dask graph read into Rust once.

    >>> import dask.array as da, taskgraph
    >>> g = taskgraph.Graph.from_dask(da.ones((4, 4), chunks=(2, 2)).sum())
    >>> g.stats()["tasks"], len(g.order()) == len(g)
    (9, True)

    ``dependencies`` (optional) maps each key to the keys it needs, instead
    of the dependencies dask's order computes from the tasks.
    """

    def __init__(self, dsk, dependencies=None, *, source=None):
        self._dsk = dict(dsk)
        self._native = _native.DaskGraph(self._dsk, dependencies)
        self._source = dsk if source is None else source

    @classmethod
    def from_dask(cls, obj):
        """The graph of a dask collection (array, dataframe, bag, delayed), a
        ``HighLevelGraph`` or a graph dict, as ``obj.__dask_graph__()`` gives
        it (not optimized)."""
        from dask.base import is_dask_collection

        graph = obj.__dask_graph__() if is_dask_collection(obj) else obj
        return cls(graph, source=obj)

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
        """:func:`taskgraph.order` of the graph: key to priority."""
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

    def to_json(self, path):
        """Writes the graph this object holds (the tasks it read, whatever
        became of the mapping since) as ``taskgraph-json/1`` (gzip when
        ``path`` ends in ``.gz``) for the ``taskgraph`` command; returns the
        task count."""
        from taskgraph.dask import dump

        return dump(self._dsk, path, sizes_from=self._source)

    def to_dot(self, color="order", strategy="auto"):
        """The graph in Graphviz's DOT language, each task labelled by its
        key; ``color="order"`` fills each by its position in the order (light
        runs first) and adds the priority to the label, ``color=None`` draws
        it plain."""
        if color not in ("order", None):
            raise ValueError(f"unknown color {color!r}: expected 'order' or None")
        keys = self.keys()
        priority = None
        if color == "order":
            o = self.order(strategy)
            priority = [o[k] for k in keys]
        last = max(len(keys) - 1, 1)
        lines = [
            "digraph taskgraph {",
            "  rankdir=BT;",
            '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, fillcolor="#f2f2f2"];',
        ]
        for i, key in enumerate(keys):
            if priority is None:
                lines.append(f"  n{i} [label={_quote(str(key))}];")
            else:
                fill, text = _fill(priority[i] / last)
                label = _quote(str(key), f"#{priority[i]}")
                lines.append(f'  n{i} [label={label}, fillcolor="{fill}", fontcolor="{text}"];')
        for dep, task in self._native.edges():
            lines.append(f"  n{dep} -> n{task};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def viz(self, path, color="order", strategy="auto"):
        """Draws the graph into ``path``: ``.svg``, ``.png`` or ``.pdf`` by
        Graphviz's ``dot``, or ``.dot``/``.gv`` as DOT text."""
        from taskgraph.dask import _write_atomically

        dot_text = self.to_dot(color=color, strategy=strategy)
        ext = os.path.splitext(os.fspath(path))[1].lower()
        if ext in (".dot", ".gv"):
            data = dot_text.encode("utf-8")
        elif ext in (".svg", ".png", ".pdf"):
            data = _render(dot_text, ext[1:])
        else:
            raise ValueError(f"cannot tell the picture format of {os.fspath(path)!r}: use .svg, .png, .pdf or .dot")
        _write_atomically(path, lambda f: f.write(data))

    def _repr_svg_(self):
        """The picture a notebook shows: the order as SVG, or None without
        Graphviz or past 2000 tasks."""
        if len(self) > _REPR_SVG_MAX_TASKS or shutil.which("dot") is None:
            return None
        try:
            return _render(self.to_dot(), "svg").decode("utf-8")
        except (OSError, RuntimeError, UnicodeError):
            return None


def _render(dot_text, fmt):
    """Graphviz's rendering of DOT text in ``fmt``."""
    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError("Graphviz's `dot` is not on PATH: install Graphviz to draw graphs")
    done = subprocess.run([dot, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"dot failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout
