//! graph-rewrite's integration tests: one module per file, linked as one binary.

mod common;

mod dask_differences;
mod dask_head_args_traverser;
mod dask_matches;
mod dask_rewrite;
mod dask_rewrite_rule;
mod dask_rule_set;
mod fixpoint_stop_reason;
mod fuzz_replay;
mod graph_dependencies;
mod net_matches_naive;
mod parallel_equals_sequential;
mod rules_file;
mod unbound_variable;
