"""What the caller and its worker processes say to each other: messages
pickled with protocol 5 over a ``multiprocessing.connection`` connection
(authenticated with the pool's secret), each as a header of buffer sizes,
the pickle, then its out-of-band buffers, so that an array's bytes are
written once and read into one writable buffer."""

import os
import pickle
import socket
import struct

SECRET_VARIABLE = "TASKGRAPH_SECRET"
MIN_SECRET_BYTES = 16


class Frame:
    """A message pickled once, to send to any number of connections."""

    __slots__ = ("header", "data", "buffers", "nbytes")

    def __init__(self, obj, dumps=pickle.dumps):
        buffers = []
        self.data = dumps(obj, protocol=5, buffer_callback=buffers.append)
        self.buffers = [buffer.raw() for buffer in buffers]
        sizes = [raw.nbytes for raw in self.buffers]
        self.header = struct.pack(f"<I{len(sizes)}Q", len(sizes), *sizes)
        self.nbytes = len(self.data) + sum(sizes)

    def send(self, conn):
        conn.send_bytes(self.header)
        conn.send_bytes(self.data)
        for raw in self.buffers:
            conn.send_bytes(raw)
        return self.nbytes


def send(conn, obj):
    """Sends ``obj``, pickled with cloudpickle where plain pickle cannot (a
    lambda among the results); returns the bytes sent."""
    try:
        frame = Frame(obj)
    except Exception:
        import cloudpickle

        frame = Frame(obj, dumps=cloudpickle.dumps)
    return frame.send(conn)


def recv(conn):
    """The next message and the bytes it took."""
    header = conn.recv_bytes()
    (count,) = struct.unpack_from("<I", header)
    sizes = struct.unpack_from(f"<{count}Q", header, 4)
    data = conn.recv_bytes()
    buffers = []
    for size in sizes:
        if size == 0:
            conn.recv_bytes()
            buffers.append(bytearray())
            continue
        buffer = bytearray(size)
        conn.recv_bytes_into(buffer)
        buffers.append(buffer)
    return pickle.loads(data, buffers=buffers), len(data) + sum(sizes)


def secret_from(secret=None, secret_file=None):
    """The shared secret, as ``taskgraph run --hostfile`` takes it: given,
    read from ``secret_file``, or from ``$TASKGRAPH_SECRET``, trimmed of
    the whitespace around it; at least 16 bytes."""
    if secret is not None:
        value, source = (secret.encode() if isinstance(secret, str) else bytes(secret)), "secret="
    elif secret_file is not None:
        with open(secret_file, "rb") as f:
            value, source = f.read(64 * 1024 + 1), f"the secret file {secret_file}"
        if len(value) > 64 * 1024:
            raise ValueError(f"the secret file {secret_file} is longer than 64 KiB: a secret is one line of random text")
    elif SECRET_VARIABLE in os.environ:
        value, source = os.environb[SECRET_VARIABLE.encode()], SECRET_VARIABLE
    else:
        raise ValueError(
            f"worker processes on hosts need a shared secret, the same for every process: set "
            f"{SECRET_VARIABLE} or give a secret file (at least {MIN_SECRET_BYTES} bytes; for "
            f"example, `openssl rand -hex 32`)"
        )
    value = value.strip()
    if len(value) < MIN_SECRET_BYTES:
        raise ValueError(
            f"the secret in {source} has {len(value)} bytes, too few to keep strangers out: use at "
            f"least {MIN_SECRET_BYTES} (for example, `openssl rand -hex 32`)"
        )
    return value


def read_hostfile(path):
    """The ``(host, port)`` of every process a hostfile lists, read as
    ``taskgraph run --hostfile`` reads it."""
    from taskgraph import _native

    addresses = []
    for address in _native.read_hostfile(os.fspath(path)):
        host, _, port = address.rpartition(":")
        addresses.append((host.strip("[]"), int(port)))
    return addresses


def no_delay(conn):
    """Turns off Nagle's algorithm on ``conn``'s socket: a message goes as
    several writes, which would otherwise wait on the peer's delayed
    acknowledgement (40 ms a message)."""
    try:
        with socket.socket(fileno=os.dup(conn.fileno())) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


def free_address(host):
    """``host:port`` with a port free on ``host`` now, for a run's data
    connections."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port = sock.getsockname()[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
