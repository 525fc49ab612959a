//! `taskgraph run FILE --processes N`: starts N worker processes of this
//! program on loopback ports, each joining the run as `--hostfile H
//! --process I` (see `across`) with a fresh random secret, and watches
//! them: a process that fails or dies ends the run with its cause. The
//! workers die with their supervisor: each reads its standard input, a pipe
//! the supervisor holds open, and stops when it closes.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::across::SECRET_VARIABLE;
use super::args::Args;
use crate::signals::{INTERRUPTED, STOP_GRACE, on_signal};

/// How long the other processes get to stop on their own once one has
/// failed, before they are killed.
const GRACE: Duration = Duration::from_secs(10);

/// Starts `processes` worker processes of this program on loopback ports,
/// each joining the run as `--hostfile H --process I`; process 0 prints the
/// results. Ends when all have ended; when one fails or dies, the others get
/// a grace period and are then killed, and the first cause is the error.
/// Ctrl-C (or SIGTERM) stops the workers, removes the temporary directory
/// and exits with status 130.
pub(crate) fn run(args: &Args, processes: usize) -> anyhow::Result<()> {
    let threads = args.threads.max(1);
    if processes * threads > graph_distributed::MAX_WORKERS {
        bail!(
            "--processes {processes} x --threads {threads} is {} workers, more than the {} a run may have",
            processes * threads,
            graph_distributed::MAX_WORKERS
        );
    }
    if args.file == Path::new("-") {
        bail!("--processes reads the graph in every process: give a file, not standard input");
    }
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = Arc::clone(&stop);
        on_signal(move || stop.store(true, Ordering::SeqCst));
    }
    let secret = fresh_secret()?;
    // The hostfile goes into a private directory, removed when it drops.
    let dir = graph_core::file::private_temp_dir("taskgraph-run-")?;
    let hostfile = dir.path().join("hosts");
    std::fs::write(
        &hostfile,
        free_loopback_addresses(processes)?.join("\n") + "\n",
    )
    .with_context(|| format!("writing {}", hostfile.display()))?;
    let busy = crate::busy::Busy::start(format!("running on {processes} processes"));
    let mut children = Vec::with_capacity(processes);
    for process in 0..processes {
        match spawn(args, &hostfile, &secret, process) {
            Ok(child) => children.push(child),
            Err(err) => {
                end(children);
                return Err(err);
            }
        }
    }
    let watched = watch(children, &stop);
    drop(busy);
    // Removed before exiting: `exit` runs no destructor.
    drop(dir);
    if watched? == Watched::Interrupted {
        std::process::exit(INTERRUPTED);
    }
    Ok(())
}

/// 32 random bytes, in hex, for the workers of one run to prove themselves
/// with; it reaches them through their environment only.
fn fresh_secret() -> anyhow::Result<String> {
    let mut bytes = [0_u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|err| anyhow::anyhow!("no random numbers for the run's secret: {err}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Stops worker processes: closes their standard input, which makes them
/// end their runs (and remove their temporary files); kills those still
/// there after a grace period.
fn end(mut workers: Vec<Worker>) {
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

/// How watching the workers ended.
#[derive(Debug, PartialEq, Eq)]
enum Watched {
    Done,
    Interrupted,
}

/// A worker process and what it writes on standard error.
struct Worker {
    process: usize,
    child: Child,
    /// The write end of its standard input: it lives as long as this
    /// process does, or until the worker is to stop.
    stdin: Option<ChildStdin>,
    stderr: Option<JoinHandle<String>>,
    status: Option<ExitStatus>,
    killed_by_us: bool,
}

fn spawn(args: &Args, hostfile: &Path, secret: &str, process: usize) -> anyhow::Result<Worker> {
    let exe = std::env::current_exe().context("finding the taskgraph executable")?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(&args.file)
        .arg("--hostfile")
        .arg(hostfile)
        .args(["--process", &process.to_string()])
        .args(["--threads", &args.threads.max(1).to_string()])
        .args(["--connect-timeout", &args.connect_timeout.to_string()])
        .args(["--heartbeat-timeout", &args.heartbeat_timeout.to_string()])
        .arg("--supervised")
        // Not on the command line, where any user of the machine could
        // read it, nor in a file.
        .env(SECRET_VARIABLE, secret);
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
        .stdin(Stdio::piped())
        .stdout(if process == 0 {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting worker process {process}"))?;
    let stdin = child.stdin.take();
    let mut pipe = child.stderr.take().expect("stderr is piped");
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    });
    Ok(Worker {
        process,
        child,
        stdin,
        stderr: Some(stderr),
        status: None,
        killed_by_us: false,
    })
}

/// Waits for every worker process; see [`run`]. When `stop` is raised,
/// stops them.
fn watch(mut workers: Vec<Worker>, stop: &AtomicBool) -> anyhow::Result<Watched> {
    let mut deadline: Option<Instant> = None;
    loop {
        if stop.load(Ordering::SeqCst) {
            end(workers);
            return Ok(Watched::Interrupted);
        }
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
    // A process interrupted on its own (SIGINT to it alone) explains why
    // the others lost it.
    if let Some(worker) = workers
        .iter()
        .find(|w| !w.killed_by_us && w.status.and_then(|s| s.code()) == Some(INTERRUPTED))
    {
        bail!(
            "worker process {} (pid {}) was interrupted; the run was abandoned",
            worker.process,
            worker.child.id()
        );
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
    Ok(Watched::Done)
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
