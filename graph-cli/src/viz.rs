//! `taskgraph viz`: the graph as Graphviz DOT, coloured by static order or by
//! worker, rendered to SVG or PNG when Graphviz is installed.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use graph_core::{Dag, Key, TaskGraph};

/// What the fill colour of a task shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Colour {
    /// Its priority in the static order, dark red first to light yellow last.
    Order,
    /// The worker it is placed on; edges between workers are dashed.
    Worker,
    /// No colour.
    None,
}

/// Arguments of `taskgraph viz`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// What the colours show.
    #[arg(long, value_enum, default_value_t = Colour::Order)]
    color: Colour,
    /// Where to write: `.dot`, or `.svg` / `.png` rendered by Graphviz's `dot`
    /// (default: DOT on standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Refuse graphs with more tasks than this: a picture of thousands of tasks
    /// shows nothing.
    #[arg(long, default_value_t = 2_000)]
    max_tasks: usize,
    /// The ordering strategy behind `--color order`.
    #[arg(long, value_enum, default_value_t = crate::order::StrategyArg::Auto)]
    strategy: crate::order::StrategyArg,
    /// The number of workers behind `--color worker`.
    #[arg(long, default_value_t = 4)]
    workers: usize,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::graph_file::read(&args.file)?;
    if graph.len() > args.max_tasks {
        bail!(
            "{} has {} tasks, more than --max-tasks {}: a picture that large shows nothing. \
             Raise --max-tasks, or draw a smaller piece of the problem (fewer chunks or partitions), \
             as dask's documentation suggests",
            args.file.display(),
            graph.len(),
            args.max_tasks
        );
    }
    let colours = match args.color {
        Colour::Order => Colours::Order(priorities(&graph, args.strategy)?),
        Colour::Worker => Colours::Worker(workers(&graph, args.workers)?),
        Colour::None => Colours::None,
    };
    let dot = to_dot(&graph, &colours)?;
    match &args.output {
        None => std::io::stdout().lock().write_all(dot.as_bytes())?,
        Some(path) => write(&dot, path)?,
    }
    Ok(())
}

/// The priority of every task in the order `strategy` gives.
pub(crate) fn priorities(
    graph: &TaskGraph,
    strategy: crate::order::StrategyArg,
) -> anyhow::Result<Vec<u32>> {
    let config = graph_order::OrderConfig::new(strategy.strategy());
    Ok(graph_order::order_graph(graph, &config)?.into_priorities())
}

/// The worker of every task, placed by `graph-assign`'s default strategy.
pub(crate) fn workers(graph: &TaskGraph, count: usize) -> anyhow::Result<Vec<u32>> {
    let workers = graph_assign::Workers::new(count)?;
    let sizes = graph_assign::sizes_of(graph);
    let costs = graph_assign::costs_of(graph);
    let assignment =
        graph_assign::assign(graph.topology()?, &workers, Some(&sizes), costs.as_deref())?;
    Ok(assignment.into_vec())
}

/// The colouring of a picture.
pub(crate) enum Colours {
    /// Priorities, one per task.
    Order(Vec<u32>),
    /// Workers, one per task.
    Worker(Vec<u32>),
    None,
}

