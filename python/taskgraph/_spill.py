"""Where ``taskgraph.dask.get`` spills results under a memory limit."""

import contextlib
import os
import tempfile
import threading


class Spill:
    """Where a run's spilled results go: one file each in a private
    temporary directory (made on the first spill, mode 0700; files 0600),
    pickled with protocol 5 and their buffers written out of band, so that
    an array's memory goes to disk without a copy."""

    def __init__(self):
        self._dir = None
        self._warned = set()
        # The nodes with a file: a result read back keeps it (several tasks
        # may read it at once), so spilling it again writes nothing.
        self._written = set()
        self._lock = threading.Lock()
        self._closed = False

    def write(self, node, value, key):
        """Writes ``value``; False (it stays in memory) if it cannot be
        pickled, with one warning naming ``key``."""
        import pickle
        import struct

        if node in self._written:
            return True
        buffers = []

        def out_of_band(buffer):
            try:
                buffers.append(buffer.raw())
            except BufferError:  # not contiguous: in band
                return True
            return None

        try:
            data = pickle.dumps(value, protocol=5, buffer_callback=out_of_band)
        except Exception as err:  # noqa: BLE001 (any pickling failure keeps the value)
            kind = type(value).__name__
            if kind not in self._warned:
                self._warned.add(kind)
                import warnings

                warnings.warn(
                    f"taskgraph: the result of {key!r} ({kind}) cannot be pickled ({err}); "
                    "it stays in memory, over the memory limit if need be",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return False
        with self._lock:  # workers may spill their first results at once
            if self._closed:  # a worker finishing after the call ended
                return False
            if self._dir is None:
                self._dir = tempfile.mkdtemp(prefix="taskgraph-spill-")
        lengths = [len(data)] + [buffer.nbytes for buffer in buffers]
        fd = os.open(self._path(node), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "wb") as f:
            f.write(struct.pack(f"<Q{len(lengths)}Q", len(lengths), *lengths))
            f.write(data)
            for buffer in buffers:
                f.write(buffer)
        self._written.add(node)
        return True

    def read(self, node):
        """The value written for ``node`` (its file stays until
        :meth:`discard`)."""
        import pickle
        import struct

        path = self._path(node)
        with open(path, "rb") as f:
            (count,) = struct.unpack("<Q", f.read(8))
            lengths = struct.unpack(f"<{count}Q", f.read(8 * count))
            data = f.read(lengths[0])
            buffers = []
            for length in lengths[1:]:
                buffer = bytearray(length)
                if f.readinto(buffer) != length:
                    raise OSError(f"spill file {path} is truncated")
                buffers.append(buffer)
        return pickle.loads(data, buffers=buffers)

    def discard(self, node):
        """Removes ``node``'s file, if there is one."""
        if node in self._written:
            self._written.discard(node)
            with contextlib.suppress(FileNotFoundError):
                os.remove(self._path(node))

    def close(self):
        """Removes the directory and what is left in it; nothing is written
        after."""
        import shutil

        with self._lock:
            self._closed = True
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)

    def _path(self, node):
        return os.path.join(self._dir, str(node))
