//! Writing a file so that a failure or an interrupt never leaves a partial
//! file or destroys the old one; private temporary directories and files,
//! which other users of the machine cannot read; and reading a file, or
//! standard input for `-`, with the name to give it in errors.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The temporary files [`write_atomically`] is writing and the live
/// [`PrivateTempDir`]s, for [`remove_temporary_files`]; closed once that has
/// run.
struct InFlight {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    closed: bool,
}

static IN_FLIGHT: Mutex<InFlight> = Mutex::new(InFlight {
    files: Vec::new(),
    dirs: Vec::new(),
    closed: false,
});

/// The error of a temporary file or directory asked for once
/// [`remove_temporary_files`] has run.
fn interrupted() -> io::Error {
    io::Error::new(
        io::ErrorKind::Interrupted,
        "the process is being interrupted",
    )
}

fn in_flight() -> MutexGuard<'static, InFlight> {
    IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Removes the temporary files of every [`write_atomically`] under way and
/// every [`PrivateTempDir`] with what is in it, and makes any later one fail
/// ([`io::ErrorKind::Interrupted`]) before it is created: for a signal
/// handler that then ends the process, which would otherwise leave them
/// behind (an ended process runs no destructor).
///
/// # Example
///
/// ```no_run
/// // In a command's SIGINT handler:
/// graph_core::file::remove_temporary_files();
/// std::process::exit(130);
/// ```
pub fn remove_temporary_files() {
    let mut in_flight = in_flight();
    in_flight.closed = true;
    for file in in_flight.files.drain(..) {
        let _ = std::fs::remove_file(file);
    }
    for dir in in_flight.dirs.drain(..) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// A temporary file listed in [`IN_FLIGHT`] while it lives.
struct Listed(PathBuf);

impl Drop for Listed {
    fn drop(&mut self) {
        in_flight().files.retain(|file| *file != self.0);
    }
}

/// Writes `path` through `write`: into a temporary file in the same
/// directory, which replaces `path` (by a rename) only once `write` has
/// succeeded and everything is flushed to the file. When `write` fails, or
/// the process is interrupted, `path` keeps its old content, byte for byte,
/// and the temporary file is removed (by the process's signal handler
/// through [`remove_temporary_files`]; a process killed outright leaves at
/// most a hidden `.NAME.*.tmp` file next to it).
///
/// # Errors
///
/// The error of `write`, or of making, flushing or renaming the file
/// ([`io::ErrorKind::Interrupted`] once [`remove_temporary_files`] has run);
/// `E` takes I/O errors through `From`.
///
/// # Example
///
/// ```
/// use std::io::Write;
///
/// let path = std::env::temp_dir().join(format!("graph-core-file-{}.txt", std::process::id()));
/// std::fs::write(&path, "old")?;
/// let failed: Result<(), std::io::Error> = graph_core::file::write_atomically(&path, |out| {
///     out.write_all(b"half of the new")?;
///     Err(std::io::Error::other("the disk is full"))
/// });
/// assert!(failed.is_err());
/// assert_eq!(std::fs::read_to_string(&path)?, "old");
/// graph_core::file::write_atomically(&path, |out| out.write_all(b"new"))?;
/// assert_eq!(std::fs::read_to_string(&path)?, "new");
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_atomically<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> Result<(), E> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    // The new file gets the old one's permissions, or those a new file
    // gets (the process's umask applied), not the temporary file's own.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let permissions = std::fs::metadata(path)
            .map(|old| old.permissions())
            .unwrap_or_else(|_| std::fs::Permissions::from_mode(0o666));
        builder.permissions(permissions);
    }
    // Made and listed under the lock, so that a signal handler removing the
    // files either sees this one or stops it from being made.
    let (mut temp, _listed) = {
        let mut in_flight = in_flight();
        if in_flight.closed {
            return Err(E::from(interrupted()));
        }
        let temp = builder.tempfile_in(dir)?;
        in_flight.files.push(temp.path().to_path_buf());
        let listed = Listed(temp.path().to_path_buf());
        (temp, listed)
    };
    {
        let mut out = io::BufWriter::with_capacity(1 << 16, temp.as_file_mut());
        write(&mut out)?;
        out.flush()?;
    }
    temp.persist(path).map_err(|err| E::from(err.error))?;
    Ok(())
}

/// A private temporary directory whose name starts with `prefix`, in the
/// system's temporary directory (`TMPDIR`): readable by its owner alone
/// (mode 0700 on Unix, whatever the umask; tempfile's default is 0777
/// less the umask, 0755 under the usual 022), and removed with what is in
/// it when the returned value drops, or by [`remove_temporary_files`].
///
/// # Errors
///
/// The directory cannot be made (`TMPDIR` missing or read-only, say); the
/// error names it. After [`remove_temporary_files`],
/// [`io::ErrorKind::Interrupted`].
///
/// # Example
///
/// ```
/// let dir = graph_core::file::private_temp_dir("graph-core-doc-")?;
/// # #[cfg(unix)]
/// # {
/// use std::os::unix::fs::PermissionsExt;
/// assert_eq!(std::fs::metadata(dir.path())?.permissions().mode() & 0o777, 0o700);
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn private_temp_dir(prefix: &str) -> io::Result<PrivateTempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o700));
    }
    // Made and listed under the lock, as in `write_atomically`.
    let mut in_flight = in_flight();
    if in_flight.closed {
        return Err(interrupted());
    }
    let dir = builder.tempdir().map_err(|err| {
        io::Error::new(
            err.kind(),
            format!(
                "cannot make a private directory in {}: {err}",
                std::env::temp_dir().display()
            ),
        )
    })?;
    in_flight.dirs.push(dir.path().to_path_buf());
    Ok(PrivateTempDir(dir))
}

/// A directory made by [`private_temp_dir`]: removed with what is in it when
/// this drops, or by [`remove_temporary_files`] if the process ends first.
#[derive(Debug)]
pub struct PrivateTempDir(tempfile::TempDir);

impl PrivateTempDir {
    /// Where the directory is.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for PrivateTempDir {
    fn drop(&mut self) {
        let path = self.0.path();
        in_flight().dirs.retain(|dir| dir != path);
    }
}

/// Creates `path` (or empties it) for writing, readable and writable by its
/// owner alone (mode 0600 on Unix, whatever the umask).
///
/// # Errors
///
/// The file cannot be created.
///
/// # Example
///
/// ```
/// use std::io::Write;
///
/// let dir = graph_core::file::private_temp_dir("graph-core-doc-")?;
/// let path = dir.path().join("spilled");
/// graph_core::file::create_private(&path)?.write_all(b"a result")?;
/// # #[cfg(unix)]
/// # {
/// use std::os::unix::fs::PermissionsExt;
/// assert_eq!(std::fs::metadata(&path)?.permissions().mode() & 0o777, 0o600);
/// # }
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn create_private(path: &Path) -> io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Reads all of a file, or of standard input when `path` is `-`, with the name
/// to give it in error messages: the path, or `<stdin>`.
pub fn read_input(path: &Path) -> (String, io::Result<Vec<u8>>) {
    if path == Path::new("-") {
        let mut bytes = Vec::new();
        let read = io::stdin().lock().read_to_end(&mut bytes);
        ("<stdin>".to_owned(), read.map(|_| bytes))
    } else {
        (path.display().to_string(), std::fs::read(path))
    }
}
