//! The comparisons' unit tests: the driver's records, the tables made of
//! them, and which comparisons a crate asks for.

use std::collections::BTreeMap;

use super::record::{Value, get_num};
use super::table::{fmt_coarse, fmt_ratio, fmt_seconds, parse_duration};
use super::*;

fn records(text: &str) -> Vec<Record> {
    text.lines().filter_map(parse_record).collect()
}

#[test]
fn parses_flat_json_objects() {
    let record = parse_record(
        r#"{"kind": "dask", "op": "order (auto)", "seconds": 1.5e-05, "n": -3, "ok": true, "s": "a\"b\u00e9"}"#,
    )
    .unwrap();
    assert_eq!(get_str(&record, "op"), Some("order (auto)"));
    assert_eq!(get_num(&record, "seconds"), Some(1.5e-5));
    assert_eq!(get_num(&record, "n"), Some(-3.0));
    assert_eq!(record.get("ok"), Some(&Value::Other));
    assert_eq!(get_str(&record, "s"), Some("a\"bé"));
    assert_eq!(parse_record("{}"), Some(Record::new()));
    for bad in [
        "",
        "== progress",
        r#"{"a": [1]}"#,
        r#"{"a": 1"#,
        r#"{"a": 1} x"#,
        r#"{"a": tru}"#,
    ] {
        assert_eq!(parse_record(bad), None, "{bad}");
    }
}

#[test]
fn formats_times_and_ratios() {
    let times: Vec<String> = [12.34, 2.3456, 0.2668, 0.04412, 0.0031, 0.000_045_6]
        .into_iter()
        .map(fmt_seconds)
        .collect();
    assert_eq!(
        times,
        ["12.3 s", "2.35 s", "267 ms", "44.1 ms", "3.10 ms", "46 µs"]
    );
    let ratios: Vec<String> = [1234.4, 12.6, 2.44, 0.612, f64::INFINITY]
        .into_iter()
        .map(fmt_ratio)
        .collect();
    assert_eq!(ratios, ["1234x", "13x", "2.4x", "0.61x", "-"]);
    assert_eq!(fmt_coarse(0.016, 0.001), "16 ms");
    assert_eq!(fmt_coarse(1.234, 0.001), "1234 ms");
    assert_eq!(fmt_coarse(0.0163, 0.0001), "16.3 ms");
    assert_eq!(fmt_coarse(2.0, 1.0), "2 s");
    assert_eq!(fmt_coarse(0.0163, 0.0), "16.3 ms");
}

#[test]
fn reads_divan_medians_from_a_table() {
    let section = "Measured today.\n\n| benchmark | median | throughput |\n|---|---:|---:|\n\
                   | `rewrite/graph_par/10000` | 9.242 ms | 1.082 Mitem/s |\n\
                   | `rewrite/terms_vs_rules/1` | 3.052 ms | 3.276 Mitem/s |\n\
                   | `rewrite/terms_vs_rules/1000` | 850 µs | 3.165 Mitem/s |\n";
    let medians = divan_medians(section);
    assert_eq!(medians.len(), 2);
    assert!((medians[&1] - 3.052e-3).abs() < 1e-12);
    assert!((medians[&1000] - 850e-6).abs() < 1e-12);
    assert_eq!(parse_duration("1.26 s"), Some(1.26));
    assert_eq!(parse_duration("fast"), None);
}

#[test]
fn dask_table_pairs_operations() {
    let records = records(
        r#"{"kind": "dask_pair", "dask": "order", "ours": "order (auto)"}
{"kind": "dask_pair", "dask": "get", "ours": "run (1 thread)"}
{"kind": "dask_pair", "dask": "fuse", "ours": "fuse"}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "order", "system": "dask", "seconds": 0.2668, "max_pressure": 1}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "get", "system": "dask", "seconds": 0.5974}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "order (auto)", "system": "taskgraph", "seconds": 0.0083, "max_pressure": 1}
{"kind": "dask", "shape": "chain", "tasks": 10000, "op": "run (1 thread)", "system": "taskgraph", "seconds": 0.0031, "peak_held": 1}
{"kind": "dask", "shape": "tree", "tasks": 10003, "op": "fuse", "system": "dask", "seconds": 0.0281}
{"kind": "dask", "shape": "tree", "tasks": 10003, "op": "fuse", "system": "taskgraph", "seconds": 0.0005, "tasks_after": 7}"#,
    );
    let table = dask_table(&records).unwrap();
    let rows: Vec<&str> = table.lines().skip(2).collect();
    assert_eq!(
        rows,
        [
            "| chain | 10000 | order | order (auto) | 267 ms | 8.30 ms | 32x | 1 / 1 |",
            "| chain | 10000 | get | run (1 thread) | 597 ms | 3.10 ms | 193x | - / 1 |",
            "| tree | 10003 | fuse | fuse | 28.1 ms | 500 µs | 56x |  |",
        ]
    );
    assert_eq!(dask_table(&[]), None);
}

