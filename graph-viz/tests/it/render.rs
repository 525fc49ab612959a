//! `render` asks Graphviz for SVG, PNG or PDF only, and reports what
//! Graphviz says when it fails.

use crate::graphviz;
use graph_viz::{Error, render};

#[test]
fn only_svg_png_and_pdf_are_rendered() {
    for format in ["jpg", "dot", "-o/tmp/x", ""] {
        let err = render("digraph {}", format).unwrap_err();
        assert!(
            matches!(&err, Error::UnknownRenderFormat { format: asked } if asked == format),
            "{err:?}"
        );
    }
}

#[test]
fn graphviz_failing_says_what_it_said() {
    match render("this is not dot", "svg") {
        Err(Error::Graphviz { path: None, stderr }) => {
            assert!(!stderr.is_empty());
        }
        Err(Error::GraphvizNotFound { path: None }) => assert!(!graphviz::required()),
        other => panic!("{other:?}"),
    }
    match render("digraph { a -> b }", "svg") {
        Ok(svg) => assert!(String::from_utf8(svg).unwrap().contains("<svg")),
        Err(err @ Error::GraphvizNotFound { .. }) => {
            assert!(!graphviz::required(), "TASKGRAPH_GRAPHVIZ=require: {err}");
            let message = err.to_string();
            assert!(message.contains("Graphviz") && message.contains("install Graphviz"));
        }
        Err(err) => panic!("{err}"),
    }
}
