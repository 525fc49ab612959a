//! The checkers behind the fuzz targets of `graph-core`, so that the targets
//! are three-line shims and `cargo test` can replay their inputs.

use crate::{Body, json};

/// `core_json_roundtrip`: any bytes either fail to parse with an error, or
/// parse into a graph that writes out, reads back equal, and writes out again
/// byte for byte the same. Never a panic.
pub fn json_roundtrip(data: &[u8]) {
    let Ok(graph) = json::from_slice(data) else {
        return;
    };
    let text = json::to_string(&graph).expect("a graph read from JSON writes back");
    let again = json::from_slice(text.as_bytes()).expect("written JSON reads back");
    assert_eq!(again, graph, "round trip changed the graph");
    assert_eq!(
        json::to_string(&again).expect("writes again"),
        text,
        "second write differs"
    );
}

/// `core_json_readers_agree`: the streaming reader and the serde reader of
/// record read any bytes alike. Where the streaming reader gives a graph, the
/// serde reader gives the same one, with the same topology, and the shape
/// reader the same keys and topology; where it gives up, the serde reader
/// finds an error (so a valid document never takes the slow road), but for an
/// integer beyond 64 bits, an error for the one, a float for the other, and
/// for a string past the streaming reader's limits (which only it has).
pub fn json_readers_agree(data: &[u8]) {
    let json::Readings {
        graph,
        shape,
        big_integer,
        too_long,
        serde,
    } = json::every_reading(data);
    match (graph, serde) {
        (Some(fast), Ok(slow)) => {
            assert_eq!(fast, slow, "the readers read different graphs");
            let topology = fast.topology().expect("a graph read has a topology");
            assert_eq!(
                Some(topology),
                slow.topology().ok(),
                "the readers found different topologies"
            );
            let shape = shape.expect("the shape reader reads what the graph reader reads");
            assert!(
                shape.keys().eq(fast.keys().cloned()),
                "the shape reader read other keys"
            );
            assert_eq!(
                shape.topology(),
                topology,
                "the shape reader read another topology"
            );
            let literal: Vec<bool> = fast
                .iter()
                .map(|(_, task)| matches!(&task.body, Body::Term(term) if term.is_literal()))
                .collect();
            assert_eq!(
                shape.literals(),
                literal,
                "the shape reader found other literals"
            );
        }
        (Some(_), Err(error)) => panic!("only the streaming reader accepts the input ({error})"),
        (None, Ok(_)) => assert!(
            big_integer || too_long,
            "the streaming reader gives up on a valid graph"
        ),
        (None, Err(_)) => assert!(shape.is_none(), "the shape reader accepts an invalid graph"),
    }
}
