//! `fuse_linear` (and `fuse` where dask's `fuse2` helper checks both):
//! dask's `test_fuse` and `test_fuse_keys`.

use crate::common;
use crate::common::{Evaluator, graph, keys, show_checked};
use expect_test::{Expect, expect};
use graph_core::TaskGraph;
use graph_optimize::{FuseConfig, FuseLinearConfig, fuse, fuse_linear};

const G1: &str = "
    w = inc(x)
    x = inc(y)
    y = inc(z)
    z = add(a, b)
    a = 1
    b = 2
";

const G2: &str = "
    NEW = inc(y)
    w = inc(x)
    x = inc(y)
    y = inc(z)
    z = add(a, b)
    a = 1
    b = 2
";

const G3: &str = "
    v = inc(y)
    u = inc(w)
    w = inc(x)
    x = inc(y)
    y = inc(z)
    z = add(a, b)
    a = inc(c)
    b = inc(d)
    c = 1
    d = 2
";

const G4: &str = "
    a = inc(x)
    b = inc(x)
    c = inc(x)
    d = inc(c)
    x = inc(y)
    y = 0
";

const G5: &str = "
    a = 1
    b = inc(a)
    c = add(b, b)
";

fn run_linear(g: &TaskGraph, keys: Option<&[&str]>, rename_keys: bool) -> TaskGraph {
    let config = FuseLinearConfig {
        keys: keys.map(common::keys),
        rename_keys,
        ..FuseLinearConfig::default()
    };
    fuse_linear(g, &config).unwrap()
}

fn run_fuse(g: &TaskGraph, keys: Option<&[&str]>, rename_keys: bool) -> TaskGraph {
    let config = FuseConfig {
        keys: keys.map(common::keys),
        rename_keys,
        ..FuseConfig::default()
    };
    fuse(g, &config).unwrap()
}

/// Checks one graph as dask's `fuse2` does: without renaming, `fuse_linear`
/// and `fuse` (ave_width 1) agree; with renaming, `fuse_linear` is checked
/// (dask asserts it) and so is `fuse` (the outputs dask gives, recorded).
fn check(text: &str, keys: Option<&[&str]>, plain: Expect, linear: Expect, fused: Expect) {
    let g = graph(text);
    let a = run_linear(&g, keys, false);
    plain.assert_eq(&show_checked(&a));
    let b = run_fuse(&g, keys, false);
    assert_eq!(
        show_checked(&a),
        show_checked(&b),
        "fuse and fuse_linear differ"
    );
    let renamed = run_linear(&g, keys, true);
    linear.assert_eq(&show_checked(&renamed));
    let renamed_fused = run_fuse(&g, keys, true);
    fused.assert_eq(&show_checked(&renamed_fused));
    // Every key still in every output computes what it did.
    let before = Evaluator::new(&g);
    for out in [&a, &b, &renamed, &renamed_fused] {
        let after = Evaluator::new(out);
        for (key, _) in out.iter() {
            if g.get(key).is_some() {
                assert_eq!(before.get(key), after.get(key), "{key}");
            }
        }
    }
}

