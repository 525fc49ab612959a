//! The error type of `graph-core`.

use std::fmt;

use crate::{Key, NodeId};

/// What can go wrong building a graph or a topology. Reading and writing
/// files has its own error, [`json::Error`](crate::json::Error).
///
/// Messages name tasks by their key in Python's spelling, so they read the way
/// a dask user writes keys.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two tasks have the same key.
    #[error("duplicate key {key}")]
    DuplicateKey {
        /// The repeated key.
        key: Key,
    },
    /// A task refers to a key that no task has.
    #[error("task {key} refers to missing key {missing}")]
    MissingDependency {
        /// The task holding the reference.
        key: Key,
        /// The key it refers to.
        missing: Key,
    },
    /// A task whose term or key nests deeper than the documented limit.
    #[error(
        "task {}: its term or key nests {levels} levels deep, more than the limit of {limit}",
        Short(key)
    )]
    TooDeep {
        /// The task.
        key: Key,
        /// How deep it nests.
        levels: usize,
        /// [`MAX_NESTING`](crate::MAX_NESTING).
        limit: usize,
    },
    /// The dependencies of a graph form a cycle.
    #[error("cycle: {} {}", Path(keys), CycleNote { len: keys.len(), noun: "task" })]
    Cycle {
        /// The keys on the cycle, each depending on the next; the first is
        /// repeated at the end.
        keys: Vec<Key>,
    },
    /// The edges of an unnamed graph form a cycle.
    #[error("cycle through nodes {} {}", Path(nodes), CycleNote { len: nodes.len(), noun: "node" })]
    NodeCycle {
        /// The nodes on the cycle, each depending on the next; the first is
        /// repeated at the end.
        nodes: Vec<NodeId>,
    },
    /// An edge names a node that does not exist.
    #[error("node {node} is out of range for a graph of {node_count} nodes")]
    NodeOutOfRange {
        /// The offending node index.
        node: usize,
        /// The number of nodes in the graph.
        node_count: usize,
    },
    /// CSR offsets that do not describe rows of the target array.
    #[error(
        "dependency rows are malformed: offsets must start at 0, never decrease, and end at the number of targets"
    )]
    MalformedRows,
    /// More tasks or edges than 32-bit ids allow.
    #[error("too many {what}: {count} (at most {} are supported)", u32::MAX - 1)]
    TooLarge {
        /// `"tasks"` or `"edges"`.
        what: &'static str,
        /// How many there were.
        count: usize,
    },
}

/// A cycle, each item depending on the next and the first repeated at the
/// end, spelled `a -> b -> a`. A long one keeps its first and last few items
/// and says how many it leaves out, so that a cycle through a whole graph
/// still makes a one-line message.
struct Path<'a, T>(&'a [T]);

impl<T> Path<'_, T> {
    /// The most items spelled out: the first and last `SHOWN / 2`.
    const SHOWN: usize = 8;
}

impl<T: fmt::Display> fmt::Display for Path<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items = self.0;
        let half = Self::SHOWN / 2;
        let shorten = items.len() > Self::SHOWN + 1;
        for (i, item) in items.iter().enumerate() {
            if shorten && i == half {
                write!(f, " -> ... {} more ...", items.len() - 2 * half)?;
            }
            if shorten && (half..items.len() - half).contains(&i) {
                continue;
            }
            if i > 0 {
                f.write_str(" -> ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// What follows a cycle's path: `(each task depends on the next)`, or, for
/// a cycle too long to spell out, how many tasks (nodes) it has.
struct CycleNote {
    /// The items of the path (the first repeated at the end).
    len: usize,
    /// `"task"` or `"node"`.
    noun: &'static str,
}

impl fmt::Display for CycleNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.len > Path::<()>::SHOWN + 1 {
            let n = self.len - 1;
            write!(
                f,
                "(a cycle of {n} {}s, each depending on the next)",
                self.noun
            )
        } else if self.noun == "task" {
            f.write_str("(each task depends on the next)")
        } else {
            f.write_str("(each depends on the next)")
        }
    }
}

/// A key that may nest deep, spelled whole when short and cut to its first
/// 200 characters when long.
struct Short<'a>(&'a Key);

impl fmt::Display for Short<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.nesting() > 32 {
            let mut text = String::new();
            // Formatting into a String cannot fail.
            let _ = fmt::write(&mut text, format_args!("{}", self.0));
            let cut: String = text.chars().take(200).collect();
            write!(f, "{cut}...")
        } else {
            write!(f, "{}", self.0)
        }
    }
}
