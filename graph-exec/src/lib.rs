//! Running task graphs on one machine, in the manner of dask's local
//! schedulers: a sequential executor that serves as the oracle, and a parallel
//! executor that follows a static order and frees every intermediate result as
//! soon as its last dependent has run.
