//! graph-assign's integration tests: one module per file, linked as one binary.

mod common;

mod balance;
mod decide_worker;
mod deterministic;
mod errors;
mod every_task_once;
mod few_tasks;
mod fuzz_replay;
mod list;
mod mars;
mod metrics;
mod properties;
mod quality;
mod single_worker;
