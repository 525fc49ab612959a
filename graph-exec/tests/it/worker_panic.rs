//! A panic in a worker thread outside any task ends the run with an error,
//! at once: the other workers are woken and stop, none waits for ever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use graph_core::{TaskGraph, Term};
use graph_exec::{Error, LocalExecutor, OpError, OpRegistry, Request, RunOptions, TaskValue};

/// Whether a `Boom` of 13 has panicked yet in this run.
static PANICKED: AtomicBool = AtomicBool::new(false);

/// A value whose first drop of a 13 panics: the inputs a worker drops after
/// running a task, outside the op.
#[derive(Clone, Debug, PartialEq)]
struct Boom(i64);

impl Drop for Boom {
    fn drop(&mut self) {
        if self.0 == 13 && !std::thread::panicking() && !PANICKED.swap(true, Ordering::SeqCst) {
            panic!("dropped 13");
        }
    }
}

impl TaskValue for Boom {
    fn from_literal(literal: &graph_core::Value) -> Result<Boom, OpError> {
        match literal {
            graph_core::Value::Int(n) => Ok(Boom(*n)),
            _ => Err("only integers".into()),
        }
    }
    fn from_list(items: Vec<Boom>) -> Boom {
        Boom(items.iter().map(|b| b.0).sum())
    }
}

#[test]
fn a_worker_that_panics_ends_the_run() {
    // x = 13 is freed once y has read it, while 50 more tasks wait.
    let mut graph = TaskGraph::new();
    graph.insert("x", Term::lit(13)).unwrap();
    graph
        .insert("y", Term::call("inc", [Term::key("x")]))
        .unwrap();
    let mut last = Term::key("y");
    for i in 0..50 {
        graph.insert(("z", i), Term::call("inc", [last])).unwrap();
        last = Term::key(("z", i));
    }
    for threads in [1, 2, 4] {
        PANICKED.store(false, Ordering::SeqCst);
        let graph = graph.clone();
        let (send, receive) = mpsc::channel();
        std::thread::spawn(move || {
            let mut registry = OpRegistry::<Boom>::new();
            registry.register("inc", |a: &[Boom]| Ok(Boom(a[0].0 + 1)));
            let run = LocalExecutor::with_threads(threads).run(
                &graph,
                &registry,
                &Request::from(("z", 49)),
                &RunOptions::default(),
            );
            let _ = send.send(run.map(|_| ()));
        });
        let result = match receive.recv_timeout(Duration::from_secs(60)) {
            Ok(result) => result,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("{threads} threads: the run hangs"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("{threads} threads: the run panicked")
            }
        };
        let err = result.expect_err("the run fails");
        assert!(
            matches!(&err, Error::WorkerPanicked { message } if message == "dropped 13"),
            "{threads} threads: {err}"
        );
        assert_eq!(
            err.to_string(),
            "a worker thread of the run failed: dropped 13"
        );
    }
}
