//! Tidy checks of the whole workspace, run by `cargo test`: the architecture's
//! dependency rule, a `//!` line at the top of every Rust file, and a reason
//! written down for every panic left in library code.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The layering: each crate of the workspace, and the siblings it may
/// depend on (a sibling may always be a dev-dependency, for tests). The
/// algorithm crates build on `graph-core` alone, and so do the processes'
/// connections; the runtime across processes builds on them and on the
/// executor's core; the pictures on the order, the placement
/// and the stage plan; the bindings and the command sit on top.
const LAYERS: [(&str, &[&str]); 12] = [
    ("graph-core", &[]),
    ("graph-order", &["graph-core"]),
    ("graph-optimize", &["graph-core"]),
    ("graph-rewrite", &["graph-core"]),
    ("graph-exec", &["graph-core"]),
    ("graph-assign", &["graph-core"]),
    ("graph-transport", &["graph-core"]),
    (
        "graph-distributed",
        &["graph-core", "graph-exec", "graph-transport"],
    ),
    (
        "graph-viz",
        &[
            "graph-core",
            "graph-order",
            "graph-optimize",
            "graph-assign",
        ],
    ),
    (
        "graph-python",
        &[
            "graph-core",
            "graph-order",
            "graph-optimize",
            "graph-exec",
            "graph-distributed",
            "graph-assign",
            "graph-viz",
        ],
    ),
    (
        "graph-cli",
        &[
            "graph-core",
            "graph-order",
            "graph-optimize",
            "graph-rewrite",
            "graph-exec",
            "graph-assign",
            "graph-distributed",
            "graph-viz",
        ],
    ),
    ("xtask", &[]),
];

/// The `graph-*` names under `[dependencies]` (not dev- or build-) of a manifest.
fn sibling_dependencies(manifest: &str) -> Vec<String> {
    let mut section = String::new();
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_owned();
            continue;
        }
        let is_dependencies = section == "[dependencies]"
            || section.starts_with("[target.") && section.ends_with(".dependencies]");
        if is_dependencies && line.starts_with("graph-") {
            let name = line.split(['=', '.', ' ']).next().unwrap_or(line);
            found.push(name.to_owned());
        }
        if let Some(name) = section
            .strip_prefix("[dependencies.")
            .and_then(|s| s.strip_suffix(']'))
            && name.starts_with("graph-")
            && !found.iter().any(|f| f == name)
        {
            found.push(name.to_owned());
        }
    }
    found
}

#[test]
fn every_crate_depends_only_on_the_layers_below_it() {
    for (krate, allowed) in LAYERS {
        let path = root().join(krate).join("Cargo.toml");
        let manifest =
            fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        for dep in sibling_dependencies(&manifest) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{krate} depends on {dep}, outside its layer (ARCHITECTURE.md): it may depend \
                 on {allowed:?}, and on any sibling as a dev-dependency"
            );
        }
    }
}

#[test]
fn architecture_lists_the_dependencies_the_manifests_have() {
    let architecture = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let listed = architecture
        .split_once("<!-- dependencies:start -->")
        .and_then(|(_, rest)| rest.split_once("<!-- dependencies:end -->"))
        .map(|(block, _)| block)
        .expect("ARCHITECTURE.md lists the dependencies between its markers");
    let mut crates = 0;
    for line in listed.lines().filter(|line| line.contains("->")) {
        let (krate, deps) = line.split_once("->").unwrap();
        let krate = krate.trim();
        let mut listed: Vec<&str> = deps
            .split(',')
            .map(str::trim)
            .filter(|dep| !dep.is_empty())
            .collect();
        listed.sort_unstable();
        let manifest = fs::read_to_string(root().join(krate).join("Cargo.toml"))
            .unwrap_or_else(|err| panic!("ARCHITECTURE.md lists {krate}: {err}"));
        let mut actual = sibling_dependencies(&manifest);
        actual.sort_unstable();
        assert_eq!(
            listed, actual,
            "ARCHITECTURE.md lists {krate}'s dependencies as {listed:?}; its manifest has {actual:?}"
        );
        crates += 1;
    }
    // Every crate but xtask, which depends on none.
    assert_eq!(
        crates,
        LAYERS.len() - 1,
        "ARCHITECTURE.md lists every crate"
    );
}

#[test]
fn every_crate_of_the_workspace_has_a_layer() {
    let workspace = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let members: Vec<&str> = workspace
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .map(|(list, _)| list)
        .expect("a members list")
        .split(',')
        .map(|member| member.trim().trim_matches('"'))
        .filter(|member| !member.is_empty())
        .collect();
    for member in &members {
        assert!(
            LAYERS.iter().any(|(krate, _)| krate == member),
            "{member} has no layer in xtask/tests/tidy.rs"
        );
    }
    assert_eq!(members.len(), LAYERS.len(), "a layer names no member");
}

