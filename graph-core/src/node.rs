//! `NodeId`: the dense index of a task in one graph.

use std::fmt;
use std::num::NonZeroU32;

/// The dense index of a task in one graph: `0..node_count`.
///
/// A `u32` keeps adjacency arrays half the size of `usize` ones. It is stored
/// inverted in a `NonZeroU32`, so `Option<NodeId>` is as small as `NodeId`;
/// the largest index is therefore `u32::MAX - 1`.
///
/// # Example
///
/// ```
/// use graph_core::NodeId;
///
/// let node = NodeId::new(7);
/// assert_eq!(node.index(), 7);
/// assert_eq!(std::mem::size_of::<Option<NodeId>>(), 4);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeId(NonZeroU32);

impl NodeId {
    /// The largest number of nodes a graph may have.
    pub const MAX_NODES: usize = u32::MAX as usize;

    /// The node with index `index`.
    ///
    /// # Panics
    ///
    /// If `index >= NodeId::MAX_NODES`. Graph constructors check their sizes
    /// first and report an error instead, so this is an internal invariant.
    #[inline]
    pub fn new(index: usize) -> NodeId {
        assert!(index < Self::MAX_NODES, "node index {index} out of range");
        NodeId::from_u32(index as u32)
    }

    /// The node with index `index`, which must be below `u32::MAX`.
    #[inline]
    pub const fn from_u32(index: u32) -> NodeId {
        match NonZeroU32::new(!index) {
            Some(inverted) => NodeId(inverted),
            None => panic!("node index u32::MAX is reserved"),
        }
    }

    /// The node's index, for indexing dense per-node vectors.
    #[inline]
    pub const fn index(self) -> usize {
        !self.0.get() as usize
    }

    /// The node's index as a `u32`.
    #[inline]
    pub const fn as_u32(self) -> u32 {
        !self.0.get()
    }
}

impl fmt::Debug for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.index())
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.index())
    }
}

impl PartialOrd for NodeId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NodeId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_u32().cmp(&other.as_u32())
    }
}

const _: () = assert!(std::mem::size_of::<Option<NodeId>>() == std::mem::size_of::<NodeId>());
