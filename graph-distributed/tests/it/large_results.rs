//! Under a memory limit, large results travel in pieces: between threads
//! and between processes they arrive whole (the leaves checksum every byte
//! of their inputs), requested ones reach worker 0 whole, and what a worker
//! receives counts and spills like what it computes. Without a limit they
//! go whole, in one message each, to the same results, up to 64 MiB.

use std::sync::Arc;

use crate::common::{job_for, leaf_nodes, oracle, run_exec, run_processes};
use graph_core::generate::{self, Shape};
use graph_core::{Dag, NodeId, TaskGraph};
use graph_distributed::{Cluster, Job};

/// `shape` with about `tasks` tasks whose results take `bytes` each.
fn graph_of(shape: Shape, tasks: usize, bytes: u64) -> Arc<TaskGraph> {
    Arc::new(generate::with_value_bytes(&shape.generate(tasks, 3), bytes).unwrap())
}

/// A limit that never binds but makes results travel in pieces.
const ROOMY: u64 = 1 << 40;

/// The leaves and a few large results besides, so that requested results
/// travel in pieces too.
fn outputs_with_large(graph: &TaskGraph) -> Vec<NodeId> {
    let mut outputs = leaf_nodes(graph);
    let topology = graph.topology().unwrap();
    outputs.extend(
        (0..graph.len())
            .map(NodeId::new)
            .filter(|&n| !topology.dependents(n).is_empty())
            .step_by(7)
            .take(4),
    );
    outputs
}

#[test]
fn results_of_several_pieces_arrive_whole_between_threads() {
    // 300 KB: two pieces, and more than a window's worth in flight at once.
    for shape in [Shape::Chain, Shape::Tree, Shape::Shuffle, Shape::Random] {
        let graph = graph_of(shape, 40, 300_000);
        let outputs = outputs_with_large(&graph);
        let expected = oracle(&graph, &outputs);
        for (threads, limit) in [(2, None), (2, Some(ROOMY)), (3, Some(ROOMY))] {
            let mut job = job_for(&graph, outputs.clone(), threads);
            if let Some(limit) = limit {
                job = job.with_memory_limit(limit);
            }
            let outcome = run_exec(&graph, job, &Cluster::local(threads))
                .unwrap()
                .unwrap();
            let name = format!("{} on {threads} under {limit:?}", shape.name());
            assert_eq!(outcome.values, expected, "{name}");
            assert_eq!(outcome.tasks_run(), graph.len(), "{name}");
        }
    }
}

#[test]
fn results_of_several_pieces_arrive_whole_between_processes() {
    for shape in [Shape::Chain, Shape::Shuffle, Shape::Random] {
        let graph = graph_of(shape, 40, 700_000);
        let outputs = outputs_with_large(&graph);
        let expected = oracle(&graph, &outputs);
        for (processes, threads, limit) in [(2, 1, None), (2, 1, Some(ROOMY)), (2, 2, Some(ROOMY))]
        {
            let mut job = job_for(&graph, outputs.clone(), processes * threads);
            if let Some(limit) = limit {
                job = job.with_memory_limit(limit);
            }
            let name = format!(
                "{} on {processes} x {threads} under {limit:?}",
                shape.name()
            );
            let mut results = run_processes(&graph, &job, processes, threads).into_iter();
            let outcome = results.next().unwrap().unwrap().expect(&name);
            assert_eq!(outcome.values, expected, "{name}");
            assert!(outcome.values_sent() > 0, "{name}: nothing crossed");
            for other in results {
                assert!(other.unwrap().is_none(), "{name}");
            }
        }
    }
}

#[test]
fn a_chain_that_crosses_at_every_step_moves_results_of_many_windows() {
    // Each result, 3 MB, goes from one process to the other: three windows
    // under the limit's smallest window, so pieces wait for credit.
    let graph = graph_of(Shape::Chain, 6, 3_000_000);
    let outputs = outputs_with_large(&graph);
    let expected = oracle(&graph, &outputs);
    let placement = (0..graph.len()).map(|i| (i % 2) as u32).collect();
    let job = Job::new(outputs, placement).with_memory_limit(16_000_000);
    let mut results = run_processes(&graph, &job, 2, 1).into_iter();
    let outcome = results.next().unwrap().unwrap().unwrap();
    assert_eq!(outcome.values, expected);
    assert_eq!(outcome.cut_edges(), graph.len() - 1);
}

#[test]
fn received_results_count_against_the_limit_and_spill() {
    // Worker 1 computes every root; worker 0 reads them all, several at
    // once from a shuffle's fan-in: what arrives must spill for the limit
    // to hold.
    let graph = graph_of(Shape::Shuffle, 60, 1_000_000);
    let topology = graph.topology().unwrap();
    let outputs = leaf_nodes(&graph);
    let expected = oracle(&graph, &outputs);
    let placement: Vec<u32> = (0..graph.len())
        .map(|i| u32::from(topology.dependencies(NodeId::new(i)).is_empty()))
        .collect();
    let limit = 12_000_000;
    let job = job_for(&graph, outputs.clone(), 2);
    let job = Job::new(outputs, placement)
        .with_priorities(job.priorities().unwrap().to_vec())
        .with_memory_limit(limit);
    let mut results = run_processes(&graph, &job, 2, 1).into_iter();
    let outcome = results.next().unwrap().unwrap().unwrap();
    assert_eq!(outcome.values, expected);
    let receiver = &outcome.workers[0];
    assert!(
        receiver.peak_bytes <= limit,
        "worker 0 held {} bytes under a limit of {limit}",
        receiver.peak_bytes
    );
    assert!(
        receiver.spilled_bytes > 0,
        "worker 0 received more than its limit and spilled nothing"
    );
}

#[test]
fn without_a_limit_results_too_large_for_one_frame_go_in_pieces() {
    // 70 MB results, past what goes whole without a limit, crossing at
    // every step: sent in pieces within the largest window, they arrive
    // whole.
    let graph = graph_of(Shape::Chain, 3, 70_000_000);
    let outputs = outputs_with_large(&graph);
    let expected = oracle(&graph, &outputs);
    let placement = (0..graph.len()).map(|i| (i % 2) as u32).collect();
    let job = Job::new(outputs, placement);
    let mut results = run_processes(&graph, &job, 2, 1).into_iter();
    let outcome = results.next().unwrap().unwrap().unwrap();
    assert_eq!(outcome.values, expected);
    assert_eq!(outcome.cut_edges(), graph.len() - 1);
}
