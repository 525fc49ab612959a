//! The handshake between two ends of a loopback connection.

use std::net::{TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use super::*;

fn hello(process: u32, fingerprint: u8) -> Hello {
    Hello {
        channel: Channel::Beat as u32,
        process,
        processes: 2,
        threads: 1,
        fingerprint: [fingerprint; 32],
        nonce: nonce().unwrap(),
    }
}

/// Runs the dialer (process 1) and the acceptor (process 0) against each
/// other with their keys and job fingerprints.
fn shake(
    dialer: (&'static [u8], u8),
    acceptor: (&'static [u8], u8),
) -> (Result<(), Failed>, Result<Dialer, Failed>) {
    shake_as(dialer.0, hello(1, dialer.1), acceptor)
}

/// As [`shake`], the dialer saying `ours`.
fn shake_as(
    key: &'static [u8],
    ours: Hello,
    acceptor: (&'static [u8], u8),
) -> (Result<(), Failed>, Result<Dialer, Failed>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let accepting = thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        accept(
            &mut stream,
            Key(acceptor.0),
            &hello(0, acceptor.1),
            &Channel::ALL,
            deadline,
            |process, channel| process == 1 && channel == Channel::Beat,
        )
    });
    let mut stream = TcpStream::connect(address).unwrap();
    let dialled = dial(&mut stream, Key(key), &ours, 0, deadline);
    drop(stream);
    (dialled, accepting.join().unwrap())
}

#[test]
fn hellos_read_back_and_strangers_are_told_apart() {
    let ours = hello(3, 7);
    assert_eq!(Hello::from_bytes(&ours.to_bytes()).unwrap(), ours);
    let mut other = ours.to_bytes();
    other[7] = b'1';
    assert!(matches!(
        Hello::from_bytes(&other),
        Err(HandshakeProblem::OtherVersion)
    ));
    let mut garbage = ours.to_bytes();
    garbage[0] = b'G';
    assert!(matches!(
        Hello::from_bytes(&garbage),
        Err(HandshakeProblem::WrongGreeting)
    ));
}

#[test]
fn the_same_secret_and_job_connect() {
    let (dialled, accepted) = shake(
        (b"a secret of some length", 1),
        (b"a secret of some length", 1),
    );
    dialled.unwrap();
    let dialer = accepted.unwrap();
    assert_eq!((dialer.process, dialer.channel), (1, Channel::Beat));
}

#[test]
fn another_secret_is_refused_on_both_sides() {
    let (dialled, accepted) = shake(
        (b"a secret of some length", 1),
        (b"another secret, longer", 1),
    );
    let dialled = dialled.unwrap_err();
    assert!(
        matches!(dialled.problem, HandshakeProblem::WrongSecret),
        "{dialled:?}"
    );
    assert_eq!(dialled.proven, None);
    let accepted = accepted.unwrap_err();
    assert!(
        matches!(accepted.problem, HandshakeProblem::HungUpAfterProof),
        "{accepted:?}"
    );
    assert_eq!(accepted.proven, None);
}

#[test]
fn another_job_is_named_on_both_sides() {
    let (dialled, accepted) = shake(
        (b"a secret of some length", 1),
        (b"a secret of some length", 2),
    );
    for failed in [dialled.unwrap_err(), accepted.unwrap_err()] {
        assert!(
            matches!(failed.problem, HandshakeProblem::DifferentJob { .. }),
            "{failed:?}"
        );
        assert!(failed.proven.is_some());
        assert!(
            failed.problem.to_string().contains("runs a different job"),
            "{}",
            failed.problem
        );
    }
}

#[test]
fn a_silent_acceptor_times_out_in_words() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let deadline = Instant::now() + Duration::from_millis(300);
    let failed = dial(&mut stream, Key(b""), &hello(1, 1), 0, deadline).unwrap_err();
    assert_eq!(failed.problem.to_string(), "no greeting within 0.3 s");
}

#[test]
fn a_dialler_for_another_channel_is_a_stranger_whatever_it_proves() {
    let regrouping = Hello {
        channel: Channel::Regroup as u32,
        ..hello(1, 1)
    };
    let (dialled, accepted) = shake_as(b"secret", regrouping, (b"secret", 1));
    let accepted = accepted.unwrap_err();
    assert!(
        matches!(
            accepted.problem,
            HandshakeProblem::OtherChannel { channel: 2 }
        ),
        "{:?}",
        accepted.problem
    );
    assert_eq!(accepted.proven, None);
    assert!(dialled.is_err());
}
