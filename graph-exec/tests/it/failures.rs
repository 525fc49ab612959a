//! The first failure stops the run and names the task and op; panics are
//! caught; missing ops are all reported before anything runs; cancelling
//! works; nothing hangs.

use crate::common;
use std::sync::atomic::{AtomicUsize, Ordering};

use graph_core::{CancelHandle, Key, TaskGraph, Term, generate};
use graph_exec::{
    Callbacks, Dynamic, Error, LocalExecutor, OpRegistry, Request, RunOptions, execute_sequential,
};

/// A wide graph: 200 independent chains of 20, each ending in a sink, one of
/// whose middle tasks calls `op` instead of `inc`.
fn wide_graph_with(op: &str) -> TaskGraph {
    let mut graph = TaskGraph::new();
    for c in 0..200_i64 {
        graph.insert(("x", c, 0), Term::lit(c)).unwrap();
        for i in 1..20_i64 {
            let name = if c == 137 && i == 10 { op } else { "inc" };
            graph
                .insert(("x", c, i), Term::call(name, [Term::key(("x", c, i - 1))]))
                .unwrap();
        }
    }
    let ends = (0..200_i64).map(|c| Term::key(("x", c, 19)));
    graph
        .insert("total", Term::call("sum", [Term::list(ends)]))
        .unwrap();
    graph
}

#[derive(Default)]
struct Count {
    started: AtomicUsize,
    finished_failed: AtomicUsize,
}

impl Callbacks for Count {
    fn pretask(&self, _key: &Key) {
        self.started.fetch_add(1, Ordering::Relaxed);
    }
    fn finish(&self, failed: bool) {
        if failed {
            self.finished_failed.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn registry_with_failures() -> OpRegistry<Dynamic> {
    let mut registry = OpRegistry::builtins();
    registry.register("fail", |_| Err("this task always fails".into()));
    registry.register("boom", |_| panic!("boom went the op"));
    registry
}

#[test]
fn an_error_stops_the_run_and_names_the_task() {
    let graph = wide_graph_with("fail");
    for threads in [1, 2, 4] {
        let count = Count::default();
        let options = RunOptions {
            callbacks: Some(&count),
            ..RunOptions::default()
        };
        let err = LocalExecutor::with_threads(threads)
            .run(
                &graph,
                &registry_with_failures(),
                &Request::from("total"),
                &options,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "task ('x', 137, 10) failed in op `fail`: this task always fails"
        );
        assert!(matches!(
            err,
            Error::Task {
                panicked: false,
                ..
            }
        ));
        assert!(
            count.started.load(Ordering::Relaxed) < graph.len(),
            "the run stopped early"
        );
        assert_eq!(count.finished_failed.load(Ordering::Relaxed), 1);
    }
    let err =
        execute_sequential(&graph, &registry_with_failures(), &Request::from("total")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task ('x', 137, 10) failed in op `fail`: this task always fails"
    );
}

#[test]
fn a_panic_is_caught_and_reported() {
    let graph = wide_graph_with("boom");
    for threads in [1, 4] {
        let err = LocalExecutor::with_threads(threads)
            .run(
                &graph,
                &registry_with_failures(),
                &Request::from("total"),
                &RunOptions::default(),
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "task ('x', 137, 10) failed in op `boom`: panicked: boom went the op"
        );
        assert!(matches!(err, Error::Task { panicked: true, .. }));
    }
}

#[test]
fn op_errors_carry_python_like_messages() {
    let graph = TaskGraph::builder()
        .task("zero", Term::lit(0))
        .task("x", Term::call("div", [Term::lit(1), Term::key("zero")]))
        .build()
        .unwrap();
    let err = execute_sequential(&graph, &OpRegistry::builtins(), &Request::from("x")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task 'x' failed in op `div`: division by zero"
    );
}

#[test]
fn missing_ops_are_all_named_before_anything_runs() {
    let graph = TaskGraph::builder()
        .task("a", Term::lit(1))
        .task("b", Term::call("frobnicate", [Term::key("a")]))
        .task(
            ("c", 1),
            Term::call("inc", [Term::call("twiddle", [Term::key("b")])]),
        )
        .task("d", Term::call("frobnicate", [Term::key(("c", 1))]))
        .build()
        .unwrap();
    let count = Count::default();
    let options = RunOptions {
        callbacks: Some(&count),
        ..RunOptions::default()
    };
    let err = LocalExecutor::new()
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from("d"),
            &options,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown ops: `frobnicate` (called by task 'b'), `twiddle` (called by task ('c', 1))"
    );
    assert_eq!(count.started.load(Ordering::Relaxed), 0);
}

#[test]
fn bad_requests_and_opaque_tasks_are_refused() {
    let graph = generate::chain(3);
    let err =
        execute_sequential(&graph, &OpRegistry::builtins(), &Request::from("nope")).unwrap_err();
    assert_eq!(err.to_string(), "requested key 'nope' is not in the graph");
    let opaque = TaskGraph::builder()
        .opaque("a", [])
        .task("b", Term::key("a"))
        .build()
        .unwrap();
    let err =
        execute_sequential(&opaque, &OpRegistry::builtins(), &Request::from("b")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task 'a' is opaque (it has only `deps`) and cannot be run"
    );
    let err = LocalExecutor::new()
        .run(
            &graph,
            &OpRegistry::builtins(),
            &Request::from(("chain", 2)),
            &RunOptions {
                priorities: Some(&[0, 1]),
                ..RunOptions::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.to_string(), "2 priorities given for 3 nodes");
}

/// Cancels the run once `after` tasks have started.
struct CancelAfter {
    handle: CancelHandle,
    after: usize,
    started: AtomicUsize,
}

impl Callbacks for CancelAfter {
    fn pretask(&self, _key: &Key) {
        if self.started.fetch_add(1, Ordering::Relaxed) + 1 == self.after {
            self.handle.cancel();
        }
    }
}

#[test]
fn a_cancel_handle_stops_the_run() {
    let graph = generate::random_dag(5_000, 4);
    let handle = CancelHandle::new();
    let cancel = CancelAfter {
        handle: handle.clone(),
        after: 100,
        started: AtomicUsize::new(0),
    };
    let options = RunOptions {
        callbacks: Some(&cancel),
        cancel: Some(handle),
        ..RunOptions::default()
    };
    let err = LocalExecutor::with_threads(2)
        .run(
            &graph,
            &OpRegistry::builtins(),
            &common::leaves(&graph),
            &options,
        )
        .unwrap_err();
    assert!(matches!(err, Error::Cancelled), "{err}");
    assert!(cancel.started.load(Ordering::Relaxed) < 200);
}