#[test]
fn sibling_rule_reads_manifests_right() {
    let manifest = "[dependencies]\ngraph-core.workspace = true\ngraph-order = { path = \"x\" }\n\
                    [dev-dependencies]\ngraph-exec.workspace = true\n[dependencies.graph-assign]\npath = \"y\"\n";
    assert_eq!(
        sibling_dependencies(manifest),
        ["graph-core", "graph-order", "graph-assign"]
    );
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name == "target" || name == "corpus" || name == "artifacts" {
            continue;
        }
        if path.is_dir() {
            rust_files(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_rust_file_opens_with_a_module_doc_line() {
    let mut files = Vec::new();
    rust_files(&root(), &mut files);
    assert!(files.len() > 10, "found only {} Rust files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| path.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` line saying what they hold: {missing:?}"
    );
}

/// The most lines a source file of a crate's `src/` (or of the Python
/// package) may have: past it, a file holds several concerns.
const MOST_LINES: usize = 800;

#[test]
fn no_source_file_is_over_800_lines() {
    let mut files = Vec::new();
    for (name, _) in LAYERS {
        rust_files(&root().join(name).join("src"), &mut files);
    }
    let python = root().join("python/taskgraph");
    files.extend(
        fs::read_dir(&python)
            .unwrap()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "py")),
    );
    assert!(files.len() > 50, "found only {} source files", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let lines = fs::read_to_string(path).unwrap_or_default().lines().count();
            let name = path.strip_prefix(root()).unwrap().display();
            (lines > MOST_LINES).then(|| format!("{name}: {lines} lines"))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split by concern the files over {MOST_LINES} lines: {long:?}"
    );
}

/// The public names at the root of a crate's `lib.rs`: its `pub` items and
/// what it re-exports, but the README's doctest.
fn root_names(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut doctest = false;
    let mut lines = lib.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("#[cfg(doctest)]") {
            doctest = true;
            continue;
        }
        if let Some(item) = line.strip_prefix("pub use ") {
            let mut text = item.to_owned();
            while !text.contains(';') {
                let Some(more) = lines.next() else { break };
                text.push_str(more);
            }
            let text = text.trim_end_matches(';');
            let inner = match (text.find('{'), text.rfind('}')) {
                (Some(open), Some(close)) => &text[open + 1..close],
                _ => text,
            };
            for name in inner.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                let name = name.rsplit(" as ").next().unwrap_or(name);
                names.push(name.rsplit("::").next().unwrap_or(name).to_owned());
            }
        } else if let Some(item) = line.strip_prefix("pub ") {
            let mut words = item.split_whitespace();
            let kind = words.next().unwrap_or("");
            if [
                "mod", "fn", "struct", "enum", "trait", "type", "const", "static",
            ]
            .contains(&kind)
                && !std::mem::take(&mut doctest)
                && let Some(name) = words.next()
            {
                let name = name
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .next();
                names.extend(name.map(str::to_owned));
            }
        } else if !line.starts_with("#[") && !line.starts_with("///") {
            doctest = false;
        }
    }
    names
}

#[test]
fn the_executor_and_runtime_crates_have_at_most_25_names_at_their_root() {
    for krate in ["graph-exec", "graph-distributed"] {
        let lib = fs::read_to_string(root().join(krate).join("src/lib.rs")).unwrap();
        let names = root_names(&lib);
        assert!(names.len() > 5, "{krate}: found only {names:?}");
        assert!(
            names.len() <= 25,
            "{krate} has {} names at its root (at most 25; the rest in modules): {names:?}",
            names.len()
        );
    }
}

#[test]
fn root_names_reads_items_and_re_exports() {
    let lib = "pub mod scheduler;\nmod local;\npub use local::{Callbacks, LocalExecutor};\n\
               pub use graph_transport as transport;\npub use a::{\n    B, C,\n};\n\
               pub fn run() {}\n/// The README.\n#[cfg(doctest)]\n#[doc = \"x\"]\npub struct ReadmeExample;\n";
    assert_eq!(
        root_names(lib),
        [
            "scheduler",
            "Callbacks",
            "LocalExecutor",
            "transport",
            "B",
            "C",
            "run"
        ]
    );
}

#[test]
fn readme_opens_with_the_two_commands() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let demo = readme.find("cargo run --release -p graph-cli -- demo");
    let test = readme.find("cargo test --workspace");
    assert!(
        demo.is_some() && test.is_some(),
        "README.md must give both commands"
    );
    let first_section = readme.find("\n## ").unwrap_or(readme.len());
    assert!(
        demo.unwrap() < first_section && test.unwrap() < first_section,
        "the commands come first"
    );
}

