//! The data connection between two processes, after the handshake, goes
//! through a relay that tampers with it: garbage, a frame that announces
//! more than the limit, or a frame that starts and never finishes. Each
//! ends the run in both processes with an error, the one that reads it
//! naming the other; none hangs.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::{member, run_exec};
use graph_core::{TaskGraph, Term};
use graph_distributed::transport::{Error as Transport, FrameProblem};
use graph_distributed::{Error, Job};

/// How long a process idles in a task while the relay tampers.
const SLEEP: f64 = 4.0;

/// `a + b`, with `a` (a sleep) on process 1 and `b`, `c` on process 0: the
/// data connection idles between frames while `a` runs.
fn slow_sum() -> (Arc<TaskGraph>, Job) {
    let graph = TaskGraph::builder()
        .task("a", Term::call("sleep", [Term::lit(1), Term::lit(SLEEP)]))
        .task("b", Term::lit(2))
        .task("c", Term::call("add", [Term::key("a"), Term::key("b")]))
        .build()
        .unwrap();
    let c = graph.node_id(&"c".into()).unwrap();
    (Arc::new(graph), Job::new([c], vec![1, 0, 0]))
}

/// A relay in front of `target`: what it accepts goes on to `target` and
/// back, and `inject` goes to `target` on every connection `after` it was
/// made. Returns the relay's address.
fn relay(host: &str, target: String, inject: Vec<u8>, after: Duration) -> String {
    let listener = TcpListener::bind((host, 0)).unwrap();
    let address = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            // Not listening yet: the client dials again.
            let Ok(server) = TcpStream::connect(&target) else {
                continue;
            };
            let (mut back_from, mut back_to) =
                (server.try_clone().unwrap(), client.try_clone().unwrap());
            thread::spawn(move || {
                let _ = std::io::copy(&mut back_from, &mut back_to);
                let _ = back_to.shutdown(Shutdown::Write);
            });
            let inject = inject.clone();
            thread::spawn(move || forward(client, server, &inject, after));
        }
    });
    address
}

/// Copies `from` to `to`, putting `inject` in `after` the start.
fn forward(mut from: TcpStream, mut to: TcpStream, inject: &[u8], after: Duration) {
    let start = Instant::now();
    let mut injected = false;
    from.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let mut buf = [0; 64 * 1024];
    loop {
        if !injected && start.elapsed() >= after {
            injected = true;
            if to.write_all(inject).is_err() {
                break;
            }
        }
        match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            Err(err)
                if matches!(
                    err.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// A frame header from worker 1 (process 1's) to worker 0 (process 0's).
fn header(length: u64) -> Vec<u8> {
    [0, 1, 0, 1, length, 0]
        .iter()
        .flat_map(|word: &u64| word.to_be_bytes())
        .collect()
}

/// `n` addresses on `host` (a loopback address) where nothing listens now.
fn free_on(host: &str, n: usize) -> Vec<String> {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind((host, 0)).unwrap())
        .collect();
    listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect()
}

/// Runs the slow sum with process 1 reaching process 0 through a relay
/// that injects `inject` a second in; both processes' errors, or a panic
/// if either is still running after a minute. Each test runs on a loopback
/// address of its own (`host`): a port one gives back before its process
/// listens on it could otherwise go to another test's relay meanwhile.
fn tampered(host: &str, inject: Vec<u8>) -> (Error, Error) {
    let addresses = free_on(host, 2);
    let through_relay = vec![
        relay(host, addresses[0].clone(), inject, Duration::from_secs(1)),
        addresses[1].clone(),
    ];
    let (graph, job) = slow_sum();
    let (done, ended) = mpsc::channel();
    for (process, addresses) in [(0, addresses), (1, through_relay)] {
        let cluster = member(&addresses, process, 1).with_heartbeat_timeout(Duration::from_secs(1));
        let (graph, job, done) = (Arc::clone(&graph), job.clone(), done.clone());
        thread::spawn(move || {
            let result = run_exec(&graph, job, &cluster);
            done.send((process, result.map(|_| ()))).unwrap();
        });
    }
    let mut errors = [None, None];
    for _ in 0..2 {
        let (process, result) = ended
            .recv_timeout(Duration::from_secs(60))
            .expect("both processes end within a minute");
        errors[process] = Some(result.expect_err("the run stops"));
    }
    let [first, second] = errors;
    (first.unwrap(), second.unwrap())
}

#[test]
fn garbage_on_the_data_connection_stops_both_processes_naming_the_sender() {
    // No 'G' in it, so that the heartbeat connection takes it for beats.
    let (first, second) = tampered("127.0.0.3", vec![0xA5; 4096]);
    assert!(
        matches!(
            &first,
            Error::Transport(Transport::Malformed {
                process: 1,
                problem: FrameProblem::TooLong { .. },
                ..
            })
        ),
        "{first}"
    );
    assert!(first.to_string().contains("malformed frame"), "{first}");
    // Process 1 sees process 0 hang up on it.
    assert!(
        !matches!(second, Error::Transport(Transport::Malformed { .. })),
        "{second}"
    );
}

#[test]
fn a_frame_announcing_more_than_the_limit_is_refused_before_its_body() {
    let (first, _) = tampered("127.0.0.4", header(1 << 63));
    assert!(
        matches!(&first, Error::Transport(Transport::Malformed { process: 1, problem, .. })
            if *problem == FrameProblem::TooLong { length: 1 << 63 }),
        "{first}"
    );
}

#[test]
fn a_frame_that_stalls_is_noticed_like_a_silent_peer() {
    // A header for 1 MiB, and nothing after it, while the heartbeats go on.
    let (first, _) = tampered("127.0.0.5", header(1 << 20));
    assert!(
        matches!(&first, Error::Transport(Transport::Stalled { process: 1, waited, .. }) if *waited >= Duration::from_secs(1)),
        "{first}"
    );
    assert!(
        first
            .to_string()
            .contains("stalled in the middle of a frame"),
        "{first}"
    );
}
