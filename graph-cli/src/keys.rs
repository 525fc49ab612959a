//! The `--keys JSON` option shared by the commands that take requested keys.

use anyhow::Context;
use graph_core::{Key, TaskGraph};

/// Parses `--keys`: a JSON array of keys, each a string, a number or an array
/// (a tuple key), as in taskgraph-json/1.
pub(crate) fn parse(text: &str) -> anyhow::Result<Vec<Key>> {
    graph_core::json::check_integers(text.as_bytes()).context("--keys")?;
    serde_json::from_str(text).with_context(|| {
        format!("--keys: expected a JSON array of keys such as '[\"a\", [\"x\", 0]]', got {text:?}")
    })
}

/// The requested keys: those given, or else the graph's leaves (the tasks no
/// task depends on), in graph order.
pub(crate) fn requested(graph: &TaskGraph, given: Option<&str>) -> anyhow::Result<Vec<Key>> {
    match given {
        Some(text) => {
            let keys = parse(text)?;
            if let Some(missing) = keys.iter().find(|key| graph.node_id(key).is_none()) {
                anyhow::bail!("--keys: key {missing} is not in the graph");
            }
            Ok(keys)
        }
        None => Ok(graph.leaf_keys()?),
    }
}
