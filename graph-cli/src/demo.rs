//! `taskgraph demo`: the toolkit's story, step by step, on the word-count
//! graph of dask's optimization documentation: the graph, its optimization,
//! its stages, a rewrite, its order, its placement, a run on all cores and one across
//! processes, and its picture; and a run of tasks that take time, on one
//! thread and on four.

mod losses;

use std::io::Write;

use std::path::{Path, PathBuf};

use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use graph_core::{Body, GraphStats, Key, Op, Shape, TaskGraph, Term, generate};

use graph_exec::Output;

use graph_optimize::FuseConfig;

use graph_order::Strategy;

use graph_rewrite::{Pattern, RewriteReport, RewriteRule, RewriteStrategy, RuleSet};

/// Arguments of `taskgraph demo`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: &Args) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let graph = generate::word_count();
    writeln!(
        out,
        "The word-count graph of dask's optimization docs, {} tasks:",
        graph.len()
    )?;
    write_graph(&mut out, &graph)?;
    writeln!(out)?;
    let stats = GraphStats::of(graph.topology()?);
    writeln!(
        out,
        "Its shape: {} tasks, {} edges, {} roots, {} leaves, depth {}, widest fan-in {} and fan-out {}.",
        stats.tasks,
        stats.edges,
        stats.roots,
        stats.leaves,
        stats.depth,
        stats.max_in_degree,
        stats.max_out_degree
    )?;
    writeln!(out)?;

    writeln!(out, "Optimized as dask's optimization docs do it:")?;
    optimize_story(&mut out)?;
    writeln!(out)?;

    stages_step(&mut out, &graph)?;
    writeln!(out)?;

    let graph = rewrite_step(&mut out, &graph)?;
    writeln!(out)?;

    let priorities = order_step(&mut out, &graph)?;
    writeln!(out)?;

    writeln!(
        out,
        "Placed on 2 workers (few edges cut, unless a busier placement is simulated to finish clearly sooner):"
    )?;
    assign_step(&mut out, &graph, 2)?;
    writeln!(out)?;

    let keys: Vec<Key> = ["print1", "print2", "print3"]
        .into_iter()
        .map(Key::from)
        .collect();
    writeln!(
        out,
        "Run on all cores with the built-in ops, asking for print1..3:"
    )?;
    let run = crate::run::execute(&graph, &keys, 0, &priorities, None, false, None)?;
    let values = run.output.items().unwrap_or_default();
    for (key, value) in keys.iter().zip(values.iter().filter_map(Output::value)) {
        writeln!(out, "  {} = {value}", key.python_str())?;
    }
    writeln!(
        out,
        "  {} tasks run, at most {} intermediate results held at once",
        run.stats.tasks_run, run.stats.peak_held
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "Run across 2 worker processes (timely dataflow over loopback TCP), each task where it was placed:"
    )?;
    across_step(&mut out, &graph, &keys)?;
    writeln!(out)?;
    picture_step(&mut out, &graph)?;
    writeln!(out)?;
    parallel_step(&mut out)?;
    writeln!(out)?;
    bytes_step(&mut out)?;
    writeln!(out)?;
    losses::recovery_step(&mut out)?;
    Ok(())
}

/// Results of very different sizes: an order by counts against one by
/// bytes, and a run on two threads that holds what the order holds.
fn bytes_step(out: &mut impl Write) -> anyhow::Result<()> {
    const PRODUCER: u64 = 4_000_000;
    let graph = generate::shared_producers(40, 2, PRODUCER);
    let shape = Shape::of(&graph)?;
    let sizes = graph_order::shape_sizes(&shape).unwrap_or_default();
    writeln!(
        out,
        "Results of very different sizes: 40 producers of 4 MB, each read by `len` and `checksum`, the 80 small results gathered by one task:"
    )?;
    let ties = graph_order::ranks_by_str(shape.keys());
    let by_count = graph_order::order(
        shape.topology(),
        &ties,
        &graph_order::OrderConfig::new(Strategy::Dask),
    )?;
    let by_bytes = crate::order::order_with(&shape, Strategy::Auto)?;
    let (max_bytes, lower) = by_bytes.bytes.unwrap_or_default();
    writeln!(
        out,
        "  dask's order holds {} results at most (the least any order can) and {}",
        graph_order::max_pressure(shape.topology(), &by_count)?,
        crate::flags::human_bytes(graph_order::max_bytes(shape.topology(), &by_count, &sizes)?)
    )?;
    writeln!(
        out,
        "  auto, weighing each result by its size (kept {}): {}, and no order can hold less than {}",
        by_bytes.order.strategy().map_or("?", Strategy::name),
        crate::flags::human_bytes(max_bytes),
        crate::flags::human_bytes(lower)
    )?;
    let keys = [Key::from("total")];
    let priorities = by_bytes.order.into_priorities();
    let run = crate::run::execute(&graph, &keys, 2, &priorities, None, false, None)?;
    writeln!(
        out,
        "  run on 2 threads: at most {} of results in memory",
        crate::flags::human_bytes(run.stats.peak_bytes)
    )?;
    Ok(())
}

