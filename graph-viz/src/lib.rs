//! Pictures of task graphs: a [`TaskGraph`] drawn coloured by its static
//! order, by one of dask's order diagnostics, by worker or by stage, with a
//! legend; written as Graphviz DOT, rendered to SVG, PNG or PDF by Graphviz,
//! or as one self-contained HTML page with pan, zoom and a hover card per
//! task. Large graphs can be drawn collapsed to their groups of tasks. This
//! is what `taskgraph viz` draws, and what the Python package draws through.
//!
//! - [`picture`]: a graph as a [`Picture`], as [`Options`] ask (a
//!   [`Colour`], collapsed into [`Group`]s or not, at most
//!   [`Options::max_boxes`] boxes); [`Picture::to_dot`] is its DOT.
//! - [`draw`]: the same, written to a file in the format its extension names
//!   (`.dot`/`.gv`, `.svg`, `.png`, `.pdf`, `.html`); [`write_picture`]
//!   writes a picture made earlier. Files are replaced whole, never left
//!   half written.
//! - [`render`]: Graphviz's `dot` run on DOT text, for SVG, PNG or PDF bytes.
//!
//! Rendering needs Graphviz's `dot` on the `PATH` (without it,
//! [`Error::GraphvizNotFound`] says to install it); DOT needs nothing. The
//! library prints nothing.
//!
//! | module | holds |
//! | --- | --- |
//! | `options` | [`Colour`], [`Group`], [`Options`] |
//! | `figures` | each task's order position, dask's diagnostics, its worker and stage |
//! | `colour` | the colour ramps, the scale, text colour per fill, category hues |
//! | `legend` | the legend drawn into every picture |
//! | `tasks` | the picture task by task |
//! | `collapse` | the picture of the groups of tasks |
//! | `picture` | what is drawn, and its DOT |
//! | `html` | the HTML page |
//! | `render` | formats, Graphviz, files replaced whole |
//! | `error` | [`Error`] |
//!
//! # Example
//!
//! Draw a reduction coloured by memory pressure, as DOT:
//!
//! ```
#![doc = include_str!("../tests/crate_example.rs")]
//! ```

mod collapse;
mod colour;
mod error;
mod figures;
mod html;
mod legend;
mod options;
mod picture;
mod render;
mod tasks;

use std::path::Path;

use graph_core::{Key, TaskGraph};

pub use self::error::Error;
pub use self::options::{Colour, Group, Options};
pub use self::picture::Picture;
pub use self::render::{DOT_TIMEOUT, render, stop_renders};

use self::figures::Figures;
use self::render::Format;

/// The picture of `graph`, called `name` in its title, as `options` ask:
/// every task, or its groups of tasks when [`Options::collapse`] is set,
/// coloured by [`Options::colour`], with a legend.
///
/// The graph is ordered as `taskgraph order` orders it (ties broken by
/// dask's `str(key)` rule, literal tasks as dask's data nodes) with
/// [`Options::strategy`]; for [`Colour::Worker`] it is placed on
/// [`Options::workers`] workers by `graph_assign::assign`, and for
/// [`Colour::Stage`] or [`Group::Stage`] its stages are planned by
/// `graph_optimize::plan_stages` with [`Options::wide_ops`].
///
/// # Errors
///
/// [`Error::TooManyTasks`] for more tasks than [`Options::max_boxes`] (not
/// collapsed) and [`Error::TooManyGroups`] for more groups (collapsed), both
/// checked before the boxes are drawn; a graph error (a cycle); an ordering,
/// placement or stage-planning error.
///
/// # Complexity
///
/// That of ordering (and placing, and planning stages), plus O(V + E) time
/// and space for the picture.
///
/// # Example
///
/// ```
/// use graph_viz::{Colour, Options, picture};
///
/// let graph = graph_core::generate::chain(5);
/// let mut options = Options::default();
/// options.colour = Colour::Freed;
/// let drawn = picture(&graph, "a chain", &options)?;
/// assert_eq!(drawn.node_count(), 5);
/// assert!(drawn.title().starts_with("a chain, 5 tasks"));
/// assert!(drawn.to_dot().starts_with("digraph taskgraph {"));
///
/// options.max_boxes = 4;
/// let refused = picture(&graph, "a chain", &options).unwrap_err();
/// assert!(matches!(refused, graph_viz::Error::TooManyTasks { count: 5, limit: 4, .. }));
/// # Ok::<(), graph_viz::Error>(())
/// ```
pub fn picture(graph: &TaskGraph, name: &str, options: &Options) -> Result<Picture, Error> {
    if !options.collapse && graph.len() > options.max_boxes {
        return Err(Error::TooManyTasks {
            name: name.to_owned(),
            count: graph.len(),
            limit: options.max_boxes,
        });
    }
    let figures = Figures::compute(graph, options)?;
    figures::check_len(graph, &figures)?;
    let mut picture = if options.collapse {
        let groups = match (options.group, &figures.stages) {
            (Group::Stage, Some(stages)) => collapse::stage_groups(graph, stages)?,
            _ => collapse::groups(graph)?,
        };
        if groups.len() > options.max_boxes {
            return Err(Error::TooManyGroups {
                name: name.to_owned(),
                count: groups.len(),
                limit: options.max_boxes,
            });
        }
        collapse::picture(graph, &groups, &figures)?
    } else {
        tasks::picture(graph, &figures)?
    };
    picture.title = format!("{name}, {}", picture.title);
    Ok(picture)
}

