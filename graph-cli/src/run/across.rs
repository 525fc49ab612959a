//! `taskgraph run FILE --hostfile F --process I`: one process of a run
//! across processes (and hosts), on graph-distributed's timely workers with
//! graph-exec's compiled tasks over the built-in ops, authenticated by the
//! shared secret of `TASKGRAPH_SECRET` or `--secret-file`.

use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::Instant;

use anyhow::{Context, bail};
use graph_core::{Key, NodeId, TaskGraph};
use graph_distributed::recovery::{Holdings, Recovering, Stopped};
use graph_distributed::transport::{Error as Transport, ProcessList};
use graph_distributed::{
    CancelHandle, Cluster, ClusterProblem, Error, Job, Run, Runner, RunnerError,
};
use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request, Tagged};

use super::args::Args;
use super::local::priorities_for;
use super::protocol::{self, Instruction, ToWorker};
use super::report::{Across, Recovered, RunReport};
use crate::assign::{AssignReport, Placer, place};
use crate::exit::INTERRUPTED;
use crate::signals::{on_signal, stop};

/// Where a process of a run across hosts finds the run's shared secret
/// (unless `--secret-file` says).
pub(crate) const SECRET_VARIABLE: &str = "TASKGRAPH_SECRET";

/// Process `process` of the run that `hostfile` lists: reads the graph,
/// places and orders it as every other process does, runs its workers'
/// share, and (process 0) prints the results. Ctrl-C (or SIGTERM), and for
/// a process started by `--processes` its supervisor's death, end the run
/// with exit status 130. With `--allow-shrink`, a lost process is left
/// behind: the survivors regroup and go on.
pub(crate) fn run(args: &Args, hostfile: &Path, process: usize) -> anyhow::Result<()> {
    graph_distributed::quiet_timely_panics();
    let cancel = CancelHandle::new();
    {
        let cancel = cancel.clone();
        on_signal(move || stop(&cancel, interrupted()));
    }
    let lost = LostSignals::default();
    let instructions = args
        .supervised
        .then(|| watch_supervisor(cancel.clone(), lost.clone()));
    let threads = args.threads.max(1);
    let progress = args.supervised.then(|| {
        let progress = graph_distributed::Progress::new();
        report_progress(progress.clone());
        progress
    });
    let join = |hostfile: &Path, process: usize, attempt: usize| -> anyhow::Result<Cluster> {
        let cluster = member(args, hostfile, process, threads, &cancel)?;
        Ok(match &progress {
            Some(progress) => cluster
                .with_progress(progress.clone())
                .with_lost_signal(lost.attempt(attempt)),
            None => cluster,
        })
    };
    let mut cluster = join(hostfile, process, 1)?;
    let graph = Arc::new(crate::graph_file::read(&args.file)?);
    let keys = crate::keys::requested(&graph, args.keys.as_deref())?;
    let outputs: Vec<NodeId> = keys
        .iter()
        .map(|key| graph.node_id(key).expect("requested keys are in the graph"))
        .collect();
    let placement = match &args.assignment {
        Some(path) => AssignReport::read_placement(path, &graph, cluster.workers())?,
        None => {
            let workers = graph_assign::Workers::new(cluster.workers())?;
            place(&graph, &workers, Placer::Auto)?.assignment.into_vec()
        }
    };
    let priorities = priorities_for(&graph)?;
    let mut job = Job::new(outputs.iter().copied(), placement).with_priorities(priorities);
    if let Some(bytes) = args.memory_limit {
        job = job.with_memory_limit(bytes);
    }
    let started = Instant::now();
    let mut recovered = Recovered::default();
    let mut attempt = None;
    let outcome = if args.allow_shrink {
        let shrunk = shrinking(&graph, job, &cluster, &keys, args.retries)?;
        recovered = Recovered {
            attempts: shrunk.attempts,
            lost_processes: shrunk.lost_processes,
            recomputed_tasks: shrunk.recomputed_tasks,
        };
        cluster = shrunk.cluster;
        shrunk.outcome
    } else {
        loop {
            let run = Run::new(Arc::clone(&graph), job.clone(), &cluster, runner_for(&keys))
                .attempt(attempt.take());
            let result = match instructions.is_some() {
                true => run.run_keeping(),
                false => run.run().map_err(Stopped::from),
            };
            let stopped = match result {
                Ok(outcome) => break outcome,
                Err(stopped) => stopped,
            };
            let Stopped { error, leftovers } = stopped;
            if matches!(error, Error::Interrupted) {
                // The run has ended and removed its temporary files: nothing is
                // left to do but to say so, if anyone still listens.
                let _ = writeln!(std::io::stderr(), "{}", interrupted());
                std::process::exit(INTERRUPTED);
            }
            let Some(leftovers) = leftovers else {
                return Err(error.into());
            };
            let Some(instructions) = &instructions else {
                return Err(error.into());
            };
            // What this process holds goes to the supervisor, which says how
            // the run goes on (or closes the pipe: it does not).
            let report = protocol::Report {
                finished: leftovers.finished().iter().map(|n| n.as_u32()).collect(),
                held: leftovers.held().iter().map(|(n, _)| n.as_u32()).collect(),
                silent: match &error {
                    Error::Transport(Transport::Silent { process, .. }) => vec![*process],
                    _ => Vec::new(),
                },
            };
            let line = serde_json::to_string(&report)?;
            writeln!(std::io::stderr(), "{}{line}", protocol::REPORT)?;
            let Ok(next) = instructions.recv() else {
                return Err(error.into());
            };
            let mut holdings = Holdings::new(graph.len());
            for (process, report) in &next.reports {
                for &node in &report.finished {
                    holdings.finished(NodeId::from_u32(node));
                }
                for &node in &report.held {
                    holdings.hold(NodeId::from_u32(node), *process as u32);
                }
            }
            let attempt_after = graph_distributed::recovery::next_attempt(
                &graph, job, &cluster, &next.lost, &holdings, *leftovers,
            )?;
            let plan = &attempt_after.plan;
            if next.process == 0 {
                let note = format!(
                    "attempt {}: {} tasks to run ({} of them known to have run before), {} results taken from the survivors",
                    next.attempt,
                    plan.run.len(),
                    plan.recomputed,
                    plan.fetch.len()
                );
                writeln!(std::io::stderr(), "{}{note}", protocol::NOTE)?;
            }
            recovered.attempts = next.attempt;
            recovered.lost_processes = next.lost_processes;
            recovered.recomputed_tasks += plan.recomputed;
            job = attempt_after.job;
            attempt = Some(attempt_after.attempt);
            cluster = join(&next.hostfile, next.process, next.attempt)?;
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let Some(outcome) = outcome else {
        return Ok(());
    };
    let value_of = |node: NodeId| -> &Dynamic {
        outcome
            .values
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, v)| &v.0)
            .expect("every output has a value")
    };
    let results: Vec<(&Key, &Dynamic)> = keys
        .iter()
        .zip(&outputs)
        .map(|(key, &node)| (key, value_of(node)))
        .collect();
    RunReport {
        results,
        tasks_run: outcome.tasks_run(),
        peak_held: outcome
            .workers
            .iter()
            .map(|w| w.peak_held)
            .max()
            .unwrap_or(0),
        seconds,
        across: Some(Across {
            processes: cluster.processes(),
            workers: cluster.workers(),
            cut_edges: outcome.cut_edges(),
            transfer_bytes: outcome.transfer_bytes(),
            values_sent: outcome.values_sent(),
        }),
        peak_bytes: outcome
            .workers
            .iter()
            .map(|w| w.peak_bytes)
            .max()
            .unwrap_or(0),
        spilled_bytes: outcome.workers.iter().map(|w| w.spilled_bytes).sum(),
        recovered: Some(recovered),
    }
    .print(args.json)
}

