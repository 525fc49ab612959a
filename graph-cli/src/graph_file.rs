//! Reading and writing graph files, with a spinner when it takes a while.

use std::path::Path;

use graph_core::{Shape, TaskGraph, json};

use crate::busy::Busy;

/// Reads a graph file (or standard input for `-`).
pub(crate) fn read(path: &Path) -> anyhow::Result<TaskGraph> {
    let _busy = Busy::start(format!("reading {}", path.display()));
    Ok(json::read_path(path)?)
}

/// Reads the keys and topology of a graph file (or standard input for `-`),
/// without its task bodies.
pub(crate) fn read_shape(path: &Path) -> anyhow::Result<Shape> {
    let _busy = Busy::start(format!("reading {}", path.display()));
    Ok(json::read_shape_path(path)?)
}

/// Writes a graph file (or standard output for `-`).
pub(crate) fn write(graph: &TaskGraph, path: &Path) -> anyhow::Result<()> {
    let _busy = Busy::start(format!("writing {}", path.display()));
    Ok(json::write_path(graph, path)?)
}
