//! The overhead of running across processes: two timely processes on
//! loopback TCP (each on its own thread of the benchmark, with its own
//! connections), running a chain of trivial tasks placed so that no edge, one
//! edge or every edge crosses between them. The difference between the
//! placements is the cost of a cut edge; `setup` is the cost of connecting
//! and tearing down, which every run pays once.
//!
//! The runs share one `PreparedGraph`, as a program that runs one graph
//! again does: the digest of its tasks for the job fingerprint is computed
//! by the first run. `chain_first_run` pays it every time, as the one run
//! of a `taskgraph run --processes` does.

use std::net::TcpListener;
use std::sync::Arc;
use std::thread;

use divan::Bencher;
use divan::counter::ItemsCount;
use graph_core::{Dag, NodeId, Topology};
use graph_distributed::{Cluster, Job, PreparedGraph, Run, Runner};
use graph_exec::TaskFailure;

fn main() {
    divan::main();
}

/// Placements of a chain on two workers, by const index.
const PLACEMENTS: [&str; 3] = ["one_worker", "halves", "alternating"];

/// Tasks that add up their inputs, plus one.
struct Count<'g>(&'g Topology);

impl Runner for Count<'_> {
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
}

fn placement(kind: &str, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| match kind {
            "one_worker" => 0,
            "halves" => u32::from(i >= n / 2),
            _ => (i % 2) as u32,
        })
        .collect()
}

/// Runs `graph` as two processes on loopback, returning process 0's tasks run.
fn two_processes(graph: &PreparedGraph, job: &Job) -> usize {
    let addresses: Vec<String> = (0..2)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect::<Vec<_>>()
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let handles: Vec<_> = (0..2)
        .map(|process| {
            let cluster = Cluster::new(addresses.clone(), process, 1)
                .unwrap()
                .with_secret(b"the benchmark's own secret")
                .unwrap();
            let (graph, job) = (graph.clone(), job.clone());
            thread::spawn(move || {
                Run::new(graph, job, &cluster, |graph, _| {
                    Ok(Box::new(Count(graph.topology()?)))
                })
                .run()
                .unwrap()
                .map_or(0, |outcome| outcome.tasks_run())
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).sum()
}

fn chain_job(placement_kind: &str, n: usize) -> (PreparedGraph, Job) {
    let graph = PreparedGraph::from(graph_core::generate::chain(n));
    let last = NodeId::new(n - 1);
    let job = Job::new([last], placement(placement_kind, n));
    (graph, job)
}

#[divan::bench(args = [1_000, 10_000, 100_000], consts = [0, 1], sample_count = 5)]
fn chain<const PLACEMENT: usize>(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, job) = chain_job(PLACEMENTS[PLACEMENT], n);
    bencher
        .counter(ItemsCount::new(n))
        .bench(|| assert_eq!(two_processes(&graph, &job), n));
}

/// The chain on one worker, hashing the graph's tasks for the job
/// fingerprint in every run (a graph run once).
#[divan::bench(args = [10_000, 100_000], sample_count = 5)]
fn chain_first_run(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, job) = chain_job(PLACEMENTS[0], n);
    bencher.counter(ItemsCount::new(n)).bench(|| {
        let fresh = PreparedGraph::new(Arc::clone(graph.graph()));
        assert_eq!(two_processes(&fresh, &job), n)
    });
}

/// Every edge cut: one message each way per task.
#[divan::bench(args = [1_000, 10_000], sample_count = 5)]
fn chain_alternating(bencher: Bencher<'_, '_>, n: usize) {
    let (graph, job) = chain_job(PLACEMENTS[2], n);
    bencher
        .counter(ItemsCount::new(n))
        .bench(|| assert_eq!(two_processes(&graph, &job), n));
}

/// A wide shuffle of 10 000 tasks split between the processes: many cut
/// edges at once rather than one after another.
#[divan::bench(sample_count = 5)]
fn shuffle(bencher: Bencher<'_, '_>) {
    let graph = PreparedGraph::from(graph_core::generate::Shape::Shuffle.generate(10_000, 42));
    let n = graph.graph().len();
    let outputs: Vec<NodeId> = graph
        .graph()
        .leaf_keys()
        .unwrap()
        .iter()
        .map(|k| graph.graph().node_id(k).unwrap())
        .collect();
    let job = Job::new(outputs, placement("alternating", n));
    bencher
        .counter(ItemsCount::new(n))
        .bench(|| assert_eq!(two_processes(&graph, &job), n));
}

/// Connecting two processes, running one task, and tearing down.
#[divan::bench(sample_count = 10)]
fn setup(bencher: Bencher<'_, '_>) {
    let (graph, job) = chain_job("one_worker", 1);
    bencher.bench(|| assert_eq!(two_processes(&graph, &job), 1));
}
