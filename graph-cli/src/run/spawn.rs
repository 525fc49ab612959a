//! The worker processes of `taskgraph run FILE --processes N`: started on
//! loopback ports with a fresh secret, heard on their standard error, and
//! stopped. A worker dies with its supervisor: it reads its standard input,
//! a pipe the supervisor holds open, and stops when it closes.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::across::SECRET_VARIABLE;
use super::args::Args;
use super::protocol::{self, Report};
use crate::signals::STOP_GRACE;

/// 32 random bytes, in hex, for the workers of one run to prove themselves
/// with; it reaches them through their environment only.
pub(crate) fn fresh_secret() -> anyhow::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|err| anyhow::anyhow!("no random numbers for the run's secret: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Stops worker processes: closes their standard input, which makes them
/// end their runs (and remove their temporary files); kills those still
/// there after a grace period.
pub(super) fn end(mut workers: Vec<Worker>) {
    for worker in &mut workers {
        worker.stdin.take();
    }
    let deadline = Instant::now() + STOP_GRACE + Duration::from_secs(1);
    loop {
        let mut running = 0;
        for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
            worker.status = worker.child.try_wait().ok().flatten();
            running += usize::from(worker.status.is_none());
        }
        if running == 0 {
            break;
        }
        if Instant::now() >= deadline {
            for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
                let _ = worker.child.kill();
                worker.killed_by_us = true;
                worker.status = worker.child.wait().ok();
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A worker process and what it writes on standard error.
pub(super) struct Worker {
    pub(super) process: usize,
    pub(super) child: Child,
    /// The write end of its standard input: it lives as long as this
    /// process does, or until the worker is to stop.
    pub(super) stdin: Option<ChildStdin>,
    pub(super) stderr: Option<JoinHandle<String>>,
    pub(super) status: Option<ExitStatus>,
    pub(super) killed_by_us: bool,
    /// Whether its standard input was closed for the run to stop, once it
    /// could not go on without a lost process: it ends as if interrupted.
    pub(super) stopped_by_us: bool,
    /// Its number in the current attempt; `None` once it is lost.
    pub(super) current: Option<usize>,
    /// What it holds, once it has reported a loss in the current attempt.
    pub(super) reported: Option<Report>,
    /// The tasks it has said it ran.
    pub(super) ran: Vec<u32>,
}

/// What every worker process of a run is started with.
pub(super) struct Spawn<'a> {
    /// The run's hostfile.
    pub(super) hostfile: &'a Path,
    /// The supervisor's private directory.
    pub(super) dir: &'a Path,
    /// The run's secret.
    pub(super) secret: &'a str,
    /// Each worker's `--memory-limit`.
    pub(super) memory_limit: u64,
}

/// Starts worker process `process`. Its temporary files (spilled results)
/// go into a directory of its own inside the supervisor's, so that they go
/// with it even when the worker is killed before it can remove them.
pub(super) fn spawn(
    args: &Args,
    with: &Spawn<'_>,
    process: usize,
    reports: mpsc::Sender<(usize, Heard)>,
) -> anyhow::Result<Worker> {
    let exe = std::env::current_exe().context("finding the taskgraph executable")?;
    let tmp = with.dir.join(format!("worker-{process}"));
    std::fs::create_dir(&tmp).with_context(|| format!("making {}", tmp.display()))?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(&args.file)
        .arg("--hostfile")
        .arg(with.hostfile)
        .args(["--process", &process.to_string()])
        .args(["--threads", &args.threads.max(1).to_string()])
        .args(["--connect-timeout", &args.connect_timeout.to_string()])
        .args(["--heartbeat-timeout", &args.heartbeat_timeout.to_string()])
        .args(["--memory-limit", &with.memory_limit.to_string()])
        .arg("--supervised")
        .env("TMPDIR", &tmp)
        // Not on the command line, where any user of the machine could
        // read it, nor in a file.
        .env(SECRET_VARIABLE, with.secret);
    if let Some(keys) = &args.keys {
        command.args(["--keys", keys]);
    }
    if let Some(assignment) = &args.assignment {
        command.arg("--assignment").arg(assignment);
    }
    if args.json {
        command.arg("--json");
    }
    // Every worker may end up process 0 of the last attempt, which prints
    // the results; the others print nothing.
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting worker process {process}"))?;
    let stdin = child.stdin.take();
    let pipe = child.stderr.take().expect("stderr is piped");
    let stderr = std::thread::spawn(move || read_stderr(pipe, process, &reports));
    Ok(Worker {
        process,
        child,
        stdin,
        stderr: Some(stderr),
        status: None,
        killed_by_us: false,
        stopped_by_us: false,
        current: Some(process),
        reported: None,
        ran: Vec::new(),
    })
}

/// What a worker says to its supervisor on its standard error.
pub(super) enum Heard {
    /// What it holds after a loss.
    Report(Report),
    /// Tasks it has run since it last said.
    Ran(Vec<u32>),
}

/// Reads a worker's standard error: its reports after a loss go to
/// `reports`, its notes to this process's standard error as they come, and
/// the rest is given back when it closes.
pub(super) fn read_stderr(
    pipe: ChildStderr,
    process: usize,
    reports: &mpsc::Sender<(usize, Heard)>,
) -> String {
    let mut text = String::new();
    let mut reader = BufReader::new(pipe);
    let mut bytes = Vec::new();
    // Read to the end whatever comes (text that is not UTF-8 included), so
    // that the worker never waits on a full pipe.
    while matches!(reader.read_until(b'\n', &mut bytes), Ok(read) if read > 0) {
        let line = String::from_utf8_lossy(&bytes);
        let line = line.trim_end_matches('\n');
        if let Some(report) = line.strip_prefix(protocol::REPORT) {
            if let Ok(report) = serde_json::from_str(report) {
                let _ = reports.send((process, Heard::Report(report)));
            }
        } else if let Some(ran) = line.strip_prefix(protocol::PROGRESS) {
            if let Ok(ran) = serde_json::from_str(ran) {
                let _ = reports.send((process, Heard::Ran(ran)));
            }
        } else if let Some(note) = line.strip_prefix(protocol::NOTE) {
            let _ = writeln!(std::io::stderr(), "{note}");
        } else {
            text.push_str(line);
            text.push('\n');
        }
        bytes.clear();
    }
    text
}

/// Once the run cannot go on without a lost process, stops the workers
/// still running at once, rather than leave them waiting for an attempt
/// that will not come: their standard input closes, and each ends its run
/// (removing its temporary files) and exits.
pub(super) fn stop_the_rest(workers: &mut [Worker]) {
    for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
        if worker.stdin.take().is_some() {
            worker.stopped_by_us = true;
        }
    }
}

#[cfg(unix)]
pub(super) fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
pub(super) fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

/// `n` loopback addresses whose ports were free a moment ago.
pub(crate) fn free_loopback_addresses(n: usize) -> anyhow::Result<Vec<String>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .context("finding free loopback ports")?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.to_string()))
        .collect()
}
