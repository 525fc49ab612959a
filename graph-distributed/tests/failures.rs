//! Failures stop the whole run and say where: a failing op on any worker, a
//! worker that cannot prepare its tasks, a bad job, a cluster that does not
//! come together.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{loopback, member, nobody_at, run_exec, run_processes};
use graph_core::{TaskGraph, Term};
use graph_distributed::transport::Error as Transport;
use graph_distributed::{Cluster, Error, HandshakeProblem, Job, Run};

/// A chain of ten `inc`s from 0 whose sixth task divides by zero, beside an
/// independent chain; the sixth task is on worker `failing_worker`.
fn failing_graph() -> TaskGraph {
    let mut builder = TaskGraph::builder().task("x-0", Term::lit(0));
    for i in 1..10 {
        let previous = Term::key(format!("x-{}", i - 1).as_str());
        let body = if i == 6 {
            Term::call("div", [previous, Term::lit(0)])
        } else {
            Term::call("inc", [previous])
        };
        builder = builder.task(format!("x-{i}").as_str(), body);
    }
    builder.build().unwrap()
}

fn placement_with(graph: &TaskGraph, failing_worker: u32) -> Vec<u32> {
    (0..graph.len())
        .map(|i| if i == 6 { failing_worker } else { 0 })
        .collect()
}

#[test]
fn an_op_failure_on_a_nonzero_worker_is_reported_by_every_process() {
    let graph = Arc::new(failing_graph());
    let last = graph.node_id(&"x-9".into()).unwrap();
    for (processes, threads, failing) in [(2, 1, 1), (4, 1, 3), (2, 2, 3)] {
        let job = Job::new([last], placement_with(&graph, failing));
        for (process, result) in run_processes(&graph, &job, processes, threads)
            .into_iter()
            .enumerate()
        {
            match result {
                Err(Error::Task {
                    key, op, worker, ..
                }) => {
                    assert_eq!(key.to_string(), "'x-6'");
                    assert_eq!(op.as_deref(), Some("div"));
                    assert_eq!(worker, failing as usize);
                }
                other => panic!("process {process}: {other:?}"),
            }
        }
    }
}

#[test]
fn a_failure_names_key_op_and_worker() {
    let graph = Arc::new(failing_graph());
    let last = graph.node_id(&"x-9".into()).unwrap();
    let job = Job::new([last], placement_with(&graph, 1));
    let err = run_exec(&graph, job, &Cluster::local(2)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "task 'x-6' failed on worker 1 in op `div`: division by zero"
    );
}

#[test]
fn a_runner_that_cannot_be_made_stops_the_run() {
    let graph = Arc::new(failing_graph());
    let job = Job::new(
        [graph.node_id(&"x-3".into()).unwrap()],
        vec![0; graph.len()],
    );
    let err = Run::<graph_exec::Tagged>::new(graph, job, &Cluster::local(2), |_, worker| {
        Err(format!("worker {worker} has no ops").into())
    })
    .run()
    .unwrap_err();
    assert!(
        matches!(&err, Error::Runner { message, .. } if message.ends_with("has no ops")),
        "{err}"
    );
}

#[test]
fn a_bad_job_is_refused_before_anything_runs() {
    let graph = Arc::new(failing_graph());
    let last = graph.node_id(&"x-9".into()).unwrap();
    let cases = [
        (
            Job::new([last], vec![0; 3]),
            "the placement names a worker for 3 tasks, but the graph has 10",
        ),
        (
            Job::new([last], placement_with(&graph, 5)),
            "task 'x-6' is placed on worker 5, but the cluster has 2 workers",
        ),
        (
            Job::new([last], vec![0; 10]).with_priorities(vec![0; 9]),
            "9 priorities given for 10 tasks",
        ),
    ];
    for (job, message) in cases {
        let err = run_exec(&graph, job, &Cluster::local(2)).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
}

#[test]
fn a_process_alone_gives_up_after_its_connect_timeout() {
    let graph = Arc::new(failing_graph());
    let job = Job::new(
        [graph.node_id(&"x-3".into()).unwrap()],
        vec![0; graph.len()],
    );
    let mut addresses = loopback(2);
    addresses[0] = nobody_at();
    let cluster = member(&addresses, 1, 1).with_connect_timeout(Duration::from_millis(300));
    let started = Instant::now();
    let err = run_exec(&graph, job, &cluster).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(
        matches!(&err, Error::Transport(Transport::ConnectTimeout { process: 0, address, .. }) if *address == addresses[0]),
        "{err}"
    );
}

#[test]
fn processes_running_different_jobs_do_not_connect() {
    let graph = Arc::new(failing_graph());
    let last = graph.node_id(&"x-9".into()).unwrap();
    let addresses = loopback(2);
    let handles: Vec<_> = (0..2)
        .map(|process| {
            let cluster =
                member(&addresses, process, 1).with_connect_timeout(Duration::from_secs(5));
            let job = Job::new([last], vec![process as u32; 10]);
            let graph = Arc::clone(&graph);
            std::thread::spawn(move || run_exec(&graph, job, &cluster))
        })
        .collect();
    for handle in handles {
        let err = handle.join().unwrap().unwrap_err();
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

#[test]
fn hostfile_problems_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("graph-distributed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("hosts");
    std::fs::write(&path, "# hosts\n127.0.0.1:2101\nnot-an-address\n").unwrap();
    let err = Cluster::from_hostfile(&path, 0, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "hostfile {}, line 3: `not-an-address` is not host:port",
            path.display()
        )
    );
    std::fs::write(&path, "127.0.0.1:2101\n127.0.0.1:2102\n").unwrap();
    let err = Cluster::from_hostfile(&path, 2, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad cluster: process index 2 is out of range for 2 processes"
    );
    let cluster = Cluster::from_hostfile(&path, 1, 3).unwrap();
    assert_eq!(cluster.workers(), 6);
    std::fs::remove_dir_all(&dir).unwrap();
}
