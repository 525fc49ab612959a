//! `Csr`: the dense, checked copy of a `Dag` that every strategy runs on.

use graph_core::{Dag, NodeId};

use crate::Error;

/// Both directions of a graph in compressed sparse rows over `u32` indices,
/// with one topological order. Built from the input's dependencies only (the
/// dependents are our own transpose), so a custom `Dag` that breaks its
/// promises gives an error or a still-valid answer, never a panic.
#[derive(Clone, Debug)]
pub(crate) struct Csr {
    dep_offsets: Vec<u32>,
    deps: Vec<u32>,
    dependent_offsets: Vec<u32>,
    dependents: Vec<u32>,
    /// Kahn's order, first-in-first-out, seeded by increasing index.
    pub(crate) topo: Vec<u32>,
}

impl Csr {
    /// Copies `dag`, merging repeated edges.
    ///
    /// Errors: [`Error::NodeOutOfRange`], and [`Error::Cycle`] (a self-edge is
    /// a cycle of one node).
    pub(crate) fn new(dag: &dyn Dag) -> Result<Csr, Error> {
        let n = dag.node_count();
        let mut dep_offsets = Vec::with_capacity(n + 1);
        dep_offsets.push(0_u32);
        let listed: usize = (0..n).map(|i| dag.dependencies(NodeId::new(i)).len()).sum();
        let mut deps = Vec::with_capacity(listed);
        let mut last_seen = vec![u32::MAX; n];
        for i in 0..n {
            let node = NodeId::new(i);
            for &d in dag.dependencies(node) {
                let di = d.index();
                if di >= n {
                    return Err(Error::NodeOutOfRange {
                        node,
                        dependency: di,
                        node_count: n,
                    });
                }
                if di == i {
                    return Err(Error::Cycle {
                        nodes: vec![node, node],
                    });
                }
                if last_seen[di] != i as u32 {
                    last_seen[di] = i as u32;
                    deps.push(di as u32);
                }
            }
            dep_offsets.push(deps.len() as u32);
        }
        drop(last_seen);
        let mut dependent_offsets = vec![0_u32; n + 1];
        for &d in &deps {
            dependent_offsets[d as usize + 1] += 1;
        }
        for i in 0..n {
            dependent_offsets[i + 1] += dependent_offsets[i];
        }
        let mut cursor = dependent_offsets.clone();
        let mut dependents = vec![0_u32; deps.len()];
        for i in 0..n {
            for &d in &deps[dep_offsets[i] as usize..dep_offsets[i + 1] as usize] {
                let slot = &mut cursor[d as usize];
                dependents[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
        let mut csr = Csr {
            dep_offsets,
            deps,
            dependent_offsets,
            dependents,
            topo: Vec::new(),
        };
        csr.topo = csr.kahn()?;
        Ok(csr)
    }

    pub(crate) fn len(&self) -> usize {
        self.dep_offsets.len() - 1
    }

    pub(crate) fn edge_count(&self) -> usize {
        self.deps.len()
    }

    #[inline]
    pub(crate) fn deps(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.deps[self.dep_offsets[n] as usize..self.dep_offsets[n + 1] as usize]
    }

    #[inline]
    pub(crate) fn dependents(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.dependents[self.dependent_offsets[n] as usize..self.dependent_offsets[n + 1] as usize]
    }

    fn kahn(&self) -> Result<Vec<u32>, Error> {
        let n = self.len();
        let mut missing: Vec<u32> = self.dep_offsets.windows(2).map(|w| w[1] - w[0]).collect();
        let mut order: Vec<u32> = (0..n as u32)
            .filter(|&i| missing[i as usize] == 0)
            .collect();
        let mut head = 0;
        while head < order.len() {
            let node = order[head];
            head += 1;
            for &d in self.dependents(node) {
                missing[d as usize] -= 1;
                if missing[d as usize] == 0 {
                    order.push(d);
                }
            }
        }
        if order.len() == n {
            return Ok(order);
        }
        // Every unfinished node has an unfinished dependency: walk them until
        // a node repeats, and report that loop.
        let start = (0..n).find(|&i| missing[i] > 0).unwrap_or(0) as u32;
        let mut step_of = vec![u32::MAX; n];
        let mut path = Vec::new();
        let mut node = start;
        while step_of[node as usize] == u32::MAX {
            step_of[node as usize] = path.len() as u32;
            path.push(node);
            match self.deps(node).iter().find(|&&d| missing[d as usize] > 0) {
                Some(&d) => node = d,
                None => break,
            }
        }
        let from = step_of[node as usize].min(path.len() as u32) as usize;
        let mut nodes: Vec<NodeId> = path[from..].iter().map(|&i| NodeId::from_u32(i)).collect();
        nodes.push(NodeId::from_u32(node));
        Err(Error::Cycle { nodes })
    }

    /// Checks that `priorities` is a permutation of `0..n` that runs every
    /// dependency first.
    pub(crate) fn check_order(&self, priorities: &[u32]) -> Result<(), Error> {
        let n = self.len();
        if priorities.len() != n {
            return Err(Error::LengthMismatch {
                what: "the order",
                expected: n,
                found: priorities.len(),
            });
        }
        let mut seen = vec![false; n];
        for &p in priorities {
            if p as usize >= n || seen[p as usize] {
                return Err(Error::NotAPermutation {
                    priority: p,
                    node_count: n,
                });
            }
            seen[p as usize] = true;
        }
        for i in 0..n as u32 {
            for &d in self.deps(i) {
                if priorities[d as usize] > priorities[i as usize] {
                    return Err(Error::NotTopological {
                        node: NodeId::from_u32(i),
                        dependency: NodeId::from_u32(d),
                    });
                }
            }
        }
        Ok(())
    }
}
