//! `taskgraph order`: the exact `--json` object, the summary, and `-o`.

mod common;

use common::{scratch, taskgraph};
use graph_core::{generate, json};

#[test]
fn json_output_is_a_valid_order() {
    let graph = generate::array_cumsum(6, 6);
    let text = json::to_string(&graph).unwrap();
    let run = taskgraph(&["order", "-", "--json"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::assert_fields(
        &run.stdout,
        &["order", "max_pressure", "lower_bound", "strategy"],
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
    assert_eq!(report["strategy"], "auto");
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
