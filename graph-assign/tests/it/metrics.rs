//! The metrics: edge cut counts cut edges, transfer bytes weighs them by the
//! producer's size, imbalance is the largest load over its share.

use graph_assign::{
    Assignment, Metrics, Workers, costs_of, edge_cut, imbalance, sizes_of, transfer_bytes,
};
use graph_core::{TaskGraph, Term, Topology};

#[test]
fn edge_cut_counts_edges_across_workers() {
    // A diamond 0 -> {1, 2} -> 3.
    let dag = Topology::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    let cases = [
        ([0, 0, 0, 0], 0),
        ([0, 1, 0, 0], 2),
        ([0, 1, 1, 0], 4),
        ([1, 1, 1, 0], 2),
    ];
    for (workers, cut) in cases {
        let assignment = Assignment::from_vec(workers.to_vec(), 2).unwrap();
        assert_eq!(edge_cut(&dag, &assignment).unwrap(), cut, "{workers:?}");
        assert_eq!(transfer_bytes(&dag, &assignment, None).unwrap(), cut);
    }
}

#[test]
fn transfer_bytes_weigh_each_cut_edge_by_its_producer() {
    let dag = Topology::from_edges(4, [(0, 1), (0, 2), (1, 3), (2, 3)]).unwrap();
    let sizes = [100, 20, 3, 999];
    let assignment = Assignment::from_vec(vec![0, 1, 1, 0], 2).unwrap();
    // 0 -> 1, 0 -> 2 (100 each), 1 -> 3 (20), 2 -> 3 (3).
    assert_eq!(
        transfer_bytes(&dag, &assignment, Some(&sizes)).unwrap(),
        223
    );
}

#[test]
fn imbalance_is_the_largest_load_over_its_share() {
    let assignment = Assignment::from_vec(vec![0, 0, 0, 1, 2, 2], 3).unwrap();
    assert_eq!(
        imbalance(&Workers::new(3).unwrap(), &assignment, None).unwrap(),
        1.5
    );
    let slots = Workers::with_slots([3, 1, 2]).unwrap();
    assert_eq!(imbalance(&slots, &assignment, None).unwrap(), 1.0);
    let costs = [1.0, 1.0, 1.0, 3.0, 1.5, 1.5];
    let even = imbalance(&Workers::new(3).unwrap(), &assignment, Some(&costs)).unwrap();
    assert_eq!(even, 1.0);
}

#[test]
fn metrics_read_sizes_and_costs_from_the_graph() {
    let graph = TaskGraph::builder()
        .task("x", Term::lit(1))
        .size(64)
        .cost(2.0)
        .task("y", Term::call("inc", [Term::key("x")]))
        .task("z", Term::call("inc", [Term::key("y")]))
        .size(8)
        .build()
        .unwrap();
    let dag = graph.topology().unwrap();
    let workers = Workers::new(2).unwrap();
    let assignment = Assignment::from_vec(vec![0, 1, 1], 2).unwrap();
    let sizes = sizes_of(&graph);
    let costs = costs_of(&graph).unwrap();
    assert_eq!(sizes, [64, 1, 8]);
    assert_eq!(costs, [2.0, 1.0, 1.0]);
    let metrics = Metrics::of(dag, &workers, &assignment, Some(&sizes), Some(&costs)).unwrap();
    assert_eq!(
        metrics,
        Metrics {
            edge_cut: 1,
            transfer_bytes: 64,
            imbalance: 1.0,
            loads: vec![2.0, 2.0],
        }
    );
    let plain = TaskGraph::builder()
        .task("a", Term::lit(0))
        .build()
        .unwrap();
    assert_eq!(costs_of(&plain), None);
}
