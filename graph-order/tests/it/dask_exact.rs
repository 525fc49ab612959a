//! Ports of the tests of dask's `test_order.py` that pin exact priorities or
//! pressure series, on graphs where dask's own answer does not depend on
//! Python's set iteration order.

use crate::common::{Case, VARIANTS};

const DOCSTRING: &str = "
'a' <-   [non-task: data]
'b' <-   [non-task: data]
'c' <- 'a'
'd' <- 'b', 'c'
";

/// The example of `order`'s docstring: `{'a': 0, 'c': 1, 'b': 2, 'd': 3}`.
#[test]
fn docstring_example() {
    let case = Case::parse(DOCSTRING);
    let o = case.dask();
    assert_eq!(o.sequence(), ["a", "c", "b", "d"]);
}

/// `test_break_ties_by_str`: ten roots into one sum; `('x', k)` runs at `9 - k`.
#[test]
fn break_ties_by_str() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/10_0.txt"), swap);
        let o = case.dask();
        for k in 0..10 {
            assert_eq!(o.o(&format!("('x', {k})")), 9 - k);
        }
        assert_eq!(o.o("'y'"), 10);
    }
}

/// `test_string_ordering`: three independent roots, either direction.
#[test]
fn string_ordering() {
    let case = Case::parse(include_str!("../data/dask/18_0.txt"));
    let o = case.dask();
    let got = [o.o("('a', 1)"), o.o("('a', 2)"), o.o("('a', 3)")];
    assert!(got == [0, 1, 2] || got == [2, 1, 0], "{got:?}");
}

/// `test_use_structure_not_keys`: max pressure 3 and one of two exact
/// interleavings of the `a`s and `b`s.
#[test]
fn use_structure_not_keys() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/23_0.txt"), swap);
        case.assert_pressure_at_most(3);
        let o = case.dask();
        let a = o.sorted_of(&["a"]);
        let b = o.sorted_of(&["b"]);
        assert!(b[0] == 1 || b[0] == 3, "{b:?}");
        if b[0] == 3 {
            assert_eq!(a, [0, 1, 2, 4, 6, 8, 10, 12, 14, 16]);
            assert_eq!(b, [3, 5, 7, 9, 11, 13, 15, 17, 18, 19]);
        } else {
            assert_eq!(a, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
            assert_eq!(b, [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
        }
    }
}

/// `test_dont_run_all_dependents_too_early`: every third task is a `d`.
#[test]
fn dont_run_all_dependents_too_early() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/24_0.txt"), swap);
        let o = case.dask();
        assert_eq!(o.sorted_of(&["d"]), [3, 6, 9, 12, 15, 18, 21, 24, 27, 30]);
    }
}

/// `test_many_branches_use_ndependencies`: `('a', 0)` is a shared data root.
#[test]
fn many_branches_use_ndependencies() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/25_0.txt"), swap);
        let o = case.dask();
        assert_eq!(
            o.sorted_of(&["d", "dd", "e", "ee"]),
            (1..=10).collect::<Vec<_>>()
        );
        assert_eq!(o.o("('c', 1)"), o.o("('a', 3)") - 1);
    }
}

