"""Export dask graphs as ``taskgraph-json/1``.

>>> import dask.array as da, taskgraph_dask
>>> x = da.ones((4, 4), chunks=(2, 2))
>>> doc = taskgraph_dask.to_taskgraph((x + x.T).sum())
>>> doc["format"], len(doc["tasks"])
('taskgraph-json/1', 21)

``to_taskgraph`` takes any dask collection (array, dataframe, bag, delayed),
a ``HighLevelGraph`` or a plain graph dict, and returns the document as a
dict; ``dump`` writes it to a file (``.gz`` compresses). Task bodies become
terms: a call is ``{"call": "module.qualname", "args": [...]}``, a reference
``{"ref": KEY}``, a list ``{"list": [...]}``, a JSON-representable value
itself, and anything else the marker ``{"call": "<opaque>", "args":
["TYPE"]}``. Keyword arguments become a last argument ``{"call": "<kwargs>",
"args": [NAME, VALUE, ...]}``. ``size`` is given where dask knows a chunk's
bytes (arrays with a known shape and dtype).
"""

import functools
import gzip
import json
import math
import numbers

FORMAT = "taskgraph-json/1"

__all__ = ["FORMAT", "to_taskgraph", "dump"]


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
    def __init__(self, keys):
        self.keys = keys

    def term(self, value):
        from dask import _task_spec as ts

        if isinstance(value, ts.TaskRef):
            return {"ref": _key(value.key)}
        if isinstance(value, ts.Alias):
            return {"ref": _key(value.target)}
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
    for name, layer in layers.items():
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
            if not any(isinstance(c, float) and math.isnan(c) for c in [cells]):
                sizes[key] = int(cells) * itemsize
    return sizes


def to_taskgraph(obj):
    """The ``taskgraph-json/1`` document of a dask collection or graph."""
    from dask._task_spec import convert_legacy_graph

    graph = _graph(obj)
    sizes = _sizes(graph)
    nodes = convert_legacy_graph(dict(graph))
    converter = _Converter(set(nodes))
    tasks = []
    for key, node in nodes.items():
        task = {"key": _key(key), "task": converter.term(node)}
        # References the term does not show (inside opaque objects) would be
        # lost: such a task is exported by its dependencies alone.
        shown = set()
        _refs(task["task"], shown)
        wanted = {json.dumps(_key(dep)) for dep in node.dependencies if dep in nodes}
        if not wanted <= shown:
            task = {"key": _key(key), "deps": [_key(dep) for dep in sorted(node.dependencies, key=str) if dep in nodes]}
        if key in sizes:
            task["size"] = sizes[key]
        tasks.append(task)
    return {"format": FORMAT, "producer": "taskgraph_dask", "tasks": tasks}


def _refs(term, found):
    if isinstance(term, dict):
        if "ref" in term:
            found.add(json.dumps(term["ref"]))
        for value in term.get("args", []) + term.get("list", []):
            _refs(value, found)


def dump(obj, path):
    """Writes the document of ``obj`` to ``path`` (gzip when it ends in .gz)."""
    doc = to_taskgraph(obj)
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        json.dump(doc, f)
    return len(doc["tasks"])
