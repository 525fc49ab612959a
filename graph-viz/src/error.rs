//! The error type of `graph-viz`.

use std::path::{Path, PathBuf};

/// Everything that can go wrong drawing a graph: the graph itself (a cycle),
/// ordering, placing or planning its stages, a picture with more boxes than
/// the limit, a file name in no known format, Graphviz missing or failing,
/// and writing the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The graph is invalid (a cycle, a task that depends on itself).
    #[error(transparent)]
    Graph(#[from] graph_core::Error),
    /// Ordering the graph, or measuring the order, failed.
    #[error(transparent)]
    Order(#[from] graph_order::Error),
    /// Placing the graph on workers failed (for [`Colour::Worker`](crate::Colour::Worker)).
    #[error(transparent)]
    Assign(#[from] graph_assign::Error),
    /// Planning the graph's stages failed (for [`Colour::Stage`](crate::Colour::Stage)
    /// and [`Group::Stage`](crate::Group::Stage)).
    #[error(transparent)]
    Optimize(#[from] graph_optimize::Error),
    /// More tasks than [`Options::max_boxes`](crate::Options::max_boxes), drawn
    /// without collapsing.
    #[error(
        "{name} has {count} tasks, more than the limit of {limit} boxes: a picture that large \
         shows nothing; draw it collapsed (one box per group of tasks), raise the limit, or draw \
         a smaller piece of the problem"
    )]
    TooManyTasks {
        /// The graph's name, as given to [`picture`](crate::picture()).
        name: String,
        /// Its number of tasks.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// More groups of tasks than [`Options::max_boxes`](crate::Options::max_boxes),
    /// drawn collapsed.
    #[error(
        "{name} has {count} groups of tasks, more than the limit of {limit} boxes: a picture \
         that large shows nothing; raise the limit, or draw a smaller piece of the problem"
    )]
    TooManyGroups {
        /// The graph's name, as given to [`picture`](crate::picture()).
        name: String,
        /// Its number of groups.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A file name whose extension is none of the formats.
    #[error(
        "{}: cannot write .{extension}; write .dot, .svg, .png, .pdf or .html",
        path.display()
    )]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// Its extension.
        extension: String,
    },
    /// A format [`render`](crate::render()) does not ask Graphviz for.
    #[error("cannot render {format:?} with Graphviz: render svg, png or pdf")]
    UnknownRenderFormat {
        /// The format asked for.
        format: String,
    },
    /// A name that is no [`Colour`](crate::Colour).
    #[error(
        "unknown colouring {name:?}: expected one of {}",
        crate::options::colour_names()
    )]
    UnknownColour {
        /// The name given.
        name: String,
    },
    /// A name that is no [`Group`](crate::Group).
    #[error(
        "unknown grouping {name:?}: expected one of {}",
        crate::options::group_names()
    )]
    UnknownGroup {
        /// The name given.
        name: String,
    },
    /// Graphviz's `dot` is not on the `PATH`.
    #[error(
        "rendering{} needs Graphviz's `dot`, which is not installed: install Graphviz (Debian and \
         Ubuntu: apt-get install graphviz) or write a .dot file",
        OptionalPath(path.as_deref())
    )]
    GraphvizNotFound {
        /// The picture being rendered, when it is a file.
        path: Option<PathBuf>,
    },
    /// Graphviz's `dot` could not be started, or its pipes failed.
    #[error("running Graphviz's dot{}: {error}", OptionalPath(path.as_deref()))]
    GraphvizIo {
        /// The picture being rendered, when it is a file.
        path: Option<PathBuf>,
        /// What failed.
        error: std::io::Error,
    },
    /// Graphviz's `dot` ran and failed.
    #[error("Graphviz's dot failed{}: {stderr}", OnPath(path.as_deref()))]
    Graphviz {
        /// The picture being rendered, when it is a file.
        path: Option<PathBuf>,
        /// What it wrote to its standard error, trimmed.
        stderr: String,
    },
    /// Graphviz's `dot` ran past its time limit, and was killed.
    #[error(
        "Graphviz's dot took more than {seconds} s{}, and was stopped: draw fewer tasks \
         (--collapse, or a smaller graph), write a .dot file, or allow it longer with \
         TASKGRAPH_DOT_TIMEOUT=SECONDS",
        OnPath(path.as_deref())
    )]
    GraphvizTimedOut {
        /// The picture being rendered, when it is a file.
        path: Option<PathBuf>,
        /// The limit.
        seconds: f64,
    },
    /// Graphviz's SVG, for an HTML page, has no `<svg>` element.
    #[error("Graphviz's output has no complete <svg> element")]
    NotSvg,
    /// Writing the picture failed.
    #[error("writing {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        error: std::io::Error,
    },
}

/// ` {path}` when there is a path, else nothing.
struct OptionalPath<'a>(Option<&'a Path>);

impl std::fmt::Display for OptionalPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(path) => write!(f, " {}", path.display()),
            None => Ok(()),
        }
    }
}

/// ` on {path}` when there is a path, else nothing.
struct OnPath<'a>(Option<&'a Path>);

impl std::fmt::Display for OnPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(path) => write!(f, " on {}", path.display()),
            None => Ok(()),
        }
    }
}
