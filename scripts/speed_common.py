"""What the whole-process and in-process speed scripts (``cli_speed.py``,
``python_order_speed.py``) share: the map_overlap reduction they time, and
the name of the machine's CPU for their tables."""

import platform


def map_overlap(size):
    """dask's map_overlap reduction on a SIZE x SIZE array of 10 x 10
    chunks: about 10^6 tasks at SIZE 2630."""
    import dask.array as da

    return da.random.random((size, size), chunks=(10, 10)).map_overlap(lambda a: a, depth=1).sum()


def cpu_model():
    """The CPU's model name, as /proc/cpuinfo gives it where there is one."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
