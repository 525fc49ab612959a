//! The same input gives the same placement, every time, for every strategy;
//! small cases are pinned as snapshots.

use crate::common;
use expect_test::{Expect, expect};
use graph_assign::{Assignment, Workers, assign, assign_greedy, assign_mars};
use graph_core::TaskGraph;
use graph_core::generate;

#[test]
fn repeated_runs_agree() {
    for (label, graph) in common::graphs() {
        let dag = common::topology(&graph);
        let workers = Workers::new(5).unwrap();
        assert_eq!(
            assign(dag, &workers, None, None).unwrap(),
            assign(dag, &workers, None, None).unwrap(),
            "{label}"
        );
        assert_eq!(
            assign_mars(dag, &workers).unwrap(),
            assign_mars(dag, &workers).unwrap(),
            "{label}"
        );
        assert_eq!(
            assign_greedy(dag, &workers, None, None).unwrap(),
            assign_greedy(dag, &workers, None, None).unwrap(),
            "{label}"
        );
    }
}

/// Prints each worker's tasks, by key.
fn show(graph: &TaskGraph, assignment: &Assignment) -> String {
    let mut res = String::new();
    for worker in 0..assignment.worker_count() {
        res.push_str(&format!("{worker}:"));
        for node in assignment.tasks_on(worker) {
            res.push_str(&format!(" {}", graph.key(node).python_str()));
        }
        res.push('\n');
    }
    res
}

fn check(graph: &TaskGraph, workers: usize, mars: Expect, ours: Expect) {
    let dag = common::topology(graph);
    let workers = Workers::new(workers).unwrap();
    mars.assert_eq(&show(graph, &assign_mars(dag, &workers).unwrap()));
    ours.assert_eq(&show(graph, &assign(dag, &workers, None, None).unwrap()));
}

#[test]
fn word_count_on_two_workers() {
    check(
        &generate::word_count(),
        2,
        expect![[r#"
            0: words nwords val3 count1 count2 count3 format1 format2 format3 print1 print2 print3
            1: val1 val2
        "#]],
        expect![[r#"
            0: words nwords val1 count1 format1 print1
            1: val2 val3 count2 count3 format2 format3 print2 print3
        "#]],
    );
}

#[test]
fn diamonds_on_two_workers() {
    check(
        &generate::diamonds(3),
        2,
        expect![[r#"
        0: ('d', 0, 0) ('d', 0, 1) ('d', 0, 2) ('d', 0, 3) ('d', 1, 0) ('d', 1, 1) ('d', 1, 2) ('d', 1, 3) ('d', 2, 0) ('d', 2, 1) ('d', 2, 2) ('d', 2, 3)
        1:
    "#]],
        expect![[r#"
        0: ('d', 0, 0) ('d', 0, 1) ('d', 0, 2) ('d', 0, 3) ('d', 1, 0) ('d', 1, 1)
        1: ('d', 1, 2) ('d', 1, 3) ('d', 2, 0) ('d', 2, 1) ('d', 2, 2) ('d', 2, 3)
    "#]],
    );
}
