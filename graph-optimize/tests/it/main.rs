//! graph-optimize's integration tests: one module per file, linked as one binary.

mod common;

mod barriers;
mod cull;
mod errors;
mod functions_of;
mod fuse;
mod fuse_linear;
mod fuse_reductions;
mod fuzz_replay;
mod inline;
mod inline_functions;
mod long_chains;
mod names;
mod optimize;
mod preservation;
mod stages;
