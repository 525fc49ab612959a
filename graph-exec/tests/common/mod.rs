//! Helpers shared by graph-exec's tests.

#![allow(dead_code, unreachable_pub)]

use graph_core::{Dag, Key, NodeId, TaskGraph, Topology};
use graph_exec::Request;

/// Every task that no task depends on, as a flat request.
pub fn leaves(graph: &TaskGraph) -> Request {
    Request::list(graph.leaf_keys().unwrap())
}

/// dask's `diagnostics` max pressure of running every task in `priority`
/// order: results held from their task until their last dependent.
pub fn max_pressure(dag: &Topology, priority: &[u32]) -> usize {
    let mut sequence: Vec<NodeId> = dag.node_ids().collect();
    sequence.sort_by_key(|n| priority[n.index()]);
    let mut remaining: Vec<usize> = dag.node_ids().map(|n| dag.dependents(n).len()).collect();
    let (mut held, mut peak) = (0_usize, 0_usize);
    for node in sequence {
        peak = peak.max(held);
        for &dep in dag.dependencies(node) {
            remaining[dep.index()] -= 1;
            if remaining[dep.index()] == 0 {
                held -= 1;
            }
        }
        if !dag.dependents(node).is_empty() {
            held += 1;
        }
    }
    peak
}

/// A topological order's positions as priorities (reversed Kahn order is not
/// needed: any valid order will do).
pub fn priorities_of(order: &[NodeId]) -> Vec<u32> {
    let mut priority = vec![0; order.len()];
    for (i, node) in order.iter().enumerate() {
        priority[node.index()] = i as u32;
    }
    priority
}

pub fn key(name: &str) -> Key {
    Key::from(name)
}
