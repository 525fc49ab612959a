//! `taskgraph order`: the exact `--json` object, the summary, and `-o`.

use crate::common;
use crate::common::{scratch, taskgraph};
use graph_core::{generate, json};

#[test]
fn json_output_is_a_valid_order() {
    let graph = generate::array_cumsum(6, 6);
    let text = json::to_string(&graph).unwrap();
    let run = taskgraph(&["order", "-", "--json"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::assert_fields(
        &run.stdout,
        &[
            "order",
            "max_pressure",
            "lower_bound",
            "max_bytes",
            "lower_bound_bytes",
            "strategy",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let order = report["order"].as_array().unwrap();
    assert_eq!(order.len(), graph.len());
    let mut priorities: Vec<u64> = order.iter().map(|pair| pair[1].as_u64().unwrap()).collect();
    priorities.sort_unstable();
    assert_eq!(
        priorities,
        (0..graph.len() as u64).collect::<Vec<_>>(),
        "a permutation"
    );
    assert!(report["lower_bound"].as_u64() <= report["max_pressure"].as_u64());
    // No task has a size: no bytes.
    assert_eq!(
        (
            report["max_bytes"].as_u64(),
            report["lower_bound_bytes"].as_u64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(report["strategy"], "auto");
}

const PRODUCER: u64 = 4_000_000;

/// Where tasks have sizes, the order holds bytes, not results: one producer
/// at a time (and its small readers), and runs on one or two threads hold
/// at most that plus a producer per thread.
#[test]
fn sizes_order_and_run_in_bytes() {
    let text = json::to_string(&generate::shared_producers(40, 2, PRODUCER)).unwrap();
    let run = taskgraph(&["order", "-", "--json"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let max_bytes = report["max_bytes"].as_u64().unwrap();
    let lower = report["lower_bound_bytes"].as_u64().unwrap();
    assert!(max_bytes <= 2 * PRODUCER + 80 * 8, "{max_bytes}");
    assert!(PRODUCER <= lower && lower <= max_bytes, "{lower}");
    let summary = taskgraph(&["order", "-"], text.as_bytes());
    assert!(summary.stdout.contains("max bytes"), "{}", summary.stdout);
    // `taskgraph generate producers` writes the same graph.
    let generated = taskgraph(&["generate", "producers", "--tasks", "120", "-o", "-"], b"");
    assert_eq!(generated.code, Some(0), "{}", generated.stderr);
    assert_eq!(generated.stdout, text);
    for threads in ["1", "2"] {
        let run = taskgraph(
            &["run", "-", "--threads", threads, "--json"],
            text.as_bytes(),
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let stats: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        let peak = stats["peak_bytes"].as_u64().unwrap();
        let per_thread: u64 = threads.parse().unwrap();
        assert!(
            peak <= max_bytes + per_thread * PRODUCER,
            "{threads} threads: {peak}"
        );
    }
}

#[test]
fn summary_and_output_file() {
    let dir = scratch("order");
    let text = json::to_string(&generate::tree(64, 4)).unwrap();
    let out = dir.join("order.json");
    let run = taskgraph(
        &[
            "order",
            "-",
            "--strategy",
            "tree",
            "-o",
            out.to_str().unwrap(),
        ],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("max pressure"), "{}", run.stdout);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(written["strategy"], "tree");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The order of `text` by `taskgraph order --strategy dask`, as priorities
/// by key.
fn dask_order_of(text: &str) -> Vec<(graph_core::Key, u32)> {
    let run = taskgraph(
        &["order", "-", "--strategy", "dask", "--json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    serde_json::from_value(report["order"].clone()).unwrap()
}

/// dask sets its data nodes (values that are not tasks) apart before
/// ordering: a literal task is one. dask's `test_prefer_short_ancestor`, its
/// shared roots `'ab'` and `('c', 0)` literals, orders as graph-order does
/// with them marked data (and as dask's test asserts), which is not how it
/// orders with them tasks.
#[test]
fn literal_tasks_are_dask_data_nodes() {
    use graph_core::{Key, TaskGraph, Term};
    use graph_order::{OrderConfig, Strategy, order, ranks_by_str};

    let key = |name: &str, i: i64| Key::from((name, i));
    let call = |deps: &[Key]| Term::call("f", deps.iter().cloned().map(Term::Ref));
    let ab = Key::from("ab");
    let on_ab = || call(std::slice::from_ref(&ab));
    let graph = TaskGraph::builder()
        .task(ab.clone(), Term::lit("data"))
        .task(key("a", 0), on_ab())
        .task(key("b", 0), on_ab())
        .task(key("c", 0), Term::lit(0))
        .task(key("c", 1), call(&[key("c", 0), key("a", 0), key("b", 0)]))
        .task(key("a", 1), on_ab())
        .task(key("b", 1), on_ab())
        .task(key("c", 2), call(&[key("c", 1), key("a", 1), key("b", 1)]))
        .build()
        .unwrap();
    let by_graph_order = |is_data: &[bool]| -> Vec<(Key, u32)> {
        let config = OrderConfig {
            is_data,
            ..OrderConfig::new(Strategy::Dask)
        };
        let o = order(
            graph.topology().unwrap(),
            &ranks_by_str(graph.keys()),
            &config,
        )
        .unwrap();
        let mut pairs: Vec<(Key, u32)> = graph
            .keys()
            .cloned()
            .zip(o.priorities().iter().copied())
            .collect();
        pairs.sort_by_key(|&(_, priority)| priority);
        pairs
    };
    let data: Vec<bool> = graph
        .keys()
        .map(|k| *k == ab || *k == key("c", 0))
        .collect();
    let as_data = by_graph_order(&data);
    assert_ne!(
        as_data,
        by_graph_order(&[]),
        "the case tells data from tasks"
    );
    let cli = dask_order_of(&json::to_string(&graph).unwrap());
    assert_eq!(cli, as_data);
    // dask's own assertions.
    let o = |k: Key| cli.iter().find(|(key, _)| *key == k).unwrap().1;
    assert!(o(key("a", 0)) < o(key("a", 1)));
    assert!(o(key("b", 0)) < o(key("b", 1)));
    assert!(o(key("b", 0)) < o(key("c", 2)));
    assert!(o(key("c", 1)) < o(key("c", 2)));
    assert!(o(key("c", 1)) < o(key("a", 1)));
}
