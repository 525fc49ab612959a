//! `taskgraph run FILE --processes N`: starts N worker processes of this
//! program on loopback ports, each joining the run as `--hostfile H
//! --process I` (see `across`), and watches them: a process that fails or
//! dies ends the run with its cause.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::run::Args;

/// How long the other processes get to stop on their own once one has
/// failed, before they are killed.
const GRACE: Duration = Duration::from_secs(10);

/// Starts `processes` worker processes of this program on loopback ports,
/// each joining the run as `--hostfile H --process I`; process 0 prints the
/// results. Ends when all have ended; when one fails or dies, the others get
/// a grace period and are then killed, and the first cause is the error.
pub(crate) fn run(args: &Args, processes: usize) -> anyhow::Result<()> {
    if processes == 0 {
        bail!("--processes must be at least 1");
    }
    args.connect_timeout()?;
    if args.file == Path::new("-") {
        bail!("--processes reads the graph in every process: give a file, not standard input");
    }
    // The hostfile goes into a private directory, removed when it drops.
    let dir = tempfile::Builder::new()
        .prefix("taskgraph-run-")
        .tempdir()
        .context("making a private temporary directory")?;
    let hostfile = dir.path().join("hosts");
    std::fs::write(
        &hostfile,
        free_loopback_addresses(processes)?.join("\n") + "\n",
    )
    .with_context(|| format!("writing {}", hostfile.display()))?;
    let _busy = crate::busy::Busy::start(format!("running on {processes} processes"));
    let children = (0..processes)
        .map(|process| spawn(args, &hostfile, process))
        .collect::<anyhow::Result<Vec<_>>>()?;
    watch(children)
}

/// A worker process and what it writes on standard error.
struct Worker {
    process: usize,
    child: Child,
    stderr: Option<JoinHandle<String>>,
    status: Option<ExitStatus>,
    killed_by_us: bool,
}

fn spawn(args: &Args, hostfile: &Path, process: usize) -> anyhow::Result<Worker> {
    let exe = std::env::current_exe().context("finding the taskgraph executable")?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(&args.file)
        .arg("--hostfile")
        .arg(hostfile)
        .args(["--process", &process.to_string()])
        .args(["--threads", &args.threads.max(1).to_string()])
        .args(["--connect-timeout", &args.connect_timeout.to_string()]);
    if let Some(keys) = &args.keys {
        command.args(["--keys", keys]);
    }
    if let Some(assignment) = &args.assignment {
        command.arg("--assignment").arg(assignment);
    }
    if let Some(bytes) = args.memory_limit {
        command.args(["--memory-limit", &bytes.to_string()]);
    }
    if args.json {
        command.arg("--json");
    }
    command
        .stdin(Stdio::null())
        .stdout(if process == 0 {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting worker process {process}"))?;
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    Ok(Worker {
        process,
        child,
        stderr: Some(stderr),
        status: None,
        killed_by_us: false,
    })
}

/// Waits for every worker process; see [`supervise`].
fn watch(mut workers: Vec<Worker>) -> anyhow::Result<()> {
    let mut deadline: Option<Instant> = None;
    loop {
        for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
            worker.status = worker.child.try_wait()?;
            if worker.status.is_some_and(|s| !s.success()) && deadline.is_none() {
                deadline = Some(Instant::now() + GRACE);
            }
        }
        if workers.iter().all(|w| w.status.is_some()) {
            break;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
                let _ = worker.child.kill();
                worker.killed_by_us = true;
                worker.status = Some(worker.child.wait()?);
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let mut messages = Vec::new();
    for worker in &mut workers {
        let stderr = worker
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        messages.push(stderr);
    }
    // A process that died says why the others failed; else the first error.
    for worker in &workers {
        let status = worker.status.expect("every worker has ended");
        if let Some(signal) = signal_of(status)
            && !worker.killed_by_us
        {
            bail!(
                "worker process {} (pid {}) was killed by signal {signal}; the run was abandoned",
                worker.process,
                worker.child.id()
            );
        }
    }
    for (worker, stderr) in workers.iter().zip(&messages) {
        let status = worker.status.expect("every worker has ended");
        if !status.success() {
            let error = stderr
                .lines()
                .rev()
                .find_map(|line| line.strip_prefix("error: "))
                .map_or_else(|| format!("it ended with {status}"), str::to_string);
            if worker.killed_by_us {
                bail!(
                    "worker process {} did not stop after another failed, and was killed",
                    worker.process
                );
            }
            bail!("{error}");
        }
    }
    Ok(())
}

#[cfg(unix)]
fn signal_of(status: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_status: ExitStatus) -> Option<i32> {
    None
}

/// `n` loopback addresses whose ports were free a moment ago.
fn free_loopback_addresses(n: usize) -> anyhow::Result<Vec<String>> {
    let listeners = (0..n)
        .map(|_| TcpListener::bind("127.0.0.1:0"))
        .collect::<std::io::Result<Vec<_>>>()
        .context("finding free loopback ports")?;
    listeners
        .iter()
        .map(|l| Ok(l.local_addr()?.to_string()))
        .collect()
}
