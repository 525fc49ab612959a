//! Every way a `taskgraph-json/1` document can be wrong gets an error that
//! says where (line, column, task position and key) and what.

use expect_test::{Expect, expect};
use graph_core::json;

#[track_caller]
fn check(text: &str, expected: Expect) {
    let err = json::from_slice(text.as_bytes()).expect_err("the document is invalid");
    expected.assert_eq(&err.to_string());
}

/// Wraps task objects in a valid envelope.
fn doc(tasks: &str) -> String {
    format!(r#"{{"format": "taskgraph-json/1", "tasks": [{tasks}]}}"#)
}

#[test]
fn malformed_json_names_line_and_column() {
    check(
        "{\"format\": \"taskgraph-json/1\",\n \"tasks\": [\n {\"key\": \"x\" \"task\": 1}]}",
        expect!["line 3, column 14: invalid JSON: expected `,` or `}`"],
    );
    check(
        "",
        expect!["line 1, column 0: invalid JSON: EOF while parsing a value"],
    );
    check(
        &doc(r#"{"key": "x", "task": 1}"#).replace("]}", "]"),
        expect!["line 1, column 65: invalid JSON: EOF while parsing an object"],
    );
    check(
        &format!("{} trailing", doc("")),
        expect!["line 1, column 45: invalid JSON: trailing characters"],
    );
}

#[test]
fn wrong_or_missing_format() {
    check(
        r#"{"format": "taskgraph-json/2", "tasks": []}"#,
        expect![[
            r#"line 1, column 29: unsupported format "taskgraph-json/2" (expected "taskgraph-json/1")"#
        ]],
    );
    check(
        r#"{"tasks": []}"#,
        expect![[r#"line 1, column 13: missing field `format` (expected "taskgraph-json/1")"#]],
    );
    check(
        r#"{"format": "taskgraph-json/1"}"#,
        expect!["line 1, column 30: missing field `tasks`"],
    );
    check(
        r#"[1, 2]"#,
        expect![[
            r#"line 1, column 0: invalid type: sequence, expected a taskgraph-json/1 object: {"format": "taskgraph-json/1", "tasks": [...]}"#
        ]],
    );
}

#[test]
fn other_top_level_fields_are_ignored() {
    let text = r#"{"producer": {"name": "dask", "version": [2025, 1]}, "format": "taskgraph-json/1", "tasks": []}"#;
    assert!(json::from_slice(text.as_bytes()).unwrap().is_empty());
}

#[test]
fn missing_and_unknown_task_fields() {
    check(
        &doc(r#"{"key": "x", "task": 1}, {"task": 2}"#),
        expect!["line 1, column 77: tasks[1]: missing field `key`"],
    );
    check(
        &doc(r#"{"key": "x"}"#),
        expect!["line 1, column 53: tasks[0] (key 'x'): missing field `task`"],
    );
    check(
        &doc(r#"{"key": ["x", 1], "task": 1, "priority": 3}"#),
        expect!["line 1, column 80: tasks[0] (key ('x', 1)): unknown field `priority`"],
    );
    check(
        &doc(r#"{"key": "x", "task": 1, "deps": []}"#),
        expect![
            "line 1, column 76: tasks[0] (key 'x'): a task has either `task` or `deps`, not both"
        ],
    );
    check(
        &doc(r#"{"key": "x", "key": "y", "task": 1}"#),
        expect!["line 1, column 59: tasks[0] (key 'x'): field `key` given twice"],
    );
    check(
        &doc(r#"{"key": "x", "task": 1, "size": -1}"#),
        expect!["line 1, column 75: tasks[0] (key 'x'): invalid value: integer `-1`, expected u64"],
    );
    check(
        &doc(r#"{"key": "x", "task": 1, "cost": -0.5}"#),
        expect![
            "line 1, column 78: tasks[0] (key 'x'): cost must be a non-negative number of seconds, not -0.5"
        ],
    );
}

#[test]
fn keys_must_be_strings_numbers_or_arrays_of_those() {
    check(
        &doc(r#"{"key": true, "task": 1}"#),
        expect![
            "line 1, column 53: tasks[0]: invalid type: boolean `true`, expected a key: a string, a number, or an array of those"
        ],
    );
    check(
        &doc(r#"{"key": ["x", [0, {"a": 1}]], "task": 1}"#),
        expect![
            "line 1, column 60: tasks[0]: invalid type: map, expected a key: a string, a number, or an array of those"
        ],
    );
    check(
        &doc(r#"{"key": 18446744073709551615, "task": 1}"#),
        expect![
            "line 1, column 69: tasks[0]: integer 18446744073709551615 does not fit in a signed 64-bit integer"
        ],
    );
    // Nesting is fine.
    let nested = doc(r#"{"key": ["shuffle", [0, 1]], "task": 1}"#);
    assert_eq!(
        json::from_slice(nested.as_bytes())
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .to_string(),
        "('shuffle', (0, 1))"
    );
}

#[test]
fn terms_must_follow_the_term_syntax() {
    check(
        &doc(r#"{"key": "x", "task": [1, 2]}"#),
        expect![[
            r#"line 1, column 63: tasks[0] (key 'x'): a bare array is not a term: write a list as {"list": [TERM, ...]}"#
        ]],
    );
    check(
        &doc(r#"{"key": "x", "task": {"call": "inc"}}"#),
        expect![[
            r#"line 1, column 77: tasks[0] (key 'x'): call of `inc` has no `args` (write "args": [] for none)"#
        ]],
    );
    check(
        &doc(r#"{"key": "x", "task": {"ref": "y", "list": []}}"#),
        expect![
            "line 1, column 86: tasks[0] (key 'x'): a term object has exactly one of `ref`, `call` (with `args`) and `list`"
        ],
    );
    check(
        &doc(r#"{"key": "x", "task": {"lambda": 1}}"#),
        expect![[
            r#"line 1, column 71: tasks[0] (key 'x'): unknown term field `lambda` (a term is {"ref": ...}, {"call": ..., "args": ...} or {"list": ...})"#
        ]],
    );
    check(
        &doc(r#"{"key": "x", "task": {"call": 3, "args": []}}"#),
        expect![
            "line 1, column 72: tasks[0] (key 'x'): invalid type: integer `3`, expected an op name"
        ],
    );
}

#[test]
fn duplicate_keys_are_named() {
    check(
        &doc(r#"{"key": ["x", 0], "task": 1}, {"key": ["x", 0], "task": 2}"#),
        expect!["line 1, column 100: tasks[1] (key ('x', 0)): duplicate key ('x', 0)"],
    );
}

#[test]
fn missing_references_name_both_keys() {
    check(
        &doc(
            r#"{"key": "a", "task": 1}, {"key": "b", "task": {"call": "inc", "args": [{"ref": "nope"}]}}"#,
        ),
        expect!["tasks[1]: task 'b' refers to missing key 'nope'"],
    );
    check(
        &doc(r#"{"key": "a", "deps": [["z", 1]]}"#),
        expect!["tasks[0]: task 'a' refers to missing key ('z', 1)"],
    );
}

#[test]
fn cycles_name_their_keys() {
    check(
        &doc(
            r#"{"key": "a", "task": {"ref": "c"}}, {"key": "b", "task": {"ref": "a"}},
               {"key": "c", "task": {"call": "inc", "args": [{"ref": "b"}]}}"#,
        ),
        expect!["cycle: 'a' -> 'c' -> 'b' -> 'a' (each task depends on the next)"],
    );
}

#[test]
fn a_self_reference_is_a_cycle() {
    // dask raises "Cycle detected" for {"a": (f, "a")}.
    check(
        &doc(r#"{"key": "a", "task": {"call": "f", "args": [{"ref": "a"}]}}"#),
        expect!["cycle: 'a' -> 'a' (each task depends on the next)"],
    );
    check(
        &doc(r#"{"key": ["x", 1], "deps": [["x", 1]]}"#),
        expect!["cycle: ('x', 1) -> ('x', 1) (each task depends on the next)"],
    );
}

#[test]
fn a_long_cycle_is_shortened_to_one_line() {
    // t0 <- t1 <- ... <- t99 <- t0: every task depends on the one before.
    let tasks: Vec<String> = (0..100)
        .map(|i| format!(r#"{{"key": "t{i}", "deps": ["t{}"]}}"#, (i + 99) % 100))
        .collect();
    check(
        &doc(&tasks.join(", ")),
        expect![
            "cycle: 't0' -> 't99' -> 't98' -> 't97' -> ... 93 more ... -> 't3' -> 't2' -> 't1' -> 't0' (a cycle of 100 tasks, each depending on the next)"
        ],
    );
}

#[test]
fn read_path_names_the_file() {
    let err = json::read_path("/nonexistent/graph.json").unwrap_err();
    expect!["/nonexistent/graph.json: No such file or directory (os error 2)"]
        .assert_eq(&err.to_string());

    let dir = std::env::temp_dir().join(format!("graph-core-json-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.json");
    std::fs::write(&path, doc(r#"{"key": "x"}"#)).unwrap();
    let err = json::read_path(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 1, column 53: tasks[0] (key 'x'): missing field `task`",
            path.display()
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn non_finite_floats_are_refused_when_writing() {
    let graph = graph_core::TaskGraph::builder()
        .task("ok", graph_core::Term::lit(1.5))
        .task(("x", f64::INFINITY), graph_core::Term::lit(1))
        .build()
        .unwrap();
    let err = json::to_string(&graph).unwrap_err();
    expect!["task ('x', inf): cannot write the non-finite float inf as JSON"]
        .assert_eq(&err.to_string());
}

#[test]
fn nesting_past_the_limit_is_refused() {
    let depth = json::MAX_NESTING + 1;
    // Lists, the shortest nesting: unwinding the error costs serde_json a
    // scan of the text per level.
    let term = format!("{}1{}", r#"{"list":["#.repeat(depth), "]}".repeat(depth));
    let text = doc(&format!(r#"{{"key": "deep", "task": {term}}}"#));
    check(
        &text,
        expect![
            "line 1, column 73794: tasks[0] (key 'deep'): terms or keys nest more than 8192 levels deep (each term object and key array is a level)"
        ],
    );
    let key = format!("{}0{}", "[".repeat(depth), "]".repeat(depth));
    check(
        &doc(&format!(r#"{{"key": {key}, "task": 1}}"#)),
        expect![
            "line 1, column 8242: tasks[0]: terms or keys nest more than 8192 levels deep (each term object and key array is a level)"
        ],
    );
}

#[test]
fn integers_beyond_64_bits_are_found_outside_strings_only() {
    use graph_core::json::check_integers;
    for fine in [
        r#"[-9223372036854775808, 9223372036854775807]"#,
        r#"["123456789012345678901234567890"]"#,
        r#"["a\"99999999999999999999", "\\", 1]"#,
        r#"[1e30, 1.5, -0.0, 18446744073709551616.0]"#,
        r#"[01234567890123456789012]"#,
        "",
    ] {
        assert!(check_integers(fine.as_bytes()).is_ok(), "{fine}");
    }
    for (text, expected) in [
        (
            r#"[-9223372036854775809]"#,
            "line 1, column 21: integer -9223372036854775809 does not fit in a signed 64-bit integer",
        ),
        (
            "[\"s\\\"\",\n 1, 99999999999999999999]",
            "line 2, column 24: integer 99999999999999999999 does not fit in a signed 64-bit integer",
        ),
    ] {
        let err = check_integers(text.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
}

#[test]
fn strings_past_their_limit_are_refused_where_they_start() {
    let long_key = "k".repeat(json::MAX_NAME_BYTES + 1);
    assert_message(
        &doc(&format!(
            r#"{{"key": "a", "task": 1}},
{{"key": ["{long_key}", 1], "task": 2}}"#
        )),
        "line 2, column 11: tasks[1]: a string in a key longer than 65536 bytes, the most this format allows there",
    );
    // Escapes count as what they decode to: a key of newlines, too.
    let escaped = r"\n".repeat(json::MAX_NAME_BYTES + 1);
    assert_message(
        &doc(&format!(r#"{{"key": "{escaped}", "task": 1}}"#)),
        "line 1, column 51: tasks[0]: a string in a key longer than 65536 bytes, the most this format allows there",
    );
    let long_op = "f".repeat(json::MAX_NAME_BYTES + 1);
    assert_message(
        &doc(&format!(
            r#"{{"key": "a", "task": {{"call": "{long_op}", "args": []}}}}"#
        )),
        "line 1, column 73: tasks[0] (key 'a'): an op name longer than 65536 bytes, the most this format allows there",
    );
    let long_field = "z".repeat(json::MAX_NAME_BYTES + 1);
    assert_message(
        &doc(&format!(r#"{{"key": "a", "{long_field}": 1}}"#)),
        "line 1, column 56: tasks[0] (key 'a'): a field name longer than 65536 bytes, the most this format allows there",
    );
    // A key of exactly the limit is read.
    let at_limit = "k".repeat(json::MAX_NAME_BYTES);
    let graph = json::from_slice(doc(&format!(r#"{{"key": "{at_limit}", "task": 1}}"#)).as_bytes());
    assert_eq!(graph.unwrap().len(), 1);
}

#[test]
fn a_string_literal_past_its_limit_is_refused_without_holding_it() {
    let literal = "s".repeat(json::MAX_STRING_BYTES + 1);
    assert_message(
        &doc(&format!(
            r#"{{"key": "a", "task": {{"list": [1, "{literal}"]}}}}"#
        )),
        "line 1, column 77: tasks[0] (key 'a'): a string literal longer than 268435456 bytes, the most this format allows there",
    );
}

#[track_caller]
fn assert_message(text: &str, expected: &str) {
    let err = json::from_slice(text.as_bytes()).expect_err("the document is invalid");
    assert_eq!(err.to_string(), expected);
}
