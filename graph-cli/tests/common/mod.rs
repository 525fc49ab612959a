//! Helpers for running the `taskgraph` binary in tests.

#![allow(dead_code, unreachable_pub)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// What a run of `taskgraph` printed and how it ended.
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
}

/// A `taskgraph-json/1` document of `tasks`, each a task object's JSON.
pub fn document(tasks: &[String]) -> String {
    format!(
        r#"{{"format": "taskgraph-json/1", "tasks": [{}]}}"#,
        tasks.join(",\n")
    )
}

/// Runs `taskgraph` with `args`, feeding `stdin` to it.
pub fn taskgraph(args: &[&str], stdin: &[u8]) -> Run {
    taskgraph_in(&std::env::temp_dir(), args, stdin)
}

/// Runs `taskgraph` in directory `dir`.
pub fn taskgraph_in(dir: &std::path::Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("taskgraph starts");
    // The command may stop before reading its input (a bad option): a broken
    // pipe here is not the test's failure.
    match child.stdin.take().unwrap().write_all(stdin) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing stdin: {err}"),
        _ => {}
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
        code: status.code(),
    }
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("taskgraph-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Asserts that `json` is one object whose fields are exactly `fields`, in
/// this order (scripts may read the output as text).
pub fn assert_fields(json: &str, fields: &[&str]) {
    let report: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(report.as_object().unwrap().len(), fields.len(), "{json}");
    let mut from = 0;
    for field in fields {
        let quoted = format!("\"{field}\":");
        let at = json[from..]
            .find(&quoted)
            .unwrap_or_else(|| panic!("{quoted} after byte {from} in {json}"));
        from += at + quoted.len();
    }
}

/// `dir/graph.json`: a random graph of 300 tasks with results of 20 KB,
/// which spills under a memory limit of 700 KB.
pub fn spilling_graph(dir: &std::path::Path) -> PathBuf {
    let file = dir.join("graph.json");
    let made = taskgraph(
        &[
            "generate",
            "random",
            "--tasks",
            "300",
            "--value-bytes",
            "20KB",
            "-o",
            file.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    file
}
