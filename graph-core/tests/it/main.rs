//! graph-core's integration tests: one module per file, linked as one binary.

mod fuzz_replay;
mod hostile;
mod json_errors;
mod json_roundtrip;
mod topology;