/// The stage plans of the word-count graph and of BNDL's example of a
/// shuffle between two narrow steps, as `taskgraph stages` prints them.
fn stages_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<()> {
    writeln!(
        out,
        "Stages, as BNDL and Spark plan them: split where tasks read all of a set of tasks (a shuffle), each partition's narrow work coalesced into one task:"
    )?;
    let examples = [
        ("the word-count graph", graph.clone()),
        (
            "BNDL's example, 4 partitions read and mapped, shuffled into 2 reducers, each mapped again",
            generate::map_shuffle_map(4, 2),
        ),
    ];
    for (what, graph) in examples {
        writeln!(out, "  {what}:")?;
        let config = graph_optimize::StageConfig {
            keys: graph.leaf_keys()?,
            ..graph_optimize::StageConfig::default()
        };
        let (plan, summary) = crate::stages::plan_with_summary(&graph, &config)?;
        let mut text = Vec::new();
        crate::stages::write_plan(&mut text, &graph, &plan, &summary, &[])?;
        for line in String::from_utf8_lossy(&text).lines() {
            writeln!(out, "    {line}")?;
        }
    }
    Ok(())
}

/// How many chains the parallel step runs, how long each is, and how long
/// each of its tasks sleeps.
const CHAINS: usize = 8;

const CHAIN_LENGTH: usize = 25;

const SLEEP_SECONDS: f64 = 0.002;

/// Runs independent chains of sleeping tasks in their static order on one
/// thread and on four, and writes both times against the best four threads
/// could do.
fn parallel_step(out: &mut impl Write) -> anyhow::Result<()> {
    let mut graph = TaskGraph::with_capacity(CHAINS * CHAIN_LENGTH);
    for chain in 0..CHAINS as i64 {
        for step in 0..CHAIN_LENGTH as i64 {
            let input = if step == 0 {
                Term::lit(chain)
            } else {
                Term::call("inc", [Term::key(("chain", chain, step - 1))])
            };
            let task = Term::call("sleep", [input, Term::lit(SLEEP_SECONDS)]);
            graph.insert(("chain", chain, step), task)?;
        }
    }
    let keys = graph.leaf_keys()?;
    let priorities =
        graph_order::order_graph(&graph, &graph_order::OrderConfig::default())?.into_priorities();
    let work = graph.len() as f64 * SLEEP_SECONDS;
    let best = (work / 4.0).max(CHAIN_LENGTH as f64 * SLEEP_SECONDS);
    writeln!(
        out,
        "Tasks that take time: {CHAINS} chains of {CHAIN_LENGTH} tasks that each sleep {} ms, {work:.2} s of work; 4 threads at best take {best:.2} s:",
        SLEEP_SECONDS * 1e3
    )?;
    let mut outputs = Vec::new();
    for threads in [1, 4] {
        let started = std::time::Instant::now();
        let run = crate::run::execute(&graph, &keys, threads, &priorities, None, false, None)?;
        let seconds = started.elapsed().as_secs_f64();
        writeln!(
            out,
            "  {threads} thread{}: {seconds:.2} s ({:.2}x the best), at most {} result{} held",
            if threads == 1 { " " } else { "s" },
            seconds / best,
            run.stats.peak_held,
            if run.stats.peak_held == 1 { "" } else { "s" }
        )?;
        outputs.push(run.output);
    }
    if outputs[0] != outputs[1] {
        bail!("one thread and four gave different results");
    }
    writeln!(
        out,
        "  the same results; an idle thread starts any ready task while the results held stay within the order's bound"
    )?;
    Ok(())
}

