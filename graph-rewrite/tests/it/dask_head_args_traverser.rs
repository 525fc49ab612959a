//! dask's `test_head`, `test_args` and `test_traverser`: a term seen as the
//! preorder of its heads, arity included.

use crate::common;
use crate::common::term;
use expect_test::{Expect, expect};
use graph_rewrite::{Head, Traverser, args};

fn check_head(text: &str, expected: Expect) {
    expected.assert_eq(&Head::of(&term(text)).to_string());
}

#[test]
fn head() {
    check_head("inc(1)", expect!["inc/1"]);
    check_head("add(1, 2)", expect!["add/2"]);
    check_head("add(inc(1), inc(1))", expect!["add/2"]);
    // dask's head of a list is `list`, the same as a call to `list`; here the
    // two differ, and both carry their length.
    check_head("[1, 2, 3]", expect!["list/3"]);
    check_head("list(1, 2, 3)", expect!["list/3"]);
    assert_ne!(
        Head::of(&term("[1, 2, 3]")),
        Head::of(&term("list(1, 2, 3)"))
    );
    check_head("1", expect!["1"]);
    check_head("x", expect!["x"]);
}

fn check_args(text: &str, expected: Expect) {
    let items: Vec<String> = args(&term(text)).iter().map(ToString::to_string).collect();
    expected.assert_eq(&items.join(" | "));
}

#[test]
fn args_of_terms() {
    check_args("inc(1)", expect!["1"]);
    check_args("add(1, 2)", expect!["1 | 2"]);
    check_args("1", expect![""]);
    check_args("[1, 2, 3]", expect!["1 | 2 | 3"]);
}

#[test]
fn traverser() {
    let term = term("add(inc(1), double(inc(1), 2))");
    let mut walk = Traverser::new(&term);
    let copy = walk.clone();
    let current = |walk: &Traverser<'_>| walk.current_head().unwrap().to_string();
    assert_eq!(current(&walk), "add/2");
    walk.next_term();
    assert_eq!(current(&walk), "inc/1");
    // A copy does not advance with the original.
    assert_eq!(current(&copy), "add/2");
    walk.skip_subterm();
    assert_eq!(current(&walk), "double/2");
    walk.next_term();
    assert_eq!(current(&walk), "inc/1");
    let heads: Vec<String> = copy.map(|head| head.to_string()).collect();
    expect!["add/2 inc/1 1 double/2 inc/1 1 2"].assert_eq(&heads.join(" "));
    // Past the end the walk stays at the end.
    let leaf = common::term("1");
    let mut walk = Traverser::new(&leaf);
    walk.next_term();
    assert_eq!(walk.current(), None);
    walk.skip_subterm();
    assert_eq!(walk.current(), None);
}
