//! `Topology`: the checked graph index every crate runs on, and the
//! compressed-sparse-row implementation of `Dag`.

use std::borrow::Cow;

use crate::{Dag, Error, NodeId};

/// The checked index of a task graph: its edges in compressed sparse rows,
/// both directions, plus one topological order. Built once, then read by
/// every algorithm.
///
/// A `Topology` can only be made through validation, so holding one proves
/// what it describes is a DAG (in the spirit of petgraph's `Acyclic`):
/// construction merges duplicate edges and fails on a cycle (naming the
/// nodes on it), a self-edge included (dask raises "Cycle detected" for
/// `{"a": (f, "a")}`), and on an edge to a node that does not exist. Each
/// node's dependencies keep the order in which they were first given (for a
/// [`TaskGraph`](crate::TaskGraph), the order of first reference in its
/// body); each node's dependents are in increasing id order.
///
/// Algorithms take `&impl Dag` at their public edge and call
/// [`Topology::checked`] once: a `Topology` is used as it is, any other
/// [`Dag`] is copied and checked.
///
/// **Complexity**: built in O(V + E) time with O(V + E) memory; every query is
/// O(1).
///
/// # Example
///
/// ```
/// use graph_core::{Dag, NodeId, Topology};
///
/// // A diamond: 1 and 2 depend on 0; 3 depends on 1 and 2 (given twice).
/// let topology = Topology::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3), (2, 3)])?;
/// assert_eq!(topology.edge_count(), 4);
/// assert_eq!(topology.dependents(NodeId::new(0)), [NodeId::new(1), NodeId::new(2)]);
/// assert_eq!(topology.topological_order().first(), Some(&NodeId::new(0)));
///
/// let cycle = Topology::from_edges(2, [(0, 1), (1, 0)]).unwrap_err();
/// assert_eq!(cycle.to_string(), "cycle through nodes 0 -> 1 -> 0 (each depends on the next)");
/// let itself = Topology::from_edges(1, [(0, 0)]).unwrap_err();
/// assert_eq!(itself.to_string(), "cycle through nodes 0 -> 0 (each depends on the next)");
/// # Ok::<(), graph_core::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    dependency_offsets: Box<[u32]>,
    dependencies: Box<[NodeId]>,
    dependent_offsets: Box<[u32]>,
    dependents: Box<[NodeId]>,
    topological_order: Box<[NodeId]>,
}

impl Topology {
    /// Builds a topology over `node_count` nodes from `(dependency, dependent)`
    /// pairs: `(a, b)` says that `b` needs the result of `a`.
    ///
    /// # Errors
    ///
    /// [`Error::NodeOutOfRange`] for an id at or above `node_count`,
    /// [`Error::TooLarge`] past `u32` ids or edge offsets, and
    /// [`Error::NodeCycle`] if the edges form a cycle.
    pub fn from_edges(
        node_count: usize,
        edges: impl IntoIterator<Item = (usize, usize)>,
    ) -> Result<Topology, Error> {
        check_node_count(node_count)?;
        let edges: Vec<(usize, usize)> = edges.into_iter().collect();
        let mut offsets = vec![0_u32; node_count + 1];
        for &(dependency, dependent) in &edges {
            for node in [dependency, dependent] {
                if node >= node_count {
                    return Err(Error::NodeOutOfRange { node, node_count });
                }
            }
            offsets[dependent + 1] += 1;
        }
        check_edge_count(edges.len())?;
        for i in 0..node_count {
            offsets[i + 1] += offsets[i];
        }
        // Counting sort by dependent; a stable fill keeps the given order.
        let mut cursor = offsets.clone();
        let mut targets = vec![0_u32; edges.len()];
        for &(dependency, dependent) in &edges {
            targets[cursor[dependent] as usize] = dependency as u32;
            cursor[dependent] += 1;
        }
        Topology::from_dependency_rows(offsets, targets)
    }

