//! A distributed run gives the sequential executor's results, on generated
//! graphs, with one process of several threads and with 2 and 4 processes
//! over loopback; its cut edges are the placement's.

mod common;

use std::sync::Arc;

use common::{job_for, leaf_nodes, oracle, run_exec, run_processes};
use graph_core::generate::Shape;
use graph_distributed::{Cluster, Job};

const SHAPES: [Shape; 6] = [
    Shape::Chain,
    Shape::Tree,
    Shape::Shuffle,
    Shape::ArraySumTranspose,
    Shape::ArrayOverlap,
    Shape::Random,
];

#[test]
fn one_process_any_thread_count() {
    for shape in SHAPES {
        let graph = Arc::new(shape.generate(400, 1));
        let outputs = leaf_nodes(&graph);
        let expected = oracle(&graph, &outputs);
        for threads in [1, 2, 4] {
            let job = job_for(&graph, outputs.clone(), threads);
            let outcome = run_exec(&graph, job, &Cluster::local(threads))
                .unwrap()
                .unwrap();
            assert_eq!(
                outcome.values,
                expected,
                "{} on {threads} threads",
                shape.name()
            );
            assert_eq!(outcome.tasks_run(), graph.len());
            assert_eq!(outcome.workers.len(), threads);
        }
    }
}

#[test]
fn two_and_four_processes_over_loopback() {
    for shape in SHAPES {
        let graph = Arc::new(shape.generate(300, 2));
        let outputs = leaf_nodes(&graph);
        let expected = oracle(&graph, &outputs);
        for (processes, threads) in [(2, 1), (2, 2), (4, 1)] {
            let job = job_for(&graph, outputs.clone(), processes * threads);
            let results = run_processes(&graph, &job, processes, threads);
            let name = format!("{} on {processes} x {threads}", shape.name());
            let mut results = results.into_iter();
            let outcome = results.next().unwrap().unwrap().expect(&name);
            assert_eq!(outcome.values, expected, "{name}");
            assert_eq!(outcome.tasks_run(), graph.len(), "{name}");
            for other in results {
                assert!(
                    other.unwrap().is_none(),
                    "{name}: only process 0 has the outcome"
                );
            }
        }
    }
}

#[test]
fn cut_edges_and_transfer_bytes_are_the_placements() {
    let graph = Arc::new(Shape::ArraySumTranspose.generate(600, 4));
    let outputs = leaf_nodes(&graph);
    let topology = graph.topology().unwrap();
    let job = job_for(&graph, outputs, 4);
    let assignment = graph_assign::Assignment::from_vec(job.placement().to_vec(), 4).unwrap();
    let sizes = graph_assign::sizes_of(&graph);
    let metrics = graph_assign::Metrics::of(
        topology,
        &graph_assign::Workers::new(4).unwrap(),
        &assignment,
        Some(&sizes),
        None,
    )
    .unwrap();
    assert!(metrics.edge_cut > 0, "the test needs a cut");
    let results = run_processes(&graph, &job, 2, 2);
    let outcome = results.into_iter().next().unwrap().unwrap().unwrap();
    assert_eq!(outcome.cut_edges() as u64, metrics.edge_cut);
    assert_eq!(outcome.transfer_bytes(), metrics.transfer_bytes);
    assert!(outcome.values_sent() <= outcome.cut_edges());
}

#[test]
fn only_what_the_outputs_need_runs() {
    let graph = Arc::new(graph_core::generate::word_count());
    let print1 = graph.node_id(&"print1".into()).unwrap();
    let job = Job::new([print1], (0..graph.len() as u32).map(|i| i % 2).collect());
    let outcome = run_exec(&graph, job, &Cluster::local(2)).unwrap().unwrap();
    assert_eq!(outcome.values, oracle(&graph, &[print1]));
    let sequential = graph_exec::execute_sequential(
        &graph,
        &graph_exec::OpRegistry::builtins(),
        &graph_exec::Request::from("print1"),
    )
    .unwrap();
    assert_eq!(outcome.tasks_run(), sequential.stats.tasks_run);
}

#[test]
fn every_task_on_one_worker_sends_nothing() {
    let graph = Arc::new(Shape::Tree.generate(200, 0));
    let outputs = leaf_nodes(&graph);
    let job = Job::new(outputs.clone(), vec![1; graph.len()]);
    let results = run_processes(&graph, &job, 2, 1);
    let outcome = results.into_iter().next().unwrap().unwrap().unwrap();
    assert_eq!(outcome.values, oracle(&graph, &outputs));
    assert_eq!(outcome.cut_edges(), 0);
    assert_eq!(outcome.workers[0].tasks_run, 0);
    assert_eq!(outcome.workers[1].tasks_run, graph.len());
    assert_eq!(outcome.workers[1].outputs_sent, outputs.len());
}
