//! Writes the generator shapes of the METIS comparison as taskgraph-json/1
//! files and prints, for each and for k = 4, 8, 16, the metrics of `assign`,
//! `assign_mars` and `assign_greedy` as JSON lines.
//!
//! `cargo run --release -p graph-assign --example compare -- OUT_DIR [TASKS]`

use std::path::PathBuf;

use graph_assign::{Metrics, Workers, assign, assign_greedy, assign_mars};
use graph_core::{TaskGraph, json, testing};

fn shapes(tasks: usize) -> Vec<(&'static str, TaskGraph)> {
    let side = |per_chunk: f64| ((tasks as f64 / per_chunk).sqrt().round() as usize).max(2);
    vec![
        (
            "array_sum_transpose",
            testing::array_sum_transpose(side(4.07)),
        ),
        (
            "array_overlap",
            testing::array_overlap(side(4.07), side(4.07)),
        ),
        (
            "array_cumsum",
            testing::array_cumsum(side(7.07), side(7.07)),
        ),
        ("tree", testing::tree(tasks * 3 / 4, 4)),
        (
            "shuffle_split",
            testing::shuffle_split(side(1.0), side(1.0)),
        ),
    ]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = PathBuf::from(args.next().ok_or("usage: compare OUT_DIR [TASKS]")?);
    let tasks: usize = args.next().map_or(Ok(10_000), |t| t.parse())?;
    std::fs::create_dir_all(&out)?;
    for (name, graph) in shapes(tasks) {
        let path = out.join(format!("{name}.json"));
        json::write_path(&graph, &path)?;
        let dag = graph.topology()?;
        for k in [4, 8, 16] {
            let workers = Workers::new(k)?;
            let start = std::time::Instant::now();
            let ours = assign(dag, &workers, None, None)?;
            let seconds = start.elapsed().as_secs_f64();
            let runs = [
                ("assign", ours),
                ("assign_mars", assign_mars(dag, &workers)),
                ("assign_greedy", assign_greedy(dag, &workers, None, None)?),
            ];
            for (strategy, assignment) in runs {
                let metrics = Metrics::of(dag, &workers, &assignment, None, None)?;
                let line = serde_json::json!({
                    "file": path.display().to_string(),
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
