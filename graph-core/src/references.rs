//! `References`: every reference of every task, resolved to node ids.

use crate::{Error, NodeId};

/// The references of every task of a graph as node ids: row `n` lists, in
/// the order they occur in task `n`'s body (preorder), every key it
/// references, repeats included.
///
/// This is dask's `dependencies` with `as_list=True`: a pass that inlines or
/// fuses needs the repeats (a task that uses a result twice must not absorb
/// it), and an executor compiles each reference to the node it names. The
/// [`Topology`](crate::Topology) keeps each task's distinct dependencies;
/// these rows keep every occurrence.
///
/// A pass that builds a new graph knows its references already: handing
/// them to [`TaskGraph::hint_references`](crate::TaskGraph::hint_references)
/// lets the graph check them by key equality, without hashing a key, when
/// its topology is first asked for.
///
/// # Example
///
/// ```
/// use graph_core::{NodeId, TaskGraph, Term};
///
/// let graph = TaskGraph::builder()
///     .task("a", Term::lit(1))
///     .task("b", Term::call("add", [Term::key("a"), Term::key("a")]))
///     .build()?;
/// let references = graph.references()?;
/// assert_eq!(references.get(NodeId::new(1)), [NodeId::new(0), NodeId::new(0)]);
/// assert_eq!(references.reference_count(), 2);
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct References {
    offsets: Vec<u32>,
    targets: Vec<NodeId>,
}

impl References {
    /// Rows in compressed sparse form: the references of node `i` are
    /// `targets[offsets[i]..offsets[i + 1]]`.
    ///
    /// # Errors
    ///
    /// [`Error::MalformedRows`] unless `offsets` starts at 0, never
    /// decreases and ends at `targets.len()`; [`Error::NodeOutOfRange`] for
    /// a target that is not one of the `offsets.len() - 1` nodes.
    pub fn from_rows(offsets: Vec<u32>, targets: Vec<NodeId>) -> Result<References, Error> {
        let well_formed = offsets.first() == Some(&0)
            && offsets.last().map(|&end| end as usize) == Some(targets.len())
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        if !well_formed {
            return Err(Error::MalformedRows);
        }
        let node_count = offsets.len() - 1;
        if let Some(node) = targets.iter().find(|node| node.index() >= node_count) {
            return Err(Error::NodeOutOfRange {
                node: node.index(),
                node_count,
            });
        }
        Ok(References { offsets, targets })
    }

    /// The number of tasks (rows).
    pub fn node_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The number of references, repeats included.
    pub fn reference_count(&self) -> usize {
        self.targets.len()
    }

    /// The references of task `node`, in preorder, repeats included.
    ///
    /// # Panics
    ///
    /// If `node` is not below [`References::node_count`].
    #[inline]
    pub fn get(&self, node: NodeId) -> &[NodeId] {
        let i = node.index();
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The rows, taken apart: `(offsets, targets)` as [`References::from_rows`]
    /// takes them.
    pub fn into_rows(self) -> (Vec<u32>, Vec<NodeId>) {
        (self.offsets, self.targets)
    }
}
