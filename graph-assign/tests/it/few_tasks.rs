//! Graphs with fewer tasks than workers, and the empty graph: every task is
//! placed, on distinct workers where the strategy spreads them.

use crate::common;
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

#[test]
fn far_more_workers_than_tasks_use_the_roomiest_workers() {
    // 200 tasks on 200 000 workers, the last ones with more slots: the
    // placement uses at most 200 workers, those with the most slots, and
    // does work in the number of tasks (it used to take minutes).
    let graph = graph_core::generate::random_dag(200, 3);
    let dag = graph.topology().unwrap();
    let slots = (0..200_000_u32).map(|w| if w >= 199_800 { 2 } else { 1 });
    let workers = Workers::with_slots(slots).unwrap();
    let assignment = assign(dag, &workers, None, None).unwrap();
    common::assert_valid("assign", dag, &workers, &assignment);
    assert!(
        assignment.as_slice().iter().all(|&w| w >= 199_800),
        "the workers with two slots come first"
    );
}
