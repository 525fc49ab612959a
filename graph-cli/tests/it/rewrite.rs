//! `taskgraph rewrite`: rules from a file applied to every task, the graph
//! written back, and errors that say which rule is wrong.

use crate::common::{scratch, taskgraph};
use graph_core::{Key, json};

const GRAPH: &str = r#"{"format": "taskgraph-json/1", "tasks": [
    {"key": "x", "task": 3},
    {"key": "y", "task": {"call": "add", "args": [{"ref": "x"}, 0]}},
    {"key": "z", "task": {"call": "mul", "args": [{"ref": "y"}, 2]}}]}"#;

const RULES: &str = r#"{"rules": [
    {"lhs": {"call": "add", "args": [{"var": "a"}, 0]}, "rhs": {"var": "a"}},
    {"lhs": {"call": "mul", "args": [{"var": "a"}, 2]}, "rhs": {"call": "add", "args": [{"var": "a"}, {"var": "a"}]}}]}"#;

#[test]
fn rewrites_and_writes_the_graph() {
    let dir = scratch("rewrite");
    let (graph, rules, out) = (
        dir.join("g.json"),
        dir.join("rules.json"),
        dir.join("out.json"),
    );
    std::fs::write(&graph, GRAPH).unwrap();
    std::fs::write(&rules, RULES).unwrap();
    let run = taskgraph(
        &[
            "rewrite",
            graph.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("2 of 3 tasks changed"),
        "{}",
        run.stdout
    );
    let rewritten = json::read_path(&out).unwrap();
    let term = |k: &str| {
        rewritten
            .get(&Key::from(k))
            .unwrap()
            .body
            .term()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (term("y"), term("z")),
        ("x".to_owned(), "add(y, y)".to_owned())
    );
    // And it still runs: z = 3 + 3.
    let run = taskgraph(&["run", out.to_str().unwrap(), "--json"], b"");
    assert!(run.stdout.contains("[\"z\",6]"), "{}", run.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_rule_is_named() {
    let dir = scratch("rewrite-bad");
    let (graph, rules) = (dir.join("g.json"), dir.join("rules.json"));
    std::fs::write(&graph, GRAPH).unwrap();
    std::fs::write(
        &rules,
        r#"{"rules": [{"lhs": {"call": "f", "args": []}, "rhs": {"var": "nope"}}]}"#,
    )
    .unwrap();
    let run = taskgraph(
        &[
            "rewrite",
            graph.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
            "-o",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("nope"),
        "{}",
        run.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
