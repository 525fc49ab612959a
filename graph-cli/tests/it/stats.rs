//! `taskgraph stats`: the table, the exact `--json` line, every input form,
//! and one-line errors with exit status 2.

use crate::common::{scratch, taskgraph};
use graph_core::{generate, json};

#[test]
fn json_output_is_exact() {
    let text = json::to_string(&generate::word_count()).unwrap();
    let run = taskgraph(&["stats", "-", "--json"], text.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"tasks\":14,\"edges\":19,\"roots\":4,\"leaves\":3,\"depth\":4,\"max_in_degree\":3,\"max_out_degree\":4}\n"
    );
}

#[test]
fn table_output() {
    let text = json::to_string(&generate::tree(16, 4)).unwrap();
    let run = taskgraph(&["stats", "-"], text.as_bytes());
    let expected = [
        "  tasks                     21",
        "  edges                     20",
        "  roots                     16",
        "  leaves                     1",
        "  depth                      3",
        "  max in-degree              4",
        "  max out-degree             1",
    ];
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn reads_plain_and_gzip_files() {
    let dir = scratch("stats-files");
    let graph = generate::chain(50);
    for name in ["chain.json", "chain.json.gz"] {
        let path = dir.join(name);
        json::write_path(&graph, &path).unwrap();
        let run = taskgraph(&["stats", path.to_str().unwrap(), "--json"], b"");
        assert_eq!(run.code, Some(0), "{name}: {}", run.stderr);
        assert!(
            run.stdout.starts_with("{\"tasks\":50,\"edges\":49,"),
            "{name}: {}",
            run.stdout
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_are_one_line_with_status_2() {
    let cases: [(&[u8], &str); 4] = [
        (b"{\"format\": \"taskgraph-json/1\", \"tasks\": [{\"key\": \"a\", \"task\": {\"ref\": \"b\"}}]}",
         "error: <stdin>: tasks[0]: task 'a' refers to missing key 'b'\n"),
        (b"{\"format\": \"taskgraph-json/1\", \"tasks\": [\n{\"key\": [\"x\", 1], \"task\": 1, \"colour\": 3}]}",
         "error: <stdin>: line 2, column 37: tasks[0] (key ('x', 1)): unknown field `colour`\n"),
        (b"{\"format\": \"taskgraph-json/1\", \"tasks\": [{\"key\": \"a\", \"task\": {\"ref\": \"a2\"}}, {\"key\": \"a2\", \"task\": {\"ref\": \"a\"}}]}",
         "error: <stdin>: cycle: 'a' -> 'a2' -> 'a' (each task depends on the next)\n"),
        (b"not json", "error: <stdin>: line 1, column 2: invalid JSON: expected ident\n"),
    ];
    for (input, expected) in cases {
        let run = taskgraph(&["stats", "-"], input);
        assert_eq!(run.code, Some(2));
        assert_eq!(run.stderr, expected);
        assert_eq!(run.stdout, "");
    }
    let run = taskgraph(&["stats", "/nonexistent.json"], b"");
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            Some(2),
            "error: /nonexistent.json: No such file or directory (os error 2)\n"
        )
    );
}
