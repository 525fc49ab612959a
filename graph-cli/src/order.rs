//! `taskgraph order FILE [--strategy auto|dask|tree|dfs|bfs|exact] [--json] [-o OUT]`: a
//! static order of a graph's tasks that keeps few results in memory.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use graph_core::Shape;
use graph_order::{
    Order, OrderConfig, Strategy, lower_bound, lower_bound_bytes, max_bytes, max_pressure,
    ranks_by_str, shape_sizes,
};
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

/// Arguments of `taskgraph order`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The graph (taskgraph-json/1, optionally gzip; `-` for standard input).
    file: PathBuf,
    /// How to order the tasks: auto (every strategy, keeping the lowest max
    /// bytes where tasks have sizes, else the lowest max pressure), dask
    /// (dask's `order`), tree (optimal on in- and out-forests, and in bytes
    /// on in-forests), dfs, bfs, greedy (the ready task that adds the least
    /// memory first), or exact (a bounded search for the optimum on graphs
    /// of up to 512 tasks).
    #[arg(long, default_value_t = Strategy::Auto, value_parser = crate::flags::strategy())]
    strategy: Strategy,
    /// Print the order as one JSON object instead of a summary.
    #[arg(long)]
    json: bool,
    /// Write the JSON order to OUT instead of standard output.
    #[arg(short = 'o', value_name = "OUT")]
    out: Option<PathBuf>,
}

/// An order with the figures that judge it.
pub(crate) struct Ordered {
    pub(crate) order: Order,
    pub(crate) max_pressure: u32,
    pub(crate) lower_bound: u32,
    /// With sizes: the order's max bytes and the bound in bytes.
    pub(crate) bytes: Option<(u64, u64)>,
    pub(crate) elapsed: Duration,
}

/// Orders a graph with `strategy`: ties broken by `str(key)`, the literal
/// tasks dask's data nodes, as `dask.order` has them, and results weighed
/// by their sizes where tasks have them ([`shape_sizes`]). Every command that
/// orders a graph orders it so.
pub(crate) fn order_shape(shape: &Shape, strategy: Strategy) -> anyhow::Result<Order> {
    order_sized(shape, strategy, shape_sizes(shape).as_deref())
}

fn order_sized(shape: &Shape, strategy: Strategy, sizes: Option<&[u64]>) -> anyhow::Result<Order> {
    let ties = ranks_by_str(shape.keys());
    let config = OrderConfig {
        is_data: shape.literals(),
        sizes: sizes.unwrap_or_default(),
        ..OrderConfig::new(strategy)
    };
    Ok(graph_order::order(shape.topology(), &ties, &config)?)
}

/// [`order_shape`], timed, and measured.
pub(crate) fn order_with(shape: &Shape, strategy: Strategy) -> anyhow::Result<Ordered> {
    let sizes = shape_sizes(shape);
    let start = Instant::now();
    let order = order_sized(shape, strategy, sizes.as_deref())?;
    let elapsed = start.elapsed();
    let dag = shape.topology();
    let bytes = match &sizes {
        Some(sizes) => Some((
            max_bytes(dag, &order, sizes)?,
            lower_bound_bytes(dag, sizes)?,
        )),
        None => None,
    };
    Ok(Ordered {
        max_pressure: max_pressure(dag, &order)?,
        lower_bound: lower_bound(dag)?,
        bytes,
        order,
        elapsed,
    })
}

/// `{"order": [[KEY, PRIORITY], ...], "max_pressure": N, "lower_bound": N,
/// "max_bytes": N, "lower_bound_bytes": N, "strategy": "NAME"}`, entries in
/// run order; the bytes are 0 where no task has a size.
#[derive(Serialize)]
struct OrderReport<'a> {
    order: Sequence<'a>,
    max_pressure: u32,
    lower_bound: u32,
    max_bytes: u64,
    lower_bound_bytes: u64,
    strategy: &'a str,
}

/// Every task with its priority, in run order, streamed from the order:
/// each key written from the shape's code for it, no key made.
struct Sequence<'a> {
    shape: &'a Shape,
    order: &'a Order,
}

impl Serialize for Sequence<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let sequence = self.order.sequence();
        let mut seq = serializer.serialize_seq(Some(sequence.len()))?;
        for node in sequence {
            seq.serialize_element(&(self.shape.serializable_key(node), self.order.priority(node)))?;
        }
        seq.end()
    }
}

pub(crate) fn run(args: &Args) -> anyhow::Result<()> {
    let shape = crate::graph_file::read_shape(&args.file)?;
    let ordered = {
        let _busy = crate::busy::Busy::start("ordering");
        order_with(&shape, args.strategy)?
    };
    let name = args.strategy.name();
    let report = OrderReport {
        order: Sequence {
            shape: &shape,
            order: &ordered.order,
        },
        max_pressure: ordered.max_pressure,
        lower_bound: ordered.lower_bound,
        max_bytes: ordered.bytes.map_or(0, |(max, _)| max),
        lower_bound_bytes: ordered.bytes.map_or(0, |(_, lower)| lower),
        strategy: name,
    };
    if let Some(path) = &args.out {
        graph_core::file::write_atomically(path, |out| {
            crate::json_out::write_spaced(out, &report, 3)
        })
        .with_context(|| format!("{}: cannot write the order", path.display()))?;
    }
    let mut out = std::io::stdout().lock();
    if args.json && args.out.is_none() {
        let mut writer = BufWriter::new(&mut out);
        crate::json_out::write_spaced(&mut writer, &report, 3)?;
        writer.flush()?;
    } else if !args.json {
        write_summary(&mut out, shape.len(), &ordered, name)?;
    }
    Ok(())
}

fn write_summary(
    out: &mut impl Write,
    tasks: usize,
    ordered: &Ordered,
    name: &str,
) -> std::io::Result<()> {
    let kept = ordered.order.strategy();
    let strategy = if name == "auto" {
        format!("auto (kept {})", kept.map_or("?", Strategy::name))
    } else {
        name.to_string()
    };
    let time = format!("{:.3} ms", ordered.elapsed.as_secs_f64() * 1e3);
    let mut rows = vec![("tasks", tasks.to_string()), ("strategy", strategy)];
    if let Some((max, lower)) = ordered.bytes {
        rows.push(("max bytes", crate::flags::human_bytes(max)));
        rows.push(("lower bound", crate::flags::human_bytes(lower)));
        rows.push(("max pressure", format!("{} results", ordered.max_pressure)));
    } else {
        rows.push(("max pressure", ordered.max_pressure.to_string()));
        rows.push(("lower bound", ordered.lower_bound.to_string()));
    }
    rows.push(("time", time));
    for (label, value) in rows {
        writeln!(out, "  {label:<16}{value:>20}")?;
    }
    Ok(())
}
