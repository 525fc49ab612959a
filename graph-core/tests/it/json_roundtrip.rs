//! Writing a graph and reading it back gives the same graph: generated shapes,
//! every kind of key, term and metadata, gzip, and gzip detected by content.

use graph_core::generate::{Rng, Shape};
use graph_core::{Key, Task, TaskGraph, Term, Value, json};

#[track_caller]
fn round_trip(graph: &TaskGraph) {
    let text = json::to_string(graph).unwrap();
    graph_core::fuzz::json_readers_agree(text.as_bytes());
    let read_back = json::from_slice(text.as_bytes()).unwrap();
    assert_eq!(&read_back, graph);
    // Writing again gives the same bytes: the format is deterministic.
    assert_eq!(json::to_string(&read_back).unwrap(), text);
}

#[test]
fn generated_shapes_round_trip() {
    for shape in Shape::ALL {
        for (size, seed) in [(10, 1), (500, 2), (3_000, 3)] {
            round_trip(&shape.generate(size, seed));
        }
    }
}

#[test]
fn every_kind_of_key_term_and_metadata_round_trips() {
    let odd_text = "quote ' double \" backslash \\ newline \n tab \t bell \u{7} naïve 🦀";
    let mut graph = TaskGraph::new();
    graph.insert("a", Term::lit(Value::Null)).unwrap();
    graph.insert(1, Term::lit(true)).unwrap();
    graph.insert(-2, Term::lit(i64::MIN)).unwrap();
    graph.insert(0.5, Term::lit(1e-300)).unwrap();
    graph.insert(1e300, Term::lit(-0.0)).unwrap();
    graph.insert(odd_text, Term::lit(odd_text)).unwrap();
    graph
        .insert(
            Key::from(("x", 0.25, Key::from(("y", Key::tuple([]))))),
            Term::list([]),
        )
        .unwrap();
    graph
        .insert(
            Key::from(("shuffle", Key::from((0, 1)))),
            Term::call(
                "f",
                [
                    Term::key("a"),
                    Term::list([Term::key(1), Term::lit(i64::MAX), Term::call("g", [])]),
                    Term::key(odd_text),
                ],
            ),
        )
        .unwrap();
    let mut opaque = Task::opaque(vec![
        Key::from("a"),
        Key::from(0.5),
        Key::from(("shuffle", Key::from((0, 1)))),
    ]);
    opaque.size = Some(u64::MAX);
    opaque.cost = Some(0.125);
    graph.insert_task(Key::from("opaque"), opaque).unwrap();
    graph.topology().unwrap();
    round_trip(&graph);
}

#[test]
fn random_terms_round_trip() {
    fn random_term(rng: &mut Rng, keys: &[Key], depth: u32) -> Term {
        match rng.below(if depth == 0 { 3 } else { 5 }) {
            0 => Term::lit(rng.next_u64() as i64),
            1 => Term::lit(f64::from_bits(rng.next_u64() >> 2)),
            2 if !keys.is_empty() => Term::Ref(keys[rng.below(keys.len())].clone()),
            2 => Term::lit(format!("s{}", rng.below(10))),
            3 => Term::call(
                format!("op{}", rng.below(3)).as_str(),
                (0..rng.below(4)).map(|_| random_term(rng, keys, depth - 1)),
            ),
            _ => Term::list((0..rng.below(4)).map(|_| random_term(rng, keys, depth - 1))),
        }
    }
    for seed in 0..50 {
        let mut rng = Rng::new(seed);
        let mut graph = TaskGraph::new();
        let mut keys = Vec::new();
        for i in 0..40 {
            let key = Key::from(("k", i, rng.below(3) as i64));
            let term = random_term(&mut rng, &keys, 4);
            graph.insert(key.clone(), term).unwrap();
            keys.push(key);
        }
        round_trip(&graph);
    }
}

