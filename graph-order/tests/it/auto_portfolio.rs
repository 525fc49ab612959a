//! `Auto`'s portfolio runs its candidates in parallel and stops early when
//! one meets the lower bound, yet its choice never depends on timing: the
//! same order on one thread as on several, the full run's choice below
//! 2^16 tasks, and from there up the full run's max pressure, with the
//! first of `TreeOptimal`, `DepthFirst`, `BreadthFirst` that meets the bound
//! kept over `Dask`.

use graph_core::Topology;
use graph_core::generate::Shape;
use graph_order::{Order, OrderConfig, Strategy, lower_bound, max_pressure, order};

/// Above the size where an early stop may cancel `Dask`.
const LARGE: usize = 70_000;

const CANDIDATES: [Strategy; 4] = [
    Strategy::Dask,
    Strategy::TreeOptimal,
    Strategy::DepthFirst,
    Strategy::BreadthFirst,
];

fn auto_on(threads: usize, dag: &Topology) -> Order {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    pool.install(|| order(dag, &[], &OrderConfig::default()).expect("acyclic"))
}

fn graphs(tasks: usize) -> impl Iterator<Item = (&'static str, Topology)> {
    Shape::ALL.into_iter().map(move |shape| {
        let graph = shape.generate(tasks, 3);
        (shape.name(), graph.topology().expect("acyclic").clone())
    })
}

#[test]
fn auto_is_the_same_on_one_thread_and_on_four() {
    for tasks in [2_000, LARGE] {
        for (name, dag) in graphs(tasks) {
            let one = auto_on(1, &dag);
            for _ in 0..3 {
                assert_eq!(one, auto_on(4, &dag), "{name} {tasks}");
            }
        }
    }
}

#[test]
fn auto_keeps_the_full_runs_choice() {
    for tasks in [2_000, LARGE] {
        for (name, dag) in graphs(tasks) {
            let auto = order(&dag, &[], &OrderConfig::default()).expect("acyclic");
            if auto.strategy() == Some(Strategy::Exhaustive) {
                // The exact search only runs on small graphs.
                assert!(tasks <= 512, "{name} {tasks}");
                continue;
            }
            let runs: Vec<(Strategy, Order, u32)> = CANDIDATES
                .into_iter()
                .map(|strategy| {
                    let o = order(&dag, &[], &OrderConfig::new(strategy)).expect("acyclic");
                    let p = max_pressure(&dag, &o).expect("valid");
                    (strategy, o, p)
                })
                .collect();
            let least = runs.iter().map(|r| r.2).min().expect("four candidates");
            let bound = lower_bound(&dag).expect("acyclic");
            let full = runs.iter().find(|r| r.2 == least).expect("a least");
            let kept = if tasks >= 1 << 16 && least == bound {
                // Early stop: the first cheap candidate at the bound wins.
                runs[1..].iter().find(|r| r.2 == bound).unwrap_or(full)
            } else {
                full
            };
            assert_eq!(auto.strategy(), Some(kept.0), "{name} {tasks}");
            assert_eq!(auto.priorities(), kept.1.priorities(), "{name} {tasks}");
            assert_eq!(max_pressure(&dag, &auto).unwrap(), least, "{name} {tasks}");
        }
    }
}
