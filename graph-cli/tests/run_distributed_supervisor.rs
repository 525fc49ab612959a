//! The workers of `taskgraph run --processes N` live no longer than their
//! supervisor: killed, they exit on their own; interrupted (SIGINT), it
//! stops them, leaves no temporary directory behind and exits with 130.

mod common;
mod run_distributed_common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::scratch;
use run_distributed_common::{
    alive, assignment, children_of, eventually, finish, leftovers, path, signal, slow_chain,
    wait_connected,
};

/// The supervisor of a two-process run of a 40 s chain, its temporary
/// files under `tmp`; it and its two workers, once connected.
fn supervise(dir: &Path, tmp: &Path, extra: &[&str]) -> (std::process::Child, Vec<u32>) {
    let file = slow_chain(dir, "chain.json", 2000, 0, 0.02);
    let placed = assignment(dir, 2000, 2);
    let supervisor = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
        .args(["run", path(&file), "--processes", "2"])
        .args(["--assignment", path(&placed)])
        .args(extra)
        .env("TMPDIR", tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut workers = Vec::new();
    assert!(
        eventually(Duration::from_secs(30), || {
            workers = children_of(supervisor.id());
            workers.len() == 2
        }),
        "both worker processes start"
    );
    for &worker in &workers {
        wait_connected(worker);
    }
    std::thread::sleep(Duration::from_millis(300));
    (supervisor, workers)
}

#[test]
#[cfg(target_os = "linux")]
fn workers_exit_when_their_supervisor_is_killed() {
    let dir = scratch("distributed-orphans");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut supervisor, workers) = supervise(&dir, &tmp, &[]);
    signal(supervisor.id(), "-9");
    let _ = supervisor.wait();
    for worker in workers {
        assert!(
            eventually(Duration::from_secs(10), || !alive(worker)),
            "worker {worker} outlived its supervisor"
        );
    }
}

#[test]
#[cfg(target_os = "linux")]
fn an_interrupted_supervisor_stops_its_workers_and_leaves_no_temporary_files() {
    let dir = scratch("distributed-interrupt");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // Under a memory limit, a worker that spills would keep a directory of
    // its own too (removed when its run ends).
    let (mut supervisor, workers) = supervise(&dir, &tmp, &["--memory-limit", "1MB"]);
    assert!(
        leftovers(&tmp)
            .iter()
            .any(|name| name.starts_with("taskgraph-run-")),
        "the supervisor's directory is there while it runs"
    );
    signal(supervisor.id(), "-INT");
    let (status, _) = finish(&mut supervisor, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130));
    for worker in workers {
        assert!(!alive(worker), "worker {worker} outlived the interrupt");
    }
    assert_eq!(leftovers(&tmp), Vec::<String>::new());
}

#[test]
#[cfg(target_os = "linux")]
fn an_interrupted_worker_ends_its_run_with_130() {
    let dir = scratch("distributed-interrupt-worker");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut supervisor, workers) = supervise(&dir, &tmp, &[]);
    signal(workers[1], "-INT");
    let (status, stderr) = finish(&mut supervisor, Duration::from_secs(30));
    assert_eq!(status.code(), Some(2));
    // The interrupted process says why the other lost it.
    assert!(
        stderr.starts_with("error: worker process ")
            && stderr.ends_with(&format!(
                " (pid {}) was interrupted; the run was abandoned\n",
                workers[1]
            )),
        "{stderr}"
    );
    assert_eq!(leftovers(&tmp), Vec::<String>::new());
}