/// Writes each task as `key = term`, one per line.
fn write_graph(out: &mut impl Write, graph: &TaskGraph) -> std::io::Result<()> {
    let width = graph
        .keys()
        .map(|key| key.python_str().len())
        .max()
        .unwrap_or(0);
    for (key, task) in graph.iter() {
        let key = key.python_str();
        match &task.body {
            Body::Term(term) => writeln!(out, "  {key:<width$} = {term}")?,
            Body::Opaque(deps) => {
                let deps: Vec<String> = deps.iter().map(|dep| dep.python_str()).collect();
                writeln!(out, "  {key:<width$} = <opaque>({})", deps.join(", "))?;
            }
        }
    }
    Ok(())
}

/// The optimization story of dask's documentation, on its word-count graph:
/// cull to the two outputs, inline the constants, inline the cheap `len`
/// and `split`, fuse; the graph after each step.
fn optimize_story(out: &mut impl Write) -> anyhow::Result<()> {
    let graph = generate::word_count();
    let outputs = [Key::from("print1"), Key::from("print2")];

    let culled = graph_optimize::cull(&graph, &outputs)?;
    writeln!(
        out,
        "cull to print1, print2: {} -> {} tasks (nothing else is needed):",
        graph.len(),
        culled.len()
    )?;
    write_changes(out, &graph, &culled)?;

    let inlined = graph_optimize::inline(&culled, &[], true)?;
    writeln!(
        out,
        "inline the constants (words, val1, val2) into their users; like dask, they stay:"
    )?;
    write_changes(out, &culled, &inlined)?;

    let fast = [Op::new("len"), Op::new("split")];
    let cheap = graph_optimize::inline_functions(&inlined, &outputs, &fast)?;
    writeln!(
        out,
        "inline the cheap ops len and split: nwords is computed where it is used:"
    )?;
    write_changes(out, &inlined, &cheap)?;

    let fused = graph_optimize::fuse(&cheap, &FuseConfig::default())?;
    writeln!(
        out,
        "fuse: each count, format and print become one task, named as dask names it;\n\
         the outputs stay as aliases, and the inlined constants, now unused, remain:"
    )?;
    write_changes(out, &cheap, &fused)?;
    Ok(())
}

/// Writes what a pass changed: each task that is new or has a new body as
/// `key = term`, then the keys it removed on one line.
fn write_changes(
    out: &mut impl Write,
    before: &TaskGraph,
    after: &TaskGraph,
) -> std::io::Result<()> {
    let changed: Vec<(&Key, &graph_core::Task)> = after
        .iter()
        .filter(|(key, task)| before.get(key) != Some(*task))
        .collect();
    let width = changed
        .iter()
        .map(|(key, _)| key.python_str().len())
        .max()
        .unwrap_or(0);
    for (key, task) in changed {
        let key = key.python_str();
        match &task.body {
            Body::Term(term) => writeln!(out, "  {key:<width$} = {term}")?,
            Body::Opaque(_) => writeln!(out, "  {key:<width$} = <opaque>")?,
        }
    }
    let removed: Vec<String> = before
        .keys()
        .filter(|key| after.get(key).is_none())
        .map(Key::python_str)
        .collect();
    if !removed.is_empty() {
        writeln!(out, "  (removed: {})", removed.join(", "))?;
    }
    Ok(())
}

/// The rules of the demo: `identity(x) -> x` (the `print` tasks of the
/// word-count graph are identities), `add(x, 0) -> x` and
/// `mul(x, 2) -> add(x, x)`. Each keeps the graph's results, so the rewritten
/// graph still runs.
fn demo_rules() -> anyhow::Result<RuleSet> {
    let x = || Pattern::var("x");
    Ok(RuleSet::new([
        RewriteRule::new(Pattern::call("identity", [x()]), x())?,
        RewriteRule::new(Pattern::call("add", [x(), Pattern::lit(0)]), x())?,
        RewriteRule::new(
            Pattern::call("mul", [x(), Pattern::lit(2)]),
            Pattern::call("add", [x(), x()]),
        )?,
    ]))
}

/// Applies the demo's rules bottom-up to every task of `graph`, writes the
/// rules and each task that changed (`key: old -> new`), and returns the
/// rewritten graph.
fn rewrite_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<TaskGraph> {
    let rules = demo_rules()?;
    writeln!(out, "Rewrite rules, applied bottom-up to every task:")?;
    for rule in rules.rules() {
        writeln!(out, "  {rule}")?;
    }
    let (rewritten, report) =
        graph_rewrite::rewrite_graph(graph, &rules, RewriteStrategy::BottomUp)?;
    write_rewrites(out, graph, &rewritten, &report)?;
    Ok(rewritten)
}

