//! Times `assign` or `assign_mars` on a generated graph on K workers (16), in
//! release builds, reporting wall and CPU time (the CPU time is what counts
//! on a machine shared with other work).
//!
//! `cargo run --release -p graph-assign --example timing -- SHAPE [TASKS] [--mars|--auto] [K]`

use std::time::Instant;

use graph_assign::{Metrics, Workers, assign, assign_mars};
use graph_core::generate::Shape;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let shape = Shape::ALL
        .into_iter()
        .find(|s| args.first().is_some_and(|a| a == s.name()))
        .ok_or("usage: timing SHAPE [TASKS] [--mars]")?;
    let tasks: usize = args.get(1).map_or(Ok(1_000_000), |t| t.parse())?;
    let mode = args.get(2).map_or("", String::as_str);
    let k: usize = args.get(3).map_or(Ok(16), |k| k.parse())?;
    let graph = shape.generate(tasks, 0);
    let dag = graph.topology()?;
    let workers = Workers::new(k)?;
    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let assignment = if mode == "--mars" {
        assign_mars(dag, &workers).unwrap()
    } else {
        assign(dag, &workers, None, None)?
    };
    let seconds = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    let metrics = Metrics::of(dag, &workers, &assignment, None, None)?;
    #[allow(clippy::print_stdout)]
    {
        println!(
            "{} {} tasks{mode} k = {k}: {seconds:.3} s wall, {cpu:.3} s cpu, cut {}, imbalance {:.4}",
            shape.name(),
            graph.len(),
            metrics.edge_cut,
            metrics.imbalance
        );
    }
    Ok(())
}

/// This process's user plus system CPU time, from `/proc/self/stat` (Linux;
/// 0 elsewhere), at the usual 100 ticks per second.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name, which is in parentheses.
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // utime and stime are fields 14 and 15 of the line, 12 and 13 here.
    (ticks(11) + ticks(12)) / 100.0
}
