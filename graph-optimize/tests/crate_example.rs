//! The crate-level example: optimize dask's word-count graph as its
//! optimization docs do. Run without the test harness, so `main` is the test.

use graph_core::{Key, Op, generate};
use graph_optimize::{OptimizeConfig, cull, fuse, inline, inline_functions, optimize};

fn main() -> Result<(), graph_optimize::Error> {
    let graph = generate::word_count();
    let outputs = [Key::from("print1"), Key::from("print2")];

    // One pass at a time, each taking the graph the one before returned
    // (which holds its references, so no key is hashed again).
    let culled = cull(&graph, &outputs)?;
    let inlined = inline(&culled, &[], true)?;
    let fast = [Op::new("len"), Op::new("split")];
    let cheap = inline_functions(&inlined, &outputs, &fast)?;
    let fused = fuse(&cheap, &Default::default())?;
    assert!(fused.len() < graph.len());

    // Or all at once, with a report.
    let config = OptimizeConfig {
        keys: Some(outputs.to_vec()),
        fast_ops: fast.to_vec(),
        ..OptimizeConfig::default()
    };
    let (optimized, report) = optimize(&graph, &config)?;
    assert_eq!(report.tasks_before, graph.len());
    assert_eq!(report.tasks_after, optimized.len());
    Ok(())
}
