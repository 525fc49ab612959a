//! `Picture`: what is drawn (nodes with their labels and fills, edges, the
//! legend, and the hover cards' data), whether from tasks or from groups,
//! and its Graphviz DOT.

use std::fmt::Write as _;

use crate::colour::Rgb;
use crate::legend::Legend;

/// A picture of a graph, made by [`picture`](crate::picture()): its boxes
/// (tasks, or groups of tasks) with their labels and fills, the arrows between
/// them, a legend, and each box's hover card for an HTML page. Write it as
/// DOT ([`Picture::to_dot`]), render that with [`render`](crate::render()),
/// or write it to a file with [`write_picture`](crate::write_picture).
///
/// # Example
///
/// ```
/// use graph_viz::{Options, picture};
///
/// let graph = graph_core::generate::chain(4);
/// let drawn = picture(&graph, "a chain", &Options::default())?;
/// assert_eq!((drawn.node_count(), drawn.edge_count()), (4, 3));
/// assert_eq!(drawn.title(), "a chain, 4 tasks coloured by order");
/// let dot = drawn.to_dot();
/// assert!(dot.contains("n0 -> n1;") && dot.contains("legend [id=\"legend\""));
/// # Ok::<(), graph_viz::Error>(())
/// ```
#[derive(Debug)]
pub struct Picture {
    /// What the picture shows, for the HTML page's title.
    pub(crate) title: String,
    /// The boxes, one per task or group; node `i` is drawn with the SVG id
    /// `v{i}`.
    pub(crate) nodes: Vec<Node>,
    /// The arrows, from a dependency to its dependent.
    pub(crate) edges: Vec<Edge>,
    /// The legend.
    pub(crate) legend: Legend,
    /// The hover cards' data, one entry per node, for the HTML page.
    pub(crate) cards: serde_json::Value,
}

/// One box of a picture.
#[derive(Debug)]
pub(crate) struct Node {
    /// Its label, one line each.
    pub(crate) lines: Vec<String>,
    /// Its fill; the text is black or white, whichever reads better on it.
    pub(crate) fill: Rgb,
    /// The tooltip of a standalone SVG, one line each (the HTML page shows
    /// a card instead).
    pub(crate) tooltip: Vec<String>,
}

/// One arrow of a picture.
#[derive(Debug)]
pub(crate) struct Edge {
    /// The dependency's node.
    pub(crate) from: u32,
    /// The dependent's node.
    pub(crate) to: u32,
    /// A label (the number of task edges an edge between groups stands for).
    pub(crate) label: Option<String>,
    /// The line's width (1 for an edge between tasks).
    pub(crate) width: f64,
    /// Drawn dashed and dark: an edge between workers.
    pub(crate) dashed: bool,
}

/// What the DOT is for: a standalone picture gets tooltips; an HTML page
/// gets classes on the edges (`f{from} t{to}`) for its script instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// DOT, SVG, PNG or PDF.
    Standalone,
    /// The SVG inside an HTML page.
    Page,
}

impl Picture {
    /// What the picture shows: the graph's name, its number of tasks (and
    /// groups), and what the colours show (`word count, 14 tasks coloured
    /// by order`).
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The number of boxes: tasks, or groups of tasks when collapsed.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// The number of arrows: dependencies between tasks, or between groups
    /// when collapsed.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// The picture in Graphviz DOT, as `taskgraph viz` prints it: laid out
    /// bottom to top as dask draws graphs, the legend on the top rank, a
    /// tooltip on every box. Box `i` is the node `n{i}`, drawn with the SVG
    /// id `v{i}`; the legend is the node `legend`.
    pub fn to_dot(&self) -> String {
        self.dot_for(Target::Standalone)
    }

    /// The picture in Graphviz DOT, for `target`.
    pub(crate) fn dot_for(&self, target: Target) -> String {
        let mut dot = String::with_capacity(128 * (self.nodes.len() + self.edges.len()) + 1024);
        dot.push_str(
            "digraph taskgraph {\n  rankdir=BT;\n  \
             graph [fontname=\"Helvetica\", bgcolor=\"white\", nodesep=0.2, ranksep=0.35];\n  \
             node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11, \
             color=\"#333333\", margin=\"0.1,0.04\"];\n  \
             edge [color=\"#8a8a8a\", arrowsize=0.6];\n",
        );
        dot.push_str(&self.legend.to_dot());
        dot.push_str("  { rank=max; legend; }\n");
        for (i, node) in self.nodes.iter().enumerate() {
            let label: Vec<String> = node
                .lines
                .iter()
                .map(|line| escape(shorten(line, MAX_LABEL_CHARS)))
                .collect();
            let _ = write!(
                dot,
                "  n{i} [id=\"v{i}\", label=\"{}\", fillcolor=\"{}\", fontcolor=\"{}\"",
                label.join("\\n"),
                node.fill,
                node.fill.text()
            );
            if target == Target::Standalone {
                let tooltip: Vec<String> = node
                    .tooltip
                    .iter()
                    .map(|line| escape(shorten(line, MAX_TOOLTIP_CHARS)))
                    .collect();
                let _ = write!(dot, ", tooltip=\"{}\"", tooltip.join("\\n"));
            }
            dot.push_str("];\n");
        }
        for edge in &self.edges {
            let _ = write!(dot, "  n{} -> n{}", edge.from, edge.to);
            let mut attrs: Vec<String> = Vec::new();
            if target == Target::Page {
                attrs.push(format!("class=\"f{} t{}\"", edge.from, edge.to));
            }
            if edge.dashed {
                attrs.push("style=dashed, color=\"#222222\", penwidth=1.4".to_owned());
            } else if edge.width != 1.0 {
                attrs.push(format!("penwidth={:.2}", edge.width));
            }
            if let Some(label) = &edge.label {
                attrs.push(format!(
                    "label=\"{}\", fontname=\"Helvetica\", fontsize=9, fontcolor=\"#444444\"",
                    escape(label)
                ));
            }
            if !attrs.is_empty() {
                let _ = write!(dot, " [{}]", attrs.join(", "));
            }
            dot.push_str(";\n");
        }
        dot.push_str("}\n");
        dot
    }
}

/// The most characters of one line of a box's label (keys are shortened
/// before this; group names and figures are not).
const MAX_LABEL_CHARS: usize = 200;

/// The most characters of one line of a tooltip: Graphviz fails on
/// attributes of about 16 KB.
const MAX_TOOLTIP_CHARS: usize = 2_000;

/// `text`, cut to `max` characters (the last an ellipsis).
fn shorten(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let cut = text
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(text.len(), |(at, _)| at);
    std::borrow::Cow::Owned(format!("{}…", &text[..cut]))
}

/// Escapes text for a quoted DOT string: backslashes and quotes; `&` as
/// `&amp;`, since Graphviz decodes HTML entities even in plain labels (so
/// that `A&amp;B` and `A&B` stay apart, and `&#x202E;` stays text); control
/// characters as spaces (a label's lines are joined with `\n` by the caller).
pub(crate) fn escape(text: impl AsRef<str>) -> String {
    let text = text.as_ref();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}
