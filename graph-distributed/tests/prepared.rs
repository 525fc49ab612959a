//! A `PreparedGraph` run several times across processes: the digest of its
//! tasks is kept between runs, and still tells its graph from another.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{loopback, member, oracle};
use graph_core::{NodeId, TaskGraph, Term};
use graph_distributed::transport::Error as Transport;
use graph_distributed::{Error, HandshakeProblem, Job, Outcome, PreparedGraph, Run};
use graph_exec::{CompiledGraph, OpRegistry, Request, Tagged};

/// A chain of `inc` from `start`, 20 tasks.
fn chain(start: i64) -> TaskGraph {
    let mut builder = TaskGraph::builder().task("x-0", Term::lit(start));
    for i in 1..20 {
        let previous = Term::key(format!("x-{}", i - 1).as_str());
        builder = builder.task(format!("x-{i}").as_str(), Term::call("inc", [previous]));
    }
    builder.build().unwrap()
}

/// Runs `job` as two processes on loopback, process `p` on `graphs[p]`.
fn two_processes(
    graphs: [&PreparedGraph; 2],
    job: &Job,
) -> Vec<Result<Option<Outcome<Tagged>>, Error>> {
    let addresses = loopback(2);
    let handles: Vec<_> = (0..2)
        .map(|process| {
            let cluster =
                member(&addresses, process, 1).with_connect_timeout(Duration::from_secs(5));
            let (graph, job) = (graphs[process].clone(), job.clone());
            thread::spawn(move || {
                let outputs = job.outputs().to_vec();
                Run::new(graph, job, &cluster, move |graph, _| {
                    let request = Request::list(outputs.iter().map(|&n| graph.key(n).clone()));
                    Ok(Box::new(CompiledGraph::new(
                        graph,
                        &OpRegistry::builtins(),
                        &request,
                    )?))
                })
                .run()
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn one_prepared_graph_runs_again_with_other_jobs() {
    let graph = PreparedGraph::from(chain(0));
    let last = NodeId::new(19);
    let expected = oracle(graph.graph(), &[last]);
    for placement in [
        vec![0; 20],
        (0..20).map(|i| i % 2).collect(),
        (0..20).map(|i| u32::from(i >= 10)).collect(),
    ] {
        let results = two_processes([&graph, &graph], &Job::new([last], placement));
        let outcome = results[0].as_ref().unwrap().as_ref().unwrap();
        assert_eq!(outcome.values, expected);
        assert!(results[1].as_ref().unwrap().is_none());
    }
}

/// The digest kept by a graph that has run still differs from another
/// graph's: a process with other task bodies is refused, both ways.
#[test]
fn a_kept_digest_still_tells_graphs_apart() {
    let ours = PreparedGraph::from(chain(0));
    let last = NodeId::new(19);
    let job = Job::new([last], (0..20).map(|i| i % 2).collect());
    let ran = two_processes([&ours, &ours], &job);
    assert!(ran.iter().all(Result::is_ok));
    let theirs = PreparedGraph::new(Arc::new(chain(1)));
    for results in [
        two_processes([&ours, &theirs], &job),
        two_processes([&theirs, &ours], &job),
    ] {
        for result in results {
            let err = result.unwrap_err();
            assert!(
                matches!(
                    &err,
                    Error::Transport(Transport::Handshake {
                        problem: HandshakeProblem::DifferentJob { .. },
                        ..
                    })
                ),
                "{err}"
            );
        }
    }
}
