//! `taskgraph run FILE --processes N`: starts N worker processes of this
//! program (see `spawn`), each joining the run as `--hostfile H --process
//! I` (see `across`) with a fresh random secret, and watches them: a
//! process that fails or dies ends the run with its cause, unless the
//! policy (see `policy`) lets the others go on without it.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::args::Args;
use super::policy::{GRACE, Loss, Recovery, Step, listen};
use super::spawn::{
    Heard, Spawn, Worker, end, free_loopback_addresses, fresh_secret, signal_of, spawn,
    stop_the_rest,
};
use crate::exit::INTERRUPTED;
use crate::signals::on_signal;

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
    // The workers share this machine's memory and this process's cgroup:
    // without a limit given, each holds its share of the default.
    let memory_limit = args
        .memory_limit
        .unwrap_or_else(|| graph_exec::memory::default_memory_limit() / processes as u64);
    let busy = crate::busy::Busy::start(format!("running on {processes} processes"));
    let mut children = Vec::with_capacity(processes);
    let (reports, reported) = mpsc::channel();
    // Counted before any worker starts: one may be killed at once.
    let oom_kills = graph_exec::memory::oom_kills();
    let started = Spawn {
        hostfile: &hostfile,
        dir: dir.path(),
        secret: &secret,
        memory_limit,
    };
    for process in 0..processes {
        match spawn(args, &started, process, reports.clone()) {
            Ok(child) => children.push(child),
            Err(err) => {
                end(children);
                return Err(err);
            }
        }
    }
    drop(reports);
    let watched = watch(children, &stop, args, dir.path(), &reported, oom_kills);
    drop(busy);
    // Removed before exiting: `exit` runs no destructor.
    drop(dir);
    if watched? == Watched::Interrupted {
        std::process::exit(INTERRUPTED);
    }
    Ok(())
}

/// How watching the workers ended.
#[derive(Debug, PartialEq, Eq)]
enum Watched {
    Done,
    Interrupted,
}

/// Waits for every worker process; see [`run`]. When `stop` is raised,
/// stops them. When one is lost (killed, crashed, or silent: it does not
/// report when the others do) and `--retries` allows, the survivors go on
/// in a further attempt ([`Recovery`]).
fn watch(
    mut workers: Vec<Worker>,
    stop: &AtomicBool,
    args: &Args,
    dir: &Path,
    reports: &mpsc::Receiver<(usize, Heard)>,
    oom_kills: Option<u64>,
) -> anyhow::Result<Watched> {
    let mut deadline: Option<Instant> = None;
    let mut recovery = Recovery::new(args, oom_kills);
    loop {
        if stop.load(Ordering::SeqCst) {
            end(workers);
            return Ok(Watched::Interrupted);
        }
        listen(reports, &mut workers, &mut recovery);
        let mut abandoned = false;
        for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
            worker.status = worker.child.try_wait()?;
            let Some(status) = worker.status else {
                continue;
            };
            if status.success() || deadline.is_some() {
                continue;
            }
            match recovery.lost(worker, status) {
                Loss::GoneOn => {}
                Loss::Abandoned => {
                    abandoned = true;
                    deadline = Some(Instant::now() + GRACE);
                }
                Loss::Failed => deadline = Some(Instant::now() + GRACE),
            }
        }
        recovery.tell_lost(&mut workers);
        if deadline.is_none() {
            match recovery.go_on(&mut workers, dir, reports)? {
                Step::Wait => {}
                Step::GiveUp => {
                    abandoned = true;
                    deadline = Some(Instant::now() + GRACE);
                }
            }
        }
        if abandoned {
            stop_the_rest(&mut workers);
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
    if let Some(error) = recovery.failure {
        bail!("{error}");
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
    // Processes lost and gone on without are no failure.
    let workers: Vec<&Worker> = workers
        .iter()
        .filter(|w| w.current.is_some() || !recovery.recovered_from(w.process))
        .collect();
    let messages: Vec<&String> = workers.iter().map(|w| &messages[w.process]).collect();
    // A process that died says why the others failed; else the first error.
    for worker in &workers {
        let status = worker.status.expect("every worker has ended");
        if let Some(signal) = signal_of(status)
            && !worker.killed_by_us
        {
            bail!(
                "worker process {} (pid {}) was {}; the run was abandoned",
                worker.process,
                worker.child.id(),
                recovery.killed_how(worker.process, signal)
            );
        }
    }
    // A process interrupted on its own (SIGINT to it alone) explains why
    // the others lost it.
    if let Some(worker) = workers.iter().find(|w| {
        !w.killed_by_us && !w.stopped_by_us && w.status.and_then(|s| s.code()) == Some(INTERRUPTED)
    }) {
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
