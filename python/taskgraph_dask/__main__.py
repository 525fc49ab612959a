"""``python -m taskgraph_dask demo OUT_DIR``: export three example graphs."""

import sys

from taskgraph_dask import dump


def demo(out_dir):
    import os

    import dask
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    os.makedirs(out_dir, exist_ok=True)
    x = da.random.random((40, 40), chunks=(10, 10))
    written = {"array-reduction.json": dump((x + x.T).mean(axis=0).sum(), os.path.join(out_dir, "array-reduction.json"))}
    frame = pd.DataFrame({"k": [i % 7 for i in range(1000)], "v": range(1000)})
    ddf = dd.from_pandas(frame, npartitions=8)
    written["dataframe-groupby.json"] = dump(ddf.groupby("k").v.sum(), os.path.join(out_dir, "dataframe-groupby.json"))

    @dask.delayed
    def inc(i):
        return i + 1

    @dask.delayed
    def total(xs):
        return sum(xs)

    written["delayed.json"] = dump(total([inc(i) for i in range(10)]), os.path.join(out_dir, "delayed.json"))
    for name, n in written.items():
        print(f"{n} tasks written to {os.path.join(out_dir, name)}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "demo":
        sys.exit("usage: python -m taskgraph_dask demo OUT_DIR")
    demo(sys.argv[2])
