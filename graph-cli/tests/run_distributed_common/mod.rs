//! Helpers of the tests of runs across real processes: graphs that take a
//! while, hostfiles of free loopback ports, and processes watched from
//! outside (Linux's /proc).

#![allow(dead_code, unreachable_pub)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

#[path = "../../src/procfs.rs"]
mod procfs;

#[allow(unused_imports, reason = "each test binary reads some")]
pub(crate) use procfs::{alive, children_of, eventually, has_connected};

/// A secret for the hand-started processes of a test.
pub const SECRET: &str = "a secret the test's processes share";

pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A chain of `n` `inc`s from `start`, each also sleeping `seconds`, in
/// `dir/name`.
pub fn slow_chain(dir: &Path, name: &str, n: usize, start: i64, seconds: f64) -> PathBuf {
    chain(dir, name, n, start, seconds, None)
}

/// [`slow_chain`] from 0 whose task `x-{at}` divides by zero instead.
pub fn failing_chain(dir: &Path, name: &str, n: usize, seconds: f64, at: usize) -> PathBuf {
    chain(dir, name, n, 0, seconds, Some(at))
}

fn chain(
    dir: &Path,
    name: &str,
    n: usize,
    start: i64,
    seconds: f64,
    failing: Option<usize>,
) -> PathBuf {
    let mut tasks = vec![format!(r#"{{"key":"x-0","task":{start}}}"#)];
    for i in 1..n {
        let (op, extra) = if failing == Some(i) {
            ("div", ",0")
        } else {
            ("inc", "")
        };
        tasks.push(format!(
            r#"{{"key":"x-{i}","task":{{"call":"sleep","args":[{{"call":"{op}","args":[{{"ref":"x-{}"}}{extra}]}},{seconds}]}}}}"#,
            i - 1
        ));
    }
    write_graph(&dir.join(name), &tasks)
}

/// Writes a taskgraph-json/1 file of `tasks` (each a task's JSON) to
/// `file`, and gives its path back.
pub fn write_graph(file: &Path, tasks: &[String]) -> PathBuf {
    std::fs::write(
        file,
        format!(
            r#"{{"format":"taskgraph-json/1","tasks":[{}]}}"#,
            tasks.join(",\n")
        ),
    )
    .unwrap();
    file.to_path_buf()
}

/// An assignment file for a chain of `n` tasks on `workers` workers:
/// every task on worker 0 but `x-1` on worker 1, so that both processes
/// take part and stay in the run until its end.
pub fn assignment(dir: &Path, n: usize, workers: usize) -> PathBuf {
    assignment_with(dir, n, workers, 1, 1)
}

/// An assignment file for a chain of `n` tasks on `workers` workers:
/// every task on worker 0 but `x-{task}` on `worker`.
pub fn assignment_with(
    dir: &Path,
    n: usize,
    workers: usize,
    task: usize,
    worker: usize,
) -> PathBuf {
    let pairs: Vec<String> = (0..n)
        .map(|i| format!(r#"["x-{i}",{}]"#, if i == task { worker } else { 0 }))
        .collect();
    let file = dir.join("assignment.json");
    std::fs::write(
        &file,
        format!(
            r#"{{"workers":{workers},"assignment":[{}]}}"#,
            pairs.join(",")
        ),
    )
    .unwrap();
    file
}

/// A hostfile of `n` free loopback ports, and the addresses.
pub fn hostfile(dir: &Path, n: usize) -> (PathBuf, Vec<String>) {
    let listeners: Vec<TcpListener> = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0").unwrap())
        .collect();
    let addresses: Vec<String> = listeners
        .iter()
        .map(|l| l.local_addr().unwrap().to_string())
        .collect();
    let file = dir.join("hosts");
    std::fs::write(&file, addresses.join("\n") + "\n").unwrap();
    (file, addresses)
}

/// `taskgraph ARGS`, its output piped, with `env` set.
pub fn start(args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_taskgraph"));
    command
        .args(args)
        .env_remove("TASKGRAPH_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

/// Waits for `child` at most `limit` (then kills it and fails); its exit
/// status and standard error.
pub fn finish(child: &mut Child, limit: Duration) -> (ExitStatus, String) {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("the process did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(pipe) = child.stderr.as_mut() {
        std::io::Read::read_to_string(pipe, &mut stderr).unwrap();
    }
    (status, stderr)
}

/// Sends `signal` (`-STOP`, `-INT`, `-9`, ...) to `pid` with `kill`.
pub fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill {signal} {pid}");
}

/// Waits until process `pid` of a run of two has finished connecting to
/// the other.
pub fn wait_connected(pid: u32) {
    assert!(
        eventually(Duration::from_secs(30), || has_connected(pid, 2)),
        "process {pid} did not connect"
    );
}

/// The `taskgraph-*` entries of `tmp`.
pub fn leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("taskgraph-"))
        .collect()
}
