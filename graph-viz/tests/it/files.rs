//! `draw` and `write_picture` write the format the file's extension names,
//! whole: an unknown extension is refused before any work, nothing is left
//! behind on an error, and a file that was there is replaced only by a
//! complete picture.

use std::path::Path;

use graph_core::generate;
use graph_viz::{Error, Options, draw, picture, write_picture};

use crate::graphviz::has_dot;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_unknown_extension_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("chain.jpg");
    // A limit the graph breaks: the extension is checked first.
    let mut options = Options::default();
    options.max_boxes = 1;
    let err = draw(&generate::chain(3), "chain", &options, &path).unwrap_err();
    assert!(
        matches!(&err, Error::UnknownFormat { extension, .. } if extension == "jpg"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "{}: cannot write .jpg; write .dot, .svg, .png, .pdf or .html",
            path.display()
        )
    );
    assert!(names(dir.path()).is_empty());
}

#[test]
fn dot_replaces_the_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let graph = generate::chain(3);
    for name in ["chain.dot", "chain.gv", "chain"] {
        let path = dir.path().join(name);
        std::fs::write(&path, "old").unwrap();
        draw(&graph, "chain", &Options::default(), &path).unwrap();
        let drawn = picture(&graph, "chain", &Options::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), drawn.to_dot());
    }
    // No temporary file is left beside them.
    assert_eq!(names(dir.path()), ["chain", "chain.dot", "chain.gv"]);
}

#[test]
fn a_write_that_fails_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing").join("chain.dot");
    let drawn = picture(&generate::chain(3), "chain", &Options::default()).unwrap();
    let err = write_picture(&drawn, &path).unwrap_err();
    assert!(matches!(&err, Error::Io { path: named, .. } if *named == path));
    assert!(
        err.to_string()
            .starts_with(&format!("writing {}: ", path.display())),
        "{err}"
    );
}

#[test]
fn rendered_formats_and_pages_go_through_graphviz() {
    if !has_dot() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let graph = generate::tree(8, 2);
    for (name, starts) in [
        ("tree.svg", b"<?xml".as_slice()),
        ("tree.png", b"\x89PNG".as_slice()),
        ("tree.pdf", b"%PDF".as_slice()),
        ("tree.html", b"<!DOCTYPE html>".as_slice()),
    ] {
        let path = dir.path().join(name);
        draw(&graph, "tree", &Options::default(), &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(starts), "{name}");
    }
    let page = std::fs::read_to_string(dir.path().join("tree.html")).unwrap();
    let drawn = picture(&graph, "tree", &Options::default()).unwrap();
    assert_eq!(drawn.to_html().unwrap(), page);
    assert!(page.contains("<title>taskgraph viz: tree, 15 tasks coloured by order</title>"));
}