/// Writes each task whose body differs between `before` and `after` (same
/// keys, same order), then the report.
fn write_rewrites(
    out: &mut impl Write,
    before: &TaskGraph,
    after: &TaskGraph,
    report: &RewriteReport,
) -> std::io::Result<()> {
    let mut any = false;
    for ((key, old), (_, new)) in before.iter().zip(after.iter()) {
        let (Body::Term(old), Body::Term(new)) = (&old.body, &new.body) else {
            continue;
        };
        if old != new {
            writeln!(out, "  {}: {old} -> {new}", key.python_str())?;
            any = true;
        }
    }
    if !any {
        writeln!(out, "  (no task matched)")?;
    }
    writeln!(out, "  {report}")
}

/// Orders `graph` with `Auto`, writes each key by priority and the max
/// pressure against the lower bound, and returns the priorities (indexed by
/// node) for the steps that follow.
fn order_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<Vec<u32>> {
    let ordered = crate::order::order_with(&Shape::of(graph)?, Strategy::Auto)?;
    writeln!(
        out,
        "Ordered with auto (kept {}): {} results held at most, and no order can hold fewer than {}:",
        ordered.order.strategy().map_or("?", Strategy::name),
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

/// Places `graph` on `workers` workers with the default placer and writes
/// each worker's tasks and the metrics.
fn assign_step(out: &mut impl Write, graph: &TaskGraph, workers: usize) -> anyhow::Result<()> {
    let workers = graph_assign::Workers::new(workers)?;
    let placed = crate::assign::place(graph, &workers, crate::assign::Placer::Auto)?;
    for worker in 0..workers.count() {
        let keys: Vec<String> = placed
            .assignment
            .tasks_on(worker)
            .map(|node| graph.key(node).python_str())
            .collect();
        writeln!(out, "  worker {worker}: {}", keys.join(", "))?;
    }
    crate::assign::write_metrics(out, &placed, None)?;
    Ok(())
}

/// Runs `graph` across 2 worker processes of this program (placed as
/// `taskgraph assign --workers 2` places it) and prints the results and what
/// crossed between the processes.
fn across_step(out: &mut impl Write, graph: &TaskGraph, keys: &[Key]) -> anyhow::Result<()> {
    let dir = tempfile::Builder::new()
        .prefix("taskgraph-demo-")
        .tempdir()
        .context("making a private temporary directory")?;
    let file = dir.path().join("word-count.json");
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
        // The results are JSON strings and numbers, which a `Key` prints in
        // Python's spelling, as the local run prints its values.
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
}

/// Draws the graph in each kind of picture `taskgraph viz` makes: by order,
/// by memory pressure, by worker, collapsed into its groups, and as an
/// interactive page; SVG (or DOT when Graphviz is not installed), never over
/// an existing file: the first free name of `demo-order.svg`,
/// `demo-order-2.svg`, ... is taken, and said.
fn picture_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<()> {
    use crate::viz::draw;
    use graph_viz::{Colour, Options};
    /// The default options with `set` applied.
    fn options(set: impl FnOnce(&mut Options)) -> Options {
        let mut options = Options::default();
        set(&mut options);
        options
    }
    let kinds = [
        (
            "demo-order",
            "coloured by its order (dark purple first)",
            Options::default(),
        ),
        (
            "demo-memorypressure",
            "coloured by how many results are held when each task runs",
            options(|o| o.colour = Colour::Memorypressure),
        ),
        (
            "demo-worker",
            "coloured by worker, 2 workers (cut edges dashed)",
            options(|o| {
                o.colour = Colour::Worker;
                o.workers = 2;
            }),
        ),
        (
            "demo-stages",
            "coloured by stage (one: no two tasks read the same two tasks)",
            options(|o| o.colour = Colour::Stage),
        ),
        (
            "demo-collapsed",
            "collapsed into its groups of tasks",
            options(|o| o.collapse = true),
        ),
    ];
    writeln!(out, "Pictures of the graph:")?;
    let mut graphviz = true;
    for (stem, what, options) in kinds {
        let svg = Claimed::name(stem, "svg")?;
        let written = if graphviz {
            draw(graph, "word count", &options, svg.path()).map(|()| svg)
        } else {
            Err(anyhow::anyhow!("Graphviz is not installed"))
        };
        let picture = match written {
            Ok(svg) => svg,
            Err(err) => {
                graphviz = false;
                let dot = Claimed::name(stem, "dot")?;
                draw(graph, "word count", &options, dot.path())?;
                writeln!(out, "  ({err:#})")?;
                dot
            }
        };
        writeln!(out, "  {}: {what}", picture.keep().display())?;
    }
    if graphviz {
        let page = Claimed::name("demo", "html")?;
        let options = options(|o| o.colour = Colour::Memorypressure);
        draw(graph, "word count", &options, page.path())?;
        writeln!(
            out,
            "  {}: a page to pan, zoom and hover over each task",
            page.keep().display()
        )?;
    }
    Ok(())
}

/// A file name in the working directory taken for a picture: made empty
/// with `create_new`, so that two demos in one directory never write over
/// each other (nor over any file), and removed again unless the picture is
/// drawn into it and [kept](Claimed::keep).
struct Claimed {
    path: PathBuf,
    kept: bool,
}

impl Claimed {
    /// Takes `stem.ext`, or `stem-2.ext`, `stem-3.ext`, ...: the first name
    /// no file has in the working directory.
    fn name(stem: &str, ext: &str) -> anyhow::Result<Claimed> {
        Claimed::name_in(Path::new(""), stem, ext)
    }

    /// As [`Claimed::name`], in `dir`.
    fn name_in(dir: &Path, stem: &str, ext: &str) -> anyhow::Result<Claimed> {
        for i in 1_u32.. {
            let path = dir.join(match i {
                1 => format!("{stem}.{ext}"),
                i => format!("{stem}-{i}.{ext}"),
            });
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(_) => return Ok(Claimed { path, kept: false }),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(err) => {
                    return Err(anyhow::Error::new(err)
                        .context(format!("taking the name {} for a picture", path.display())));
                }
            }
        }
        bail!("no name {stem}-N.{ext} is free in {}", dir.display())
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// The name, which now stays taken.
    fn keep(mut self) -> PathBuf {
        self.kept = true;
        std::mem::take(&mut self.path)
    }
}

impl Drop for Claimed {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use graph_core::Term;

    use super::*;

    #[test]
    fn a_claimed_name_is_taken_before_its_picture_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("p.svg"), "there before").unwrap();
        let first = Claimed::name_in(dir.path(), "p", "svg").unwrap();
        let second = Claimed::name_in(dir.path(), "p", "svg").unwrap();
        assert_eq!(first.path(), dir.path().join("p-2.svg"));
        assert_eq!(second.path(), dir.path().join("p-3.svg"));
        // A name given up (its picture failed) is free again; one kept stays.
        drop(first);
        let kept = second.keep();
        assert!(!dir.path().join("p-2.svg").exists() && kept.exists());
        let again = Claimed::name_in(dir.path(), "p", "svg").unwrap();
        assert_eq!(again.path(), dir.path().join("p-2.svg"));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("p.svg")).unwrap(),
            "there before"
        );
    }

    #[test]
    fn rewrite_step_rewrites_and_reports() {
        let graph = TaskGraph::builder()
            .task("x", Term::lit(3))
            .task("y", Term::call("add", [Term::key("x"), Term::lit(0)]))
            .task("z", Term::call("mul", [Term::key("y"), Term::lit(2)]))
            .task("w", Term::call("inc", [Term::key("z")]))
            .build()
            .unwrap();
        let mut out = Vec::new();
        let rewritten = rewrite_step(&mut out, &graph).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Rewrite rules, applied bottom-up to every task:
  identity(?x) -> ?x
  add(?x, 0) -> ?x
  mul(?x, 2) -> add(?x, ?x)
  y: add(x, 0) -> x
  z: mul(y, 2) -> add(y, y)
  2 of 4 tasks changed (2 rewrites)
"
        );
        assert_eq!(rewritten.len(), 4);
        rewritten.topology().unwrap();
    }

    #[test]
    fn rewrite_step_on_the_word_count_graph() {
        let graph = generate::word_count();
        let mut out = Vec::new();
        let rewritten = rewrite_step(&mut out, &graph).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with(
                "  print1: identity(format1) -> format1
  print2: identity(format2) -> format2
  print3: identity(format3) -> format3
  3 of 14 tasks changed (3 rewrites)
"
            ),
            "{text}"
        );
        assert_eq!(rewritten.len(), graph.len());
        rewritten.topology().unwrap();
    }

    #[test]
    fn rewrite_step_without_matches() {
        let graph = TaskGraph::builder()
            .task("x", Term::lit(3))
            .build()
            .unwrap();
        let mut out = Vec::new();
        let rewritten = rewrite_step(&mut out, &graph).unwrap();
        assert!(rewritten == graph);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("  (no task matched)\n  0 of 1 tasks changed (0 rewrites)\n"),
            "{text}"
        );
    }
}
