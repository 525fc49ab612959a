//! Forest-optimal orders (Sethi-Ullman / Liu labels), the lower bound they
//! prove, and the simple baselines (depth-first post-order, breadth-first).

use graph_core::{Dag, NodeId, Topology};

/// The shape of a graph, as far as the exact forest results go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Forest {
    /// Every task has at most one dependent.
    In,
    /// Every task has at most one dependency.
    Out,
    /// Neither.
    No,
}

pub(crate) fn forest_kind(topology: &Topology) -> Forest {
    if topology
        .node_ids()
        .all(|node| topology.dependents(node).len() <= 1)
    {
        Forest::In
    } else if topology
        .node_ids()
        .all(|node| topology.dependencies(node).len() <= 1)
    {
        Forest::Out
    } else {
        Forest::No
    }
}

/// The need of each node when its dependencies are treated as the children of
/// a tree: the peak pressure of computing its subtree, children in decreasing
/// need. Exact for in-forests; a heuristic (shared inputs counted once per
/// consumer, saturating) elsewhere. Also returns each node's dependencies in
/// the order that achieves it, as one CSR-shaped array.
fn in_needs(topology: &Topology, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<NodeId>) {
    let n = topology.node_count();
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for node in topology.node_ids() {
        offsets.push(offsets[node.index()] + topology.dependencies(node).len() as u32);
    }
    let mut children = vec![NodeId::from_u32(0); topology.edge_count()];
    for &v in topology.topological_order() {
        let vi = v.index();
        let slot = &mut children[offsets[vi] as usize..offsets[vi + 1] as usize];
        slot.copy_from_slice(topology.dependencies(v));
        slot.sort_unstable_by(|&a, &b| {
            need[b.index()]
                .cmp(&need[a.index()])
                .then(rank[a.index()].cmp(&rank[b.index()]))
        });
        let mut cost = slot.len() as u64;
        for (i, &c) in slot.iter().enumerate() {
            cost = cost.max((i as u64).saturating_add(need[c.index()]));
        }
        need[vi] = cost;
    }
    (need, offsets, children)
}

/// The mirror of [`in_needs`] for out-forests: each node's dependents with the
/// neediest last (it is the one that releases the parent).
fn out_needs(topology: &Topology, rank: &[u32]) -> (Vec<u64>, Vec<u32>, Vec<NodeId>) {
    let n = topology.node_count();
    let mut need = vec![0_u64; n];
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    for node in topology.node_ids() {
        offsets.push(offsets[node.index()] + topology.dependents(node).len() as u32);
    }
    let mut children = vec![NodeId::from_u32(0); offsets[n] as usize];
    for &v in topology.topological_order().iter().rev() {
        let vi = v.index();
        let slot = &mut children[offsets[vi] as usize..offsets[vi + 1] as usize];
        slot.copy_from_slice(topology.dependents(v));
        slot.sort_unstable_by(|&a, &b| {
            need[a.index()]
                .cmp(&need[b.index()])
                .then(rank[a.index()].cmp(&rank[b.index()]))
        });
        need[vi] = match slot.split_last() {
            None => 0,
            Some((&last, rest)) => {
                let others = rest.iter().map(|&c| need[c.index()]).max().unwrap_or(0);
                1.max(need[last.index()]).max(others.saturating_add(1))
            }
        };
    }
    (need, offsets, children)
}

/// Nodes without dependents, by ascending tie-break rank.
fn sinks_by_rank(topology: &Topology, rank: &[u32]) -> Vec<NodeId> {
    let mut sinks: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependents(node).is_empty())
        .collect();
    sinks.sort_unstable_by_key(|&node| rank[node.index()]);
    sinks
}