/// Draws `graph`, called `name` in the picture's title, as `options` ask,
/// into `path`, in the format its extension names: `.dot`, `.gv` or none
/// (DOT), `.svg`, `.png` or `.pdf` (rendered by Graphviz's `dot`), `.html`
/// or `.htm` (one self-contained page with pan, zoom and a hover card per
/// box). The file is replaced whole: written to a temporary file in the same
/// directory, then renamed over it, so an error never leaves half a file nor
/// destroys the file that was there.
///
/// # Errors
///
/// [`Error::UnknownFormat`] for an extension that is none of these, checked
/// before any work; those of [`picture()`]; those of [`write_picture`]
/// (Graphviz missing or failing, the file).
///
/// # Example
///
/// ```
/// use graph_viz::{Options, draw};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("chain.dot");
/// draw(&graph_core::generate::chain(3), "a chain", &Options::default(), &path)?;
/// assert!(std::fs::read_to_string(&path)?.starts_with("digraph taskgraph {"));
///
/// let refused = draw(&graph_core::generate::chain(3), "a chain", &Options::default(),
///     &dir.path().join("chain.jpg"));
/// assert!(refused.unwrap_err().to_string().ends_with("cannot write .jpg; write .dot, .svg, .png, .pdf or .html"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn draw(graph: &TaskGraph, name: &str, options: &Options, path: &Path) -> Result<(), Error> {
    render::format_of(path)?;
    write_picture(&picture(graph, name, options)?, path)
}

/// Writes `picture` to `path` in the format its extension names, as
/// [`draw`] does.
///
/// # Errors
///
/// [`Error::UnknownFormat`] for an unknown extension;
/// [`Error::GraphvizNotFound`], [`Error::GraphvizIo`] or [`Error::Graphviz`]
/// when rendering; [`Error::Io`], naming the file, when writing.
///
/// # Example
///
/// ```
/// use graph_viz::{Options, picture, write_picture};
///
/// let dir = tempfile::tempdir()?;
/// let drawn = picture(&graph_core::generate::chain(3), "a chain", &Options::default())?;
/// let path = dir.path().join("chain.gv");
/// write_picture(&drawn, &path)?;
/// assert_eq!(std::fs::read_to_string(&path)?, drawn.to_dot());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_picture(picture: &Picture, path: &Path) -> Result<(), Error> {
    let bytes = match render::format_of(path)? {
        Format::Dot => picture.to_dot().into_bytes(),
        Format::Rendered(format) => render::render_for(&picture.to_dot(), format, Some(path))?,
        Format::Html => picture.page(Some(path))?.into_bytes(),
    };
    render::write_whole(path, &bytes)
}

/// The worker of every task, placed by `graph-assign`'s default strategy.
pub(crate) fn workers(graph: &TaskGraph, count: usize) -> Result<Vec<u32>, Error> {
    let workers = graph_assign::Workers::new(count)?;
    let sizes = graph_assign::sizes_of(graph);
    let costs = graph_assign::costs_of(graph);
    let assignment =
        graph_assign::assign(graph.topology()?, &workers, Some(&sizes), costs.as_deref())?;
    Ok(assignment.into_vec())
}

/// A key as a short label: dask's hexadecimal name hashes dropped
/// (`('sum-aggregate-61aa7725...', 0)` reads `sum-aggregate (0)`), and at most
/// 40 characters.
pub(crate) fn short_label(key: &Key) -> String {
    /// `name` without a trailing `-<hexadecimal hash>` of 8 digits or more.
    fn strip_hash(name: &str) -> &str {
        match name.rsplit_once('-') {
            Some((head, tail))
                if tail.len() >= 8 && tail.chars().all(|c| c.is_ascii_hexdigit()) =>
            {
                head
            }
            _ => name,
        }
    }
    let text = match key {
        Key::Tuple(parts) => match &parts[..] {
            [Key::Str(name), rest @ ..] => {
                let name = strip_hash(name);
                let rest: Vec<String> = rest.iter().map(Key::to_string).collect();
                if rest.is_empty() {
                    name.to_owned()
                } else {
                    format!("{name} ({})", rest.join(", "))
                }
            }
            _ => key.python_str(),
        },
        Key::Str(name) => strip_hash(name).to_owned(),
        other => other.python_str(),
    };
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(39).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[cfg(test)]
mod tests;

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExample;
