//! `Cluster`: the processes of a run, how they find each other, the secret
//! they share, and how long they wait for each other.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use graph_core::CancelHandle;

use crate::error::{ClusterProblem, HostfileProblem};
use crate::{Error, Progress};

/// How long a process waits for the others to connect, by default.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How long another process may stay silent once the run is under way, by
/// default.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest any timeout may be: longer ones are cut to this.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

/// The shortest heartbeat timeout: shorter ones are raised to this.
const MIN_HEARTBEAT_TIMEOUT: Duration = Duration::from_millis(100);

/// The most processes a run may have.
pub const MAX_PROCESSES: usize = 256;

/// The most workers (processes x threads) a run may have.
pub const MAX_WORKERS: usize = 1024;

/// The shortest secret [`Cluster::with_secret`] takes, in bytes.
pub const MIN_SECRET_BYTES: usize = 16;

/// The processes of a run and this process's place among them.
///
/// Every process of a run is given the same address list, one `host:port`
/// per process, and its own index into it, as timely dataflow's `-h` hostfile
/// and `-p` process options do. Each process has `threads` workers; worker
/// `w` is thread `w % threads` of process `w / threads`.
///
/// Processes of a run prove to each other that they know a shared secret
/// before any data moves ([`with_secret`](Cluster::with_secret)); a cluster
/// of several processes runs only with a secret or when marked
/// [`insecure`](Cluster::insecure). Every process also checks that the others
/// run the same job on the same graph, and, once the run is under way,
/// stops when another stays silent longer than the heartbeat timeout.
///
/// # Example
///
/// ```
/// use graph_transport::Cluster;
///
/// let local = Cluster::local(2);
/// assert_eq!((local.processes(), local.workers()), (1, 2));
///
/// let addresses = vec!["127.0.0.1:2101".to_string(), "127.0.0.1:2102".to_string()];
/// let second = Cluster::new(addresses, 1, 4)?.with_secret(b"sixteen or more bytes")?;
/// assert_eq!((second.processes(), second.process(), second.workers()), (2, 1, 8));
/// # Ok::<(), graph_transport::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    addresses: Vec<String>,
    process: usize,
    threads: usize,
    connect_timeout: Duration,
    heartbeat_timeout: Duration,
    auth: Auth,
    cancel: Option<CancelHandle>,
    lost: Option<CancelHandle>,
    progress: Option<Progress>,
    /// Whether this is the cluster of an attempt after a loss (see
    /// [`Cluster::shrunk`]).
    after_loss: bool,
}

/// How the processes of a cluster know each other.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Auth {
    /// Not said: a cluster of several processes does not run.
    Unset,
    /// No secret, on purpose.
    Insecure,
    /// The shared secret.
    Secret(Arc<[u8]>),
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The secret is never printed.
        match self {
            Auth::Unset => f.write_str("Unset"),
            Auth::Insecure => f.write_str("Insecure"),
            Auth::Secret(_) => f.write_str("Secret(..)"),
        }
    }
}

impl Cluster {
    /// One process with `threads` workers (at least one); nothing listens on
    /// the network.
    pub fn local(threads: usize) -> Cluster {
        Cluster {
            addresses: Vec::new(),
            process: 0,
            threads: threads.max(1),
            connect_timeout: CONNECT_TIMEOUT,
            heartbeat_timeout: HEARTBEAT_TIMEOUT,
            auth: Auth::Unset,
            cancel: None,
            lost: None,
            progress: None,
            after_loss: false,
        }
    }

    /// Process `process` of the processes at `addresses`, each with
    /// `threads` workers.
    ///
    /// # Errors
    ///
    /// [`Error::Cluster`] when there are no addresses, `process` is out of
    /// range, `threads` is zero, or there are more than [`MAX_PROCESSES`]
    /// processes or [`MAX_WORKERS`] workers in all.
    pub fn new(addresses: Vec<String>, process: usize, threads: usize) -> Result<Cluster, Error> {
        let processes = addresses.len();
        let problem = if addresses.is_empty() {
            Some(ClusterProblem::NoAddresses)
        } else if processes > MAX_PROCESSES {
            Some(ClusterProblem::TooManyProcesses {
                processes,
                max: MAX_PROCESSES,
            })
        } else if process >= addresses.len() {
            Some(ClusterProblem::ProcessOutOfRange {
                process,
                processes: addresses.len(),
            })
        } else if threads == 0 {
            Some(ClusterProblem::NoThreads)
        } else if processes.saturating_mul(threads) > MAX_WORKERS {
            Some(ClusterProblem::TooManyWorkers {
                processes,
                threads,
                max: MAX_WORKERS,
            })
        } else {
            None
        };
        match problem {
            Some(problem) => Err(Error::Cluster { problem }),
            None => Ok(Cluster {
                addresses,
                process,
                threads,
                ..Cluster::local(threads)
            }),
        }
    }

