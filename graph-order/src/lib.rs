//! Static ordering of task graphs: a priority for every task that keeps the
//! number of results held in memory low, with diagnostics (the pressure series
//! and its maximum) and a proven lower bound to judge an order by. Its first
//! strategy reproduces `dask.order.order`; the others are measured against it.
