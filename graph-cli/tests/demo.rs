//! `taskgraph demo` runs on its built-in graph and tells its story.

mod common;

use common::taskgraph;

#[test]
fn demo_shows_the_word_count_graph_and_its_shape() {
    let run = taskgraph(&["demo"], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("nwords  = len(split(words))"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("  tasks                     14"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
}
