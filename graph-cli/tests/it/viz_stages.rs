//! `taskgraph viz --color stage` and `--collapse --group stage`: tasks
//! coloured by the stage `taskgraph stages` plans, wide edges thick, a
//! legend of stages; one box per stage with the edges between stages.

use crate::common::taskgraph;
use crate::viz_common::{attribute, box_labels, edges};
use graph_core::{generate, json};

fn viz(graph: &graph_core::TaskGraph, args: &[&str]) -> String {
    let text = json::to_string(graph).unwrap();
    let mut all = vec!["viz", "-"];
    all.extend_from_slice(args);
    let run = taskgraph(&all, text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run.stdout
}

#[test]
fn tasks_coloured_by_stage_with_wide_edges_thick() {
    let dot = viz(&generate::map_shuffle_map(4, 2), &["--color", "stage"]);
    let fills: Vec<String> = dot
        .lines()
        .filter(|line| line.trim_start().starts_with('n') && line.contains("fillcolor"))
        .map(|line| attribute(line, "fillcolor").unwrap())
        .collect();
    assert_eq!(fills.len(), 12);
    // Reads and maps (stage 0) in the first colour, reducers and outputs in
    // the second.
    let first = fills[0].clone();
    assert_eq!(
        fills.iter().filter(|&f| *f == first).count(),
        8,
        "{fills:?}"
    );
    // The 8 edges of the shuffle are thick, the 6 narrow ones are not.
    let thick = dot
        .lines()
        .filter(|line| line.contains("->") && line.contains("penwidth=3"))
        .count();
    assert_eq!(thick, 8, "{dot}");
    assert_eq!(edges(&dot).len(), 14);
    // The legend: a swatch per stage and the count of wide edges.
    assert!(dot.contains("<B>stage</B>"), "{dot}");
    assert!(
        dot.contains(">0</FONT>") && dot.contains(">1</FONT>"),
        "{dot}"
    );
    assert!(dot.contains("2 stages · thick edges are wide (8)"), "{dot}");
}

#[test]
fn collapsed_to_one_box_per_stage() {
    let dot = viz(
        &generate::map_shuffle_map(4, 2),
        &["--collapse", "--group", "stage", "--color", "stage"],
    );
    let labels = box_labels(&dot);
    let names: Vec<&str> = labels.iter().map(|lines| lines[0].as_str()).collect();
    assert_eq!(names, ["stage 0", "stage 1"]);
    assert_eq!(labels[0][1], "8 tasks");
    assert_eq!(labels[1][1], "4 tasks");
    // One edge between the stages, standing for the 8 edges of the shuffle.
    let between = edges(&dot);
    assert_eq!(between.len(), 1, "{dot}");
    assert_eq!(between[0].0, 0);
    assert_eq!(between[0].1, 1);
    assert_eq!(between[0].2.as_deref().map(str::trim), Some("8"));
    // Named wide ops split a dask-style shuffle too.
    let dot = viz(
        &generate::shuffle_split(3, 2),
        &["--collapse", "--group", "stage", "--wide-ops", "sum"],
    );
    assert_eq!(box_labels(&dot).len(), 2);
}

#[test]
fn group_needs_collapse() {
    let text = json::to_string(&generate::chain(3)).unwrap();
    let run = taskgraph(&["viz", "-", "--group", "stage"], text.as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--collapse"), "{}", run.stderr);
}
