//! `taskgraph optimize FILE [--passes ...] [--keys JSON] ... -o OUT`: dask's
//! graph optimizations on a taskgraph-json/1 file.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context as _;
use graph_core::Op;
use graph_optimize::{FuseConfig, OptimizeConfig, Pass, Report};

/// Arguments of `taskgraph optimize`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// The passes to run, in order, comma-separated: cull, inline,
    /// inline_functions, fuse_linear, fuse, stages (each partition's narrow
    /// work in a stage coalesced into one task).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cull,inline,inline_functions,fuse"
    )]
    passes: Vec<String>,
    /// The keys wanted, as a JSON array of keys (e.g. '["a", ["x", 0]]');
    /// default: the graph's leaves.
    #[arg(long)]
    keys: Option<String>,
    /// Cheap ops for inline_functions, comma-separated (e.g. len,split).
    #[arg(long, value_delimiter = ',')]
    fast_ops: Vec<String>,
    /// stages: ops whose inputs are all wide, comma-separated (the edges of
    /// complete bipartite blocks are wide in any case).
    #[arg(long, value_delimiter = ',', value_name = "OPS")]
    wide_ops: Vec<String>,
    /// fuse: the most tasks fused per level, on average (dask's ave_width).
    #[arg(long, default_value_t = 1.0, value_parser = crate::flags::non_negative)]
    ave_width: f64,
    /// fuse: the widest fused task (default: 1.5 + W * ln(W + 1)).
    #[arg(long, value_parser = crate::flags::non_negative)]
    max_width: Option<f64>,
    /// fuse: the most levels one fused task spans (default: no limit).
    #[arg(long, value_parser = crate::flags::non_negative)]
    max_height: Option<f64>,
    /// fuse: the depth below which a fusion may add input edges (default:
    /// 1.5 * W).
    #[arg(long, value_parser = crate::flags::non_negative)]
    max_depth_new_edges: Option<f64>,
    /// Keep the keys of fused tasks instead of dask's `a-b-c` names.
    #[arg(long)]
    no_rename_keys: bool,
    /// Drop the aliases renaming leaves behind for keys not wanted.
    #[arg(long)]
    drop_aliases: bool,
    /// Where to write the optimized graph (taskgraph-json/1; `.gz` for gzip).
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let config = config(args)?;
    let graph = crate::graph_file::read(&args.file)?;
    // The input is not needed afterwards: its bodies move into the pipeline.
    let (optimized, report) = {
        let _busy = crate::busy::Busy::start("optimizing");
        graph_optimize::optimize_owned(graph, &config)?
    };
    crate::graph_file::write(&optimized, &args.output)?;
    // When the graph goes to standard output, the report goes to standard
    // error, so that the output stays one graph that the next command reads.
    if args.output == std::path::Path::new("-") {
        write_report(&mut std::io::stderr().lock(), &report)?;
    } else {
        write_report(&mut std::io::stdout().lock(), &report)?;
    }
    Ok(())
}

/// The pipeline the arguments ask for.
fn config(args: &Args) -> anyhow::Result<OptimizeConfig> {
    let passes = args
        .passes
        .iter()
        .map(|name| {
            Pass::from_name(name.trim()).with_context(|| {
                let names: Vec<&str> = Pass::ALL.iter().map(|pass| pass.name()).collect();
                format!("unknown pass {name:?} (passes: {})", names.join(", "))
            })
        })
        .collect::<anyhow::Result<Vec<Pass>>>()?;
    let keys = args.keys.as_deref().map(crate::keys::parse).transpose()?;
    let fuse = FuseConfig {
        ave_width: args.ave_width,
        max_width: args.max_width,
        max_height: args.max_height.unwrap_or(f64::INFINITY),
        max_depth_new_edges: args.max_depth_new_edges,
        rename_keys: !args.no_rename_keys,
        drop_aliases: args.drop_aliases,
        ..FuseConfig::default()
    };
    Ok(OptimizeConfig {
        keys,
        passes,
        fast_ops: args.fast_ops.iter().map(|op| Op::new(op.trim())).collect(),
        wide_ops: args.wide_ops.iter().map(|op| Op::new(op.trim())).collect(),
        fuse,
        ..OptimizeConfig::default()
    })
}

/// One line per pass (tasks before -> after, time), then the total.
fn write_report(out: &mut impl Write, report: &Report) -> std::io::Result<()> {
    for pass in &report.passes {
        writeln!(out, "{pass}")?;
    }
    writeln!(
        out,
        "{:<16} {:>10} -> {:<10} {:>10.3} ms",
        "total",
        report.tasks_before,
        report.tasks_after,
        report.total.as_secs_f64() * 1e3
    )
}
