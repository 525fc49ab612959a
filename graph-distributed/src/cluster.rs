//! `Cluster`: the processes of a run, how they find each other, and the
//! connections timely dataflow runs over.

use std::any::Any;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::{Config as Communication, Hooks};

use crate::Error;
use crate::error::{ClusterProblem, HandshakeProblem, HostfileProblem};

/// How long a process waits for the others to connect, by default.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Tells a connection from another process of a run from anything else.
const MAGIC: &[u8; 8] = b"tgraph01";

/// The processes of a run and this process's place among them.
///
/// Every process of a run is given the same address list, one `host:port`
/// per process, and its own index into it, as timely dataflow's `-h` hostfile
/// and `-p` process options do. Each process has `threads` workers; worker
/// `w` is thread `w % threads` of process `w / threads`.
///
/// # Example
///
/// ```
/// use graph_distributed::Cluster;
///
/// let local = Cluster::local(2);
/// assert_eq!((local.processes(), local.workers()), (1, 2));
///
/// let addresses = vec!["127.0.0.1:2101".to_string(), "127.0.0.1:2102".to_string()];
/// let second = Cluster::new(addresses, 1, 4)?;
/// assert_eq!((second.processes(), second.process(), second.workers()), (2, 1, 8));
/// # Ok::<(), graph_distributed::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    addresses: Vec<String>,
    process: usize,
    threads: usize,
    connect_timeout: Duration,
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
        }
    }

    /// Process `process` of the processes at `addresses`, each with
    /// `threads` workers.
    ///
    /// # Errors
    ///
    /// [`Error::Cluster`] when there are no addresses, `process` is out of
    /// range, or `threads` is zero.
    pub fn new(addresses: Vec<String>, process: usize, threads: usize) -> Result<Cluster, Error> {
        let problem = if addresses.is_empty() {
            Some(ClusterProblem::NoAddresses)
        } else if process >= addresses.len() {
            Some(ClusterProblem::ProcessOutOfRange {
                process,
                processes: addresses.len(),
            })
        } else if threads == 0 {
            Some(ClusterProblem::NoThreads)
        } else {
            None
        };
        match problem {
            Some(problem) => Err(Error::Cluster { problem }),
            None => Ok(Cluster {
                addresses,
                process,
                threads,
                connect_timeout: CONNECT_TIMEOUT,
            }),
        }
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
    /// default).
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Cluster {
        self.connect_timeout = timeout;
        self
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

    /// Connects to the other processes and builds timely's allocators, one
    /// per worker thread of this process, with what must outlive them.
    pub(crate) fn allocators(
        &self,
        fingerprint: u64,
    ) -> Result<(Vec<AllocatorBuilder>, Box<dyn Any + Send>), Error> {
        if self.addresses.len() <= 1 {
            return Communication::Process(self.threads)
                .try_build()
                .map_err(|message| Error::Timely { message });
        }
        let sockets = self.connect(fingerprint)?;
        let hooks = Hooks::default();
        let process_allocators = ProcessBuilder::new_typed_vector(
            self.threads,
            hooks.refill.clone(),
            hooks.spill.clone(),
        );
        let (builders, guard) = initialize_networking_from_sockets(
            process_allocators,
            sockets,
            self.process,
            self.threads,
            hooks,
        )
        .map_err(|err| Error::Timely {
            message: err.to_string(),
        })?;
        Ok((
            builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
            Box::new(guard),
        ))
    }

    /// One connection to every other process (`None` at this process's own
    /// index), each checked to come from the same run: this process connects
    /// to every lower index and accepts every higher one, within the connect
    /// timeout.
    fn connect(&self, fingerprint: u64) -> Result<Vec<Option<TcpStream>>, Error> {
        let me = self.process;
        let n = self.addresses.len();
        let deadline = Instant::now() + self.connect_timeout;
        let listener = TcpListener::bind(&self.addresses[me]).map_err(|source| Error::Listen {
            process: me,
            address: self.addresses[me].clone(),
            source,
        })?;
        let hello = Hello {
            process: me as u64,
            processes: n as u64,
            fingerprint,
        };
        let mut sockets: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        for (peer, address) in self.addresses.iter().enumerate().take(me) {
            let mut stream = self.dial(peer, address, deadline)?;
            hello
                .write(&mut stream)
                .map_err(|err| handshake(address, err))?;
            let theirs = Hello::read(&mut stream).map_err(|err| handshake(address, err))?;
            hello.check(&theirs, Some(peer), address)?;
            sockets[peer] = Some(stream);
        }
        listener
            .set_nonblocking(true)
            .map_err(|err| handshake("the listener", err))?;
        while let Some(missing) = (me + 1..n).find(|&p| sockets[p].is_none()) {
            match listener.accept() {
                Ok((mut stream, from)) => {
                    let from = from.to_string();
                    stream
                        .set_nonblocking(false)
                        .and_then(|()| stream.set_read_timeout(Some(remaining(deadline))))
                        .map_err(|err| handshake(&from, err))?;
                    let theirs = Hello::read(&mut stream).map_err(|err| handshake(&from, err))?;
                    hello.check(&theirs, None, &from)?;
                    let peer = theirs.process as usize;
                    if peer <= me || sockets[peer].is_some() {
                        return Err(Error::Handshake {
                            peer: from,
                            problem: HandshakeProblem::Unexpected { process: peer },
                        });
                    }
                    hello
                        .write(&mut stream)
                        .map_err(|err| handshake(&from, err))?;
                    sockets[peer] = Some(stream);
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(Error::ConnectTimeout {
                            process: missing,
                            address: self.addresses[missing].clone(),
                            waited: self.connect_timeout,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(err) => return Err(handshake("the listener", err)),
            }
        }
        for stream in sockets.iter().flatten() {
            // timely's threads read and write with blocking calls and no
            // timeout: a timeout would look to them like a broken connection.
            stream
                .set_read_timeout(None)
                .and_then(|()| stream.set_nodelay(true))
                .map_err(|err| handshake("a peer", err))?;
        }
        Ok(sockets)
    }

    /// Connects to process `peer`, retrying until it listens or the deadline
    /// passes.
    fn dial(&self, peer: usize, address: &str, deadline: Instant) -> Result<TcpStream, Error> {
        let timeout = || Error::ConnectTimeout {
            process: peer,
            address: address.to_string(),
            waited: self.connect_timeout,
        };
        loop {
            let attempt = resolve(address).and_then(|socket| {
                TcpStream::connect_timeout(
                    &socket,
                    remaining(deadline).max(Duration::from_millis(1)),
                )
            });
            match attempt {
                Ok(stream) => {
                    stream
                        .set_read_timeout(Some(remaining(deadline).max(Duration::from_millis(1))))
                        .map_err(|err| handshake(address, err))?;
                    return Ok(stream);
                }
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return Err(timeout()),
            }
        }
    }
}

/// What two processes tell each other first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hello {
    process: u64,
    processes: u64,
    fingerprint: u64,
}

impl Hello {
    fn write(&self, stream: &mut TcpStream) -> io::Result<()> {
        let mut bytes = [0_u8; 32];
        bytes[..8].copy_from_slice(MAGIC);
        bytes[8..16].copy_from_slice(&self.process.to_le_bytes());
        bytes[16..24].copy_from_slice(&self.processes.to_le_bytes());
        bytes[24..].copy_from_slice(&self.fingerprint.to_le_bytes());
        stream.write_all(&bytes)
    }

    fn read(stream: &mut TcpStream) -> Result<Hello, HandshakeProblem> {
        let mut bytes = [0_u8; 32];
        stream.read_exact(&mut bytes)?;
        if &bytes[..8] != MAGIC {
            return Err(HandshakeProblem::WrongGreeting);
        }
        let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        Ok(Hello {
            process: word(8),
            processes: word(16),
            fingerprint: word(24),
        })
    }

    /// Checks a peer's greeting against ours (and the index we dialled).
    fn check(&self, theirs: &Hello, expected: Option<usize>, peer: &str) -> Result<(), Error> {
        let problem = if theirs.processes != self.processes {
            Some(HandshakeProblem::ProcessCount {
                theirs: theirs.processes,
                ours: self.processes,
            })
        } else if theirs.process >= self.processes
            || expected.is_some_and(|p| p as u64 != theirs.process)
        {
            Some(HandshakeProblem::WrongProcess {
                process: theirs.process,
            })
        } else if theirs.fingerprint != self.fingerprint {
            Some(HandshakeProblem::DifferentJob {
                process: theirs.process,
                theirs: theirs.fingerprint,
                ours: self.fingerprint,
            })
        } else {
            None
        };
        match problem {
            Some(problem) => Err(Error::Handshake {
                peer: peer.to_string(),
                problem,
            }),
            None => Ok(()),
        }
    }
}

fn handshake(peer: &str, problem: impl Into<HandshakeProblem>) -> Error {
    Error::Handshake {
        peer: peer.to_string(),
        problem: problem.into(),
    }
}

fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

fn resolve(address: &str) -> io::Result<SocketAddr> {
    address.to_socket_addrs()?.next().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{address} resolves to nothing"),
        )
    })
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
