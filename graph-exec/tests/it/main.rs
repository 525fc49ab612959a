//! graph-exec's integration tests: one module per file, linked as one binary.
//! `spill_cleanup.rs` (it points the process's temporary directory elsewhere)
//! and `parallel_speedup.rs` (it times runs) stay binaries of their own.

#[path = "../common/mod.rs"]
mod common;

mod barriers;
mod builtins;
mod failures;
mod fuzz_replay;
mod held_bytes;
mod hostile;
mod local_ported;
mod measured_sizes;
mod memory;
mod parallel_equals_sequential;
mod worker_panic;
