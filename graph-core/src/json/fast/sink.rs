//! What the fast reader does with each task it reads: the [`Sink`] trait, and
//! the sinks that build a [`TaskGraph`] and a [`Shape`] from the tasks and
//! the [`Document`] read.

use super::{Bail, Result};
use crate::graph::{Body, Task};
use crate::key_table::KeyTable;
use crate::{Key, Shape, TaskGraph, Topology};

/// What a document holds, besides what its sink kept: the table of its
/// keys' codes, the checked topology, and (for a sink without terms) which
/// tasks are literal values.
pub(crate) struct Document {
    pub(crate) table: KeyTable,
    pub(crate) literal: Vec<bool>,
    /// For a sink without terms: each task's size, or empty if none has one.
    pub(crate) sizes: Vec<Option<u64>>,
    pub(crate) topology: Topology,
}

/// What a reader does with each task it reads.
pub(crate) trait Sink {
    /// Whether it wants the terms (else only their references).
    const TERMS: bool;

    /// The next task: its key and body, and its metadata. Called only when
    /// the sink wants terms.
    fn task(&mut self, key: &Key, body: Body, size: Option<u64>, cost: Option<f64>) -> Result<()>;

    /// Room for about `tasks` more tasks, asked for once the reader can
    /// tell how many the document holds.
    fn reserve(&mut self, tasks: usize) {
        let _ = tasks;
    }
}

/// Builds a [`TaskGraph`]: keeps every task, and at the end sets the
/// topology the reader resolved (no key is hashed again for it).
#[derive(Default)]
pub(crate) struct GraphSink {
    graph: TaskGraph,
}

impl Sink for GraphSink {
    const TERMS: bool = true;

    fn task(&mut self, key: &Key, body: Body, size: Option<u64>, cost: Option<f64>) -> Result<()> {
        self.graph
            .insert_task(key.clone(), Task { body, size, cost })
            .map_err(|_| Bail::Invalid)?;
        Ok(())
    }

    /// The graph's table then never grows: each growth copies every task
    /// into memory touched for the first time.
    fn reserve(&mut self, tasks: usize) {
        self.graph.try_reserve(tasks);
    }
}

impl GraphSink {
    /// The graph, with the topology read.
    pub(crate) fn finish(mut self, read: Document) -> TaskGraph {
        self.graph.set_topology(read.topology);
        self.graph
    }
}

/// Keeps nothing of the tasks (the reader does not even make their keys): a
/// [`Shape`] is what the reader itself keeps.
pub(crate) struct ShapeSink;

impl Sink for ShapeSink {
    const TERMS: bool = false;

    fn task(&mut self, _: &Key, _: Body, _: Option<u64>, _: Option<f64>) -> Result<()> {
        unreachable!("a sink without terms is given no tasks")
    }
}

impl ShapeSink {
    pub(crate) fn finish(read: Document) -> Shape {
        Shape::new(read.table, read.topology, read.literal, read.sizes)
    }
}
