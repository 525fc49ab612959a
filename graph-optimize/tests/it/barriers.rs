//! `insert_barriers`: complete bipartite blocks go through one barrier node;
//! the tracked edge count drops from m x n to m + n, and running tasks in
//! the barrier topology's order gives the same results.

use crate::common::Evaluator;
use graph_core::generate::{random_dag, shuffle, shuffle_split, tree};
use graph_core::{Dag, NodeId, TaskGraph};
use graph_optimize::insert_barriers;

/// Runs the graph in the order of a scheduling topology: every task's data
/// dependencies must be done before it runs, and its value must be what it
/// is without barriers.
fn run_in_order(graph: &TaskGraph, order: &[NodeId], is_barrier: impl Fn(NodeId) -> bool) {
    let topology = graph.topology().unwrap();
    let mut done = vec![false; graph.len()];
    let (plain, scheduled) = (Evaluator::new(graph), Evaluator::new(graph));
    for &node in order {
        if is_barrier(node) {
            continue;
        }
        for dep in topology.dependencies(node) {
            assert!(
                done[dep.index()],
                "{} ran before its input {}",
                graph.key(node),
                graph.key(*dep)
            );
        }
        let key = graph.key(node);
        assert_eq!(scheduled.get(key), plain.get(key), "{key}");
        done[node.index()] = true;
    }
    assert!(done.iter().all(|&d| d));
}

#[test]
fn a_shuffle_goes_through_one_barrier() {
    for (m, n) in [(3, 3), (8, 6), (16, 16), (40, 7)] {
        let graph = shuffle(m, n);
        let topology = graph.topology().unwrap();
        assert_eq!(topology.edge_count(), m * n);
        let barriers = insert_barriers(topology, 9).unwrap();
        assert_eq!(barriers.blocks.len(), 1);
        assert_eq!(barriers.topology.edge_count(), m + n);
        assert_eq!(barriers.topology.node_count(), m + n + 1);
        let barrier = NodeId::new(m + n);
        assert!(barriers.is_barrier(barrier));
        let block = barriers.block(barrier).unwrap();
        assert_eq!((block.producers.len(), block.consumers.len()), (m, n));
        assert_eq!(barriers.topology.dependents(barrier).len(), n);
        run_in_order(&graph, barriers.topology.topological_order(), |node| {
            barriers.is_barrier(node)
        });
    }
}

#[test]
fn small_blocks_and_partial_blocks_are_left_alone() {
    // Below the threshold.
    let graph = shuffle(4, 4);
    let barriers = insert_barriers(graph.topology().unwrap(), 17).unwrap();
    assert!(barriers.blocks.is_empty());
    assert_eq!(barriers.topology.edge_count(), 16);
    // 2 x 2 saves nothing.
    let graph = shuffle(2, 2);
    let barriers = insert_barriers(graph.topology().unwrap(), 1).unwrap();
    assert!(barriers.blocks.is_empty());
    // A split shuffle's outputs each read their own pieces: no block.
    let graph = shuffle_split(6, 6);
    let barriers = insert_barriers(graph.topology().unwrap(), 4).unwrap();
    assert!(barriers.blocks.is_empty());
    assert_eq!(
        barriers.topology.edge_count(),
        graph.topology().unwrap().edge_count()
    );
}

#[test]
fn other_edges_are_kept_and_results_unchanged() {
    for graph in [tree(64, 4), random_dag(300, 5), shuffle(10, 12)] {
        let topology = graph.topology().unwrap();
        let barriers = insert_barriers(topology, 4).unwrap();
        let saved: usize = barriers
            .blocks
            .iter()
            .map(|b| {
                let (m, n) = (b.producers.len(), b.consumers.len());
                m * n - (m + n)
            })
            .sum();
        assert_eq!(
            barriers.topology.edge_count() + saved,
            topology.edge_count()
        );
        run_in_order(&graph, barriers.topology.topological_order(), |node| {
            barriers.is_barrier(node)
        });
    }
}
