//! `taskgraph order FILE [--strategy auto|dask|tree] [--json] [-o OUT]`: a
//! static order of a graph's tasks that keeps few results in memory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use graph_core::TaskGraph;
use graph_order::{Order, OrderConfig, Strategy, lower_bound, max_pressure, order_graph};

/// The strategies offered on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StrategyArg {
    /// Every strategy, keeping the lowest max pressure (ties to dask's).
    Auto,
    /// dask's `order`.
    Dask,
    /// Optimal on in- and out-forests (Sethi-Ullman labels).
    Tree,
}

impl StrategyArg {
    pub(crate) fn strategy(self) -> Strategy {
        match self {
            StrategyArg::Auto => Strategy::Auto,
            StrategyArg::Dask => Strategy::Dask,
            StrategyArg::Tree => Strategy::TreeOptimal,
        }
    }
}

/// Arguments of `taskgraph order`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// How to order the tasks.
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// Print the order as one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// Write the JSON order to OUT instead of standard output.
    #[arg(short = 'o', value_name = "OUT")]
    out: Option<PathBuf>,
}

/// An order with the figures that judge it.
struct Ordered {
    order: Order,
    max_pressure: u32,
    lower_bound: u32,
    elapsed: Duration,
}

fn order_with(graph: &TaskGraph, strategy: Strategy) -> anyhow::Result<Ordered> {
    let start = Instant::now();
    let order = order_graph(graph, &OrderConfig::new(strategy))?;
    let elapsed = start.elapsed();
    let dag = graph.topology()?;
    Ok(Ordered {
        max_pressure: max_pressure(dag, &order)?,
        lower_bound: lower_bound(dag)?,
        order,
        elapsed,
    })
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::busy::read_graph(&args.file)?;
    let ordered = {
        let _busy = crate::busy::Busy::start("ordering");
        order_with(&graph, args.strategy.strategy())?
    };
    let name = args.strategy.strategy().name();
    if let Some(path) = &args.out {
        let file =
            File::create(path).with_context(|| format!("{}: cannot create", path.display()))?;
        let mut writer = BufWriter::new(file);
        write_json(&mut writer, &graph, &ordered, name)?;
        writer
            .flush()
            .with_context(|| format!("{}: cannot write", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json && args.out.is_none() {
        let mut writer = BufWriter::new(&mut out);
        write_json(&mut writer, &graph, &ordered, name)?;
        writer.flush()?;
    } else if !args.json {
        write_summary(&mut out, &graph, &ordered, name)?;
    }
    Ok(())
}

/// `{"order": [[KEY, PRIORITY], ...], "max_pressure": N, "lower_bound": N,
/// "strategy": "NAME"}`, entries in run order, on one line.
fn write_json(
    out: &mut impl Write,
    graph: &TaskGraph,
    ordered: &Ordered,
    name: &str,
) -> anyhow::Result<()> {
    out.write_all(b"{\"order\": [")?;
    for (step, node) in ordered.order.sequence().into_iter().enumerate() {
        if step > 0 {
            out.write_all(b", ")?;
        }
        out.write_all(b"[")?;
        serde_json::to_writer(&mut *out, graph.key(node))?;
        write!(out, ", {}]", ordered.order.priority(node))?;
    }
    writeln!(
        out,
        "], \"max_pressure\": {}, \"lower_bound\": {}, \"strategy\": {}}}",
        ordered.max_pressure,
        ordered.lower_bound,
        serde_json::to_string(name)?
    )?;
    Ok(())
}

fn write_summary(
    out: &mut impl Write,
    graph: &TaskGraph,
    ordered: &Ordered,
    name: &str,
) -> std::io::Result<()> {
    let kept = ordered.order.strategy();
    let strategy = if name == "auto" {
        format!("auto (kept {})", kept.name())
    } else {
        name.to_string()
    };
    let time = format!("{:.3} ms", ordered.elapsed.as_secs_f64() * 1e3);
    let rows = [
        ("tasks", graph.len().to_string()),
        ("strategy", strategy),
        ("max pressure", ordered.max_pressure.to_string()),
        ("lower bound", ordered.lower_bound.to_string()),
        ("time", time),
    ];
    for (label, value) in rows {
        writeln!(out, "  {label:<16}{value:>20}")?;
    }
    Ok(())
}

/// The demo's ordering step: orders `graph` with `Auto`, writes each key by
/// priority and the max pressure against the lower bound, and returns the
/// priorities (indexed by node) for the steps that follow.
pub(crate) fn demo_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<Vec<u32>> {
    let ordered = order_with(graph, Strategy::Auto)?;
    writeln!(
        out,
        "Ordered with auto (kept {}): {} results held at most, and no order can hold fewer than {}:",
        ordered.order.strategy().name(),
        ordered.max_pressure,
        ordered.lower_bound
    )?;
    let sequence: Vec<String> = ordered
        .order
        .sequence()
        .into_iter()
        .map(|node| graph.key(node).python_str())
        .collect();
    writeln!(out, "  {}", sequence.join(" > "))?;
    Ok(ordered.order.into_priorities())
}
