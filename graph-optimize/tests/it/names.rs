//! dask's names: `key_split` on dask's examples (`test_key_split` in
//! `dask/tests/test_utils.py` and the quirks the research notes list), and
//! the two renamers.

use crate::common::key;
use graph_core::Key;
use graph_optimize::{fused_linear_name, fused_name, key_split};

#[test]
fn key_split_cases() {
    let long = format!("v-l{}ng", "o".repeat(83));
    let cases: Vec<(Key, &str)> = vec![
        (Key::from("x"), "x"),
        (Key::from("x-1"), "x"),
        (Key::from("x-1-2-3"), "x"),
        (Key::from(("x-2", 1)), "x"),
        (Key::from("('x-2', 1)"), "x"),
        (Key::from("('x', 1)"), "x"),
        (Key::from("hello-world-1"), "hello-world"),
        (Key::from("ae05086432ca935f6eba409a8ecd4896"), "data"),
        (
            Key::from("<module.submodule.myclass object at 0xdaf372"),
            "myclass",
        ),
        (Key::from("x-abcdefab"), "x"),
        (Key::from("_(x)"), "x"),
        (Key::from("x--y"), "x"),
        (Key::from("x-y_z"), "x"),
        (Key::from("x-y-2-z"), "x-y"),
        (Key::from("1-abc"), "1-abc"),
        (Key::from("a,b-c"), "a,b-c"),
        (Key::from("x-abcdef"), "x-abcdef"),
        (Key::from("x-ghijklmn"), "x-ghijklmn"),
        (Key::from("finalize-abc123"), "finalize"),
        (
            Key::tuple([Key::tuple([Key::from("y-1")]), Key::from(2)]),
            "y",
        ),
        (Key::from("'x'"), "x"),
        (Key::from("b10"), "b10"),
        (
            Key::from("cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88"),
            "cholesky-upper",
        ),
        (Key::from(long.as_str()), long.as_str()),
        // The hex test looks at a prefix only: any 8-letter word starting
        // with a-f counts as a hash.
        (Key::from("x-database"), "x"),
        (Key::from("x-Abcdefgh"), "x-Abcdefgh"),
        // What dask's version raises on gives "Other".
        (Key::from(1), "Other"),
        (Key::from(1.5), "Other"),
        (Key::from(""), "Other"),
        (Key::from("_"), "Other"),
        (Key::from("-x"), "Other"),
        (Key::from("<>"), "Other"),
        (Key::tuple([]), "Other"),
    ];
    for (key, expected) in cases {
        assert_eq!(key_split(&key), expected, "{key}");
    }
}

#[test]
fn fuse_linear_names_read_upstream_to_downstream() {
    let cases: Vec<(Vec<Key>, Option<Key>)> = vec![
        (
            vec![key("w"), key("x"), key("y"), key("z")],
            Some(key("z-y-x-w")),
        ),
        (
            vec![key("('w', 1)"), key("('x', 2)"), key("y-1")],
            Some(key("('y-x-w', 1)")),
        ),
        // No deduplication, no sorting, no limit.
        (vec![key("a"), key("a-1"), key("a-2")], Some(key("a-a-a"))),
        (vec![key("1"), key("x")], None),
        (vec![], None),
    ];
    for (chain, expected) in cases {
        assert_eq!(fused_linear_name(&chain), expected, "{chain:?}");
    }
}

#[test]
fn fuse_names_are_sorted_distinct_and_end_with_the_root() {
    let cases: Vec<(Vec<Key>, Option<Key>)> = vec![
        (vec![key("b1"), key("b2"), key("c")], Some(key("b1-b2-c"))),
        (
            vec![key("a"), key("a-1"), key("a-2"), key("b")],
            Some(key("a-b")),
        ),
        (vec![key("b-1"), key("b-2"), key("b-3")], Some(key("b-3"))),
        (
            vec![key("('b-1', 0)"), key("('a', 1)")],
            Some(key("('b-a', 1)")),
        ),
        // Plain code-point order: "b10" < "b9".
        (
            vec![key("b9"), key("b10"), key("c5")],
            Some(key("b10-b9-c5")),
        ),
        (vec![key("x"), key("2")], None),
        (vec![], None),
    ];
    for (keys, expected) in cases {
        assert_eq!(fused_name(&keys), expected, "{keys:?}");
    }
}
