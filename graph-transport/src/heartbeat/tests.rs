//! Heartbeats between monitors over loopback connections.

use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use graph_core::NodeId;

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
    let zero =
        Monitor::start(vec![None, Some(a)], Vec::new(), &addresses(), timeout, None).unwrap();
    let one = Monitor::start(vec![Some(b), None], Vec::new(), &addresses(), timeout, None).unwrap();
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
    let zero =
        Monitor::start(vec![None, Some(a)], vec![data], &addresses(), timeout, None).unwrap();
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
        None,
    )
    .unwrap();
    drop(b);
    let problem = wait_for_problem(&zero, Duration::from_secs(5)).expect("it trips");
    assert_eq!(
        problem.to_string(),
        "process 1 (127.0.0.1:2) went away before the run finished (did it die?)"
    );
}

#[test]
fn what_a_process_runs_reaches_the_others_in_frames_of_any_size() {
    let (a, b) = pair();
    let timeout = Duration::from_millis(400);
    let progress = crate::Progress::new();
    let zero =
        Monitor::start(vec![None, Some(a)], Vec::new(), &addresses(), timeout, None).unwrap();
    let one = Monitor::start(
        vec![Some(b), None],
        Vec::new(),
        &addresses(),
        timeout,
        Some(progress.clone()),
    )
    .unwrap();
    // More than a frame holds, and more than a read takes in at once.
    let ran: Vec<NodeId> = (0..40_000).map(NodeId::new).collect();
    for &node in &ran[..3] {
        progress.ran(node);
    }
    let watch = zero.watch();
    let started = Instant::now();
    while watch.heard(1).len() < 3 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(watch.heard(1), ran[..3]);
    for &node in &ran[3..] {
        progress.ran(node);
    }
    while watch.heard(1).len() < ran.len() && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(watch.heard(1), ran);
    assert!(watch.heard(0).is_empty() && watch.heard(7).is_empty());
    // Task numbers whose bytes are those of a goodbye or a failure are
    // read as numbers.
    assert_eq!(watch.failed(), None);
    // Frames between beats are beats too: nobody is taken for lost, and a
    // goodbye after them is read as one.
    assert!(watch.lost().is_empty());
    one.goodbye();
    std::thread::sleep(Duration::from_millis(100));
    drop(one);
    std::thread::sleep(Duration::from_millis(100));
    assert!(watch.lost().is_empty(), "{:?}", watch.lost());
    assert!(zero.problem().is_none());
}

#[test]
fn a_frame_no_process_of_the_run_sends_is_not_read_past() {
    let (a, mut b) = pair();
    let zero = Monitor::start(
        vec![None, Some(a)],
        Vec::new(),
        &addresses(),
        Duration::from_millis(300),
        None,
    )
    .unwrap();
    let watch = zero.watch();
    // A count past any frame's, then more: nothing is recorded or kept,
    // but what comes still says the process is there.
    std::io::Write::write_all(&mut b, &[b'R', 0xff, 0xff, 0xff, 0x7f]).unwrap();
    for _ in 0..8 {
        std::io::Write::write_all(&mut b, b"R\x01\x00\x00\x00\x05\x00\x00\x00.").unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(watch.heard(1).is_empty());
    assert!(watch.lost().is_empty());
    assert!(zero.problem().is_none());
}

#[test]
fn one_that_stopped_with_its_own_error_is_not_lost_but_failed() {
    let (a, b) = pair();
    let timeout = Duration::from_secs(30);
    let zero =
        Monitor::start(vec![None, Some(a)], Vec::new(), &addresses(), timeout, None).unwrap();
    let one = Monitor::start(vec![Some(b), None], Vec::new(), &addresses(), timeout, None).unwrap();
    let watch = zero.watch();
    one.failing();
    drop(one);
    let problem = wait_for_problem(&zero, Duration::from_secs(5)).expect("it trips");
    assert!(
        matches!(problem, Error::PeerFailed { process: 1, .. }),
        "{problem}"
    );
    assert_eq!(watch.failed(), Some(1));
}

#[test]
fn a_process_that_goes_away_for_the_loss_of_another_names_that_one() {
    let addresses: Vec<String> = (1..=3).map(|port| format!("127.0.0.1:{port}")).collect();
    let timeout = Duration::from_secs(30);
    let (zero_one, one_zero) = pair();
    let (zero_two, two_zero) = pair();
    let (two_one, one_two) = pair();
    let zero = Monitor::start(
        vec![None, Some(zero_one), Some(zero_two)],
        Vec::new(),
        &addresses,
        timeout,
        None,
    )
    .unwrap();
    let two = Monitor::start(
        vec![Some(two_zero), Some(two_one), None],
        Vec::new(),
        &addresses,
        timeout,
        None,
    )
    .unwrap();
    // Process 1 goes away as far as process 2 can tell; its connection to
    // process 0 stays open, so that 0 hears of the loss only from 2.
    drop(one_two);
    let problem = wait_for_problem(&two, Duration::from_secs(5)).expect("two trips");
    assert!(
        matches!(problem, Error::Lost { process: 1, .. }),
        "{problem}"
    );
    std::thread::sleep(Duration::from_millis(100));
    drop(two);
    let problem = wait_for_problem(&zero, Duration::from_secs(5)).expect("zero trips");
    assert_eq!(
        problem.to_string(),
        "process 1 (127.0.0.1:2) went away before the run finished (did it die?)"
    );
    drop(one_zero);
}