#[test]
fn rewrite_table_shows_both_sides() {
    let records = records(
        r#"{"kind": "rewrite_rule", "text": "add(x, 0) -> x"}
{"kind": "rewrite", "shape": "random", "tasks": 10000, "system": "dask", "seconds": 0.6, "changed": 2190}
{"kind": "rewrite", "shape": "random", "tasks": 10000, "system": "taskgraph", "seconds": 0.004, "resolution": 0.001, "changed": 2190}
{"kind": "rewrite", "shape": "chain", "tasks": 10000, "system": "dask", "seconds": 0.2, "changed": 0}
{"kind": "rewrite", "shape": "chain", "tasks": 10000, "system": "taskgraph", "seconds": 0.0, "resolution": 0.001, "changed": 0}
{"kind": "rules", "rules": 1, "terms": 10000, "seconds": 0.6}
{"kind": "rules", "rules": 10, "terms": 10000, "seconds": 0.65}"#,
    );
    let divan = BTreeMap::from([(1, 0.003)]);
    let table = rewrite_table(&records, &divan).unwrap();
    assert!(table.starts_with("Every task rewritten bottom-up with 1 rules: `add(x, 0) -> x`."));
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| {
            l.starts_with("| ") && !l.starts_with("| shape |") && !l.starts_with("| rules |")
        })
        .collect();
    assert_eq!(
        rows,
        [
            "| random | 10000 | 600 ms | 4 ms | 150x | 2190 / 2190 |",
            "| chain | 10000 | 200 ms | < 1 ms | > 200x | 0 / 0 |",
            "| 1 | 600 ms | 3.00 ms | 200x |",
            "| 10 | 650 ms | - | - |",
        ]
    );
}

#[test]
fn metis_table_sums_up_the_ratios() {
    let records = records(
        r#"{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "metis", "edge_cut": 13, "imbalance": 1.0, "seconds": 0.004}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "taskgraph", "edge_cut": 11, "imbalance": 1.02, "seconds": 0.002}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 4, "system": "mars", "edge_cut": 31, "imbalance": 1.5, "seconds": 0.0001}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 8, "system": "metis", "edge_cut": 10, "imbalance": 1.0, "seconds": 0.004}
{"kind": "metis", "shape": "tree", "tasks": 10003, "edges": 10002, "k": 8, "system": "taskgraph", "edge_cut": 14, "imbalance": 1.03, "seconds": 0.002}"#,
    );
    let table = metis_table(&records).unwrap();
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| tree")).collect();
    assert_eq!(
        rows,
        [
            "| tree | 10003 | 4 | 13 (1.000) | 11 (1.020) | 0.85 | 31 (1.500) | 2.38 | 4.00 ms | 2.00 ms |",
            "| tree | 10003 | 8 | 10 (1.000) | 14 (1.030) | 1.40 |  |  | 4.00 ms | 2.00 ms |",
        ]
    );
    assert!(
        table.ends_with(
            "Ours against METIS over 2 cases: geometric mean 1.09, 1 within 1.2x, largest imbalance 1.030.\n"
        ),
        "{table}"
    );
}

#[test]
fn problems_name_the_missing_package() {
    let records = records(
        r#"{"kind": "missing", "part": "metis", "package": "pymetis"}
{"kind": "error", "part": "rules", "message": "ValueError: boom"}"#,
    );
    assert_eq!(
        problems(&records, Part::Metis),
        ["the Python package pymetis is missing from target/venv-bench, so `metis` could not run"]
    );
    assert_eq!(
        problems(&records, Part::Rewrite),
        ["`rules` failed: ValueError: boom"]
    );
    assert!(problems(&records, Part::Dask).is_empty());
}

#[test]
fn names_the_python_side() {
    let records = records(
        r#"{"kind": "env", "python": "3.11.7", "dask": "2026.8.0", "pymetis": "2025.2.2"}"#,
    );
    assert_eq!(
        environment(&records, Part::Metis),
        "pymetis 2025.2.2 on CPython 3.11.7 in target/venv-bench"
    );
    assert_eq!(
        environment(&records, Part::Rewrite),
        "dask 2026.8.0 on CPython 3.11.7 in target/venv-bench"
    );
    assert_eq!(
        environment(&[], Part::Dask),
        "dask ? on CPython ? in target/venv-bench"
    );
}

#[test]
fn crates_choose_their_comparisons() {
    assert_eq!(Part::for_crate(None), Part::ALL);
    assert_eq!(Part::for_crate(Some("graph-rewrite")), [Part::Rewrite]);
    assert_eq!(Part::for_crate(Some("graph-exec")), [Part::Dask]);
    assert_eq!(Part::for_crate(Some("graph-assign")), [Part::Metis]);
    assert!(Part::for_crate(Some("graph-core")).is_empty());
}
