//! `functions_of`: dask's `test_functions_of`.

use crate::common::term;
use graph_optimize::functions_of;

#[test]
fn functions_of_cases() {
    // dask's `a` and `b` are two lambdas; ours are two op names. A bare
    // callable (`functions_of(a)`) has no counterpart: an op is only ever
    // called.
    let cases: [(&str, &[&str]); 6] = [
        ("a(1)", &["a"]),
        ("a(b(1))", &["a", "b"]),
        ("a([b(1)])", &["a", "b"]),
        ("a([[[b(1)]]])", &["a", "b"]),
        ("1", &[]),
        ("a()", &["a"]),
    ];
    for (text, expected) in cases {
        let ops: Vec<String> = functions_of(&term(text))
            .into_iter()
            .map(|op| op.as_str().to_owned())
            .collect();
        assert_eq!(ops, expected, "{text}");
    }
    // Repeats count once; references and lists add nothing.
    let ops = functions_of(&term("a(a(x), [b(y), a(1)])"));
    assert_eq!(ops.len(), 2);
}