    /// This cluster with only the processes `survivors` (ascending numbers
    /// of this one's), this process being number `process` among them:
    /// the same threads, timeouts, secret, cancel handle and progress.
    pub(crate) fn shrunk(&self, survivors: &[usize], process: usize) -> Cluster {
        Cluster {
            addresses: survivors
                .iter()
                .map(|&p| self.addresses[p].clone())
                .collect(),
            process,
            after_loss: true,
            ..self.clone()
        }
    }

    /// Whether this is the cluster of an attempt after a loss: a process
    /// that proves the secret but not this attempt's claims is then one of
    /// an earlier attempt (the lost process restarted, say), refused and
    /// dropped, where in a first attempt it ends the run.
    pub(crate) fn after_loss(&self) -> bool {
        self.after_loss
    }

    /// Process `process` of the processes listed in a hostfile: one
    /// `host:port` per line; blank lines and lines starting with `#` are
    /// skipped.
    ///
    /// # Errors
    ///
    /// [`Error::Hostfile`] naming the file (and line) when it cannot be read
    /// or a line is not `host:port`; then as [`Cluster::new`].
    pub fn from_hostfile(path: &Path, process: usize, threads: usize) -> Result<Cluster, Error> {
        let text = std::fs::read_to_string(path).map_err(|err| Error::Hostfile {
            path: path.to_owned(),
            line: None,
            problem: HostfileProblem::Read(err),
        })?;
        let addresses = parse_hostfile(&text).map_err(|(line, problem)| Error::Hostfile {
            path: path.to_owned(),
            line: Some(line),
            problem,
        })?;
        if addresses.is_empty() {
            return Err(Error::Hostfile {
                path: path.to_owned(),
                line: None,
                problem: HostfileProblem::Empty,
            });
        }
        Cluster::new(addresses, process, threads)
    }

