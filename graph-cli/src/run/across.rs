//! `taskgraph run FILE --hostfile F --process I`: one process of a run
//! across processes (and hosts), on graph-distributed's timely workers with
//! graph-exec's compiled tasks over the built-in ops, authenticated by the
//! shared secret of `TASKGRAPH_SECRET` or `--secret-file`.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use graph_core::{Key, NodeId};
use graph_distributed::{CancelHandle, Cluster, ClusterProblem, Error, Job};
use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request};

use super::args::Args;
use super::local::priorities_for;
use super::report::{Across, RunReport};
use crate::assign::{AssignReport, Placer, place};
use crate::signals::{INTERRUPTED, on_signal, stop};

/// Process `process` of the run that `hostfile` lists: reads the graph,
/// places and orders it as every other process does, runs its workers'
/// share, and (process 0) prints the results. Ctrl-C (or SIGTERM), and for
/// a process started by `--processes` its supervisor's death, end the run
/// Where a process of a run across hosts finds the run's shared secret
/// (unless `--secret-file` says).
pub(crate) const SECRET_VARIABLE: &str = "TASKGRAPH_SECRET";

/// with exit status 130.
pub(crate) fn run(args: &Args, hostfile: &Path, process: usize) -> anyhow::Result<()> {
    quiet_timely_panics();
    let cancel = CancelHandle::new();
    {
        let cancel = cancel.clone();
        on_signal(move || stop(&cancel, interrupted()));
    }
    if args.supervised {
        watch_supervisor(cancel.clone());
    }
    let threads = args.threads.max(1);
    let cluster = Cluster::from_hostfile(hostfile, process, threads)?
        .with_connect_timeout(args.connect_timeout())
        .with_heartbeat_timeout(args.heartbeat_timeout())
        .with_cancel(cancel);
    let cluster = secure(cluster, args)?;
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
            place(&graph, &workers, Placer::Time)?.0.into_vec()
        }
    };
    let priorities = priorities_for(&graph)?;
    let mut job = Job::new(outputs.iter().copied(), placement).with_priorities(priorities);
    if let Some(bytes) = args.memory_limit {
        job = job.with_memory_limit(bytes);
    }
    let started = Instant::now();
    let request = Request::list(keys.iter().cloned());
    let outcome = graph_distributed::run(Arc::clone(&graph), job, &cluster, move |graph, _| {
        Ok(Box::new(CompiledGraph::new(
            graph,
            &OpRegistry::builtins(),
            &request,
        )?))
    });
    let outcome = match outcome {
        // The run has ended and removed its temporary files: nothing is
        // left to do but to say so, if anyone still listens.
        Err(Error::Interrupted) => {
            let _ = writeln!(std::io::stderr(), "{}", interrupted());
            std::process::exit(INTERRUPTED);
        }
        outcome => outcome?,
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
    }
    .print(args.json)
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
        Err(Error::Cluster {
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
/// whose other end its supervisor holds: the end of it means the
/// supervisor has died (or wants the run to stop), and the run stops.
fn watch_supervisor(cancel: CancelHandle) {
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = [0_u8; 64];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        stop(&cancel, interrupted());
    });
}

/// What an interrupted process of a run across processes says.
fn interrupted() -> String {
    format!("error: {}", Error::Interrupted)
}

/// timely's threads (and its teardown of connections) panic when a
/// connection breaks; the run reports that as an error, so their panic
/// messages are not printed.
fn quiet_timely_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let timely_thread = std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with("timely:"));
        let in_timely = info
            .location()
            .is_some_and(|at| at.file().contains("timely_communication"));
        if !(timely_thread || in_timely) {
            default(info);
        }
    }));
}
