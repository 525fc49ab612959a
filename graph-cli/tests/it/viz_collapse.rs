//! `taskgraph viz --collapse`: a large graph drawn as its groups of tasks,
//! grouped by key name (the first element of a tuple key, a string key
//! without its trailing `-<hash>` and index), one box per group with its task
//! count and order positions, and edges weighted by their task edges.

use crate::common;
use std::collections::BTreeMap;

use crate::common::taskgraph;
use crate::viz_common::{box_labels, edges};
use graph_core::generate::Shape;
use graph_core::{Dag, Key, json};

/// `12,345` as `12345`.
fn parse(text: &str) -> u64 {
    text.trim().replace(',', "").parse().unwrap()
}

#[test]
fn a_dask_array_graph_of_100_000_tasks_collapses_to_a_few_boxes() {
    let graph = Shape::ArrayOverlap.generate(100_000, 0);
    let n = graph.len();
    assert!(n >= 100_000, "{n}");
    // The groups and their edges, counted here the plain way.
    let name = |key: &Key| key.name().unwrap().to_owned();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for key in graph.keys() {
        *counts.entry(name(key)).or_default() += 1;
    }
    let topology = graph.topology().unwrap();
    let mut between: BTreeMap<(String, String), u64> = BTreeMap::new();
    for node in topology.node_ids() {
        for &dep in topology.dependencies(node) {
            let (from, to) = (name(graph.key(dep)), name(graph.key(node)));
            if from != to {
                *between.entry((from, to)).or_default() += 1;
            }
        }
    }

    let run = taskgraph(
        &["viz", "-", "--collapse"],
        json::to_string(&graph).unwrap().as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let labels = box_labels(&run.stdout);
    assert!(labels.len() <= 30, "{} boxes", labels.len());
    let drawn: BTreeMap<String, u64> = labels
        .iter()
        .map(|lines| {
            let count = lines[1].strip_suffix(" tasks").unwrap();
            (lines[0].clone(), parse(count))
        })
        .collect();
    assert_eq!(drawn, counts);
    assert_eq!(drawn.values().sum::<u64>(), n as u64);
    // Each box gives its range of order positions and their mean, within 0..n.
    for lines in &labels {
        let (range, mean) = lines[2].split_once(" · mean ").unwrap();
        let (low, high) = range.trim_start_matches('#').split_once('–').unwrap();
        let (low, high, mean) = (parse(low), parse(high), parse(mean));
        assert!(low <= mean && mean <= high && high < n as u64, "{lines:?}");
    }
    // One edge per pair of groups, labelled with its task edges.
    let drawn_edges: BTreeMap<(String, String), u64> = edges(&run.stdout)
        .into_iter()
        .map(|(from, to, label)| {
            (
                (labels[from][0].clone(), labels[to][0].clone()),
                parse(&label.unwrap()),
            )
        })
        .collect();
    assert_eq!(drawn_edges, between);
}

#[test]
fn dask_names_lose_their_hashes() {
    let h1 = "61aa7725b0ea3cd3a3cfb7e3eb5c1d04";
    let h2 = "0b0e6e0b9f3a4b2c8d1e5f6a7b8c9d0e";
    let h3 = "d8e1b0f2a3c4d5e6f7a8b9c0d1e2f3a4";
    let text = format!(
        r#"{{"format": "taskgraph-json/1", "tasks": [
          {{"key": ["overlap-getitem-{h1}", 0, 0], "deps": []}},
          {{"key": ["overlap-getitem-{h1}", 0, 1], "deps": []}},
          {{"key": ["add-{h2}", 0], "deps": [["overlap-getitem-{h1}", 0, 0]]}},
          {{"key": ["add-{h2}", 1], "deps": [["overlap-getitem-{h1}", 0, 1]]}},
          {{"key": ["add-{h3}", 0], "deps": [["add-{h2}", 0], ["add-{h2}", 1]]}},
          {{"key": "store-1", "deps": [["add-{h3}", 0]]}},
          {{"key": "store-2", "deps": [["add-{h3}", 0]]}},
          {{"key": "finalize-{h1}", "deps": ["store-1", "store-2"]}}
        ]}}"#
    );
    let run = taskgraph(&["viz", "-", "--collapse"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let labels: Vec<(String, String)> = box_labels(&run.stdout)
        .into_iter()
        .map(|lines| (lines[0].clone(), lines[1].clone()))
        .collect();
    let expected = [
        ("overlap-getitem", "2 tasks"),
        // Two layers named `add` stay apart, each with the start of its hash.
        ("add-0b0e6e", "2 tasks"),
        ("add-d8e1b0", "1 task"),
        ("store", "2 tasks"),
        ("finalize", "1 task"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(labels, expected);
    let weights: Vec<(usize, usize, u64)> = edges(&run.stdout)
        .into_iter()
        .map(|(from, to, label)| (from, to, parse(&label.unwrap())))
        .collect();
    assert_eq!(weights, [(0, 1, 2), (1, 2, 2), (2, 3, 2), (3, 4, 2)]);
}

#[test]
fn too_many_groups_are_refused() {
    let text = r#"{"format": "taskgraph-json/1", "tasks": [
      {"key": "a", "deps": []}, {"key": "b", "deps": ["a"]}, {"key": "c", "deps": ["b"]}]}"#;
    let run = taskgraph(
        &["viz", "-", "--collapse", "--max-tasks", "2"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("standard input has 3 groups of tasks, more than --max-tasks 2"),
        "{}",
        run.stderr
    );
}

#[test]
fn only_the_heaviest_edges_are_labelled() {
    // Group g{i} has i + 1 tasks, each feeding the one sink: 50 edges between
    // groups, weighing 1 to 50.
    let mut tasks = Vec::new();
    let mut sink_deps = Vec::new();
    for i in 0..50 {
        for j in 0..=i {
            tasks.push(format!(r#"{{"key": ["g{i}", {j}], "deps": []}}"#));
            sink_deps.push(format!(r#"["g{i}", {j}]"#));
        }
    }
    tasks.push(format!(
        r#"{{"key": "sink", "deps": [{}]}}"#,
        sink_deps.join(", ")
    ));
    let text = common::document(&tasks);
    let run = taskgraph(&["viz", "-", "--collapse"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let all = edges(&run.stdout);
    assert_eq!(all.len(), 50);
    let mut labelled: Vec<u64> = all
        .iter()
        .filter_map(|(_, _, label)| label.as_deref().map(parse))
        .collect();
    labelled.sort_unstable();
    assert_eq!(labelled, (11..=50).collect::<Vec<u64>>());
    assert!(run.stdout.contains("the 40 heaviest labelled"));
}
