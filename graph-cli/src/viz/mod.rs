//! `taskgraph viz`: the graph as a picture coloured by its static order, by
//! one of dask's order diagnostics, or by worker, with a legend; written as
//! Graphviz DOT, rendered to SVG, PNG or PDF by Graphviz, or as one
//! self-contained HTML page with pan, zoom and a hover card per task. Large
//! graphs can be drawn collapsed to their groups of tasks.
//!
//! | module | holds |
//! | --- | --- |
//! | `figures` | each task's order position, dask's diagnostics, its worker |
//! | `colour` | the colour ramps, the scale, text colour per fill, worker hues |
//! | `legend` | the legend drawn into every picture |
//! | `tasks` | the picture task by task |
//! | `collapse` | the picture of the groups of tasks (`--collapse`) |
//! | `picture` | what is drawn, and its DOT |
//! | `html` | the HTML page |
//! | `render` | formats, Graphviz, files replaced whole |

mod collapse;
mod colour;
mod figures;
mod html;
mod legend;
mod picture;
mod render;
mod tasks;
#[cfg(test)]
mod tests;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use graph_core::{Key, TaskGraph};

use self::figures::Figures;
use self::picture::{Picture, Target};
use self::render::Format;

/// What the fill colour of a task shows: dask's `visualize(color=...)` modes
/// for orders, computed from our diagnostics of the chosen order, and the
/// worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Colour {
    /// Its position in the static order: dark purple first, yellow last
    /// (viridis).
    Order,
    /// How many steps its result stays in memory, until its last dependent
    /// runs (dask's `age`, also accepted).
    #[value(alias = "age")]
    Ages,
    /// How many of its inputs it is the last to use, freed when it runs.
    Freed,
    /// How many more results are held when its result is released than when
    /// it ran: large values may mean it should have run later.
    Memoryincreases,
    /// How many fewer results are held when its result is released than when
    /// it ran: large values may mean it should have run sooner.
    Memorydecreases,
    /// How many results are held in memory just before it runs.
    Memorypressure,
    /// The worker it is placed on (`--workers`); edges between workers are
    /// dashed.
    Worker,
    /// The stage it runs in, as `taskgraph stages` plans them (`--wide-ops`);
    /// wide edges, which start a stage, are thick.
    Stage,
    /// No colour.
    None,
}

/// How `--collapse` groups tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Group {
    /// By key name, as dask's task groups.
    Name,
    /// By stage, as `taskgraph stages` plans them: one box per stage, the
    /// edges between stages (the wide ones among them) between the boxes.
    Stage,
}

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

/// How to draw a graph: the options of `taskgraph viz` without the files.
#[derive(Clone, Debug)]
pub(crate) struct Options {
    /// What the colours show.
    pub(crate) colour: Colour,
    /// The ordering strategy behind positions and diagnostics.
    pub(crate) strategy: graph_order::Strategy,
    /// The number of workers behind [`Colour::Worker`].
    pub(crate) workers: u32,
    /// Draw the groups of tasks instead of the tasks.
    pub(crate) collapse: bool,
    /// What the groups are.
    pub(crate) group: Group,
    /// The ops whose inputs are wide, for stages.
    pub(crate) wide_ops: Vec<graph_core::Op>,
    /// The most boxes a picture may have.
    pub(crate) max_boxes: usize,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            colour: Colour::Order,
            strategy: graph_order::Strategy::Auto,
            workers: 4,
            collapse: false,
            group: Group::Name,
            wide_ops: Vec::new(),
            max_boxes: 2_000,
        }
    }
}

/// Runs `taskgraph viz`.
pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::graph_file::read(&args.file)?;
    let options = Options {
        colour: args.color,
        strategy: args.strategy,
        workers: args.workers,
        collapse: args.collapse,
        group: args.group,
        wide_ops: args
            .wide_ops
            .iter()
            .map(|op| graph_core::Op::new(op.trim()))
            .collect(),
        max_boxes: args.max_tasks,
    };
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
            let dot = picture(&graph, &name, &options)?.to_dot(Target::Standalone);
            std::io::stdout().lock().write_all(dot.as_bytes())?;
            Ok(())
        }
    }
}

/// The picture of `graph`, called `name` in its title, as `options` ask.
///
/// # Errors
///
/// A graph error (a cycle), an ordering or placement error, and more groups
/// than `options.max_boxes` for `--collapse`.
pub(crate) fn picture(graph: &TaskGraph, name: &str, options: &Options) -> anyhow::Result<Picture> {
    let figures = {
        let _busy = crate::busy::Busy::start("ordering");
        Figures::compute(graph, options)?
    };
    let groups = if options.collapse {
        let groups = {
            let _busy = crate::busy::Busy::start("grouping tasks");
            match (options.group, &figures.stages) {
                (Group::Stage, Some(stages)) => collapse::stage_groups(graph, stages)?,
                _ => collapse::groups(graph)?,
            }
        };
        if groups.len() > options.max_boxes {
            bail!(
                "{name} has {} groups of tasks, more than --max-tasks {}: a picture that large \
                 shows nothing. Raise --max-tasks, or draw a smaller piece of the problem",
                groups.len(),
                options.max_boxes
            );
        }
        Some(groups)
    } else {
        None
    };
    let mut picture = match &groups {
        Some(groups) => collapse::picture(graph, groups, &figures)?,
        None => tasks::picture(graph, &figures)?,
    };
    picture.title = format!("{name}, {}", picture.title);
    Ok(picture)
}

/// Draws `graph`, called `name` in the picture's title, as `options` ask
/// into `path`, in the format its extension names (`.dot`, `.svg`, `.png`,
/// `.pdf` or `.html`); the file is replaced whole.
///
/// # Errors
///
/// Those of [`picture()`] and of writing (an unknown extension, checked before
/// any work; Graphviz missing or failing; the file).
pub(crate) fn draw(
    graph: &TaskGraph,
    name: &str,
    options: &Options,
    path: &Path,
) -> anyhow::Result<()> {
    render::format_of(path)?;
    write_picture(&picture(graph, name, options)?, path)
}

/// Writes `picture` to `path` in the format its extension names.
fn write_picture(picture: &Picture, path: &Path) -> anyhow::Result<()> {
    let bytes = match render::format_of(path)? {
        Format::Dot => picture.to_dot(Target::Standalone).into_bytes(),
        Format::Rendered(format) => {
            render::render(&picture.to_dot(Target::Standalone), format, path)?
        }
        Format::Html => {
            let svg = render::render(&picture.to_dot(Target::Page), "svg", path)?;
            html::page(picture, &String::from_utf8_lossy(&svg))?.into_bytes()
        }
    };
    render::write_whole(path, &bytes)
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

/// A key as a short label: dask's hexadecimal name hashes dropped
/// (`('sum-aggregate-61aa7725...', 0)` reads `sum-aggregate (0)`), and at most
/// 40 characters.
pub(crate) fn short_label(key: &Key) -> String {
    /// `name` without a trailing `-<hexadecimal hash>` of 8 digits or more.
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
