//! A [`CancelHandle`] stops a run from another thread: while its workers run
//! tasks, and while a process still waits for the others to connect.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{loopback, member, nobody_at};
use graph_core::{Dag, NodeId, TaskGraph, Term};
use graph_distributed::{CancelHandle, Cluster, Error, Job, Run, Runner};
use graph_exec::TaskFailure;

/// Tasks that take 10 ms each.
struct Slow;

impl Runner for Slow {
    type Value = u64;

    fn run(
        &mut self,
        _node: NodeId,
        _input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ) -> Result<u64, TaskFailure> {
        thread::sleep(Duration::from_millis(10));
        Ok(1)
    }
}

/// A chain of `n` tasks, all on worker 0, the last requested.
fn chain(n: usize) -> (Arc<TaskGraph>, Job) {
    let mut builder = TaskGraph::builder().task("x-0", Term::lit(0));
    for i in 1..n {
        let previous = Term::key(format!("x-{}", i - 1).as_str());
        builder = builder.task(format!("x-{i}").as_str(), Term::call("inc", [previous]));
    }
    let graph = builder.build().unwrap();
    let last = NodeId::new(graph.topology().unwrap().node_count() - 1);
    let job = Job::new([last], vec![0; n]);
    (Arc::new(graph), job)
}

fn interrupt_soon(interrupt: &CancelHandle) {
    let interrupt = interrupt.clone();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(200));
        interrupt.cancel();
    });
}

#[test]
fn an_interrupt_stops_a_running_run() {
    // A minute of work if nothing stops it.
    let (graph, job) = chain(6000);
    let interrupt = CancelHandle::new();
    let cluster = Cluster::local(2).with_cancel(interrupt.clone());
    interrupt_soon(&interrupt);
    let err = Run::new(graph, job, &cluster, |_, _| Ok(Box::new(Slow)))
        .run()
        .unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
}

#[test]
fn an_interrupt_stops_a_process_waiting_for_the_others() {
    let (graph, job) = chain(10);
    let interrupt = CancelHandle::new();
    let mut addresses = loopback(2);
    addresses[0] = nobody_at();
    let cluster = member(&addresses, 1, 1)
        .with_connect_timeout(Duration::from_secs(600))
        .with_cancel(interrupt.clone());
    interrupt_soon(&interrupt);
    let err = Run::new(graph, job, &cluster, |_, _| Ok(Box::new(Slow)))
        .run()
        .unwrap_err();
    assert!(matches!(err, Error::Interrupted), "{err}");
}
