//! `taskgraph run FILE --processes N` (start N worker processes here) and
//! `taskgraph run FILE --hostfile F --process I` (be process I of a run across
//! hosts): the graph runs on graph-distributed's timely workers, with the
//! built-in ops of graph-exec.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use graph_core::{Key, NodeId, TaskGraph};
use graph_distributed::{Cluster, Job, Outcome, Runner, TaskFailure};
use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request, Tagged};
use serde::Deserialize;

use crate::assign::{Strategy, place};

/// What a distributed run needs besides the graph.
pub(crate) struct Options<'a> {
    pub(crate) file: &'a Path,
    pub(crate) keys: Option<&'a str>,
    pub(crate) threads: usize,
    pub(crate) json: bool,
    pub(crate) assignment: Option<&'a Path>,
    pub(crate) connect_timeout: Duration,
}

/// How long the other processes get to stop on their own once one has
/// failed, before they are killed.
const GRACE: Duration = Duration::from_secs(10);

/// Starts `processes` worker processes of this program on loopback ports,
/// each joining the run as `--hostfile H --process I`; process 0 prints the
/// results. Ends when all have ended; when one fails or dies, the others get
/// a grace period and are then killed, and the first cause is the error.
pub(crate) fn supervise(options: &Options<'_>, processes: usize) -> anyhow::Result<()> {
    if processes == 0 {
        bail!("--processes must be at least 1");
    }
    if options.file == Path::new("-") {
        bail!("--processes reads the graph in every process: give a file, not standard input");
    }
    let dir = std::env::temp_dir().join(format!("taskgraph-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let hostfile = dir.join("hosts");
    let result = (|| {
        std::fs::write(
            &hostfile,
            free_loopback_addresses(processes)?.join("\n") + "\n",
        )
        .with_context(|| format!("writing {}", hostfile.display()))?;
        let _busy = crate::busy::Busy::start(format!("running on {processes} processes"));
        let children = (0..processes)
            .map(|process| spawn(options, &hostfile, process))
            .collect::<anyhow::Result<Vec<_>>>()?;
        watch(children)
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A worker process and what it writes on standard error.
struct Worker {
    process: usize,
    child: Child,
    stderr: Option<JoinHandle<String>>,
    status: Option<ExitStatus>,
    killed_by_us: bool,
}

fn spawn(options: &Options<'_>, hostfile: &Path, process: usize) -> anyhow::Result<Worker> {
    let exe = std::env::current_exe().context("finding the taskgraph executable")?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(options.file)
        .arg("--hostfile")
        .arg(hostfile)
        .args(["--process", &process.to_string()])
        .args(["--threads", &options.threads.to_string()])
        .args([
            "--connect-timeout",
            &options.connect_timeout.as_secs_f64().to_string(),
        ]);
    if let Some(keys) = options.keys {
        command.args(["--keys", keys]);
    }
    if let Some(assignment) = options.assignment {
        command.arg("--assignment").arg(assignment);
    }
    if options.json {
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

/// Process `process` of the run that `hostfile` lists: reads the graph,
/// places and orders it as every other process does, runs its workers'
/// share, and (process 0) prints the results.
pub(crate) fn join(options: &Options<'_>, hostfile: &Path, process: usize) -> anyhow::Result<()> {
    quiet_timely_panics();
    let threads = options.threads.max(1);
    let cluster = Cluster::from_hostfile(hostfile, process, threads)?
        .with_connect_timeout(options.connect_timeout);
    let graph = Arc::new(crate::busy::read_graph(options.file)?);
    let keys = crate::keys::requested(&graph, options.keys)?;
    let outputs: Vec<NodeId> = keys
        .iter()
        .map(|key| graph.node_id(key).expect("requested keys are in the graph"))
        .collect();
    let placement = match options.assignment {
        Some(path) => read_assignment(path, &graph, cluster.workers())?,
        None => place(
            &graph,
            &graph_assign::Workers::new(cluster.workers())?,
            Strategy::Auto,
        )?
        .0
        .into_vec(),
    };
    let priorities =
        graph_order::order_graph(&graph, &graph_order::OrderConfig::default())?.into_priorities();
    let job = Job::new(outputs.iter().copied(), placement).with_priorities(priorities);
    let started = Instant::now();
    let request = Request::list(keys.iter().cloned());
    let outcome = graph_distributed::run(Arc::clone(&graph), job, &cluster, move |graph, _| {
        let compiled = CompiledGraph::new(graph, &OpRegistry::builtins(), &request)
            .map_err(|err| err.to_string())?;
        Ok(Box::new(ExecRunner(compiled)))
    })?;
    let seconds = started.elapsed().as_secs_f64();
    if let Some(outcome) = outcome {
        print(options, &cluster, &keys, &outputs, &outcome, seconds)?;
    }
    Ok(())
}

fn print(
    options: &Options<'_>,
    cluster: &Cluster,
    keys: &[Key],
    outputs: &[NodeId],
    outcome: &Outcome<Tagged>,
    seconds: f64,
) -> anyhow::Result<()> {
    let value_of = |node: NodeId| {
        outcome
            .values
            .iter()
            .find(|(n, _)| *n == node)
            .map(|(_, v)| &v.0)
            .expect("every output has a value")
    };
    let values: Vec<&Dynamic> = outputs.iter().map(|&n| value_of(n)).collect();
    let peak_held = outcome
        .workers
        .iter()
        .map(|w| w.peak_held)
        .max()
        .unwrap_or(0);
    let across = crate::run::Across {
        processes: cluster.processes(),
        workers: cluster.workers(),
        cut_edges: outcome.cut_edges(),
        transfer_bytes: outcome.transfer_bytes(),
        values_sent: outcome.values_sent(),
    };
    crate::run::report(
        options.json,
        keys,
        &values,
        outcome.tasks_run(),
        peak_held,
        seconds,
        Some(&across),
    )
}

/// Runs tasks with graph-exec's compiled terms and built-in ops.
struct ExecRunner<'g>(CompiledGraph<'g, Dynamic>);

impl Runner for ExecRunner<'_> {
    type Value = Tagged;

    fn run(
        &mut self,
        node: NodeId,
        input: &mut dyn FnMut(NodeId) -> Option<Tagged>,
    ) -> Result<Tagged, TaskFailure> {
        self.0
            .run_task(node, |dep| input(dep).map(|t| t.0))
            .map(Tagged)
            .map_err(|err| {
                let (op, message, panicked) = err.into_failure();
                TaskFailure {
                    op,
                    message,
                    panicked,
                }
            })
    }
}

/// The JSON of `taskgraph assign --json`.
#[derive(Deserialize)]
struct AssignmentFile {
    workers: usize,
    assignment: Vec<(Key, u32)>,
}

/// The worker of every task, from an `--assignment` file.
fn read_assignment(path: &Path, graph: &TaskGraph, workers: usize) -> anyhow::Result<Vec<u32>> {
    let context = || format!("--assignment {}", path.display());
    let text = std::fs::read_to_string(path).with_context(context)?;
    let file: AssignmentFile = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: expected the JSON of `taskgraph assign --json`",
            context()
        )
    })?;
    if file.workers != workers {
        bail!(
            "{}: it places tasks on {} workers, but the run has {workers} (processes x threads)",
            context(),
            file.workers
        );
    }
    let mut placement: Vec<Option<u32>> = vec![None; graph.len()];
    for (key, worker) in file.assignment {
        let node = graph
            .node_id(&key)
            .with_context(|| format!("{}: task {key} is not in the graph", context()))?;
        if worker as usize >= workers {
            bail!(
                "{}: task {key} is on worker {worker}, but there are {workers}",
                context()
            );
        }
        placement[node.index()] = Some(worker);
    }
    placement
        .iter()
        .enumerate()
        .map(|(i, w)| {
            w.with_context(|| {
                format!(
                    "{}: task {} has no worker",
                    context(),
                    graph.key(NodeId::new(i))
                )
            })
        })
        .collect()
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

/// The demo's step: runs `graph` across 2 worker processes of this program
/// (placed as `taskgraph assign --workers 2` places it) and prints the
/// results and what crossed between the processes.
pub(crate) fn demo_step(
    out: &mut impl std::io::Write,
    graph: &TaskGraph,
    keys: &[Key],
) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("taskgraph-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let file = dir.join("word-count.json");
    let result = (|| {
        graph_core::json::write_path(graph, &file)?;
        let exe = std::env::current_exe().context("finding the taskgraph executable")?;
        let run = Command::new(exe)
            .arg("run")
            .arg(&file)
            .args(["--processes", "2", "--json", "--keys"])
            .arg(serde_json::to_string(keys)?)
            .stdin(Stdio::null())
            .output()
            .context("starting taskgraph run --processes 2")?;
        if !run.status.success() {
            bail!("{}", String::from_utf8_lossy(&run.stderr).trim());
        }
        let report: serde_json::Value = serde_json::from_slice(&run.stdout)?;
        let results = report["results"].as_array().cloned().unwrap_or_default();
        for (key, result) in keys.iter().zip(results) {
            // The results are JSON strings and numbers, which a `Key` prints
            // in Python's spelling, as the local run prints its values.
            let value: Key = serde_json::from_value(result[1].clone())?;
            writeln!(out, "  {} = {value}", key.python_str())?;
        }
        writeln!(
            out,
            "  {} tasks run by {} workers; {} dependencies crossed between the processes, as placed, \
             carried by {} messages",
            report["tasks_run"], report["workers"], report["cut_edges"], report["values_sent"]
        )?;
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}
