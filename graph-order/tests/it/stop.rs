//! `order_unless`: a `stop` that never says yes changes no order, and one
//! that says yes, at once or midway, on any strategy, in counts or in bytes,
//! ends the order with `Error::Stopped`, even if it says no again later.

use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;

use graph_core::Topology;
use graph_core::generate::Shape;
use graph_order::{Error, OrderConfig, Strategy, order, order_unless};

/// Above the size where `Auto` may cancel `Dask` on its own (an early stop
/// at the lower bound), so that both ways of stopping meet.
const LARGE: usize = 70_000;

fn graphs(tasks: usize) -> impl Iterator<Item = (&'static str, Topology)> {
    Shape::ALL.into_iter().map(move |shape| {
        let graph = shape.generate(tasks, 5);
        (shape.name(), graph.topology().expect("acyclic").clone())
    })
}

/// `producers` results of differing sizes, each read by a small task, all of
/// those gathered by one sink: `Auto` in bytes then also orders the graph
/// without its gatherer.
fn gathered(producers: usize) -> (Topology, Vec<u64>) {
    let n = 2 * producers + 1;
    let mut edges = Vec::new();
    for p in 0..producers {
        edges.push((p, producers + p));
        edges.push((producers + p, n - 1));
    }
    let mut sizes: Vec<u64> = (0..producers).map(|p| 1_000 * (p as u64 % 7 + 1)).collect();
    sizes.resize(n, 10);
    (Topology::from_edges(n, edges).expect("acyclic"), sizes)
}

/// A stop that says yes on its `at`-th call alone.
fn once_at(at: usize) -> impl Fn() -> bool + Sync {
    let calls = AtomicUsize::new(0);
    move || calls.fetch_add(1, Relaxed) + 1 == at
}

#[test]
fn a_stop_that_never_says_yes_changes_no_order() {
    for (name, dag) in graphs(2_000) {
        for strategy in Strategy::ALL {
            let config = OrderConfig::new(strategy);
            let expected = order(&dag, &[], &config).expect("acyclic");
            let got = order_unless(&dag, &[], &config, &|| false).expect("never stopped");
            assert_eq!(got, expected, "{name} {strategy}");
        }
    }
}

#[test]
fn a_stop_at_once_stops_every_strategy() {
    for (name, dag) in graphs(2_000) {
        for strategy in Strategy::ALL {
            let res = order_unless(&dag, &[], &OrderConfig::new(strategy), &|| true);
            assert!(matches!(res, Err(Error::Stopped)), "{name} {strategy}");
        }
    }
}

#[test]
fn a_stop_midway_stops_the_order_even_if_it_says_no_again() {
    for (name, dag) in graphs(LARGE) {
        for strategy in [Strategy::Auto, Strategy::Dask] {
            let config = OrderConfig::new(strategy);
            let expected = order(&dag, &[], &config).expect("acyclic");
            let calls = AtomicUsize::new(0);
            let counted = order_unless(&dag, &[], &config, &|| {
                calls.fetch_add(1, Relaxed);
                false
            });
            assert_eq!(
                counted.expect("never stopped"),
                expected,
                "{name} {strategy}"
            );
            // `Auto`'s candidates skip one another as they meet the bound,
            // so a run may ask fewer times than the one counted: asked,
            // the yes stops it; never asked, the order is the same.
            let calls = calls.into_inner();
            assert!(calls >= 2, "{name} {strategy}: asked {calls} times");
            for at in [1, 2, 3, calls / 2, calls] {
                match order_unless(&dag, &[], &config, &once_at(at)) {
                    Err(Error::Stopped) => {}
                    Ok(order) if at > 2 => assert_eq!(order, expected, "{name} {strategy} {at}"),
                    other => panic!("{name} {strategy} {at}: {other:?}"),
                }
            }
        }
    }
}

#[test]
fn a_stop_in_bytes_stops_the_order_and_its_search_without_the_gatherer() {
    let (dag, sizes) = gathered(40);
    let config = OrderConfig {
        sizes: &sizes,
        ..OrderConfig::default()
    };
    let expected = order(&dag, &[], &config).expect("acyclic");
    assert_eq!(
        order_unless(&dag, &[], &config, &|| false).expect("never stopped"),
        expected
    );
    // Every call `Auto` makes of `stop` in turn: the first, those of the
    // portfolio, of the portfolio without the gatherer, and the last; past
    // the calls made, never stopped.
    for at in 1..40 {
        match order_unless(&dag, &[], &config, &once_at(at)) {
            Err(Error::Stopped) => {}
            Ok(order) if at > 2 => assert_eq!(order, expected, "{at}"),
            other => panic!("{at}: {other:?}"),
        }
    }
}
