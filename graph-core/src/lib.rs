//! The core of the task-graph toolkit: what a task graph is, and how it is
//! read, written and walked. Every other crate speaks in these types.
//!
//! - [`Key`]: the name of a task, as dask allows it (`'x'`, `('x', 0, 1)`).
//! - [`Term`]: the body of a task: a literal [`Value`], a reference to another
//!   task, a call of an [`Op`], or a list.
//! - [`TaskGraph`]: tasks by key in insertion order, with optional size and cost.
//! - [`Dag`]: the view of a graph that ordering and placement need, over dense
//!   [`NodeId`]s; [`Topology`] implements it in compressed sparse rows.
//! - `json` (feature `json`, on by default): the `taskgraph-json/1`
//!   interchange format, plain or gzip, with its own error type; and
//!   `file` (feature `files`): files written whole or not at all, and
//!   private temporary directories. Without them the crate depends on no
//!   serialization, compression or temporary-file crate.
//! - [`GraphStats`]: the shape of a graph in seven numbers.
//! - [`generate`]: seeded generators of chains, trees, random DAGs, 2-D array
//!   shapes and shuffles, and dask's word-count graph.
//! - `testing` (feature `testing`): helpers for tests and fuzz targets.
//!
//! # Example
//!
//! Build a graph, write it as JSON, read it back, and measure it:
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod cancel;
mod dag;
mod error;
#[cfg(feature = "files")]
pub mod file;
#[cfg(feature = "fuzzing")]
pub mod fuzz;
pub mod generate;
mod graph;
mod grouped;
#[cfg(feature = "json")]
pub mod json;
mod key;
mod key_table;
mod limits;
mod node;
mod references;
pub mod repr;
mod shape;
mod stats;
mod term;
#[cfg(feature = "testing")]
pub mod testing;
mod topology;
mod value;

pub use cancel::CancelHandle;
pub use dag::Dag;
pub use error::Error;
pub use graph::{Body, Task, TaskGraph, TaskGraphBuilder};
pub use grouped::Grouped;
#[cfg(feature = "json")]
pub use json::{Problem, TaskAt};
pub use key::Key;
pub use limits::{MAX_NAME_BYTES, MAX_NESTING, MAX_STRING_BYTES};
pub use node::NodeId;
pub use references::References;
pub use shape::Shape;
pub use stats::GraphStats;
pub use term::{Op, OpInterner, Refs, Term};
pub use topology::Topology;
pub use value::Value;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
