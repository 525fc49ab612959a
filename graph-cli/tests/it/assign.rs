//! `taskgraph assign`: the exact `--json` object, every task placed once, and
//! errors for impossible requests.

use crate::common;
use crate::common::taskgraph;
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
            "makespan",
            "makespan_bound",
            "assignment",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["workers"], 4);
    let (span, bound) = (
        report["makespan"].as_f64().unwrap(),
        report["makespan_bound"].as_f64().unwrap(),
    );
    assert!(bound > 0.0 && span >= bound, "{span} against {bound}");
    let assignment = report["assignment"].as_array().unwrap();
    assert_eq!(assignment.len(), graph.len());
    for (pair, key) in assignment.iter().zip(graph.keys()) {
        assert_eq!(pair[0], serde_json::to_value(key).unwrap());
        assert!(pair[1].as_u64().unwrap() < 4);
    }
    // The partitioner, by its name or its old one, keeps every load within
    // 3% of its share.
    for strategy in ["cut", "auto"] {
        let run = taskgraph(
            &[
                "assign",
                "-",
                "--workers",
                "4",
                "--json",
                "--strategy",
                strategy,
            ],
            text.as_bytes(),
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert!(graph.len() > 100);
        assert!(report["imbalance"].as_f64().unwrap() <= 1.03 + 1e-9);
    }
}

/// Tasks of the built-in `sleep` are estimated to take their seconds, and
/// the default placement keeps every worker busy where the partitioner's
/// parts would wait on each other: a random DAG whose tasks each read two
/// of the 30 before them, 50 ms each.
#[test]
fn sleeping_tasks_are_placed_for_wall_time() {
    let mut graph = graph_core::TaskGraph::new();
    let mut rng = graph_core::generate::Rng::new(1);
    for i in 0..400_i64 {
        let input = if i < 2 {
            graph_core::Term::lit(i)
        } else {
            let lowest = (i - 30).max(0);
            let mut dep =
                || graph_core::Term::key(("r", lowest + rng.below((i - lowest) as usize) as i64));
            graph_core::Term::call("add", [dep(), dep()])
        };
        let task = graph_core::Term::call("sleep", [input, graph_core::Term::lit(0.05)]);
        graph.insert(("r", i), task).unwrap();
    }
    let text = json::to_string(&graph).unwrap();
    let report = |strategy: &str| -> serde_json::Value {
        let run = taskgraph(
            &[
                "assign",
                "-",
                "--workers",
                "4",
                "--json",
                "--strategy",
                strategy,
            ],
            text.as_bytes(),
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        serde_json::from_str(&run.stdout).unwrap()
    };
    let (auto, cut) = (report("auto"), report("cut"));
    let span = |r: &serde_json::Value| r["makespan"].as_f64().unwrap();
    // 400 tasks of 50 ms (and a microsecond each) over 4 workers.
    let bound = auto["makespan_bound"].as_f64().unwrap();
    assert!((bound - 5.0).abs() < 1e-3, "{bound}");
    assert!(
        span(&auto) <= 1.2 * bound,
        "{} against {bound}",
        span(&auto)
    );
    assert!(
        span(&cut) > 1.25 * span(&auto),
        "{} and {}",
        span(&cut),
        span(&auto)
    );
    assert_eq!(report("time")["assignment"], auto["assignment"]);
    let table = taskgraph(&["assign", "-", "--workers", "4"], text.as_bytes());
    assert!(table.stdout.contains("auto (time)"), "{}", table.stdout);
    assert!(table.stdout.contains("makespan"), "{}", table.stdout);
}

/// The default placement keeps every worker busy: on independent chains,
/// whole chains to each worker, nothing cut.
#[test]
fn the_time_placement_keeps_chains_whole() {
    let mut graph = graph_core::TaskGraph::new();
    for chain in 0..8_i64 {
        for step in 0..20_i64 {
            let input = if step == 0 {
                graph_core::Term::lit(chain)
            } else {
                graph_core::Term::call("inc", [graph_core::Term::key(("c", chain, step - 1))])
            };
            graph.insert(("c", chain, step), input).unwrap();
        }
    }
    let text = json::to_string(&graph).unwrap();
    let run = taskgraph(
        &["assign", "-", "--workers", "4", "--json"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["edge_cut"], 0);
    let mut per_worker = [0; 4];
    for pair in report["assignment"].as_array().unwrap() {
        per_worker[pair[1].as_u64().unwrap() as usize] += 1;
    }
    assert_eq!(per_worker, [40; 4]);
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
