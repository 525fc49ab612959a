//! `inline_functions`: dask's tests of it, and opaque dependents.

use crate::common;
use crate::common::{Evaluator, graph, key, keys, show, show_checked};
use expect_test::{Expect, expect};
use graph_core::Op;
use graph_optimize::inline_functions;

fn ops(names: &[&str]) -> Vec<Op> {
    names.iter().map(|name| Op::new(name)).collect()
}

#[test]
fn inline_functions_cases() {
    let cases: Vec<(&str, &[&str], &[&str], Expect)> = vec![
        // test_inline_functions: `i` goes; constants stay (the default is
        // not to inline them).
        (
            "
            out = add(i, d)
            i = inc(x)
            d = double(y)
            x = 1
            y = 1
            ",
            &[],
            &["inc"],
            expect![[r#"
                d = double(y)
                out = add(inc(x), d)
                x = 1
                y = 1
            "#]],
        ),
        // test_inline_ignores_curries_and_partials: dask's
        // `partial(add, 1)` applied to `x` is our `add(1, x)`; the partial
        // unwraps to `add`, which is fast, so `a` is inlined.
        (
            "
            x = 1
            y = 2
            a = add(1, x)
            b = inc(a)
            ",
            &[],
            &["add"],
            expect![[r#"
                b = inc(add(1, x))
                x = 1
                y = 2
            "#]],
        ),
        // test_inline_functions_non_hashable: dask's `nohash` is a function
        // that cannot be hashed, hence never fast; every op of ours can be
        // compared, so here it is simply an op that is not fast.
        (
            "
            a = 1
            b = inc(a)
            c = nohash(b)
            d = inc(c)
            ",
            &[],
            &["inc"],
            expect![[r#"
                a = 1
                c = nohash(inc(a))
                d = inc(c)
            "#]],
        ),
        // test_inline_doesnt_shrink_fast_functions_at_top: `x` has no
        // dependents, so it stays.
        (
            "
            x = inc(y)
            y = 1
            ",
            &[],
            &["inc"],
            expect![[r#"
                x = inc(y)
                y = 1
            "#]],
        ),
        // test_inline_traverses_lists
        (
            "
            out = sum([i, d])
            i = inc(x)
            d = double(y)
            x = 1
            y = 1
            ",
            &[],
            &["inc"],
            expect![[r#"
                d = double(y)
                out = sum([inc(x), d])
                x = 1
                y = 1
            "#]],
        ),
        // test_inline_functions_protects_output_keys
        (
            "
            x = inc(1)
            y = double(x)
            ",
            &[],
            &["inc"],
            expect![[r#"
                y = double(inc(1))
            "#]],
        ),
        (
            "
            x = inc(1)
            y = double(x)
            ",
            &["x"],
            &["inc"],
            expect![[r#"
                x = inc(1)
                y = double(x)
            "#]],
        ),
        // test_do_not_inline_legacy_hybrid, its tuple-only second part: the
        // alias `baz` is not a call, so it stays, pointing at `bar`.
        (
            "
            foo = func('a', 'b')
            bar = func2(foo, 'c')
            baz = bar
            ",
            &["baz"],
            &["func"],
            expect![[r#"
                bar = func2(func('a', 'b'), 'c')
                baz = bar
            "#]],
        ),
        // A fast task with several dependents is copied into each (dask has
        // no single-dependent rule).
        (
            "
            x = 1
            i = inc(x)
            a = add(i, 1)
            b = add(i, 2)
            ",
            &[],
            &["inc"],
            expect![[r#"
                a = add(inc(x), 1)
                b = add(inc(x), 2)
                x = 1
            "#]],
        ),
        // Every op anywhere in the task must be fast.
        (
            "
            x = 1
            i = inc(double(x))
            a = add(i, 1)
            ",
            &[],
            &["inc"],
            expect![[r#"
                a = add(i, 1)
                i = inc(double(x))
                x = 1
            "#]],
        ),
    ];
    for (text, outputs, fast, expected) in cases {
        let g = graph(text);
        let result = inline_functions(&g, &keys(outputs), &ops(fast)).unwrap();
        expected.assert_eq(&show_checked(&result));
        // What remains computes the same values.
        let (before, after) = (Evaluator::new(&g), Evaluator::new(&result));
        for (key, _) in result.iter() {
            if g.get(key).is_some() && !text.contains("nohash") {
                assert_eq!(before.get(key), after.get(key), "{key}");
            }
        }
    }
}

#[test]
fn no_fast_ops_returns_the_graph_unchanged() {
    // test_do_not_inline_legacy_hybrid, first part: results are the same.
    let g = graph(
        "
        out = func(i, d)
        i = func2(x)
        d = func(y)
        x = '1'
        y = '1'
        ",
    );
    let unchanged = inline_functions(&g, &[], &[]).unwrap();
    assert_eq!(unchanged, g);
    let inlined = inline_functions(&g, &[], &ops(&["func2"])).unwrap();
    expect![[r#"
        d = func(y)
        out = func(func2(x), d)
        x = '1'
        y = '1'
    "#]]
    .assert_eq(&show_checked(&inlined));
    let out = key("out");
    assert_eq!(
        Evaluator::new(&g).get(&out),
        Evaluator::new(&inlined).get(&out)
    );
}

#[test]
fn an_opaque_dependent_blocks_inlining() {
    // test_do_not_inline_legacy_hybrid, part 3: `bar` is a new-style task
    // (our opaque task), so `foo` is not inlined into it, with or without
    // fast ops.
    let mut g = graph("foo = func('a', 'b')");
    g.insert_opaque("bar", vec![key("foo")]).unwrap();
    g.insert("baz", common::term("bar")).unwrap();
    for fast in [&[][..], &["func"]] {
        let result = inline_functions(&g, &keys(&["baz"]), &ops(fast)).unwrap();
        assert_eq!(result, g);
    }
}

#[test]
fn a_task_with_an_opaque_dependent_is_not_inlined() {
    // dask at HEAD refuses to inline into a new-style task; our opaque task
    // cannot take a value either.
    let mut g = graph("x = 1\ni = inc(x)\nj = inc(x)\nout = add(i, j)");
    g.insert_opaque("o", vec![key("i")]).unwrap();
    let result = inline_functions(&g, &keys(&["out", "o"]), &ops(&["inc"])).unwrap();
    expect![[r#"
        i = inc(x)
        o = <opaque>(i)
        out = add(i, inc(x))
        x = 1
    "#]]
    .assert_eq(&show_checked(&result));
    assert_eq!(show(&g).lines().count(), 5);
}

/// A chain of cheap tasks is not folded into one term as deep as the chain:
/// that term's copies would take memory quadratic in the chain's length. Each
/// task is inlined only while its expanded term has at most `MAX_INLINED_TERM`
/// nodes, so a kept task's term is that plus its own call; the values do not
/// change.
#[test]
fn long_chains_of_cheap_ops_stay_bounded() {
    use graph_optimize::MAX_INLINED_TERM;

    let chain = graph_core::generate::chain(20_000);
    let last = chain.keys().last().unwrap().clone();
    let fast = ops(&["inc"]);
    let inlined = inline_functions(&chain, std::slice::from_ref(&last), &fast).unwrap();
    assert!(
        inlined.len() > 20_000 / MAX_INLINED_TERM,
        "{} tasks",
        inlined.len()
    );
    assert!(inlined.len() < 20_000 / 16, "{} tasks", inlined.len());
    for (_, task) in inlined.iter() {
        assert!(task.body.term().unwrap().size() <= MAX_INLINED_TERM + 1);
    }
    let small = graph_core::generate::chain(300);
    let small_last = small.keys().last().unwrap().clone();
    let inlined = inline_functions(&small, std::slice::from_ref(&small_last), &fast).unwrap();
    assert_eq!(
        Evaluator::new(&inlined).get(&small_last),
        Evaluator::new(&small).get(&small_last)
    );
}
