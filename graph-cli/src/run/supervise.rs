//! `taskgraph run FILE --processes N`: starts N worker processes of this
//! program on loopback ports, each joining the run as `--hostfile H
//! --process I` (see `across`) with a fresh random secret, and watches
//! them: a process that fails or dies ends the run with its cause. The
//! workers die with their supervisor: each reads its standard input, a pipe
//! the supervisor holds open, and stops when it closes.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::across::SECRET_VARIABLE;
use super::args::Args;
use super::recovery::{self, Instruction, Report, ToWorker};
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
    /// Whether its standard input was closed for the run to stop, once it
    /// could not go on without a lost process: it ends as if interrupted.
    stopped_by_us: bool,
    /// Its number in the current attempt; `None` once it is lost.
    current: Option<usize>,
    /// What it holds, once it has reported a loss in the current attempt.
    reported: Option<Report>,
    /// The tasks it has said it ran.
    ran: Vec<u32>,
}

/// What every worker process of a run is started with.
struct Spawn<'a> {
    /// The run's hostfile.
    hostfile: &'a Path,
    /// The supervisor's private directory.
    dir: &'a Path,
    /// The run's secret.
    secret: &'a str,
    /// Each worker's `--memory-limit`.
    memory_limit: u64,
}

/// Starts worker process `process`. Its temporary files (spilled results)
/// go into a directory of its own inside the supervisor's, so that they go
/// with it even when the worker is killed before it can remove them.
fn spawn(
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
enum Heard {
    /// What it holds after a loss.
    Report(Report),
    /// Tasks it has run since it last said.
    Ran(Vec<u32>),
}

/// Reads a worker's standard error: its reports after a loss go to
/// `reports`, its notes to this process's standard error as they come, and
/// the rest is given back when it closes.
fn read_stderr(
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
        if let Some(report) = line.strip_prefix(recovery::REPORT) {
            if let Ok(report) = serde_json::from_str(report) {
                let _ = reports.send((process, Heard::Report(report)));
            }
        } else if let Some(ran) = line.strip_prefix(recovery::PROGRESS) {
            if let Ok(ran) = serde_json::from_str(ran) {
                let _ = reports.send((process, Heard::Ran(ran)));
            }
        } else if let Some(note) = line.strip_prefix(recovery::NOTE) {
            let _ = writeln!(std::io::stderr(), "{note}");
        } else {
            text.push_str(line);
            text.push('\n');
        }
        bytes.clear();
    }
    text
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

/// Once the run cannot go on without a lost process, stops the workers
/// still running at once, rather than leave them waiting for an attempt
/// that will not come: their standard input closes, and each ends its run
/// (removing its temporary files) and exits.
fn stop_the_rest(workers: &mut [Worker]) {
    for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
        if worker.stdin.take().is_some() {
            worker.stopped_by_us = true;
        }
    }
}

/// Takes in what the workers have said.
fn listen(heard: &mpsc::Receiver<(usize, Heard)>, workers: &mut [Worker], recovery: &mut Recovery) {
    while let Ok((process, said)) = heard.try_recv() {
        match said {
            Heard::Report(report) => recovery.reported(&mut workers[process], report),
            Heard::Ran(ran) => workers[process].ran.extend(ran),
        }
    }
}

/// What a worker's end, not a success, means for the run.
enum Loss {
    /// It was lost, and the run goes on without it.
    GoneOn,
    /// It was lost, and `--retries` allows no loss more: the run is
    /// abandoned.
    Abandoned,
    /// It failed with an error of its own, or was interrupted: the others
    /// stop on their own.
    Failed,
}

/// What `watch` does next about lost processes.
enum Step {
    /// Go on watching.
    Wait,
    /// The run cannot go on: stop the others.
    GiveUp,
}

