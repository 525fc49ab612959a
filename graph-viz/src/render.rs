//! Writing pictures: the output format from the file's extension, Graphviz's
//! `dot` for SVG, PNG and PDF, and files replaced whole.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::Error;

/// What a picture is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// Graphviz DOT text (`.dot`, `.gv`, or no extension).
    Dot,
    /// Rendered by Graphviz: `svg`, `png` or `pdf`.
    Rendered(&'static str),
    /// One self-contained HTML page with the SVG, pan, zoom and hover cards.
    Html,
}

/// The format of `path`, from its extension.
///
/// # Errors
///
/// [`Error::UnknownFormat`] for an extension that is none of the formats.
pub(crate) fn format_of(path: &Path) -> Result<Format, Error> {
    let ext = path
        .extension()
        .map(|ext| ext.to_string_lossy().to_ascii_lowercase());
    Ok(match ext.as_deref() {
        None | Some("dot" | "gv") => Format::Dot,
        Some("html" | "htm") => Format::Html,
        Some(other) => match rendered(other) {
            Some(format) => Format::Rendered(format),
            None => {
                return Err(Error::UnknownFormat {
                    path: path.to_owned(),
                    extension: other.to_owned(),
                });
            }
        },
    })
}

/// The Graphviz output format named `name`, among those pictures are
/// rendered to.
fn rendered(name: &str) -> Option<&'static str> {
    ["svg", "png", "pdf"]
        .into_iter()
        .find(|format| *format == name)
}

/// Renders DOT text with Graphviz's `dot -T{format}` and returns what it
/// writes: an SVG document for `"svg"`, PNG or PDF bytes for `"png"` and
/// `"pdf"`.
///
/// # Errors
///
/// [`Error::UnknownRenderFormat`] for a format other than `svg`, `png` or
/// `pdf`; [`Error::GraphvizNotFound`] when `dot` is not on the `PATH` (the
/// message says to install Graphviz); [`Error::Graphviz`], with what `dot`
/// wrote to its standard error, when it fails (on text that is not DOT);
/// [`Error::GraphvizIo`] when it cannot be started or its pipes fail.
///
/// # Example
///
/// ```
/// use graph_viz::{Error, Options, picture, render};
///
/// let drawn = picture(&graph_core::generate::chain(3), "a chain", &Options::default())?;
/// match render(&drawn.to_dot(), "svg") {
///     Ok(svg) => assert!(String::from_utf8_lossy(&svg).contains("<svg")),
///     // Without Graphviz, the error says to install it.
///     Err(err @ Error::GraphvizNotFound { .. }) => {
///         assert!(err.to_string().contains("install Graphviz"))
///     }
///     Err(err) => return Err(err),
/// }
/// assert!(matches!(render("digraph {}", "jpg"), Err(Error::UnknownRenderFormat { .. })));
/// # Ok::<(), Error>(())
/// ```
pub fn render(dot: &str, format: &str) -> Result<Vec<u8>, Error> {
    render_for(dot, format, None)
}

/// [`render`], for the picture `path` (named in errors) when it is a file.
pub(crate) fn render_for(dot: &str, format: &str, path: Option<&Path>) -> Result<Vec<u8>, Error> {
    let Some(format) = rendered(format) else {
        return Err(Error::UnknownRenderFormat {
            format: format.to_owned(),
        });
    };
    let path_buf = || path.map(Path::to_path_buf);
    let io_error = |error: std::io::Error| Error::GraphvizIo {
        path: path_buf(),
        error,
    };
    let child = Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::GraphvizNotFound { path: path_buf() });
        }
        Err(err) => return Err(io_error(err)),
    };
    let Some(mut stdin) = child.stdin.take() else {
        return Err(io_error(std::io::Error::other(
            "Graphviz's dot has no standard input",
        )));
    };
    let text = dot.to_owned();
    // Fed from another thread, so that neither side waits on a full pipe;
    // a write that fails because dot stopped early is reported by dot itself.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout).map_err(io_error)?;
    }
    let output = child.wait_with_output().map_err(io_error)?;
    let _ = feeder.join();
    if !output.status.success() {
        return Err(Error::Graphviz {
            path: path_buf(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        });
    }
    Ok(stdout)
}

/// Writes `bytes` to `path` whole, with [`graph_core::file::write_atomically`]:
/// an error never leaves half a file, nor destroys the file that was there.
///
/// # Errors
///
/// [`Error::Io`], naming the file.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    graph_core::file::write_atomically(path, |out| out.write_all(bytes)).map_err(|error| {
        Error::Io {
            path: path.to_owned(),
            error,
        }
    })
}
