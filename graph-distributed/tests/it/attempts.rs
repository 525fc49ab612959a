//! An attempt after a loss (`Run::attempt`) gives the results of a run without
//! the fault, running only the plan's tasks: generated graphs of every shape
//! are cut at a random point, random "processes" (groups of workers of a
//! local cluster) are lost, the survivors' results are fed in from the
//! sequential oracle, and the attempt's outputs must equal the oracle's
//! while the runner sees exactly the tasks of the plan.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::recovery_common::{Mix, oracle, quick};
use graph_core::generate::{Rng, Shape};
use graph_core::{NodeId, TaskGraph};
use graph_distributed::Run;
use graph_distributed::recovery::{Attempt, Holdings, plan_recovery};
use graph_distributed::{Cluster, Error, Job};

/// As `recovery.rs`: what each process holds after the first `ran` tasks.
fn holdings_after(graph: &TaskGraph, job: &Job, threads: usize, ran: usize) -> Holdings {
    let topology = graph.topology().unwrap();
    let order = topology.topological_order();
    let mut done = vec![false; graph.len()];
    for node in &order[..ran] {
        done[node.index()] = true;
    }
    let process_of = |node: NodeId| job.placement()[node.index()] as usize / threads;
    let mut held = Holdings::new(graph.len());
    for &node in &order[..ran] {
        held.finished(node);
        if job.outputs().contains(&node) {
            held.hold(node, process_of(node) as u32);
        }
        for &reader in topology.dependents(node) {
            if !done[reader.index()] {
                held.hold(node, process_of(reader) as u32);
                held.hold(node, process_of(node) as u32);
            }
        }
    }
    held
}

#[test]
fn attempts_give_the_fault_free_results_running_only_the_plan() {
    let mut rng = Rng::new(31);
    for shape in Shape::ALL {
        for processes in [2, 3] {
            let graph = Arc::new(shape.generate(80, rng.next_u64()));
            let n = graph.len();
            let threads = 2;
            let workers = processes * threads;
            let placement: Vec<u32> = (0..n).map(|_| rng.below(workers) as u32).collect();
            let leaves = graph.leaf_keys().unwrap();
            let outputs: Vec<NodeId> = leaves.iter().map(|k| graph.node_id(k).unwrap()).collect();
            let job = Job::new(outputs.clone(), placement);
            let values = oracle(&graph);
            let ran = rng.below(n + 1);
            let held = holdings_after(&graph, &job, threads, ran);
            let lost = vec![rng.below(processes)];
            let plan = plan_recovery(&graph, &job, processes, threads, &lost, &held, None).unwrap();
            let attempt_job = Job::new(outputs.clone(), plan.attempt_placement(threads));
            let fed: Vec<(NodeId, u64)> = plan
                .fetch
                .iter()
                .map(|&(node, _)| (node, values[node.index()]))
                .collect();
            let ran_nodes = Arc::new(Mutex::new(Vec::new()));
            let seen = Arc::clone(&ran_nodes);
            // One process of `workers` workers stands for the cluster: the
            // plan's processes are its groups of `threads` workers.
            let outcome = Run::new(
                Arc::clone(&graph),
                attempt_job,
                &Cluster::local(workers),
                move |graph, _| {
                    Ok(Box::new(Mix {
                        topology: graph.topology()?,
                        ran: Arc::clone(&seen),
                        nap: Duration::ZERO,
                    }))
                },
            )
            .attempt(Attempt::new(&plan, fed))
            .run()
            .unwrap()
            .unwrap();
            let case = format!(
                "{} over {processes}, {ran} of {n} run, lost {lost:?}",
                shape.name()
            );
            for (node, value) in &outcome.values {
                assert_eq!(*value, values[node.index()], "{case}: output {node:?}");
            }
            assert_eq!(outcome.values.len(), outputs.len(), "{case}");
            let mut ran_nodes = ran_nodes.lock().unwrap().clone();
            ran_nodes.sort_unstable();
            let mut planned = plan.run.clone();
            planned.sort_unstable();
            assert_eq!(
                ran_nodes, planned,
                "{case}: the runner saw the plan's tasks"
            );
            assert_eq!(outcome.tasks_run(), plan.run.len(), "{case}");
        }
    }
}

#[test]
fn an_attempt_refuses_results_it_does_not_fetch_and_misses_none() {
    let graph = Arc::new(graph_core::generate::chain(3));
    let [a, b, c] = [0, 1, 2].map(NodeId::new);
    let job = Job::new([c], vec![1, 1, 0]);
    let mut held = Holdings::new(3);
    held.finished(a);
    held.hold(b, 0);
    let plan = plan_recovery(&graph, &job, 2, 1, &[1], &held, None).unwrap();
    let attempt = || Job::new([c], plan.attempt_placement(1));
    let err = Run::new(Arc::clone(&graph), attempt(), &Cluster::local(2), quick)
        .attempt(Attempt::new(&plan, vec![]))
        .run()
        .unwrap_err();
    assert!(matches!(err, Error::MissingResult { .. }), "{err}");
    assert!(err.to_string().contains("1"), "{err}");
    let err = Run::new(Arc::clone(&graph), attempt(), &Cluster::local(2), quick)
        .attempt(Attempt::new(&plan, vec![(b, 1), (a, 1)]))
        .run()
        .unwrap_err();
    assert!(matches!(err, Error::MisplacedResult { .. }), "{err}");
}