    /// Waits at most `timeout` for the other processes to connect (30 s by
    /// default; at most a day). A connection that has not finished its
    /// handshake within 5 s (or by then) is dropped, and the process goes on
    /// waiting for the others.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Cluster {
        self.connect_timeout = timeout.min(MAX_TIMEOUT);
        self
    }

    /// Stops the run when another process has sent no heartbeat for
    /// `timeout` (30 s by default; at least 0.1 s, at most a day). Each
    /// process sends one to every other about four times a timeout, at most
    /// every second, from a thread of its own: a worker busy with a long
    /// task does not make its process silent.
    pub fn with_heartbeat_timeout(mut self, timeout: Duration) -> Cluster {
        self.heartbeat_timeout = timeout.clamp(MIN_HEARTBEAT_TIMEOUT, MAX_TIMEOUT);
        self
    }

    /// The processes prove to each other that they know `secret` before any
    /// data moves: each sends the other a fresh random challenge and checks
    /// the answer, an HMAC-SHA256 keyed by the secret; the secret itself
    /// never travels. Every process of the run must be given the same
    /// secret.
    ///
    /// # Errors
    ///
    /// [`Error::Cluster`] for a secret shorter than [`MIN_SECRET_BYTES`].
    pub fn with_secret(mut self, secret: impl AsRef<[u8]>) -> Result<Cluster, Error> {
        let secret = secret.as_ref();
        if secret.len() < MIN_SECRET_BYTES {
            return Err(Error::Cluster {
                problem: ClusterProblem::ShortSecret {
                    bytes: secret.len(),
                    min: MIN_SECRET_BYTES,
                },
            });
        }
        self.auth = Auth::Secret(secret.into());
        Ok(self)
    }

    /// Runs without a secret: any program on the network that speaks the
    /// protocol can join the run as one of its processes. Only for trusted
    /// networks; every process of the run must be insecure.
    pub fn insecure(mut self) -> Cluster {
        self.auth = Auth::Insecure;
        self
    }

    /// Watches `cancel` (a signal handler's, say): once it is cancelled,
    /// a process still connecting stops with [`Error::Interrupted`], and a
    /// run on the cluster (graph-distributed's) stops its workers at their
    /// next look.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_core::CancelHandle;
    /// use graph_transport::Cluster;
    ///
    /// let cancel = CancelHandle::new();
    /// let cluster = Cluster::local(2).with_cancel(cancel.clone());
    /// assert!(!cancel.is_cancelled());
    /// cancel.cancel(); // from a Ctrl-C handler, say
    /// assert!(cancel.is_cancelled());
    /// # drop(cluster);
    /// ```
    pub fn with_cancel(mut self, cancel: CancelHandle) -> Cluster {
        self.cancel = Some(cancel);
        self
    }

    /// Watches `lost`, raised by whoever knows (a supervisor) that another
    /// process of the run was lost while the processes were still
    /// connecting: a process still connecting then stops waiting for it,
    /// with [`Error::LostWhileConnecting`], a loss (after which a run that
    /// recovers gives back what the process holds). Once connected, the
    /// heartbeats notice a loss by themselves.
    pub fn with_lost_signal(mut self, lost: CancelHandle) -> Cluster {
        self.lost = Some(lost);
        self
    }

    /// Records in `progress` every task this process's workers run, as
    /// they finish (a supervisor's view of the run: see [`Progress`]).
    pub fn with_progress(mut self, progress: Progress) -> Cluster {
        self.progress = Some(progress);
        self
    }

    /// Where this process records the tasks it runs, if anywhere.
    pub fn progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }

    /// How many processes run.
    pub fn processes(&self) -> usize {
        self.addresses.len().max(1)
    }

    /// This process's index.
    pub fn process(&self) -> usize {
        self.process
    }

    /// Worker threads per process.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Workers in all: processes x threads.
    pub fn workers(&self) -> usize {
        self.processes() * self.threads
    }

    /// The processes' addresses (empty for a [`local`](Cluster::local) one).
    pub fn addresses(&self) -> &[String] {
        &self.addresses
    }

    /// How long this process waits for the others to connect.
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// How long another process may stay silent during the run.
    pub fn heartbeat_timeout(&self) -> Duration {
        self.heartbeat_timeout
    }

    /// Whether the processes run without a secret, on purpose.
    pub fn is_insecure(&self) -> bool {
        self.auth == Auth::Insecure
    }

    /// Whether the processes may connect as the cluster says: a cluster
    /// of several processes needs a secret ([`Cluster::with_secret`]) or
    /// leave to run without one ([`Cluster::insecure`]).
    ///
    /// # Errors
    ///
    /// [`Error::NoSecret`] for several processes with neither.
    ///
    /// # Example
    ///
    /// ```
    /// use graph_transport::{Cluster, Error};
    ///
    /// let two = Cluster::new(vec!["127.0.0.1:2101".into(), "127.0.0.1:2102".into()], 0, 1)?;
    /// assert!(matches!(two.check_secret(), Err(Error::NoSecret)));
    /// assert!(two.insecure().check_secret().is_ok());
    /// assert!(Cluster::local(4).check_secret().is_ok());
    /// # Ok::<(), Error>(())
    /// ```
    pub fn check_secret(&self) -> Result<(), Error> {
        if self.processes() > 1 && self.auth == Auth::Unset {
            return Err(Error::NoSecret);
        }
        Ok(())
    }

    pub(crate) fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The handle that stops this process's run, if one was given
    /// ([`Cluster::with_cancel`]).
    pub fn cancel(&self) -> Option<&CancelHandle> {
        self.cancel.as_ref()
    }

    /// Why a process still connecting must stop, if it must: a cancel, or
    /// another process known lost.
    pub(crate) fn connecting_stops(&self) -> Option<Error> {
        if self.cancel.as_ref().is_some_and(CancelHandle::is_cancelled) {
            Some(Error::Interrupted)
        } else if self.lost.as_ref().is_some_and(CancelHandle::is_cancelled) {
            Some(Error::LostWhileConnecting)
        } else {
            None
        }
    }
}

/// The addresses of a hostfile's text, or the 1-based line at fault.
fn parse_hostfile(text: &str) -> Result<Vec<String>, (usize, HostfileProblem)> {
    let mut addresses = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let valid = line
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !valid {
            return Err((
                i + 1,
                HostfileProblem::NotHostPort {
                    text: line.to_string(),
                },
            ));
        }
        addresses.push(line.to_string());
    }
    Ok(addresses)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostfiles_skip_comments_and_blank_lines() {
        let text = "# two processes\n127.0.0.1:2101\n\n  host-b:2102  \n";
        assert_eq!(
            parse_hostfile(text).unwrap(),
            ["127.0.0.1:2101".to_string(), "host-b:2102".to_string()]
        );
    }

    #[test]
    fn hostfile_lines_without_a_port_are_named() {
        let (line, problem) = parse_hostfile("a:1\nb\n").unwrap_err();
        assert_eq!(
            (line, problem.to_string()),
            (2, "`b` is not host:port".to_string())
        );
        let (line, problem) = parse_hostfile("a:99999\n").unwrap_err();
        assert_eq!(
            (line, problem.to_string()),
            (1, "`a:99999` is not host:port".to_string())
        );
    }
}
