//! `fuse`'s width heuristics: dask's `test_fuse_reductions_single_input`
//! and `test_fuse_reductions_multiple_input`, one test per graph, each with
//! every `(ave_width, rename_keys)` sub-case. `f(*args) = args`; dask's expected
//! graphs are given here in our notation (a bare name is a reference).

use crate::common::{Evaluator, graph, show, show_checked};
use expect_test::{Expect, expect};
use graph_optimize::{FuseConfig, fuse};

/// Runs `fuse` with each `(ave_width, rename_keys)` and the other options at
/// dask's defaults; `None` means the graph comes back unchanged.
fn check(text: &str, cases: Vec<(f64, bool, Option<Expect>)>) {
    let g = graph(text);
    let before = Evaluator::new(&g);
    for (ave_width, rename_keys, expected) in cases {
        let config = FuseConfig {
            ave_width,
            rename_keys,
            ..FuseConfig::default()
        };
        let fused = fuse(&g, &config).unwrap();
        let shown = show_checked(&fused);
        match expected {
            None => assert_eq!(
                shown,
                show(&g),
                "ave_width={ave_width} rename_keys={rename_keys}"
            ),
            Some(expected) => expected.assert_eq(&shown),
        }
        let after = Evaluator::new(&fused);
        for (key, _) in g.iter() {
            if fused.get(key).is_some() {
                assert_eq!(before.get(key), after.get(key), "{key}");
            }
        }
    }
}