/// A run across hosts that goes on without its lost processes
/// (`--allow-shrink`): the survivors regroup among themselves, saying on
/// standard error what they lost and what they do about it.
fn shrinking(
    graph: &Arc<TaskGraph>,
    job: Job,
    cluster: &Cluster,
    keys: &[Key],
    retries: usize,
) -> anyhow::Result<graph_distributed::recovery::Recovered<Tagged>> {
    let mut stderr = std::io::stderr();
    let mut gathers = cluster.process() == 0;
    // The hostfile's number of each process of the attempt under way: the
    // lines below name processes by those, as the hostfile does.
    let mut numbers: Vec<usize> = (0..cluster.processes()).collect();
    let run =
        Run::new(Arc::clone(graph), job, cluster, runner_for(keys)).recover(retries, |step| {
            let _ = match step {
                Recovering::Stopped { error, .. } => writeln!(
                    stderr,
                    "{}; regrouping with the processes still alive",
                    in_hostfile_numbers(error, &numbers)
                ),
                Recovering::Regrouped {
                    attempt,
                    survivors,
                    lost,
                    lost_ran,
                    process,
                } => {
                    gathers = process == 0;
                    numbers = survivors.to_vec();
                    writeln!(
                        stderr,
                        "attempt {attempt} goes on with processes {} of the hostfile, without \
                         process{} {} (this one is now process {process}); {} had run {lost_ran} \
                         tasks, as far as the survivors heard",
                        ProcessList(survivors),
                        if lost.len() == 1 { "" } else { "es" },
                        ProcessList(lost),
                        if lost.len() == 1 { "it" } else { "they" },
                    )
                }
                Recovering::Planned {
                    attempt,
                    run,
                    recomputed,
                    fetched,
                } if gathers => writeln!(
                    stderr,
                    "attempt {attempt}: {run} tasks to run ({recomputed} of them known to have \
                     run before), {fetched} results taken from the survivors"
                ),
                _ => Ok(()),
            };
        });
    match run {
        Ok(recovered) => Ok(recovered),
        Err(Error::Interrupted) => {
            let _ = writeln!(std::io::stderr(), "{}", interrupted());
            std::process::exit(INTERRUPTED);
        }
        Err(Error::TooManyLosses { lost, retries }) => bail!(
            "process{} {} {} lost: more losses than --retries {retries} allows; the run was \
             abandoned",
            if lost.len() == 1 { "" } else { "es" },
            ProcessList(&lost),
            if lost.len() == 1 { "was" } else { "were" }
        ),
        Err(err) => Err(err.into()),
    }
}