/// The supervisor's side of going on after lost processes (see
/// [`recovery`]): which workers were lost in the current attempt, and the
/// next attempt once every survivor has reported what it holds.
struct Recovery {
    retries: usize,
    /// How long survivors may take to notice a loss and report.
    patience: Duration,
    attempt: usize,
    /// Workers lost in the current attempt: their numbers in it, and their
    /// first numbers.
    lost_now: Vec<(usize, usize)>,
    /// Every worker lost, by its first number, and how.
    lost_all: Vec<(usize, String)>,
    /// When the current attempt first lost a process or had a report.
    since: Option<Instant>,
    /// Whether the other workers are yet to be told of a loss.
    untold: bool,
    /// Why the run could not go on, when it could not.
    failure: Option<String>,
    /// The workers of the current attempt (by their numbers in it) that
    /// the first report lost for their silence.
    silent: Vec<usize>,
    /// The kernel's count of out-of-memory kills when last looked at.
    oom_kills: Option<u64>,
    /// How each worker process killed by a signal was killed, once told
    /// ([`Recovery::killed_how`]): the kernel's count rises once a kill.
    killed: Vec<(usize, String)>,
}

impl Recovery {
    /// `oom_kills`: the kernel's count of out-of-memory kills before the
    /// first worker started.
    fn new(args: &Args, oom_kills: Option<u64>) -> Recovery {
        Recovery {
            retries: args.retries,
            patience: args.heartbeat_timeout() + GRACE,
            attempt: 1,
            lost_now: Vec::new(),
            lost_all: Vec::new(),
            since: None,
            untold: false,
            failure: None,
            silent: Vec::new(),
            oom_kills,
            killed: Vec::new(),
        }
    }

    /// Tells every worker still in the run, once after each loss, that the
    /// current attempt lost a process: one still connecting stops waiting
    /// for it (the others have noticed, or will by themselves).
    fn tell_lost(&mut self, workers: &mut [Worker]) {
        if !std::mem::take(&mut self.untold) {
            return;
        }
        let Ok(line) = serde_json::to_string(&ToWorker::Lost {
            attempt: self.attempt,
        }) else {
            return;
        };
        for worker in workers
            .iter_mut()
            .filter(|w| w.status.is_none() && w.current.is_some())
        {
            if let Some(stdin) = worker.stdin.as_mut() {
                let _ = writeln!(stdin, "{line}");
            }
        }
    }

    /// `worker` reports what it holds after losing another process.
    fn reported(&mut self, worker: &mut Worker, report: Report) {
        if worker.current.is_some() && worker.status.is_none() {
            // The first to say whom it lost for their silence is believed:
            // a process paused past the heartbeat says the same of the
            // others once it runs again, but only after them.
            if self.silent.is_empty() {
                self.silent.clone_from(&report.silent);
            }
            worker.reported = Some(report);
            self.since.get_or_insert_with(Instant::now);
        }
    }

    /// How a worker killed by `signal` was killed: by the kernel's
    /// out-of-memory killer when it has killed a process since it was last
    /// looked at, and the signal is SIGKILL. The kernel counts a kill only
    /// after it has sent the signal, so that its victim may be gone before
    /// the count rises: a SIGKILL waits up to 200 ms for it.
    fn killed_how(&mut self, process: usize, signal: i32) -> String {
        if let Some((_, how)) = self.killed.iter().find(|(p, _)| *p == process) {
            return how.clone();
        }
        let how = self.newly_killed_how(signal);
        self.killed.push((process, how.clone()));
        how
    }

