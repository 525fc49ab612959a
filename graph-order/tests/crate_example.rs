//! The crate-level example of `graph-order`, run as a test and shown in the docs.

use graph_core::generate;
use graph_order::{OrderConfig, Strategy, diagnostics, lower_bound, order_graph};

fn main() -> Result<(), graph_order::Error> {
    // dask's 2-D cumulative scan, then a sum.
    let graph = generate::array_cumsum(6, 6);
    let dag = graph.topology()?;

    let auto = order_graph(&graph, &OrderConfig::default())?;
    let dask = order_graph(&graph, &OrderConfig::new(Strategy::Dask))?;
    let auto_pressure = diagnostics(dag, &auto)?.max_pressure;
    let dask_pressure = diagnostics(dag, &dask)?.max_pressure;

    // Auto keeps the best of its candidates, so it never holds more than dask.
    assert!(auto_pressure <= dask_pressure);
    assert!(lower_bound(dag)? <= auto_pressure);
    Ok(())
}
