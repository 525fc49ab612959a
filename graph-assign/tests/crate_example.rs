//! The crate-level example: place an `(x + x.T).sum()` graph on four workers
//! and compare with Mars. Run as a test without the harness, so `main` is the
//! test.

use graph_assign::{Metrics, Workers, assign, assign_mars, sizes_of};
use graph_core::generate;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let graph = generate::array_sum_transpose(20);
    let dag = graph.topology()?;
    let workers = Workers::new(4)?;
    let sizes = sizes_of(&graph);

    let ours = assign(dag, &workers, Some(&sizes), None)?;
    let mars = assign_mars(dag, &workers)?;
    assert_eq!(ours.len(), graph.len());

    let ours = Metrics::of(dag, &workers, &ours, Some(&sizes), None)?;
    let mars = Metrics::of(dag, &workers, &mars, Some(&sizes), None)?;
    assert!(ours.imbalance <= 1.03, "{ours:?}");
    assert!(ours.edge_cut * 3 < mars.edge_cut, "{ours:?} vs {mars:?}");
    Ok(())
}
