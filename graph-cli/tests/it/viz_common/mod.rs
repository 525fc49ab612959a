//! Helpers of the `taskgraph viz` tests: whether Graphviz is installed, and
//! reading boxes back from DOT.

#![allow(dead_code, unreachable_pub)]

use std::process::{Command, Stdio};

/// Whether Graphviz's `dot` can be started. Where `TASKGRAPH_GRAPHVIZ=require`
/// (as CI sets it, having installed Graphviz) a missing `dot` fails the test
/// instead of leaving its pictures unrendered.
pub fn has_dot() -> bool {
    let found = Command::new("dot")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    assert!(
        found || std::env::var_os("TASKGRAPH_GRAPHVIZ").is_none_or(|v| v != "require"),
        "TASKGRAPH_GRAPHVIZ=require, but Graphviz's dot cannot be started"
    );
    found
}

/// The value of attribute `name` in one DOT statement, unescaped no further
/// than DOT quoting (`\n` stays two characters).
pub fn attribute(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
    let mut escaped = false;
    let end = line[start..].char_indices().find(|&(_, c)| {
        let end = c == '"' && !escaped;
        escaped = c == '\\' && !escaped;
        end
    })?;
    Some(line[start..start + end.0].to_owned())
}

/// The label of every box (not the legend) of a DOT picture, lines split.
pub fn box_labels(dot: &str) -> Vec<Vec<String>> {
    dot.lines()
        .filter(|line| line.contains(" [id=\"v"))
        .map(|line| {
            attribute(line, "label")
                .unwrap()
                .split("\\n")
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// The edges of a DOT picture: (from box, to box, label).
pub fn edges(dot: &str) -> Vec<(usize, usize, Option<String>)> {
    dot.lines()
        .filter_map(|line| {
            let line = line.trim();
            let (from, rest) = line.strip_prefix('n')?.split_once(" -> n")?;
            let to: String = rest.chars().take_while(char::is_ascii_digit).collect();
            Some((
                from.parse().ok()?,
                to.parse().ok()?,
                attribute(line, "label"),
            ))
        })
        .collect()
}
