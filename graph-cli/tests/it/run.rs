//! `taskgraph run`: results for the requested keys (default: the leaves), the
//! exact `--json` line, and errors that name the task.

use crate::common;
use crate::common::taskgraph;
use graph_core::{generate, json};

const TWO_TASKS: &str = r#"{"format": "taskgraph-json/1", "tasks": [
    {"key": "a", "task": 2},
    {"key": ["b", 1], "task": {"call": "mul", "args": [{"ref": "a"}, 21]}}]}"#;

#[test]
fn json_output_has_the_results_and_counters() {
    let run = taskgraph(
        &["run", "-", "--json", "--threads", "2"],
        TWO_TASKS.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    common::assert_fields(
        &run.stdout,
        &[
            "results",
            "tasks_run",
            "peak_held",
            "seconds",
            "peak_bytes",
            "spilled_bytes",
        ],
    );
    assert_eq!(report["results"], serde_json::json!([[["b", 1], 42]]));
    assert_eq!(report["tasks_run"], 2);
    assert_eq!(report["peak_held"], 1);
    assert!(report["seconds"].as_f64().unwrap() >= 0.0);
}

#[test]
fn keys_choose_what_runs() {
    let run = taskgraph(
        &["run", "-", "--keys", r#"["a", ["b", 1]]"#],
        TWO_TASKS.as_bytes(),
    );
    assert_eq!(
        run.stdout.lines().take(2).collect::<Vec<_>>(),
        ["'a' = 2", "('b', 1) = 42"]
    );
    let run = taskgraph(&["run", "-", "--keys", r#"["zz"]"#], TWO_TASKS.as_bytes());
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (Some(2), "error: --keys: key 'zz' is not in the graph\n")
    );
    let run = taskgraph(&["run", "-", "--keys", "a"], TWO_TASKS.as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .starts_with("error: --keys: expected a JSON array of keys"),
        "{}",
        run.stderr
    );
}

#[test]
fn runs_a_generated_graph_like_the_library() {
    let graph = generate::tree(10_000, 8);
    let text = json::to_string(&graph).unwrap();
    let run = taskgraph(&["run", "-", "--json"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    // The leaves' sum is 0 + 1 + ... + 9999.
    assert_eq!(report["results"][0][1], 49_995_000);
    assert_eq!(report["tasks_run"], graph.len());
}

/// With several threads (and the default memory limit), the results held
/// stay within 1.1 times the max pressure of the order `taskgraph order`
/// prints, plus 8, plus one per thread.
#[test]
fn many_threads_hold_within_the_orders_bound() {
    for shape in ["random", "shuffle", "tree"] {
        let graph = generate::Shape::ALL
            .into_iter()
            .find(|s| s.name() == shape)
            .unwrap()
            .generate(20_000, 3);
        let text = json::to_string(&graph).unwrap();
        let order = taskgraph(&["order", "-", "--json"], text.as_bytes());
        assert_eq!(order.code, Some(0), "{}", order.stderr);
        let order: serde_json::Value = serde_json::from_str(&order.stdout).unwrap();
        let pressure = order["max_pressure"].as_u64().unwrap();
        for threads in [2_u64, 4] {
            let run = taskgraph(
                &["run", "-", "--json", "--threads", &threads.to_string()],
                text.as_bytes(),
            );
            assert_eq!(run.code, Some(0), "{}", run.stderr);
            let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
            let held = report["peak_held"].as_u64().unwrap();
            let bound = pressure + pressure / 10 + 8 + threads;
            assert!(
                held <= bound,
                "{shape} on {threads} threads held {held}, the bound {bound}"
            );
        }
    }
}

#[test]
fn failures_and_missing_ops_are_errors() {
    let failing = r#"{"format": "taskgraph-json/1", "tasks": [
        {"key": "x", "task": {"call": "div", "args": [1, 0]}}]}"#;
    let run = taskgraph(&["run", "-"], failing.as_bytes());
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            Some(2),
            "error: task 'x' failed in op `div`: division by zero\n"
        )
    );
    let unknown = r#"{"format": "taskgraph-json/1", "tasks": [
        {"key": "x", "task": {"call": "teleport", "args": []}}]}"#;
    let run = taskgraph(&["run", "-"], unknown.as_bytes());
    assert_eq!(
        run.stderr,
        "error: unknown ops: `teleport` (called by task 'x')\n"
    );
}