/// Depth-first post-order from each sink in turn, children in the order of
/// `children[offsets[v]..offsets[v + 1]]`. Returns priorities.
fn post_order(
    topology: &Topology,
    sinks: &[NodeId],
    offsets: &[u32],
    children: &[NodeId],
) -> Vec<u32> {
    let n = topology.node_count();
    let mut prio = vec![u32::MAX; n];
    let mut entered = vec![false; n];
    let mut next = 0_u32;
    let mut stack: Vec<(NodeId, u32)> = Vec::new();
    for &s in sinks {
        if entered[s.index()] {
            continue;
        }
        entered[s.index()] = true;
        stack.push((s, offsets[s.index()]));
        while let Some(top) = stack.last_mut() {
            let (v, cursor) = *top;
            if cursor < offsets[v.index() + 1] {
                top.1 += 1;
                let c = children[cursor as usize];
                if !entered[c.index()] {
                    entered[c.index()] = true;
                    stack.push((c, offsets[c.index()]));
                }
            } else {
                stack.pop();
                prio[v.index()] = next;
                next += 1;
            }
        }
    }
    prio
}

/// Pre-order of an out-forest from each root in turn.
fn pre_order(topology: &Topology, rank: &[u32], offsets: &[u32], children: &[NodeId]) -> Vec<u32> {
    let n = topology.node_count();
    let mut roots: Vec<NodeId> = topology
        .node_ids()
        .filter(|&node| topology.dependencies(node).is_empty())
        .collect();
    roots.sort_unstable_by_key(|&node| rank[node.index()]);
    let mut prio = vec![u32::MAX; n];
    let mut next = 0_u32;
    let mut stack = Vec::new();
    for &r in &roots {
        stack.push(r);
        while let Some(v) = stack.pop() {
            let vi = v.index();
            prio[vi] = next;
            next += 1;
            let slot = &children[offsets[vi] as usize..offsets[vi + 1] as usize];
            stack.extend(slot.iter().rev());
        }
    }
    prio
}

/// The `TreeOptimal` strategy: Sethi-Ullman post-order on in-forests, its
/// mirror on out-forests, and the need-ordered post-order elsewhere.
pub(crate) fn tree_optimal(topology: &Topology, rank: &[u32]) -> Vec<u32> {
    match forest_kind(topology) {
        Forest::Out => {
            let (_, offsets, children) = out_needs(topology, rank);
            pre_order(topology, rank, &offsets, &children)
        }
        Forest::In | Forest::No => {
            let (_, offsets, children) = in_needs(topology, rank);
            let sinks = sinks_by_rank(topology, rank);
            post_order(topology, &sinks, &offsets, &children)
        }
    }
}

/// Plain depth-first post-order: sinks by rank, dependencies as listed.
pub(crate) fn depth_first(topology: &Topology, rank: &[u32]) -> Vec<u32> {
    let n = topology.node_count();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0_u32);
    let mut children = Vec::with_capacity(topology.edge_count());
    for node in topology.node_ids() {
        children.extend_from_slice(topology.dependencies(node));
        offsets.push(children.len() as u32);
    }
    let sinks = sinks_by_rank(topology, rank);
    post_order(topology, &sinks, &offsets, &children)
}

/// Breadth-first: Kahn's order with a first-in-first-out queue.
pub(crate) fn breadth_first(topology: &Topology) -> Vec<u32> {
    let mut prio = vec![0_u32; topology.node_count()];
    for (step, &v) in topology.topological_order().iter().enumerate() {
        prio[v.index()] = step as u32;
    }
    prio
}

/// The proven lower bound on max pressure (see [`crate::lower_bound`]).
pub(crate) fn lower_bound(topology: &Topology) -> u32 {
    let n = topology.node_count();
    let rank: Vec<u32> = (0..n as u32).collect();
    let exact = match forest_kind(topology) {
        Forest::In => Some(in_needs(topology, &rank).0),
        Forest::Out => Some(out_needs(topology, &rank).0),
        Forest::No => None,
    };
    match exact {
        Some(need) => need.into_iter().max().unwrap_or(0).min(u64::from(u32::MAX)) as u32,
        None => topology
            .node_ids()
            .map(|node| topology.dependencies(node).len() as u32)
            .max()
            .unwrap_or(0),
    }
}
