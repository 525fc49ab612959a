"""Where ``taskgraph.dask.get`` spills results under a memory limit."""

import contextlib
import hmac
import os
import stat
import struct
import tempfile
import threading

__all__ = ["Spill", "SpillError"]


class SpillError(OSError):
    """A result spilled under a memory limit that could not be written (a
    full disk: ``errno`` is the ``OSError``'s, which is its ``__cause__``)
    or read back as it was written (a file changed or gone, a value that
    does not unpickle). The message names the task's key and the file or
    directory."""


# The keyed checksum of each file, by the key a Spill holds in memory.
_DIGEST = "sha256"
# No file is followed through a symbolic link, and none blocks (a FIFO put
# in a file's place).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class Spill:
    """Where a run's spilled results go: one file each in a private
    temporary directory (made on the first spill, mode 0700; files 0600),
    pickled with protocol 5 and their buffers written out of band, so that
    an array's memory goes to disk without a copy.

    A file lives while its result is on disk alone: it goes once the result
    is read back (the run reads it once, however many tasks need it), and a
    result spilled again is written again. Each file is checked when read
    against an HMAC-SHA256 of its node, header and bytes, by a random key
    that never leaves memory, kept here with the file's length; a file
    changed since it was written is refused before anything is unpickled."""

    def __init__(self):
        self._dir = None
        self._warned = set()
        self._key = os.urandom(32)
        # The nodes whose results are on disk: each file's length and keyed
        # checksum.
        self._files = {}
        self._lock = threading.Lock()
        self._closed = False

    def write(self, node, value, key):
        """Writes ``value``; False (it stays in memory) if it cannot be
        pickled, with one warning naming ``key``. Raises ``SpillError``
        naming ``key`` and the directory if it cannot be written."""
        import pickle

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
                try:
                    self._dir = tempfile.mkdtemp(prefix="taskgraph-spill-")
                except OSError as err:
                    raise _os_error(
                        f"taskgraph: cannot spill the result of {key!r}: cannot make a directory "
                        f"in {tempfile.gettempdir()}: {_reason(err)}",
                        err,
                    ) from err
        lengths = [len(data)] + [buffer.nbytes for buffer in buffers]
        header = struct.pack(f"<Q{len(lengths)}Q", len(lengths), *lengths)
        mac = self._mac(node)
        path = self._path(node)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o600)
            with open(fd, "wb") as f:
                for part in (header, data, *buffers):
                    f.write(part)
                    mac.update(part)
        except OSError as err:
            with contextlib.suppress(OSError):
                os.remove(path)
            raise _os_error(f"taskgraph: cannot spill the result of {key!r} to {self._dir}: {_reason(err)}", err) from err
        self._files[node] = (len(header) + sum(lengths), mac.digest())
        return True

    def read(self, node, key):
        """The value written for ``node`` (the result of ``key``); its file
        goes. Raises ``SpillError`` naming ``key`` and the file if the file
        is gone, cannot be read, was changed since it was written, or does
        not unpickle."""
        import pickle

        path = self._path(node)
        size, tag = self._files.get(node, (None, None))
        if size is None:
            raise SpillError(f"taskgraph: the result of {key!r} has no spill file (looked for {path})")
        mac = self._mac(node)
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK)
            with open(fd, "rb") as f:
                found = os.fstat(f.fileno())
                if not stat.S_ISREG(found.st_mode) or found.st_size != size:
                    raise _changed(key, path, f"{found.st_size} bytes where {size} were written")
                # The lengths are read before they are checked, but they
                # must add up to the length written before any is used.
                head = f.read(8)
                (count,) = struct.unpack("<Q", head) if len(head) == 8 else (0,)
                if not 1 <= count <= (size - 8) // 8:
                    raise _changed(key, path, "its header is not the one written")
                head += f.read(8 * count)
                lengths = struct.unpack(f"<{count}Q", head[8:])
                if len(head) + sum(lengths) != size:
                    raise _changed(key, path, "its header is not the one written")
                mac.update(head)
                parts = []
                for length in lengths:
                    part = bytearray(length)
                    if f.readinto(part) != length:
                        raise _changed(key, path, "it is shorter than written")
                    mac.update(part)
                    parts.append(part)
        except SpillError:
            raise
        except OSError as err:
            raise _os_error(f"taskgraph: cannot read the spilled result of {key!r} back from {path}: {_reason(err)}", err) from err
        if not hmac.compare_digest(mac.digest(), tag):
            raise _changed(key, path, "its checksum does not match")
        try:
            value = pickle.loads(parts[0], buffers=parts[1:])
        except Exception as err:  # noqa: BLE001 (anything a __reduce__ may raise on load)
            raise SpillError(
                f"taskgraph: the result of {key!r} was spilled to {path} but does not unpickle: "
                f"{type(err).__name__}: {err}"
            ) from err
        self.discard(node)
        return value

    def discard(self, node):
        """Removes ``node``'s file, if there is one."""
        if self._files.pop(node, None) is not None:
            with contextlib.suppress(OSError):
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

    def _mac(self, node):
        """The keyed checksum of ``node``'s file, begun with the node, so
        that no file passes for another's."""
        return hmac.new(self._key, struct.pack("<Q", node), _DIGEST)


def _reason(err):
    return err.strerror or str(err)


def _os_error(message, err):
    """A ``SpillError`` with ``message`` and the ``errno`` of ``err``."""
    error = SpillError(message)
    error.errno = err.errno
    return error


def _changed(key, path, why):
    return SpillError(
        f"taskgraph: the spill file {path} of {key!r} was changed after it was written ({why}); it was not read"
    )
