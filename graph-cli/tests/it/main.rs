//! graph-cli's integration tests: one module per file, linked as one binary.
//! The runs across processes stay binaries of their own (`tests/run_*.rs`): they take
//! loopback ports and give them back, which more tests beside them could take.

#[path = "../common/mod.rs"]
mod common;
mod viz_common;

mod assign;
mod broken_pipe;
mod demo;
mod hostile;
mod interrupt_writes;
mod optimize;
mod order;
mod rewrite;
mod run;
mod stages;
mod stats;
mod viz;
mod viz_collapse;
mod viz_diagnostics;
mod viz_html;
mod viz_legend;
mod viz_stages;
