//! `taskgraph stages`: the exact `--json` line on BNDL's example and on a
//! shuffle, the plan as text, `--wide-ops` and `--keys`, errors; and
//! `optimize --passes stages` keeping results.

use crate::common;
use crate::common::{scratch, taskgraph};
use graph_core::{generate, json};

fn stages(graph: &graph_core::TaskGraph, extra: &[&str]) -> common::Run {
    let text = json::to_string(graph).unwrap();
    let mut args = vec!["stages", "-"];
    args.extend_from_slice(extra);
    taskgraph(&args, text.as_bytes())
}

#[test]
fn bndl_example_has_two_stages_of_four_and_two_tasks() {
    // 4 partitions read and mapped, shuffled into 2 reducers, mapped again.
    let run = stages(&generate::map_shuffle_map(4, 2), &["--json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "{\"stage_count\": 2, \"stages\": [\
         {\"stage\": 0, \"tasks\": 8, \"tasks_after_coalescing\": 4, \"wide_inputs\": 0}, \
         {\"stage\": 1, \"tasks\": 4, \"tasks_after_coalescing\": 2, \"wide_inputs\": 8}], \
         \"barriers\": 1, \"edges\": 14, \"edges_with_barriers\": 12}\n"
    );
}

#[test]
fn the_plan_as_text() {
    let run = stages(&generate::map_shuffle_map(4, 2), &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let expected = [
        "2 stages: 12 tasks, 6 once each partition's narrow work in a stage is one task",
        "wide edges: 8 (in complete bipartite blocks)",
        "  stage       tasks   coalesced  wide inputs  from",
        "      0           8           4            0  -",
        "      1           4           2            8  8 from stage 0",
        "barriers: 1; 14 edges, 12 with barriers (2 fewer)",
        "  4 x 2: (('map', 0) .. ('map', 3)) -> (('reduce', 0) .. ('reduce', 1)); 8 edges become 6",
    ];
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), expected);
}

#[test]
fn an_all_to_all_shuffle() {
    let dir = scratch("stages-all-to-all");
    let path = dir.join("a2a.json.gz");
    let made = taskgraph(
        &[
            "generate",
            "all-to-all",
            "--tasks",
            "200",
            "-o",
            path.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(made.code, Some(0), "{}", made.stderr);
    let run = taskgraph(&["stages", path.to_str().unwrap(), "--json"], b"");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["stage_count"], 2);
    assert_eq!(value["stages"][1]["wide_inputs"], 100 * 100);
    assert_eq!(value["barriers"], 1);
    assert_eq!(value["edges"], 100 * 100);
    assert_eq!(value["edges_with_barriers"], 100 + 100);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn wide_ops_split_a_dask_style_shuffle() {
    // dask's shuffle joins its inputs and outputs through pieces, each read
    // once: no complete bipartite block, so one stage unless the
    // concatenation is named.
    let graph = generate::shuffle_split(3, 2);
    let plain = stages(&graph, &["--json"]);
    assert!(
        plain.stdout.starts_with("{\"stage_count\": 1,"),
        "{}",
        plain.stdout
    );
    let named = stages(&graph, &["--json", "--wide-ops", "sum"]);
    assert_eq!(
        named.stdout,
        "{\"stage_count\": 2, \"stages\": [\
         {\"stage\": 0, \"tasks\": 9, \"tasks_after_coalescing\": 9, \"wide_inputs\": 0}, \
         {\"stage\": 1, \"tasks\": 2, \"tasks_after_coalescing\": 2, \"wide_inputs\": 6}], \
         \"barriers\": 0, \"edges\": 12, \"edges_with_barriers\": 12}\n"
    );
}

#[test]
fn kept_keys_stay_tasks() {
    let graph = generate::chain(10);
    let all = stages(&graph, &["--json"]);
    assert!(
        all.stdout
            .contains("\"tasks\": 10, \"tasks_after_coalescing\": 1,"),
        "{}",
        all.stdout
    );
    let kept = stages(
        &graph,
        &["--json", "--keys", "[[\"chain\", 4], [\"chain\", 9]]"],
    );
    assert!(
        kept.stdout
            .contains("\"tasks\": 10, \"tasks_after_coalescing\": 2,"),
        "{}",
        kept.stdout
    );
}

#[test]
fn errors_name_the_problem() {
    let graph = generate::chain(3);
    let run = stages(&graph, &["--keys", "[\"nope\"]"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: --keys: key 'nope' is not in the graph\n"
    );
    let run = taskgraph(&["stages", "-"], b"{\"format\": \"taskgraph-json/1\", \"tasks\": [{\"key\": \"a\", \"task\": {\"ref\": \"a\"}}]}");
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("cycle"),
        "{}",
        run.stderr
    );
}

#[test]
fn optimize_stages_coalesces_and_keeps_results() {
    let dir = scratch("optimize-stages");
    let input = dir.join("in.json");
    let output = dir.join("out.json");
    json::write_path(&generate::map_shuffle_map(4, 2), &input).unwrap();
    let run = taskgraph(
        &[
            "optimize",
            input.to_str().unwrap(),
            "--passes",
            "cull,stages",
            "-o",
            output.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.starts_with("cull"), "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("stages                   12 -> 6 "),
        "{}",
        run.stdout
    );
    let optimized = json::read_path(&output).unwrap();
    assert_eq!(optimized.len(), 6);
    // The same outputs from both graphs.
    let keys = "[[\"output\", 0], [\"output\", 1]]";
    let before = taskgraph(
        &["run", input.to_str().unwrap(), "--keys", keys, "--json"],
        b"",
    );
    let after = taskgraph(
        &["run", output.to_str().unwrap(), "--keys", keys, "--json"],
        b"",
    );
    assert_eq!(before.code, Some(0), "{}", before.stderr);
    let results =
        |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap()["results"].clone();
    assert_eq!(results(&before.stdout), results(&after.stdout));
    let unknown = taskgraph(
        &[
            "optimize",
            input.to_str().unwrap(),
            "--passes",
            "stagez",
            "-o",
            output.to_str().unwrap(),
        ],
        b"",
    );
    assert_eq!(
        unknown.stderr,
        "error: unknown pass \"stagez\" (passes: cull, inline, inline_functions, fuse_linear, fuse, stages)\n"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