    /// Builds a topology from each node's dependencies in CSR form: the
    /// dependencies of node `i` are `targets[offsets[i]..offsets[i + 1]]`,
    /// as raw indices, duplicates allowed (the first occurrence is kept).
    ///
    /// # Errors
    ///
    /// As [`Topology::from_edges`]. `offsets` must have `node_count + 1`
    /// non-decreasing entries ending at `targets.len()`, else
    /// [`Error::MalformedRows`].
    pub fn from_dependency_rows(
        mut offsets: Vec<u32>,
        mut targets: Vec<u32>,
    ) -> Result<Topology, Error> {
        let well_formed = offsets.first() == Some(&0)
            && offsets.last().map(|&end| end as usize) == Some(targets.len())
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        if !well_formed {
            return Err(Error::MalformedRows);
        }
        let node_count = offsets.len() - 1;
        check_node_count(node_count)?;

        // Drop repeats in place, keeping first occurrences: `last_seen[d] ==
        // i` marks `d` as already taken for node `i`. A self-edge is a cycle.
        let mut last_seen = vec![u32::MAX; node_count];
        let mut write = 0_usize;
        let mut start = 0_usize;
        for node in 0..node_count {
            let end = offsets[node + 1] as usize;
            for read in start..end {
                let dependency = targets[read];
                if dependency as usize >= node_count {
                    return Err(Error::NodeOutOfRange {
                        node: dependency as usize,
                        node_count,
                    });
                }
                if dependency as usize == node {
                    let node = NodeId::new(node);
                    return Err(Error::NodeCycle {
                        nodes: vec![node, node],
                    });
                }
                if last_seen[dependency as usize] != node as u32 {
                    last_seen[dependency as usize] = node as u32;
                    targets[write] = dependency;
                    write += 1;
                }
            }
            start = end;
            offsets[node + 1] = write as u32;
        }
        targets.truncate(write);
        drop(last_seen);

        // Transpose: dependents in increasing id order.
        let mut dependent_offsets = vec![0_u32; node_count + 1];
        for &dependency in &targets {
            dependent_offsets[dependency as usize + 1] += 1;
        }
        for i in 0..node_count {
            dependent_offsets[i + 1] += dependent_offsets[i];
        }
        let mut cursor = dependent_offsets.clone();
        let mut dependents = vec![NodeId::from_u32(0); targets.len()];
        for node in 0..node_count {
            for &dependency in &targets[offsets[node] as usize..offsets[node + 1] as usize] {
                let slot = &mut cursor[dependency as usize];
                dependents[*slot as usize] = NodeId::from_u32(node as u32);
                *slot += 1;
            }
        }
        drop(cursor);

        // `Vec<u32>` into `Vec<NodeId>` reuses the allocation.
        let dependencies: Vec<NodeId> = targets.into_iter().map(NodeId::from_u32).collect();
        let mut topology = Topology {
            dependency_offsets: offsets.into_boxed_slice(),
            dependencies: dependencies.into_boxed_slice(),
            dependent_offsets: dependent_offsets.into_boxed_slice(),
            dependents: dependents.into_boxed_slice(),
            topological_order: Box::new([]),
        };
        topology.topological_order = topology.sort_topologically()?;
        Ok(topology)
    }

