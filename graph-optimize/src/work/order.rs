//! The topological order of a work graph, derived from the input's: no pass
//! sorts its graph again.
//!
//! The input's [`Topology::topological_order`](graph_core::Topology::topological_order)
//! stays an order of the work graph under every pass: inlining and fusing
//! replace a reference by the referenced task's own references, which come
//! before it; bypassing an alias points at what it aliases, which comes
//! before the alias. A task a pass creates ([`Work::try_rename`]) takes the
//! body and references of the node it is renamed from, which becomes an
//! alias of it, so it goes right before that node (after the node's earlier
//! renames, each placed by the same rule).

use fixedbitset::FixedBitSet;
use graph_core::NodeId;

use super::Work;

impl Work<'_> {
    /// A topological order of the alive nodes (dependencies first).
    pub(crate) fn topological_order(&self) -> Vec<NodeId> {
        self.order_where(self.len(), |i| self.alive.contains(i))
    }

    /// A topological order of the alive nodes in `within`.
    pub(crate) fn topological_order_within(&self, within: &FixedBitSet) -> Vec<NodeId> {
        self.order_where(within.count_ones(..), |i| {
            within.contains(i) && self.alive.contains(i)
        })
    }

    /// The nodes of the order for which `keep(index)` holds; `capacity` is
    /// how many there are, or about.
    fn order_where(&self, capacity: usize, keep: impl Fn(usize) -> bool) -> Vec<NodeId> {
        let order = self.order_of(capacity, keep);
        debug_assert!(self.is_ordered(&order), "a reference comes later");
        order
    }

    /// Whether every node of `order` comes after those of its references
    /// that are in it.
    fn is_ordered(&self, order: &[NodeId]) -> bool {
        let mut position = vec![usize::MAX; self.node_count()];
        for (at, node) in order.iter().enumerate() {
            position[node.index()] = at;
        }
        order.iter().enumerate().all(|(at, &node)| {
            self.deps(node)
                .iter()
                .all(|dep| position[dep.index()] == usize::MAX || position[dep.index()] < at)
        })
    }

    fn order_of(&self, capacity: usize, keep: impl Fn(usize) -> bool) -> Vec<NodeId> {
        let mut order = Vec::with_capacity(capacity);
        if self.renamed_from.is_empty() {
            order.extend(self.order.iter().copied().filter(|n| keep(n.index())));
            return order;
        }
        // The nodes created from each node, in creation order (which is id
        // order), in compressed sparse rows: `created[start[n]..start[n + 1]]`.
        let n_nodes = self.node_count();
        let mut start = vec![0_u32; n_nodes + 1];
        for from in &self.renamed_from {
            start[from.index() + 1] += 1;
        }
        for i in 0..n_nodes {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut created = vec![NodeId::from_u32(0); self.renamed_from.len()];
        for (i, from) in self.renamed_from.iter().enumerate() {
            let at = &mut fill[from.index()];
            created[*at as usize] = NodeId::new(self.n_src + i);
            *at += 1;
        }
        drop(fill);
        // Each input node after the nodes created from it, each of those
        // after the nodes created from it in turn: a depth-first walk.
        let mut stack: Vec<(NodeId, u32)> = Vec::new();
        for &root in self.order.iter() {
            let i = root.index();
            if start[i] == start[i + 1] {
                if keep(i) {
                    order.push(root);
                }
                continue;
            }
            stack.push((root, start[i]));
            while let Some((node, next)) = stack.last_mut() {
                let (node, i) = (*node, node.index());
                if *next < start[i + 1] {
                    let child = created[*next as usize];
                    *next += 1;
                    stack.push((child, start[child.index()]));
                } else {
                    if keep(i) {
                        order.push(node);
                    }
                    stack.pop();
                }
            }
        }
        order
    }
}
