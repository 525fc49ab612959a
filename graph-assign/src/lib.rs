//! Placing tasks on workers: Mars' initial assignment, dask.distributed's
//! `decide_worker`, a partitioner that keeps the edge cut low within a balance
//! bound, and the metrics (edge cut, transfer bytes, load imbalance) to compare
//! them by.
