//! Writing pictures: the output format from the file's extension, Graphviz's
//! `dot` for SVG, PNG and PDF, and files replaced whole.

use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

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
/// An extension that is none of the formats, named with the file.
pub(crate) fn format_of(path: &Path) -> anyhow::Result<Format> {
    let ext = path
        .extension()
        .map(|ext| ext.to_string_lossy().to_ascii_lowercase());
    Ok(match ext.as_deref() {
        None | Some("dot" | "gv") => Format::Dot,
        Some("svg") => Format::Rendered("svg"),
        Some("png") => Format::Rendered("png"),
        Some("pdf") => Format::Rendered("pdf"),
        Some("html" | "htm") => Format::Html,
        Some(other) => bail!(
            "{}: cannot write .{other}; write .dot, .svg, .png, .pdf or .html",
            path.display()
        ),
    })
}

/// Renders `dot` with Graphviz's `dot -T{format}`, for the picture `path`
/// (named in errors).
///
/// # Errors
///
/// Graphviz missing (with how to install it), or failing (with what it said).
pub(crate) fn render(dot: &str, format: &str, path: &Path) -> anyhow::Result<Vec<u8>> {
    let _busy = crate::busy::Busy::start(format!("drawing {} with Graphviz", path.display()));
    let child = Command::new("dot")
        .arg(format!("-T{format}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => bail!(
            "rendering {} needs Graphviz's `dot`, which is not installed: install Graphviz \
             (Debian and Ubuntu: apt-get install graphviz) or write a .dot file",
            path.display()
        ),
        Err(err) => return Err(err).context("starting Graphviz's dot"),
    };
    let mut stdin = child
        .stdin
        .take()
        .context("Graphviz's dot has no standard input")?;
    let text = dot.to_owned();
    // Fed from another thread, so that neither side waits on a full pipe;
    // a write that fails because dot stopped early is reported by dot itself.
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_end(&mut stdout)
            .context("reading Graphviz's output")?;
    }
    let output = child
        .wait_with_output()
        .context("waiting for Graphviz's dot")?;
    let _ = feeder.join();
    if !output.status.success() {
        bail!(
            "Graphviz's dot failed on {}: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(stdout)
}

/// Writes `bytes` to `path` whole, with [`graph_core::file::write_atomically`]:
/// an error never leaves half a file, nor destroys the file that was there.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    graph_core::file::write_atomically(path, |out| out.write_all(bytes))
        .with_context(|| format!("writing {}", path.display()))
}
