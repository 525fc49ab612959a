//! `taskgraph viz`: DOT coloured by order or worker, rendering through
//! Graphviz, a clear error without it, and a refusal for huge graphs.

mod common;

use std::process::{Command, Stdio};

use common::{scratch, taskgraph};
use graph_core::{generate, json};

fn tree_text() -> String {
    json::to_string(&generate::tree(16, 4)).unwrap()
}

#[test]
fn dot_by_order_and_by_worker() {
    let run = taskgraph(&["viz", "-"], tree_text().as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with("digraph taskgraph {\n  rankdir=BT;"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.matches(" -> ").count(),
        20,
        "one edge per dependency"
    );
    assert!(run.stdout.contains("label=\"leaf (0)\\n"), "{}", run.stdout);
    // The first task is dark red.
    assert!(
        run.stdout.contains("\\n0\", fillcolor=\"#8b0000\""),
        "{}",
        run.stdout
    );

    let run = taskgraph(
        &["viz", "-", "--color", "worker", "--workers", "2"],
        tree_text().as_bytes(),
    );
    assert!(run.stdout.contains("worker 1"), "{}", run.stdout);
    assert!(
        run.stdout.contains("style=dashed"),
        "a tree on two workers has a cut edge"
    );
}

#[test]
fn too_large_graphs_are_refused() {
    let run = taskgraph(&["viz", "-", "--max-tasks", "10"], tree_text().as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("more than --max-tasks 10"),
        "{}",
        run.stderr
    );
}

#[test]
fn svg_renders_through_graphviz_or_says_to_install_it() {
    let dir = scratch("viz");
    let svg = dir.join("tree.svg");
    let has_dot = Command::new("dot")
        .arg("-V")
        .stderr(Stdio::null())
        .status()
        .is_ok();
    let run = taskgraph(
        &["viz", "-", "-o", svg.to_str().unwrap()],
        tree_text().as_bytes(),
    );
    if has_dot {
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    } else {
        assert!(run.stderr.contains("install Graphviz"), "{}", run.stderr);
    }
    // Without `dot` on the PATH, the error says what to do.
    let output = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
        .args(["viz", "-", "-o", svg.to_str().unwrap()])
        .env("PATH", "")
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child
                .stdin
                .take()
                .unwrap()
                .write_all(tree_text().as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("install Graphviz") && stderr.contains("write a .dot file"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
