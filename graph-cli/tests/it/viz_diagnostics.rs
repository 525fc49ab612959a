//! `taskgraph viz --color ages|freed|memoryincreases|memorydecreases|memorypressure`:
//! each task's figure, read back from the labels and tooltips of the DOT,
//! against the tables dask's `diagnostics` gives for the same order.

use crate::common;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::common::taskgraph;
use crate::viz_common::attribute;
use expect_test::{Expect, expect};

/// A graph as taskgraph-json/1: task `name` depends on the tasks `deps`.
fn graph(tasks: &[(&str, &[&str])]) -> String {
    let key = |name: &str| {
        let (head, index) = name.split_at(1);
        format!("[\"{head}\", {index}]")
    };
    let tasks: Vec<String> = tasks
        .iter()
        .map(|(name, deps)| {
            let deps: Vec<String> = deps.iter().map(|dep| key(dep)).collect();
            format!(
                "{{\"key\": {}, \"deps\": [{}]}}",
                key(name),
                deps.join(", ")
            )
        })
        .collect();
    common::document(&tasks)
}

/// Per task (by its key's spelling), the second label line and the tooltip
/// of `taskgraph viz - --strategy dask --color colour`.
fn labels(text: &str, colour: &str) -> BTreeMap<String, (String, String)> {
    let run = taskgraph(
        &["viz", "-", "--strategy", "dask", "--color", colour],
        text.as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let mut found = BTreeMap::new();
    for line in run.stdout.lines().filter(|l| l.contains("id=\"v")) {
        let field = |name: &str| attribute(line, name).unwrap();
        let label = field("label");
        let tooltip = field("tooltip");
        let key = tooltip.split("\\n").next().unwrap().to_owned();
        let second = label.split("\\n").nth(1).unwrap().to_owned();
        found.insert(key, (second, tooltip));
    }
    found
}

/// The number after `word ` in `text`.
fn after(text: &str, word: &str) -> u32 {
    let at = text
        .find(word)
        .unwrap_or_else(|| panic!("{word} in {text}"))
        + word.len();
    let digits: String = text[at..]
        .chars()
        .skip_while(|c| *c == ' ' || *c == '#')
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("{word} in {text}"))
}

/// The table dask's `diagnostics` prints, in its order, from the figures
/// each colouring draws: order, age, num_data_when_run, num_data_when_released,
/// num_dependencies_freed, and the memoryincreases and memorydecreases figures.
fn check(text: &str, expect: Expect) {
    let by = |colour: &str, word: &str| -> BTreeMap<String, u32> {
        labels(text, colour)
            .into_iter()
            .map(|(key, (second, _))| (key, after(&second, word)))
            .collect()
    };
    let order = by("order", "");
    let age = by("ages", "age");
    let age_alias = by("age", "age");
    assert_eq!(age, age_alias, "`age` is dask's spelling of `ages`");
    let freed = by("freed", "freed");
    let run = by("memorypressure", "held");
    let increase = by("memoryincreases", "increase");
    let decrease = by("memorydecreases", "decrease");
    let released: BTreeMap<String, u32> = labels(text, "none")
        .into_iter()
        .map(|(key, (_, tooltip))| (key, after(&tooltip, "when run, ")))
        .collect();
    let mut keys: Vec<&String> = order.keys().collect();
    keys.sort_by_key(|key| order[*key]);
    let mut table = String::from("key       order age run released freed incr decr\n");
    for key in keys {
        let _ = writeln!(
            table,
            "{key:<9} {:>5} {:>3} {:>3} {:>8} {:>5} {:>4} {:>4}",
            order[key], age[key], run[key], released[key], freed[key], increase[key], decrease[key]
        );
    }
    expect.assert_eq(&table);
}

/// dask's `test_diagnostics` graph and the table dask 2026.8.0 gives for it
/// (its order is dask's, and ours with `--strategy dask`).
#[test]
fn dask_test_diagnostics() {
    let text = graph(&[
        ("a0", &[]),
        ("b0", &[]),
        ("c0", &[]),
        ("d0", &[]),
        ("e0", &[]),
        ("a1", &["a0", "b0", "c0"]),
        ("b1", &["b0", "c0", "d0"]),
        ("c1", &["c0", "d0", "e0"]),
        ("d1", &["d0", "e0"]),
        ("e1", &["e0"]),
    ]);
    check(
        &text,
        expect![[r#"
            key       order age run released freed incr decr
            ('e', 0)      0   5   0        3     0    3    0
            ('e', 1)      1   0   1        1     0    0    0
            ('d', 0)      2   5   1        3     0    2    0
            ('d', 1)      3   0   2        2     0    0    0
            ('c', 0)      4   5   2        3     0    1    0
            ('c', 1)      5   0   3        3     1    0    0
            ('b', 0)      6   3   2        3     0    1    0
            ('b', 1)      7   0   3        3     1    0    0
            ('a', 0)      8   1   2        3     0    1    0
            ('a', 1)      9   0   3        3     3    0    0
        "#]],
    );
}

/// A random graph of 24 tasks (`taskgraph generate random --tasks 24 --seed
/// 7`), whose figures dask 2026.8.0's `diagnostics` computed for the same
/// order: here memory also decreases, and one task stands alone.
#[test]
fn random_graph_as_dask_measures_it() {
    let deps: [&[&str]; 24] = [
        &[],
        &[],
        &["r0"],
        &["r1"],
        &[],
        &["r4", "r2", "r1"],
        &["r4", "r0", "r2"],
        &["r0", "r2", "r6"],
        &["r3"],
        &["r5", "r0", "r8"],
        &["r6"],
        &["r0"],
        &["r9", "r10", "r7"],
        &["r0", "r3"],
        &["r6"],
        &["r9", "r5"],
        &["r7", "r5"],
        &["r16", "r6", "r0"],
        &["r11", "r16"],
        &["r10", "r13"],
        &["r15", "r6"],
        &[],
        &["r18", "r5"],
        &["r10"],
    ];
    let names: Vec<String> = (0..deps.len()).map(|i| format!("r{i}")).collect();
    let tasks: Vec<(&str, &[&str])> = names.iter().map(String::as_str).zip(deps).collect();
    check(
        &graph(&tasks),
        expect![[r#"
            key       order age run released freed incr decr
            ('r', 0)      0  22   0        3     0    3    0
            ('r', 2)      1   8   1        6     0    5    0
            ('r', 4)      2   6   2        6     0    4    0
            ('r', 1)      3   2   3        5     0    2    0
            ('r', 5)      4  17   4        5     0    1    0
            ('r', 3)      5  11   5        6     1    1    0
            ('r', 8)      6   1   5        6     0    1    0
            ('r', 9)      7   7   6        7     1    1    0
            ('r', 6)      8  14   6        3     1    0    3
            ('r', 7)      9   9   6        4     1    0    2
            ('r', 10)    10   7   6        6     0    0    0
            ('r', 12)    11   0   7        7     0    0    0
            ('r', 23)    12   0   7        7     0    0    0
            ('r', 14)    13   0   7        7     0    0    0
            ('r', 15)    14   1   7        7     1    0    0
            ('r', 20)    15   0   7        7     1    0    0
            ('r', 13)    16   1   6        6     1    0    0
            ('r', 19)    17   0   6        6     2    0    0
            ('r', 16)    18   4   4        3     1    0    1
            ('r', 11)    19   1   4        5     0    1    0
            ('r', 18)    20   1   5        5     1    0    0
            ('r', 22)    21   0   5        5     2    0    0
            ('r', 17)    22   0   3        3     3    0    0
            ('r', 21)    23   0   0        0     0    0    0
        "#]],
    );
}
