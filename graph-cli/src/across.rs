//! `taskgraph run FILE --hostfile F --process I`: one process of a run
//! across processes (and hosts), on graph-distributed's timely workers with
//! graph-exec's compiled tasks over the built-in ops.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use graph_core::{Key, NodeId};
use graph_distributed::{Cluster, Job};
use graph_exec::{CompiledGraph, Dynamic, OpRegistry, Request};

use crate::assign::{AssignReport, Placer, place};
use crate::run::{Across, Args, RunReport};

/// Process `process` of the run that `hostfile` lists: reads the graph,
/// places and orders it as every other process does, runs its workers'
/// share, and (process 0) prints the results.
pub(crate) fn run(args: &Args, hostfile: &Path, process: usize) -> anyhow::Result<()> {
    quiet_timely_panics();
    let threads = args.threads.max(1);
    let cluster = Cluster::from_hostfile(hostfile, process, threads)?
        .with_connect_timeout(args.connect_timeout()?);
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
            place(&graph, &workers, Placer::Auto)?.0.into_vec()
        }
    };
    let priorities = crate::run::priorities_for(&graph)?;
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
    })?;
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
