//! A run that loses a process, recovered in the library: three in-test
//! processes on loopback run a graph of slow tasks, one of them stops
//! midway, the two others give back what they hold (`Run::run_keeping`), find
//! each other and share what they hold (`regroup`), each makes the plan
//! from that (`plan_recovery`), and an attempt among the two survivors
//! (`Run::attempt`) gives the outputs of the sequential oracle, running only
//! the plan's tasks.

mod common;
mod recovery_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use common::{loopback, member};
use graph_core::generate::{self, Rng};
use graph_core::{NodeId, TaskGraph};
use graph_distributed::Run;
use graph_distributed::recovery::{Attempt, Holdings, plan_recovery, regroup};
use graph_distributed::transport::Error as Transport;
use graph_distributed::{CancelHandle, Error, Job, Runner, RunnerError};
use graph_exec::TaskFailure;
use recovery_common::{Mix, oracle};

/// Tasks run so far, by every process of the test.
static RAN: AtomicUsize = AtomicUsize::new(0);

/// Each task sleeps 2 ms, and counts itself in `RAN`.
struct Counted<'g>(Mix<'g>);

impl Runner for Counted<'_> {
    type Value = u64;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<u64>,
    ) -> Result<u64, TaskFailure> {
        let value = self.0.run(node, input);
        RAN.fetch_add(1, Ordering::SeqCst);
        value
    }
}

fn make(
    graph: &TaskGraph,
    _worker: usize,
) -> Result<Box<dyn Runner<Value = u64> + '_>, RunnerError> {
    Ok(Box::new(Counted(Mix {
        topology: graph.topology()?,
        ran: Arc::default(),
        nap: Duration::from_millis(2),
    })))
}

/// A random graph over three processes, and what the sequential oracle
/// gives for it.
struct Case {
    graph: Arc<TaskGraph>,
    values: Vec<u64>,
    outputs: Vec<NodeId>,
    job: Job,
}

/// A random graph of `tasks` tasks (`seed`), placed at random (`placing`)
/// over three processes of one thread, its leaves the outputs.
fn case(tasks: usize, seed: u64, placing: u64) -> Case {
    let graph = Arc::new(generate::random_dag(tasks, seed));
    let values = oracle(&graph);
    let mut rng = Rng::new(placing);
    let placement: Vec<u32> = (0..graph.len()).map(|_| rng.below(3) as u32).collect();
    let outputs: Vec<NodeId> = graph
        .leaf_keys()
        .unwrap()
        .iter()
        .map(|k| graph.node_id(k).unwrap())
        .collect();
    let job = Job::new(outputs.clone(), placement);
    Case {
        graph,
        values,
        outputs,
        job,
    }
}

