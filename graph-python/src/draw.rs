//! `taskgraph.Graph.to_dot`, `viz` and `_repr_svg_`: a dask graph drawn by
//! `graph-viz`, the code behind `taskgraph viz`. The picture is the one
//! `taskgraph viz` draws of the graph written by `Graph.to_json` (the same
//! conversion, see [`crate::export`]).

use std::path::PathBuf;

use graph_viz::{Colour, Options, Picture};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::export::Export;

/// What `taskgraph.Graph`'s drawing methods pass, as a dict: the options
/// of `taskgraph viz`.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub(crate) struct Asked {
    /// A colouring's name (`"order"`, `"memorypressure"`, ...); `None` for
    /// no colour.
    color: Option<String>,
    strategy: String,
    workers: u32,
    collapse: bool,
    max_tasks: usize,
}

impl Asked {
    fn options(&self) -> PyResult<Options> {
        let mut options = Options::default();
        options.colour = match &self.color {
            None => Colour::None,
            Some(name) => name.parse().map_err(viz_error)?,
        };
        options.strategy = crate::parse_strategy(&self.strategy)?;
        if !(1..=1_000).contains(&self.workers) {
            return Err(PyValueError::new_err(format!(
                "workers must be from 1 to 1000 (as for `taskgraph viz --workers`), not {}",
                self.workers
            )));
        }
        options.workers = self.workers;
        options.collapse = self.collapse;
        options.max_boxes = self.max_tasks;
        Ok(options)
    }
}

/// The title every picture of a dask graph carries.
const NAME: &str = "dask graph";

/// The picture of the dask graph mapping `dsk` (chunk sizes from the layers
/// of `sizes_from`), as `asked`.
pub(crate) fn picture(
    dsk: &Bound<'_, PyAny>,
    sizes_from: &Bound<'_, PyAny>,
    asked: &Asked,
) -> PyResult<Picture> {
    let options = asked.options()?;
    let export = Export::read(dsk, sizes_from)?;
    dsk.py()
        .detach(|| graph_viz::picture(&export.graph, NAME, &options))
        .map_err(viz_error)
}

/// Draws the dask graph into `path`, in the format its extension names.
pub(crate) fn draw(
    dsk: &Bound<'_, PyAny>,
    sizes_from: &Bound<'_, PyAny>,
    path: PathBuf,
    asked: &Asked,
) -> PyResult<()> {
    let options = asked.options()?;
    let export = Export::read(dsk, sizes_from)?;
    dsk.py()
        .detach(|| graph_viz::draw(&export.graph, NAME, &options, &path))
        .map_err(viz_error)
}

/// Graphviz's rendering of DOT text in `format` (`svg`, `png`, `pdf`).
pub(crate) fn render(py: Python<'_>, dot: &str, format: &str) -> PyResult<Vec<u8>> {
    py.detach(|| graph_viz::render(dot, format))
        .map_err(viz_error)
}

/// A drawing error as a Python exception: Graphviz's as `RuntimeError`,
/// a file's as `OSError`, the rest (what was asked) as `ValueError`.
fn viz_error(err: graph_viz::Error) -> PyErr {
    match err {
        graph_viz::Error::GraphvizNotFound { .. }
        | graph_viz::Error::GraphvizIo { .. }
        | graph_viz::Error::Graphviz { .. }
        | graph_viz::Error::NotSvg => PyRuntimeError::new_err(err.to_string()),
        graph_viz::Error::Io { .. } => PyOSError::new_err(err.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}
