//! `taskgraph viz -o page.html`: one self-contained page (no external URL,
//! script and styles inline) with the SVG and a hover card's data for every
//! task: key, order position, the coloured figure, dependencies and
//! dependents; and the same for groups with `--collapse`.

use crate::common::{scratch, taskgraph};
use crate::viz_common::has_dot;
use serde_json::Value;

/// dask's `test_diagnostics` graph, plus a task whose key would end a
/// `<script>` element if the page did not escape it.
const GRAPH: &str = r#"{"format": "taskgraph-json/1", "tasks": [
  {"key": ["a", 0], "deps": []}, {"key": ["b", 0], "deps": []}, {"key": ["c", 0], "deps": []},
  {"key": ["d", 0], "deps": []}, {"key": ["e", 0], "deps": []},
  {"key": ["a", 1], "deps": [["a", 0], ["b", 0], ["c", 0]]},
  {"key": ["b", 1], "deps": [["b", 0], ["c", 0], ["d", 0]]},
  {"key": ["c", 1], "deps": [["c", 0], ["d", 0], ["e", 0]]},
  {"key": ["d", 1], "deps": [["d", 0], ["e", 0]]},
  {"key": ["e", 1], "deps": [["e", 0]]},
  {"key": "</script><script>alert(1)</script>-&", "deps": [["a", 1]]}
]}"#;

/// Writes the page of `args` and returns it, or `None` without Graphviz
/// (after checking the error says to install it).
fn page(name: &str, args: &[&str]) -> Option<String> {
    let dir = scratch(name);
    let out = dir.join("page.html");
    let mut all = vec!["viz", "-", "-o", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let run = taskgraph(&all, GRAPH.as_bytes());
    if !has_dot() {
        assert!(run.stderr.contains("install Graphviz"), "{}", run.stderr);
        return None;
    }
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let page = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    Some(page)
}

/// The hover cards' data of a page.
fn cards(page: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"cards\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}

#[test]
fn the_page_is_self_contained() {
    let Some(page) = page("viz-html-self", &["--color", "ages", "--strategy", "dask"]) else {
        return;
    };
    assert!(page.starts_with("<!DOCTYPE html>"));
    for external in ["http://", "https://", "//cdn", " src=", "@import", "url("] {
        assert!(!page.contains(external), "{external} in the page");
    }
    // The only link is the empty icon, so that the browser asks for none.
    assert_eq!(page.matches("<link").count(), 1);
    assert!(page.contains("<link rel=\"icon\" href=\"data:,\">"));
    // One data block and one inline script, each closed once: the key with
    // `</script>` in it is escaped.
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(page.contains("<style>"));
    assert!(page.contains("<svg") && page.contains("viewBox="));
    assert!(page.contains("id=\"card\""));
    assert!(page.contains("addEventListener(\"wheel\""));
    assert!(page.contains("addEventListener(\"mouseover\""));
    // The SVG keeps its legend and a group per task, `v0`, `v1`, ...
    assert!(page.contains("<g id=\"legend\" class=\"node legend\">"));
    for i in 0..11 {
        assert!(
            page.contains(&format!("<g id=\"v{i}\" class=\"node\">")),
            "v{i}"
        );
    }
}

#[test]
fn every_task_has_its_hover_card() {
    let Some(page) = page("viz-html-cards", &["--color", "ages", "--strategy", "dask"]) else {
        return;
    };
    let cards = cards(&page);
    assert_eq!(cards["kind"], "tasks");
    assert_eq!(cards["colour"], "ages");
    let nodes = cards["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 11);
    let by_key = |key: &str| {
        nodes
            .iter()
            .position(|node| node["key"] == key)
            .unwrap_or_else(|| panic!("{key}"))
    };
    // ('e', 0) runs first, is held 5 steps, and feeds c1, d1 and e1.
    let e0 = &nodes[by_key("('e', 0)")];
    assert_eq!(e0["figures"]["order"], 0);
    assert_eq!(e0["figure"], 5);
    assert_eq!(e0["figures"]["age"], 5);
    assert_eq!(e0["figures"]["held_when_released"], 3);
    assert_eq!(e0["deps"], serde_json::json!([]));
    let dependents: Vec<usize> = e0["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let mut names: Vec<&str> = dependents
        .iter()
        .map(|&d| nodes[d]["key"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["('c', 1)", "('d', 1)", "('e', 1)"]);
    // ('a', 1) frees its three inputs.
    let a1 = &nodes[by_key("('a', 1)")];
    assert_eq!(a1["figures"]["freed"], 3);
    assert_eq!(a1["deps"].as_array().unwrap().len(), 3);
    // The nasty key survives as data, in Python's spelling.
    let nasty = &nodes[by_key("'</script><script>alert(1)</script>-&'")];
    assert_eq!(nasty["deps"], serde_json::json!([by_key("('a', 1)")]));
}

#[test]
fn a_worker_page_names_the_workers() {
    let Some(page) = page("viz-html-worker", &["--color", "worker", "--workers", "2"]) else {
        return;
    };
    let cards = cards(&page);
    for node in cards["nodes"].as_array().unwrap() {
        let worker = node["figures"]["worker"].as_u64().unwrap();
        assert!(worker < 2);
        assert_eq!(node["figure"], worker);
    }
}

#[test]
fn a_collapsed_page_has_a_card_per_group() {
    let Some(page) = page(
        "viz-html-groups",
        &["--collapse", "--color", "memorypressure"],
    ) else {
        return;
    };
    assert!(!page.contains("http://") && !page.contains("https://"));
    let cards = cards(&page);
    assert_eq!(cards["kind"], "groups");
    let nodes = cards["nodes"].as_array().unwrap();
    let labels: Vec<&str> = nodes.iter().map(|n| n["label"].as_str().unwrap()).collect();
    assert_eq!(labels.len(), 6);
    assert_eq!(labels[..5], ["a", "b", "c", "d", "e"]);
    let tasks: Vec<u64> = nodes.iter().map(|n| n["tasks"].as_u64().unwrap()).collect();
    assert_eq!(tasks, [2, 2, 2, 2, 2, 1]);
    // Group `c` feeds a (c0 -> a1), b (c0 -> b1), and holds c0 -> c1 inside.
    let c = &nodes[2];
    assert_eq!(c["dependents"], serde_json::json!([[0, 1], [1, 1]]));
    assert_eq!(c["internal_edges"], 1);
    assert_eq!(c["deps"], serde_json::json!([[3, 1], [4, 1]]));
}
