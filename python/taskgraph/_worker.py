"""``python -m taskgraph worker``: a worker process for dask graphs.

A worker listens for its caller (a :class:`taskgraph.dask.Processes`
pool) on an authenticated connection, and runs the share of each graph the
caller sends it on ``graph-distributed``, exchanging results with the other
workers directly. The caller's messages are read on a thread of their own,
so that a cancel or news of a lost process reaches a run at once.

- ``--listen HOST:PORT`` (the pool's own workers, port 0 for any): prints
  ``taskgraph worker listening on HOST:PORT`` and serves one caller; it
  exits when that caller goes, or when its standard input (a pipe the pool
  holds) closes, so that it never outlives its pool or its caller.
- ``--hostfile H --process I``: listens at line I of the hostfile and
  serves one caller after another, until killed.

The secret is ``$TASKGRAPH_SECRET`` or ``--secret-file``, as for
``taskgraph run --hostfile``.
"""

import argparse
import os
import pickle
import queue
import sys
import threading
import traceback

from taskgraph import _wire

# How often a run tells its caller which tasks it has run.
PROGRESS_EVERY = 0.02


def main(argv):
    parser = argparse.ArgumentParser(prog="python -m taskgraph worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", metavar="HOST:PORT", help="listen here and serve one caller")
    parser.add_argument("--hostfile", help="listen at line --process of this hostfile, serving caller after caller")
    parser.add_argument("--process", type=int, help="this worker's line of the hostfile, from 0")
    parser.add_argument("--secret-file", help="the shared secret (else $TASKGRAPH_SECRET)")
    args = parser.parse_args(argv)
    if (args.listen is None) == (args.hostfile is None):
        parser.error("give --listen HOST:PORT or --hostfile FILE --process I")
    try:
        secret = _wire.secret_from(secret_file=args.secret_file)
        if args.listen is not None:
            host, _, port = args.listen.rpartition(":")
            address, once = (host.strip("[]") or "127.0.0.1", int(port)), True
        else:
            if args.process is None:
                parser.error("--hostfile needs --process I")
            hosts = _wire.read_hostfile(args.hostfile)
            if not 0 <= args.process < len(hosts):
                parser.error(f"--process {args.process}: {args.hostfile} lists {len(hosts)} processes")
            address, once = hosts[args.process], False
    except (OSError, ValueError) as err:
        sys.exit(f"taskgraph worker: {err}")
    try:
        serve(address, secret, once)
    finally:
        # Not through the interpreter's shutdown, which its daemon threads
        # (reading the pipe and the caller) would trip.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


# How long a connection has to prove it knows the secret.
AUTH_TIMEOUT = 10.0


