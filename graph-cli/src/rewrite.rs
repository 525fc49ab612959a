//! `taskgraph rewrite FILE --rules RULES.json [--strategy bottom_up|top_level|fixpoint]
//! [--max-steps N] -o OUT`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context as _;
use graph_rewrite::RewriteStrategy;

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
    #[arg(long, value_name = "N", value_parser = crate::flags::steps)]
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
    let mut graph = crate::graph_file::read(&args.file)?;
    let read = started.elapsed();

    let started = Instant::now();
    let busy = crate::busy::Busy::start("rewriting");
    let report = graph_rewrite::par_rewrite_graph_in_place(&mut graph, &rules, strategy)
        .with_context(|| format!("rewriting {}", args.file.display()))?;
    let rewritten = started.elapsed();
    drop(busy);

    let started = Instant::now();
    crate::graph_file::write(&graph, &args.output)?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
