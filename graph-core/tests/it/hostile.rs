//! What a hostile but realistic user tries at graph-core's edges: a write
//! that fails half way keeps the old file, a byte order mark is no problem,
//! terms nested past the limit are refused when built, not only when read.

use graph_core::{Error, Key, TaskGraph, Term, Value, json};

#[test]
fn a_failed_write_keeps_the_old_file_and_leaves_nothing_else() {
    let dir = std::env::temp_dir().join(format!("graph-core-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["graph.json", "graph.json.gz"] {
        let path = dir.join(name);
        let good = TaskGraph::builder()
            .task("x", Term::lit(1))
            .build()
            .unwrap();
        json::write_path(&good, &path).unwrap();
        let before = std::fs::read(&path).unwrap();
        // Many tasks, then one that JSON cannot spell: the writer fails after
        // writing most of the graph.
        let mut bad = TaskGraph::new();
        for i in 0..10_000 {
            bad.insert(("t", i), Term::lit(i)).unwrap();
        }
        bad.insert("nan", Term::Lit(Value::Float(f64::NAN)))
            .unwrap();
        let err = json::write_path(&bad, &path).unwrap_err();
        assert!(err.to_string().contains("non-finite float"), "{err}");
        assert!(
            err.to_string().starts_with(&path.display().to_string()),
            "{err}"
        );
        assert_eq!(
            std::fs::read(&path).unwrap(),
            before,
            "{name}: the old file stays"
        );
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{name}: nothing else is left: {left:?}");
        std::fs::remove_file(&path).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_byte_order_mark_is_passed_over() {
    let text =
        "\u{feff}{\"format\": \"taskgraph-json/1\", \"tasks\": [{\"key\": \"x\", \"task\": 1}]}";
    assert_eq!(json::from_slice(text.as_bytes()).unwrap().len(), 1);
}

/// On the test thread's own stack: building, writing, reading, comparing
/// and dropping a term this deep recurse nowhere (the reader grows its own
/// stack), so a regression shows here as a stack overflow.
#[test]
fn terms_too_deep_are_refused_when_written() {
    let mut term = Term::key("x");
    for _ in 0..json::MAX_NESTING {
        term = Term::call("inc", [term]);
    }
    let mut graph = TaskGraph::new();
    graph.insert("x", Term::lit(0)).unwrap();
    // A graph in memory may hold it; a file may not.
    graph.insert("deep", term).unwrap();
    let err = json::to_string(&graph).unwrap_err();
    assert!(
        matches!(err, json::Error::Graph(Error::TooDeep { levels: 8193, .. })),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "task 'deep': its term or key nests 8193 levels deep, more than the limit of 8192"
    );
    // One level less is written and read back.
    let mut term = Term::key("x");
    for _ in 1..json::MAX_NESTING {
        term = Term::call("inc", [term]);
    }
    graph.retain(|_, key, _| *key != Key::from("deep"));
    graph.insert("deepest", term).unwrap();
    let text = json::to_string(&graph).unwrap();
    assert_eq!(json::from_slice(text.as_bytes()).unwrap(), graph);
}

#[test]
fn keys_too_deep_are_refused_when_inserted() {
    // Keys, unlike terms, are compared, hashed, shown and dropped by
    // recursion: a key of 8 193 levels fits a 2 MiB stack in an optimized
    // build, not in this unoptimized one.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(|| {
            let mut key = Key::from("k");
            for _ in 0..=json::MAX_NESTING {
                key = Key::tuple([key]);
            }
            let err = TaskGraph::new().insert(key, Term::lit(0)).unwrap_err();
            assert!(matches!(err, Error::TooDeep { levels: 8193, .. }), "{err}");
        })
        .unwrap()
        .join()
        .unwrap();
}

/// A term nested a million levels (deeper than any file may hold, but a
/// program may build one) is measured, copied, compared and freed on a
/// thread with a small stack: no walk recurses more than a few levels.
#[test]
fn walks_of_a_term_a_million_deep_fit_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let mut term = Term::key(("x", 0));
            for i in 0..1_000_000 {
                term = if i % 2 == 0 {
                    Term::call("inc", [term, Term::lit(i)])
                } else {
                    Term::list([term])
                };
            }
            assert_eq!(term.nesting(), 1_000_000);
            assert_eq!(term.levels(), 1_000_002);
            let copy = term.clone();
            assert!(copy == term);
            let mut other = Term::key(("x", 1));
            for i in 0..1_000_000 {
                other = if i % 2 == 0 {
                    Term::call("inc", [other, Term::lit(i)])
                } else {
                    Term::list([other])
                };
            }
            assert!(other != term);
            let shown = term.to_string();
            assert!(shown.starts_with("[inc([inc(") && shown.ends_with(", 999998)]"));
            drop((term, copy, other));
        })
        .unwrap()
        .join()
        .unwrap();
}
