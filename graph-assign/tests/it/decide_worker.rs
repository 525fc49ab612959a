//! dask.distributed's `decide_worker`: among the workers holding inputs, the
//! one that can start the task earliest; ties to the least loaded; tasks
//! without inputs round-robin over idle workers.

use graph_assign::{ClusterState, Workers, assign_greedy, decide_worker, sizes_of};
use graph_core::{TaskGraph, Term};

fn cluster(k: usize) -> ClusterState {
    ClusterState::new(&Workers::new(k).unwrap())
}

#[test]
fn the_worker_with_most_input_bytes_wins_when_all_are_idle() {
    let c = cluster(4);
    assert_eq!(decide_worker(&c, &[(1, 10), (3, 90), (1, 20)]), 3);
    assert_eq!(decide_worker(&c, &[(1, 60), (3, 90), (1, 40)]), 1);
}

#[test]
fn only_workers_holding_inputs_are_candidates() {
    let mut c = cluster(3);
    c.place(2, 100.0, 5);
    // Worker 0 is idle but holds nothing; the busy holder still wins.
    assert_eq!(decide_worker(&c, &[(2, 5)]), 2);
}

#[test]
fn a_busy_holder_loses_to_an_idle_one_when_moving_data_is_cheap() {
    let mut c = cluster(2).with_bandwidth(1_000.0);
    c.place(0, 3.0, 0);
    // Worker 1 must fetch 2_000 bytes (2 s) but worker 0 is busy for 3 s.
    assert_eq!(decide_worker(&c, &[(0, 2_000), (1, 1)]), 1);
    // Fetching 4_000 bytes (4 s) is slower than waiting.
    assert_eq!(decide_worker(&c, &[(0, 4_000), (1, 1)]), 0);
}

#[test]
fn slots_divide_occupancy() {
    let mut c = ClusterState::new(&Workers::with_slots([4, 1]).unwrap()).with_bandwidth(1.0);
    c.place(0, 4.0, 0);
    c.place(1, 2.0, 0);
    // Worker 0: 4 s over 4 slots = 1 s; worker 1: 2 s. Equal inputs.
    assert_eq!(decide_worker(&c, &[(0, 1), (1, 1)]), 0);
}

#[test]
fn ties_go_to_the_worker_holding_fewer_bytes_then_the_lowest_index() {
    let mut c = cluster(3);
    c.place(0, 0.0, 500);
    c.place(1, 0.0, 100);
    c.place(2, 0.0, 100);
    // Equal start times on all three; worker 0 holds the most.
    assert_eq!(decide_worker(&c, &[(0, 7), (1, 7), (2, 7)]), 1);
}

#[test]
fn tasks_without_inputs_go_round_robin_over_idle_workers() {
    let mut c = cluster(3);
    let mut picks = Vec::new();
    for _ in 0..3 {
        let w = decide_worker(&c, &[]);
        picks.push(w);
        c.place(w, 1.0, 1);
    }
    assert_eq!(picks, [0, 1, 2]);
    // None idle now: the least occupied.
    c.place(0, 5.0, 0);
    c.place(2, 1.0, 0);
    assert_eq!(decide_worker(&c, &[]), 1);
}

#[test]
fn the_greedy_placement_follows_sizes_from_metadata() {
    // a (big) and b (small) start on different workers; c reads both and
    // goes where the big input is.
    let graph = TaskGraph::builder()
        .task("a", Term::lit(1))
        .size(1_000_000_000)
        .task("b", Term::lit(2))
        .size(10)
        .task("c", Term::call("add", [Term::key("a"), Term::key("b")]))
        .build()
        .unwrap();
    let sizes = sizes_of(&graph);
    let dag = graph.topology().unwrap();
    let assignment = assign_greedy(dag, &Workers::new(2).unwrap(), Some(&sizes), None).unwrap();
    assert_eq!(assignment.as_slice(), [0, 1, 0]);
}
