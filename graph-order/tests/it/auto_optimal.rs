//! `Auto` reaches the optimum wherever the exact search proves one: on every
//! graph of dask's tests and workloads (`tests/data/dask`) and on seeded
//! graphs of every generator shape at 50 to 300 tasks, the optimum that the
//! search proves within a generous budget (twice `Exhaustive`'s, twenty times
//! `Auto`'s) equals `Auto`'s max pressure. Run with `--nocapture` for
//! the table and the number of optima proven.

use crate::common::Case;
use graph_core::generate::Shape;
use graph_order::internals::exact_search;
use graph_order::{Strategy, ranks_by_str};

/// The test's budget, in tasks run by the search.
const BUDGET: u64 = 2_000_000;

/// Every graph of `tests/data/dask`, by file name, then the generated ones.
fn graphs() -> Vec<(String, Case)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/dask");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("the dask graphs")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    let mut res: Vec<(String, Case)> = files
        .iter()
        .map(|path| {
            let name = path.file_stem().expect("a file name").to_string_lossy();
            let text = std::fs::read_to_string(path).expect("a readable graph");
            (format!("dask {name}"), Case::parse(&text))
        })
        .collect();
    for shape in Shape::ALL {
        for (seed, tasks) in (1..).zip([50, 100, 150, 200, 250, 300]) {
            let graph = shape.generate(tasks, seed);
            res.push((format!("{} {tasks}", shape.name()), Case::from_graph(graph)));
        }
    }
    res
}

#[test]
fn auto_reaches_every_proven_optimum() {
    let graphs = graphs();
    let (mut proven, mut missed) = (0, Vec::new());
    for (name, case) in &graphs {
        let auto = case.auto().max_pressure();
        let dask = case.order(Strategy::Dask).max_pressure();
        let bound = case.lower_bound();
        let ranks = ranks_by_str(case.graph.keys());
        let found = exact_search(case.topology(), &ranks, &case.is_data, BUDGET).expect("acyclic");
        // The same search as `Auto`'s, only longer.
        assert!(found.max_pressure <= auto, "{name}: search above auto");
        let optimum = found.proven.then_some(found.max_pressure);
        let shown = optimum.map_or("?".to_string(), |o| o.to_string());
        println!(
            "{name:>24}  tasks {:>3}  bound {bound:>2}  dask {dask:>3}  auto {auto:>2}  \
             search {:>2}  optimum {shown:>2}",
            case.graph.len(),
            found.max_pressure,
        );
        if let Some(optimum) = optimum {
            proven += 1;
            if optimum != auto {
                missed.push(format!("{name}: auto {auto}, optimum {optimum}"));
            }
        }
    }
    println!(
        "optimum proven on {proven} of {} graphs; auto misses it on {}",
        graphs.len(),
        missed.len()
    );
    assert!(missed.is_empty(), "{missed:#?}");
}
