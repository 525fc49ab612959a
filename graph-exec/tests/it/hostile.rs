//! Values a hostile graph builds at run time: nested deeper than any command
//! could print, send or store, or larger than memory. Each ends its run with
//! an error naming the task; nothing crashes, printing, sending or dropping
//! a value within the limit.

use graph_core::{Key, TaskGraph, Term};
use graph_exec::{
    Dynamic, Error, LocalExecutor, OpRegistry, Request, RunOptions, Tagged, TaskValue,
};

/// `('wrap', 0) = 0`, and each next task the list of the one before.
fn wraps(n: usize) -> TaskGraph {
    let mut graph = TaskGraph::new();
    graph.insert(("wrap", 0), Term::lit(0)).unwrap();
    for i in 1..n {
        graph
            .insert(
                ("wrap", i as i64),
                Term::call("list", [Term::key(("wrap", i as i64 - 1))]),
            )
            .unwrap();
    }
    graph
}

#[test]
fn a_value_nested_past_the_limit_names_its_task() {
    let graph = wraps(8_300);
    let last = graph.keys().last().unwrap().clone();
    let err = LocalExecutor::with_threads(2)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::Key(last),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::TooDeep { key, .. } if *key == Key::from(("wrap", 8193))),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "task ('wrap', 8193): its result nests more than 8192 levels deep (lists within lists)"
    );
}

#[test]
fn a_value_nested_to_the_limit_prints_travels_and_drops() {
    // On a thread with the default 2 MiB stack: nothing here recurses.
    std::thread::spawn(|| {
        let graph = wraps(8_193);
        let last = graph.keys().last().unwrap().clone();
        let run = LocalExecutor::with_threads(1)
            .run(
                &graph,
                &OpRegistry::builtins(),
                &Request::Key(last),
                &RunOptions::default(),
            )
            .unwrap();
        let value = run.output.value().unwrap().clone();
        assert_eq!(value.nesting(usize::MAX), 8_192);
        let text = value.to_string();
        assert_eq!(text, format!("{}0{}", "[".repeat(8_192), "]".repeat(8_192)));
        let bytes = bincode_roundtrip(&value);
        assert_eq!(bytes, value);
    })
    .join()
    .unwrap();
}

/// A value sent as `Tagged` through serde and back.
fn bincode_roundtrip(value: &Dynamic) -> Dynamic {
    let json = serde_json::to_vec(&Tagged(value.clone())).unwrap();
    serde_json::from_slice::<Tagged>(&json).unwrap().0
}

#[test]
fn a_million_nested_lists_drop_without_recursion() {
    std::thread::spawn(|| {
        let mut value = Dynamic::Int(0);
        for _ in 0..1_000_000 {
            value = Dynamic::from(vec![value]);
        }
        drop(value);
    })
    .join()
    .unwrap();
}

#[test]
fn a_value_larger_than_the_limit_names_its_task() {
    // Each task doubles the string before it: 2^45 bytes at the end.
    let mut graph = TaskGraph::new();
    graph.insert(("s", 0), Term::lit("ab")).unwrap();
    for i in 1..45 {
        let prev = Term::key(("s", i - 1));
        graph
            .insert(("s", i), Term::call("add", [prev.clone(), prev]))
            .unwrap();
    }
    let registry = OpRegistry::builtins_with_value_limit(1 << 20);
    let err = LocalExecutor::with_threads(2)
        .run(
            &graph,
            &registry,
            &Request::from(("s", 44)),
            &RunOptions::default(),
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "task ('s', 20) failed in op `add`: add(): the result would take 2097152 bytes, more than the limit of 1048576 bytes for one value",
        "{err}"
    );
}

#[test]
fn run_order_refuses_priorities_of_another_graph() {
    let sched = graph_core::Topology::from_edges(3, [(0, 1), (1, 2)]).unwrap();
    let err = graph_exec::scheduler::run_order(&sched, &[true; 3], &[0, 1]).unwrap_err();
    assert_eq!(err.to_string(), "2 priorities given for 3 nodes");
    let err = graph_exec::scheduler::run_order(&sched, &[true; 4], &[0, 1, 2]).unwrap_err();
    assert_eq!(err.to_string(), "4 priorities given for 3 nodes");
    assert_eq!(
        graph_exec::scheduler::run_order(&sched, &[true; 3], &[2, 1, 0]).unwrap(),
        [0, 1, 2]
    );
}
