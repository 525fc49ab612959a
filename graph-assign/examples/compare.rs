//! Writes the generator shapes of the METIS comparison as taskgraph-json/1
//! files and prints, for each and for k = 4, 8, 16, the metrics of `assign`,
//! `assign_mars` and `assign_greedy` as JSON lines.
//!
//! `cargo run --release -p graph-assign --example compare -- OUT_DIR [TASKS [SEED]] [--ours-only] [--no-write]`
//!
//! The shapes are `graph_core::generate::Shape::ALL`, generated with SEED
//! (0 by default; only the random DAG uses it) and written to `OUT_DIR/SHAPE.json`, so `scripts/metis_compare.py` reads
//! the very graphs measured here. `--ours-only` skips the baselines and
//! `--no-write` the files (for quick runs on large graphs).

use std::path::PathBuf;

use graph_assign::{Metrics, Workers, assign, assign_greedy, assign_mars};
use graph_core::generate::Shape;
use graph_core::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let ours_only = args.iter().any(|a| a == "--ours-only");
    let write = !args.iter().any(|a| a == "--no-write");
    let mut positional = args.iter().filter(|a| !a.starts_with("--"));
    let out = PathBuf::from(
        positional
            .next()
            .ok_or("usage: compare OUT_DIR [TASKS [SEED]] [--ours-only] [--no-write]")?,
    );
    let tasks: usize = positional.next().map_or(Ok(10_000), |t| t.parse())?;
    let seed: u64 = positional.next().map_or(Ok(0), |t| t.parse())?;
    std::fs::create_dir_all(&out)?;
    for shape in Shape::ALL {
        let graph = shape.generate(tasks, seed);
        let path = out.join(format!("{}.json", shape.name()));
        if write {
            json::write_path(&graph, &path)?;
        }
        let dag = graph.topology()?;
        for k in [4, 8, 16] {
            let workers = Workers::new(k)?;
            let start = std::time::Instant::now();
            let ours = assign(dag, &workers, None, None)?;
            let seconds = start.elapsed().as_secs_f64();
            let mut runs = vec![("assign", ours)];
            if !ours_only {
                runs.push(("assign_mars", assign_mars(dag, &workers).unwrap()));
                runs.push(("assign_greedy", assign_greedy(dag, &workers, None, None)?));
            }
            for (strategy, assignment) in runs {
                let metrics = Metrics::of(dag, &workers, &assignment, None, None)?;
                let line = serde_json::json!({
                    "file": path.display().to_string(),
                    "shape": shape.name(),
                    "tasks": graph.len(),
                    "k": k,
                    "strategy": strategy,
                    "edge_cut": metrics.edge_cut,
                    "imbalance": metrics.imbalance,
                    "assign_seconds": (strategy == "assign").then_some(seconds),
                });
                #[allow(clippy::print_stdout)]
                {
                    println!("{line}");
                }
            }
        }
    }
    Ok(())
}
