//! Unit tests of `Key`: Python's spelling and the total order.

use super::*;

#[track_caller]
fn check_repr(key: Key, expected: &str) {
    assert_eq!(key.to_string(), expected);
}

#[test]
fn spells_keys_as_python_repr() {
    check_repr(Key::from("x"), "'x'");
    check_repr(Key::from("it's"), "\"it's\"");
    check_repr(Key::from("both ' and \""), "'both \\' and \"'");
    check_repr(Key::from("tab\tnew\nline\\"), "'tab\\tnew\\nline\\\\'");
    check_repr(Key::from("bell\u{7}"), "'bell\\x07'");
    check_repr(Key::from("naïve"), "'naïve'");
    check_repr(Key::from(-3), "-3");
    check_repr(Key::from(("x", 0, 1)), "('x', 0, 1)");
    check_repr(
        Key::from(("x", 0.1, Key::from((0, 1)))),
        "('x', 0.1, (0, 1))",
    );
    check_repr(Key::from(("x",)), "('x',)");
    check_repr(Key::tuple([]), "()");
}

#[test]
fn spells_floats_as_python_repr() {
    let cases: &[(f64, &str)] = &[
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1.5, "1.5"),
        (100.0, "100.0"),
        (123.456, "123.456"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1.5e-7, "1.5e-07"),
        (1e15, "1000000000000000.0"),
        (1e16, "1e+16"),
        (1.2345678901234568e17, "1.2345678901234568e+17"),
        (1e100, "1e+100"),
        (-2.5e-300, "-2.5e-300"),
        (9_999_999_999_999_998.0, "9999999999999998.0"),
        (123_456_789_012_345.6, "123456789012345.6"),
        (0.000_100_000_000_000_000_02, "0.00010000000000000002"),
        (9.999_999_999_999_999e-5, "9.999999999999999e-05"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "nan"),
    ];
    for &(x, expected) in cases {
        assert_eq!(Key::Float(x).to_string(), expected, "repr of {x:?}");
    }
}

#[test]
fn python_str_drops_quotes_of_plain_strings_only() {
    assert_eq!(Key::from("x").python_str(), "x");
    assert_eq!(Key::from(("x", 1)).python_str(), "('x', 1)");
    assert_eq!(Key::from(7).python_str(), "7");
}

#[test]
fn orders_tuples_part_by_part_and_numbers_as_numbers() {
    let mut keys = vec![
        Key::from(("x", 10)),
        Key::from("b"),
        Key::from(("x", 2)),
        Key::from(2.5),
        Key::from(("x",)),
        Key::from(3),
        Key::from(("x", 2, 0)),
        Key::from(2),
        Key::from(2.0),
        Key::from("a"),
    ];
    keys.sort();
    let spelled: Vec<String> = keys.iter().map(Key::to_string).collect();
    assert_eq!(
        spelled,
        [
            "2",
            "2.0",
            "2.5",
            "3",
            "'a'",
            "'b'",
            "('x',)",
            "('x', 2)",
            "('x', 2, 0)",
            "('x', 10)"
        ]
    );
}

#[test]
fn compares_large_integers_with_floats_exactly() {
    let big = (1_i64 << 53) + 1;
    let float = (1_i64 << 53) as f64;
    assert!(Key::Int(big) > Key::Float(float));
    assert!(Key::Float(float) < Key::Int(big));
    assert!(Key::Int(i64::MAX) < Key::Float(9.3e18));
    assert!(Key::Int(i64::MIN) > Key::Float(-9.3e18));
    assert!(Key::Int(1) < Key::Float(1.5));
    assert!(Key::Int(-1) > Key::Float(-1.5));
    assert!(Key::Int(i64::MAX) < Key::Float(f64::NAN));
}

#[test]
fn negative_zero_equals_zero_and_hashes_alike() {
    use std::collections::HashSet;
    assert_eq!(Key::Float(-0.0), Key::Float(0.0));
    let set: HashSet<Key> = [Key::Float(-0.0), Key::Float(0.0)].into_iter().collect();
    assert_eq!(set.len(), 1);
    assert_ne!(Key::Int(0), Key::Float(0.0));
}

#[test]
fn order_is_transitive_across_kinds() {
    let keys = [
        Key::from(9),
        Key::from(10),
        Key::from("5"),
        Key::from(("5",)),
        Key::from(f64::NAN),
        Key::from(-0.0),
    ];
    for a in &keys {
        for b in &keys {
            for c in &keys {
                if a <= b && b <= c {
                    assert!(a <= c, "{a} <= {b} <= {c}");
                }
            }
            assert_eq!(a.cmp(b), b.cmp(a).reverse(), "{a} vs {b}");
        }
    }
}

#[test]
fn name_is_the_leading_string() {
    assert_eq!(Key::from(("x", 1)).name(), Some("x"));
    assert_eq!(Key::from((Key::from(("y", 2)), 1)).name(), Some("y"));
    assert_eq!(Key::from(4).name(), None);
}

#[test]
fn positional_floats_are_spelled_as_from_their_digits() {
    let mut rng = crate::generate::Rng::new(7);
    for i in 0..100_000 {
        let x = if i % 2 == 0 {
            f64::from_bits(rng.next_u64())
        } else {
            // Around the ends of the positional range.
            let exponent = rng.below(24) as i32 - 6;
            (rng.next_u64() >> 11) as f64 / (1_u64 << 53) as f64 * 10_f64.powi(exponent)
        };
        if !x.is_finite() {
            continue;
        }
        let (mut fast, mut slow) = (String::new(), String::new());
        crate::repr::write_float(&mut fast, x).unwrap();
        crate::repr::write_float_from_digits(&mut slow, x).unwrap();
        assert_eq!(fast, slow, "{x:e}");
    }
}
