//! Rewriting a graph: references that rewrites add or remove show in the new
//! topology, a reference to a missing key or a new cycle is an error naming
//! the task, opaque tasks and metadata are kept, and the report counts.

use crate::common::{rules, term};
use graph_core::{Dag, Key, TaskGraph};
use graph_rewrite::{
    Error, RewriteReport, RewriteStrategy, StopReason, rewrite_graph, rewrite_graph_in_place,
};

fn graph() -> TaskGraph {
    TaskGraph::builder()
        .task("x", term("1"))
        .task("y", term("2"))
        .size(16)
        .task("z", term("mul(x, 0)"))
        .task("w", term("add(x, y)"))
        .cost(0.5)
        .opaque("o", [Key::from("w")])
        .build()
        .unwrap()
}

fn deps(graph: &TaskGraph, key: &str) -> Vec<String> {
    let topology = graph.topology().unwrap();
    let node = graph.node_id(&Key::from(key)).unwrap();
    topology
        .dependencies(node)
        .iter()
        .map(|&dep| graph.key(dep).to_string())
        .collect()
}

#[test]
fn references_added_and_removed() {
    let rs = rules(&[("mul(?a, 0)", "0"), ("add(?a, ?b)", "add(?a, ?b, z)")]);
    let graph = graph();
    assert_eq!(deps(&graph, "z"), ["'x'"]);
    let (out, report) = rewrite_graph(&graph, &rs, RewriteStrategy::BottomUp).unwrap();
    assert_eq!(deps(&out, "z"), Vec::<String>::new());
    assert_eq!(deps(&out, "w"), ["'x'", "'y'", "'z'"]);
    assert_eq!(
        report,
        RewriteReport {
            tasks: 4,
            changed: 2,
            steps: 2,
            step_limited: 0,
            stop: None
        }
    );
    assert_eq!(report.to_string(), "2 of 4 tasks changed (2 rewrites)");
    // Keys, order, metadata and opaque tasks are kept.
    let keys: Vec<String> = out.keys().map(ToString::to_string).collect();
    assert_eq!(keys, ["'x'", "'y'", "'z'", "'w'", "'o'"]);
    assert_eq!(out.get(&Key::from("y")).unwrap().size, Some(16));
    assert_eq!(out.get(&Key::from("w")).unwrap().cost, Some(0.5));
    assert_eq!(out.get(&Key::from("o")), graph.get(&Key::from("o")));
}

#[test]
fn missing_key_is_an_error_naming_it() {
    let rs = rules(&[("add(?a, ?b)", "add(?a, ?b, v)")]);
    let err = rewrite_graph(&graph(), &rs, RewriteStrategy::BottomUp).unwrap_err();
    assert!(matches!(&err, Error::MissingKey { key, missing }
        if *key == Key::from("w") && *missing == Key::from("v")));
    assert_eq!(
        err.to_string(),
        "task 'w': rewritten term refers to missing key 'v'"
    );
}

#[test]
fn new_cycle_is_an_error_and_in_place_is_undone() {
    // x's new term refers to w, which depends on x.
    let rs = rules(&[("1", "inc(w)")]);
    let mut graph = graph();
    let before = graph.clone();
    let err = rewrite_graph_in_place(&mut graph, &rs, RewriteStrategy::BottomUp).unwrap_err();
    assert!(
        matches!(err, Error::Graph(graph_core::Error::Cycle { .. })),
        "{err}"
    );
    assert!(
        err.to_string().starts_with("rewritten graph: cycle: "),
        "{err}"
    );
    assert!(graph == before);
}

#[test]
fn unchanged_rewrites_are_not_counted_as_changes() {
    let rs = rules(&[("add(?a, ?b)", "add(?a, ?b)")]);
    let (out, report) = rewrite_graph(&graph(), &rs, RewriteStrategy::BottomUp).unwrap();
    assert_eq!((report.changed, report.steps), (0, 1));
    assert!(out == graph());
}

#[test]
fn fixpoint_report() {
    let rs = rules(&[("mul(?a, 0)", "0"), ("add(?a, ?b)", "add(?b, ?a)")]);
    let (_, report) =
        rewrite_graph(&graph(), &rs, RewriteStrategy::Fixpoint { max_steps: 3 }).unwrap();
    assert_eq!(
        (report.changed, report.steps, report.step_limited),
        (2, 4, 1)
    );
    assert_eq!(report.stop, Some(StopReason::StepLimit(3)));
    assert_eq!(
        report.to_string(),
        "2 of 4 tasks changed (4 rewrites); 1 tasks stopped at the step limit of 3"
    );
    let rs = rules(&[("mul(?a, 0)", "0")]);
    let (_, report) =
        rewrite_graph(&graph(), &rs, RewriteStrategy::Fixpoint { max_steps: 3 }).unwrap();
    assert_eq!(report.stop, Some(StopReason::Saturated));
}
