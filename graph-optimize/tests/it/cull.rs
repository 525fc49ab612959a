//! `cull`: dask's `test_cull`, and cull's errors.

use crate::common::{graph, keys, show, show_checked, show_deps};
use expect_test::expect;
use graph_optimize::{Error, cull};

const G: &str = "
    x = 1
    y = inc(x)
    z = inc(x)
    out = add(y, 10)
";

#[test]
fn culls_to_what_a_key_needs() {
    let culled = cull(&graph(G), &keys(&["out"])).unwrap();
    expect![[r#"
        out = add(y, 10)
        x = 1
        y = inc(x)
    "#]]
    .assert_eq(&show_checked(&culled));
    expect![[r#"
        out: [y]
        x: []
        y: [x]
    "#]]
    .assert_eq(&show_deps(&culled));
}

#[test]
fn requested_keys_are_a_set() {
    // dask accepts a single key, a list or nested lists, and flattens them
    // into a set; our keys are a flat slice, so what remains to port is that
    // repeats and order do not matter.
    let g = graph(G);
    let once = cull(&g, &keys(&["out"])).unwrap();
    let twice = cull(&g, &keys(&["out", "out"])).unwrap();
    assert_eq!(once, twice);
    assert_eq!(once.references().unwrap(), twice.references().unwrap());
    let both = cull(&g, &keys(&["out", "z"])).unwrap();
    let reversed = cull(&g, &keys(&["z", "out"])).unwrap();
    assert_eq!(show(&both), show(&reversed));
    assert_eq!(both.references().unwrap(), reversed.references().unwrap());
}

#[test]
fn culling_to_every_leaf_keeps_everything() {
    let g = graph(G);
    let culled = cull(&g, &keys(&["out", "z"])).unwrap();
    assert_eq!(show_checked(&culled), show(&g));
    // Kept tasks stay in the input's order.
    assert_eq!(culled, g);
}

#[test]
fn an_unknown_key_is_an_error_naming_it() {
    let err = cull(&graph(G), &keys(&["out", "badkey"])).unwrap_err();
    assert!(matches!(&err, Error::UnknownKey { key } if key.python_str() == "badkey"));
    assert_eq!(err.to_string(), "unknown key 'badkey': no task has it");
}

#[test]
fn references_keep_repeats_in_preorder() {
    // dask's `test_inline_cull_dependencies`, first half: its lists are in
    // breadth-first order (`e: ['a', 'd']`); ours are in preorder.
    let g = graph(
        "
        a = 1
        b = a
        c = b
        d = [a, b, c]
        e = add(len(d), a)
        ",
    );
    let culled = cull(&g, &keys(&["d", "e"])).unwrap();
    assert_eq!(show_checked(&culled), show(&g));
    expect![[r#"
        a: []
        b: [a]
        c: [b]
        d: [a, b, c]
        e: [d, a]
    "#]]
    .assert_eq(&show_deps(&culled));
}
