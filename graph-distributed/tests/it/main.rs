//! graph-distributed's integration tests: one module per file, linked as one binary.
//! The runs across processes stay binaries of their own: they take loopback
//! ports and give them back, which more tests beside them could take.

#[path = "../common/mod.rs"]
mod common;
#[path = "../recovery_common/mod.rs"]
mod recovery_common;

mod attempts;
mod fuzz_replay;
mod large_results;
mod recovery;
mod spill;
