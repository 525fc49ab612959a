//! Helpers shared by the integration tests: graphs of every shape, and the
//! checks every placement must pass.

#![allow(dead_code, unreachable_pub)]

use graph_assign::{Assignment, Metrics, Workers};
use graph_core::generate::Shape;
use graph_core::{Dag, TaskGraph, Topology};

/// Every generator shape at a few sizes and seeds, with a label.
pub fn graphs() -> Vec<(String, TaskGraph)> {
    let mut res = Vec::new();
    for shape in Shape::ALL {
        for (tasks, seed) in [(50, 1), (700, 2), (3_000, 3)] {
            res.push((
                format!("{} ~{tasks} seed {seed}", shape.name()),
                shape.generate(tasks, seed),
            ));
        }
    }
    res
}

/// The topology of a generated graph.
pub fn topology(graph: &TaskGraph) -> &Topology {
    graph.topology().expect("generated graphs are acyclic")
}

/// Asserts that every task is placed once, on an existing worker.
pub fn assert_valid(label: &str, dag: &impl Dag, workers: &Workers, assignment: &Assignment) {
    assert_eq!(
        assignment.len(),
        dag.node_count(),
        "{label}: one worker per task"
    );
    assert_eq!(assignment.worker_count(), workers.count(), "{label}");
    for (node, &w) in assignment.as_slice().iter().enumerate() {
        assert!(
            (w as usize) < workers.count(),
            "{label}: task {node} on worker {w} of {}",
            workers.count()
        );
    }
    let per_worker: usize = assignment.tasks_per_worker().iter().sum();
    assert_eq!(
        per_worker,
        dag.node_count(),
        "{label}: each task counted once"
    );
}

/// The metrics without sizes or costs.
pub fn metrics(dag: &impl Dag, workers: &Workers, assignment: &Assignment) -> Metrics {
    Metrics::of(dag, workers, assignment, None, None).expect("assignment fits the graph")
}

/// The balance bound `assign` promises: every load at most
/// `max(bound × share, share + heaviest task)`.
pub fn assert_balanced(
    label: &str,
    workers: &Workers,
    metrics: &Metrics,
    costs: Option<&[f64]>,
    bound: f64,
) {
    let total: f64 = metrics.loads.iter().sum();
    let heaviest = costs.map_or(1.0, |c| c.iter().copied().fold(0.0, f64::max));
    for (w, &load) in metrics.loads.iter().enumerate() {
        let share = total * f64::from(workers.slots(w)) / workers.total_slots() as f64;
        let limit = (share * bound).max(share + heaviest) + 1e-9 * total;
        assert!(
            load <= limit,
            "{label}: worker {w} has load {load} > {limit}"
        );
    }
}
