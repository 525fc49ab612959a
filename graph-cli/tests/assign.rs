//! `taskgraph assign`: the exact `--json` object, every task placed once, and
//! errors for impossible requests.

mod common;

use common::taskgraph;
use graph_core::{generate, json};

#[test]
fn json_output_places_every_task_once() {
    let graph = generate::array_sum_transpose(6);
    let text = json::to_string(&graph).unwrap();
    let run = taskgraph(
        &["assign", "-", "--workers", "4", "--json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::assert_fields(
        &run.stdout,
        &[
            "workers",
            "edge_cut",
            "transfer_bytes",
            "imbalance",
            "assignment",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["workers"], 4);
    let assignment = report["assignment"].as_array().unwrap();
    assert_eq!(assignment.len(), graph.len());
    for (pair, key) in assignment.iter().zip(graph.keys()) {
        assert_eq!(pair[0], serde_json::to_value(key).unwrap());
        assert!(pair[1].as_u64().unwrap() < 4);
    }
    assert!(report["imbalance"].as_f64().unwrap() <= 1.03 + 1e-9 || graph.len() < 100);
}

#[test]
fn mars_strategy_and_errors() {
    let text = json::to_string(&generate::tree(64, 4)).unwrap();
    let run = taskgraph(
        &["assign", "-", "--workers", "2", "--strategy", "mars"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("edge cut"), "{}", run.stdout);
    let run = taskgraph(&["assign", "-", "--workers", "0"], text.as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}
