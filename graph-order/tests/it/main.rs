//! graph-order's integration tests: one module per file, linked as one binary.

mod common;

mod auto_optimal;
mod auto_portfolio;
mod bytes;
mod dask_collections;
mod dask_edge_cases;
mod dask_exact;
mod dask_graphs_auto;
mod dask_metrics;
mod dask_structure;
mod exhaustive;
mod fuzz_replay;
mod properties;
mod ranks;
mod stop;
mod tree_optimal;
