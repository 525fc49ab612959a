//! `inline`: dask's `test_inline` and `test_inline_cull_dependencies`.

use crate::common;
use crate::common::{graph, key, keys, show, show_checked};
use expect_test::{Expect, expect};
use graph_optimize::{Error, cull, inline};

const G1: &str = "
    a = 1
    b = inc(a)
    c = inc(b)
    d = add(a, c)
";

const G2: &str = "
    x = 1
    y = inc(x)
    z = add(x, y)
";

// dask writes the aliases `'b': 'a'` as strings equal to a key; ours are
// explicit references.
const G3: &str = "
    a = 1
    b = a
    c = b
    d = [a, b, c]
    e = add(len(d), a)
";

#[test]
fn inline_cases() {
    let cases: Vec<(&str, &[&str], bool, Expect)> = vec![
        // Only the constant `a` is inlined.
        (
            G1,
            &[],
            true,
            expect![[r#"
                a = 1
                b = inc(1)
                c = inc(b)
                d = add(1, c)
            "#]],
        ),
        // Inlined values are fully expanded.
        (
            G1,
            &["a", "b", "c"],
            true,
            expect![[r#"
                a = 1
                b = inc(1)
                c = inc(inc(1))
                d = add(1, inc(inc(1)))
            "#]],
        ),
        (
            G2,
            &[],
            true,
            expect![[r#"
                x = 1
                y = inc(1)
                z = add(1, y)
            "#]],
        ),
        (
            G2,
            &["y"],
            true,
            expect![[r#"
                x = 1
                y = inc(1)
                z = add(1, inc(1))
            "#]],
        ),
        (
            G2,
            &["y"],
            false,
            expect![[r#"
                x = 1
                y = inc(x)
                z = add(x, inc(x))
            "#]],
        ),
        // Aliases count as constants; `d` is inlined into the nested call.
        (
            G3,
            &["d"],
            true,
            expect![[r#"
                a = 1
                b = 1
                c = 1
                d = [1, 1, 1]
                e = add(len([1, 1, 1]), 1)
            "#]],
        ),
        (
            G3,
            &["a"],
            false,
            expect![[r#"
                a = 1
                b = 1
                c = b
                d = [1, b, c]
                e = add(len(d), 1)
            "#]],
        ),
    ];
    for (text, inlined, constants, expected) in cases {
        let result = inline(&graph(text), &keys(inlined), constants).unwrap();
        expected.assert_eq(&show_checked(&result));
    }
}

#[test]
fn takes_the_graph_cull_returned() {
    let culled = cull(&graph(G3), &keys(&["d", "e"])).unwrap();
    let result = inline(&culled, &keys(&["b"]), true).unwrap();
    // `d` is a list with references, so not a constant, and stays.
    expect![[r#"
        a = 1
        b = 1
        c = 1
        d = [1, 1, 1]
        e = add(len(d), 1)
    "#]]
    .assert_eq(&show_checked(&result));
}

#[test]
fn a_graph_changed_after_a_pass_is_read_afresh() {
    // A pass hands its output the references it knows; changing the output
    // drops them, so the next pass reads the changed bodies.
    let mut culled = cull(&graph(G3), &keys(&["d", "e"])).unwrap();
    let e = culled.node_id(&key("e")).unwrap();
    culled.task_mut(e).body = graph_core::Body::Term(common::term("add(c, c)"));
    expect![[r#"
        a = 1
        b = 1
        c = 1
        d = [1, 1, 1]
        e = add(1, 1)
    "#]]
    .assert_eq(&show_checked(&inline(&culled, &[], true).unwrap()));
    culled.insert("f", common::term("inc(ghost)")).unwrap();
    let err = inline(&culled, &[], true).unwrap_err();
    assert!(matches!(err, Error::Graph(_)), "{err}");
}

#[test]
fn an_unknown_key_is_an_error_and_opaque_tasks_stay() {
    let err = inline(&graph(G1), &keys(&["nope"]), true).unwrap_err();
    assert_eq!(err.to_string(), "unknown key 'nope': no task has it");
    // An opaque task is never inlined, and keeps its reference to what is.
    let mut g = graph("a = 1\nb = inc(o)");
    g.insert_opaque("o", vec![graph_core::Key::from("a")])
        .unwrap();
    g.insert("c", common::term("add(o, a)")).unwrap();
    let result = inline(&g, &keys(&["o", "b"]), true).unwrap();
    expect![[r#"
        a = 1
        b = inc(o)
        c = add(o, 1)
        o = <opaque>(a)
    "#]]
    .assert_eq(&show_checked(&result));
    assert_eq!(show(&g).lines().count(), 4);
}

#[test]
fn inlining_never_builds_a_term_too_deep_to_write() {
    // Terms this deep need more stack than a test thread has in a debug
    // build (the limit is set for the optimized one's default stack).
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(too_deep_to_write)
        .unwrap()
        .join()
        .unwrap();
}

fn too_deep_to_write() {
    use graph_core::json::MAX_NESTING;
    use graph_core::{Key, TaskGraph, Term};
    use graph_optimize::{OptimizeConfig, optimize};

    // `x` is a constant list nested as deep as a file may hold; `y = len(x)`
    // with `x` inlined would be one level deeper.
    let mut deep = Term::lit(0);
    for _ in 0..MAX_NESTING {
        deep = Term::list([deep]);
    }
    assert_eq!(deep.nesting(), MAX_NESTING);
    let mut graph = TaskGraph::new();
    graph.insert("x", deep).unwrap();
    graph
        .insert("y", Term::call("len", [Term::key("x")]))
        .unwrap();
    graph
        .insert("z", Term::call("len", [Term::list([Term::lit(1)])]))
        .unwrap();
    graph_core::json::to_string(&graph).expect("the input can be written");

    let inlined = inline(&graph, &[], true).unwrap();
    let y = inlined.get(&Key::from("y")).unwrap();
    assert_eq!(
        y.body.term().unwrap().to_string(),
        "len(x)",
        "y keeps its reference"
    );
    graph_core::json::to_string(&inlined).expect("the output can be written");

    let (optimized, _) = optimize(&graph, &OptimizeConfig::default()).unwrap();
    graph_core::json::to_string(&optimized).expect("the optimized graph can be written");

    // A shallow constant is still inlined.
    let mut graph = TaskGraph::new();
    graph
        .insert("x", Term::list([Term::list([Term::lit(0)])]))
        .unwrap();
    graph
        .insert("y", Term::call("len", [Term::key("x")]))
        .unwrap();
    let inlined = inline(&graph, &[], true).unwrap();
    let y = inlined.get(&Key::from("y")).unwrap();
    assert_eq!(y.body.term().unwrap().to_string(), "len([[0]])");
}
