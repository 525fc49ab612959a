//! Several threads hold results within the order's byte profile: where the
//! tasks' sizes are known, the bytes held stay within 1.1 times the order's
//! peak bytes plus one largest result per thread, however the tasks' times
//! fall, even where a bound on the count of results would let many large
//! results pile up.

use graph_core::{TaskGraph, Term};
use graph_exec::scheduler::{OrderProfile, byte_rise};
use graph_exec::{Dynamic, LocalExecutor, OpRegistry, Request, RunOptions};

const PRODUCERS: i64 = 40;
const BLOB: u64 = 4_000_000;

/// The builtins, and `make(n)`: a string of `n` bytes, made quickly (the
/// builtin `blob` fills its bytes one by one, slowly in a debug build).
fn registry() -> OpRegistry<Dynamic> {
    let mut registry = OpRegistry::builtins();
    registry.register("make", |args: &[Dynamic]| match args {
        [Dynamic::Int(n)] => Ok(Dynamic::from("x".repeat(*n as usize).as_str())),
        _ => Err("make takes a size".into()),
    });
    registry
}

/// The bytes the executor measures of a small result (an integer).
fn item() -> u64 {
    std::mem::size_of::<Dynamic>() as u64
}

/// The bytes the executor measures of a producer's result.
fn producer() -> u64 {
    BLOB + item()
}

/// The graph's own order (each task after the ones built before it), the
/// order's peak bytes with results of their `size` (else an integer's), and
/// the bound several threads keep.
fn profile(graph: &TaskGraph, threads: usize) -> (Vec<u32>, u64, u64) {
    let topology = graph.topology().unwrap();
    let priorities: Vec<u32> = (0..graph.len() as u32).collect();
    let needed = vec![true; graph.len()];
    let sizes: Vec<u64> = graph
        .iter()
        .map(|(_, task)| task.size.unwrap_or(item()))
        .collect();
    let peak = byte_rise(topology, topology, &needed, &priorities, &sizes)[0];
    let expected: Vec<Option<u64>> = graph.iter().map(|(_, task)| task.size).collect();
    let profile = OrderProfile::new(topology, topology, &needed, &priorities, &expected, item());
    let limit = profile.held_limit(threads).bytes.unwrap().limit;
    assert_eq!(limit, peak + peak / 10 + threads as u64 * producer());
    (priorities, peak, limit)
}

/// 40 producers of 4 MB, each read by two small readers, the readers all
/// gathered by one task; built (and so ordered) with each producer's readers
/// right after it.
fn producers_and_readers() -> TaskGraph {
    let mut builder = TaskGraph::builder();
    let mut readers = Vec::new();
    for i in 0..PRODUCERS {
        builder = builder
            .task(("p", i), Term::call("make", [Term::lit(BLOB as i64)]))
            .size(producer());
        for side in ["a", "b"] {
            let key = format!("r-{side}-{i}");
            builder = builder.task(key.as_str(), Term::call("checksum", [Term::key(("p", i))]));
            readers.push(Term::key(key.as_str()));
        }
    }
    builder
        .task("all", Term::call("checksum", readers))
        .build()
        .unwrap()
}

#[test]
fn producers_read_at_once_hold_one_producer_per_thread() {
    let graph = producers_and_readers();
    let threads = 2;
    let (priorities, peak, limit) = profile(&graph, threads);
    // The order holds one producer and the small results gathered so far.
    assert_eq!(peak, producer() + 2 * PRODUCERS as u64 * item() - item());
    let options = RunOptions {
        priorities: Some(&priorities),
        ..RunOptions::default()
    };
    let free = LocalExecutor::with_threads(1)
        .run(&graph, &registry(), &Request::from("all"), &options)
        .unwrap();
    // One thread holds the order's peak, and for a moment the last
    // reader's result beside its producer.
    assert_eq!(free.stats.peak_bytes, peak + item());
    let run = LocalExecutor::with_threads(threads)
        .run(&graph, &registry(), &Request::from("all"), &options)
        .unwrap();
    assert_eq!(run.output, free.output);
    let bound = peak + threads as u64 * producer();
    assert!(
        run.stats.peak_bytes <= bound.min(limit),
        "held {} bytes, the order {peak}, the bound {bound}",
        run.stats.peak_bytes
    );
}

/// 20 producers of 4 MB, each read with a slow chain's link: the producers
/// are ready long before their readers, and the order runs each producer
/// and its link just before their reader.
fn producers_waiting_on_a_slow_chain() -> TaskGraph {
    let n = 20_i64;
    let mut builder = TaskGraph::builder();
    let mut readers = Vec::new();
    for i in 0..n {
        builder = builder
            .task(("p", i), Term::call("make", [Term::lit(BLOB as i64)]))
            .size(producer());
        let before = if i == 0 {
            Term::lit(0)
        } else {
            Term::key(("s", i - 1))
        };
        builder = builder.task(("s", i), Term::call("sleep", [before, Term::lit(0.02)]));
        builder = builder.task(
            ("r", i),
            Term::call("checksum", [Term::key(("p", i)), Term::key(("s", i))]),
        );
        readers.push(Term::key(("r", i)));
    }
    builder
        .task("all", Term::call("checksum", readers))
        .build()
        .unwrap()
}

#[test]
fn large_results_do_not_pile_up_ahead_of_a_slow_chain() {
    let graph = producers_waiting_on_a_slow_chain();
    let threads = 4;
    let (priorities, peak, limit) = profile(&graph, threads);
    // The order holds one producer at a time (with the chain's link and
    // the small results gathered so far); counting results, the bound is
    // 1.1 times the order's max pressure plus 8, room for more than a dozen
    // producers ahead of their readers while the chain sleeps.
    assert!(peak < 2 * producer());
    let options = RunOptions {
        priorities: Some(&priorities),
        ..RunOptions::default()
    };
    let run = LocalExecutor::with_threads(threads)
        .run(&graph, &registry(), &Request::from("all"), &options)
        .unwrap();
    assert!(
        run.stats.peak_bytes <= limit,
        "held {} bytes, the order {peak}, the limit {limit}",
        run.stats.peak_bytes
    );
    assert!(run.stats.peak_bytes < 7 * producer());
}