/// `test_diagnostics`: the exact pressure series and per-task table, for
/// whichever side dask's policy starts on.
#[test]
fn diagnostics_tables() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/32_0.txt"), swap);
        let o = case.dask();
        let d = &o.diag;
        let row = |k: &str| {
            let i = case.node(k).index();
            [
                d.age[i],
                d.dependencies_freed[i],
                d.data_when_run[i],
                d.data_when_released[i],
            ]
        };
        let keys = [
            "('a', 0)", "('b', 0)", "('c', 0)", "('d', 0)", "('e', 0)", "('a', 1)", "('b', 1)",
            "('c', 1)", "('d', 1)", "('e', 1)",
        ];
        let table: Vec<[u32; 4]> = keys.iter().map(|k| row(k)).collect();
        if o.o("('e', 1)") == 1 {
            assert_eq!(o.o("('d', 1)"), 3);
            assert_eq!(o.o("('c', 1)"), 5);
            assert_eq!(d.pressure, [0, 1, 1, 2, 2, 3, 2, 3, 2, 3]);
            assert_eq!(
                table,
                [
                    [1, 0, 2, 3],
                    [3, 0, 2, 3],
                    [5, 0, 2, 3],
                    [5, 0, 1, 3],
                    [5, 0, 0, 3],
                    [0, 3, 3, 3],
                    [0, 1, 3, 3],
                    [0, 1, 3, 3],
                    [0, 0, 2, 2],
                    [0, 0, 1, 1],
                ]
            );
        } else {
            assert_eq!(o.o("('e', 1)"), 9);
            assert_eq!(o.o("('d', 1)"), 8);
            assert_eq!(o.o("('c', 1)"), 7);
            assert_eq!(d.pressure, [0, 1, 2, 3, 2, 3, 2, 3, 2, 1]);
            assert_eq!(
                table,
                [
                    [3, 0, 0, 3],
                    [4, 0, 1, 3],
                    [5, 0, 2, 3],
                    [4, 0, 2, 2],
                    [3, 0, 2, 1],
                    [0, 1, 3, 3],
                    [0, 1, 3, 3],
                    [0, 1, 3, 3],
                    [0, 1, 2, 2],
                    [0, 1, 1, 1],
                ]
            );
        }
    }
}

/// `test_order_flox_reduction_2`: the four outputs are exactly 5 apart.
#[test]
fn order_flox_reduction_2() {
    for swap in VARIANTS {
        let case = Case::parse_variant(include_str!("../data/dask/43_0.txt"), swap);
        let o = case.dask();
        let mut outs: Vec<i64> = ["('d', 0, 0)", "('d', 0, 1)", "('d', 1, 0)", "('d', 1, 1)"]
            .iter()
            .map(|k| o.o(k))
            .collect();
        outs.sort_unstable();
        assert!(outs.windows(2).all(|w| w[1] - w[0] == 5), "{outs:?}");
    }
}

/// `test_xarray_map_reduce_with_slicing`: the transposes are 8 apart, and
/// max pressure is at most 5.
#[test]
fn xarray_map_reduce_with_slicing() {
    let case = Case::parse(include_str!("../data/dask/44_0.txt"));
    case.assert_pressure_at_most(5);
    let o = case.dask();
    let mut outs: Vec<i64> = (0..4)
        .map(|k| o.o(&format!("('transpose', 0, {}, {})", k / 2, k % 2)))
        .collect();
    outs.sort_unstable();
    assert!(outs.windows(2).all(|w| w[1] - w[0] == 8), "{outs:?}");
}

/// `test_xarray_rechunk_map_reduce_cohorts`, with and without the 16 extra
/// tasks that flip `use_longest_path`.
#[test]
fn xarray_rechunk_map_reduce_cohorts() {
    for use_longest_path in [false, true] {
        let mut text = include_str!("../data/dask/45_0.txt").to_string();
        if use_longest_path {
            let roots: Vec<String> = (20..35)
                .map(|i| format!("('open-dataset', {i}, 0, 0)"))
                .collect();
            for r in &roots {
                text.push_str(&format!("{r} <-\n"));
            }
            text.push_str(&format!("('dummy', 0) <- {}\n", roots.join(", ")));
        }
        let case = Case::parse(&text);
        let o = case.dask();
        let max99 = o.diag.pressure.iter().take(99).max().copied().unwrap_or(0);
        assert!(max99 <= 7, "{max99}");
        let mut outs: Vec<i64> = (0..4)
            .map(|k| o.o(&format!("('transpose', {}, {}, 0)", k / 2, k % 2)))
            .collect();
        outs.sort_unstable();
        let gaps: Vec<i64> = outs.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps, [10, 39, 10], "use_longest_path={use_longest_path}");
    }
}
