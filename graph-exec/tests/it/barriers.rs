//! A scheduling topology with barrier nodes (m + n edges instead of m x n)
//! gives the same results; one that misses a dependency is an error, not a
//! hang or a panic.

use crate::common;
use graph_core::{TaskGraph, Term, Topology, generate};
use graph_exec::{
    Dynamic, Error, LocalExecutor, OpRegistry, Request, RunOptions, execute_sequential,
};

#[test]
fn barrier_schedule_gives_the_same_results() {
    let (m, n) = (20, 30);
    let graph = generate::shuffle(m, n);
    assert_eq!(graph.topology().unwrap().edge_count(), m * n);
    // Node m + n is the barrier: every mapper feeds it, it feeds every reducer.
    let barrier = m + n;
    let edges = (0..m)
        .map(|i| (i, barrier))
        .chain((m..m + n).map(|j| (barrier, j)));
    let schedule = Topology::from_edges(m + n + 1, edges).unwrap();
    assert_eq!(schedule.edge_count(), m + n);

    let registry = OpRegistry::<Dynamic>::builtins();
    let request = common::leaves(&graph);
    let oracle = execute_sequential(&graph, &registry, &request).unwrap();
    for threads in [1, 2, 4] {
        let options = RunOptions {
            schedule: Some(&schedule),
            ..RunOptions::default()
        };
        let run = LocalExecutor::with_threads(threads)
            .run(&graph, &registry, &request, &options)
            .unwrap();
        assert_eq!(run.output, oracle.output);
        assert_eq!(run.stats.tasks_run, m + n, "the barrier is not a task");
    }
}

#[test]
fn a_schedule_that_misses_a_dependency_is_an_error() {
    let graph = generate::shuffle(3, 2);
    // No edges at all: reducers may start before the mappers.
    let schedule = Topology::from_edges(5, []).unwrap();
    let options = RunOptions {
        schedule: Some(&schedule),
        priorities: Some(&[4, 4, 4, 0, 0]),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(1)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &common::leaves(&graph),
            &options,
        )
        .unwrap_err();
    assert!(matches!(err, Error::Unscheduled { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        "task ('reduce', 0) was scheduled before its input ('map', 0) was computed: the scheduling topology does not cover the graph's dependencies"
    );
    let small = Topology::from_edges(2, []).unwrap();
    let options = RunOptions {
        schedule: Some(&small),
        ..RunOptions::default()
    };
    let err = LocalExecutor::new()
        .run(
            &graph,
            &OpRegistry::builtins(),
            &common::leaves(&graph),
            &options,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the scheduling topology has 2 nodes, fewer than the graph's 5 tasks"
    );
}

#[test]
fn a_schedule_that_adds_a_task_the_request_does_not_need_is_an_error() {
    // `b` is not needed by `c`, but the schedule puts it before `c`: it was
    // never compiled, and is named rather than evaluated.
    let graph = TaskGraph::builder()
        .task("a", Term::lit(1))
        .task("b", Term::lit(2))
        .task("c", Term::call("inc", [Term::key("a")]))
        .build()
        .unwrap();
    let schedule = Topology::from_edges(3, [(0, 2), (1, 2)]).unwrap();
    let options = RunOptions {
        schedule: Some(&schedule),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(1)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("c"),
            &options,
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::NotNeeded { key } if *key == "b".into()),
        "{err}"
    );
}
