//! `fuse`: dask's remaining fuse tests (multiplicity, the stressed graph,
//! non-reducible values, switching fusion off, long names, and the
//! tuple-only parts of the legacy/new-style hybrid tests), plus opaque tasks
//! and dropping aliases.

use crate::common;
use crate::common::{Evaluator, graph, key, show, show_checked};
use expect_test::expect;
use graph_core::{Key, TaskGraph};
use graph_optimize::{FuseConfig, fuse};

fn with(keys: &[&str], ave_width: f64) -> FuseConfig {
    FuseConfig {
        keys: Some(common::keys(keys)),
        ave_width,
        ..FuseConfig::default()
    }
}

#[test]
fn a_task_used_twice_by_one_task_is_not_substituted_twice() {
    // test_donot_substitute_same_key_multiple_times. dask is handed the
    // dependencies as sets and recomputes them as lists to see that `C`
    // uses `B` twice; a graph's references always keep repeats.
    let g = graph(
        "
        A = 42
        B = inc_only_once(A)
        C = add(B, B)
        D = inc(C)
        ",
    );
    assert_eq!(g.references().unwrap().reference_count(), 4);
    let fused = fuse(&g, &with(&["A", "D"], 1.0)).unwrap();
    expect![[r#"
        A = 42
        B = inc_only_once(A)
        C-D = inc(add(B, B))
        D = C-D
    "#]]
    .assert_eq(&show_checked(&fused));
    let eval = Evaluator::new(&fused);
    assert_eq!(eval.get(&key("D")), common::V::Int(87));
    assert_eq!(eval.calls.borrow()["inc_only_once"], 1);
}

// dask's stressed graph (from a Cholesky decomposition). Its slices and the
// literal tuple `(10, 10)` are lists here: our keys and literals are
// distinct kinds, so only a tuple that is a key is a reference, which is what
// dask's quirk makes of `('cholesky-upper-…', 1, 0)`'s bare tuple value.
const STRESSED: &str = "
    array-original-27b9f9d257a80fa6adae06a98faf71eb = 1
    ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0))
    ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0) = f(('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1))
    ('array-27b9f9d257a80fa6adae06a98faf71eb', 0, 0) = f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[0, 10], [0, 10]])
    ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0) = ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1)
    ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1) = f(f(('array-27b9f9d257a80fa6adae06a98faf71eb', 1, 1), f([('cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0)])))
    ('cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0), ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1))
    ('array-27b9f9d257a80fa6adae06a98faf71eb', 0, 1) = f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[0, 10], [10, 20]])
    ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1))
    ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1) = f([10, 10])
    ('array-27b9f9d257a80fa6adae06a98faf71eb', 1, 1) = f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[10, 20], [10, 20]])
    ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0), ('array-27b9f9d257a80fa6adae06a98faf71eb', 0, 1))
    ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0) = f(('array-27b9f9d257a80fa6adae06a98faf71eb', 0, 0))
";

