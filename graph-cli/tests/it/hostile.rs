//! The corpus of hostile inputs in `tests/data/hostile`, replayed through
//! every command that reads a graph: each is read, or refused with one line
//! that names the file and the problem and exit status 2, alike everywhere;
//! nothing panics and nothing in a file is run or used as a path.

use crate::common;
use std::path::Path;

use crate::common::taskgraph_in;

/// Every file of the corpus and what `stats` says of it: `None` for a graph
/// that is read, else the whole of standard error.
const CORPUS: [(&str, Option<&str>); 17] = [
    (
        "binary.json",
        Some("binary.json: line 1, column 1: invalid JSON: expected value"),
    ),
    ("bom.json", None),
    (
        "broken.json.gz",
        Some("broken.json.gz: corrupt deflate stream"),
    ),
    (
        "duplicate-key.json",
        Some("duplicate-key.json: line 1, column 90: tasks[1] (key 'x'): duplicate key 'x'"),
    ),
    (
        "empty.json",
        Some("empty.json: line 1, column 0: invalid JSON: EOF while parsing a value"),
    ),
    ("entities-and-long-keys.json", None),
    (
        "float-overflow.json",
        Some("float-overflow.json: line 1, column 67: invalid JSON: number out of range"),
    ),
    (
        "integer-past-u64.json",
        Some(
            "integer-past-u64.json: line 1, column 82: tasks[0] (key 'x'): integer \
             18446744073709551616 does not fit in a signed 64-bit integer",
        ),
    ),
    (
        "invalid-utf8.json",
        Some("invalid-utf8.json: line 1, column 52: invalid JSON: invalid unicode code point"),
    ),
    (
        "key-past-i64.json",
        Some(
            "key-past-i64.json: line 1, column 74: tasks[0]: integer 9223372036854775808 does \
             not fit in a signed 64-bit integer",
        ),
    ),
    (
        "long-key.json.gz",
        Some(
            "long-key.json.gz: line 1, column 51: tasks[0]: a string in a key longer than 65536 \
             bytes, the most this format allows there",
        ),
    ),
    (
        "missing-dependency.json",
        Some("missing-dependency.json: tasks[0]: task 'y' refers to missing key 'x'"),
    ),
    (
        "nan-literal.json",
        Some("nan-literal.json: line 1, column 63: invalid JSON: expected value"),
    ),
    ("op-looks-like-a-path.json", None),
    (
        "self-reference.json",
        Some("self-reference.json: cycle: 'x' -> 'x' (each task depends on the next)"),
    ),
    (
        "size-past-u64.json",
        Some(
            "size-past-u64.json: line 1, column 93: tasks[0] (key 'x'): integer \
             18446744073709551616 does not fit in an unsigned 64-bit integer",
        ),
    ),
    (
        "truncated.json",
        Some("truncated.json: line 2, column 0: invalid JSON: EOF while parsing a list"),
    ),
];

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hostile"))
}

#[test]
fn the_table_covers_the_whole_corpus() {
    let mut files: Vec<String> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let listed: Vec<&str> = CORPUS.iter().map(|(file, _)| *file).collect();
    assert_eq!(files, listed);
}

#[test]
fn every_reader_reads_or_refuses_alike() {
    let out = common::scratch("hostile");
    let written = out.join("out.json");
    let written = written.to_str().unwrap();
    let picture = out.join("out.dot");
    let picture = picture.to_str().unwrap();
    let rules = out.join("rules.json");
    std::fs::write(&rules, r#"{"rules": []}"#).unwrap();
    let rules = rules.to_str().unwrap();
    for (file, refused) in CORPUS {
        let commands: [Vec<&str>; 6] = [
            vec!["stats", file],
            vec!["order", file],
            vec!["optimize", file, "-o", written],
            vec!["assign", file, "--workers", "2"],
            vec!["viz", file, "-o", picture],
            vec!["rewrite", file, "--rules", rules, "-o", written],
        ];
        for args in commands {
            let run = taskgraph_in(corpus(), &args, b"");
            match refused {
                Some(message) => {
                    assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
                    assert_eq!(run.stderr, format!("error: {message}\n"), "{args:?}");
                }
                None => assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr),
            }
            assert!(!run.stderr.contains("panicked"), "{args:?}: {}", run.stderr);
        }
    }
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn an_op_named_like_a_path_is_only_a_name() {
    let run = taskgraph_in(corpus(), &["run", "op-looks-like-a-path.json"], b"");
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("unknown ops: `../../etc/passwd` (called by task 'x')"),
        "{}",
        run.stderr
    );
}

#[test]
fn keys_are_drawn_as_written() {
    // `A&B` and `A&amp;B` are two keys and stay two labels; an entity in a
    // key is text, not the character it names; a 20 000-character key and a
    // NUL do not break Graphviz.
    let run = taskgraph_in(corpus(), &["viz", "entities-and-long-keys.json"], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let dot = run.stdout;
    assert!(dot.contains("label=\"A&amp;B\\n"), "{dot}");
    assert!(dot.contains("label=\"A&amp;amp;B\\n"), "{dot}");
    assert!(dot.contains("x&amp;#x202E;gnp.exe"), "{dot}");
    assert!(!dot.contains('\0'));
    let longest = dot.lines().map(str::len).max().unwrap();
    assert!(longest < 8_000, "a line of {longest} bytes");
    if crate::viz_common::has_dot() {
        let out = common::scratch("hostile-viz");
        for ext in ["svg", "png"] {
            let path = out.join(format!("keys.{ext}"));
            let run = taskgraph_in(
                corpus(),
                &[
                    "viz",
                    "entities-and-long-keys.json",
                    "-o",
                    path.to_str().unwrap(),
                ],
                b"",
            );
            assert_eq!(run.code, Some(0), "{ext}: {}", run.stderr);
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
}
