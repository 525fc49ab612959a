"""``python -m taskgraph demo OUT_DIR``: export three example graphs as
``taskgraph-json/1``. ``python -m taskgraph worker ...``: a worker process
for ``taskgraph.dask.get(..., processes=...)`` (see
:mod:`taskgraph._worker`)."""

import os
import sys

from taskgraph.dask import dump


def demo(out_dir):
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    os.makedirs(out_dir, exist_ok=True)
    x = da.random.random((40, 40), chunks=(10, 10))
    frame = pd.DataFrame({"k": [i % 7 for i in range(1000)], "v": range(1000)})
    ddf = dd.from_pandas(frame, npartitions=8)

    @dask.delayed
    def inc(i):
        return i + 1

    @dask.delayed
    def total(xs):
        return sum(xs)

    graphs = {
        "array-reduction.json": (x + x.T).mean(axis=0).sum(),
        "dataframe-groupby.json": ddf.groupby("k").v.sum(),
        "delayed.json": total([inc(i) for i in range(10)]),
    }
    for name, obj in graphs.items():
        path = os.path.join(out_dir, name)
        print(f"{dump(obj, path)} tasks written to {path}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "worker":
        from taskgraph._worker import main

        main(sys.argv[2:])
        sys.exit(0)
    if len(sys.argv) != 3 or sys.argv[1] != "demo":
        sys.exit("usage: python -m taskgraph demo OUT_DIR | python -m taskgraph worker --help")
    demo(sys.argv[2])
