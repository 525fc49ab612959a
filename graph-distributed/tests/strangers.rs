//! Only processes that know the run's secret join it: a stranger with
//! another secret, an idle connection or garbage is dropped, and the
//! process goes on waiting for the real peer; a cluster of several
//! processes with no secret is refused.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{SECRET, loopback, member, run_exec};
use graph_core::{TaskGraph, Term};
use graph_distributed::transport::Error as Transport;
use graph_distributed::{Cluster, ClusterProblem, Error, HandshakeProblem, Job};
use graph_exec::{Dynamic, Tagged};

/// `a + b`, with `a` on worker 1 (process 1) and `b`, `c` on worker 0.
fn sum(a: i64) -> (Arc<TaskGraph>, Job) {
    let graph = TaskGraph::builder()
        .task("a", Term::lit(a))
        .task("b", Term::lit(2))
        .task("c", Term::call("add", [Term::key("a"), Term::key("b")]))
        .build()
        .unwrap();
    let c = graph.node_id(&"c".into()).unwrap();
    (Arc::new(graph), Job::new([c], vec![1, 0, 0]))
}

fn result_of(outcome: Option<graph_distributed::Outcome<Tagged>>) -> Dynamic {
    outcome.expect("process 0").values[0].1.0.clone()
}

/// Waits until something listens at `address`.
fn wait_for_listener(address: &str) {
    for _ in 0..500 {
        if TcpStream::connect(address).is_ok() {
            return;
        }
        thread::sleep(Duration::from_millis(10));
    }
    panic!("nothing listens at {address}");
}

#[test]
fn a_stranger_with_another_secret_is_refused_and_the_run_goes_on() {
    let addresses = loopback(2);
    let (graph, job) = sum(1);
    let first = {
        let cluster = member(&addresses, 0, 1).with_connect_timeout(Duration::from_secs(30));
        let (graph, job) = (Arc::clone(&graph), job.clone());
        thread::spawn(move || run_exec(&graph, job, &cluster))
    };
    wait_for_listener(&addresses[0]);
    // The same shape, other values, another secret: it learns nothing, and
    // process 0 does not run with it.
    let (strange_graph, strange_job) = sum(1000);
    let stranger = Cluster::new(addresses.clone(), 1, 1)
        .unwrap()
        .with_secret(b"a stranger's guess at the secret")
        .unwrap()
        .with_connect_timeout(Duration::from_secs(10));
    let err = run_exec(&strange_graph, strange_job, &stranger).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Transport(Transport::Handshake {
                process: Some(0),
                problem: HandshakeProblem::WrongSecret,
                ..
            })
        ),
        "{err}"
    );
    // Only then does the real process 1 come.
    let second = run_exec(&graph, job, &member(&addresses, 1, 1)).unwrap();
    assert!(second.is_none());
    assert_eq!(result_of(first.join().unwrap().unwrap()), Dynamic::Int(3));
}

#[test]
fn idle_and_garbage_connections_do_not_stop_the_run() {
    let addresses = loopback(2);
    let (graph, job) = sum(1);
    let first = {
        let cluster = member(&addresses, 0, 1);
        let (graph, job) = (Arc::clone(&graph), job.clone());
        thread::spawn(move || run_exec(&graph, job, &cluster))
    };
    wait_for_listener(&addresses[0]);
    // Some say nothing, some say nonsense, some a lot of it, some hang up.
    let mut idle: Vec<TcpStream> = (0..5)
        .map(|_| TcpStream::connect(&addresses[0]).unwrap())
        .collect();
    for garbage in [&b"GET / HTTP/1.1\r\n\r\n"[..], &[0_u8; 4096], &[0xff; 100]] {
        let mut stream = TcpStream::connect(&addresses[0]).unwrap();
        let _ = stream.write_all(garbage);
        idle.push(stream);
    }
    drop(TcpStream::connect(&addresses[0]).unwrap());
    let second = {
        let cluster = member(&addresses, 1, 1);
        thread::spawn(move || run_exec(&graph, job, &cluster))
    };
    assert!(second.join().unwrap().unwrap().is_none());
    assert_eq!(result_of(first.join().unwrap().unwrap()), Dynamic::Int(3));
    drop(idle);
}

