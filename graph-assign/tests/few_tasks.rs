//! Graphs with fewer tasks than workers, and the empty graph: every task is
//! placed, on distinct workers where the strategy spreads them.

mod common;

use graph_assign::{Metrics, Workers, assign, assign_greedy, assign_mars};
use graph_core::Topology;

#[test]
fn three_independent_tasks_on_eight_workers_go_to_three_workers() {
    let dag = Topology::from_edges(3, []).unwrap();
    let workers = Workers::new(8).unwrap();
    for (name, assignment) in [
        ("assign", assign(&dag, &workers, None, None).unwrap()),
        ("mars", assign_mars(&dag, &workers).unwrap()),
        ("greedy", assign_greedy(&dag, &workers, None, None).unwrap()),
    ] {
        common::assert_valid(name, &dag, &workers, &assignment);
        let busy = assignment
            .tasks_per_worker()
            .iter()
            .filter(|&&c| c > 0)
            .count();
        assert_eq!(busy, 3, "{name}: {:?}", assignment.as_slice());
        let metrics = common::metrics(&dag, &workers, &assignment);
        // One task on a worker whose share is 3/8 of a task.
        assert_eq!(metrics.imbalance, 8.0 / 3.0, "{name}");
    }
}

#[test]
fn a_chain_shorter_than_the_workers_is_placed() {
    let dag = Topology::from_edges(5, [(0, 1), (1, 2), (2, 3), (3, 4)]).unwrap();
    let workers = Workers::new(16).unwrap();
    let assignment = assign(&dag, &workers, None, None).unwrap();
    common::assert_valid("chain", &dag, &workers, &assignment);
    let metrics = Metrics::of(&dag, &workers, &assignment, None, None).unwrap();
    common::assert_balanced("chain", &workers, &metrics, None, 1.03);
}

#[test]
fn the_empty_graph_gives_an_empty_assignment() {
    let dag = Topology::from_edges(0, []).unwrap();
    let workers = Workers::new(4).unwrap();
    let assignment = assign(&dag, &workers, None, None).unwrap();
    assert!(assignment.is_empty());
    assert!(assign_mars(&dag, &workers).unwrap().is_empty());
    let metrics = common::metrics(&dag, &workers, &assignment);
    assert_eq!((metrics.edge_cut, metrics.imbalance), (0, 1.0));
}
