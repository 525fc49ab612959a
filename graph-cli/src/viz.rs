//! `taskgraph viz`: the graph as a picture coloured by its static order, by
//! one of dask's order diagnostics, by worker or by stage, with a legend;
//! written as Graphviz DOT, rendered to SVG, PNG or PDF by Graphviz, or as
//! one self-contained HTML page with pan, zoom and a hover card per task.
//! Large graphs can be drawn collapsed to their groups of tasks. The
//! drawing is `graph-viz`'s; this module holds the flags, the spinner and the
//! wording of the limit on boxes in terms of `--max-tasks`.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use graph_core::TaskGraph;
use graph_viz::{Colour, Group, Options};

/// Arguments of `taskgraph viz`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// What the colours show.
    #[arg(long, value_enum, default_value_t = Colour::Order)]
    color: Colour,
    /// Where to write: `.dot`; `.svg`, `.png` or `.pdf` rendered by
    /// Graphviz's `dot`; or `.html`, one page with pan, zoom and a hover card
    /// per task (default: DOT on standard output).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// Refuse to draw more boxes than this (tasks, or groups with
    /// `--collapse`): a picture of thousands of boxes shows nothing.
    #[arg(long, value_name = "N", default_value_t = 2_000)]
    max_tasks: usize,
    /// The ordering strategy behind the order positions and diagnostics.
    #[arg(long, value_name = "S", default_value_t = graph_order::Strategy::Auto,
          value_parser = crate::flags::strategy())]
    strategy: graph_order::Strategy,
    /// The number of workers behind `--color worker`.
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = clap::value_parser!(u32).range(1..=1_000))]
    workers: u32,
    /// Draw one box per group of tasks (tasks grouped by key name, as dask's
    /// task groups), with its task count and order positions, and one edge
    /// per pair of groups weighted by its task edges.
    #[arg(long)]
    collapse: bool,
    /// What `--collapse` groups tasks by.
    #[arg(long, value_enum, default_value_t = Group::Name, requires = "collapse")]
    group: Group,
    /// For stages (`--color stage`, `--group stage`): ops whose inputs are
    /// all wide, comma-separated (the edges of complete bipartite blocks are
    /// wide in any case).
    #[arg(long, value_delimiter = ',', value_name = "OPS")]
    wide_ops: Vec<String>,
}

/// Runs `taskgraph viz`.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::graph_file::read(&args.file)?;
    let mut options = Options::default();
    options.colour = args.color;
    options.strategy = args.strategy;
    options.workers = args.workers;
    options.collapse = args.collapse;
    options.group = args.group;
    options.wide_ops = args
        .wide_ops
        .iter()
        .map(|op| graph_core::Op::new(op.trim()))
        .collect();
    options.max_boxes = args.max_tasks;
    if !options.collapse && graph.len() > options.max_boxes {
        bail!(
            "{} has {} tasks, more than --max-tasks {}: a picture that large shows nothing. \
             Draw it with --collapse (one box per group of tasks), raise --max-tasks, or draw a \
             smaller piece of the problem (fewer chunks or partitions), as dask's documentation \
             suggests",
            args.file.display(),
            graph.len(),
            options.max_boxes
        );
    }
    let name = match args.file.to_str() {
        Some("-") => "standard input".to_owned(),
        _ => args.file.display().to_string(),
    };
    match args.output.as_deref() {
        Some(path) if path.as_os_str() != "-" => draw(&graph, &name, &options, path),
        _ => {
            let dot = {
                let _busy = crate::busy::Busy::start("drawing");
                graph_viz::picture(&graph, &name, &options).map_err(in_flags)?
            }
            .to_dot();
            std::io::stdout().lock().write_all(dot.as_bytes())?;
            Ok(())
        }
    }
}

/// [`graph_viz::draw`] with a spinner, its errors worded for the command
/// line.
pub(crate) fn draw(
    graph: &TaskGraph,
    name: &str,
    options: &Options,
    path: &Path,
) -> anyhow::Result<()> {
    let _busy = crate::busy::Busy::start(format!("drawing {}", path.display()));
    graph_viz::draw(graph, name, options, path).map_err(in_flags)
}

/// `err`, with a limit on boxes said in terms of `--max-tasks`, the flag that
/// sets it.
fn in_flags(err: graph_viz::Error) -> anyhow::Error {
    match err {
        graph_viz::Error::TooManyTasks { name, count, limit } => anyhow::anyhow!(
            "{name} has {count} tasks, more than --max-tasks {limit}: a picture that large \
             shows nothing. Draw it with --collapse (one box per group of tasks), raise \
             --max-tasks, or draw a smaller piece of the problem (fewer chunks or partitions), \
             as dask's documentation suggests"
        ),
        graph_viz::Error::TooManyGroups { name, count, limit } => anyhow::anyhow!(
            "{name} has {count} groups of tasks, more than --max-tasks {limit}: a picture that \
             large shows nothing. Raise --max-tasks, or draw a smaller piece of the problem"
        ),
        other => other.into(),
    }
}
