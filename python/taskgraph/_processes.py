"""dask graphs on worker processes: :class:`Processes` and the runs of
``taskgraph.dask.get(..., processes=...)``.

The caller reads, orders and places the graph (in Rust), pickles it once
with cloudpickle and sends it to every worker process; the workers run it
among themselves on ``graph-distributed`` and only the requested results
come back. The caller takes no task: it hears which tasks have run (for
dask's callbacks), and after the loss of a worker it tells the survivors
how the run goes on."""

import os
import secrets
import subprocess
import sys
import threading
import time
import weakref

from taskgraph import _callbacks, _native, _wire

__all__ = ["Processes"]

# How often a call looks at workers that have gone quiet.
_TICK = 0.25


def _is_stopped(pid):
    """Whether process ``pid`` is stopped (SIGSTOP, or a debugger's);
    False where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] in ("T", "t")
    except (OSError, IndexError):
        return False


class _RemoteTraceback(Exception):
    """A worker process's traceback, as the cause of its task's exception."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text

    def __str__(self):
        return "\n\nTraceback in the worker process:\n" + self.text


class _Worker:
    """One worker process of a pool and the connection to it."""

    __slots__ = ("conn", "proc", "host", "address", "pid", "name")

    def __init__(self, conn, proc, host, address, pid, name):
        self.conn = conn
        # The process the pool started, or the hostfile line it listens at.
        self.proc = proc
        self.host = host
        # Where it listens for the other workers in the next run.
        self.address = address
        self.pid = pid
        self.name = name


