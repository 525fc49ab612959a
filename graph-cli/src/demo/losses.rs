//! The demo's lost processes: a run across 3 worker processes of which one
//! is killed midway, under `taskgraph run --processes 3` and as a run
//! across 3 hosts with no supervisor; each goes on among the other two and
//! gives the results of a run without the fault. The worker processes are
//! found, and seen connected, through `/proc` (Linux).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use graph_core::{TaskGraph, Term};

use crate::procfs;

/// A tree reduction of sleeping tasks run across 3 worker processes, one of
/// which is killed midway: the run goes on among the other two and gives
/// the results of the local run (Linux: the worker processes are found in
/// `/proc`).
pub(super) fn recovery_step(out: &mut impl Write) -> anyhow::Result<()> {
    const LEAVES: usize = 64;
    writeln!(
        out,
        "Lose a process: a tree of {} tasks that each sleep 20 ms, across 3 worker processes, \
         worker process 1 killed (SIGKILL) midway:",
        2 * LEAVES - 1
    )?;
    if !Path::new("/proc/self/task").exists() {
        writeln!(
            out,
            "  (skipped: finding the worker processes needs Linux's /proc)"
        )?;
        return Ok(());
    }
    let mut graph = TaskGraph::with_capacity(2 * LEAVES);
    for leaf in 0..LEAVES as i64 {
        graph.insert(
            ("sum", 0, leaf),
            Term::call("sleep", [Term::lit(leaf), Term::lit(0.02)]),
        )?;
    }
    let (mut level, mut width) = (0_i64, LEAVES as i64);
    // Each level adds pairs of the one below.
    while width > 1 {
        for j in 0..width / 2 {
            let pair = Term::call(
                "add",
                [
                    Term::key(("sum", level, 2 * j)),
                    Term::key(("sum", level, 2 * j + 1)),
                ],
            );
            graph.insert(
                ("sum", level + 1, j),
                Term::call("sleep", [pair, Term::lit(0.02)]),
            )?;
        }
        level += 1;
        width /= 2;
    }
    let dir = tempfile::Builder::new()
        .prefix("taskgraph-demo-")
        .tempdir()
        .context("making a private temporary directory")?;
    let file = dir.path().join("tree.json");
    graph_core::json::write_path(&graph, &file)?;
    let exe = std::env::current_exe().context("finding the taskgraph executable")?;
    let supervisor = Command::new(&exe)
        .arg("run")
        .arg(&file)
        .args(["--processes", "3", "--json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting taskgraph run --processes 3")?;
    let workers = workers_of(supervisor.id(), 3);
    std::thread::sleep(MIDWAY);
    let Some(&victim) = workers.get(1) else {
        bail!(
            "taskgraph run --processes 3 started {} worker processes",
            workers.len()
        );
    };
    kill(victim).with_context(|| format!("killing worker process 1 (pid {victim})"))?;
    let run = supervisor
        .wait_with_output()
        .context("waiting for taskgraph run --processes 3")?;
    if !run.status.success() {
        bail!("{}", String::from_utf8_lossy(&run.stderr).trim());
    }
    for line in String::from_utf8_lossy(&run.stderr).lines() {
        writeln!(out, "  {line}")?;
    }
    // The root sums the leaves 0..LEAVES.
    let expected = (LEAVES * (LEAVES - 1) / 2).to_string();
    tell_recovered(out, &run.stdout, &expected, graph.len())?;
    writeln!(
        out,
        "Lose a host: the same tree as a run across 3 hosts (a hostfile of loopback ports, every \
         process given --allow-shrink, no supervisor), process 0 killed midway; as process 1 \
         tells it:"
    )?;
    let addresses = crate::run::free_loopback_addresses(3)?;
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, addresses.join("\n") + "\n").context("writing the hostfile")?;
    let secret = crate::run::fresh_secret()?;
    let mut processes = Vec::new();
    for process in 0..3 {
        let child = Command::new(&exe)
            .arg("run")
            .arg(&file)
            .args(["--json", "--allow-shrink", "--hostfile"])
            .arg(&hosts)
            .args(["--process", &process.to_string()])
            .env(crate::run::SECRET_VARIABLE, &secret)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting taskgraph run --hostfile")?;
        processes.push(child);
    }
    let pids: Vec<u32> = processes.iter().map(std::process::Child::id).collect();
    wait_connected(&pids);
    std::thread::sleep(MIDWAY);
    processes[0]
        .kill()
        .with_context(|| format!("killing process 0 (pid {})", pids[0]))?;
    let runs = processes
        .into_iter()
        .map(std::process::Child::wait_with_output)
        .collect::<std::io::Result<Vec<_>>>()
        .context("waiting for taskgraph run --hostfile")?;
    for run in &runs[1..] {
        if !run.status.success() {
            bail!("{}", String::from_utf8_lossy(&run.stderr).trim());
        }
    }
    for line in String::from_utf8_lossy(&runs[1].stderr).lines() {
        writeln!(out, "  {line}")?;
    }
    tell_recovered(out, &runs[1].stdout, &expected, graph.len())
}

/// The root of a recovered run's `--json` report against `expected`, and
/// how it went.
fn tell_recovered(
    out: &mut impl Write,
    stdout: &[u8],
    expected: &str,
    tasks: usize,
) -> anyhow::Result<()> {
    let report: serde_json::Value = serde_json::from_slice(stdout)?;
    let got = report["results"][0][1].to_string();
    writeln!(
        out,
        "  the root = {got} ({}); {} attempts, the second running {} of the {} tasks, lost processes {}",
        if got == expected {
            "the sum of the leaves, as without the fault"
        } else {
            "NOT the sum of the leaves"
        },
        report["attempts"],
        report["tasks_run"],
        tasks,
        report["lost_processes"],
    )?;
    Ok(())
}

/// Kills the process `pid` (SIGKILL), as a crash would end it.
#[cfg(unix)]
fn kill(pid: u32) -> anyhow::Result<()> {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;

    let pid = i32::try_from(pid).context("a process id past i32")?;
    kill(Pid::from_raw(pid), Signal::SIGKILL)?;
    Ok(())
}

#[cfg(not(unix))]
fn kill(_pid: u32) -> anyhow::Result<()> {
    bail!("losing a worker process is shown on Unix only")
}

/// The `count` child processes of `parent`, once they have all started and
/// finished connecting to each other (at most 20 s each); in the order
/// they started.
fn workers_of(parent: u32, count: usize) -> Vec<u32> {
    let mut workers = Vec::new();
    procfs::eventually(WAIT, || {
        workers = procfs::children_of(parent);
        workers.len() == count
    });
    wait_connected(&workers);
    workers
}

/// Waits until each of the processes `pids`, a run of them all, has
/// finished connecting to the others (at most 20 s).
fn wait_connected(pids: &[u32]) {
    procfs::eventually(WAIT, || {
        pids.iter()
            .all(|&pid| procfs::has_connected(pid, pids.len()))
    });
}

/// The longest the demo waits for worker processes to start and connect.
const WAIT: Duration = Duration::from_secs(20);

/// How long a run goes on, once connected, before a process is killed:
/// long enough for results to be made, and held by the survivors.
const MIDWAY: Duration = Duration::from_millis(300);