#[test]
fn survivors_keep_what_they_hold_and_an_attempt_among_them_finishes_the_run() {
    let Case {
        graph,
        values,
        outputs,
        job,
    } = case(300, 7, 5);

    // Three processes, 300 tasks of 2 ms: process 2 stops once 40 have run.
    let addresses = loopback(3);
    let stop = CancelHandle::new();
    let handles: Vec<_> = (0..3)
        .map(|process| {
            let mut cluster = member(&addresses, process, 1);
            if process == 2 {
                cluster = cluster.with_cancel(stop.clone());
            }
            let (graph, job) = (Arc::clone(&graph), job.clone());
            thread::spawn(move || Run::new(graph, job, &cluster, make).run_keeping())
        })
        .collect();
    while RAN.load(Ordering::SeqCst) < 40 {
        thread::sleep(Duration::from_millis(1));
    }
    stop.cancel();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    let mut survivors = Vec::new();
    for (process, result) in results.into_iter().enumerate().take(2) {
        let stopped = result.expect_err("the run lost a process");
        assert!(
            matches!(
                stopped.error,
                Error::Transport(Transport::Lost { process: 2, .. })
                    | Error::Transport(Transport::Silent { process: 2, .. })
                    | Error::Disconnected { .. }
            ),
            "process {process}: {}",
            stopped.error
        );
        let mut leftovers = stopped
            .leftovers
            .expect("a loss leaves what the process holds");
        for (node, value) in leftovers.held() {
            assert_eq!(
                *value,
                values[node.index()],
                "process {process} holds {node:?}"
            );
        }
        let watch = leftovers
            .take_watch()
            .expect("a loss keeps the heartbeats going");
        survivors.push((leftovers, watch));
    }

    // The survivors regroup on the run's own addresses, each telling the
    // others what it holds, make the same plan, and run it among
    // themselves.
    let handles: Vec<_> = survivors
        .into_iter()
        .enumerate()
        .map(|(process, (leftovers, watch))| {
            let cluster = member(&addresses, process, 1);
            let (graph, outputs) = (Arc::clone(&graph), outputs.clone());
            let (job, addresses) = (job.clone(), addresses.clone());
            thread::spawn(move || {
                let report: Vec<u8> = (leftovers.finished().iter().map(|n| n.as_u32()))
                    .chain([u32::MAX])
                    .chain(leftovers.held().iter().map(|(n, _)| n.as_u32()))
                    .flat_map(u32::to_le_bytes)
                    .collect();
                let regrouped = regroup(&cluster, &watch, 1, &report).unwrap();
                drop(watch);
                assert_eq!(regrouped.survivors, [0, 1]);
                assert_eq!(regrouped.lost, [2]);
                assert_eq!(regrouped.cluster.process(), process);
                assert_eq!(regrouped.cluster.addresses(), &addresses[..2]);
                let mut held = Holdings::new(graph.len());
                for (&survivor, report) in regrouped.survivors.iter().zip(&regrouped.reports) {
                    let numbers: Vec<u32> = report
                        .chunks(4)
                        .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
                        .collect();
                    let split = numbers.iter().position(|&n| n == u32::MAX).unwrap();
                    for &node in &numbers[..split] {
                        held.finished(NodeId::from_u32(node));
                    }
                    for &node in &numbers[split + 1..] {
                        held.hold(NodeId::from_u32(node), survivor as u32);
                    }
                }
                let plan = plan_recovery(&graph, &job, 3, 1, &regrouped.lost, &held, None).unwrap();
                assert!(plan.run.len() < graph.len(), "the survivors' work is kept");
                let fed: Vec<(NodeId, u64)> = leftovers
                    .into_held()
                    .into_iter()
                    .filter(|(node, _)| plan.fetch.contains(&(*node, process as u32)))
                    .collect();
                let attempt = Attempt::new(&plan, fed);
                let attempt_job = Job::new(outputs, plan.attempt_placement(1));
                let run = Run::new(graph, attempt_job, &regrouped.cluster, make)
                    .attempt(attempt)
                    .run();
                (run, plan.run.len())
            })
        })
        .collect();
    let mut results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let (first, planned) = results.remove(0);
    let outcome = first.unwrap().expect("process 0 has the outcome");
    assert!(results.remove(0).0.unwrap().is_none());
    assert_eq!(outcome.values.len(), outputs.len());
    for (node, value) in &outcome.values {
        assert_eq!(*value, values[node.index()], "output {node:?}");
    }
    assert_eq!(outcome.tasks_run(), planned);
}

#[test]
fn a_recovering_run_goes_on_among_the_survivors_with_the_same_figures_on_each() {
    let Case {
        graph,
        values,
        outputs,
        job,
    } = case(240, 11, 3);
    let addresses = loopback(3);
    let stop = CancelHandle::new();
    // `RAN` counts the tasks of every test of this file.
    let before = RAN.load(Ordering::SeqCst);
    let handles: Vec<_> = (0..3)
        .map(|process| {
            let mut cluster = member(&addresses, process, 1);
            if process == 0 {
                // The one that gathers the results is the one lost.
                cluster = cluster.with_cancel(stop.clone());
            }
            let (graph, job) = (Arc::clone(&graph), job.clone());
            thread::spawn(move || {
                let mut steps = Vec::new();
                let result = Run::new(graph, job, &cluster, make).recover(1, |step| {
                    steps.push(format!("{step:?}"));
                });
                (result, steps)
            })
        })
        .collect();
    while RAN.load(Ordering::SeqCst) < before + 60 {
        thread::sleep(Duration::from_millis(1));
    }
    stop.cancel();
    let mut results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let (lost, _) = results.remove(0);
    assert!(matches!(lost, Err(Error::Interrupted)), "{lost:?}");
    let mut figures = Vec::new();
    for (process, (result, steps)) in results.into_iter().enumerate() {
        let recovered = result.unwrap_or_else(|err| panic!("process {}: {err}", process + 1));
        assert_eq!(recovered.attempts, 2);
        assert_eq!(recovered.lost_processes, [0]);
        assert_eq!(recovered.cluster.processes(), 2);
        assert_eq!(recovered.cluster.process(), process);
        assert!(steps[0].starts_with("Stopped"), "{steps:?}");
        assert!(
            steps[1].contains("survivors: [1, 2], lost: [0]"),
            "{steps:?}"
        );
        assert!(steps[2].starts_with("Planned"), "{steps:?}");
        figures.push(recovered.recomputed_tasks);
        match recovered.outcome {
            // Process 1 of the first attempt is 0 of the second: it has
            // the outputs.
            Some(outcome) => {
                assert_eq!(process, 0);
                assert_eq!(outcome.values.len(), outputs.len());
                for (node, value) in &outcome.values {
                    assert_eq!(*value, values[node.index()], "output {node:?}");
                }
            }
            None => assert_eq!(process, 1),
        }
    }
    assert_eq!(figures[0], figures[1], "every survivor counts alike");
}
