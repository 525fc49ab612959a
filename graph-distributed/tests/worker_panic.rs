//! A worker thread that panics outside a task (in the runner's `bytes`,
//! say) ends the run with an error in every process, never a hang.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use graph_core::{Dag, NodeId, TaskGraph, Term, Topology};
use graph_distributed::{Cluster, Job, Run, Runner};
use graph_exec::TaskFailure;

/// Each task: one plus the sum of its inputs; measuring node 3's result
/// panics.
struct Fragile<'g>(&'g Topology);

impl Runner for Fragile<'_> {
    type Value = u64;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ) -> Result<u64, TaskFailure> {
        let inputs = self
            .0
            .dependencies(node)
            .iter()
            .map(|&d| input(d).unwrap_or(0));
        Ok(1 + inputs.sum::<u64>())
    }

    fn bytes(&self, node: NodeId, _: &u64) -> u64 {
        assert!(node.index() != 3, "measuring node 3 fails");
        8
    }
}

/// A chain of 8 tasks, placed on workers 0, 1, 0, 1, ...
fn chain() -> (Arc<TaskGraph>, Vec<u32>) {
    let mut builder = TaskGraph::builder().task("t0", Term::lit(1));
    for i in 1..8 {
        builder = builder.task(
            format!("t{i}"),
            Term::list([Term::key(format!("t{}", i - 1))]),
        );
    }
    let placement = (0..8).map(|i| (i % 2) as u32).collect();
    (Arc::new(builder.build().unwrap()), placement)
}

/// Runs `start` on a thread of its own: its result, or `None` if it has not
/// ended within 20 seconds.
fn within_20s<T: Send + 'static>(start: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(start());
    });
    result.recv_timeout(Duration::from_secs(20)).ok()
}

#[test]
fn a_worker_thread_that_panics_ends_the_run() {
    let (graph, placement) = chain();
    let started = Instant::now();
    let outcome = within_20s(move || {
        let job = Job::new([NodeId::new(7)], placement);
        Run::new(graph, job, &Cluster::local(2), |graph, _| {
            Ok(Box::new(Fragile(graph.topology()?)))
        })
        .run()
        .map(|_| ())
    })
    .expect("the run ends instead of hanging");
    let err = outcome.unwrap_err().to_string();
    assert_eq!(err, "worker 1 failed: measuring node 3 fails");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_worker_thread_that_panics_ends_the_run_in_every_process() {
    let (graph, placement) = chain();
    let addresses = common::loopback(2);
    let runs: Vec<_> = (0..2)
        .map(|process| {
            let cluster = common::member(&addresses, process, 1);
            let (graph, job) = (
                Arc::clone(&graph),
                Job::new([NodeId::new(7)], placement.clone()),
            );
            std::thread::spawn(move || {
                within_20s(move || {
                    Run::new(graph, job, &cluster, |graph, _| {
                        Ok(Box::new(Fragile(graph.topology()?)))
                    })
                    .run()
                    .map(|_| ())
                })
            })
        })
        .collect();
    let results: Vec<_> = runs.into_iter().map(|run| run.join().unwrap()).collect();
    for (process, result) in results.iter().enumerate() {
        let result = result
            .as_ref()
            .unwrap_or_else(|| panic!("process {process} hangs"));
        assert!(result.is_err(), "process {process} ends with an error");
    }
    let failed = results[1]
        .as_ref()
        .unwrap()
        .as_ref()
        .unwrap_err()
        .to_string();
    assert_eq!(failed, "worker 1 failed: measuring node 3 fails");
}
