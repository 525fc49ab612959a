//! The supervisor's policy when worker processes are lost: which ends are
//! losses, whether `--retries` lets the run go on (the rule of
//! graph-distributed's [`Losses`]), and the next attempt among the
//! survivors once every one has reported what it holds.

use std::io::Write;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use graph_distributed::recovery::Losses;

use super::args::Args;
use super::protocol::{Instruction, Report, ToWorker};
use super::spawn::{Heard, Worker, free_loopback_addresses, signal_of};
use crate::exit;

/// How long the other processes get to stop on their own once one has
/// failed, before they are killed.
pub(super) const GRACE: Duration = Duration::from_secs(10);

/// Takes in what the workers have said.
pub(super) fn listen(
    heard: &mpsc::Receiver<(usize, Heard)>,
    workers: &mut [Worker],
    recovery: &mut Recovery,
) {
    while let Ok((process, said)) = heard.try_recv() {
        match said {
            Heard::Report(report) => recovery.reported(&mut workers[process], report),
            Heard::Ran(ran) => workers[process].ran.extend(ran),
        }
    }
}

/// What a worker's end, not a success, means for the run.
pub(super) enum Loss {
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
pub(super) enum Step {
    /// Go on watching.
    Wait,
    /// The run cannot go on: stop the others.
    GiveUp,
}

/// The supervisor's side of going on after lost processes (see
/// [`graph_distributed::recovery`]): which workers were lost in the current
/// attempt, and the next attempt once every survivor has reported what it
/// holds.
pub(super) struct Recovery {
    /// The processes lost, by their first numbers, against `--retries`.
    losses: Losses,
    /// How long survivors may take to notice a loss and report.
    patience: Duration,
    attempt: usize,
    /// Workers lost in the current attempt: their numbers in it, and their
    /// first numbers.
    lost_now: Vec<(usize, usize)>,
    /// How each of [`Recovery::losses`] was lost.
    how_lost: Vec<String>,
    /// When the current attempt first lost a process or had a report.
    since: Option<Instant>,
    /// Whether the other workers are yet to be told of a loss.
    untold: bool,
    /// Why the run could not go on, when it could not.
    pub(super) failure: Option<String>,
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
    pub(super) fn new(args: &Args, oom_kills: Option<u64>) -> Recovery {
        Recovery {
            losses: Losses::new(args.retries),
            patience: args.heartbeat_timeout() + GRACE,
            attempt: 1,
            lost_now: Vec::new(),
            how_lost: Vec::new(),
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
    pub(super) fn tell_lost(&mut self, workers: &mut [Worker]) {
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
    pub(super) fn reported(&mut self, worker: &mut Worker, report: Report) {
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
    pub(super) fn killed_how(&mut self, process: usize, signal: i32) -> String {
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
            if !self.losses.allow_another() {
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
    pub(super) fn lost(&mut self, worker: &mut Worker, status: ExitStatus) -> Loss {
        let Some(current) = worker.current else {
            return Loss::Failed;
        };
        let how = match (signal_of(status), status.code()) {
            (Some(signal), _) if !worker.killed_by_us => self.killed_how(worker.process, signal),
            (None, Some(code)) if !exit::ended_of_itself(code) => {
                format!("crashed with exit status {code}")
            }
            _ => return Loss::Failed,
        };
        if !self.losses.allow_another() {
            if !self.losses.lost().is_empty() {
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
        // Called once `allow_another` has said yes: the loss is within
        // `--retries`, and the error cannot come.
        if let Err(too_many) = self.losses.lose([worker.process]) {
            self.failure.get_or_insert_with(|| too_many.to_string());
        }
        self.how_lost.push(how);
        self.lost_now.push((current, worker.process));
        self.untold = true;
        worker.current = None;
        worker.reported = None;
        self.since.get_or_insert_with(Instant::now);
    }

    /// The error of a loss past `--retries`.
    fn too_many(&self, process: usize, how: &str, pid: u32) -> String {
        let before: Vec<String> = self.losses.lost().iter().map(usize::to_string).collect();
        let after = match before.as_slice() {
            [] => String::new(),
            [one] => format!(" after process {one} was lost"),
            more => format!(" after processes {} were lost", more.join(", ")),
        };
        format!(
            "worker process {process} (pid {pid}) was {how}{after}: more losses than --retries {} \
             allows; the run was abandoned",
            self.losses.retries()
        )
    }

    /// Whether workers of `first_number` were lost and gone on without.
    pub(super) fn recovered_from(&self, process: usize) -> bool {
        self.losses.lost().contains(&process)
    }

    /// Starts the next attempt once every survivor has reported; treats
    /// those that have not reported within the patience as lost (frozen:
    /// they are killed).
    pub(super) fn go_on(
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
            let lost: Vec<String> = self.losses.lost().iter().map(usize::to_string).collect();
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
            if !self.losses.allow_another() {
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
        let mut lost_processes = self.losses.lost().to_vec();
        lost_processes.sort_unstable();
        for &(_, first) in &lost_now {
            if let Some(how) =
                (self.losses.lost().iter().position(|&p| p == first)).map(|at| &self.how_lost[at])
            {
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
