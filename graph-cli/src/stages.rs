//! `taskgraph stages FILE [--wide-ops OPS] [--keys KEYS] [--json]`: the
//! graph's stages as BNDL and Spark plan them, split at wide dependencies,
//! each partition's narrow work coalesced, and the barriers a shuffle would
//! take.

use std::io::Write;
use std::path::PathBuf;

use graph_core::{Key, NodeId, Op, TaskGraph};
use graph_optimize::{Block, StageConfig, StagePlan, StageSummary, plan_stages};
use serde::Serialize;

/// Arguments of `taskgraph stages`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// Ops whose inputs are all wide (a shuffle's concatenation, say),
    /// comma-separated; the edges of complete bipartite blocks are wide in
    /// any case.
    #[arg(long, value_delimiter = ',', value_name = "OPS")]
    wide_ops: Vec<String>,
    /// Keys that stay tasks of their own, as a JSON array of keys (e.g.
    /// '["a", ["x", 0]]'); default: the graph's leaves.
    #[arg(long)]
    keys: Option<String>,
    /// Print one JSON object instead of the plan.
    #[arg(long)]
    json: bool,
}

/// `stages --json`: the figures, in the order scripts read them.
#[derive(Serialize)]
struct Json {
    stage_count: usize,
    stages: Vec<JsonStage>,
    barriers: usize,
    edges: usize,
    edges_with_barriers: usize,
}

#[derive(Serialize)]
struct JsonStage {
    stage: usize,
    tasks: usize,
    tasks_after_coalescing: usize,
    wide_inputs: usize,
}

impl From<&StageSummary> for Json {
    fn from(summary: &StageSummary) -> Json {
        Json {
            stage_count: summary.stages.len(),
            stages: summary
                .stages
                .iter()
                .enumerate()
                .map(|(stage, figures)| JsonStage {
                    stage,
                    tasks: figures.tasks,
                    tasks_after_coalescing: figures.tasks_after_coalescing,
                    wide_inputs: figures.wide_inputs,
                })
                .collect(),
            barriers: summary.barriers.len(),
            edges: summary.edges,
            edges_with_barriers: summary.edges_with_barriers,
        }
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let graph = crate::graph_file::read(&args.file)?;
    let config = StageConfig {
        wide_ops: args.wide_ops.iter().map(|op| Op::new(op.trim())).collect(),
        keys: crate::keys::requested(&graph, args.keys.as_deref())?,
        ..StageConfig::default()
    };
    let (plan, summary) = {
        let _busy = crate::busy::Busy::start("planning stages");
        plan_with_summary(&graph, &config)?
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        crate::json_out::write_spaced(&mut out, &Json::from(&summary), 3)?;
    } else {
        write_plan(&mut out, &graph, &plan, &summary, &config.wide_ops)?;
    }
    Ok(())
}

/// The stage plan of `graph` and its figures.
pub(crate) fn plan_with_summary(
    graph: &TaskGraph,
    config: &StageConfig,
) -> anyhow::Result<(StagePlan, StageSummary)> {
    let plan = plan_stages(graph, config)?;
    let summary = plan.summary(graph.topology()?)?;
    Ok((plan, summary))
}

/// The most barrier blocks listed one by one.
const LISTED_BLOCKS: usize = 10;

/// Writes the plan: a line per stage, where its wide inputs come from, and
/// the barriers.
pub(crate) fn write_plan(
    out: &mut impl Write,
    graph: &TaskGraph,
    plan: &StagePlan,
    summary: &StageSummary,
    wide_ops: &[Op],
) -> anyhow::Result<()> {
    let after: usize = summary
        .stages
        .iter()
        .map(|s| s.tasks_after_coalescing)
        .sum();
    writeln!(
        out,
        "{} stage{}: {} tasks, {after} once each partition's narrow work in a stage is one task",
        summary.stages.len(),
        plural(summary.stages.len()),
        graph.len(),
    )?;
    let ops: Vec<&str> = wide_ops.iter().map(Op::as_str).collect();
    writeln!(
        out,
        "wide edges: {} (in complete bipartite blocks{})",
        plan.wide_edges.len(),
        if ops.is_empty() {
            String::new()
        } else {
            format!(", or read by {}", ops.join(", "))
        }
    )?;
    writeln!(
        out,
        "  {:>5}  {:>10}  {:>10}  {:>11}  from",
        "stage", "tasks", "coalesced", "wide inputs"
    )?;
    // Where each stage's wide inputs come from: counts by source stage.
    let mut sources = vec![std::collections::BTreeMap::<u32, usize>::new(); summary.stages.len()];
    for &(dependency, dependent) in &plan.wide_edges {
        let into = plan.stage[dependent.index()] as usize;
        *sources[into]
            .entry(plan.stage[dependency.index()])
            .or_default() += 1;
    }
    for (stage, figures) in summary.stages.iter().enumerate() {
        let from: Vec<String> = sources[stage]
            .iter()
            .map(|(source, count)| format!("{count} from stage {source}"))
            .collect();
        writeln!(
            out,
            "  {stage:>5}  {:>10}  {:>10}  {:>11}  {}",
            figures.tasks,
            figures.tasks_after_coalescing,
            figures.wide_inputs,
            if from.is_empty() {
                "-".to_string()
            } else {
                from.join(", ")
            }
        )?;
    }
    let saved = summary.edges - summary.edges_with_barriers;
    writeln!(
        out,
        "barriers: {}; {} edges, {} with barriers ({saved} fewer)",
        summary.barriers.len(),
        summary.edges,
        summary.edges_with_barriers
    )?;
    for block in summary.barriers.iter().take(LISTED_BLOCKS) {
        writeln!(out, "  {}", describe_block(graph, block))?;
    }
    if summary.barriers.len() > LISTED_BLOCKS {
        writeln!(out, "  and {} more", summary.barriers.len() - LISTED_BLOCKS)?;
    }
    Ok(())
}

/// `m producers (a, ..., z) x n consumers (...): m x n edges -> m + n`.
fn describe_block(graph: &TaskGraph, block: &Block) -> String {
    let (m, n) = (block.producers.len(), block.consumers.len());
    format!(
        "{m} x {n}: {} -> {}; {} edges become {}",
        span(graph, &block.producers),
        span(graph, &block.consumers),
        m * n,
        m + n
    )
}

/// The first and last keys of a set of tasks.
fn span(graph: &TaskGraph, nodes: &[NodeId]) -> String {
    let key = |node: &NodeId| -> &Key { graph.key(*node) };
    match nodes {
        [] => "()".to_string(),
        [only] => key(only).python_str(),
        [first, .., last] => format!(
            "({} .. {})",
            key(first).python_str(),
            key(last).python_str()
        ),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