#[test]
fn fuse_g1() {
    check(
        G1,
        None,
        expect![[r#"
            a = 1
            b = 2
            w = inc(inc(inc(add(a, b))))
        "#]],
        expect![[r#"
            a = 1
            b = 2
            w = z-y-x-w
            z-y-x-w = inc(inc(inc(add(a, b))))
        "#]],
        expect![[r#"
            a = 1
            b = 2
            w = x-y-z-w
            x-y-z-w = inc(inc(inc(add(a, b))))
        "#]],
    );
}

#[test]
fn fuse_g2() {
    check(
        G2,
        None,
        expect![[r#"
            NEW = inc(y)
            a = 1
            b = 2
            w = inc(inc(y))
            y = inc(add(a, b))
        "#]],
        // fuse_linear points references at the renamed tasks.
        expect![[r#"
            NEW = inc(z-y)
            a = 1
            b = 2
            w = x-w
            x-w = inc(inc(z-y))
            y = z-y
            z-y = inc(add(a, b))
        "#]],
        // fuse leaves them on the aliases.
        expect![[r#"
            NEW = inc(y)
            a = 1
            b = 2
            w = x-w
            x-w = inc(inc(y))
            y = z-y
            z-y = inc(add(a, b))
        "#]],
    );
}

#[test]
fn fuse_g3() {
    check(
        G3,
        None,
        expect![[r#"
            a = inc(1)
            b = inc(2)
            u = inc(inc(inc(y)))
            v = inc(y)
            y = inc(add(a, b))
        "#]],
        expect![[r#"
            a = c-a
            b = d-b
            c-a = inc(1)
            d-b = inc(2)
            u = x-w-u
            v = inc(z-y)
            x-w-u = inc(inc(inc(z-y)))
            y = z-y
            z-y = inc(add(c-a, d-b))
        "#]],
        expect![[r#"
            a = c-a
            b = d-b
            c-a = inc(1)
            d-b = inc(2)
            u = w-x-u
            v = inc(y)
            w-x-u = inc(inc(inc(y)))
            y = z-y
            z-y = inc(add(a, b))
        "#]],
    );
}

#[test]
fn fuse_g4() {
    check(
        G4,
        None,
        expect![[r#"
            a = inc(x)
            b = inc(x)
            d = inc(inc(x))
            x = inc(0)
        "#]],
        expect![[r#"
            a = inc(y-x)
            b = inc(y-x)
            c-d = inc(inc(y-x))
            d = c-d
            x = y-x
            y-x = inc(0)
        "#]],
        expect![[r#"
            a = inc(x)
            b = inc(x)
            c-d = inc(inc(x))
            d = c-d
            x = y-x
            y-x = inc(0)
        "#]],
    );
}

#[test]
fn fuse_g5() {
    // `c` uses `b` twice, so `b` is not fused into it.
    check(
        G5,
        None,
        expect![[r#"
            b = inc(1)
            c = add(b, b)
        "#]],
        expect![[r#"
            a-b = inc(1)
            b = a-b
            c = add(a-b, a-b)
        "#]],
        expect![[r#"
            a-b = inc(1)
            b = a-b
            c = add(b, b)
        "#]],
    );
}

#[test]
fn fuse_keys_g1() {
    check(
        "
        a = 1
        b = inc(a)
        c = inc(b)
        ",
        Some(&["b"]),
        expect![[r#"
            b = inc(1)
            c = inc(b)
        "#]],
        expect![[r#"
            a-b = inc(1)
            b = a-b
            c = inc(a-b)
        "#]],
        expect![[r#"
            a-b = inc(1)
            b = a-b
            c = inc(b)
        "#]],
    );
}

#[test]
fn fuse_keys_g2() {
    check(
        G1,
        Some(&["x", "z"]),
        expect![[r#"
            a = 1
            b = 2
            w = inc(x)
            x = inc(inc(z))
            z = add(a, b)
        "#]],
        expect![[r#"
            a = 1
            b = 2
            w = inc(y-x)
            x = y-x
            y-x = inc(inc(z))
            z = add(a, b)
        "#]],
        expect![[r#"
            a = 1
            b = 2
            w = inc(x)
            x = y-x
            y-x = inc(inc(z))
            z = add(a, b)
        "#]],
    );
}

#[test]
fn aliases_not_in_keys_are_dropped() {
    // dask drops the aliases of unrequested keys when `keys` is given...
    let g = graph(G3);
    let with_keys = run_linear(&g, Some(&["u", "v"]), true);
    expect![[r#"
        c-a = inc(1)
        d-b = inc(2)
        u = x-w-u
        v = inc(z-y)
        x-w-u = inc(inc(inc(z-y)))
        z-y = inc(add(c-a, d-b))
    "#]]
    .assert_eq(&show_checked(&with_keys));
    // ... and, better than dask, on request without keys too.
    let config = FuseLinearConfig {
        drop_aliases: true,
        ..FuseLinearConfig::default()
    };
    let dropped = fuse_linear(&g, &config).unwrap();
    expect![[r#"
        c-a = inc(1)
        d-b = inc(2)
        v = inc(z-y)
        x-w-u = inc(inc(inc(z-y)))
        z-y = inc(add(c-a, d-b))
    "#]]
    .assert_eq(&show_checked(&dropped));
}

#[test]
fn opaque_tasks_are_never_fused() {
    let mut g = graph("a = 1\nb = inc(a)");
    g.insert_opaque("o", keys(&["b"])).unwrap();
    g.insert("d", common::term("inc(o)")).unwrap();
    g.insert("e", common::term("inc(d)")).unwrap();
    let fused = run_linear(&g, None, false);
    expect![[r#"
        b = inc(1)
        e = inc(inc(o))
        o = <opaque>(b)
    "#]]
    .assert_eq(&show_checked(&fused));
}