    /// [`Recovery::killed_how`] for a process not yet told.
    fn newly_killed_how(&mut self, signal: i32) -> String {
        const SIGKILL: i32 = 9;
        let mut now = graph_exec::memory::oom_kills();
        if signal == SIGKILL && now.is_some() {
            let deadline = Instant::now() + Duration::from_millis(200);
            while now <= self.oom_kills && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
                now = graph_exec::memory::oom_kills();
            }
        }
        if signal == SIGKILL && now > self.oom_kills {
            self.oom_kills = now;
            return "killed by the kernel's out-of-memory killer (signal 9): the memory of this \
                    machine, or of its cgroup, ran out (--memory-limit gives each worker process \
                    a smaller share)"
                .to_owned();
        }
        format!("killed by signal {signal}")
    }

    /// Stops the workers of the attempt that another has lost for their
    /// silence and that still run (paused, frozen, or cut off from the
    /// others): they are lost. `Step::GiveUp` if `--retries` allows no loss
    /// more.
    fn stop_the_silent(&mut self, workers: &mut [Worker]) -> anyhow::Result<Step> {
        let silent = std::mem::take(&mut self.silent);
        for worker in workers.iter_mut().filter(|w| w.status.is_none()) {
            let Some(current) = worker.current.filter(|c| silent.contains(c)) else {
                continue;
            };
            let how = "silent for longer than --heartbeat-timeout (paused, frozen or cut off?), \
                       and was stopped"
                .to_owned();
            if self.lost_all.len() >= self.retries {
                self.failure = Some(self.too_many(worker.process, &how, worker.child.id()));
                return Ok(Step::GiveUp);
            }
            let _ = worker.child.kill();
            worker.killed_by_us = true;
            worker.status = Some(worker.child.wait()?);
            self.lose(worker, current, how);
        }
        Ok(Step::Wait)
    }

    /// `worker` has ended with `status`, not a success: whether the run
    /// goes on without it. It does when the worker was lost (killed by a
    /// signal, or crashed) and `--retries` allows one loss more; a worker
    /// that ended with an error of its own (a task that fails fails again)
    /// or was interrupted ends the run.
    fn lost(&mut self, worker: &mut Worker, status: ExitStatus) -> Loss {
        let Some(current) = worker.current else {
            return Loss::Failed;
        };
        let how = match (signal_of(status), status.code()) {
            (Some(signal), _) if !worker.killed_by_us => self.killed_how(worker.process, signal),
            (None, Some(code)) if code != 1 && code != 2 && code != INTERRUPTED => {
                format!("crashed with exit status {code}")
            }
            _ => return Loss::Failed,
        };
        if self.lost_all.len() >= self.retries {
            if !self.lost_all.is_empty() {
                self.failure = Some(self.too_many(worker.process, &how, worker.child.id()));
            }
            return Loss::Abandoned;
        }
        self.lose(worker, current, how);
        Loss::GoneOn
    }

    fn lose(&mut self, worker: &mut Worker, current: usize, how: String) {
        let how = format!(
            "worker process {} (pid {}) was {how}",
            worker.process,
            worker.child.id()
        );
        self.lost_all.push((worker.process, how));
        self.lost_now.push((current, worker.process));
        self.untold = true;
        worker.current = None;
        worker.reported = None;
        self.since.get_or_insert_with(Instant::now);
    }

    /// The error of a loss past `--retries`.
    fn too_many(&self, process: usize, how: &str, pid: u32) -> String {
        let before: Vec<String> = self.lost_all.iter().map(|(p, _)| p.to_string()).collect();
        let after = match before.as_slice() {
            [] => String::new(),
            [one] => format!(" after process {one} was lost"),
            more => format!(" after processes {} were lost", more.join(", ")),
        };
        format!(
            "worker process {process} (pid {pid}) was {how}{after}: more losses than --retries {} \
             allows; the run was abandoned",
            self.retries
        )
    }

    /// Whether workers of `first_number` were lost and gone on without.
    fn recovered_from(&self, process: usize) -> bool {
        self.lost_all.iter().any(|(p, _)| *p == process)
    }

    /// Starts the next attempt once every survivor has reported; treats
    /// those that have not reported within the patience as lost (frozen:
    /// they are killed).
    fn go_on(
        &mut self,
        workers: &mut [Worker],
        dir: &Path,
        heard: &mpsc::Receiver<(usize, Heard)>,
    ) -> anyhow::Result<Step> {
        let Some(since) = self.since else {
            return Ok(Step::Wait);
        };
        if let Step::GiveUp = self.stop_the_silent(workers)? {
            return Ok(Step::GiveUp);
        }
        // Told now, while the attempt that lost them is the current one.
        self.tell_lost(workers);
        let alive: Vec<usize> = (0..workers.len())
            .filter(|&w| workers[w].status.is_none() && workers[w].current.is_some())
            .collect();
        if alive.is_empty() {
            let lost: Vec<String> = self.lost_all.iter().map(|(p, _)| p.to_string()).collect();
            self.failure = Some(format!(
                "every worker process was lost (processes {}); the run was abandoned",
                lost.join(", ")
            ));
            return Ok(Step::GiveUp);
        }
        // A lost worker's last progress lines are read once its pipe closes.
        let heard_out = workers
            .iter()
            .filter(|w| w.current.is_none() && w.status.is_some())
            .all(|w| w.stderr.as_ref().is_none_or(JoinHandle::is_finished));
        // What they said before their pipes closed is all in by now.
        listen(heard, workers, self);
        if heard_out
            && alive.iter().all(|&w| workers[w].reported.is_some())
            && !self.lost_now.is_empty()
        {
            self.next_attempt(workers, &alive, dir)?;
            return Ok(Step::Wait);
        }
        if since.elapsed() < self.patience {
            return Ok(Step::Wait);
        }
        for &w in &alive {
            let worker = &mut workers[w];
            if worker.reported.is_some() {
                continue;
            }
            if self.lost_all.len() >= self.retries {
                self.failure = Some(self.too_many(worker.process, "silent", worker.child.id()));
                return Ok(Step::GiveUp);
            }
            let _ = worker.child.kill();
            worker.killed_by_us = true;
            worker.status = Some(worker.child.wait()?);
            let current = worker.current.unwrap_or_default();
            self.lose(
                worker,
                current,
                "silent while the others went on, and was stopped".into(),
            );
        }
        if self.lost_now.is_empty() {
            self.failure = Some(
                "worker processes reported losing another that is still running; the run was \
                 abandoned"
                    .to_owned(),
            );
            return Ok(Step::GiveUp);
        }
        Ok(Step::Wait)
    }

    /// Tells every survivor how the next attempt goes: a fresh hostfile,
    /// its new number, who was lost and what every survivor holds.
    fn next_attempt(
        &mut self,
        workers: &mut [Worker],
        alive: &[usize],
        dir: &Path,
    ) -> anyhow::Result<()> {
        self.attempt += 1;
        let mut survivors = alive.to_vec();
        survivors.sort_by_key(|&w| workers[w].current);
        let hostfile = dir.join(format!("hosts-{}", self.attempt));
        std::fs::write(
            &hostfile,
            free_loopback_addresses(survivors.len())?.join("\n") + "\n",
        )
        .with_context(|| format!("writing {}", hostfile.display()))?;
        let mut reports: Vec<(usize, Report)> = survivors
            .iter()
            .map(|&w| {
                let worker = &mut workers[w];
                (
                    worker.current.unwrap_or_default(),
                    worker.reported.take().unwrap_or_default(),
                )
            })
            .collect();
        let lost_now = std::mem::take(&mut self.lost_now);
        // What the lost said they had run: the survivors count it as run
        // before, when they run it again.
        for &(current, first) in &lost_now {
            let finished = workers[first].ran.clone();
            reports.push((
                current,
                Report {
                    finished,
                    ..Report::default()
                },
            ));
        }
        let mut lost: Vec<usize> = lost_now.iter().map(|&(current, _)| current).collect();
        lost.sort_unstable();
        let mut lost_processes: Vec<usize> = self.lost_all.iter().map(|(p, _)| *p).collect();
        lost_processes.sort_unstable();
        for &(_, first) in &lost_now {
            if let Some((_, how)) = self.lost_all.iter().find(|(p, _)| *p == first) {
                let ran = workers[first].ran.len();
                let _ = writeln!(std::io::stderr(), "{how}, after running {ran} tasks");
            }
        }
        let going_on: Vec<String> = survivors
            .iter()
            .map(|&w| workers[w].process.to_string())
            .collect();
        let _ = writeln!(
            std::io::stderr(),
            "attempt {} goes on with worker processes {}",
            self.attempt,
            going_on.join(", ")
        );
        for (process, &w) in survivors.iter().enumerate() {
            let instruction = Instruction {
                attempt: self.attempt,
                hostfile: hostfile.clone(),
                process,
                lost: lost.clone(),
                lost_processes: lost_processes.clone(),
                reports: reports.clone(),
            };
            let worker = &mut workers[w];
            worker.current = Some(process);
            if let Some(stdin) = worker.stdin.as_mut() {
                // A worker gone meanwhile is seen lost on the next look.
                let line = serde_json::to_string(&ToWorker::Go(instruction))?;
                let _ = writeln!(stdin, "{line}");
            }
        }
        self.since = None;
        self.silent.clear();
        Ok(())
    }
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