#[test]
fn stressed() {
    let g = graph(STRESSED);
    let keys: Vec<Key> = (0..2)
        .flat_map(|i| {
            (0..2)
                .map(move |j| Key::from(("cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88", i, j)))
        })
        .collect();
    let config = FuseConfig {
        keys: Some(keys),
        ave_width: 2.0,
        ..FuseConfig::default()
    };
    let fused = fuse(&g, &config).unwrap();
    // dask asserts only that the dependencies match the graph
    // (`show_checked`); the graph is dask's recorded output.
    expect![[r#"
        ('array-27b9f9d257a80fa6adae06a98faf71eb', 1, 1) = f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[10, 20], [10, 20]])
        ('array-cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0) = f(f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[0, 10], [0, 10]]))
        ('array-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0), f(array-original-27b9f9d257a80fa6adae06a98faf71eb, [[0, 10], [10, 20]]))
        ('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0) = ('array-cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0)
        ('cholesky-cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0) = f(f(('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1)), ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1))
        ('cholesky-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0) = f([10, 10])
        ('cholesky-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1) = f(f(f(('array-27b9f9d257a80fa6adae06a98faf71eb', 1, 1), f([('cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0)]))))
        ('cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0) = ('cholesky-cholesky-lt-dot-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0, 1, 0)
        ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0) = f(('cholesky-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 0))
        ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1) = ('array-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 0, 1)
        ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0) = ('cholesky-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 0)
        ('cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1) = ('cholesky-cholesky-upper-26a6b670a8aabb7e2f8936db7ccb6a88', 1, 1)
        array-original-27b9f9d257a80fa6adae06a98faf71eb = 1
    "#]]
    .assert_eq(&show_checked(&fused));
    let (before, after) = (Evaluator::new(&g), Evaluator::new(&fused));
    for (key, _) in g.iter() {
        if fused.get(key).is_some() {
            assert_eq!(before.get(key), after.get(key), "{key}");
        }
    }
}

#[test]
fn lists_are_not_reducible() {
    // test_dont_fuse_numpy_arrays: dask does not reduce a value that is not
    // a tuple, number or string (a numpy array there); a list is our case.
    let g = graph("x = [0, 1, 2, 3, 4]\ny = len(x)");
    let fused = fuse(&g, &with(&["y"], 1.0)).unwrap();
    assert_eq!(show_checked(&fused), show(&g));
    // None is not reducible either; numbers and strings are.
    let g = graph("x = None\ny = identity(x)\nz = 'text'\nw = len(z)");
    let fused = fuse(&g, &with(&["y", "w"], 1.0)).unwrap();
    expect![[r#"
        w = z-w
        x = None
        y = identity(x)
        z-w = len('text')
    "#]]
    .assert_eq(&show_checked(&fused));
}

#[test]
fn fusion_switched_off_returns_the_graph() {
    // test_fuse_config switches fusion off through dask's config
    // (`optimization.fuse.active`); our config is the argument itself, and
    // dask's other off switches are ave_width = 0 and max_height = 0.
    let g = graph("a = 1\nb = inc(a)");
    for config in [
        FuseConfig {
            ave_width: 0.0,
            ..with(&["b"], 1.0)
        },
        FuseConfig {
            max_height: 0.0,
            ..with(&["b"], 1.0)
        },
    ] {
        let fused = fuse(&g, &config).unwrap();
        assert_eq!(fused, g);
        assert_eq!(fused.references().unwrap(), g.references().unwrap());
    }
}

#[test]
fn long_names_are_cut_with_a_stable_hash() {
    // test_fused_keys_max_length (gh-5999).
    let long = |c: &str| format!("{c}-l{}ng", "o".repeat(83));
    let text = format!(
        "{u} = inc({v})\n{v} = inc({w})\n{w} = inc({x})\n{x} = inc({y})\n{y} = inc({z})\n{z} = add(a, b)\na = 1\nb = 2",
        u = long("u"),
        v = long("v"),
        w = long("w"),
        x = long("x"),
        y = long("y"),
        z = long("z"),
    );
    let g = graph(&text);
    let fused = fuse(&g, &FuseConfig::default()).unwrap();
    show_checked(&fused);
    for key in fused.keys() {
        assert!(key.python_str().len() < 150, "{key}");
    }
    let name = match &fused.get(&Key::from(long("u"))).unwrap().body {
        graph_core::Body::Term(graph_core::Term::Ref(name)) => name.python_str(),
        other => panic!("not an alias: {other:?}"),
    };
    // dask's name up to its cut, then `-` and four hex digits; dask's come
    // from Python's per-process hash, ours are the same in every run.
    let prefix = format!("{}-{}", long("v"), &long("w")[..26]);
    assert_eq!(name.len(), 120);
    assert!(name.starts_with(&prefix), "{name}");
    expect!["-8990"].assert_eq(&name[115..]);
    let again = fuse(&g, &FuseConfig::default()).unwrap();
    assert_eq!(again, fused);
}

#[test]
fn hybrid_tests_tuple_only_parts() {
    // test_fusion_legacy_hybrid, first part.
    let g = graph("foo = func('a', 'b')\nbar = func2(foo, 'c')");
    let fused = fuse(&g, &with(&["bar"], 1.0)).unwrap();
    expect![[r#"
        bar = foo-bar
        foo-bar = func2(func('a', 'b'), 'c')
    "#]]
    .assert_eq(&show_checked(&fused));
    let foo_bar = fused.node_id(&key("foo-bar")).unwrap();
    assert!(fused.references().unwrap().get(foo_bar).is_empty());
    assert_eq!(
        Evaluator::new(&fused).get(&key("bar")),
        common::V::Str("a-b=c".into())
    );

    // test_fusion_wide_legacy_hybrid, first part (ave_width 2).
    let g = graph(
        "('foo', 0) = func('a', 'b')\n('foo', 1) = func('a', 'b')\nbar = func2(('foo', 1), ('foo', 0))",
    );
    let fused = fuse(&g, &with(&["bar"], 2.0)).unwrap();
    expect![[r#"
        bar = foo-bar
        foo-bar = func2(func('a', 'b'), func('a', 'b'))
    "#]]
    .assert_eq(&show_checked(&fused));
    assert_eq!(
        Evaluator::new(&fused).get(&key("bar")),
        common::V::Str("a-b=a-b".into())
    );
}

/// The wide hybrid graph with some tasks opaque, dask's new-style `Task`s
/// (which it never fuses).
fn wide_hybrid(opaque: &[&str]) -> TaskGraph {
    let mut g = TaskGraph::new();
    for (k, t) in [
        ("('foo', 0)", "func('a', 'b')"),
        ("('foo', 1)", "func('a', 'b')"),
        ("bar", "func2(('foo', 1), ('foo', 0))"),
    ] {
        if opaque.contains(&k) {
            let deps = common::term(t).refs().cloned().collect();
            g.insert_opaque(key(k), deps).unwrap();
        } else {
            g.insert(key(k), common::term(t)).unwrap();
        }
    }
    g
}

#[test]
fn opaque_tasks_are_never_fused() {
    // test_fusion_wide_legacy_hybrid, parts 2 to 5, with opaque tasks for
    // dask's new-style ones.
    let fused = fuse(&wide_hybrid(&["('foo', 0)"]), &with(&["bar"], 2.0)).unwrap();
    expect![[r#"
        ('foo', 0) = <opaque>()
        bar = foo-bar
        foo-bar = func2(func('a', 'b'), ('foo', 0))
    "#]]
    .assert_eq(&show_checked(&fused));
    let fused = fuse(&wide_hybrid(&["('foo', 1)"]), &with(&["bar"], 2.0)).unwrap();
    expect![[r#"
        ('foo', 1) = <opaque>()
        bar = foo-bar
        foo-bar = func2(('foo', 1), func('a', 'b'))
    "#]]
    .assert_eq(&show_checked(&fused));
    for opaque in [&["('foo', 0)", "('foo', 1)"][..], &["bar"]] {
        let g = wide_hybrid(opaque);
        let fused = fuse(&g, &with(&["bar"], 2.0)).unwrap();
        assert_eq!(fused, g);
    }
}

#[test]
fn opaque_tasks_block_fusion() {
    // test_fusion_legacy_hybrid, parts 2 and 3: a new-style `Task` child or
    // parent (our opaque task) leaves the graph unchanged.
    for opaque in ["foo", "bar"] {
        let mut g = TaskGraph::new();
        for (k, t) in [("foo", "func('a', 'b')"), ("bar", "func2(foo, 'c')")] {
            if k == opaque {
                let deps = common::term(t).refs().cloned().collect();
                g.insert_opaque(key(k), deps).unwrap();
            } else {
                g.insert(key(k), common::term(t)).unwrap();
            }
        }
        let fused = fuse(&g, &with(&["bar"], 1.0)).unwrap();
        assert_eq!(fused, g, "{opaque} opaque");
    }
}

#[test]
fn aliases_can_be_dropped() {
    let g = graph(
        "
        a = 1
        b1 = f(a)
        b2 = f(a)
        b3 = f(a)
        b4 = f(a)
        c1 = f(b1, b2)
        c2 = f(b3, b4)
        d = f(c1, c2)
        ",
    );
    // dask keeps `c1 = b1-b2-c1`; dropping it points `d` at the new name.
    let config = FuseConfig {
        drop_aliases: true,
        ..with(&["d"], 2.0)
    };
    let fused = fuse(&g, &config).unwrap();
    expect![[r#"
        a = 1
        b1-b2-c1 = f(f(a), f(a))
        b3-b4-c2 = f(f(a), f(a))
        d = f(b1-b2-c1, b3-b4-c2)
    "#]]
    .assert_eq(&show_checked(&fused));
    // A requested alias stays (and, being requested, is not absorbed: `d`
    // then has one reducible child left, and takes it).
    let config = FuseConfig {
        drop_aliases: true,
        ..with(&["d", "c1"], 2.0)
    };
    let fused = fuse(&g, &config).unwrap();
    expect![[r#"
        a = 1
        b1-b2-c1 = f(f(a), f(a))
        b3-b4-c2-d = f(c1, f(f(a), f(a)))
        c1 = b1-b2-c1
        d = b3-b4-c2-d
    "#]]
    .assert_eq(&show_checked(&fused));
}
