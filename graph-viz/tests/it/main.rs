//! graph-viz's integration tests: one module per file, linked as one binary.

mod files;
mod graphviz;
mod limits;
mod names;
mod render;