#[test]
fn gzip_files_round_trip_and_are_detected_by_content() {
    let graph = Shape::ArrayOverlap.generate(200, 0);
    let dir = std::env::temp_dir().join(format!("graph-core-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let gz = dir.join("graph.json.gz");
    json::write_path(&graph, &gz).unwrap();
    let bytes = std::fs::read(&gz).unwrap();
    assert_eq!(&bytes[..2], [0x1f, 0x8b], "a .gz name writes gzip");
    assert_eq!(json::read_path(&gz).unwrap(), graph);

    // A compressed file whose name does not say so is still read.
    let disguised = dir.join("graph.json");
    std::fs::write(&disguised, &bytes).unwrap();
    assert_eq!(json::read_path(&disguised).unwrap(), graph);

    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gzip_files_of_several_members_are_read_whole() {
    // A gzip trailer gives the size of its member's text, which the reader
    // makes room by; here the last member's is one byte, of many thousand.
    use std::io::Write;
    let graph = Shape::Random.generate(5_000, 7);
    let text = json::to_string(&graph).unwrap();
    let member = |bytes: &[u8]| {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    };
    let (body, last) = text.as_bytes().split_at(text.len() - 1);
    let mut bytes = member(body);
    bytes.extend(member(last));
    assert_eq!(&bytes[bytes.len() - 4..], 1_u32.to_le_bytes());

    let dir = std::env::temp_dir().join(format!("graph-core-members-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let gz = dir.join("graph.json.gz");
    std::fs::write(&gz, &bytes).unwrap();
    assert_eq!(json::read_path(&gz).unwrap(), graph);
    let shape = json::read_shape_path(&gz).unwrap();
    assert_eq!(shape.len(), graph.len());
    assert_eq!(shape.topology(), graph.topology().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A term nested `depth` calls deep around a reference to `x` (one more
/// level).
fn nested_call(depth: usize) -> Term {
    let mut term = Term::key("x");
    for _ in 0..depth {
        term = Term::call("inc", [term]);
    }
    term
}

#[test]
fn terms_nested_to_the_limit_round_trip() {
    // As a fused chain of cheap ops nests; serde_json alone stops at 128
    // levels. On the test thread's own stack: the reader grows its own,
    // and comparing, writing and dropping such a term recurse nowhere.
    let mut graph = TaskGraph::new();
    graph.insert("x", Term::lit(1)).unwrap();
    graph
        .insert("deep", nested_call(json::MAX_NESTING - 1))
        .unwrap();
    round_trip(&graph);
}

/// Documents written by hand, valid and not, in every layout and spelling
/// JSON allows: the streaming reader and the serde reader read them alike.
#[test]
fn both_readers_read_hand_written_documents_alike() {
    let documents = [
        r#"{"format":"taskgraph-json/1","tasks":[]}"#,
        r#"{"tasks":[],"format":"taskgraph-json/1"}"#,
        "\u{feff}{\"format\": \"taskgraph-json/1\", \"tasks\": []}",
        " \t\r\n{ \"format\" : \"taskgraph-json/1\" ,\n \"tasks\" : [ { \"key\" : \"x\" , \"task\" : 1 } ] } \n",
        r#"{"format":"taskgraph-json/1","extra":{"a":[1,2,{"b":null}]},"tasks":[{"key":"x","task":1}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"\u0078","task":"\ud83e\udd80 \" \\ \/ \b\f\n\r\t"},{"key":"y","task":{"ref":"x"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":["a",1,["b",-2.5]],"task":[1,2]},{"key":"y","task":{"list":[{"ref":["a",1,["b",-2.5]]},1e3,-0,0.5e-2,true,false,null]}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"y","task":{"call":"inc","args":[{"ref":"x"}]},"size":8,"cost":0.25},{"key":"x","task":1}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"z","deps":["x",["y",0]]},{"key":"x","task":1},{"key":["y",0],"deps":[]}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"float":"nan"}},{"key":"y","task":{"float":"-inf"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":1,"task":1},{"key":1.0,"task":2},{"key":"1","task":3}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":9223372036854775807},{"key":"y","task":-9223372036854775808}]}"#,
        // Not valid: each must be an error from both.
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":9223372036854775808}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1},{"key":"x","task":2}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"ref":"x"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"ref":"y"}},{"key":"y","task":{"ref":"x"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"ref":"missing"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1,"colour":2}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1,"deps":[]}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x"}]}"#,
        r#"{"format":"taskgraph-json/2","tasks":[]}"#,
        r#"{"tasks":[]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":{"a":1},"task":1}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"call":"f"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":{"ref":"x","call":"f"}}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1}],"tasks":[]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1},]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":"\ud800"}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":01}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1e999}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1,"size":-1}]}"#,
        r#"{"format":"taskgraph-json/1","tasks":[{"key":"x","task":1}]} trailing"#,
        "{\"format\":\"taskgraph-json/1\",\"tasks\":[{\"key\":\"x\",\"task\":\"a\u{1}b\"}]}",
        "",
        "[]",
        "{",
    ];
    for document in documents {
        graph_core::fuzz::json_readers_agree(document.as_bytes());
    }
}

/// Strings of every kind (plain, escaped, non-ASCII, long) falling across the
/// boundaries of the reader's chunks, in documents valid and not.
#[test]
fn strings_read_alike_across_chunk_boundaries() {
    let texts = [
        "plain".to_owned(),
        "naïve 🦀 \"quoted\" back\\slash\nnew line\ttab \u{1}".to_owned(),
        "é".repeat(700),
        "x".repeat(3_001),
    ];
    let mut graph = TaskGraph::new();
    for i in 0..2_000 {
        let text = texts[i % texts.len()].as_str();
        let key = Key::from((text, i as i64));
        graph
            .insert(
                key,
                Term::call(text, [Term::lit(text), Term::lit(i as i64)]),
            )
            .unwrap();
    }
    let text = json::to_string(&graph).unwrap();
    assert!(text.len() > 3 << 20, "the document spans several chunks");
    round_trip(&graph);

    // Read from a file too (on a second thread, a chunk at a time).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("strings.json");
    std::fs::write(&path, &text).unwrap();
    assert_eq!(json::read_path(&path).unwrap(), graph);
    let shape = json::read_shape_path(&path).unwrap();
    assert!(shape.keys().eq(graph.keys().cloned()));

    // A byte that is not UTF-8 at each place around a chunk's end: in a
    // string or not, the document is refused alike.
    let bytes = text.as_bytes();
    for around in [1 << 20, 2 << 20, 3 << 20] {
        for at in around - 3..around + 3 {
            let mut broken = bytes.to_vec();
            broken[at] = 0xff;
            graph_core::fuzz::json_readers_agree(&broken);
            assert!(json::from_slice(&broken).is_err());
        }
    }
}

#[test]
fn fields_of_a_document_are_written_before_the_tasks_and_ignored_by_readers() {
    let graph = TaskGraph::builder()
        .task("x", Term::lit(1))
        .task(("y", 0), Term::call("inc", [Term::key("x")]))
        .build()
        .unwrap();
    let keys = [Key::from("x"), Key::from(("y", 0))];
    let mut text = Vec::new();
    json::Document::new(&graph)
        .field("producer", "tests")
        .and_then(|doc| doc.field("data_nodes", &keys))
        .unwrap()
        .write(&mut text)
        .unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(text.starts_with(
        r#"{"format":"taskgraph-json/1","producer":"tests","data_nodes":["x",["y",0]],"tasks":["#
    ));
    graph_core::fuzz::json_readers_agree(text.as_bytes());
    assert_eq!(json::from_slice(text.as_bytes()).unwrap(), graph);
    for name in ["format", "tasks"] {
        let refused = json::Document::new(&graph).field(name, &1).unwrap_err();
        assert!(matches!(refused, json::Error::Field { .. }), "{refused}");
    }
    let twice = json::Document::new(&graph)
        .field("note", &1)
        .unwrap()
        .field("note", &2)
        .unwrap_err();
    assert!(twice.to_string().contains("\"note\""), "{twice}");
}
