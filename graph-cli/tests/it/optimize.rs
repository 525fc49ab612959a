//! `taskgraph optimize`: a line per pass, the optimized graph written and
//! still runnable, and errors for bad passes and keys.

use crate::common::{scratch, taskgraph};
use graph_core::{generate, json};

#[test]
fn passes_report_and_write_a_runnable_graph() {
    let dir = scratch("optimize");
    let input = dir.join("in.json");
    let output = dir.join("out.json.gz");
    json::write_path(&generate::word_count(), &input).unwrap();
    let run = taskgraph(
        &[
            "optimize",
            input.to_str().unwrap(),
            "--keys",
            r#"["print1", "print2"]"#,
            "--fast-ops",
            "len,split",
            "-o",
            output.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for pass in ["cull", "inline", "inline_functions", "fuse"] {
        assert!(
            run.stdout
                .lines()
                .any(|line| line.trim_start().starts_with(pass)),
            "{pass} in {}",
            run.stdout
        );
    }
    let optimized = json::read_path(&output).unwrap();
    assert!(optimized.len() < 14);
    let run = taskgraph(
        &[
            "run",
            output.to_str().unwrap(),
            "--keys",
            r#"["print1", "print2"]"#,
        ],
        b"",
    );
    assert!(
        run.stdout
            .contains("'word list has 2 occurrences of apple, out of 7 words'"),
        "{}",
        run.stdout
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_fused_long_chain_is_read_back_and_runs() {
    // Fusing the chain nests hundreds of calls per task, past serde_json's
    // own limit of 128 levels: the written graph must still be read.
    let dir = scratch("optimize-chain");
    let input = dir.join("chain.json");
    let output = dir.join("fused.json");
    json::write_path(&generate::chain(2_000), &input).unwrap();
    let run = taskgraph(
        &[
            "optimize",
            input.to_str().unwrap(),
            "-o",
            output.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = taskgraph(&["run", output.to_str().unwrap(), "--json"], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The chain counts up from 0, one `inc` per task (its constant head,
    // inlined, stays in the graph as in dask, a leaf now).
    assert!(
        run.stdout.contains(r#"[["chain",1999],1999]"#),
        "{}",
        run.stdout
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_passes_and_keys_are_errors() {
    let text = json::to_string(&generate::chain(5)).unwrap();
    let run = taskgraph(
        &["optimize", "-", "--passes", "cull,squash", "-o", "-"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("unknown pass \"squash\""),
        "{}",
        run.stderr
    );
    let run = taskgraph(
        &["optimize", "-", "--keys", r#"["nope"]"#, "-o", "-"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("'nope'"), "{}", run.stderr);
    // An integer past 64 bits is refused, not taken for a float.
    let run = taskgraph(
        &[
            "optimize",
            "-",
            "--keys",
            r#"[["x", 18446744073709551616]]"#,
            "-o",
            "-",
        ],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: --keys: line 1, column 27: integer 18446744073709551616 does not fit in a signed 64-bit integer\n"
    );
}

/// `optimize --passes inline` is dask's `inline`: the constants are
/// substituted into the tasks that use them and stay in the graph
/// (dask's `test_inline`).
#[test]
fn inline_keeps_the_constants_it_substitutes() {
    let text = r#"{"format": "taskgraph-json/1", "tasks": [
        {"key": "a", "task": 1},
        {"key": "b", "task": {"call": "inc", "args": [{"ref": "a"}]}},
        {"key": "c", "task": {"call": "inc", "args": [{"ref": "b"}]}},
        {"key": "d", "task": {"call": "add", "args": [{"ref": "a"}, {"ref": "c"}]}}]}"#;
    let run = taskgraph(
        &["optimize", "-", "--passes", "inline", "-o", "-"],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        r#"{"format":"taskgraph-json/1","tasks":[
{"key":"a","task":1},
{"key":"b","task":{"call":"inc","args":[1]}},
{"key":"c","task":{"call":"inc","args":[{"ref":"b"}]}},
{"key":"d","task":{"call":"add","args":[1,{"ref":"c"}]}}
]}
"#
    );
}
