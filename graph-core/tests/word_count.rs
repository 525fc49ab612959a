//! The word-count graph of dask's optimization documentation, built, written
//! as JSON, read back and measured. Also the crate-level example.

use graph_core::{GraphStats, Key, TaskGraph, Term, json};

fn main() -> Result<(), graph_core::Error> {
    let mut builder = TaskGraph::builder()
        .task(
            "words",
            Term::lit("apple orange apple pear orange pear pear"),
        )
        .task(
            "nwords",
            Term::call("len", [Term::call("split", [Term::key("words")])]),
        );
    for (i, fruit) in ["orange", "apple", "pear"].into_iter().enumerate() {
        let n = i + 1;
        builder = builder
            .task(format!("val{n}"), Term::lit(fruit))
            .task(
                format!("count{n}"),
                Term::call("count", [Term::key("words"), Term::key(format!("val{n}"))]),
            )
            .task(
                format!("format{n}"),
                Term::call(
                    "format",
                    [
                        Term::lit("word list has {} occurrences of {}, out of {} words"),
                        Term::key(format!("count{n}")),
                        Term::key(format!("val{n}")),
                        Term::key("nwords"),
                    ],
                ),
            )
            .task(
                format!("print{n}"),
                Term::call("identity", [Term::key(format!("format{n}"))]),
            );
    }
    let graph = builder.build()?;

    let text = json::to_string(&graph)?;
    let read_back = json::from_slice(text.as_bytes())?;
    assert_eq!(read_back, graph);

    let stats = GraphStats::of(graph.topology()?);
    assert_eq!(
        (stats.tasks, stats.edges, stats.roots, stats.leaves),
        (14, 19, 4, 3)
    );
    assert_eq!(stats.depth, 4);
    let print1 = graph.get(&Key::from("print1")).unwrap();
    assert_eq!(print1.body.term().unwrap().to_string(), "identity(format1)");
    Ok(())
}

#[test]
fn word_count_round_trips() {
    main().unwrap();
}
