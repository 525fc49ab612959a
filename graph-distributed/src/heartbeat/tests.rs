//! Heartbeats between monitors over loopback connections.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::Monitor;
use crate::Error;

/// Two connected loopback streams.
fn pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (b, _) = listener.accept().unwrap();
    (a, b)
}

fn addresses() -> Vec<String> {
    vec!["127.0.0.1:1".to_string(), "127.0.0.1:2".to_string()]
}

fn wait_for_problem(monitor: &Monitor, limit: Duration) -> Option<Error> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Some(problem) = monitor.problem() {
            return Some(problem);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    None
}

#[test]
fn two_monitors_keep_each_other_alive_and_a_goodbye_is_not_a_death() {
    let (a, b) = pair();
    let timeout = Duration::from_millis(300);
    let zero = Monitor::start(vec![None, Some(a)], Vec::new(), &addresses(), timeout).unwrap();
    let one = Monitor::start(vec![Some(b), None], Vec::new(), &addresses(), timeout).unwrap();
    assert!(wait_for_problem(&zero, Duration::from_secs(1)).is_none());
    one.goodbye();
    std::thread::sleep(Duration::from_millis(100));
    drop(one);
    assert!(wait_for_problem(&zero, Duration::from_secs(1)).is_none());
}

#[test]
fn a_silent_process_is_named() {
    let (a, _b) = pair();
    let (data, _data_peer) = pair();
    let probe = data.try_clone().unwrap();
    let timeout = Duration::from_millis(200);
    let zero = Monitor::start(vec![None, Some(a)], vec![data], &addresses(), timeout).unwrap();
    let problem = wait_for_problem(&zero, Duration::from_secs(5)).expect("it trips");
    assert!(
        matches!(&problem, Error::Silent { process: 1, address, .. } if address == "127.0.0.1:2"),
        "{problem}"
    );
    assert!(zero.tripped());
    // The data connection is shut down: a read ends at once.
    let mut buf = [0_u8; 1];
    assert_eq!(std::io::Read::read(&mut &probe, &mut buf).unwrap_or(0), 0);
}

#[test]
fn a_closed_connection_without_goodbye_is_a_lost_process() {
    let (a, b) = pair();
    let zero = Monitor::start(
        vec![None, Some(a)],
        Vec::new(),
        &addresses(),
        Duration::from_secs(30),
    )
    .unwrap();
    drop(b);
    let problem = wait_for_problem(&zero, Duration::from_secs(5)).expect("it trips");
    assert_eq!(
        problem.to_string(),
        "process 1 (127.0.0.1:2) went away before the run finished (did it die?)"
    );
}
