"""What the run of ``taskgraph.dask.get`` shares between threads and worker
processes: the ``RunStats`` blocks the calling code is in, and dask's
callbacks called as ``dask.local.get_async`` calls them."""

import contextvars
import threading

from taskgraph import _native

# The RunStats blocks the calling code is in.
recorders = contextvars.ContextVar("taskgraph_run_stats", default=())


def run_with_callbacks(dsk, flat, options, callbacks, cache, execute):
    """``execute(pretask, posttask)`` with dask's callbacks, called as
    ``dask.local.get_async`` calls them, with the graph and the state dask
    gives them."""
    from dask._task_spec import DataNode, convert_legacy_graph
    from dask.callbacks import unpack_callbacks
    from dask.local import finish_task, start_state_from_dask

    _, _, pretask_cbs, posttask_cbs, _ = unpack_callbacks(callbacks)
    converted = convert_legacy_graph(dsk)
    results = set(flat)
    started = []
    succeeded = False
    state = {}
    try:
        for callback in callbacks:
            if callback[0]:
                callback[0](converted)
            started.append(callback)
        priorities = _native.order(
            converted, strategy=options["strategy"], sizes=options["sizes"], layers=options["layers"]
        )
        state = start_state_from_dask(converted, keys=results, cache=cache, sortkey=priorities.get)
        for _, start_state, _, _, _ in callbacks:
            if start_state:
                start_state(converted, state)
        lock = threading.Lock()

        def pretask(key):
            if isinstance(converted[key], DataNode):
                return
            with lock:
                ready = state["ready"]
                if ready and ready[-1] == key:
                    ready.pop()
                else:
                    try:
                        ready.remove(key)
                    except ValueError:
                        state["waiting"].pop(key, None)
                state["running"].add(key)
                for f in pretask_cbs:
                    f(key, converted, state)

        def posttask(key, value, worker_id):
            if isinstance(converted[key], DataNode):
                return
            with lock:
                state["cache"][key] = value
                finish_task(converted, key, state, results, priorities.get)
                for f in posttask_cbs:
                    f(key, value, converted, state, worker_id)

        values = execute(pretask, posttask)
        succeeded = True
        return values
    finally:
        for _, _, _, _, finish in started:
            if finish:
                finish(converted, state, not succeeded)
