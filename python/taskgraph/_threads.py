"""dask graphs on threads: the runs of ``taskgraph.dask.get`` without
``processes``, on threads the run starts for itself or on a pool's.

Rust schedules the run; its threads enter Python to run tasks. Every thread
of the run has left it, or is waited for by the interpreter at exit, before
the call returns, however it ends: a thread still in Rust frames when the
interpreter finalizes aborts the process."""

import contextvars
import threading

from taskgraph import _callbacks, _native

__all__ = ["on_threads"]


def on_threads(dsk, flat, cache, pool, num_workers, strategy, sizes, layers, memory_limit, rerun, callbacks):
    """``taskgraph.dask.get`` on threads: its own, or ``pool``'s
    (``cache`` is for the callbacks' state)."""
    from dask.callbacks import local_callbacks

    submit, workers = _pool_submit(pool, num_workers)

    options = {"workers": workers, "strategy": strategy, "sizes": sizes, "layers": layers}
    recorders = _callbacks.recorders.get()
    spiller = None
    # Results are measured under a memory limit, for RunStats, and where
    # sizes are given or found: the run then holds what the order holds in
    # bytes, counting each result by its measured size.
    sized = bool(layers) or (sizes is not None and sizes is not False)
    from taskgraph._sizes import SafeSizeof

    if memory_limit is not None or recorders or (sized and workers > 1):
        options["sizeof"] = SafeSizeof()
    if sizes is None and not layers and strategy == "auto":
        # Nothing tells the sizes, and sizes=False does not ask to count
        # throughout: the run measures its first results, and orders again
        # by their bytes where they differ by far.
        options["learn_sizeof"] = options.get("sizeof") or SafeSizeof()
    if memory_limit is not None:
        from taskgraph._spill import Spill

        spiller = Spill()
        options.update(memory_limit=memory_limit, spiller=spiller)
    try:
        with local_callbacks(callbacks) as callbacks:
            if not callbacks:
                run = _native.Execution(dsk, flat, **options)
                values = _run(run, submit, rerun, recorders)
            else:

                def execute(pretask, posttask):
                    run = _native.Execution(dsk, flat, pretask=pretask, posttask=posttask, **options)
                    return _run(run, submit, rerun, recorders)

                values = _callbacks.run_with_callbacks(dsk, flat, options, callbacks, cache, execute)
    finally:
        if spiller is not None:
            spiller.close()
    return values


def _pool_submit(pool, num_workers):
    """How tasks go to ``pool`` (None: to threads of the run's own) and how
    many run at once: ``submit(run)`` gives the function that hands a job
    to the pool, and one that says whether the pool has dropped its jobs
    (None where each job's future says so itself)."""
    import concurrent.futures
    import multiprocessing.pool

    if pool is None:
        if num_workers is None:
            from dask.system import CPU_COUNT

            num_workers = CPU_COUNT
        return None, num_workers
    if isinstance(pool, multiprocessing.pool.ThreadPool):
        size = pool._processes

        def submit(run):
            def submit_job(job):
                try:
                    pool.apply_async(contextvars.copy_context().run, (job,))
                except ValueError:
                    # "Pool not running": terminated (or closed) before the
                    # watch below saw it.
                    if pool._state == multiprocessing.pool.RUN:
                        raise
                    run.abandon(_DROPPED)

            # A terminated pool drops the jobs it holds without a word.
            return submit_job, lambda: pool._state == multiprocessing.pool.TERMINATE

    elif isinstance(pool, concurrent.futures.ThreadPoolExecutor) or (
        isinstance(pool, concurrent.futures.Executor)
        and not isinstance(pool, concurrent.futures.ProcessPoolExecutor)
    ):
        size = getattr(pool, "_max_workers", None) or num_workers or 1

        def submit(run):
            def cancelled(future):
                if future.cancelled():
                    run.abandon(_DROPPED)

            def submit_job(job):
                try:
                    future = pool.submit(contextvars.copy_context().run, job)
                except RuntimeError:
                    # "cannot schedule new futures after shutdown": shut down
                    # while the run went on.
                    if not getattr(pool, "_shutdown", False):
                        raise
                    run.abandon(_DROPPED)
                    return
                future.add_done_callback(cancelled)

            return submit_job, None

    else:
        raise TypeError(
            f"pool must be a multiprocessing.pool.ThreadPool or a concurrent.futures.Executor "
            f"of threads, not {type(pool).__name__}: taskgraph runs tasks in this process"
        )
    return submit, num_workers or size


def _run(run, submit, rerun, recorders):
    """Runs ``run`` to its end and returns its results, raising its first
    error; each of ``recorders`` (``RunStats``) records it."""
    try:
        return _run_to_end(run, submit, rerun)
    finally:
        for recorder in recorders:
            recorder._record(run)


_DROPPED = (
    "the pool given to taskgraph.dask.get dropped tasks of the run without running them, "
    "or would take no more (shut down, or terminated)"
)


def _run_to_end(run, submit, rerun):
    main = threading.current_thread() is threading.main_thread()
    if submit is not None:
        submit_job, dead = submit(run)
        done = threading.Event()
        watcher = None
        if dead is not None:

            def watch():
                while not done.wait(0.05):
                    if dead():
                        run.abandon(_DROPPED)
                        return

            watcher = threading.Thread(target=watch, name="taskgraph-pool-watch", daemon=True)
            watcher.start()
        try:
            run.submit_to(submit_job, main=main)
            _settle(run, main)
        finally:
            done.set()
            if watcher is not None:
                watcher.join()
    else:
        # Not daemons: when the call does not wait for them (Ctrl-C), the
        # interpreter still does before it finalizes.
        helpers = [
            threading.Thread(
                target=contextvars.copy_context().run,
                args=(run.work,),
                name=f"taskgraph-worker-{i}",
            )
            for i in range(1, run.workers)
        ]
        started = []
        try:
            for helper in helpers:
                helper.start()
                started.append(helper)
            contextvars.copy_context().run(run.work, main=main)
        except BaseException as err:
            run.cancel()
            if not isinstance(err, KeyboardInterrupt):
                _join(run, started)
            raise
        _join(run, started)
    if rerun and run.failed_key() is not None:
        run.rerun_failed()
    return run.results()


def _settle(run, main):
    """Waits until no job of ``run`` is running on its pool: a job's thread
    still in Rust frames when the interpreter finalizes aborts the process,
    and a pool's threads are daemons. After Ctrl-C (or a Ctrl-C during the
    wait) the call goes on at once, as dask's does: a task may be waiting
    for it to end. A thread that is not a daemon waits instead, which the
    interpreter waits for at exit."""

    def in_the_background():
        threading.Thread(target=run.settle, name="taskgraph-settle").start()

    if run.interrupted:
        in_the_background()
        return
    try:
        run.settle(main=main)
    except BaseException:
        in_the_background()
        raise


def _join(run, helpers):
    """Waits for ``helpers`` to leave the run: after an error each finishes
    the task it runs first. A thread still in a task when the interpreter
    finalizes would be ended inside Rust frames, which aborts the process.
    After Ctrl-C (or a Ctrl-C during the wait) the call goes on at once, as
    dask's does: a task may be waiting for it to end, and the helpers, not
    daemons, are waited for by the interpreter at exit."""
    if run.interrupted:
        return
    for helper in helpers:
        try:
            helper.join()
        except BaseException:
            run.cancel()
            raise
