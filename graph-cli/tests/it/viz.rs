//! `taskgraph viz`: DOT coloured by order or worker with labels that keep
//! key and order position, rendering through Graphviz, a clear error without
//! it, the refusal of huge graphs, and errors that name the flag or file.

use std::process::{Command, Stdio};

use crate::common::{scratch, taskgraph};
use crate::viz_common::{box_labels, has_dot};
use graph_core::{generate, json};

fn tree_text() -> String {
    json::to_string(&generate::tree(16, 4)).unwrap()
}

#[test]
fn dot_by_order_and_by_worker() {
    let run = taskgraph(&["viz", "-"], tree_text().as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with("digraph taskgraph {\n  rankdir=BT;"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.matches(" -> ").count(),
        20,
        "one edge per dependency"
    );
    let labels = box_labels(&run.stdout);
    assert_eq!(labels.len(), 21);
    // Each label keeps its key and its order position, and positions are a
    // permutation of 0..21.
    assert_eq!(labels[0][0], "leaf (0)");
    let mut positions: Vec<u32> = labels
        .iter()
        .map(|lines| lines[1].trim_start_matches('#').parse().unwrap())
        .collect();
    positions.sort_unstable();
    assert_eq!(positions, (0..21).collect::<Vec<u32>>());
    // The first task is viridis' dark purple with white text, the last its
    // yellow with black text.
    assert!(
        run.stdout
            .contains("\\n#0\", fillcolor=\"#440154\", fontcolor=\"#ffffff\""),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("\\n#20\", fillcolor=\"#fde725\", fontcolor=\"#000000\""),
        "{}",
        run.stdout
    );

    let run = taskgraph(
        &["viz", "-", "--color", "worker", "--workers", "2"],
        tree_text().as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains(" · worker 1\""), "{}", run.stdout);
    assert!(
        run.stdout.contains("style=dashed"),
        "a tree on two workers has a cut edge"
    );
}

#[test]
fn too_large_graphs_are_refused_with_advice() {
    let run = taskgraph(&["viz", "-", "--max-tasks", "10"], tree_text().as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("- has 21 tasks, more than --max-tasks 10")
            && run.stderr.contains("--collapse")
            && run.stderr.contains("fewer chunks or partitions"),
        "{}",
        run.stderr
    );
    // The default limit is 2,000 tasks.
    let big = json::to_string(&generate::chain(2_001)).unwrap();
    let run = taskgraph(&["viz", "-"], big.as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("2001 tasks, more than --max-tasks 2000"),
        "{}",
        run.stderr
    );
    let ok = json::to_string(&generate::chain(2_000)).unwrap();
    let run = taskgraph(&["viz", "-"], ok.as_bytes());
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn errors_name_the_flag_or_the_file() {
    let run = taskgraph(&["viz", "-", "--color", "pressure"], tree_text().as_bytes());
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("--color")
            && run.stderr.contains("memorypressure")
            && run.stderr.contains("ages"),
        "{}",
        run.stderr
    );
    let run = taskgraph(
        &["viz", "-", "--color", "worker", "--workers", "0"],
        tree_text().as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("--workers"), "{}", run.stderr);
    let dir = scratch("viz-errors");
    let out = dir.join("tree.jpg");
    let run = taskgraph(
        &["viz", "-", "-o", out.to_str().unwrap()],
        tree_text().as_bytes(),
    );
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr
            .contains("tree.jpg: cannot write .jpg; write .dot, .svg, .png, .pdf or .html"),
        "{}",
        run.stderr
    );
    let missing = dir.join("missing.json");
    let run = taskgraph(&["viz", missing.to_str().unwrap()], b"");
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("missing.json"), "{}", run.stderr);
    let run = taskgraph(
        &["viz", "-"],
        b"{\"format\": \"taskgraph-json/1\", \"tasks\": [",
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dot_files_are_written_whole() {
    let dir = scratch("viz-dot");
    let out = dir.join("tree.dot");
    std::fs::write(&out, "old").unwrap();
    let run = taskgraph(
        &["viz", "-", "-o", out.to_str().unwrap()],
        tree_text().as_bytes(),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .starts_with("digraph taskgraph {")
    );
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(names, ["tree.dot"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn svg_renders_through_graphviz_or_says_to_install_it() {
    let dir = scratch("viz");
    let svg = dir.join("tree.svg");
    let run = taskgraph(
        &["viz", "-", "-o", svg.to_str().unwrap()],
        tree_text().as_bytes(),
    );
    if has_dot() {
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(std::fs::read_to_string(&svg).unwrap().contains("<svg"));
    } else {
        assert!(run.stderr.contains("install Graphviz"), "{}", run.stderr);
    }
    // Without `dot` on the PATH, the error says what to do, for pictures and
    // for pages alike, and leaves no file behind.
    for name in ["tree2.svg", "tree2.html"] {
        let out = dir.join(name);
        let output = Command::new(env!("CARGO_BIN_EXE_taskgraph"))
            .args(["viz", "-", "-o", out.to_str().unwrap()])
            .env("PATH", "")
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(tree_text().as_bytes())?;
                child.wait_with_output()
            })
            .unwrap();
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(
            stderr.contains("install Graphviz") && stderr.contains("write a .dot file"),
            "{stderr}"
        );
        assert!(!out.exists());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `dot` that never ends, on a `PATH` of its own: it writes its pid to
/// `dot.pid` in `dir`.
#[cfg(unix)]
fn hung_dot(dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;

    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let dot = bin.join("dot");
    let pid_file = dir.join("dot.pid");
    std::fs::write(
        &dot,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 1000\n",
            pid_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&dot, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Whether the process whose pid `dir/dot.pid` holds has ended (and been
/// reaped), waiting a little for the pid to be written.
#[cfg(unix)]
fn dot_gone(dir: &std::path::Path) -> bool {
    let pid = (0..1000)
        .find_map(|_| {
            let pid = std::fs::read_to_string(dir.join("dot.pid")).unwrap_or_default();
            let pid = pid.trim();
            if pid.is_empty() {
                std::thread::sleep(std::time::Duration::from_millis(10));
                return None;
            }
            Some(pid.to_owned())
        })
        .expect("the fake dot started");
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(unix)]
#[test]
fn a_dot_that_never_ends_is_stopped_at_its_time_limit_and_on_ctrl_c() {
    let dir = scratch("viz-hung-dot");
    let bin = hung_dot(&dir);
    let graph = dir.join("tree.json");
    std::fs::write(&graph, tree_text()).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let viz = |out: &str| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_taskgraph"));
        command
            .args(["viz", graph.to_str().unwrap(), "-o"])
            .arg(dir.join(out))
            .env("PATH", &path)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    };
    // At the limit: an error that says what to do, dot killed, no file.
    let output = viz("tree.svg")
        .env("TASKGRAPH_DOT_TIMEOUT", "0.5")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Graphviz's dot took more than 0.5 s on ")
            && stderr.contains("TASKGRAPH_DOT_TIMEOUT=SECONDS"),
        "{stderr}"
    );
    assert!(dot_gone(&dir) && !dir.join("tree.svg").exists());
    // On SIGINT (no limit near): the command exits 130 and takes dot with
    // it, for a page as for a picture.
    std::fs::remove_file(dir.join("dot.pid")).unwrap();
    let child = viz("tree.html").spawn().unwrap();
    assert!(!dot_gone(&dir), "dot runs until the signal");
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(dot_gone(&dir) && !dir.join("tree.html").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