#[test]
fn dropped_connections_are_reported_when_the_peer_never_comes() {
    let addresses = loopback(2);
    let (graph, job) = sum(1);
    let first = {
        let cluster = member(&addresses, 0, 1).with_connect_timeout(Duration::from_millis(1500));
        thread::spawn(move || run_exec(&graph, job, &cluster))
    };
    wait_for_listener(&addresses[0]);
    let mut garbage = TcpStream::connect(&addresses[0]).unwrap();
    garbage.write_all(&[b'x'; 88]).unwrap();
    let err = first.join().unwrap().unwrap_err();
    let Error::Transport(Transport::ConnectTimeout {
        process: 1,
        dropped_count,
        ..
    }) = &err
    else {
        panic!("{err}");
    };
    // The probe of `wait_for_listener` hung up at once; the garbage said
    // the wrong thing.
    assert!(*dropped_count >= 2, "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "process 1 ({}) did not connect within 1.5 s; is it running? (",
            addresses[1]
        )),
        "{message}"
    );
    assert!(
        message.contains("not a taskgraph process (wrong greeting)"),
        "{message}"
    );
}

#[test]
fn several_processes_need_a_secret_or_leave_to_run_without() {
    let addresses = loopback(2);
    let (graph, job) = sum(1);
    let bare = Cluster::new(addresses.clone(), 0, 1).unwrap();
    let err = run_exec(&graph, job.clone(), &bare).unwrap_err();
    assert!(
        matches!(err, Error::Transport(Transport::NoSecret)),
        "{err}"
    );
    let err = Cluster::new(addresses.clone(), 0, 1)
        .unwrap()
        .with_secret(b"short")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad cluster: a secret of 5 bytes is too short to keep strangers out: use at least 16 random bytes"
    );
    // Insecure on both sides runs; one process alone needs no secret.
    let handles: Vec<_> = (0..2)
        .map(|process| {
            let cluster = Cluster::new(addresses.clone(), process, 1)
                .unwrap()
                .insecure();
            let (graph, job) = (Arc::clone(&graph), job.clone());
            thread::spawn(move || run_exec(&graph, job, &cluster))
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(matches!(results[1], Ok(None)));
    assert_eq!(
        result_of(results.into_iter().next().unwrap().unwrap()),
        Dynamic::Int(3)
    );
    let alone = Job::new([graph.node_id(&"c".into()).unwrap()], vec![0, 0, 0]);
    let outcome = run_exec(&graph, alone, &Cluster::local(1)).unwrap();
    assert_eq!(result_of(outcome), Dynamic::Int(3));
    // A secret on one side only does not connect.
    let addresses = loopback(2);
    let insecure = {
        let cluster = Cluster::new(addresses.clone(), 0, 1)
            .unwrap()
            .insecure()
            .with_connect_timeout(Duration::from_secs(2));
        let (graph, job) = (Arc::clone(&graph), job.clone());
        thread::spawn(move || run_exec(&graph, job, &cluster))
    };
    let cluster = Cluster::new(addresses.clone(), 1, 1)
        .unwrap()
        .with_secret(SECRET)
        .unwrap()
        .with_connect_timeout(Duration::from_secs(2));
    let err = run_exec(&graph, job, &cluster).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Transport(Transport::Handshake {
                problem: HandshakeProblem::WrongSecret,
                ..
            })
        ),
        "{err}"
    );
    let err = insecure.join().unwrap().unwrap_err();
    assert!(
        err.to_string().contains("does it use another secret?"),
        "{err}"
    );
}

#[test]
fn processes_with_other_task_bodies_refuse_to_run_together() {
    let addresses = loopback(2);
    let handles: Vec<_> = [1, 1000]
        .into_iter()
        .enumerate()
        .map(|(process, a)| {
            let (graph, job) = sum(a);
            let cluster =
                member(&addresses, process, 1).with_connect_timeout(Duration::from_secs(10));
            thread::spawn(move || run_exec(&graph, job, &cluster))
        })
        .collect();
    for (process, handle) in handles.into_iter().enumerate() {
        let err = handle.join().unwrap().unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Transport(Transport::Handshake {
                    problem: HandshakeProblem::DifferentJob { .. },
                    ..
                })
            ),
            "process {process}: {err}"
        );
        assert!(
            err.to_string()
                .contains("runs a different job: its graph (task keys or bodies)"),
            "{err}"
        );
    }
}

#[test]
fn a_run_has_at_most_so_many_processes_and_workers() {
    let err = Cluster::new(loopback(2), 0, 600).unwrap_err();
    assert!(
        matches!(
            err,
            Transport::Cluster {
                problem: ClusterProblem::TooManyWorkers {
                    processes: 2,
                    threads: 600,
                    max: 1024
                }
            }
        ),
        "{err}"
    );
    let many: Vec<String> = (0..300)
        .map(|i| format!("127.0.0.1:{}", 2000 + i))
        .collect();
    let err = Cluster::new(many, 0, 1).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad cluster: 300 processes, more than the 256 a run may have"
    );
    assert!(Cluster::new(loopback(2), 0, 512).is_ok());
}
