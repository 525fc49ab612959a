//! `taskgraph stats FILE [--json]`.

use std::io::Write;
use std::path::PathBuf;

use graph_core::GraphStats;

/// Arguments of `taskgraph stats`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let shape = crate::graph_file::read_shape(&args.file)?;
    let stats = GraphStats::of(shape.topology());
    let mut out = std::io::stdout().lock();
    if args.json {
        crate::json_out::write_compact(&mut out, &stats)?;
    } else {
        write_table(&mut out, &stats)?;
    }
    Ok(())
}

/// Writes the stats as an aligned two-column table.
pub(crate) fn write_table(out: &mut impl Write, stats: &GraphStats) -> std::io::Result<()> {
    let rows = [
        ("tasks", stats.tasks),
        ("edges", stats.edges),
        ("roots", stats.roots),
        ("leaves", stats.leaves),
        ("depth", stats.depth),
        ("max in-degree", stats.max_in_degree),
        ("max out-degree", stats.max_out_degree),
    ];
    for (name, value) in rows {
        writeln!(out, "  {name:<16}{value:>12}")?;
    }
    Ok(())
}