def serve(address, secret, once):
    from multiprocessing.connection import Listener

    listener = Listener(address)
    host, port = listener.address[:2]
    print(f"taskgraph worker listening on {host}:{port}", flush=True)
    if once:
        # The pool holds the other end of standard input: its end is the
        # pool's (or the caller's) end.
        threading.Thread(target=_exit_at_end_of_stdin, daemon=True).start()
    callers = queue.Queue()

    def accept():
        while True:
            try:
                conn = listener.accept()
            except OSError:
                continue
            threading.Thread(target=_authenticate, args=(conn, secret, callers), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    while True:
        Caller(callers.get(), secret, host, once).serve()
        if once:
            os._exit(0)


def _authenticate(conn, secret, callers):
    """Hands ``conn`` to ``callers`` once it has proved it knows the secret;
    a stranger (a wrong secret, or silence past the timeout) is dropped."""
    from multiprocessing.connection import answer_challenge, deliver_challenge

    timer = threading.Timer(AUTH_TIMEOUT, _hang_up, (conn,))
    timer.start()
    try:
        deliver_challenge(conn, secret)
        answer_challenge(conn, secret)
    except Exception:
        conn.close()
        return
    finally:
        timer.cancel()
    _wire.no_delay(conn)
    callers.put(conn)


def _hang_up(conn):
    """Ends ``conn`` under a thread blocked reading it."""
    import socket

    try:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _exit_at_end_of_stdin():
    try:
        while sys.stdin.buffer.read(65536):
            pass
    finally:
        os._exit(0)


class Caller:
    """One caller's connection: its runs, one after another."""

    def __init__(self, conn, secret, host, once):
        self.conn = conn
        self.secret = secret
        self.host = host
        self.once = once
        self.send_lock = threading.Lock()
        self.inbox = queue.Queue()
        self.run = None
        # Whether a run waits to hear how it goes on after a loss.
        self.waiting = False
        # A loss heard before the run was made, and the lock it shares
        # with self.run.
        self.lost_early = False
        self.run_lock = threading.Lock()

    def send(self, message):
        with self.send_lock:
            _wire.send(self.conn, message)

    def serve(self):
        self.send(("ready", _wire.free_address(self.host), os.getpid()))
        threading.Thread(target=self._read, daemon=True).start()
        while True:
            message = self.inbox.get()
            if message is None:
                return
            if message[0] == "run":
                self._run(*message[1:])

    def _read(self):
        """Reads the caller's messages: a cancel or a loss goes to the run
        at once, the rest to the inbox."""
        try:
            while True:
                message, _ = _wire.recv(self.conn)
                kind = message[0]
                if kind == "cancel":
                    if self.run is not None:
                        self.run.cancel()
                    if self.waiting:
                        self.inbox.put(("end",))
                elif kind == "lost":
                    with self.run_lock:
                        if self.run is not None:
                            self.run.lost()
                        else:
                            self.lost_early = True
                elif kind == "run":
                    with self.run_lock:
                        self.lost_early = False
                    _follow_path(message[3].get("path", ()))
                    try:
                        plan, _ = _wire.recv(self.conn)
                    except Exception as err:
                        self.inbox.put(("run", message[1], message[2], message[3], err))
                        continue
                    self.inbox.put(("run", message[1], message[2], message[3], plan))
                elif kind == "close":
                    break
                else:
                    self.inbox.put(message)
        except (EOFError, OSError):
            pass
        if self.once:
            os._exit(0)
        if self.run is not None:
            self.run.cancel()
        self.inbox.put(None)

    def _run(self, process, addresses, options, plan):
        from taskgraph import _native

        if isinstance(plan, BaseException):
            # The graph does not unpickle here (a task's argument raises in
            # __setstate__, a module the caller has and this process lacks):
            # the caller raises that error itself.
            self.send(_failure(plan))
            return
        initializer = options.get("initializer")
        if initializer is not None:
            try:
                pickle.loads(initializer)()
            except BaseException as exc:
                self.send(_failure(exc))
                return
        sizeof = None
        if options.get("measure"):
            from taskgraph._sizes import SafeSizeof

            sizeof = SafeSizeof()
        try:
            run = _native.WorkerRun(
                plan,
                secret=self.secret,
                memory_limit=options.get("memory_limit"),
                sizeof=sizeof,
                heartbeat_timeout=options.get("heartbeat_timeout", 5.0),
            )
        except Exception as err:
            self.send(("error", f"worker process {os.getpid()}: {err!r}"))
            return
        del plan
        with self.run_lock:
            self.run = run
            if self.lost_early:
                run.lost()
        done = threading.Event()
        reporter = threading.Thread(target=self._report_progress, args=(run, done), daemon=True)
        reporter.start()
        try:
            while True:
                try:
                    result = run.run(addresses, process)
                except KeyboardInterrupt:
                    self._flush(run, done, reporter)
                    self.send(("interrupted",))
                    return
                except BaseException as exc:
                    self._flush(run, done, reporter)
                    self.send(_failure(exc))
                    return
                if result[0] == "done":
                    self._flush(run, done, reporter)
                    try:
                        self.send(("done", result[1], _wire.free_address(self.host), result[2]))
                    except OSError:
                        raise
                    except Exception as exc:
                        problem = TypeError(f"a requested result cannot be pickled to go back to the caller: {exc}")
                        self.send(_failure(problem))
                    return
                _, finished, held, why = result
                self.waiting = True
                self.send(("lost", finished, held, why, _wire.free_address(self.host)))
                message = self.inbox.get()
                self.waiting = False
                if message is None or message[0] != "go":
                    self._flush(run, done, reporter)
                    self.send(("interrupted",))
                    return
                _, process, addresses, lost, reports = message
                try:
                    run.recover(lost, reports)
                except Exception as err:
                    self._flush(run, done, reporter)
                    self.send(("error", f"worker process {os.getpid()} could not plan the next attempt: {err}"))
                    return
        finally:
            self.run = None

    def _report_progress(self, run, done):
        while not done.wait(PROGRESS_EVERY):
            nodes = run.progress()
            if nodes:
                try:
                    self.send(("progress", nodes))
                except OSError:
                    return

    def _flush(self, run, done, reporter):
        """Stops the progress reports, sending the last."""
        done.set()
        reporter.join()
        nodes = run.progress()
        if nodes:
            self.send(("progress", nodes))


def _follow_path(path):
    """Adds the caller's import path to this process's, after its own."""
    for entry in path:
        if entry not in sys.path:
            sys.path.append(entry)


def _failure(exc):
    """The message for a run that raised ``exc``: the task's own exception
    (pickled, or a stand-in where it cannot be) and its traceback as text."""
    node = getattr(exc, "taskgraph_node", None)
    elsewhere = getattr(exc, "taskgraph_elsewhere", False)
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    import cloudpickle

    try:
        # By value where its class is the caller's own (defined in its
        # __main__): cloudpickle gives the caller back that very class.
        pickled = cloudpickle.dumps(exc)
        pickle.loads(pickled)
    except Exception:
        pickled = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
    return ("failed", node, pickled, text, elsewhere)