/// `error`, the process it names (by its number in the attempt that
/// stopped) named by its number in the hostfile, `numbers[process]`.
fn in_hostfile_numbers(error: &Error, numbers: &[usize]) -> String {
    let number = |process: usize| numbers.get(process).copied().unwrap_or(process);
    let address = String::clone;
    let Error::Transport(error) = error else {
        return error.to_string();
    };
    match error {
        Transport::Lost {
            process,
            address: at,
        } => Transport::Lost {
            process: number(*process),
            address: address(at),
        },
        Transport::Silent {
            process,
            address: at,
            waited,
        } => Transport::Silent {
            process: number(*process),
            address: address(at),
            waited: *waited,
        },
        Transport::PeerFailed {
            process,
            address: at,
        } => Transport::PeerFailed {
            process: number(*process),
            address: address(at),
        },
        Transport::Malformed {
            process,
            address: at,
            problem,
        } => Transport::Malformed {
            process: number(*process),
            address: address(at),
            problem: *problem,
        },
        Transport::Stalled {
            process,
            address: at,
            waited,
        } => Transport::Stalled {
            process: number(*process),
            address: address(at),
            waited: *waited,
        },
        other => return other.to_string(),
    }
    .to_string()
}

/// Process `process` of the run that `hostfile` lists, with this run's
/// timeouts, cancel handle and secret.
fn member(
    args: &Args,
    hostfile: &Path,
    process: usize,
    threads: usize,
    cancel: &CancelHandle,
) -> anyhow::Result<Cluster> {
    let cluster = Cluster::from_hostfile(hostfile, process, threads)?
        .with_connect_timeout(args.connect_timeout())
        .with_heartbeat_timeout(args.heartbeat_timeout())
        .with_cancel(cancel.clone());
    secure(cluster, args)
}

