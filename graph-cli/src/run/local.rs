//! `taskgraph run` on this machine's cores: the order, the local executor
//! with the built-in ops, Ctrl-C, and the report.

use std::time::Instant;

use graph_core::{CancelHandle, Key, TaskGraph};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Output, Request, Run, RunOptions};

use super::args::Args;
use super::report::RunReport;
use crate::exit::INTERRUPTED;
use crate::progress::Progress;
use crate::signals::{on_signal, stop};

/// The run on this machine's cores.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    if args.assignment.is_some() {
        anyhow::bail!("--assignment places tasks across processes: add --processes N");
    }
    let graph = crate::graph_file::read(&args.file)?;
    let keys = crate::keys::requested(&graph, args.keys.as_deref())?;
    let priorities = {
        let _busy = crate::busy::Busy::start("ordering");
        priorities_for(&graph)?
    };
    // Ctrl-C (or SIGTERM) stops the run: no task starts, spilled results
    // are deleted, and the process exits with status 130 as soon as the
    // running tasks finish, or a grace period later if they take longer.
    let cancel = CancelHandle::new();
    {
        let cancel = cancel.clone();
        on_signal(move || stop(&cancel, "interrupted".to_owned()));
    }
    // A limit the user gives holds from the first task; the default one
    // (most of the machine's memory) lets the first tasks start in
    // parallel on the graph's sizes.
    let measure_first = args.memory_limit.is_some();
    let memory_limit = args
        .memory_limit
        .unwrap_or_else(graph_exec::memory::default_memory_limit);
    let started = Instant::now();
    let run = execute(
        &graph,
        &keys,
        args.threads,
        &priorities,
        Some(memory_limit),
        measure_first,
        Some(cancel.clone()),
    );
    if cancel.is_cancelled() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("interrupted");
        }
        std::process::exit(INTERRUPTED);
    }
    let run = run?;
    let seconds = started.elapsed().as_secs_f64();
    let values = run
        .output
        .items()
        .unwrap_or_default()
        .iter()
        .filter_map(Output::value);
    RunReport {
        results: keys.iter().zip(values).collect(),
        tasks_run: run.stats.tasks_run,
        peak_held: run.stats.peak_held,
        seconds,
        across: None,
        peak_bytes: run.stats.peak_bytes,
        spilled_bytes: run.stats.spilled_bytes,
        recovered: None,
    }
    .print(args.json)
}

/// The priorities a run follows: `graph-order`'s default order, as dask's
/// local schedulers follow `dask.order`.
pub(crate) fn priorities_for(graph: &TaskGraph) -> anyhow::Result<Vec<u32>> {
    // The order `taskgraph order` gives.
    let shape = graph_core::Shape::of(graph)?;
    let order = crate::order::order_shape(&shape, graph_order::Strategy::Auto)?;
    Ok(order.into_priorities())
}

/// Runs `keys` on `threads` threads (0: all cores) with the built-in ops,
/// within `memory_limit` bytes if given (and no value of the built-in ops
/// larger than that), until `cancel` says stop, showing a progress bar on a
/// terminal once the run takes over a second.
pub(crate) fn execute(
    graph: &TaskGraph,
    keys: &[Key],
    threads: usize,
    priorities: &[u32],
    memory_limit: Option<u64>,
    measure_first: bool,
    cancel: Option<CancelHandle>,
) -> anyhow::Result<Run<Dynamic>> {
    let request = Request::list(keys.iter().cloned());
    let progress = Progress::default();
    let options = RunOptions {
        priorities: Some(priorities),
        callbacks: Some(&progress),
        memory_limit,
        measure_first,
        cancel,
        ..RunOptions::default()
    };
    let registry = match memory_limit {
        Some(limit) => OpRegistry::builtins_with_value_limit(limit),
        None => OpRegistry::builtins(),
    };
    let run = LocalExecutor::with_threads(threads).run(graph, &registry, &request, &options);
    progress.finish();
    Ok(run?)
}
