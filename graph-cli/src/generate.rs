//! `taskgraph generate SHAPE --tasks N [--seed S] -o OUT`: the seeded test
//! graphs of `graph_core::generate`, for benchmarks and comparisons.

use std::io::Write;
use std::path::PathBuf;

use graph_core::generate::Shape;

/// Arguments of `taskgraph generate`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The shape: chain, tree, diamonds, random, array-sum-transpose,
    /// array-overlap, array-cumsum, shuffle (dask's split and concatenate),
    /// all-to-all (N/2 mappers each read by N/2 reducers: N^2/4 edges), or
    /// producers (N/3 results of 4 MB, each read by `len` and `checksum`,
    /// all gathered by one task; every task with its `size`).
    #[arg(value_parser = parse_shape)]
    shape: Shape,
    /// About how many tasks.
    #[arg(long, default_value_t = 10_000, value_parser = crate::flags::tasks)]
    tasks: usize,
    /// The seed (used by `random`).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Make a graph for testing memory: every task but the leaves computes
    /// a value of B bytes (the built-in op `blob`), the leaves a checksum of
    /// their inputs, and every task carries `"size": B`.
    #[arg(long, value_name = "B", value_parser = crate::flags::value_bytes)]
    value_bytes: Option<u64>,
    /// Where to write the graph (`.gz` compresses; `-` is standard output).
    #[arg(short, long)]
    output: PathBuf,
}

fn parse_shape(name: &str) -> Result<Shape, String> {
    let shapes = || {
        Shape::ALL
            .into_iter()
            .chain(Shape::DENSE)
            .chain(Shape::SIZED)
    };
    shapes().find(|shape| shape.name() == name).ok_or_else(|| {
        let names: Vec<&str> = shapes().map(|shape| shape.name()).collect();
        format!(
            "unknown shape {name:?}; the shapes are {}",
            names.join(", ")
        )
    })
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let mut graph = args.shape.generate(args.tasks, args.seed);
    if let Some(bytes) = args.value_bytes {
        graph = graph_core::generate::with_value_bytes(&graph, bytes)?;
    }
    crate::graph_file::write(&graph, &args.output)?;
    if args.output.as_os_str() != "-" {
        writeln!(
            std::io::stdout(),
            "{} tasks written to {}",
            graph.len(),
            args.output.display()
        )?;
    }
    Ok(())
}