    /// The checked index of any [`Dag`]: `dag` itself when it is a
    /// `Topology` (see [`Dag::as_topology`]), else a copy built from its
    /// `dependencies` (its `dependents` are not read) and checked like any
    /// other. This is how every algorithm of the workspace meets a user's
    /// graph: checked once, at its boundary, and refused with an error
    /// rather than trusted.
    ///
    /// # Errors
    ///
    /// As [`Topology::from_dependency_rows`]: a dependency out of range, a
    /// cycle (a self-edge included), or more than `u32` ids allow.
    ///
    /// # Complexity
    ///
    /// O(1) for a `Topology`; O(V + E) time and memory for any other `Dag`.
    ///
    /// # Example
    ///
    /// ```
    /// use std::borrow::Cow;
    ///
    /// use graph_core::{Dag, NodeId, Topology};
    ///
    /// /// A user's graph whose node 1 depends on itself.
    /// struct Loop;
    /// impl Dag for Loop {
    ///     fn node_count(&self) -> usize { 2 }
    ///     fn dependencies(&self, node: NodeId) -> &[NodeId] {
    ///         const ONE: [NodeId; 1] = [NodeId::from_u32(1)];
    ///         if node.index() == 1 { &ONE } else { &[] }
    ///     }
    /// }
    /// assert!(Topology::checked(&Loop).is_err());
    ///
    /// let topology = Topology::from_edges(2, [(0, 1)])?;
    /// assert!(matches!(Topology::checked(&topology)?, Cow::Borrowed(_)));
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn checked(dag: &(impl Dag + ?Sized)) -> Result<Cow<'_, Topology>, Error> {
        if let Some(topology) = dag.as_topology() {
            return Ok(Cow::Borrowed(topology));
        }
        let n = dag.node_count();
        check_node_count(n)?;
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0_u32);
        let mut targets = Vec::new();
        for i in 0..n {
            let deps = dag.dependencies(NodeId::new(i));
            check_edge_count(targets.len() + deps.len())?;
            targets.extend(deps.iter().map(|dep| dep.as_u32()));
            offsets.push(targets.len() as u32);
        }
        Topology::from_dependency_rows(offsets, targets).map(Cow::Owned)
    }

    /// The nodes that need the result of `node`: the transpose of
    /// [`dependencies`](Dag::dependencies), kept beside it.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    ///
    /// // 0 -> 2 <- 1 and 0 -> 3.
    /// let topology = Topology::from_edges(4, [(0, 2), (1, 2), (0, 3)])?;
    /// assert_eq!(topology.dependents(NodeId::new(0)), [NodeId::new(2), NodeId::new(3)]);
    /// assert_eq!(topology.dependents(NodeId::new(2)), []);
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    #[inline]
    pub fn dependents(&self, node: NodeId) -> &[NodeId] {
        let i = node.index();
        &self.dependents[self.dependent_offsets[i] as usize..self.dependent_offsets[i + 1] as usize]
    }

    /// Which nodes `nodes` need, by node id: each of them and, transitively,
    /// every node it depends on. What a run of `nodes` must compute, and
    /// nothing else.
    ///
    /// # Errors
    ///
    /// [`Error::NodeOutOfRange`] if one of `nodes` is not a node of this
    /// graph.
    ///
    /// # Complexity
    ///
    /// O(V) to allocate, plus O(V' + E') for the V' nodes needed and the E'
    /// edges into them.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::{NodeId, Topology};
    ///
    /// // 0 -> 1 -> 3 and 2 -> 3: node 1 needs node 0; node 2 needs nothing.
    /// let topology = Topology::from_edges(4, [(0, 1), (1, 3), (2, 3)])?;
    /// assert_eq!(topology.needed_by(&[NodeId::new(1)])?, [true, true, false, false]);
    /// assert_eq!(topology.needed_by(&[NodeId::new(3)])?, [true; 4]);
    /// assert!(topology.needed_by(&[NodeId::new(4)]).is_err());
    /// # Ok::<(), graph_core::Error>(())
    /// ```
    pub fn needed_by(&self, nodes: &[NodeId]) -> Result<Vec<bool>, Error> {
        let node_count = self.node_count();
        let mut needed = vec![false; node_count];
        let mut stack = Vec::with_capacity(nodes.len());
        for &node in nodes {
            let slot = needed.get_mut(node.index()).ok_or(Error::NodeOutOfRange {
                node: node.index(),
                node_count,
            })?;
            if !*slot {
                *slot = true;
                stack.push(node);
            }
        }
        while let Some(node) = stack.pop() {
            for &dep in self.dependencies(node) {
                if !needed[dep.index()] {
                    needed[dep.index()] = true;
                    stack.push(dep);
                }
            }
        }
        Ok(needed)
    }

    /// The number of distinct edges.
    pub fn edge_count(&self) -> usize {
        self.dependencies.len()
    }

    /// One topological order: every node after all of its dependencies. It is
    /// Kahn's order with a first-in-first-out queue seeded by increasing id.
    pub fn topological_order(&self) -> &[NodeId] {
        &self.topological_order
    }

    /// Kahn's algorithm; on a cycle, walks back through unfinished
    /// dependencies until a node repeats and reports that loop.
    fn sort_topologically(&self) -> Result<Box<[NodeId]>, Error> {
        let n_nodes = self.node_count();
        let mut missing: Vec<u32> = self
            .dependency_offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .collect();
        let mut order: Vec<NodeId> = Vec::with_capacity(n_nodes);
        order.extend(self.node_ids().filter(|node| missing[node.index()] == 0));
        let mut head = 0;
        while head < order.len() {
            let node = order[head];
            head += 1;
            for &dependent in self.dependents(node) {
                let count = &mut missing[dependent.index()];
                *count -= 1;
                if *count == 0 {
                    order.push(dependent);
                }
            }
        }
        if order.len() == n_nodes {
            return Ok(order.into_boxed_slice());
        }
        let start = self
            .node_ids()
            .find(|node| missing[node.index()] > 0)
            .expect("an unfinished node exists when Kahn's order is short");
        // Every unfinished node has an unfinished dependency, so the walk
        // never stops before some node repeats.
        let mut step_of = vec![u32::MAX; n_nodes];
        let mut path = Vec::new();
        let mut node = start;
        while step_of[node.index()] == u32::MAX {
            step_of[node.index()] = path.len() as u32;
            path.push(node);
            node = *self
                .dependencies(node)
                .iter()
                .find(|dependency| missing[dependency.index()] > 0)
                .expect("an unfinished node has an unfinished dependency");
        }
        let mut nodes = path.split_off(step_of[node.index()] as usize);
        nodes.push(node);
        Err(Error::NodeCycle { nodes })
    }
}

fn check_node_count(node_count: usize) -> Result<(), Error> {
    if node_count >= NodeId::MAX_NODES {
        return Err(Error::TooLarge {
            what: "tasks",
            count: node_count,
        });
    }
    Ok(())
}

fn check_edge_count(edge_count: usize) -> Result<(), Error> {
    if edge_count > u32::MAX as usize {
        return Err(Error::TooLarge {
            what: "edges",
            count: edge_count,
        });
    }
    Ok(())
}

impl Dag for Topology {
    #[inline]
    fn node_count(&self) -> usize {
        self.dependency_offsets.len() - 1
    }

    #[inline]
    fn dependencies(&self, node: NodeId) -> &[NodeId] {
        let i = node.index();
        &self.dependencies
            [self.dependency_offsets[i] as usize..self.dependency_offsets[i + 1] as usize]
    }

    fn as_topology(&self) -> Option<&Topology> {
        Some(self)
    }
}