#[test]
fn single_input_g1() {
    // dask's test_fuse_reductions_single_input, graph G1.
    let g1 = "
        a = 1
        b1 = f(a)
        b2 = f(a, a)
        c = f(b1, b2)
    ";
    check(
        g1,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c = f(f(a), f(a, a))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c = f(f(a), f(a, a))
                    c = b1-b2-c
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g2() {
    // dask's test_fuse_reductions_single_input, graph G2.
    let g2 = "
        a = 1
        b1 = f(a)
        b2 = f(a, a)
        b3 = f(a, a, a)
        c = f(b1, b2, b3)
    ";
    check(
        g2,
        vec![
            (2.9, false, None),
            (2.9, true, None),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c = f(f(a), f(a, a), f(a, a, a))
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-c = f(f(a), f(a, a), f(a, a, a))
                    c = b1-b2-b3-c
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g3() {
    // dask's test_fuse_reductions_single_input, graph G3.
    let g3 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        c = f(a, b1, b2)
    ";
    check(
        g3,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c = f(a, f(a), f(a))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c = f(a, f(a), f(a))
                    c = b1-b2-c
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g4() {
    // dask's test_fuse_reductions_single_input, graph G4.
    let g4 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        c = f(b1, b2)
        d1 = f(c)
        d2 = f(c)
        e = f(d1, d2)
    ";
    check(
        g4,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c = f(f(a), f(a))
                    e = f(f(c), f(c))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c = f(f(a), f(a))
                    c = b1-b2-c
                    d1-d2-e = f(f(c), f(c))
                    e = d1-d2-e
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g5() {
    // dask's test_fuse_reductions_single_input, graph G5.
    let g5 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        b3 = f(a)
        b4 = f(a)
        c1 = f(b1, b2)
        c2 = f(b3, b4)
        d = f(c1, c2)
    ";
    check(
        g5,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    d = f(c1, c2)
                "#]]),
            ),
            (
                2.9,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    d = f(c1, c2)
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    d = f(c1, c2)
                "#]]),
            ),
            (
                2.9,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    d = f(c1, c2)
                "#]]),
            ),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a = 1
                    d = f(f(f(a), f(a)), f(f(a), f(a)))
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-c1-c2-d = f(f(f(a), f(a)), f(f(a), f(a)))
                    d = b1-b2-b3-b4-c1-c2-d
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g6() {
    // dask's test_fuse_reductions_single_input, graph G6.
    let g6 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        b3 = f(a)
        b4 = f(a)
        b5 = f(a)
        b6 = f(a)
        b7 = f(a)
        b8 = f(a)
        c1 = f(b1, b2)
        c2 = f(b3, b4)
        c3 = f(b5, b6)
        c4 = f(b7, b8)
        d1 = f(c1, c2)
        d2 = f(c3, c4)
        e = f(d1, d2)
    ";
    check(
        g6,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    c3 = f(f(a), f(a))
                    c4 = f(f(a), f(a))
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    e = f(d1, d2)
                "#]]),
            ),
            (
                2.9,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    c3 = f(f(a), f(a))
                    c4 = f(f(a), f(a))
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    e = f(d1, d2)
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    b5-b6-c3 = f(f(a), f(a))
                    b7-b8-c4 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    c3 = b5-b6-c3
                    c4 = b7-b8-c4
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    e = f(d1, d2)
                "#]]),
            ),
            (
                2.9,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    b5-b6-c3 = f(f(a), f(a))
                    b7-b8-c4 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    c3 = b5-b6-c3
                    c4 = b7-b8-c4
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    e = f(d1, d2)
                "#]]),
            ),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a = 1
                    d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    e = f(d1, d2)
                "#]]),
            ),
            (
                4.6,
                false,
                Some(expect![[r#"
                    a = 1
                    d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    e = f(d1, d2)
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-c1-c2-d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b5-b6-b7-b8-c3-c4-d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d1 = b1-b2-b3-b4-c1-c2-d1
                    d2 = b5-b6-b7-b8-c3-c4-d2
                    e = f(d1, d2)
                "#]]),
            ),
            (
                4.6,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-c1-c2-d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b5-b6-b7-b8-c3-c4-d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d1 = b1-b2-b3-b4-c1-c2-d1
                    d2 = b5-b6-b7-b8-c3-c4-d2
                    e = f(d1, d2)
                "#]]),
            ),
            (
                4.7,
                false,
                Some(expect![[r#"
                    a = 1
                    e = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                "#]]),
            ),
            (
                4.7,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    e = b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g7() {
    // dask's test_fuse_reductions_single_input, graph G7.
    let g7 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        b3 = f(a)
        b4 = f(a)
        b5 = f(a)
        b6 = f(a)
        b7 = f(a)
        b8 = f(a)
        b9 = f(a)
        b10 = f(a)
        b11 = f(a)
        b12 = f(a)
        b13 = f(a)
        b14 = f(a)
        b15 = f(a)
        b16 = f(a)
        c1 = f(b1, b2)
        c2 = f(b3, b4)
        c3 = f(b5, b6)
        c4 = f(b7, b8)
        c5 = f(b9, b10)
        c6 = f(b11, b12)
        c7 = f(b13, b14)
        c8 = f(b15, b16)
        d1 = f(c1, c2)
        d2 = f(c3, c4)
        d3 = f(c5, c6)
        d4 = f(c7, c8)
        e1 = f(d1, d2)
        e2 = f(d3, d4)
        f = f(e1, e2)
    ";
    check(
        g7,
        vec![
            (1.9, false, None),
            (1.9, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    c3 = f(f(a), f(a))
                    c4 = f(f(a), f(a))
                    c5 = f(f(a), f(a))
                    c6 = f(f(a), f(a))
                    c7 = f(f(a), f(a))
                    c8 = f(f(a), f(a))
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    d3 = f(c5, c6)
                    d4 = f(c7, c8)
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                2.9,
                false,
                Some(expect![[r#"
                    a = 1
                    c1 = f(f(a), f(a))
                    c2 = f(f(a), f(a))
                    c3 = f(f(a), f(a))
                    c4 = f(f(a), f(a))
                    c5 = f(f(a), f(a))
                    c6 = f(f(a), f(a))
                    c7 = f(f(a), f(a))
                    c8 = f(f(a), f(a))
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    d3 = f(c5, c6)
                    d4 = f(c7, c8)
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b10-b9-c5 = f(f(a), f(a))
                    b11-b12-c6 = f(f(a), f(a))
                    b13-b14-c7 = f(f(a), f(a))
                    b15-b16-c8 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    b5-b6-c3 = f(f(a), f(a))
                    b7-b8-c4 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    c3 = b5-b6-c3
                    c4 = b7-b8-c4
                    c5 = b10-b9-c5
                    c6 = b11-b12-c6
                    c7 = b13-b14-c7
                    c8 = b15-b16-c8
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    d3 = f(c5, c6)
                    d4 = f(c7, c8)
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                2.9,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1 = f(f(a), f(a))
                    b10-b9-c5 = f(f(a), f(a))
                    b11-b12-c6 = f(f(a), f(a))
                    b13-b14-c7 = f(f(a), f(a))
                    b15-b16-c8 = f(f(a), f(a))
                    b3-b4-c2 = f(f(a), f(a))
                    b5-b6-c3 = f(f(a), f(a))
                    b7-b8-c4 = f(f(a), f(a))
                    c1 = b1-b2-c1
                    c2 = b3-b4-c2
                    c3 = b5-b6-c3
                    c4 = b7-b8-c4
                    c5 = b10-b9-c5
                    c6 = b11-b12-c6
                    c7 = b13-b14-c7
                    c8 = b15-b16-c8
                    d1 = f(c1, c2)
                    d2 = f(c3, c4)
                    d3 = f(c5, c6)
                    d4 = f(c7, c8)
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a = 1
                    d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d3 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d4 = f(f(f(a), f(a)), f(f(a), f(a)))
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                4.6,
                false,
                Some(expect![[r#"
                    a = 1
                    d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d3 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d4 = f(f(f(a), f(a)), f(f(a), f(a)))
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-c1-c2-d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b10-b11-b12-b9-c5-c6-d3 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b13-b14-b15-b16-c7-c8-d4 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b5-b6-b7-b8-c3-c4-d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d1 = b1-b2-b3-b4-c1-c2-d1
                    d2 = b5-b6-b7-b8-c3-c4-d2
                    d3 = b10-b11-b12-b9-c5-c6-d3
                    d4 = b13-b14-b15-b16-c7-c8-d4
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                4.6,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-c1-c2-d1 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b10-b11-b12-b9-c5-c6-d3 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b13-b14-b15-b16-c7-c8-d4 = f(f(f(a), f(a)), f(f(a), f(a)))
                    b5-b6-b7-b8-c3-c4-d2 = f(f(f(a), f(a)), f(f(a), f(a)))
                    d1 = b1-b2-b3-b4-c1-c2-d1
                    d2 = b5-b6-b7-b8-c3-c4-d2
                    d3 = b10-b11-b12-b9-c5-c6-d3
                    d4 = b13-b14-b15-b16-c7-c8-d4
                    e1 = f(d1, d2)
                    e2 = f(d3, d4)
                    f = f(e1, e2)
                "#]]),
            ),
            (
                4.7,
                false,
                Some(expect![[r#"
                    a = 1
                    e1 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    e2 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    f = f(e1, e2)
                "#]]),
            ),
            (
                7.4,
                false,
                Some(expect![[r#"
                    a = 1
                    e1 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    e2 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    f = f(e1, e2)
                "#]]),
            ),
            (
                4.7,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e1 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    b10-b11-b12-b13-b14-b15-b16-b9-c5-c6-c7-c8-d3-d4-e2 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    e1 = b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e1
                    e2 = b10-b11-b12-b13-b14-b15-b16-b9-c5-c6-c7-c8-d3-d4-e2
                    f = f(e1, e2)
                "#]]),
            ),
            (
                7.4,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e1 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    b10-b11-b12-b13-b14-b15-b16-b9-c5-c6-c7-c8-d3-d4-e2 = f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a))))
                    e1 = b1-b2-b3-b4-b5-b6-b7-b8-c1-c2-c3-c4-d1-d2-e1
                    e2 = b10-b11-b12-b13-b14-b15-b16-b9-c5-c6-c7-c8-d3-d4-e2
                    f = f(e1, e2)
                "#]]),
            ),
            (
                7.5,
                false,
                Some(expect![[r#"
                    a = 1
                    f = f(f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a)))), f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a)))))
                "#]]),
            ),
            (
                7.5,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b10-b11-b12-b13-b14-b15-b16-b2-b3-b4-b5-b6-b7-b8-b9-c1-c2-c3-c4-c5-c6-c7-c8-d1-d2-d3-d4-e1-e2-f = f(f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a)))), f(f(f(f(a), f(a)), f(f(a), f(a))), f(f(f(a), f(a)), f(f(a), f(a)))))
                    f = b1-b10-b11-b12-b13-b14-b15-b16-b2-b3-b4-b5-b6-b7-b8-b9-c1-c2-c3-c4-c5-c6-c7-c8-d1-d2-d3-d4-e1-e2-f
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g8() {
    // dask's test_fuse_reductions_single_input, graph G8.
    let g8 = "
        a = 1
        b = f(a)
    ";
    check(
        g8,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    b = f(1)
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a-b = f(1)
                    b = a-b
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g9() {
    // dask's test_fuse_reductions_single_input, graph G9.
    let g9 = "
        a = 1
        b = f(a)
        c = f(b)
        d = f(c)
    ";
    check(
        g9,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    d = f(f(f(1)))
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a-b-c-d = f(f(f(1)))
                    d = a-b-c-d
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g10() {
    // dask's test_fuse_reductions_single_input, graph G10.
    let g10 = "
        a = 1
        b = f(a)
        c = f(a, b)
        d = f(a, c)
    ";
    check(
        g10,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    a = 1
                    d = f(a, f(a, f(a)))
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b-c-d = f(a, f(a, f(a)))
                    d = b-c-d
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g11() {
    // dask's test_fuse_reductions_single_input, graph G11.
    let g11 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        c1 = f(b1)
        d1 = f(c1)
        e1 = f(d1)
        f = f(e1, b2)
    ";
    check(
        g11,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    a = 1
                    b2 = f(a)
                    e1 = f(f(f(f(a))))
                    f = f(e1, b2)
                "#]]),
            ),
            (
                1.9,
                false,
                Some(expect![[r#"
                    a = 1
                    b2 = f(a)
                    e1 = f(f(f(f(a))))
                    f = f(e1, b2)
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-c1-d1-e1 = f(f(f(f(a))))
                    b2 = f(a)
                    e1 = b1-c1-d1-e1
                    f = f(e1, b2)
                "#]]),
            ),
            (
                1.9,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-c1-d1-e1 = f(f(f(f(a))))
                    b2 = f(a)
                    e1 = b1-c1-d1-e1
                    f = f(e1, b2)
                "#]]),
            ),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    f = f(f(f(f(f(a)))), f(a))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1-d1-e1-f = f(f(f(f(f(a)))), f(a))
                    f = b1-b2-c1-d1-e1-f
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g12() {
    // dask's test_fuse_reductions_single_input, graph G12.
    let g12 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        c1 = f(a, b1)
        d1 = f(a, c1)
        e1 = f(a, d1)
        f = f(a, e1, b2)
    ";
    check(
        g12,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    a = 1
                    b2 = f(a)
                    e1 = f(a, f(a, f(a, f(a))))
                    f = f(a, e1, b2)
                "#]]),
            ),
            (
                1.9,
                false,
                Some(expect![[r#"
                    a = 1
                    b2 = f(a)
                    e1 = f(a, f(a, f(a, f(a))))
                    f = f(a, e1, b2)
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-c1-d1-e1 = f(a, f(a, f(a, f(a))))
                    b2 = f(a)
                    e1 = b1-c1-d1-e1
                    f = f(a, e1, b2)
                "#]]),
            ),
            (
                1.9,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-c1-d1-e1 = f(a, f(a, f(a, f(a))))
                    b2 = f(a)
                    e1 = b1-c1-d1-e1
                    f = f(a, e1, b2)
                "#]]),
            ),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a = 1
                    f = f(a, f(a, f(a, f(a, f(a)))), f(a))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-b2-c1-d1-e1-f = f(a, f(a, f(a, f(a, f(a)))), f(a))
                    f = b1-b2-c1-d1-e1-f
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g13() {
    // dask's test_fuse_reductions_single_input, graph G13.
    let g13 = "
        a = 1
        b1 = f(a)
        b2 = f(a)
        b3 = f(a)
        c1 = f(b1)
        c2 = f(b2)
        c3 = f(b3)
        d1 = f(c1)
        d2 = f(c2)
        d3 = f(c3)
        e = f(d1, d2, d3)
        f = f(e)
        g = f(f)
    ";
    check(
        g13,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    a = 1
                    d1 = f(f(f(a)))
                    d2 = f(f(f(a)))
                    d3 = f(f(f(a)))
                    g = f(f(f(d1, d2, d3)))
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a = 1
                    b1-c1-d1 = f(f(f(a)))
                    b2-c2-d2 = f(f(f(a)))
                    b3-c3-d3 = f(f(f(a)))
                    d1 = b1-c1-d1
                    d2 = b2-c2-d2
                    d3 = b3-c3-d3
                    e-f-g = f(f(f(d1, d2, d3)))
                    g = e-f-g
                "#]]),
            ),
        ],
    );
}

#[test]
fn single_input_g14() {
    // dask's test_fuse_reductions_single_input, graph G14.
    let g14 = "
        a = 1
        b = f(a)
        c = f(b)
        d = f(b, c)
        e = f(d)
        f = f(e)
        g = f(d, f)
    ";
    check(
        g14,
        vec![
            (
                1.0,
                false,
                Some(expect![[r#"
                    b = f(1)
                    d = f(b, f(b))
                    g = f(d, f(f(d)))
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a-b = f(1)
                    b = a-b
                    c-d = f(b, f(b))
                    d = c-d
                    e-f-g = f(d, f(f(d)))
                    g = e-f-g
                "#]]),
            ),
        ],
    );
}

#[test]
fn multiple_input_g1() {
    // dask's test_fuse_reductions_multiple_input, graph G1.
    let g1 = "
        a1 = 1
        a2 = 2
        b = f(a1, a2)
        c = f(b)
    ";
    check(
        g1,
        vec![
            (
                2.0,
                false,
                Some(expect![[r#"
                    c = f(f(1, 2))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a1-a2-b-c = f(f(1, 2))
                    c = a1-a2-b-c
                "#]]),
            ),
            (
                1.0,
                false,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    c = f(f(a1, a2))
                "#]]),
            ),
            (
                1.0,
                true,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b-c = f(f(a1, a2))
                    c = b-c
                "#]]),
            ),
        ],
    );
}

#[test]
fn multiple_input_g2() {
    // dask's test_fuse_reductions_multiple_input, graph G2.
    let g2 = "
        a1 = 1
        a2 = 2
        b1 = f(a1)
        b2 = f(a1, a2)
        b3 = f(a2)
        c = f(b1, b2, b3)
    ";
    check(
        g2,
        vec![
            (1.0, false, None),
            (2.9, false, None),
            (1.0, true, None),
            (2.9, true, None),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    c = f(f(a1), f(a1, a2), f(a2))
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b1-b2-b3-c = f(f(a1), f(a1, a2), f(a2))
                    c = b1-b2-b3-c
                "#]]),
            ),
        ],
    );
}

#[test]
fn multiple_input_g3() {
    // dask's test_fuse_reductions_multiple_input, graph G3.
    let g3 = "
        a1 = 1
        a2 = 2
        b1 = f(a1)
        b2 = f(a1, a2)
        b3 = f(a2)
        c1 = f(b1, b2)
        c2 = f(b2, b3)
    ";
    check(
        g3,
        vec![
            (1.0, false, None),
            (1.0, true, None),
            (
                2.0,
                false,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b2 = f(a1, a2)
                    c1 = f(f(a1), b2)
                    c2 = f(b2, f(a2))
                "#]]),
            ),
            (
                2.0,
                true,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b1-c1 = f(f(a1), b2)
                    b2 = f(a1, a2)
                    b3-c2 = f(b2, f(a2))
                    c1 = b1-c1
                    c2 = b3-c2
                "#]]),
            ),
        ],
    );
}

#[test]
fn multiple_input_g4() {
    // dask's test_fuse_reductions_multiple_input, graph G4.
    // Dask notes that a more aggressive heuristic could fuse G4 at ave_width 2.
    let g4 = "
        a1 = 1
        a2 = 2
        b1 = f(a1)
        b2 = f(a1, a2)
        b3 = f(a2)
        c1 = f(b1, b2)
        c2 = f(b2, b3)
        d = f(c1, c2)
    ";
    check(
        g4,
        vec![
            (1.0, false, None),
            (1.0, true, None),
            (
                3.0,
                false,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b2 = f(a1, a2)
                    d = f(f(f(a1), b2), f(b2, f(a2)))
                "#]]),
            ),
            (
                3.0,
                true,
                Some(expect![[r#"
                    a1 = 1
                    a2 = 2
                    b1-b3-c1-c2-d = f(f(f(a1), b2), f(b2, f(a2)))
                    b2 = f(a1, a2)
                    d = b1-b3-c1-c2-d
                "#]]),
            ),
        ],
    );
}