/// Writes DOT to `path`, rendering it with Graphviz for `.svg` and `.png`.
pub(crate) fn write(dot: &str, path: &Path) -> anyhow::Result<()> {
    let format = match path.extension().and_then(|ext| ext.to_str()) {
        Some("dot" | "gv") | None => {
            std::fs::write(path, dot).with_context(|| format!("writing {}", path.display()))?;
            return Ok(());
        }
        Some(format @ ("svg" | "png" | "pdf")) => format,
        Some(other) => bail!(
            "{}: cannot write .{other}; write .dot, .svg or .png",
            path.display()
        ),
    };
    let child = Command::new("dot")
        .arg(format!("-T{format}"))
        .arg("-o")
        .arg(path)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
            "rendering {} needs Graphviz's `dot`, which is not installed: install Graphviz \
             (Debian and Ubuntu: apt-get install graphviz) or write a .dot file",
            path.display()
        ),
        Err(err) => return Err(err).context("starting Graphviz's dot"),
    };
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(dot.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        bail!(
            "Graphviz's dot failed on {}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}

/// The graph in DOT: a box per task labelled with its shortened key (and its
/// priority when coloured by order), edges from dependency to dependent, laid
/// out bottom to top as dask draws graphs.
pub(crate) fn to_dot(graph: &TaskGraph, colours: &Colours) -> anyhow::Result<String> {
    let topology = graph.topology()?;
    let n_tasks = graph.len();
    let mut dot = String::from(
        "digraph taskgraph {\n  rankdir=BT;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fillcolor=\"#ffffff\"];\n  edge [color=\"#555555\", arrowsize=0.6];\n",
    );
    for node in topology.node_ids() {
        let label = short_label(graph.key(node));
        let (fill, extra) = match colours {
            Colours::Order(priority) => {
                let at = f64::from(priority[node.index()]) / (n_tasks.max(2) - 1) as f64;
                (order_colour(at), format!("\\n{}", priority[node.index()]))
            }
            Colours::Worker(worker) => (
                worker_colour(worker[node.index()]),
                format!("\\nworker {}", worker[node.index()]),
            ),
            Colours::None => ("#ffffff".to_owned(), String::new()),
        };
        let font = if is_dark(&fill) { "#ffffff" } else { "#000000" };
        let _ = writeln!(
            dot,
            "  n{} [label=\"{}{extra}\", fillcolor=\"{fill}\", fontcolor=\"{font}\"];",
            node.index(),
            escape(&label)
        );
    }
    for node in topology.node_ids() {
        for &dep in topology.dependencies(node) {
            let cut = matches!(colours, Colours::Worker(w) if w[dep.index()] != w[node.index()]);
            let style = if cut {
                " [style=dashed, color=\"#d62728\"]"
            } else {
                ""
            };
            let _ = writeln!(dot, "  n{} -> n{}{style};", dep.index(), node.index());
        }
    }
    dot.push_str("}\n");
    Ok(dot)
}

/// A key as a short label: dask's hexadecimal name hashes dropped
/// (`('sum-aggregate-61aa7725...', 0)` reads `sum-aggregate (0)`), and at most
/// 40 characters.
pub(crate) fn short_label(key: &Key) -> String {
    fn strip_hash(name: &str) -> &str {
        match name.rsplit_once('-') {
            Some((head, tail))
                if tail.len() >= 8 && tail.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                head
            }
            _ => name,
        }
    }
    let text = match key {
        Key::Tuple(parts) if matches!(parts.first(), Some(Key::Str(_))) => {
            let name = strip_hash(parts[0].name().unwrap_or_default());
            let rest: Vec<String> = parts[1..].iter().map(Key::to_string).collect();
            if rest.is_empty() {
                name.to_owned()
            } else {
                format!("{name} ({})", rest.join(", "))
            }
        }
        Key::Str(name) => strip_hash(name).to_owned(),
        other => other.python_str(),
    };
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(39).collect();
        format!("{cut}…")
    } else {
        text
    }
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
}

/// Dark red (first) through orange to light yellow (last), like dask's
/// `cmap="autumn"` pictures but readable at both ends.
fn order_colour(at: f64) -> String {
    const STOPS: [(f64, [f64; 3]); 3] = [
        (0.0, [139.0, 0.0, 0.0]),
        (0.5, [255.0, 140.0, 0.0]),
        (1.0, [255.0, 255.0, 224.0]),
    ];
    let at = at.clamp(0.0, 1.0);
    let (lo, hi) = if at <= STOPS[1].0 {
        (STOPS[0], STOPS[1])
    } else {
        (STOPS[1], STOPS[2])
    };
    let t = (at - lo.0) / (hi.0 - lo.0);
    let channel = |i: usize| (lo.1[i] + (hi.1[i] - lo.1[i]) * t).round() as u8;
    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
}

/// A distinct colour per worker: ten well-separated hues, then lighter turns.
fn worker_colour(worker: u32) -> String {
    const PALETTE: [&str; 10] = [
        "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
        "#bcbd22", "#17becf",
    ];
    let base = PALETTE[worker as usize % PALETTE.len()];
    let turn = worker as usize / PALETTE.len();
    if turn == 0 {
        return base.to_owned();
    }
    // Blend towards white for later turns, so that colours stay distinct.
    let blend = 1.0 - 0.6_f64.powi(turn as i32);
    let channel = |i: usize| {
        let value = f64::from(u8::from_str_radix(&base[1 + 2 * i..3 + 2 * i], 16).unwrap_or(0));
        (value + (255.0 - value) * blend).round() as u8
    };
    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
}

fn is_dark(hex: &str) -> bool {
    let channel =
        |i: usize| f64::from(u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap_or(255));
    0.299 * channel(0) + 0.587 * channel(1) + 0.114 * channel(2) < 140.0
}