/// Says on standard error, every [`protocol::PROGRESS_EVERY`], which tasks
/// this process has run since it last said, for its supervisor.
fn report_progress(progress: graph_distributed::Progress) {
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(protocol::PROGRESS_EVERY);
            let ran: Vec<u32> = progress.take().iter().map(|n| n.as_u32()).collect();
            if ran.is_empty() {
                continue;
            }
            let Ok(line) = serde_json::to_string(&ran) else {
                continue;
            };
            if writeln!(std::io::stderr(), "{}{line}", protocol::PROGRESS).is_err() {
                break;
            }
        }
    });
}

/// The runner of every worker: graph-exec's compiled tasks over the
/// built-in ops, for the requested keys.
fn runner_for(
    keys: &[Key],
) -> impl for<'g> Fn(&'g TaskGraph, usize) -> Result<Box<dyn Runner<Value = Tagged> + 'g>, RunnerError>
+ Send
+ Sync
+ 'static {
    let request = Request::list(keys.iter().cloned());
    move |graph, _| {
        Ok(Box::new(CompiledGraph::new(
            graph,
            &OpRegistry::builtins(),
            &request,
        )?))
    }
}

/// The cluster with the run's secret: `--secret-file`'s, else
/// `TASKGRAPH_SECRET`'s; without either, insecure only when asked to be.
fn secure(cluster: Cluster, args: &Args) -> anyhow::Result<Cluster> {
    let (secret, source) = if let Some(path) = &args.secret_file {
        (
            read_secret_file(path)?,
            format!("the secret file {}", path.display()),
        )
    } else if let Some(value) = std::env::var_os(SECRET_VARIABLE) {
        // Trimmed as a file's is, so that one secret given both ways is
        // the same.
        let bytes = os_bytes(value);
        (bytes.trim_ascii().to_vec(), SECRET_VARIABLE.to_string())
    } else if args.insecure {
        return Ok(cluster.insecure());
    } else {
        bail!(
            "a run across hosts needs a shared secret, the same for every process: set \
             {SECRET_VARIABLE} or give --secret-file FILE (at least 16 bytes; for example, \
             `openssl rand -hex 32`), or pass --insecure to run without one on a trusted network"
        );
    };
    match cluster.with_secret(secret) {
        Err(Transport::Cluster {
            problem: ClusterProblem::ShortSecret { bytes, min },
        }) => bail!(
            "the secret in {source} has {bytes} bytes, too few to keep strangers out: \
             use at least {min} (for example, `openssl rand -hex 32`)"
        ),
        secured => Ok(secured?),
    }
}

/// The longest secret file read: a secret is a line of random text, and a
/// file without end (`/dev/zero`) must not fill the memory.
const MAX_SECRET_FILE: u64 = 64 * 1024;

/// The secret in `path`, without the whitespace around it; a warning, as
/// ssh gives, where other users may read the file.
fn read_secret_file(path: &std::path::Path) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;

    let file = std::fs::File::open(path)
        .with_context(|| format!("reading the secret file {}", path.display()))?;
    #[cfg(unix)]
    if let Ok(meta) = file.metadata() {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_file() && mode & 0o077 != 0 {
            let _ = writeln!(
                std::io::stderr(),
                "warning: the secret file {} can be read by other users (mode {mode:04o}): \
                 `chmod 600 {}`",
                path.display(),
                path.display()
            );
        }
    }
    let mut bytes = Vec::new();
    file.take(MAX_SECRET_FILE + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("reading the secret file {}", path.display()))?;
    if bytes.len() as u64 > MAX_SECRET_FILE {
        bail!(
            "the secret file {} is longer than {} KiB: a secret is one line of random text \
             (for example, `openssl rand -hex 32`)",
            path.display(),
            MAX_SECRET_FILE / 1024
        );
    }
    Ok(bytes.trim_ascii().to_vec())
}

