//! Writing pictures: the output format from the file's extension, Graphviz's
//! `dot` for SVG, PNG and PDF, and files replaced whole.

use std::io::{Read, Write as _};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

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
/// [`Error::GraphvizIo`] when it cannot be started or its pipes fail;
/// [`Error::GraphvizTimedOut`] when it runs longer than [`DOT_TIMEOUT`] (or
/// `TASKGRAPH_DOT_TIMEOUT` seconds), and is killed.
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

/// How long `dot` may take to render one picture before it is killed
/// ([`Error::GraphvizTimedOut`]), unless the environment variable
/// `TASKGRAPH_DOT_TIMEOUT` gives another number of seconds.
pub const DOT_TIMEOUT: Duration = Duration::from_secs(300);

/// The `dot` processes rendering now, by render: [`stop_renders`] kills
/// them.
static RENDERING: Mutex<Vec<(u64, Child)>> = Mutex::new(Vec::new());

/// Numbers the renders, to find each one's `dot` in [`RENDERING`].
static RENDERS: AtomicU64 = AtomicU64::new(0);

/// Kills every Graphviz `dot` this process is running and waits for it to
/// end: for a process about to exit on a signal, which would otherwise
/// leave them running. The renders they were for fail with
/// [`Error::GraphvizIo`].
///
/// # Example
///
/// ```
/// graph_viz::stop_renders(); // none runs: nothing to do
/// ```
pub fn stop_renders() {
    let mut rendering = lock_rendering();
    for (_, child) in rendering.iter_mut() {
        let _ = child.kill();
        let _ = child.wait();
    }
    rendering.clear();
}

/// The render timeout: [`DOT_TIMEOUT`], or `TASKGRAPH_DOT_TIMEOUT` seconds.
fn dot_timeout() -> Duration {
    std::env::var("TASKGRAPH_DOT_TIMEOUT")
        .ok()
        .and_then(|seconds| Duration::try_from_secs_f64(seconds.trim().parse().ok()?).ok())
        .unwrap_or(DOT_TIMEOUT)
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
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(io_error(std::io::Error::other(
            "Graphviz's dot has no standard input or output",
        )));
    };
    let render = RENDERS.fetch_add(1, Ordering::Relaxed);
    lock_rendering().push((render, child));
    // Fed and read on threads of their own, so that neither side waits on a
    // full pipe, and this one can give up on a dot that never ends; a write
    // that fails because dot stopped early is reported by dot itself.
    let text = dot.to_owned();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let reader = std::thread::spawn(move || read_all(stdout));
    let errors = std::thread::spawn(move || read_all(stderr));
    // A dot killed may leave a process of its own holding the pipes: the
    // threads are then left to end with it.
    let status = match wait_for(render, dot_timeout()) {
        Ended::Exited(status) => status.map_err(io_error)?,
        Ended::TimedOut(limit) => {
            return Err(Error::GraphvizTimedOut {
                path: path_buf(),
                seconds: limit.as_secs_f64(),
            });
        }
        Ended::Stopped => {
            return Err(io_error(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "stopped: the process is exiting",
            )));
        }
    };
    let _ = feeder.join();
    let stdout = reader.join().unwrap_or_else(|_| Ok(Vec::new()));
    let stderr = errors.join().unwrap_or_else(|_| Ok(Vec::new()));
    if !status.success() {
        return Err(Error::Graphviz {
            path: path_buf(),
            stderr: String::from_utf8_lossy(&stderr.unwrap_or_default())
                .trim()
                .to_owned(),
        });
    }
    stdout.map_err(io_error)
}

/// How a render's `dot` ended.
enum Ended {
    /// It exited (or waiting for it failed).
    Exited(std::io::Result<ExitStatus>),
    /// It ran past the limit, and was killed.
    TimedOut(Duration),
    /// [`stop_renders`] killed it.
    Stopped,
}

/// Waits for the `dot` of `render` to exit, killing it past `limit`. Looks
/// every few milliseconds at first, and less often the longer it runs.
fn wait_for(render: u64, limit: Duration) -> Ended {
    let started = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        let mut rendering = lock_rendering();
        let Some(at) = rendering.iter().position(|(r, _)| *r == render) else {
            return Ended::Stopped;
        };
        let child = &mut rendering[at].1;
        let status = match child.try_wait() {
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                rendering.swap_remove(at);
                return Ended::TimedOut(limit);
            }
            Ok(None) => None,
            Ok(Some(status)) => Some(Ok(status)),
            Err(err) => Some(Err(err)),
        };
        if let Some(status) = status {
            rendering.swap_remove(at);
            return Ended::Exited(status);
        }
        drop(rendering);
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

fn lock_rendering() -> MutexGuard<'static, Vec<(u64, Child)>> {
    RENDERING.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read_all(mut from: impl Read) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    from.read_to_end(&mut bytes)?;
    Ok(bytes)
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