/// The crates whose `src/` is library code (every layer but the command
/// and the workspace's own tasks): what users call, where no input of
/// theirs may reach a panic.
fn library_crates() -> impl Iterator<Item = &'static str> {
    LAYERS
        .iter()
        .map(|&(name, _)| name)
        .filter(|name| !["graph-cli", "xtask"].contains(name))
}

/// What panics: `.unwrap()`, `.expect(` and the panicking macros (not the
/// `debug_` asserts, which release builds leave out).
const PANICS: [&str; 9] = [
    ".unwrap()",
    ".expect(",
    "panic!(",
    "unreachable!(",
    "todo!(",
    "unimplemented!(",
    "assert!(",
    "assert_eq!(",
    "assert_ne!(",
];

/// The panic sites of a library file's text: every [`PANICS`] match on a
/// line that is not a comment, up to the file's `#[cfg(test)]` module. A
/// macro counts only as a whole word (`debug_assert!(` is not `assert!(`).
fn panic_sites(text: &str) -> usize {
    let mut sites = 0;
    let mut lines = text.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        // A test module written inline ends the library code; one in a file
        // of its own (`mod tests;`) is only declared here.
        if line.starts_with("#[cfg(test)]")
            && !lines
                .peek()
                .is_some_and(|next| next.starts_with("mod ") && next.ends_with(';'))
        {
            break;
        }
        if line.starts_with("//") {
            continue;
        }
        for pattern in PANICS {
            let whole_word = !pattern.starts_with('.');
            sites += line
                .match_indices(pattern)
                .filter(|&(at, _)| {
                    !whole_word
                        || !line[..at]
                            .chars()
                            .next_back()
                            .is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
                .count();
        }
    }
    sites
}

/// Each library file's panic sites, by path from the root: test files and
/// the fuzz targets' checkers (`fuzz.rs`, behind a feature) left out.
fn library_panic_sites() -> std::collections::BTreeMap<String, usize> {
    let mut sites = std::collections::BTreeMap::new();
    for name in library_crates() {
        let mut files = Vec::new();
        rust_files(&root().join(name).join("src"), &mut files);
        for path in files {
            let file = path.file_name().unwrap().to_string_lossy();
            if file == "tests.rs" || file == "fuzz.rs" {
                continue;
            }
            let count = panic_sites(&fs::read_to_string(&path).unwrap());
            if count > 0 {
                let relative = path.strip_prefix(root()).unwrap();
                sites.insert(relative.display().to_string(), count);
            }
        }
    }
    sites
}

#[test]
fn every_panic_in_library_code_is_listed_with_why_no_input_reaches_it() {
    let listed_text = fs::read_to_string(root().join("xtask/panics.txt")).unwrap();
    let mut listed = std::collections::BTreeMap::new();
    for line in listed_text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let (site, why) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("xtask/panics.txt: `{line}` is not `PATH COUNT: WHY`"));
        let (path, count) = site
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("xtask/panics.txt: `{line}` has no count"));
        assert!(
            why.len() > 20,
            "xtask/panics.txt: {path} says too little why"
        );
        listed.insert(path.to_owned(), count.parse::<usize>().unwrap());
    }
    let found = library_panic_sites();
    let mut wrong = Vec::new();
    for (path, &count) in &found {
        match listed.get(path) {
            Some(&allowed) if allowed == count => {}
            Some(&allowed) => wrong.push(format!("{path}: {count} panic sites, {allowed} listed")),
            None => wrong.push(format!("{path}: {count} panic sites, none listed")),
        }
    }
    for path in listed.keys().filter(|path| !found.contains_key(*path)) {
        wrong.push(format!("{path}: listed, but has no panic site now"));
    }
    assert!(
        wrong.is_empty(),
        "library code panics only where no input can reach (xtask/panics.txt says why, \
         file by file; return an error instead, or add the site and its reason):\n{}",
        wrong.join("\n")
    );
}

#[test]
fn panic_sites_are_counted_as_code_not_comments() {
    let text = "\
//! a.unwrap() in a doc line
fn f() {
    x.unwrap(); y.expect(\"why\");
    debug_assert!(ok);
    assert!(ok); assert_eq!(a, b);
    // panic!(\"a comment\")
    my_panic!(no);
}
#[cfg(test)]
mod tests { fn g() { z.unwrap(); } }
";
    assert_eq!(panic_sites(text), 4);
    // A test module in a file of its own ends nothing.
    let declared = "#[cfg(test)]\nmod tests;\nfn f() { x.unwrap(); }\n";
    assert_eq!(panic_sites(declared), 1);
}