class Processes:
    """A pool of worker processes for dask graphs, each a Python interpreter
    of its own, so that tasks holding the GIL run side by side.

    ``Processes(n)`` starts ``n`` local workers (default: the cores);
    ``Processes(hostfile=H)`` connects to workers already running on the
    hosts of a hostfile (``python -m taskgraph worker --hostfile H
    --process I`` on each, with the shared secret in ``$TASKGRAPH_SECRET``
    or ``secret_file``). Give the pool to ``taskgraph.dask.get(...,
    processes=pool)`` (or ``dask.compute(x, scheduler="taskgraph",
    processes=pool)``, or dask.config ``taskgraph.processes``): every call
    then runs on its workers. ``with Processes(2) as pool:`` closes it at
    the end of the block; a closed pool's local workers are gone, and so
    are they when the pool is dropped unclosed or the caller dies.

    ``last_run`` tells what the last call moved through the caller:
    ``bytes_sent`` (the graph, to every worker), ``bytes_received`` (the
    results and the progress reports), ``attempts`` and ``lost`` (the
    process ids of the workers lost), and what it ran: ``tasks_run``,
    ``values_sent`` (results sent from worker to worker), and over the
    workers the largest ``peak_held`` and ``peak_bytes`` and the sum of
    ``spilled_bytes``.

    >>> from operator import add
    >>> import taskgraph.dask
    >>> with taskgraph.dask.Processes(2) as pool:
    ...     taskgraph.dask.get({"x": 1, "y": (add, "x", 10)}, "y", processes=pool)
    11
    """

    def __init__(self, n=None, *, hostfile=None, secret=None, secret_file=None, heartbeat_timeout=5.0):
        if hostfile is not None and n is not None:
            raise ValueError("give the number of local workers or a hostfile, not both")
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
            raise ValueError(f"a pool needs at least one worker process, not {n!r}")
        self._hostfile = hostfile
        if hostfile is None:
            self._secret = (
                _wire.secret_from(secret=secret) if secret is not None else secrets.token_hex(32).encode()
            )
            self._size = n or os.cpu_count() or 1
        else:
            self._secret = _wire.secret_from(secret=secret, secret_file=secret_file)
            self._hosts = _wire.read_hostfile(hostfile)
            self._size = len(self._hosts)
        self._heartbeat_timeout = heartbeat_timeout
        # One list for the pool's life (changed in place), which the
        # finalizer below ends should the pool be dropped unclosed.
        self._workers = []
        self._finalizer = weakref.finalize(self, _end_all, self._workers)
        self._lock = threading.RLock()
        self._closed = False
        self.last_run = None
        self._start(self._size)

    def __len__(self):
        return self._size

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        where = f"hostfile={self._hostfile!r}" if self._hostfile else f"{self._size} local"
        return f"<taskgraph.dask.Processes {where}, {'closed' if self._closed else 'open'}>"

    @property
    def pids(self):
        """The process ids of the workers (for local workers, those the pool
        started)."""
        return [worker.pid for worker in self._workers]

    def close(self):
        """Stops the local workers and lets go of the hosts' workers."""
        with self._lock:
            self._closed = True
            self._finalizer()

    # --- workers -------------------------------------------------------

    def _start(self, count):
        """Starts (or connects to) ``count`` more workers."""
        if self._hostfile is not None:
            for host in self._hosts[len(self._workers) : len(self._workers) + count]:
                self._workers.append(self._connect(host, None))
            return
        env = dict(os.environ)
        env[_wire.SECRET_VARIABLE] = self._secret.decode()
        started = []
        try:
            for _ in range(count):
                proc = subprocess.Popen(
                    [sys.executable, "-m", "taskgraph", "worker", "--listen", "127.0.0.1:0"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    env=env,
                    start_new_session=True,
                )
                started.append(proc)
            for proc in started:
                line = proc.stdout.readline().decode(errors="replace")
                prefix = "taskgraph worker listening on "
                if not line.startswith(prefix):
                    proc.kill()
                    raise RuntimeError(
                        f"worker process {proc.pid} did not start (it exited with {proc.wait()}); "
                        "its standard error above says why"
                    )
                host, _, port = line[len(prefix) :].strip().rpartition(":")
                self._workers.append(self._connect((host, int(port)), proc))
        except BaseException:
            for proc in started:
                if proc.poll() is None:
                    proc.kill()
            raise

    def _connect(self, address, proc):
        """The worker listening at ``address``: the one the pool started
        (``proc``), or that of a hostfile line."""
        from multiprocessing.connection import Client

        name = f"worker process {proc.pid}" if proc is not None else f"the worker at {address[0]}:{address[1]}"
        try:
            conn = Client(address, authkey=self._secret)
            _wire.no_delay(conn)
            (kind, data_address, pid), _ = _wire.recv(conn)
        except Exception as err:
            raise RuntimeError(f"could not reach {name}: {err}") from err
        if kind != "ready":
            raise RuntimeError(f"{name} answered {kind!r}, not 'ready'")
        if proc is None:
            name = f"worker process {pid} at {address[0]}:{address[1]}"
        return _Worker(conn, proc, None if proc is not None else address, data_address, pid, name)

    def _alive(self):
        """The workers, the lost ones replaced (local workers started
        afresh, hosts' reconnected where they answer)."""
        if self._closed:
            raise RuntimeError("this taskgraph.dask.Processes pool is closed")
        alive = []
        for worker in self._workers:
            if worker.proc is not None and worker.proc.poll() is not None:
                _end(worker)
            elif worker.conn.closed:
                pass
            else:
                alive.append(worker)
        self._workers[:] = alive
        if self._hostfile is None:
            if len(alive) < self._size:
                self._start(self._size - len(alive))
        elif len(alive) < self._size:
            # The hosts whose worker went are tried again; a host worker
            # serves one caller at a time, so the others keep theirs.
            connected = {worker.host for worker in alive}
            for host in self._hosts:
                if host not in connected:
                    try:
                        self._workers.append(self._connect(host, None))
                    except RuntimeError:
                        continue
            if not self._workers:
                raise RuntimeError(f"no worker of {self._hostfile} answers")
        return list(self._workers)

    # --- a run ---------------------------------------------------------

    def run(
        self,
        dsk,
        keys,
        *,
        strategy="auto",
        sizes=None,
        layers=(),
        memory_limit=None,
        retries=2,
        initializer=None,
        measure=False,
        on_finished=None,
    ):
        """Runs the flat list ``keys`` of ``dsk`` on the workers and returns
        their results in order; ``on_finished(keys)`` hears the tasks as
        they finish, each after its dependencies; ``initializer()`` runs in
        every worker process before the tasks."""
        import cloudpickle

        with self._lock:
            self.last_run = None
            workers = self._alive()
            plan = _native.plan_processes(
                dsk, keys, processes=len(workers), strategy=strategy, sizes=sizes, layers=list(layers)
            )
            try:
                frame = _wire.Frame(plan, dumps=cloudpickle.dumps)
            except Exception as err:
                raise _unpicklable(plan, err) from err
            # The workers import what the tasks name from where the caller
            # does.
            options = {
                "memory_limit": memory_limit,
                "heartbeat_timeout": self._heartbeat_timeout,
                "path": list(sys.path),
                # Results measured with dask.sizeof (else by their pickles).
                "measure": measure or memory_limit is not None,
            }
            if initializer is not None:
                try:
                    options["initializer"] = cloudpickle.dumps(initializer)
                except Exception as err:
                    raise TypeError(f"the initializer cannot be pickled to go to the worker processes: {err}") from err
            call = _Call(self, workers, plan, frame, options, retries, on_finished)
            return call.run()


def _unpicklable(plan, err):
    """The error for a graph that cannot go to the workers, naming the
    first task that cannot be pickled."""
    import cloudpickle

    for key, task in zip(plan["keys"], plan["tasks"]):
        try:
            cloudpickle.dumps(task, protocol=5)
        except Exception as task_err:
            return TypeError(f"task {key!r} cannot be pickled to go to a worker process: {task_err}")
    return TypeError(f"the graph cannot be pickled to go to the worker processes: {err}")


def _end_all(workers):
    """Ends the workers of a pool dropped without being closed."""
    for worker in list(workers):
        _end(worker)
    workers.clear()


def _end(worker):
    """Lets go of ``worker``, stopping it if the pool started it."""
    try:
        _wire.send(worker.conn, ("close",))
    except (OSError, ValueError):
        pass
    try:
        worker.conn.close()
    except OSError:
        pass
    proc = worker.proc
    if proc is None:
        return
    try:
        proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.stdout.close()


def _ready(workers, timeout):
    """The messages of those of ``workers`` that have one within
    ``timeout`` seconds: ``(worker, message, bytes)``, the message None for
    a worker whose connection ended."""
    from multiprocessing.connection import wait

    out = []
    for conn in wait([w.conn for w in workers], timeout=timeout):
        worker = next(w for w in workers if w.conn is conn)
        try:
            message, nbytes = _wire.recv(conn)
        except (EOFError, OSError):
            message, nbytes = None, 0
        out.append((worker, message, nbytes))
    return out


class _InOrder:
    """The tasks heard to have run, each given out only after its
    dependencies: workers report on their own, so a task may be heard of
    before an input that another worker made."""

    def __init__(self, plan):
        from array import array

        offsets, targets = array("I"), array("I")
        offsets.frombytes(plan["offsets"])
        targets.frombytes(plan["targets"])
        self.offsets, self.targets = offsets, targets
        self.done = bytearray(len(offsets) - 1)
        self.heard = bytearray(len(offsets) - 1)
        self.waiting = {}

    def add(self, nodes):
        out = []
        for node in nodes:
            self.heard[node] = 1
            self._release(node, out)
        return out

    def _release(self, node, out):
        stack = [node]
        while stack:
            node = stack.pop()
            if self.done[node] or not self.heard[node]:
                continue
            missing = next(
                (d for d in self.targets[self.offsets[node] : self.offsets[node + 1]] if not self.done[d]), None
            )
            if missing is not None:
                self.waiting.setdefault(missing, []).append(node)
                continue
            self.done[node] = 1
            out.append(node)
            stack.extend(self.waiting.pop(node, ()))


class _Call:
    """One call's run on a pool's workers, attempt after attempt."""

    def __init__(self, pool, workers, plan, frame, options, retries, on_finished):
        self.pool = pool
        self.plan = plan
        self.frame = frame
        self.options = options
        self.retries = retries
        self.on_finished = on_finished
        # The workers of the current attempt, by their number in it.
        self.current = list(workers)
        self.state = {}
        # Per worker, the tasks it was heard to have run.
        self.ran = {id(w): [] for w in workers}
        self.bytes_sent = 0
        self.bytes_received = 0
        self.attempts = 1
        self.lost = []
        self.outputs = None
        self.failure = None
        self.interrupted = False
        self.in_order = None
        self.stats = {}
        # When the workers still running are taken for lost, once another
        # has ended its attempt; and since when each local worker has been
        # seen stopped.
        self.silent_after = None
        self.stopped_since = {}

    def run(self):
        start = time.perf_counter()
        addresses = [w.address for w in self.current]
        for process, worker in enumerate(self.current):
            self.state[id(worker)] = "running"
            try:
                self.bytes_sent += _wire.send(worker.conn, ("run", process, addresses, self.options))
                self.bytes_sent += self.frame.send(worker.conn)
            except OSError:
                self.state[id(worker)] = "lost"
        try:
            self._listen()
        except KeyboardInterrupt:
            self._interrupt()
            raise
        finally:
            self.pool.last_run = {
                "bytes_sent": self.bytes_sent,
                "bytes_received": self.bytes_received,
                "attempts": self.attempts,
                "lost": list(self.lost),
                "seconds": time.perf_counter() - start,
                **(self.stats or {}),
            }
        if self.failure is not None:
            raise self.failure
        values = dict(self.outputs)
        return [values[node] for node in self.plan["outputs"]]

    def _listen(self):
        while True:
            running = [w for w in self.current if self.state[id(w)] == "running"]
            if not running:
                if self._ended():
                    return
                continue
            silent = self._silent(running)
            if silent:
                # Taken for lost: paused (SIGSTOP) past the heartbeat
                # timeout, or still running long after the others ended
                # their attempt. A local one is killed, so that it cannot
                # come back into the run.
                for worker in silent:
                    if worker.proc is not None:
                        worker.proc.kill()
                    worker.conn.close()
                    self._lose(worker)
                continue
            for worker, message, nbytes in _ready(running, _TICK):
                self.bytes_received += nbytes
                if message is None:
                    self._lose(worker)
                else:
                    self._hear(worker, message)

    def _silent(self, running):
        """The running workers to take for lost now."""
        now = time.monotonic()
        grace = self.pool._heartbeat_timeout + 2.0
        # After a loss or a failure the others end their attempt too, within
        # the heartbeat timeout; a worker that ended well says nothing of
        # the others (process 0 may take long to send large results).
        if self.silent_after is None and any(
            self.state[id(w)] not in ("running", "done") for w in self.current
        ):
            self.silent_after = now + grace
        if self.silent_after is not None and now >= self.silent_after:
            return list(running)
        silent = []
        for worker in running:
            if worker.proc is None or not _is_stopped(worker.pid):
                self.stopped_since.pop(id(worker), None)
            elif now - self.stopped_since.setdefault(id(worker), now) > self.pool._heartbeat_timeout:
                silent.append(worker)
        return silent

    def _hear(self, worker, message):
        kind = message[0]
        if kind == "progress":
            self.ran[id(worker)].extend(message[1])
            if self.on_finished is not None:
                if self.in_order is None:
                    self.in_order = _InOrder(self.plan)
                keys = self.plan["keys"]
                self.on_finished([keys[node] for node in self.in_order.add(message[1])])
        elif kind == "done":
            if message[1] is not None:
                self.outputs = message[1]
                self.stats = message[3]
            worker.address = message[2]
            self.state[id(worker)] = "done"
        elif kind == "lost":
            _, finished, held, _why, address = message
            worker.address = address
            self.state[id(worker)] = ("reported", finished, held)
        elif kind == "failed":
            _, node, pickled, text, elsewhere = message
            if self.failure is None or (getattr(self.failure, "_taskgraph_elsewhere", False) and not elsewhere):
                self.failure = self._exception(node, pickled, text, elsewhere)
            self.state[id(worker)] = "done"
        elif kind == "error":
            if self.failure is None:
                self.failure = RuntimeError(message[1])
            self.state[id(worker)] = "done"
        elif kind == "interrupted":
            self.state[id(worker)] = "done"
            if self.failure is None and not self.interrupted:
                self.failure = RuntimeError(f"{worker.name} stopped its run")
        else:
            self.state[id(worker)] = "done"
            self.failure = self.failure or RuntimeError(f"{worker.name} said {kind!r}")

    def _exception(self, node, pickled, text, elsewhere):
        import pickle

        try:
            exc = pickle.loads(pickled)
        except Exception as err:
            exc = RuntimeError(f"a task failed in a worker process, and its exception cannot be read back: {err}")
        if not isinstance(exc, BaseException):
            exc = RuntimeError(repr(exc))
        if not elsewhere:
            exc.__cause__ = _RemoteTraceback(text)
        if node is not None and not elsewhere and hasattr(exc, "add_note"):
            exc.add_note(f"(task {self.plan['keys'][node]!r}, run in a taskgraph worker process)")
        if elsewhere:
            exc._taskgraph_elsewhere = True
        return exc

    def _lose(self, worker):
        """``worker``'s process went away: the others hear of it, so that
        one still connecting stops waiting for it."""
        self.state[id(worker)] = "lost"
        for other in self.current:
            if self.state[id(other)] == "running":
                try:
                    _wire.send(other.conn, ("lost",))
                except OSError:
                    pass

    def _ended(self):
        """Whether the run is over, once no worker of the attempt runs;
        after a loss, starts the next attempt (and returns False)."""
        states = [self.state[id(w)] for w in self.current]
        lost = [i for i, state in enumerate(states) if state == "lost"]
        if not lost or self.failure is not None or self.interrupted:
            if self.outputs is None and self.failure is None:
                names = ", ".join(self.current[i].name for i in lost)
                self.failure = RuntimeError(f"the run ended without its results: {names} went away")
            return True
        if self.outputs is not None and all(s == "done" or s == "lost" for s in states):
            return True
        names = ", ".join(self.current[i].name for i in lost)
        self.lost.extend(self.current[i].pid for i in lost)
        if self.attempts > self.retries:
            self.failure = RuntimeError(
                f"{names} went away: more losses than retries={self.retries} allows; the run was abandoned"
            )
            self._release(states)
            return not any(self.state[id(w)] == "running" for w in self.current)
        survivors = [(i, w) for i, w in enumerate(self.current) if isinstance(states[i], tuple)]
        if not survivors:
            self.failure = RuntimeError(f"the run lost every worker process ({names})")
            return True
        reports = [(i, list(states[i][1]), list(states[i][2])) for i, _ in survivors]
        reports += [(i, list(self.ran[id(self.current[i])]), []) for i in lost]
        addresses = [w.address for _, w in survivors]
        self.attempts += 1
        self.silent_after = None
        self.stopped_since = {}
        self.current = [w for _, w in survivors]
        for process, (_, worker) in enumerate(survivors):
            self.state[id(worker)] = "running"
            try:
                self.bytes_sent += _wire.send(worker.conn, ("go", process, addresses, lost, reports))
            except OSError:
                self.state[id(worker)] = "lost"
        return False

    def _release(self, states):
        """Tells survivors waiting for the next attempt that there is none;
        the call hears them stop."""
        for worker, state in zip(self.current, states):
            if isinstance(state, tuple):
                try:
                    _wire.send(worker.conn, ("cancel",))
                    self.state[id(worker)] = "running"
                except OSError:
                    self.state[id(worker)] = "lost"

    def _interrupt(self):
        """Ctrl-C: every worker stops its run; the call waits a moment for
        them, then lets them be."""
        self.interrupted = True
        for worker in self.current:
            try:
                _wire.send(worker.conn, ("cancel",))
            except OSError:
                pass
        deadline = time.monotonic() + 5.0
        pending = [w for w in self.current if self.state.get(id(w)) == "running"]
        while pending and time.monotonic() < deadline:
            for worker, message, _ in _ready(pending, max(0.0, deadline - time.monotonic())):
                if message is None or message[0] in ("done", "failed", "error", "interrupted"):
                    pending.remove(worker)
        for worker in pending:
            # Still running a task: let it go; the pool replaces it.
            try:
                worker.conn.close()
            except OSError:
                pass


def on_processes(dsk, flat, processes, hosts, strategy, sizes, layers, memory_limit, retries, callbacks, initializer):
    """``taskgraph.dask.get`` on worker processes: ``processes`` an int (a
    pool for the call) or a pool, ``hosts`` a hostfile (a pool of its
    workers for the call)."""
    from dask.callbacks import local_callbacks

    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries must be a number of losses, 0 or more, not {retries!r}")
    if hosts is not None and processes is not None:
        raise ValueError("give processes= or hosts=, not both")
    own = None
    if isinstance(processes, Processes):
        pool = processes
    elif hosts is not None:
        pool = own = Processes(hostfile=hosts)
    elif isinstance(processes, int) and not isinstance(processes, bool) and processes >= 1:
        pool = own = Processes(processes)
    else:
        raise TypeError(f"processes must be a number of worker processes or a taskgraph.dask.Processes, not {processes!r}")
    recorders = _callbacks.recorders.get()
    try:
        options = {
            "strategy": strategy,
            "sizes": sizes,
            "layers": layers,
            "initializer": initializer,
            "measure": bool(recorders),
        }
        with local_callbacks(callbacks) as callbacks:
            if not callbacks:
                try:
                    return pool.run(dsk, flat, memory_limit=memory_limit, retries=retries, **options)
                finally:
                    _record(recorders, pool.last_run)

            def execute(pretask, posttask):
                def on_finished(keys):
                    for key in keys:
                        pretask(key)
                        posttask(key, None, "taskgraph-worker")

                return pool.run(
                    dsk, flat, memory_limit=memory_limit, retries=retries, on_finished=on_finished, **options
                )

            try:
                return _callbacks.run_with_callbacks(dsk, flat, options, callbacks, None, execute)
            finally:
                _record(recorders, pool.last_run)
    finally:
        if own is not None:
            own.close()


class _Figures:
    """A run's figures as RunStats reads them."""

    def __init__(self, last_run):
        self.peak_bytes = last_run.get("peak_bytes") or 0
        self.spilled_bytes = last_run.get("spilled_bytes") or 0
        self.peak_held = last_run.get("peak_held") or 0
        self.tasks_run = last_run.get("tasks_run") or 0


def _record(recorders, last_run):
    """Tells each RunStats block what the run held and ran."""
    if last_run is None:
        return
    for recorder in recorders:
        recorder._record(_Figures(last_run))