#[cfg(unix)]
fn os_bytes(value: std::ffi::OsString) -> Vec<u8> {
    std::os::unix::ffi::OsStringExt::into_vec(value)
}

#[cfg(not(unix))]
fn os_bytes(value: std::ffi::OsString) -> Vec<u8> {
    value.to_string_lossy().into_owned().into_bytes()
}

/// A process started by `--processes` reads its standard input, a pipe
/// whose other end its supervisor holds: each line is an [`Instruction`]
/// for the next attempt after a loss, given to the run through the channel
/// returned, or news of a loss, which raises the attempt's signal in
/// `lost`; the end of it means the supervisor has died (or wants the run
/// to stop), and the run stops.
fn watch_supervisor(cancel: CancelHandle, lost: LostSignals) -> mpsc::Receiver<Instruction> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin().lock();
        for line in stdin.lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<ToWorker>(&line) {
                Ok(ToWorker::Lost { attempt }) => lost.raise(attempt),
                Ok(ToWorker::Go(instruction)) => {
                    if send.send(instruction).is_err() {
                        break;
                    }
                }
                // Not from a supervisor of this version: the run stops.
                Err(_) => break,
            }
        }
        drop(send);
        stop(&cancel, interrupted());
    });
    receive
}

/// Per attempt, the signal that its supervisor has seen one of its
/// processes lost ([`Cluster::with_lost_signal`]): late news of an earlier
/// attempt is no news, and news of an attempt that this process has not
/// begun yet (it is still starting) waits for it.
#[derive(Clone, Default)]
struct LostSignals(Arc<std::sync::Mutex<Signals>>);

#[derive(Default)]
struct Signals {
    /// The attempt under way, and its signal.
    attempt: usize,
    signal: CancelHandle,
    /// The latest attempt the supervisor said lost a process.
    news: usize,
}

impl LostSignals {
    /// A fresh signal for attempt `attempt`, now the one under way; raised
    /// already if the news came first.
    fn attempt(&self, attempt: usize) -> CancelHandle {
        let mut signals = self.lock();
        signals.attempt = attempt;
        signals.signal = CancelHandle::new();
        if signals.news == attempt {
            signals.signal.cancel();
        }
        signals.signal.clone()
    }

    /// Attempt `attempt` lost a process: raises its signal.
    fn raise(&self, attempt: usize) {
        let mut signals = self.lock();
        signals.news = signals.news.max(attempt);
        if signals.attempt == attempt {
            signals.signal.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Signals> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What an interrupted process of a run across processes says.
fn interrupted() -> String {
    format!("error: {}", Error::Interrupted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_regroup_processes_are_named_by_their_hostfile_numbers() {
        // Attempt 2 of processes 1, 2, 3 of the hostfile: its process 0 is
        // the hostfile's process 1, which the next line names so.
        let lost = Error::from(Transport::Lost {
            process: 0,
            address: "127.0.0.1:7001".to_owned(),
        });
        assert_eq!(
            in_hostfile_numbers(&lost, &[1, 2, 3]),
            "process 1 (127.0.0.1:7001) went away before the run finished (did it die?)"
        );
        let silent = Error::from(Transport::Silent {
            process: 2,
            address: "127.0.0.1:7003".to_owned(),
            waited: std::time::Duration::from_secs(2),
        });
        assert!(in_hostfile_numbers(&silent, &[1, 2, 3]).starts_with("process 3 (127.0.0.1:7003)"));
        assert_eq!(
            in_hostfile_numbers(&Error::Interrupted, &[1, 2, 3]),
            Error::Interrupted.to_string()
        );
    }
}
