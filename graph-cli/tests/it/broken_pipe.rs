//! A reader that stops early (`taskgraph ... | head`) ends every command
//! quietly, with status 0, whatever it was writing: a table, JSON, a graph.

use std::io::Read;
use std::process::{Command, Stdio};

use graph_core::{generate, json};

#[test]
fn every_command_ends_quietly_when_its_reader_stops() {
    let dir = std::env::temp_dir().join(format!("taskgraph-cli-pipe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let graph = dir.join("graph.json");
    // Big enough that every output overflows a pipe's buffer.
    json::write_path(&generate::random_dag(20_000, 1), &graph).unwrap();
    let rules = dir.join("rules.json");
    std::fs::write(&rules, r#"{"rules": []}"#).unwrap();
    let (graph, rules) = (graph.to_str().unwrap(), rules.to_str().unwrap());
    let commands: [&[&str]; 9] = [
        &["order", graph, "--json"],
        &["optimize", graph, "-o", "-"],
        &["rewrite", graph, "--rules", rules, "-o", "-"],
        &["generate", "random", "--tasks", "20000", "-o", "-"],
        &["run", graph, "--json"],
        &["assign", graph, "--workers", "4", "--json"],
        &["viz", graph, "--collapse", "-o", "-"],
        &["stats", graph, "--json"],
        &["demo"],
    ];
    for args in commands {
        let mut child = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read a little, then close the pipe.
        let mut start = [0_u8; 16];
        let _ = child.stdout.take().unwrap().read(&mut start);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
