//! A process of a run across hosts that stops answering (here frozen with
//! SIGSTOP) ends the run in the others within `--heartbeat-timeout`, with
//! an error naming it; one that dies is named too.

mod common;
mod run_distributed_common;

use std::process::Child;
use std::time::Duration;

use common::scratch;
use run_distributed_common::{
    SECRET, assignment, finish, hostfile, path, signal, slow_chain, start, wait_connected,
};

/// Processes 0 and 1 of a hostfile run (`extra` flags added) of a chain
/// that takes 40 s if nothing stops it, both taking part; and their
/// addresses.
fn two_processes(name: &str, extra: &[&str]) -> (Vec<Child>, Vec<String>) {
    let dir = scratch(name);
    let file = slow_chain(&dir, "chain.json", 2000, 0, 0.02);
    let placed = assignment(&dir, 2000, 2);
    let (hosts, addresses) = hostfile(&dir, 2);
    let children = ["0", "1"]
        .into_iter()
        .map(|process| {
            let mut args = vec![
                "run",
                path(&file),
                "--hostfile",
                path(&hosts),
                "--process",
                process,
                "--assignment",
                path(&placed),
            ];
            args.extend_from_slice(extra);
            start(&args, &[("TASKGRAPH_SECRET", SECRET)])
        })
        .collect();
    (children, addresses)
}

#[test]
#[cfg(target_os = "linux")]
fn a_frozen_process_is_named_within_the_heartbeat_timeout() {
    let (mut children, addresses) =
        two_processes("distributed-frozen", &["--heartbeat-timeout", "1"]);
    let frozen = children[1].id();
    wait_connected(frozen);
    std::thread::sleep(Duration::from_millis(300));
    signal(frozen, "-STOP");
    let (status, stderr) = finish(&mut children[0], Duration::from_secs(20));
    signal(frozen, "-KILL");
    let _ = children[1].wait();
    assert_eq!(status.code(), Some(2));
    let (head, tail) = stderr
        .split_once(" s (")
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        head.starts_with(&format!(
            "error: process 1 ({}) has not answered for ",
            addresses[1]
        )),
        "{stderr}"
    );
    assert_eq!(
        tail,
        "is it frozen, or is the network cut?); the run was stopped\n"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn a_process_that_dies_is_named() {
    let (mut children, addresses) = two_processes("distributed-dies", &[]);
    wait_connected(children[1].id());
    std::thread::sleep(Duration::from_millis(300));
    signal(children[1].id(), "-KILL");
    let _ = children[1].wait();
    let (status, stderr) = finish(&mut children[0], Duration::from_secs(20));
    assert_eq!(status.code(), Some(2));
    assert_eq!(
        stderr,
        format!(
            "error: process 1 ({}) went away before the run finished (did it die?)\n",
            addresses[1]
        )
    );
}
