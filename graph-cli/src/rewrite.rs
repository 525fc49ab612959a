//! `taskgraph rewrite FILE --rules RULES.json [--strategy bottom_up|top_level|fixpoint]
//! [--max-steps N] -o OUT`, and the rewrite step of `taskgraph demo`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use graph_core::{Body, TaskGraph};
use graph_rewrite::{Pattern, RewriteReport, RewriteRule, RewriteStrategy, RuleSet};

/// Arguments of `taskgraph rewrite`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The rules: {"rules": [{"lhs": TERM, "rhs": TERM}, ...]} in the JSON
    /// term syntax, with {"var": NAME} for a variable.
    #[arg(long, value_name = "RULES.json")]
    rules: PathBuf,
    /// Where to apply the rules: bottom_up (dask's default: children first,
    /// one rewrite per node), top_level (each task's whole term only), or
    /// fixpoint (bottom-up passes until nothing matches or --max-steps).
    #[arg(long, value_enum, default_value_t = StrategyArg::BottomUp)]
    strategy: StrategyArg,
    /// The most rewrites per task with --strategy fixpoint [default: 1000].
    #[arg(long, value_name = "N")]
    max_steps: Option<usize>,
    /// Where to write the rewritten graph (`-` for standard output; a name
    /// ending in .gz is compressed).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

/// The strategies, spelled as dask spells them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StrategyArg {
    #[value(name = "bottom_up")]
    BottomUp,
    #[value(name = "top_level")]
    TopLevel,
    #[value(name = "fixpoint")]
    Fixpoint,
}

impl Args {
    fn strategy(&self) -> anyhow::Result<RewriteStrategy> {
        Ok(match (self.strategy, self.max_steps) {
            (StrategyArg::Fixpoint, max_steps) => RewriteStrategy::Fixpoint {
                max_steps: max_steps.unwrap_or(RewriteStrategy::DEFAULT_MAX_STEPS),
            },
            (_, Some(_)) => anyhow::bail!("--max-steps applies only to --strategy fixpoint"),
            (StrategyArg::BottomUp, None) => RewriteStrategy::BottomUp,
            (StrategyArg::TopLevel, None) => RewriteStrategy::TopLevel,
        })
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let strategy = args.strategy()?;
    let rules = graph_rewrite::rules_file::read_path(&args.rules)?;
    let started = Instant::now();
    let mut graph = crate::busy::read_graph(&args.file)?;
    let read = started.elapsed();

    let started = Instant::now();
    let busy = crate::busy::Busy::start("rewriting");
    let report = graph_rewrite::par_rewrite_graph_in_place(&mut graph, &rules, strategy)
        .with_context(|| format!("rewriting {}", args.file.display()))?;
    let rewritten = started.elapsed();
    drop(busy);

    let started = Instant::now();
    crate::busy::write_graph(&graph, &args.output)?;
    let written = started.elapsed();

    // The summary goes to standard error when the graph goes to standard
    // output, so that the output stays valid JSON.
    let summary = |out: &mut dyn Write| -> std::io::Result<()> {
        writeln!(
            out,
            "{} rules: {report} in {:.3} s (read {:.3} s, write {:.3} s)",
            rules.len(),
            rewritten.as_secs_f64(),
            read.as_secs_f64(),
            written.as_secs_f64(),
        )
    };
    if args.output == Path::new("-") {
        summary(&mut std::io::stderr().lock())?;
    } else {
        summary(&mut std::io::stdout().lock())?;
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

/// The rewrite step of `taskgraph demo`: applies `identity(x) -> x`,
/// `add(x, 0) -> x` and `mul(x, 2) -> add(x, x)` bottom-up to every task of
/// `graph`, writes the rules and each task that changed (`key: old -> new`),
/// and returns the rewritten graph.
pub(crate) fn demo_step(out: &mut impl Write, graph: &TaskGraph) -> anyhow::Result<TaskGraph> {
    let rules = demo_rules()?;
    writeln!(out, "Rewrite rules, applied bottom-up to every task:")?;
    for rule in rules.rules() {
        writeln!(out, "  {rule}")?;
    }
    let (rewritten, report) =
        graph_rewrite::rewrite_graph(graph, &rules, RewriteStrategy::BottomUp)?;
    write_changes(out, graph, &rewritten, &report)?;
    Ok(rewritten)
}

/// Writes each task whose body differs between `before` and `after` (same
/// keys, same order), then the report.
fn write_changes(
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

#[cfg(test)]
mod tests {
    use graph_core::Term;

    use super::*;

    #[test]
    fn demo_step_rewrites_and_reports() {
        let graph = TaskGraph::builder()
            .task("x", Term::lit(3))
            .task("y", Term::call("add", [Term::key("x"), Term::lit(0)]))
            .task("z", Term::call("mul", [Term::key("y"), Term::lit(2)]))
            .task("w", Term::call("inc", [Term::key("z")]))
            .build()
            .unwrap();
        let mut out = Vec::new();
        let rewritten = demo_step(&mut out, &graph).unwrap();
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
    fn demo_step_on_the_word_count_graph() {
        let graph = graph_core::generate::word_count();
        let mut out = Vec::new();
        let rewritten = demo_step(&mut out, &graph).unwrap();
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
    fn demo_step_without_matches() {
        let graph = TaskGraph::builder()
            .task("x", Term::lit(3))
            .build()
            .unwrap();
        let mut out = Vec::new();
        let rewritten = demo_step(&mut out, &graph).unwrap();
        assert!(rewritten == graph);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with("  (no task matched)\n  0 of 1 tasks changed (0 rewrites)\n"),
            "{text}"
        );
    }

    #[test]
    fn max_steps_needs_fixpoint() {
        let args = Args {
            file: "g.json".into(),
            rules: "r.json".into(),
            strategy: StrategyArg::BottomUp,
            max_steps: Some(3),
            output: "-".into(),
        };
        let err = args.strategy().unwrap_err();
        assert_eq!(
            err.to_string(),
            "--max-steps applies only to --strategy fixpoint"
        );
        let args = Args {
            strategy: StrategyArg::Fixpoint,
            ..args
        };
        assert_eq!(
            args.strategy().unwrap(),
            RewriteStrategy::Fixpoint { max_steps: 3 }
        );
    }
}
